"""Run comparison: the four tool match modes (checked against the calls' keys on generated runs),
per-tool argument rules, answer modes, drift."""

from __future__ import annotations

import difflib
import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.checks.diff import (
    answers_match,
    call_key,
    diff_runs,
    drift_from_recording,
    normalize_answer,
    sequences_match,
)
from replaylab.defects import Code
from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
from replaylab.suite import ArgRule, MatchSettings


def call(tool: str, step: int = 0, **args) -> ToolCallTrace:
    return ToolCallTrace(turn=1, step=step, tool_call_id=f"c{step}{tool}", tool=tool, arguments=args)


A, B, C = call("get", id="1"), call("refund", order="O-1", amount=5), call("email", to="x@y")


def test_strict_unordered_subset_superset():
    strict, unordered = MatchSettings(tools="strict"), MatchSettings(tools="unordered")
    subset, superset = MatchSettings(tools="subset"), MatchSettings(tools="superset")
    assert sequences_match([A, B], [A, B], strict)
    assert not sequences_match([A, B], [B, A], strict) and sequences_match([A, B], [B, A], unordered)
    assert sequences_match([A, B, C], [A, C], subset) and not sequences_match([A, C], [A, B, C], subset)
    assert sequences_match([A, C], [A, B, C], superset) and not sequences_match([A, B, C], [A, C], superset)
    assert not sequences_match([A, A], [A], unordered)  # multiset, not set


def test_argument_rules_ignore_keys_and_key_order():
    rule = MatchSettings(args={"refund": ArgRule(ignore=["amount"])})
    assert sequences_match([B], [call("refund", order="O-1", amount=99)], rule)
    assert not sequences_match([B], [call("refund", order="O-2", amount=5)], rule)
    assert sequences_match([call("x", a=1, b=2)], [call("x", b=2, a=1)], MatchSettings())


def test_answer_modes():
    assert answers_match("Done.", "done", MatchSettings(answer="normalized"))
    assert not answers_match("Done.", "done", MatchSettings(answer="exact"))
    assert answers_match(
        "Your refund of $5 is issued",
        "Your refund of $5 was issued",
        MatchSettings(answer="similarity", similarity=0.8),
    )
    assert not answers_match("refund issued", "I cannot help", MatchSettings(answer="similarity", similarity=0.8))


def test_identifier_answers_match_on_the_ids_they_name_whatever_the_wording():
    """A real model's answer on another window: the same refund id in other words matches; a
    different id, a lost id or an extra one does not."""
    rule = MatchSettings(answer="identifiers")
    said = 'The refund ID is "REF-9003".'
    assert answers_match(said, 'The id of the refund you just issued is "REF-9003".', rule)
    assert not answers_match(said, 'The id of the refund you just issued is "REF-9004".', rule)
    assert not answers_match(said, "I could not find the refund you issued.", rule)
    assert not answers_match(said, "Refund REF-9003 for order ORD-77123 is issued.", rule)
    assert not answers_match(said, 'The id of the refund is "REF-9003".', MatchSettings(answer="normalized"))


def _trace(label, calls, answer):
    return RunTrace(label=label, turns=[TurnTrace(turn=1, answer=answer, tool_calls=calls)])


def test_diff_runs_reports_first_divergence_with_argument_diff():
    base = _trace("baseline", [A, B], "Refunded.")
    comp = _trace("compacted", [A, call("refund", step=1, order="⟨lost:1⟩", amount=5)], "Refunded.")
    defects, first = diff_runs(base, comp, MatchSettings())
    assert [d.code for d in defects] == [Code.TOOL_SEQUENCE_DIVERGED]
    assert "order" in defects[0].message and first.step == 1 and first.what == "tool call"
    assert first.baseline["arguments"]["order"] == "O-1" and first.compacted["arguments"]["order"] == "⟨lost:1⟩"


def test_answer_divergence_and_drift():
    base, comp = _trace("baseline", [A], "Order O-1 refunded."), _trace("compacted", [A], "Which order?")
    defects, first = diff_runs(base, comp, MatchSettings())
    assert [d.code for d in defects] == [Code.ANSWER_DIVERGED] and first.what == "answer"
    assert drift_from_recording(base, base) == []
    (drift,) = drift_from_recording(comp, base)
    assert drift.code == Code.BASELINE_DRIFT and drift.severity == "error"


def test_an_argument_that_changes_type_is_reported_in_json():
    """An argument that went from 1 to "1" (a pi fixture's `offset` after auto compaction): the
    defect's differing leaf names the type change, and the item — defect included — serializes."""
    from replaylab.report.jsonio import item_json
    from replaylab.results import ItemResult

    base = _trace("baseline", [call("read", path="a.txt", offset=1)], "ok")
    comp = _trace("compacted", [call("read", path="a.txt", offset="1")], "ok")
    (defect,), _ = diff_runs(base, comp, MatchSettings())
    assert defect.code == Code.TOOL_SEQUENCE_DIVERGED
    assert defect.detail["differences"] == [{"path": "offset", "expected": 1, "actual": "1", "change": "type"}]
    assert "read arguments differ at offset" in defect.message and "root[" not in defect.message
    item = ItemResult(id="s::x", suite="s", scenario="x", recording="r.jsonl", outcome="failed", defects=[defect])
    assert b'"path":"offset","expected":1,"actual":"1","change":"type"' in item_json(item)


# ---------------------------------------------------------------- the modes as the settings state them

