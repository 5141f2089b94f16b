"""Strings as OpenClaw's JavaScript measures, slices and matches them.

OpenClaw counts `String.length` (UTF-16 code units: a character above U+FFFF counts 2), slices
by those units without splitting a surrogate pair (`sliceUtf16Safe`), and from 2026.9.6 on weighs
CJK text more than its length (`estimateStringCharsWithMinimumRawWeight`: a common CJK character
4, rare ones up to 16). Its patterns are JavaScript regexes, where `\\d`, `\\w` and `\\b` are
ASCII, `\\s` is JavaScript's whitespace, `.` stops at any line terminator, `$` is the end of the
text and `/i` folds ASCII case only for these patterns. `Utf16Text` and `js_regex` give the same
answers in Python (checked against node by tests/oracles/test_openclaw_conformance.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

from replaylab.transcript.javascript import utf16_length
from replaylab.upstream.openclaw_2026_9_6 import CJK_WEIGHT_CATEGORIES, JS_WHITESPACE

_HIGH = range(0xD800, 0xDC00)
_LOW = range(0xDC00, 0xE000)
_JS_SPACE_CLASS = "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE)
#: JavaScript's `.`: anything but a line terminator
_JS_DOT = "[^\\n\\r\\u2028\\u2029]"


class Utf16Text:
    """A text as UTF-16 code units: `len()` is JavaScript's `length`, slices are by units."""

    __slots__ = ("text", "_units")

    def __init__(self, text: str):
        self.text = text
        self._units = text.encode("utf-16-le", "surrogatepass")

    def __len__(self) -> int:
        return len(self._units) // 2

    def unit(self, index: int) -> int:
        return int.from_bytes(self._units[2 * index : 2 * index + 2], "little")

    def slice(self, start: int, end: int | None = None) -> str:
        """`text.slice(start, end)` (negative indexes count from the end)."""
        size = len(self)
        start = max(size + start, 0) if start < 0 else min(start, size)
        stop = size if end is None else (max(size + end, 0) if end < 0 else min(end, size))
        if stop <= start:
            return ""
        return self._units[2 * start : 2 * stop].decode("utf-16-le", "surrogatepass")

    def find(self, char: str, start: int = 0) -> int:
        """`text.indexOf(char, start)` for a one-unit `char`: its unit index, or -1."""
        needle = char.encode("utf-16-le")
        at = 2 * max(0, start)
        while (at := self._units.find(needle, at)) != -1 and at % 2:
            at += 1  # a match across two units is none
        return at // 2 if at != -1 else -1

    def rfind(self, char: str, position: int) -> int:
        """`text.lastIndexOf(char, position)` for a one-unit `char`: its unit index, or -1."""
        needle = char.encode("utf-16-le")
        end = 2 * (max(0, position) + 1)
        while (at := self._units.rfind(needle, 0, end)) != -1 and at % 2:
            end = at + 1
        return at // 2 if at != -1 else -1

    def safe_slice(self, start: int, end: int | None = None) -> str:
        """`sliceUtf16Safe`: a slice that never starts or ends inside a surrogate pair."""
        size = len(self)
        start = max(size + start, 0) if start < 0 else min(start, size)
        stop = size if end is None else (max(size + end, 0) if end < 0 else min(end, size))
        if stop <= start:
            return ""
        if 0 < start < size and self.unit(start) in _LOW and self.unit(start - 1) in _HIGH:
            start += 1
        if 0 < stop < size and self.unit(stop - 1) in _HIGH and self.unit(stop) in _LOW:
            stop -= 1
        return self.slice(start, stop)


def _class(ranges: list[tuple[int, int]]) -> re.Pattern[str]:
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges) + "]")


def _categories(plane: range) -> tuple[tuple[re.Pattern[str], int, int], ...]:
    """Each weight category's characters in `plane` as (a class matching them, extra weight
    constant, raw-weight multiple)."""
    return tuple(
        (_class(inside), constant, multiple)
        for ranges, constant, multiple in CJK_WEIGHT_CATEGORIES
        if (inside := [(a, b) for a, b in ranges if a in plane and b in plane])
    )


_BMP, _SUPPLEMENTARY = range(0x10000), range(0x10000, 0x110000)
# `re` matches a class of BMP ranges by a bitmap but walks supplementary ranges one by one, and
# most text has no supplementary character at all: the two planes are searched apart.
_BMP_CATEGORIES = _categories(_BMP)
_SUPPLEMENTARY_CATEGORIES = _categories(_SUPPLEMENTARY)
_ANY_BMP_WEIGHTED = _class([(a, b) for ranges, _, _ in CJK_WEIGHT_CATEGORIES for a, b in ranges if b in _BMP])
_ANY_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")
assert all(a in _BMP or a in _SUPPLEMENTARY for ranges, _, _ in CJK_WEIGHT_CATEGORIES for a, _ in ranges)
# `weighted_length` counts the first category as what the others leave: no character in two
_BMP_RANGES = sorted((a, b) for ranges, _, _ in CJK_WEIGHT_CATEGORIES for a, b in ranges if b in _BMP)
assert all(b < c for (_, b), (c, _) in zip(_BMP_RANGES, _BMP_RANGES[1:]))


