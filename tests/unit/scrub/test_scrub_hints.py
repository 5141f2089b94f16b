"""The scrubber's literal hints (replaylab/scrub/hints.py) are sound for any pattern: a text
holding none of a pattern's hints has no match; an anchored pattern's matches start where a
hint starts; a folded pattern finds on lower-cased text what the case-insensitive one finds.

Patterns and texts are random, from one small alphabet (letters in both cases, `-`, `_`, a quote,
a backslash, a non-ASCII letter) so that matches are common; the texts also hold the four
letters IGNORECASE matches to ASCII ones.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaylab.scrub import CASE_SPECIALS, Scrubber
from replaylab.scrub.hints import folded_regex, pattern_hints

ALPHABET = 'abkisAKS-_"\\é'
TEXT_ALPHABET = ALPHABET + " " + "".join(CASE_SPECIALS)

literal = st.one_of(
    st.text(alphabet="abkisAKS-_", min_size=2, max_size=6),
    st.text(alphabet=ALPHABET, min_size=1, max_size=3),
).map(re.escape)
char_class = st.sampled_from(["[ab]", "[a-c]", "[A-Z]", "[a-zA-Z]", "[^a]", "[_-]", r"\d", r"\w", ".", "[kK]", "[sS_]"])
atom = st.one_of(literal, literal, literal, char_class)


def _patterns() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(inner, min_size=2, max_size=4).map("".join),
            st.lists(inner, min_size=2, max_size=4).map("".join),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
            st.tuples(inner, st.sampled_from(["?", "*", "+", "{2}", "{1,3}", "*?", "++"])).map(
                lambda t: f"(?:{t[0]}){t[1]}"
            ),
            st.tuples(st.sampled_from(["(?=", "(?!", "(?<!"]), literal, inner).map(lambda t: f"{t[0]}{t[1]}){t[2]}"),
            inner.map(lambda x: rf"\b{x}"),
            inner.map(lambda x: f"({x})"),
        )

    body = st.recursive(atom, extend, max_leaves=8)
    return st.tuples(st.booleans(), body).map(lambda t: ("(?i)" if t[0] else "") + t[1])


texts = st.text(alphabet=TEXT_ALPHABET, max_size=30)
SETTINGS = settings(
    max_examples=1500, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def _text_for(data: st.DataObject, regex: re.Pattern[str]) -> str:
    """A random text, or one made to match `regex` (hypothesis builds it from the pattern)."""
    if data.draw(st.booleans()):
        try:
            return data.draw(st.from_regex(regex).filter(lambda t: len(t) < 80))
        except Exception:  # a construct from_regex does not build
            pass
    return data.draw(texts)


@SETTINGS
@given(pattern=_patterns(), data=st.data())
def test_a_text_without_a_hint_has_no_match(pattern: str, data: st.DataObject) -> None:
    regex = re.compile(pattern)
    text = _text_for(data, regex)
    hints, anchored = pattern_hints(regex)
    if hints is None or any(c in text for c in CASE_SPECIALS):
        return
    lowered = text.lower()
    match = regex.search(text)
    if match is not None:
        assert any(h in lowered for h in hints), (pattern, text, hints)
        if anchored:
            for found in regex.finditer(text):
                assert any(lowered.startswith(h, found.start()) for h in hints), (pattern, text, hints)


@SETTINGS
@given(pattern=_patterns(), data=st.data())
def test_a_folded_pattern_finds_what_the_case_insensitive_one_finds(pattern: str, data: st.DataObject) -> None:
    regex = re.compile("(?i)" + pattern.removeprefix("(?i)"))
    text = _text_for(data, regex)
    folded = folded_regex(regex)
    lowered = text.lower()
    if folded is None or len(lowered) != len(text) or any(c in text for c in CASE_SPECIALS):
        return
    assert [m.span() for m in folded.finditer(lowered)] == [m.span() for m in regex.finditer(text)], pattern


def test_hints_of_the_rule_shapes() -> None:
    """What the derivation gives for the shapes the default rules use."""
    assert pattern_hints(r"(?i)api[_-]?key") == (frozenset({"apikey", "api_key", "api-key"}), True)
    assert pattern_hints(r"\bgh[pousr]_[A-Za-z0-9]{30,}")[0] == frozenset({"ghp_", "gho_", "ghu_", "ghs_", "ghr_"})
    assert pattern_hints(r"(?<![A-Za-z0-9])sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}") == (frozenset({"sk-"}), True)
    assert pattern_hints(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")[0] == frozenset(
        {"a3t", "abia", "acca", "akia", "asia"}
    )
    assert pattern_hints(r"[?&](?:[a-z]*?(?:token|key|sig))=") == (frozenset({"token=", "key=", "sig="}), False)
    # a capturing group's known ending joins the literal after it, as an inlined one's does
    assert pattern_hints(r"[?&]([a-z]*?(?:token|key|sig))=") == (frozenset({"token=", "key=", "sig="}), False)
    assert pattern_hints(r"[?&]((?:[a-z]*?token)+)=")[0] == frozenset({"token="})
    assert pattern_hints(r"[?&](x*(?:token|key)|secret)=")[0] == frozenset({"token=", "key=", "secret="})
    assert pattern_hints(r"\d{8,10}:[0-9A-Za-z_-]{35}") == (None, False)  # nothing of three characters
    assert pattern_hints(r"ab|c\"de") == (None, False)  # a quote is never in a hint: JSON escapes it


def test_every_default_rule_has_a_hint_so_the_fast_paths_stay_on() -> None:
    scrubber = Scrubber()
    assert [rule.label for rule in scrubber.rules if not rule.hints] == []
    assert scrubber.json_is_clean(b'{"a": "plain words"}')


def test_a_pattern_without_a_hint_runs_on_every_text_and_turns_the_data_fast_path_off() -> None:
    """A user's pattern with no literal of three characters cannot be prefiltered: it must still
    be applied everywhere, never skipped."""
    scrubber = Scrubber(extra_patterns=[r"\b\d{3}-\d{2}-\d{4}\b"])
    assert scrubber.text("ssn 123-45-6789 on file") == "ssn [REDACTED] on file"
    assert scrubber.json_is_clean(b'{"a": "plain words"}') is False
    assert scrubber.data({"note": ["ssn 123-45-6789"]}) == {"note": ["ssn [REDACTED]"]}
    hinted = Scrubber(extra_patterns=[r"corp-\d{6}"])
    assert hinted.json_is_clean(b'{"a": "plain words"}') and not hinted.json_is_clean(b'{"a": "corp-123456"}')
    # the hint alone is not enough: a string holding it that the pattern does not match is clean
    assert hinted._needle_hits(b'{"a": "CORP-1"}') and hinted.json_is_clean(b'{"a": "CORP-1"}')


def test_an_optional_head_keeps_every_start_a_match_can_have() -> None:
    """`aaak` holds `aak` but does not start with it: a rule tried only where `aak` starts would
    miss the secret that starts one character earlier."""
    hints, anchored = pattern_hints(r"\b(?:[ab])?AAK")
    assert anchored and hints == {"aaak", "baak", "aak"}
    regex = re.compile(r"\b(?:[ab])?AAK")
    text = "key aAAK"
    found = regex.search(text)
    assert found is not None and any(text.lower().startswith(h, found.start()) for h in hints)