#: argument values `==` calls equal that canonical JSON spells apart (1 / 1.0 / True, 0.0 / -0.0), and others
_CALLS = [
    call("refund", order="O-1", amount=5),
    call("refund", amount=5, order="O-1"),
    call("refund", order="O-1", amount=5.0),
    call("refund", order="O-1", amount=True),
    call("refund", order="O-2", amount=5),
    call("lookup", order="O-1"),
    call("lookup", order="O-1", x=-0.0),
    call("lookup", order="O-1", x=0.0),
    call("lookup"),
    call("refund", order="O-1", amount=5, note={"a": [1]}),
    call("refund", order="O-1", amount=5, note={"a": [True]}),
    call("lookup", order="O-1", x=math.nan),
]
_MATCHES = [
    MatchSettings(tools=tools, args=args)
    for tools in ("strict", "unordered", "subset", "superset")
    for args in ("exact", "ignore", {"refund": ArgRule(ignore=["amount"])})
]


def _keys_match(baseline: list, compacted: list, match: MatchSettings) -> bool:
    """The four tool modes over the calls' `call_key`s: the same sequence, the same multiset, the
    compacted calls within the baseline's, the baseline's within the compacted calls."""
    a = Counter(call_key(c, match) for c in baseline)
    b = Counter(call_key(c, match) for c in compacted)
    if match.tools == "strict":
        return [call_key(c, match) for c in baseline] == [call_key(c, match) for c in compacted]
    if match.tools == "unordered":
        return a == b
    if match.tools == "subset":
        return b <= a
    return a <= b


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_CALLS), max_size=4),
    st.lists(st.sampled_from(_CALLS), max_size=4),
    st.sampled_from(_MATCHES),
)
def test_tool_sequences_match_by_their_call_keys(baseline, compacted, match) -> None:
    assert sequences_match(baseline, compacted, match) == _keys_match(baseline, compacted, match)
    assert sequences_match(baseline, list(baseline), match) == _keys_match(baseline, list(baseline), match)


def test_arguments_python_calls_equal_and_json_spells_apart_are_different_calls() -> None:
    strict = MatchSettings(tools="strict")
    for left, right in [(1, True), (1, 1.0), (0, False), (0.0, -0.0), ({"a": 1}, {"a": True}), ([1], [1.0])]:
        assert not sequences_match([call("t", v=left)], [call("t", v=right)], strict), (left, right)
    same = {"b": [1, {"c": None}], "a": "x", "f": 2.5}
    assert sequences_match([call("t", v=same)], [call("t", v=dict(reversed(list(same.items()))))], strict)


def test_arguments_nested_deeper_than_python_recurses_are_compared() -> None:
    def nested(leaf: str) -> dict:
        value: object = leaf
        for _ in range(900):  # orjson refuses > 254 levels; canonical JSON goes on
            value = {"a": [value]} if not isinstance(value, dict) else {"a": value}
        return value  # type: ignore[return-value]

    strict = MatchSettings(tools="strict")
    assert sequences_match([call("t", v=nested("x"))], [call("t", v=nested("x"))], strict)
    assert not sequences_match([call("t", v=nested("x"))], [call("t", v=nested("y"))], strict)


_ANSWERS = [
    "",
    "Done.",
    "done",
    "Your refund of $5 is issued",
    "Your refund of $5 was issued",
    "  Done!!  ",
    "x" * 50,
    "DONE",
]


def test_answer_modes_as_the_settings_state_them() -> None:
    """`exact`: the same text; `normalized`: the same after `normalize_answer` (case, spacing,
    closing punctuation); `similarity`: a similarity ratio of the normalized texts at least the
    threshold; `ignore`: always."""
    for a in _ANSWERS:
        for b in _ANSWERS:
            same_normalized = normalize_answer(a) == normalize_answer(b)
            ratio = difflib.SequenceMatcher(None, normalize_answer(a), normalize_answer(b)).ratio()
            assert answers_match(a, b, MatchSettings(answer="exact")) == (a == b)
            assert answers_match(a, b, MatchSettings(answer="normalized")) == same_normalized
            assert answers_match(a, b, MatchSettings(answer="ignore"))
            for threshold in (0.0, 0.8, 1.0):
                assert answers_match(a, b, MatchSettings(answer="similarity", similarity=threshold)) == (
                    ratio >= threshold
                ), (a, b, threshold)


def test_findings_name_differing_leaves_by_human_path():
    """`flights[0].flight_number`, never deepdiff's `root['flights'][0]['flight_number']`; another
    tool at the same position says so; a long answer is windowed around its first difference."""
    flights = {"flights": [{"flight_number": "HAT001", "date": "2024-05-01"}]}
    changed = {"flights": [{"flight_number": "HAT002", "date": "2024-05-01"}]}
    base = _trace("baseline", [call("book", **flights)], "x" * 300 + " booked HAT001 " + "y" * 300)
    comp = _trace("compacted", [call("book", **changed)], "x" * 300 + " booked HAT002 " + "y" * 300)
    tools, answer = diff_runs(base, comp, MatchSettings())[0]
    assert "book arguments differ at flights[0].flight_number" in tools.message and "root[" not in tools.message
    assert tools.detail["differences"] == [
        {"path": "flights[0].flight_number", "expected": "HAT001", "actual": "HAT002"}
    ]
    [leaf] = answer.detail["differences"]
    assert leaf["path"] == "(root)" and "booked HAT001" in leaf["expected"] and "booked HAT002" in leaf["actual"]
    assert len(leaf["expected"]) < 200  # a window, not the whole answer
    other = _trace("compacted", [call("cancel", **flights)], base.turns[0].answer)
    (defect,), _ = diff_runs(base, other, MatchSettings())
    assert "cancel instead of book" in defect.message
    assert defect.detail["differences"][0] == {"path": "tool", "expected": "book", "actual": "cancel"}
