r"""Where a here-document ends, as bash reads it.

tree-sitter ends a here-document at a line that only starts with its delimiter (` EOF`, `EOF `,
`EOF` and a carriage return, `EOF;…`); bash needs the exact line (`<<-` strips leading tabs), and
in an unquoted here-document it joins a backslash-newline first (`EO\⏎F` ends it). Where the two
differ, the lines between reach the command unseen.
"""

from __future__ import annotations

import re
from typing import Any


def heredoc_ends_exactly(redirect: Any, source: bytes, operator: str) -> bool:
    """Whether the line tree-sitter ends the here-document `redirect` (a `heredoc_redirect` node
    of the command `source`, whose operator is `operator`) at is the one bash ends it at."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    end = next((c for c in redirect.children if c.type == "heredoc_end"), None)
    if start is None or end is None:
        return True  # a shape without an end: the parser reports it
    opener = source[start.start_byte : start.end_byte].decode("utf-8", "replace")
    delimiter = re.sub(r"""['"\\]""", "", opener)
    line_start = source.rfind(b"\n", 0, end.start_byte) + 1
    line_end = source.find(b"\n", end.start_byte)
    line = source[line_start : len(source) if line_end < 0 else line_end].decode("utf-8", "replace")
    if operator == "<<-":
        line = line.lstrip("\t")
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    quoted = any(mark in opener for mark in "'\"\\")
    if (
        not quoted
        and body is not None
        and re.search(rb"(?:^|[^\\])(?:\\\\)*\\\n", source[body.start_byte : body.end_byte])
    ):
        return False  # an unquoted here-document joins `EO\⏎F` before bash looks for its end
    return line == delimiter
