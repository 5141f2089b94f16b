"""Text from recordings, suites and file names made safe to print: one line, nothing invisible.

Why: ids, names and messages reach a terminal, a CI log and a markdown summary. A line break in
an entry id or a scenario name would start a line that looks like replaylab's own (a forged
diagnostic or result); ESC starts a terminal control sequence; NUL truncates some viewers; a
right-to-left override turns the rest of a line around, so what is read is not what is there.
`printable` turns every such character into a visible spelling and leaves all other text as is.
"""

from __future__ import annotations

import re

#: characters spelled as escapes: C0 and C1 controls and DEL; line and paragraph separators;
#: bidirectional marks, embeddings, overrides and isolates; zero-width space and the byte-order
#: mark (invisible); lone surrogates (which no encoder can write, so a print of them would raise)
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _spelling(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0xA0 else f"<U+{code:04X}>"


def printable(text: str) -> str:
    """`text` with line breaks and control characters escaped (`\\n`, `\\x1b`, `\\x00`) and
    invisible or direction-changing characters named (`<U+202E>`); any other text unchanged."""
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(_spelling, text)
