"""The scrubber's rules as they are spelled for speed find exactly what their plain spellings find."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.scrub import Scrubber
from replaylab.scrub.rules import default_rules

#: the plain spellings of the rules spelled for speed (`replaylab.scrub.rules`)
PLAIN = {
    "secret option value": (
        r"(?i)(?<![\w-])--?[a-z0-9-]*?(?:token|password|passwd|passphrase|secret|credential|jwt"
        r"|(?:api|access|private|client|session|auth)-?key)\s++[\"']?([^\"'\s\\-][^\"'\s\\]{7,}+)"
    ),
    "cookie with attributes": (
        r"(?i)(?:=|(?<=[\"']))([^;\s\"'\\=]{4,}+=*+);[ \t]*+(?:path|domain|expires|max-age|httponly|secure|samesite)\b"
    ),
}

#: pieces texts are made of: the rules' own words and characters, and letters case folding turns
#: into ASCII ones (the Kelvin sign, long s, dotless i, dotted capital I)
PIECES = [
    "-", "--", "=", ";", "; ", " ", "\t", "\n", '"', "'", "\\", "\\n", "_", "x", "K", "é",
    "path", "Path", "secure", "max-age", "ſamesite", "\u212a", "ı", "İ",
    "token", "TOKEN", "api-key", "apikey", "-p", "password", "sid", "8800aa11bb22", "abcd1234",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _rule(label: str):
    return next(rule for rule in default_rules() if rule.label == label)


NEEDING = [rule for rule in default_rules() if rule.needs is not None]


@settings(max_examples=600, deadline=None)
@given(texts)
def test_the_rules_spelled_for_speed_match_where_their_plain_spellings_do(text: str) -> None:
    for label, plain in PLAIN.items():
        rule = _rule(label)
        assert [m.span(1) for m in rule.regex.finditer(text)] == [m.span(1) for m in re.finditer(plain, text)], label


@settings(max_examples=600, deadline=None)
@given(texts)
def test_a_rules_needed_pattern_is_found_in_every_text_the_rule_matches(text: str) -> None:
    for rule in NEEDING:
        if rule.regex.search(text):
            assert rule.needs.search(text), rule.label


def test_a_cookie_is_found_where_a_server_sets_it_and_a_text_without_its_attributes_is_not_searched() -> None:
    scrubber = Scrubber()
    assert NEEDING  # the cookie rule at least
    text = 'the response: "sessionid=8f3a9c2e1b7d; Path=/; HttpOnly"'
    assert "8f3a9c2e1b7d" not in scrubber.text(text)
    # the hint `path` is here, the attribute after a `;` is not: nothing is searched, nothing found
    assert _rule("cookie with attributes").needs.search("sessionid=8f3a9c2e1b7d, path /tmp") is None
    assert scrubber.text("sessionid=8f3a9c2e1b7d, path /tmp") == "sessionid=8f3a9c2e1b7d, path /tmp"
