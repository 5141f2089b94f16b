"""Literal hints of a regular expression: strings of which every match holds one.

The scrubber runs a rule only on texts that hold one of the rule's hints (one Aho-Corasick pass
over a text finds every hint of every rule), so a hint set must be sound: a text without any of
them cannot match. Deriving the hints from the parsed pattern, instead of writing them by hand
next to each rule, keeps them sound when a rule changes and gives a user's own patterns the same
fast path. A pattern for which no hint of `MIN_HINT_CHARS` can be proven gets none, and the
scrubber runs it on every text: slower, never a miss.

Hints are lower-case ASCII without `"` or `\\`, so they can be searched in lower-cased text and in
JSON text (which escapes neither ASCII letters nor digits, but does escape those two and control
characters). Case-insensitive patterns also match four non-ASCII letters to ASCII ones (İ ı ſ and
the Kelvin sign); the scrubber always scans texts holding those.
"""

from __future__ import annotations

import re
from itertools import product
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

#: shorter hints are found in nearly every text: such a pattern is treated as having none
MIN_HINT_CHARS = 3
#: how many alternatives one hint set may hold (products of classes grow fast)
MAX_ALTERNATIVES = 128
#: the largest character class spelled out as alternatives (`[_-]`, `[pousr]`)
MAX_CLASS_CHARS = 8

_Strings = frozenset[str]
_EMPTY: _Strings = frozenset({""})


class _Info:
    """What a node of a parsed pattern tells about its matches."""

    __slots__ = ("exact", "required", "prefix", "suffix")

    def __init__(
        self,
        exact: _Strings | None = None,
        required: _Strings | None = None,
        prefix: _Strings = _EMPTY,
        suffix: _Strings = _EMPTY,
    ):
        #: the strings the node matches exactly (one of them), or None
        self.exact = exact
        #: strings one of which every match holds, or None
        self.required = required
        #: strings one of which every match starts with ("" when nothing is known)
        self.prefix = exact if exact is not None else prefix
        #: strings one of which every match ends with ("" when nothing is known): a group's end
        #: joins the literals after it (`(…(?:token|key))=` holds `token=` or `key=`)
        self.suffix = exact if exact is not None else suffix


_NOTHING = _Info()


def pattern_hints(pattern: str | re.Pattern[str]) -> tuple[frozenset[str] | None, bool]:
    """The hints of `pattern` (lower case, none holding another) or None when none can be proven,
    and whether every match starts with one of them (then the pattern need only be tried where a
    hint starts)."""
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    info = _sequence(list(sre_parse.parse(compiled.pattern, compiled.flags)))
    found = info.required if info.required is not None else info.exact
    if (
        info.prefix
        and min(map(len, info.prefix)) >= MIN_HINT_CHARS
        and (not found or _score(info.prefix) >= _score(found))
    ):
        return _shortest_prefixes(info.prefix), True
    if not found or min(map(len, found)) < MIN_HINT_CHARS:
        return None, False
    return _minimal(found), False


def _minimal(strings: _Strings) -> frozenset[str]:
    """Without the strings that hold another one (a text holding them holds that one)."""
    return frozenset(s for s in strings if not any(t != s and t in s for t in strings))


def _shortest_prefixes(strings: _Strings) -> frozenset[str]:
    """Without the strings that start with another one (a match starting with them starts with
    that one). Not `_minimal`: a string holding another need not start with it (`aaak` holds `aak`),
    and a rule tried only where `aak` starts would miss the match that starts at `aaak`."""
    return frozenset(s for s in strings if not any(t != s and s.startswith(t) for t in strings))


def _hint_char(code: int) -> str | None:
    char = chr(code)
    if char.isascii() and char.isprintable() and char not in '"\\':
        return char.lower()
    return None


def _score(strings: _Strings) -> tuple[int, int]:
    return min(map(len, strings)), -len(strings)


def _better(a: _Strings | None, b: _Strings | None) -> _Strings | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if _score(a) >= _score(b) else b


def _times(a: _Strings, b: _Strings) -> _Strings | None:
    if len(a) * len(b) > MAX_ALTERNATIVES:
        return None
    return frozenset(x + y for x, y in product(a, b))


def _sequence(nodes: list[tuple[Any, Any]]) -> _Info:
    """A concatenation: runs of exact nodes multiply into longer literals, a run followed by a
    node that starts with a known prefix too; the best of them (or of the nodes' own
    requirements) is the sequence's requirement."""
    run: _Strings = _EMPTY
    best: _Strings | None = None
    prefix: _Strings | None = None  # set at the first node that is not exact
    for op, av in nodes:
        info = _node(op, av)
        if info.exact is not None:
            joined = _times(run, info.exact)
            if joined is None:  # too many alternatives: what ran so far is a requirement
                best = _better(best, run)
                prefix = run if prefix is None else prefix
                joined = info.exact
            run = joined
            continue
        head = _times(run, info.prefix) or run
        if prefix is None:
            prefix = head
        best = _better(_better(best, head), info.required)
        run = info.suffix  # what follows continues the node's known ending
    best = _better(best, run)
    if prefix is None:  # every node exact
        return _Info(exact=run, required=best)
    return _Info(required=best, prefix=prefix, suffix=run)


