"""Which values an agent can *learn* from its context and must still see to act the same.

One definition serves both sides of the comparison: the `replay` model (replay/grounding.py)
treats these values as learned and replaces one that is no longer visible by a marker; the
safeguard summary (compaction/summary/extractive.py) carries every such value of the span it summarizes,
so that a value the replay needs is never lost by construction. If the two used different rules,
safeguard would pass or fail by accident of regex. `is_opaque_token` narrows the identifier-like
tokens to those an agent cannot have produced itself: the only ones that count inside text it
composes.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

import orjson

#: how a tool argument is grounded: never (`off`), its whole value and the opaque tokens inside it
#: (`values`), or every identifier-like token inside it too (`strict`); see replay/grounding.py
GroundingLevel = Literal["off", "values", "strict"]
GROUNDING_LEVELS: tuple[str, ...] = get_args(GroundingLevel)

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


#: an opaque id's digits: a run of three or more (`ord_1001`, `HAT275`, `credit_card_8003957`)
_DIGIT_RUN = re.compile(r"[0-9]{3}")
#: a segment of an id (split at its separators)
_SEGMENT_SPLIT = re.compile(r"[_.@#:/+\-]+")
#: a segment mixing digits and upper-case letters only (`M05KNL`, `NQNU5R`, `7Q2X` of `cus_7Q2X`)
_UPPER_CODE = re.compile(r"(?=[A-Z]*[0-9])(?=[0-9]*[A-Z])[A-Z0-9]{4,}")
#: a segment that is a hash (`deadbeef01`, a commit id): hex digits and letters, eight or more
_HASH = re.compile(r"(?=[a-fA-F]*[0-9])(?=[0-9]*[a-fA-F])[0-9a-fA-F]{8,}")
#: a CSS colour (`#303030`, `#f0c674`): a value of a palette, not of a record
_COLOUR = re.compile(r"#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})")
#: a quantity with a unit (`500ms`, `100px`, `20k`, `10th`, `256color`)
_QUANTITY = re.compile(r"[0-9]+(?:\.[0-9]+)?[a-z]{1,5}")
#: a number written with its separators only (`555-123-2002`, `2024-05-15`, `128000`, `175-176`)
_NUMBER = re.compile(r"[0-9][0-9_.:/+\-]*")
#: digits of a number that make it an id, not a quantity an agent could write itself
MIN_OPAQUE_NUMBER_DIGITS = 5
#: groups of a number that make it a record (date, phone number, address), not a range or amount
MIN_OPAQUE_NUMBER_GROUPS = 3


def is_opaque_token(token: str) -> bool:
    """An identifier-like token an agent cannot have produced itself: it learned it verbatim.

    Inside text the agent composes (prose, markdown, file contents, commands) only such tokens
    count as learned values; words, acronyms (`JFK`, `README`), markdown anchors
    (`#custom-tools`), snake_case names, colours, quantities and round numbers are the agent's own
    vocabulary. Opaque: digits, and either a run of three (`ord_1001`, `HAT275`, `mia_li_3668`), a
    segment of upper-case letters and digits of four or more (`M05KNL`, `cus_7Q2X`), a hash
    segment (`deadbeef01`), or — digits only — a number of five or more digits that is one id
    (`8003957`, not the round `128000`) or a record of three groups or more (`2024-05-15`,
    `555-123-2002`; not the range `175-176`)."""
    if not any(c.isdigit() for c in token):
        return False
    if _COLOUR.fullmatch(token) or _QUANTITY.fullmatch(token):
        return False
    if _NUMBER.fullmatch(token):
        groups = [g for g in _SEGMENT_SPLIT.split(token) if g]
        digits = "".join(groups)
        if len(digits) < MIN_OPAQUE_NUMBER_DIGITS:
            return False
        return len(groups) >= MIN_OPAQUE_NUMBER_GROUPS or (len(groups) == 1 and not digits.endswith("000"))
    if _DIGIT_RUN.search(token):
        return True
    return any(_UPPER_CODE.fullmatch(s) or _HASH.fullmatch(s) for s in _SEGMENT_SPLIT.split(token))


#: an ISO 8601 calendar date, with a time of day or not (`2026-05-10`, `2026-05-10T14:00:00Z`)
_CALENDAR_DATE = re.compile(
    r"[0-9]{4}-[01][0-9]-[0-3][0-9]"
    r"(?:[T ][0-2][0-9]:[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?(?:Z|[+-][0-2][0-9]:?[0-5][0-9])?)?"
)


def is_calendar_date(value: str) -> bool:
    """A whole value that is an ISO 8601 date: opaque as a record, yet one an agent writes itself
    from any spelling of the date it was told ("May 10th, 2026")."""
    return bool(_CALENDAR_DATE.fullmatch(value))


_VOCABULARY_WORD = re.compile(r"[A-Za-z]+(?:[_-][A-Za-z]+)*")


def is_vocabulary_word(value: str) -> bool:
    """A whole value that is one word of letters (`one_way`, `basic_economy`, `USA`): an enum or
    a word the agent can write from the request or the tool's schema, so a lost copy of it in the
    context is no lost information."""
    return bool(_VOCABULARY_WORD.fullmatch(value))


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


#: argument names whose value the agent chooses itself: a number it picks (a timeout, a limit, a
#: page) or a label it writes (a description, a title). Such a value is the agent's own even when
#: the same value happens to stand earlier in the context; only an opaque id inside a label counts.
AGENT_CHOSEN_NUMBER_KEYS = frozenset(
    {
        "timeout", "timeout_ms", "timeoutms", "timeout_s", "timeout_seconds", "limit", "max", "max_results",
        "maxresults", "max_tokens", "max_count", "max_lines", "offset", "count", "page", "page_size", "pagesize",
        "per_page", "perpage", "size", "top", "top_k", "topk", "head_limit", "lines", "depth", "retries",
        "max_retries", "interval", "delay", "wait", "wait_ms", "sleep", "yield_ms", "yieldms", "width", "height",
        "context", "before", "after", "n",
    }
)  # fmt: skip
AGENT_CHOSEN_TEXT_KEYS = frozenset(
    {"description", "title", "label", "summary", "comment", "note", "reason", "rationale", "explanation", "name_hint"}
)
_PREFIX_PART = re.compile(r"[A-Za-z][A-Za-z_-]*")


def agent_chosen(key: object, value: object) -> bool:
    """Whether an argument leaf is one the agent chooses: a number under a parameter name such as
    `timeout` or `limit`, or a text under a label name such as `description`."""
    if not isinstance(key, str):
        return False
    name = key.lower()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return name in AGENT_CHOSEN_NUMBER_KEYS or name.startswith(("max_", "min_", "timeout"))
    return isinstance(value, str) and name in AGENT_CHOSEN_TEXT_KEYS


def id_parts(value: str) -> tuple[str, ...]:
    """The ids a value wraps in words of the agent's own (`user:U123ABC`, `channel/C0456`,
    `discord:user:12345678`): the opaque parts between `:` and `/`, when every other part is a
    plain word; else ()."""
    parts = [p for p in re.split(r"[:/]", value) if p]
    if len(parts) < 2:
        return ()
    ids = tuple(p for p in parts if is_opaque_token(p))
    if not ids or any(p not in ids and not _PREFIX_PART.fullmatch(p) for p in parts):
        return ()
    return ids
