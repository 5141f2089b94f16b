"""Strings as OpenClaw's JavaScript measures, slices and matches them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.agents.openclaw_2026_9_6.estimate import string_chars
from replaylab.compaction.js_strings import Utf16Text, js_regex, slice_to_budget, weighted_length
from replaylab.upstream.openclaw_2026_9_6 import CJK_WEIGHT_CATEGORIES


@pytest.mark.parametrize(
    ("text", "weight", "chars"),
    [
        ("plain", 1, 5),
        ("plain", 2, 10),
        ("中文", 1, 8),  # common CJK weighs 4
        ("中文", 2, 8),  # ... whatever the raw weight
        ("한국", 1, 8),  # Hangul syllables too
        ("\u1100", 1, 12),  # a jamo: rare BMP
        ("\U00020000", 1, 16),  # a supplementary ideograph: 2 units, 16
        ("\U0001f600", 1, 2),  # emoji are not weighted: their 2 UTF-16 units
        ("\U0001f600", 2, 4),
        ("·", 1, 4),
        ("\ua4d0", 1, 12),  # Lisu: rare BMP up to U+A4FF
        ("\U00033470", 1, 16),  # supplementary ideographs up to U+3347F
        ("\U00033470", 2, 16),
        ("\U0001d360", 2, 12),  # a counting rod numeral: 12 - 2 x the raw weight, plus its 4 units
    ],
)
def test_weighted_length_is_openclaws_estimate(text: str, weight: int, chars: int) -> None:
    assert weighted_length(text, weight) == chars


def _weighed_one_by_one(text: str, raw: int) -> int:
    """OpenClaw's loop, code point by code point, over the same table."""
    chars = 0
    for char in text:
        point = ord(char)
        chars += (2 if point > 0xFFFF else 1) * raw
        for ranges, constant, multiple in CJK_WEIGHT_CATEGORIES:
            if any(a <= point <= b for a, b in ranges):
                chars += constant - multiple * raw
    return chars


#: every range's first and last character and their neighbours, surrogates and emoji among ASCII
_EDGES = sorted(
    {chr(p) for ranges, _, _ in CJK_WEIGHT_CATEGORIES for a, b in ranges for p in (a - 1, a, b, b + 1)}
    | {chr(0xD800), chr(0xDFFF), "\U0001f600", "é", "a", " "}
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_EDGES) | st.characters(), max_size=40).map("".join), st.sampled_from([1, 2]))
def test_the_planes_searched_apart_weigh_as_the_loop_over_each_character(text: str, raw: int) -> None:
    assert weighted_length(text, raw) == _weighed_one_by_one(text, raw)
    if raw == 1:
        assert string_chars(text) == weighted_length(text)  # the estimate weighs by the same table


def test_slices_are_by_utf16_units_and_never_split_a_surrogate_pair() -> None:
    text = Utf16Text("ab\U0001f600cd")
    assert len(text) == 6 and text.slice(0, 3) == "ab\ud83d"  # a plain slice may split
    assert text.safe_slice(0, 3) == "ab" and text.safe_slice(3) == "cd"
    assert slice_to_budget("ab\U0001f600cd", 3) == "ab"
    assert slice_to_budget("ab\U0001f600cd", 3, from_end=True) == "cd"
    assert slice_to_budget("中中中", 8) == "中中"  # by weight, not by units


def test_javascript_regexes_match_as_node_matches_them() -> None:
    assert js_regex(r"\berror\b", ignore_case=False).search("éerror")  # `\b` is ASCII
    assert not js_regex(r"a$").search("a\n")  # `$` is the end of the text
    assert js_regex(r"a\sb").search("a\u00a0b") and not js_regex(r"a\sb").search("a\x1cb")  # JS whitespace
    assert not js_regex(r"a.b").search("a\rb")  # `.` stops at any line terminator
    assert js_regex(r"[^.\n]+").fullmatch("x.y") is None
