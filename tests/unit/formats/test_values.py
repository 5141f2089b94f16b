"""Learned values (replaylab/values.py): `identifier_tokens` is, token for token, the `IDENT_RE`
tokens of a text for which `is_identifier_like` holds — on generated texts, any Unicode, spelled-out
cases and runs a careless pattern would backtrack on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.values import IDENT_RE, identifier_tokens, is_identifier_like

#: id characters (`A-Za-z0-9_.@#:/+-`), hex, ':' + digit, ':\\', quotes and brackets, ASCII and
#: Unicode whitespace, non-ASCII letters and digits
TRICKY = (
    "0123456789abcdefABCDEFghpstxzGHXZ:/.-_@#\\+\"'`()[]{}<>,;!?= \t\r\n\xa0\u2003\x1c\x85\u2028é\u0434\u65e5\u0663"
)
#: short and upper-case tokens, marks at a run's edges, `#` before and after alphanumerics
FRAGMENTS = (
    "#",
    "##",
    "#a",
    "#ab",
    "a#",
    "ab",
    "AB",
    "ID.",
    "1.",
    "12",
    "$30",
    "e.g.",
    "A.B",
    "a.b",
    "x_",
    "_x",
    "a_b",
    "@",
    "a@b.co",
    "ORD-48213",
    "#W2378156",
    "mia_garcia_4516",
    "JFK",
    "M05KNL",
    "C:\\tmp\\x",
    "x.y:80",
    "http://h.io:8080/p",
    "/usr/lib",
    "deadbeef01",
    "1234567",
    "(abc12345)",
    "\xa0",
    "\n",
    " ",
    "é",
)
TEXTS = st.one_of(
    st.text(alphabet=TRICKY, max_size=80),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=TRICKY, max_size=6)), max_size=30).map("".join),
)
EXAMPLES = settings(max_examples=300, deadline=None, database=None, derandomize=True)


def _filtered(text: str) -> list[str]:
    return [token for token in IDENT_RE.findall(text) if is_identifier_like(token)]


@EXAMPLES
@given(TEXTS)
def test_identifier_tokens_are_the_identifier_like_ident_tokens(text):
    assert identifier_tokens(text) == _filtered(text)


@EXAMPLES
@given(st.text(max_size=200))
def test_identifier_tokens_of_any_unicode_text(text):
    assert identifier_tokens(text) == _filtered(text)


def test_identifier_tokens_pinned():
    """A run gives one token from its first alphanumeric (or the `#` before it) to its last;
    2-char tokens, words with a lower-case letter and no digit/_/@/#, and marks outside the token
    never count; `#` and `_` inside do."""
    text = "ID. 1. $30 e.g. a.b A.B x_ _ab a_b #ab ##a1 a# JFK iPhone ORD-48213 --#W23-- mia@x.io _x_y_"
    assert identifier_tokens(text) == ["A.B", "a_b", "#ab", "#a1", "JFK", "ORD-48213", "#W23", "mia@x.io", "x_y"]


M = 1_000_000
#: runs a careless pattern would backtrack on quadratically (the test would hang), with their tokens
LONG_RUNS = {
    "lower-case word": ("a" * M, []),
    "dotted word then underscores": ("a.b" + "_" * M, []),
    "underscores then a dotted word": ("_" * M + "a.b", []),
    "hashes then a token": ("#" * M + "ab", ["#ab"]),
    "dashes then two characters": ("-" * M + "a1", []),
    "one long token": ("aB1_" * (M // 4), [("aB1_" * (M // 4))[:-1]]),
    "alternating a_": ("a_" * (M // 2), [("a_" * (M // 2))[:-1]]),
    "upper-case dotted": ("A." * (M // 2), [("A." * (M // 2))[:-1]]),
    "mixed case then a digit": ("Ab" * (M // 2) + "1", ["Ab" * (M // 2) + "1"]),
    "lower case after a mark": ("x_" + "a" * M + ".", ["x_" + "a" * M]),
    "digits": ("7" * M, ["7" * M]),
    "prose with identifiers": (
        "réservation deadbeef ORD-48213 /tmp/x a@b.co C:\\x\\y " * (M // 50),
        ["ORD-48213", "a@b.co"] * (M // 50),
    ),
}


@pytest.mark.parametrize("name", list(LONG_RUNS))
def test_identifier_tokens_of_long_runs(name):
    text, tokens = LONG_RUNS[name]
    assert identifier_tokens(text) == tokens
