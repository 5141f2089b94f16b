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


def quoted_heredoc(redirect: Any, source: bytes) -> bool:
    """Whether a here-document's delimiter is quoted (`<<'EOF'`, `<<"EOF"`, `<<\\EOF`): bash
    then takes its text as written, expanding nothing."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    return start is not None and any(mark in source[start.start_byte : start.end_byte] for mark in (b"'", b'"', b"\\"))


def heredoc_text(redirect: Any, source: bytes) -> str:
    """A here-document's text as bash reads it: the lines after the one its `<<` stands on, up
    to its end line (the parser's `heredoc_body` may begin past a line's blanks)."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    end = next((c for c in redirect.children if c.type == "heredoc_end"), None)
    line_end = source.find(b"\n", start.end_byte) if start is not None else -1
    if line_end < 0 or end is None or end.start_byte <= line_end:
        body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
        return source[body.start_byte : body.end_byte].decode("utf-8", "replace") if body is not None else ""
    return source[line_end + 1 : end.start_byte].decode("utf-8", "replace")
