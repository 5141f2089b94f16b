"""Property tests: safeguard's promise on generated sessions (mixed read / write tools, parallel
calls, large results, pending approvals, thinking, chained compactions).

For every generated session and budget, a safeguard compaction either succeeds — then every
mutating entry the model saw survives byte-identical (restated after the summary when pi's cut
summarizes it), no pair is broken, replayCheck is clean, the window shrank and the working copy's
ledger is the recording's — or fails with a reason and appends nothing; it fails for its protected
entries only when they and the smallest summary exceed the budget. A second compaction after more
turns keeps the first one's protected entries."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders.transcripts import TOOL_CLASSES, Session, dumped
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.invariants import check_pairs, mutating_entries
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.transcript import TranscriptWriter, build_window, load_transcript

CLASSIFIER = ToolClassifier(declared=TOOL_CLASSES)
TOOLS = ["get_order", "search", "cancel_order", "send_email", "refund"]

step = st.tuples(
    st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3),  # parallel calls
    st.sampled_from([20, 200, 2_000, 6_000]),  # result size (chars)
    st.booleans(),  # thinking block
    st.booleans(),  # an error result
)
turn = st.tuples(st.integers(min_value=0, max_value=10**6), st.lists(step, max_size=3), st.booleans())
sessions = st.lists(turn, min_size=2, max_size=7)
budgets = st.sampled_from([(3_000, 500), (6_000, 1_000), (12_000, 2_000), (40_000, 4_000)])
keeps = st.sampled_from([None, 200, 1_500, 5_000])


def build(turns, *, pending_last: bool, first_call: int = 0) -> Session:
    s = Session()
    s.calls = first_call  # call ids stay unique when a second part is appended
    for number, steps, chatty in turns:
        s.user(
            f"ticket T-{number} for order #W{number:07d}: handle it" + (" please, in detail " * 20 if chatty else "")
        )
        for tools, size, thinking, error in steps:
            entry, ids = s.assistant(
                None,
                [(name, {"order_id": f"#W{number:07d}", "n": i}) for i, name in enumerate(tools)],
                thinking=f"thinking about {number}" if thinking else None,
                signature=f"sig-{number}" if thinking else None,
            )
            for call_id, name in zip(ids, tools):
                s.result(call_id, name, f"{name} result for #W{number:07d} " + "r" * size, is_error=error)
        s.assistant(f"handled T-{number}" + (" with a long explanation" * 30 if chatty else ""))
    if pending_last:
        s.user("one more: refund it")
        s.assistant("Need approval for the refund.", [("refund", {"order_id": "#W0000001"})])
        s.user("waiting…")
    return s


def _mutating_before(path):
    before = build_window(path)
    return before, mutating_entries(((w.entry_id, w.message) for w in before), CLASSIFIER)


def _source(item):
    return item.get("restates") or item["entryId"]


def _check_success(recording_path, result):
    transcript = load_transcript(recording_path)
    path = transcript.leaf_path()
    before, mutating = _mutating_before(path)
    by_id = {e.id: e for e in transcript.entries}
    window = {_source(w): w for w in result.compacted_window}
    for entry_id in mutating:
        assert entry_id in window, f"mutating entry {entry_id} dropped"
        assert orjson.dumps(window[entry_id]["message"], option=orjson.OPT_SORT_KEYS) == dumped(by_id[entry_id].message)
    order = {e.id: i for i, e in enumerate(path)}
    shown = [order[_source(w)] for w in result.compacted_window[1:]]
    assert shown == sorted(shown)  # chronological
    copy = load_transcript(result.working_copy)
    after = build_window(copy.path_to(result.leaf_id))
    assert check_pairs(copy.path_to(result.leaf_id), after) == []
    assert result.findings == []
    assert result.compacted_token_count < result.original_token_count
    assert build_ledger(copy, CLASSIFIER).events == build_ledger(transcript, CLASSIFIER).events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=sessions, budget=budgets, keep=keeps, pending=st.booleans())
def test_safeguard_keeps_protected_entries_or_fails_with_a_reason(turns, budget, keep, pending):
    context_tokens, floor = budget
    with tempfile.TemporaryDirectory() as tmp:
        recording = build(turns, pending_last=pending).write(Path(tmp) / "rec.jsonl")
        original = recording.read_bytes()
        copy = Path(tmp) / "copy.jsonl"
        result = compact(
            CompactParams(
                session_file=str(recording),
                context_tokens=context_tokens,
                reserve_tokens_floor=floor,
                keep_recent_tokens=keep,
                working_copy=str(copy),
                tool_classes=TOOL_CLASSES,
            )
        )
        assert recording.read_bytes() == original
        if not result.success:
            assert result.error and (
                result.error.startswith("compaction_failure:") or result.error.startswith("nothing to compact")
            )
            assert not copy.exists()
            if result.failure == "protected_too_large":  # only when they and the smallest summary do not fit
                needed = int(
                    re.search(r": ([\d,]+) tokens, more than the budget", result.error).group(1).replace(",", "")
                )
                assert needed > result.budget_tokens
            return
        restated = len(result.compacted_window) - 1 if result.first_kept_entry_id == result.compaction_event_id else 0
        assert copy.read_bytes().startswith(original)
        assert copy.read_bytes().count(b"\n") == original.count(b"\n") + 1 + restated
        _check_success(recording, result)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first_turns=sessions, later_turns=sessions, keep=st.sampled_from([200, 1_500]))
def test_second_compaction_keeps_the_first_ones_protected_entries(first_turns, later_turns, keep):
    with tempfile.TemporaryDirectory() as tmp:
        recording = build(first_turns, pending_last=False).write(Path(tmp) / "rec.jsonl")
        writer = TranscriptWriter.working_copy(recording, Path(tmp) / "copy.jsonl")
        params = CompactParams(
            session_file=str(writer.path),
            context_tokens=40_000,
            reserve_tokens_floor=4_000,
            keep_recent_tokens=keep,
            tool_classes=TOOL_CLASSES,
        )
        first = compact(params, writer=writer)
        if not first.success:
            return
        more = build(later_turns, pending_last=False, first_call=10_000)
        leaf = first.leaf_id
        for line in more.lines[1:]:
            line = {**line, "id": "x" + line["id"], "parentId": leaf}
            writer.append(line)
            leaf = line["id"]
        second = compact(params, writer=writer)
        if not second.success:
            assert second.error.startswith("compaction_failure:") or second.error.startswith("nothing to compact")
            return
        window_ids = {_source(w) for w in second.compacted_window}
        assert set(first.protected_entry_ids) <= set(second.protected_entry_ids) | window_ids
        assert set(first.protected_entry_ids) <= window_ids
        assert second.findings == []
        recorded = build_ledger(load_transcript(recording), CLASSIFIER).events
        assert build_ledger(load_transcript(writer.path), CLASSIFIER).events[: len(recorded)] == recorded
