"""Text from recordings, suites and file names made safe to print: one line, nothing invisible.

Why: ids, names and messages reach a terminal, a CI log and a markdown summary. A line break in
an entry id or a scenario name would start a line that looks like replaylab's own (a forged
diagnostic or result); ESC starts a terminal control sequence; NUL truncates some viewers; a
right-to-left override turns the rest of a line around, so what is read is not what is there.
`printable` turns every such character into a visible spelling and leaves all other text as is.
"""

from __future__ import annotations

import re

#: characters that print as nothing or turn the text around: bidirectional marks, embeddings,
#: overrides and isolates; line and paragraph separators; and every default-ignorable code point
#: of Unicode (zero-width space and joiners, word joiner, soft hyphen, variation selectors, tag
#: characters, Hangul fillers …: two names that differ only by one of them print alike)
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
#: characters spelled as escapes: C0 and C1 controls and DEL, the invisible ones above, and lone
#: surrogates (which no encoder can write, so a print of them would raise)
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}\ud800-\udfff]")
#: the same, keeping line breaks and tabs: text shown as lines (an HTML report's `<pre>`)
_UNSAFE_IN_LINES = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_INVISIBLE}\ud800-\udfff]")
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


def visible(text: str) -> str:
    """`printable`, keeping line breaks and tabs as they are: for text shown as lines (a window
    entry, a compactor's stderr in the HTML report), where ESC, BEL or a right-to-left override
    would still change what is read."""
    if text.isascii() and (text.isprintable() or not _UNSAFE_IN_LINES.search(text)):
        return text
    return _UNSAFE_IN_LINES.sub(_spelling, text)
