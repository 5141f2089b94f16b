"""The baseline's calls its cassette could not answer (`checks.item.unanswered_recorded_calls`):
a call the recording made and its cassette lacks is the cassette's gap (stale, or another
session's); a call the recording never made is not, and is never reported as one."""

from __future__ import annotations

import json
from pathlib import Path

from builders.transcripts import Session
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.checks.item import unanswered_recorded_calls
from replaylab.defects import Code
from replaylab.qa.pipeline import RunOptions, run_item
from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
from replaylab.suite import load_suite

ORDER = json.dumps({"order": "W1001", "items": ["mat"] * 150})


def _item(folder: Path, cassette_calls: list[tuple[str, dict, str]]):
    rec = folder / "rec"
    rec.mkdir()
    session = Session("s")
    session.user("Look up order W1001 in detail. " + "Please be thorough. " * 60)
    session.tool_turn("get_order", {"order": "W1001"}, ORDER)
    session.assistant("It shipped. " + "Details follow. " * 80)
    session.user("Refund it.")
    session.tool_turn("issue_refund", {"order": "W1001", "amount": 30}, '{"refund": "R-1"}')
    session.assistant("Refunded as R-1.")
    session.write(rec / "s.jsonl")
    write_cassette(rec / "s.cassette.yaml", [recorded_tool_interaction(*call) for call in cassette_calls])
    (folder / "suite.yaml").write_text(
        "name: s\nrecordings: rec/*.jsonl\ncompaction: {mode: auto}\ncompact_at: turn:2\n", encoding="utf-8"
    )
    suite = load_suite(folder / "suite.yaml")
    return run_item(suite.scenarios[0], suite.recordings[0], RunOptions(work_dir=folder))


def test_a_cassette_without_a_recorded_call_asks_whether_it_is_another_sessions(tmp_path: Path) -> None:
    result = _item(tmp_path, [("get_order", {"order": "W1001"}, ORDER)])
    assert result.outcome == "error"
    [gap] = [d for d in result.defects if d.code == Code.CASSETTE_MISSING]
    assert "s.cassette.yaml has no recorded response for 1 call(s) of the recording" in gap.message
    assert "(first: issue_refund in turn 2); is it the cassette of another session?" in gap.message
    assert Code.BASELINE_DRIFT not in {d.code for d in result.defects}  # the baseline made the recorded call


def test_the_control_a_cassette_that_answers_every_recorded_call_has_no_gap(tmp_path: Path) -> None:
    result = _item(
        tmp_path,
        [
            ("get_order", {"order": "W1001"}, ORDER),
            ("issue_refund", {"order": "W1001", "amount": 30}, '{"refund": "R-1"}'),
        ],
    )
    assert not {Code.CASSETTE_MISSING, Code.BASELINE_DRIFT} & {d.code for d in result.defects}, result.reason


def _trace(*calls: tuple[str, dict, str]) -> RunTrace:
    return RunTrace(
        label="baseline",
        turns=[
            TurnTrace(
                turn=2,
                tool_calls=[
                    ToolCallTrace(turn=2, step=i, tool_call_id=f"c{i}", tool=tool, arguments=args, source=source)  # type: ignore[arg-type]
                    for i, (tool, args, source) in enumerate(calls)
                ],
            )
        ],
    )


RECORDED = _trace(
    ("get_order", {"order": "W1001"}, "cassette"), ("issue_refund", {"order": "W1001", "amount": 30}, "cassette")
)


def test_a_call_the_recording_never_made_is_named_by_where_it_differs_never_as_another_sessions_cassette() -> None:
    baseline = _trace(
        ("get_order", {"order": "W1001"}, "cassette"), ("issue_refund", {"amount": 31, "order": "W1001"}, "blocked")
    )
    [defect] = unanswered_recorded_calls(baseline, RECORDED, Path("s.cassette.yaml"))
    assert defect.code == Code.CASSETTE_MISSING
    assert "the baseline made 1 call(s) the recording never made with those arguments" in defect.message
    assert "(first: issue_refund in turn 2, differs from the recorded call at amount)" in defect.message
    assert "another session" not in defect.message
    assert defect.actual == [{"tool": "issue_refund", "arguments": {"amount": 31, "order": "W1001"}}]
    # where the baseline's drift is reported, that call is the drift's consequence, not a gap
    assert unanswered_recorded_calls(baseline, RECORDED, Path("s.cassette.yaml"), drifted=True) == []


def test_a_recorded_call_is_known_by_its_arguments_in_any_key_order_and_a_tool_the_turn_never_called_is_said() -> None:
    baseline = _trace(
        ("issue_refund", {"amount": 30, "order": "W1001"}, "blocked"),  # the recorded call, keys reordered
        ("send_email", {"to": "mia@example.com"}, "blocked"),
    )
    recorded_gap, other = unanswered_recorded_calls(baseline, RECORDED, Path("s.cassette.yaml"), drifted=False)
    assert "1 call(s) of the recording (first: issue_refund in turn 2)" in recorded_gap.message
    assert "(first: send_email in turn 2, a tool the recording did not call in that turn)" in other.message
    # a drift takes the call the recording never made, never the recording's own call
    assert unanswered_recorded_calls(baseline, RECORDED, Path("s.cassette.yaml"), drifted=True) == [recorded_gap]