def weighted_length(text: str, minimum_raw_weight: int = 1) -> int:
    """`estimateStringCharsWithMinimumRawWeight(text, {minimumRawWeight})` for raw weight 1 or 2
    (raw weight 1 is `estimateStringChars`): UTF-16 units x the raw weight, plus each weighted
    character's extra weight."""
    if minimum_raw_weight not in (1, 2):
        raise ValueError(f"OpenClaw weighs raw text 1 or 2, not {minimum_raw_weight}")
    if text.isascii():
        return len(text) * minimum_raw_weight
    units = utf16_length(text)
    extra = 0
    first = _ANY_BMP_WEIGHTED.search(text)
    if first is not None:
        # one pass over the text for every weighted character, then the categories told apart
        # among those alone: the first category's count is what the others leave
        weighted = _ANY_BMP_WEIGHTED.findall(text, first.start())
        found = "".join(weighted) if len(_BMP_CATEGORIES) > 1 else ""
        rest = [len(category.findall(found)) for category, _, _ in _BMP_CATEGORIES[1:]]
        counts = [len(weighted) - sum(rest), *rest]
        extra += sum(
            count * (constant - multiple * minimum_raw_weight)
            for count, (_, constant, multiple) in zip(counts, _BMP_CATEGORIES, strict=True)
        )
    if units != len(text):  # a character above U+FFFF counts two units
        supplementary = "".join(_ANY_SUPPLEMENTARY.findall(text))
        extra += sum(
            len(category.findall(supplementary)) * (constant - multiple * minimum_raw_weight)
            for category, constant, multiple in _SUPPLEMENTARY_CATEGORIES
        )
    return units * minimum_raw_weight + extra


def _weighted_units(units: Utf16Text, start: int, stop: int, minimum_raw_weight: int) -> int:
    """The weight of the units [start, stop) as OpenClaw measures a raw (possibly split) slice."""
    return weighted_length(units.slice(start, stop), minimum_raw_weight)


def slice_to_budget(text: str, max_chars: int, minimum_raw_weight: int = 1, *, from_end: bool = False) -> str:
    """`sliceToolResultTextToBudget` / `...TailToBudget`: the longest surrogate-safe prefix (suffix)
    weighing at most `max_chars`, found by OpenClaw's binary search (which measures each step's
    difference and keeps a running sum)."""
    budget = max(0, int(max_chars // 1))
    units = Utf16Text(text)
    size = len(units)
    if size <= budget and weighted_length(text, minimum_raw_weight) <= budget:
        return text
    best = ""
    low, high = 0, min(size, budget)
    measured_length = measured_chars = 0
    while low <= high:
        midpoint = (low + high) // 2
        candidate = units.safe_slice(size - midpoint) if from_end else units.safe_slice(0, midpoint)
        candidate_length = utf16_length(candidate)
        start, end = min(measured_length, candidate_length), max(measured_length, candidate_length)
        if from_end:
            delta = _weighted_units(units, size - end, size - start, minimum_raw_weight)
        else:
            delta = _weighted_units(units, start, end, minimum_raw_weight)
        measured_chars += delta if candidate_length >= measured_length else -delta
        measured_length = candidate_length
        if measured_chars <= budget:
            best = candidate
            low = midpoint + 1
        else:
            high = midpoint - 1
    return best


def js_trim(text: str) -> str:
    """`String.prototype.trim`."""
    return text.strip(JS_WHITESPACE)


@lru_cache(maxsize=512)
def js_regex(pattern: str, ignore_case: bool = True) -> re.Pattern[str]:
    """A JavaScript regex (no `u`, `m` or `s` flag) compiled to match as node matches it."""
    out: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            if escaped == "s":
                out.append(_JS_SPACE_CLASS if in_class else f"[{_JS_SPACE_CLASS}]")
            elif escaped == "S" and not in_class:
                out.append(f"[^{_JS_SPACE_CLASS}]")
            else:
                out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern[index + 1 : index + 2] == "^":
                out.append("^")
                index += 1
            if pattern[index + 1 : index + 2] == "]":  # a leading ']' is a literal in the class
                out.append("\\]")
                index += 1
        elif char == ".":
            out.append(_JS_DOT)
        elif char == "$":
            out.append(r"\Z")
        else:
            out.append(char)
        index += 1
    return re.compile("".join(out), re.ASCII | (re.IGNORECASE if ignore_case else 0))
