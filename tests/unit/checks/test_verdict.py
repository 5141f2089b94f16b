"""The one verdict function: expectations, severities, not-exercised, negative controls."""

from __future__ import annotations

from replaylab.defects import Code, Defect
from replaylab.suite import Expectations
from replaylab.verdict import verdict


def d(code: Code) -> Defect:
    return Defect.of(code, f"{code.value} happened")


def test_clean_run_passes():
    assert verdict([], Expectations()).outcome == "passed"


def test_blocking_defect_fails_and_is_named_first():
    v = verdict([d(Code.ANSWER_DIVERGED), d(Code.MUTATION_DROPPED)], Expectations())
    assert v.outcome == "failed" and v.reason.startswith("MUTATION_DROPPED") and len(v.unexpected) == 2


def test_infrastructure_error_is_error_not_failure():
    v = verdict([d(Code.CASSETTE_MISSING), d(Code.MUTATION_DROPPED)], Expectations())
    assert v.outcome == "error" and "CASSETTE_MISSING" in v.reason


def test_warning_never_fails():
    assert verdict([d(Code.TRANSCRIPT_OVERSIZE)], Expectations()).outcome == "passed"


def test_negative_control_passes_only_when_expected_defects_found():
    expect = Expectations(defects=[Code.MUTATION_DROPPED, Code.PAIR_BROKEN])
    assert verdict([d(Code.MUTATION_DROPPED), d(Code.PAIR_BROKEN)], expect).outcome == "passed"
    missed = verdict([d(Code.MUTATION_DROPPED)], expect)
    assert missed.outcome == "failed" and missed.missing_expected == ["PAIR_BROKEN"]
    assert "did not find PAIR_BROKEN" in missed.reason


def test_unexpected_extra_defect_fails_unless_tolerated():
    expect = Expectations(defects=[Code.MUTATION_DROPPED])
    found = [d(Code.MUTATION_DROPPED), d(Code.TOOL_SEQUENCE_DIVERGED)]
    assert verdict(found, expect).outcome == "failed"
    assert (
        verdict(found, Expectations(defects=[Code.MUTATION_DROPPED], tolerate=[Code.TOOL_SEQUENCE_DIVERGED])).outcome
        == "passed"
    )
    assert verdict(found, Expectations(defects=[Code.MUTATION_DROPPED], tolerate="any")).outcome == "passed"


def test_not_exercised_is_skip_or_strict_failure():
    assert verdict([], Expectations(), exercised=False).outcome == "skipped"
    strict = verdict([], Expectations(), exercised=False, strict=True)
    assert strict.outcome == "failed" and "not exercised" in strict.reason
