"""Which values an agent can *learn* from its context and must still see to act the same.

One definition serves both sides of the comparison: the `replay` model (replay/grounding.py)
treats these values as learned and replaces one that is no longer visible by a marker; the
safeguard summary (compaction/summary/extractive.py) carries every such value of the span it summarizes,
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
    return len(token) >= MIN_STRING_CHARS and (
        token.isupper() or not token.isalpha() and _MARKED.search(token) is not None
    )


# `identifier_tokens` in one regex pass that yields only the identifier-like tokens (a string and
# a Python test for every word of every tool result would be most of the summary's value scan).
# Why it finds exactly `IDENT_RE.findall` filtered by `is_identifier_like`:
# * `IDENT_RE` finds at most one token per run of id characters (`_ID`): from the run's first
#   alphanumeric (or the `#` right before it) to its last one; no alphanumeric is left after it.
# * For such an ASCII token `is_identifier_like` is: ≥ 3 chars, and a digit, `_`, `@` or `#` in
#   it, or no lower-case letter (then it has an upper-case one, or only digits).
# * The pass skips, inside one match, separators and whole runs that cannot hold such a token
#   (`_SKIP`), then takes the run's token as group 1 if it qualifies, else the whole run, or the
#   end; `findall` gives '' for the skips. Each run is read a bounded number of times (possessive
#   or single lazy scans): linear, like `IDENT_RE`. The tests compare it with the filter.
_ID = r"[A-Za-z0-9_.@#:/+\-]"
_NON_ALNUM_ID = r"[_.@#:/+\-]"
_ALNUM = r"[A-Za-z0-9]"
assert IDENT_RE.pattern == rf"#?{_ALNUM}{_ID}*{_ALNUM}"
_SKIP = (
    rf"(?>(?:[^{_ID[1:]}++"  # separators
    rf"|[A-Z.:/+\-]*+[a-z][A-Za-z.:/+\-]*+(?!{_ID})"  # words with a lower-case letter, no digit, _ @ #
    rf"|{_NON_ALNUM_ID}*+{_ALNUM}?{_NON_ALNUM_ID}*+(?!{_ID})"  # ≤ 1 alphanumeric: no token
    rf"|{_NON_ALNUM_ID}*+(?<!#){_ALNUM}{_ALNUM}{_NON_ALNUM_ID}*+(?!{_ID}))*)"
)  # a 2-char token
#: at the token's start: a digit ahead, or the first `_ @ #` ahead has an alphanumeric after it
#: (both inside the token) — or no lower-case letter ahead
_QUALIFIES = rf"(?:(?=[A-Za-z.:/+\-]*+(?:[0-9]|[_@#]{_ID}*?{_ALNUM}))|(?!{_ID}*?[a-z]))"
_TOKEN = rf"(?:#{_ALNUM}|{_ALNUM}{_ID}){_ID}*{_ALNUM}"  # IDENT_RE's token, ≥ 3 chars
_IDENTIFIER_TOKENS = re.compile(rf"{_SKIP}(?:{_NON_ALNUM_ID}*?(?=#?{_ALNUM})({_QUALIFIES}{_TOKEN})|{_ID}+|\Z)")


def identifier_tokens(text: str) -> list[str]:
    """Identifier-like tokens of a text, in order (duplicates kept): the `IDENT_RE` tokens for
    which `is_identifier_like` holds."""
    return list(filter(None, _IDENTIFIER_TOKENS.findall(text)))


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
