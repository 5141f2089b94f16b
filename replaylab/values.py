"""Which values an agent can *learn* from its context and must still see to act the same.

One definition serves both sides of the comparison: the `replay` model (replay/grounding.py)
treats these values as learned and replaces one that is no longer visible by a marker; the
safeguard summary (compaction/summarize.py) carries every such value of the span it summarizes,
so that a value the replay needs is never lost by construction. If the two used different rules,
safeguard would pass or fail by accident of regex.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

MIN_STRING_CHARS = 3
MIN_NUMBER_DIGITS = 3
#: a run of id characters, starting (after an optional `#`, as in order `#W2378156`) and ending alphanumeric
IDENT_RE = re.compile(r"#?[A-Za-z0-9][A-Za-z0-9_.@#:/+\-]*[A-Za-z0-9]")
_MARKED = re.compile(r"[0-9_@#]")


def is_identifier_like(token: str) -> bool:
    """≥ 3 chars and a digit, one of `_ @ #`, or every cased letter upper-case (`JFK`, `M05KNL`).
    (An `IDENT_RE` token is ASCII: one of letters only — most words — has none of those marks.)"""
    return len(token) >= MIN_STRING_CHARS and (token.isupper() or not token.isalpha() and _MARKED.search(token) is not None)


def identifier_tokens(text: str) -> list[str]:
    """Identifier-like tokens of a text, in order (duplicates kept)."""
    # `is_identifier_like` inlined: a call per token was a third of the scan (the tests pin the two)
    return [token for token in IDENT_RE.findall(text) if len(token) >= MIN_STRING_CHARS
            and (token.isupper() or not token.isalpha() and _MARKED.search(token) is not None)]


def scalar_value_text(value: Any) -> str | None:
    """The text of an argument leaf that can carry learned identity, or None: strings of ≥ 3
    chars, numbers with ≥ 3 digits (as JSON writes them); booleans and null never."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value if len(value) >= MIN_STRING_CHARS else None
    if isinstance(value, (int, float)):
        text = orjson.dumps(value).decode()  # JSON's spelling: what a window shows
        return text if sum(c.isdigit() for c in text) >= MIN_NUMBER_DIGITS else None
    return None
