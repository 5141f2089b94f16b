"""The replay model on real recorded sessions (imported by replaylab's own importers):
zero drift on the full window for every τ²-bench and τ-bench session, and the loss of one learned
identifier changing exactly the calls that used it, with the changed write blocked."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from replaylab.cassette import cassette_path_for
from replaylab.defects import Code
from replaylab.importers import import_sessions, write_session
from replaylab.replay import ToolExecutor, calls_before, make_model, run_turns, split_turns
from replaylab.replay.tools.recorded_results import RecordedResults
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.context import WindowMessage, build_window
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import MESSAGE_ADAPTER, message_text

pytestmark = pytest.mark.realdata

#: a τ²-bench airline session (gpt-4.1) that cancels reservation M20IZO in user turn 4 and books a
#: new flight in turn 7; the id was learned in turns 1-3 and is not repeated by the user later
SESSION = "tau2-airline-gpt-4.1-sim-85a8fb16-f80a-4af2-bd92-d303bced2961"
SOURCE = "tau2-bench/airline/gpt-4.1_airline_default_gpt-4.1_1trials.json"


def _import(src: Path, kind: str, out: Path) -> Path:
    for session in import_sessions(kind, src):
        write_session(session, out)
    return out


@pytest.fixture(scope="module")
def tau2(shared_data, tmp_path_factory):
    return _import(shared_data / "tau2-bench", "tau2-bench", tmp_path_factory.mktemp("tau2"))


@pytest.fixture(scope="module")
def tau(shared_data, tmp_path_factory):
    return _import(shared_data / "tau-bench", "tau-bench", tmp_path_factory.mktemp("tau"))


def _classifier(folder: Path) -> ToolClassifier:
    return ToolClassifier.from_json(folder / "tool_classes.json")


def _dump(message) -> dict:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def _zero_drift(folder: Path, expected_sessions: int) -> None:
    classifier = _classifier(folder)
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) == expected_sessions
    steps = calls = 0
    for file in files:
        transcript = load_transcript(file)
        turns = split_turns(transcript.leaf_path())
        executor = ToolExecutor(cassette_path_for(file), classifier)
        trace = run_turns([], turns, make_model("replay", recording=transcript), executor, label="baseline")
        assert trace.error is None, f"{file.name}: {trace.error}"
        assert executor.defects == [], f"{file.name}: {executor.defects}"
        for turn, turn_trace in zip(turns, trace.turns, strict=True):
            assert turn_trace.assistant_messages == [_dump(e.message) for e in turn.steps], (
                f"{file.name} turn {turn.index}"
            )
            for call in turn_trace.tool_calls:
                recorded = turn.results[call.tool_call_id].message
                assert (call.source, call.result, call.is_error) == (
                    "cassette",
                    message_text(recorded),
                    recorded.is_error,
                )
            steps += len(turn.steps)
            calls += len(turn_trace.tool_calls)
    assert steps > 0 and calls > 0


def test_zero_drift_on_every_tau2_bench_session(tau2):
    _zero_drift(tau2, 240)


def test_zero_drift_on_every_tau_bench_session(tau):
    _zero_drift(tau, 200)


def _without(window: list[WindowMessage], value: str) -> list[WindowMessage]:
    """The window with every occurrence of `value` cut out of every message."""
    out = []
    for item in window:
        text = orjson.dumps(_dump(item.message)).decode()
        if value in text:
            item = WindowMessage(
                item.entry_id, MESSAGE_ADAPTER.validate_python(json.loads(text.replace(value, ""))), item.protected
            )
        out.append(item)
    return out


def test_removing_one_learned_identifier_changes_exactly_the_calls_that_used_it(shared_data, tmp_path):
    [session] = [s for s in import_sessions("tau2-bench", shared_data / SOURCE) if s.name == SESSION]
    file, cassette = write_session(session, tmp_path)
    classifier = _classifier(tmp_path)
    transcript = load_transcript(file)
    path = transcript.leaf_path()
    turns = split_turns(path)
    cut = next(
        t.index for t in turns if any(c.name == "cancel_reservation" for s in t.steps for c in s.message.tool_calls())
    )
    history = path[: path.index(turns[cut].inputs[0])]
    window = build_window(history)
    identifier = "M20IZO"
    assert identifier in "".join(message_text(w.message) for w in window)  # learned before the cut
    assert all(identifier not in message_text(e.message) for t in turns[cut:] for e in t.inputs)  # not repeated

    runs = {}
    for label, start in (("baseline", window), ("compacted", _without(window, identifier))):
        executor = ToolExecutor(
            cassette, classifier, recorded=RecordedResults.of(path), executed_before=calls_before(history)
        )
        trace = run_turns(start, turns[cut:], make_model("replay", recording=transcript), executor, label=label)
        assert trace.error is None
        runs[label] = (trace, executor)
    baseline, compacted = (runs[k][0] for k in ("baseline", "compacted"))
    pairs = list(
        zip(
            [c for t in baseline.turns for c in t.tool_calls],
            [c for t in compacted.turns for c in t.tool_calls],
            strict=True,
        )
    )
    assert len(pairs) >= 3
    used = [b for b, _ in pairs if identifier in json.dumps(b.arguments)]
    changed = [b for b, c in pairs if b.arguments != c.arguments]
    assert [c.tool for c in used] == ["cancel_reservation"] and changed == used  # exactly the calls that used it
    for before, after in pairs:
        if before in used:
            assert after.arguments == {"reservation_id": "⟨lost:1⟩"}
            assert (before.source, after.source, after.is_error) == ("cassette", "blocked", True)
        else:  # every other call, the later booking (a write) included, replays from the cassette
            assert (after.source, after.result) == ("cassette", before.result)
    assert any(c.mutating for b, c in pairs if b not in used)
    assert runs["baseline"][1].defects == []
    [escaped] = runs["compacted"][1].defects
    assert escaped.code == Code.SIDE_EFFECT_ESCAPED and escaped.where.tool == "cancel_reservation"
    assert escaped.expected == {"tool": "cancel_reservation", "arguments": {"reservation_id": identifier}}
    # EXPECTED is the call the recorded agent made at this step, named leaf by leaf
    assert escaped.detail["differences"] == [{"path": "reservation_id", "expected": identifier, "actual": "⟨lost:1⟩"}]
    assert "differs at reservation_id" in escaped.message and "root[" not in escaped.message
