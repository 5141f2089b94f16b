"""compact(): one rule per test, on synthetic sessions read through the real loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from builders.transcripts import TOOL_CLASSES, Session, dumped, helpdesk_session
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.safeguard import message_sha256
from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.transcript import TranscriptWriter, build_window, file_sha256, load_transcript
from replaylab.transcript.model import CompactionEntry

SMALL = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800, tool_classes=TOOL_CLASSES)


def _params(path, **overrides):
    return CompactParams(session_file=str(path), **{**SMALL, **overrides})


def _mutating_ids(path):
    """Entry ids of the messages with a mutating call and of their results."""
    transcript = load_transcript(path)
    ids, calls = set(), set()
    for e in transcript.entries:
        message = getattr(e, "message", None)
        for block in getattr(message, "content", None) or []:
            if getattr(block, "type", "") == "toolCall" and TOOL_CLASSES.get(block.name) in ("write", "exec"):
                ids.add(e.id)
                calls.add(block.id)
        if getattr(message, "role", "") == "toolResult" and message.tool_call_id in calls:
            ids.add(e.id)
    return ids


@pytest.fixture
def recording(tmp_path):
    return helpdesk_session(8).write(tmp_path / "rec.jsonl")


def test_safeguard_keeps_every_mutating_entry_verbatim(recording, tmp_path):
    before = file_sha256(recording)
    lines_before = recording.read_bytes().count(b"\n")
    result = compact(_params(recording, working_copy=str(tmp_path / "copy.jsonl")))
    assert result.success and result.error is None and result.failure is None and result.findings == []
    assert file_sha256(recording) == before  # the recording is never written
    copy = tmp_path / "copy.jsonl"
    assert copy.read_bytes().count(b"\n") == lines_before + 1  # exactly one appended line
    assert copy.read_bytes().startswith(recording.read_bytes())
    recorded = {e.id: e for e in load_transcript(recording).entries}
    window_ids = [w["entryId"] for w in result.compacted_window]
    for entry_id in _mutating_ids(recording):
        assert entry_id in window_ids
    for item in result.compacted_window[1:]:
        assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(recorded[item["entryId"]].message)
    assert result.compacted_token_count < result.original_token_count
    assert result.token_saved == result.original_token_count - result.compacted_token_count


def test_window_is_rebuilt_from_the_working_copy_like_pi(recording, tmp_path):
    result = compact(_params(recording, working_copy=str(tmp_path / "copy.jsonl")))
    transcript = load_transcript(tmp_path / "copy.jsonl")
    compaction = transcript.by_id[result.compaction_event_id]
    assert isinstance(compaction, CompactionEntry) and transcript.leaf_id == compaction.id
    rebuilt = build_window(transcript.leaf_path())
    assert [w.entry_id for w in rebuilt] == [w["entryId"] for w in result.compacted_window]
    assert [w.protected for w in rebuilt] == [w["protected"] for w in result.compacted_window]
    ours = compaction.details["replaylab"]
    assert ours["protectedEntryIds"] == result.protected_entry_ids and ours["mode"] == "safeguard"
    assert ours["tokensAfter"] == result.compacted_token_count and ours["replaySafe"] is False
    assert ours["mutatedEventIds"] == result.mutated_event_ids and compaction.from_hook is True
    assert compaction.first_kept_entry_id == result.first_kept_entry_id
    assert result.compacted_window[0]["role"] == "compactionSummary"
    assert result.compacted_window[0]["message"]["summary"] == result.summary_text


def test_protected_entries_sit_right_after_the_summary_in_order_with_pairs_intact(recording):
    result = compact(_params(recording))
    window = result.compacted_window
    protected = [w for w in window if w["protected"]]
    assert protected and window[1 : 1 + len(protected)] == protected
    order = {e.id: i for i, e in enumerate(load_transcript(recording).entries)}
    assert [order[w["entryId"]] for w in protected] == sorted(order[w["entryId"]] for w in protected)
    for i, item in enumerate(window):
        if item["role"] == "assistant":
            calls = [b["id"] for b in item["message"]["content"] if b["type"] == "toolCall"]
            following = [w["message"]["toolCallId"] for w in window[i + 1 : i + 1 + len(calls)]]
            assert sorted(following) == sorted(calls)


def test_parallel_calls_keep_the_whole_assistant_entry_and_all_results(recording):
    result = compact(_params(recording))
    items = {w["entryId"]: w for w in result.compacted_window}
    parallel = [
        w
        for w in result.compacted_window
        if w["protected"]
        and w["role"] == "assistant"
        and len([b for b in w["message"]["content"] if b["type"] == "toolCall"]) == 2
    ]
    assert parallel, "the refund + search assistant entry is protected whole"
    names = {b["name"] for b in parallel[0]["message"]["content"] if b["type"] == "toolCall"}
    assert names == {"refund", "search"}
    results = [
        w
        for w in items.values()
        if w["role"] == "toolResult" and w["message"]["toolName"] == "search" and w["protected"]
    ]
    assert results, "the read-only result of the same message is kept for pairing"


def test_thinking_blocks_are_byte_identical(recording):
    result = compact(_params(recording))
    recorded = {e.id: e for e in load_transcript(recording).entries}
    with_thinking = [
        w
        for w in result.compacted_window
        if w["role"] == "assistant" and any(b["type"] == "thinking" for b in w["message"]["content"])
    ]
    for item in with_thinking:
        original = [
            b for b in orjson.loads(dumped(recorded[item["entryId"]].message))["content"] if b["type"] == "thinking"
        ]
        assert [b for b in item["message"]["content"] if b["type"] == "thinking"] == original


def test_auto_mode_drops_mutations_and_replay_check_reports_it(recording):
    result = compact(_params(recording, compaction_mode="auto"))
    assert result.success and result.protected_entry_ids == []
    codes = {f.code for f in result.findings}
    assert codes == {Code.MUTATION_DROPPED}
    dropped = {f.where.entry_id for f in result.findings}
    assert dropped and dropped <= _mutating_ids(recording)


def test_aggressive_mode_keeps_a_small_tail_and_no_tool_results_in_the_summary(tmp_path):
    recording = helpdesk_session(20).write(tmp_path / "big.jsonl")
    aggressive = compact(_params(recording, compaction_mode="aggressive", keep_recent_tokens=None))
    assert aggressive.success and aggressive.cut_point.keep_recent_tokens == 2_000
    tail = list(aggressive.compacted_window[1:])
    assert not any(w["protected"] for w in tail)
    assert sum(w["tokens"] for w in tail) < 2_000 + max(w["tokens"] for w in tail)
    assert "## Tool outcomes" not in aggressive.summary_text and "refund ok" not in aggressive.summary_text
    assert Code.MUTATION_DROPPED in {f.code for f in aggressive.findings}


def test_manual_mode_uses_the_own_id_boundary_and_keeps_protected_entries(recording):
    result = compact(_params(recording, compaction_mode="manual"))
    assert result.success and result.first_kept_entry_id == result.compaction_event_id
    assert all(w["protected"] for w in result.compacted_window[1:])  # summary + protected only
    assert {w["entryId"] for w in result.compacted_window[1:]} >= _mutating_ids(recording)
    assert result.findings == []


def test_double_compaction_is_refused_unless_forced(recording, tmp_path):
    first = compact(_params(recording, working_copy=str(tmp_path / "one.jsonl")))
    again = compact(_params(tmp_path / "one.jsonl", working_copy=str(tmp_path / "two.jsonl")))
    assert not again.success and "double compaction" in again.error and not (tmp_path / "two.jsonl").exists()
    assert again.failure == "already_compacted"
    forced = compact(_params(tmp_path / "one.jsonl", working_copy=str(tmp_path / "two.jsonl"), force_compact=True))
    # forcing passes the guard; with nothing new since, the summary of a summary saves nothing and
    # is refused too (a second pass would only re-summarize the summary)
    assert first.success and not forced.success and "double compaction" not in forced.error
    assert "nothing to gain" in forced.error and not (tmp_path / "two.jsonl").exists()
    assert forced.failure == "nothing_to_gain"


def test_protected_entries_over_budget_fail_and_append_nothing(recording, tmp_path):
    result = compact(
        _params(recording, context_tokens=1_600, reserve_tokens_floor=1_000, working_copy=str(tmp_path / "copy.jsonl"))
    )
    assert not result.success and result.error.startswith("compaction_failure:")
    assert "protected entries" in result.error and "allowMutatingEventTruncate" in result.error
    assert not (tmp_path / "copy.jsonl").exists() and result.compaction_event_id is None
    assert result.failure == "protected_too_large"


def test_a_compaction_that_does_not_happen_names_why(recording, tmp_path):
    empty = compact(_params(Session().write(tmp_path / "empty.jsonl")))
    assert (empty.failure, empty.error) == ("nothing_to_compact", "nothing to compact: the session has no entries")
    no_room = compact(_params(recording, reserve_tokens_floor=SMALL["context_tokens"]))
    assert no_room.failure == "no_budget" and "leaves no budget" in no_room.error
    assert compact(_params(recording, working_copy=str(tmp_path / "one.jsonl"))).success
    # pi 0.58.3 starts a chained compaction after the previous one: nothing new is nothing to summarize
    after_boundary = compact(_params(tmp_path / "one.jsonl", force_compact=True, boundary_rule="0.58.3"))
    assert after_boundary.failure == "nothing_to_compact" and "previous compaction's boundary" in after_boundary.error
    for failed in (empty, no_room, after_boundary):
        assert not failed.success and failed.compacted_token_count == failed.original_token_count
        assert failed.model_dump(by_alias=True)["failure"] == failed.failure  # an extra of the seed JSON


def test_allow_mutating_event_truncate_shrinks_payloads_keeping_id_and_hash(tmp_path):
    s = Session()
    for i in range(3):
        s.user(f"write report {i}")
        s.tool_turn("write", {"path": f"/out/r{i}.txt", "content": "short"}, "written: " + "L" * 6_000)
        s.assistant(f"report {i} written")
    s.user("thanks")
    s.assistant("bye")
    recording = s.write(tmp_path / "rec.jsonl")
    tight = dict(context_tokens=4_000, reserve_tokens_floor=1_000, keep_recent_tokens=50)
    refused = compact(_params(recording, **tight))
    assert not refused.success and "compaction_failure" in refused.error
    result = compact(_params(recording, allow_mutating_event_truncate=True, **tight))
    assert result.success and result.shrunk_entries and result.findings == []
    recorded = {e.id: e for e in load_transcript(recording).entries}
    window = {w["entryId"]: w for w in result.compacted_window}
    for shrunk in result.shrunk_entries:
        assert shrunk.entry_id in window and shrunk.kept_chars < shrunk.original_chars
        assert shrunk.sha256 == message_sha256(recorded[shrunk.entry_id].message)
        assert window[shrunk.entry_id]["role"] == "toolResult"
    for item in window.values():  # the calls (the mutation itself) never shrink
        if item["role"] == "assistant" and item["protected"]:
            assert dumped(recorded[item["entryId"]].message) == orjson.dumps(
                item["message"], option=orjson.OPT_SORT_KEYS
            )


def test_pending_approval_in_the_summarized_span_is_protected(tmp_path):
    s = Session()
    s.user("delete the branch")
    pending, _ = s.assistant("Asking for approval first.", [("git_delete_branch", {"name": "old"})], stop="toolUse")
    s.user("actually, never mind " + "n" * 3_000)
    s.assistant("ok " + "k" * 3_000)
    s.user("what now?")
    s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, tool_classes={"git_delete_branch": "read"}, keep_recent_tokens=10))
    assert result.success and pending in result.protected_entry_ids


def test_chained_compaction_keeps_the_first_ones_protected_entries(recording, tmp_path):
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    first = compact(_params(writer.path), writer=writer)
    assert first.success
    s_leaf = first.compaction_event_id
    for i in range(4):
        entry = {
            "type": "message",
            "id": f"n{i}a",
            "parentId": s_leaf,
            "timestamp": "2026-04-10T11:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": f"next question {i} " + "q" * 600}]},
        }
        writer.append(entry)
        answer = {
            "type": "message",
            "id": f"n{i}b",
            "parentId": f"n{i}a",
            "timestamp": "2026-04-10T11:00:01.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i} " + "a" * 600}],
                "stopReason": "stop",
            },
        }
        writer.append(answer)
        s_leaf = f"n{i}b"
    second = compact(_params(writer.path), writer=writer)
    assert second.success and second.findings == []
    assert set(first.protected_entry_ids) <= set(second.protected_entry_ids)
    window_ids = [w["entryId"] for w in second.compacted_window]
    assert set(first.protected_entry_ids) <= set(window_ids)


def test_compact_at_an_earlier_leaf(recording, tmp_path):
    transcript = load_transcript(recording)
    leaf = transcript.entries[len(transcript.entries) // 2].id
    result = compact(
        _params(recording, leaf_id=leaf, keep_recent_tokens=100, working_copy=str(tmp_path / "copy.jsonl"))
    )
    assert result.success
    copy = load_transcript(tmp_path / "copy.jsonl")
    assert copy.by_id[result.compaction_event_id].parent_id == leaf
    later = {e.id for e in transcript.entries[len(transcript.entries) // 2 + 1 :]}
    assert later.isdisjoint(w["entryId"] for w in result.compacted_window)


def test_ledger_flags_on_read_only_session(tmp_path):
    s = Session()
    for i in range(6):
        s.user(f"look up {i} " + "q" * 500)
        s.tool_turn("get_order", {"order_id": f"#W{i}"}, "order " + "o" * 800)
        s.assistant("found " + "f" * 300)
    result = compact(_params(s.write(tmp_path / "rec.jsonl")))
    assert result.success and result.replay_safe is True and result.mutated_event_ids == []
    assert result.protected_entry_ids == [] and result.findings == []


def test_mutated_event_ids_follow_the_ledger_in_order(recording):
    result = compact(_params(recording))
    calls = [
        b.id
        for e in load_transcript(recording).entries
        for b in getattr(getattr(e, "message", None), "content", [])
        if getattr(b, "type", "") == "toolCall" and TOOL_CLASSES.get(b.name) == "write"
    ]
    assert result.mutated_event_ids == calls and result.replay_safe is False


def test_tail_is_refit_when_summary_protected_and_tail_exceed_the_budget(tmp_path):
    recording = helpdesk_session(20).write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, context_tokens=3_000, reserve_tokens_floor=300, keep_recent_tokens=20_000))
    assert result.original_token_count > result.budget_tokens == 2_700
    assert result.success and result.fits_budget and result.compacted_token_count <= result.budget_tokens
    # 20,000 is clamped to the budget (2,700), then cut down to what is left after summary + protected
    assert result.cut_point.keep_recent_tokens < 2_700


def test_json_is_the_seed_contract_in_camel_case(recording):
    data = compact(_params(recording)).model_dump(by_alias=True)
    for key in (
        "success",
        "originalTokenCount",
        "compactedTokenCount",
        "tokenSaved",
        "replaySafe",
        "mutatedEventIds",
        "compactedWindow",
        "compactionEventId",
        "summaryText",
        "error",
        "protectedEntryIds",
        "firstKeptEntryId",
        "findings",
        "qualityGuard",
        "workingCopy",
    ):
        assert key in data
    params = CompactParams.model_validate(
        {
            "sessionFile": "x.jsonl",
            "compactionMode": "auto",
            "contextTokens": 9,
            "reserveTokensFloor": 1,
            "allowMutatingEventTruncate": True,
        }
    )
    assert params.compaction_mode == "auto" and params.allow_mutating_event_truncate
    assert set(params.model_dump(by_alias=True)) >= {
        "sessionId",
        "sessionFile",
        "compactionMode",
        "contextTokens",
        "reserveTokensFloor",
        "modelProvider",
        "replayCheck",
        "forceCompact",
        "allowMutatingEventTruncate",
    }


def test_unknown_leaf_and_missing_file_are_input_errors(recording, tmp_path):
    with pytest.raises(InputError) as info:
        compact(_params(recording, leaf_id="nope"))
    assert info.value.diagnostics[0].field == "leafId"
    with pytest.raises(InputError):
        compact(_params(tmp_path / "missing.jsonl"))


def test_writer_must_own_the_session_file(recording, tmp_path):
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    with pytest.raises(ValueError):
        compact(_params(recording), writer=writer)


def test_importing_the_engine_does_not_import_litellm():
    code = "import replaylab.compaction, sys; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_sub_agent_events_resolve_from_child_sessions_dir(tmp_path):
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger

    child = Session("child-1")
    child.user("write the file")
    child.tool_turn("write", {"path": "/tmp/out.txt", "content": "x"}, "written")
    child.write(tmp_path / "child.jsonl")
    s = helpdesk_session(6)
    s.user("delegate")
    entry, ids = s.assistant(None, [("Task", {"prompt": "write the file"})])
    s.result(ids[0], "Task", "done")
    s.lines[-1]["message"]["details"] = {"replaylab": {"childSession": "child.jsonl"}}
    s.assistant("delegated")
    recording = s.write(tmp_path / "rec.jsonl")
    classifier = ToolClassifier(declared={**TOOL_CLASSES, "Task": "subagent"})
    expected = build_ledger(load_transcript(recording), classifier)
    assert any(e.startswith("child-1:") for e in expected.mutated_event_ids)
    work = tmp_path / "work"
    params = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800)
    blind_writer = TranscriptWriter.working_copy(recording, work / "a.jsonl")
    blind = compact(
        CompactParams(session_file=str(blind_writer.path), **params), classifier=classifier, writer=blind_writer
    )
    assert blind.mutated_event_ids != expected.mutated_event_ids  # the child is unknown there: unknown is unsafe
    writer = TranscriptWriter.working_copy(recording, work / "b.jsonl")
    seen = compact(
        CompactParams(session_file=str(writer.path), child_sessions_dir=str(tmp_path), **params),
        classifier=classifier,
        writer=writer,
    )
    assert seen.success and seen.mutated_event_ids == expected.mutated_event_ids and seen.findings == []


# ---------------------------------------------------------------- token counts and "nothing to gain"

REPO = Path(__file__).resolve().parents[1]
#: the bench's compaction (bench/cases/pipeline.py SUITE), at its point (`bench_compaction_points`)
BENCH = dict(compaction_mode="safeguard", context_tokens=12000, reserve_tokens_floor=2000, keep_recent_tokens=1500)
DECIDED_EARLY = "decided before summarizing"


@pytest.mark.parametrize("mode", ["safeguard", "aggressive", "manual"])
def test_token_counts_are_the_estimates_of_the_windows(mode, tmp_path):
    """`originalTokenCount` is the estimate of the window before, each compacted item's `tokens`
    its message's estimate, and `compactedTokenCount` their sum, as the written entry says."""
    from replaylab.replay.toolpack import load_tool_pack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.model import MESSAGE_ADAPTER
    from replaylab.transcript.tokens import estimate_tokens

    classifier = ToolClassifier.from_tool_pack(load_tool_pack("plugins.helpdesk"))
    written = 0
    for index, path in enumerate(sorted((REPO / "recordings" / "helpdesk").glob("*.jsonl"))):
        params = CompactParams(
            session_file=str(path),
            force_compact=True,
            compaction_mode=mode,
            working_copy=str(tmp_path / str(index) / path.name),
            context_tokens=3200,
            reserve_tokens_floor=800,
            keep_recent_tokens=500,
            max_history_share=0.5,
        )
        result = compact(params, classifier=classifier)
        before = build_window(load_transcript(path).leaf_path())
        assert result.original_token_count == sum(estimate_tokens(w.message) for w in before)
        if not result.success:
            continue
        items = result.compacted_window
        assert [i["tokens"] for i in items] == [
            estimate_tokens(MESSAGE_ADAPTER.validate_python(i["message"])) for i in items
        ]
        entry = orjson.loads(Path(result.working_copy).read_bytes().splitlines()[-1])
        assert (
            result.compacted_token_count
            == sum(i["tokens"] for i in items)
            == entry["details"]["replaylab"]["tokensAfter"]
        )
        written += 1
    assert written > 0


def test_nothing_to_gain_is_told_before_summarizing_when_the_cut_keeps_almost_everything(
    bench_compaction_points, tmp_path
):
    """At the bench's point many sessions keep almost everything: compact() fails with "nothing
    to gain" before asking for a summary — no attempt, no summary text, nothing written — naming
    a lower bound that is indeed at least the current window's tokens."""
    import re

    fired = 0
    for index, (path, leaf) in enumerate(bench_compaction_points):
        copy = tmp_path / str(index) / path.name
        result = compact(CompactParams(session_file=str(path), leaf_id=leaf, working_copy=str(copy), **BENCH))
        if DECIDED_EARLY not in (result.error or ""):
            continue
        fired += 1
        assert not result.success and "nothing to gain" in result.error
        assert result.summary_attempts == 0 and not result.summary_text
        assert not copy.exists()
        at_least = int(re.search(r"at least (\d+) tokens", result.error).group(1))
        assert at_least >= result.original_token_count
    assert fired > 0