def _node(op: Any, av: Any) -> _Info:
    if op is sre.LITERAL:
        char = _hint_char(av)
        return _Info(exact=frozenset({char})) if char is not None else _NOTHING
    if op is sre.IN:
        return _char_class(av)
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):  # zero width: nothing of the text between
        return _Info(exact=_EMPTY)
    if op is sre.SUBPATTERN:
        return _sequence(list(av[3]))
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(av))
    if op is sre.BRANCH:
        return _branch(av[1])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) or op is getattr(sre, "POSSESSIVE_REPEAT", None):
        return _repeat(*av)
    return _NOTHING


def _repeat(low: int, high: int, body: Any) -> _Info:
    info = _sequence(list(body))
    if low == 0:
        if high == 1 and info.exact is not None:
            return _Info(exact=info.exact | _EMPTY)
        return _NOTHING
    if low == high and info.exact is not None:
        repeated: _Strings | None = _EMPTY
        for _ in range(low):
            repeated = _times(repeated, info.exact) if repeated is not None else None
        if repeated is not None:
            return _Info(exact=repeated)
    return _Info(required=_better(info.required, info.exact), prefix=info.prefix, suffix=info.suffix)


def _char_class(items: list[tuple[Any, Any]]) -> _Info:
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            codes = [av]
        elif op is sre.RANGE and av[1] - av[0] < MAX_CLASS_CHARS:
            codes = list(range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY (\d, \w), big ranges
            return _NOTHING
        for code in codes:
            char = _hint_char(code)
            if char is None:
                return _NOTHING
            chars.add(char)
    if not chars or len(chars) > MAX_CLASS_CHARS:
        return _NOTHING
    return _Info(exact=frozenset(chars))


def _branch(branches: list[Any]) -> _Info:
    infos = [_sequence(list(b)) for b in branches]
    prefix = frozenset().union(*(i.prefix for i in infos))
    if len(prefix) > MAX_ALTERNATIVES:
        prefix = _EMPTY
    suffix = frozenset().union(*(i.suffix for i in infos))
    if len(suffix) > MAX_ALTERNATIVES:
        suffix = _EMPTY
    if all(i.exact is not None for i in infos):
        union = frozenset[str]().union(*(i.exact for i in infos if i.exact is not None))
        if len(union) <= MAX_ALTERNATIVES:
            return _Info(exact=union)
        return _Info(required=union, prefix=prefix, suffix=suffix)
    needed = [i.required if i.required is not None else i.exact for i in infos]
    if any(n is None or "" in n for n in needed):
        return _Info(prefix=prefix, suffix=suffix)
    return _Info(required=frozenset[str]().union(*(n for n in needed if n is not None)), prefix=prefix, suffix=suffix)


def folded_regex(regex: re.Pattern[str]) -> re.Pattern[str] | None:
    """`regex` without IGNORECASE, to be matched on lower-cased text, or None when that would
    not find the same matches (a literal or a class that is not lower case).

    Why: Python's `re` skips ahead to a pattern's first literal only when it is matched case
    sensitively; under IGNORECASE it tries every position, several times slower on the long texts
    the structural rules read. On a text whose `str.lower()` keeps every character in place (all
    but `İ` do) and that holds none of the case specials, the folded pattern finds the same spans."""
    if not regex.flags & re.IGNORECASE:
        return None
    source = regex.pattern
    if source.startswith("(?i)"):
        source = source[len("(?i)") :]
    flags = regex.flags & ~re.IGNORECASE & ~re.UNICODE
    try:
        folded = re.compile(source, flags)
    except re.error:
        return None
    if folded.flags & re.IGNORECASE or not _lower_case(list(sre_parse.parse(source, flags))):
        return None
    return folded


def _lower_case(nodes: list[tuple[Any, Any]]) -> bool:
    """Whether every literal is lower case and every class holds the lower case of its letters."""
    for op, av in nodes:
        if op in (sre.LITERAL, sre.NOT_LITERAL):
            if chr(av) != chr(av).lower() or not chr(av).isascii():
                return False
        elif op is sre.IN:
            if not _class_closed(av):
                return False
        elif op is sre.SUBPATTERN:
            if av[1] or av[2] or not _lower_case(list(av[3])):  # scoped flags: left alone
                return False
        elif op is sre.BRANCH:
            if not all(_lower_case(list(b)) for b in av[1]):
                return False
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT) or op is getattr(sre, "POSSESSIVE_REPEAT", None):
            if not _lower_case(list(av[2])):
                return False
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            if not _lower_case(list(av[1])):
                return False
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            if not _lower_case(list(av)):
                return False
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return False
    return True


def _class_closed(items: list[tuple[Any, Any]]) -> bool:
    """A class (negated or not) matches the same lower-cased text without IGNORECASE when it
    holds, for each upper-case letter it holds, the lower-case one too, and nothing non-ASCII."""
    chars: set[int] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(av)
        elif op is sre.RANGE:
            chars.update(range(av[0], av[1] + 1))
        elif op not in (sre.NEGATE, sre.CATEGORY):
            return False
    if any(c > 127 for c in chars):
        return False
    return all(ord(chr(c).lower()) in chars for c in chars)
