"""compact(): one rule per test, on synthetic sessions read through the real loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from builders.transcripts import TOOL_CLASSES, Session, dumped, helpdesk_session
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.cutpoint import compute_cut_point, is_cut_point
from replaylab.compaction.invariants import as_window
from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.oracles.compare import context_mismatches
from replaylab.transcript import TranscriptWriter, build_window, file_sha256, load_transcript
from replaylab.transcript.model import CompactionEntry
from replaylab.transcript.tokens import estimate_tokens
from repo_paths import REPO_ROOT

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


def _pis_context_is_the_compacted_window(pi, result):
    """What the real pi rebuilds from the working copy: the result's `compactedWindow`, position by
    position (entry, role, message, token estimate), with every protected entry in it."""
    view = pi.view(result.working_copy)
    assert context_mismatches(as_window(result.compacted_window), view) == []
    assert [w["tokens"] for w in result.compacted_window] == [m.tokens for m in view.context]
    assert set(result.protected_entry_ids) <= {m.entry_id for m in view.context}
    return view


def _read_only_session(turns: int) -> Session:
    s = Session()
    for i in range(turns):
        s.user(f"look up {i} " + "q" * 500)
        s.tool_turn("get_order", {"order_id": f"#W{i}"}, "order " + "o" * 800)
        s.assistant("found " + "f" * 300)
    return s


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


def test_protected_entries_are_kept_by_pis_own_rule_in_order_with_pairs_intact(recording):
    """pi's cut would summarize mutating events; safeguard moves it back to the last valid cut point
    at or before the first of them, so the window — summary, then every entry from firstKeptEntryId
    on, as pi rebuilds it — holds each protected entry verbatim and the summarized span holds none."""
    result = compact(_params(recording))
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    index = {e.id: i for i, e in enumerate(path)}
    window = result.compacted_window
    protected = [w for w in window if w["protected"]]
    assert protected and [w["entryId"] for w in protected] == result.protected_entry_ids
    assert [index[i] for i in result.protected_entry_ids] == sorted(index[i] for i in result.protected_entry_ids)
    first_kept, first_protected = index[result.first_kept_entry_id], index[result.protected_entry_ids[0]]
    assert [w["entryId"] for w in window[1:]] == [e.id for e in path[first_kept:]]
    assert is_cut_point(path[first_kept]) and not any(map(is_cut_point, path[first_kept + 1 : first_protected + 1]))
    assert _mutating_ids(recording).isdisjoint(e.id for e in path[:first_kept])  # nothing unsafe summarized
    pis_cut = compute_cut_point(path, SMALL["keep_recent_tokens"]).first_kept_index
    assert first_kept < pis_cut and all(index[i] < pis_cut for i in result.protected_entry_ids)
    for item in protected:
        assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(
            path[index[item["entryId"]]].message
        )
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


def test_manual_mode_keeps_everything_from_the_first_protected_entry(recording):
    """Manual summarizes up to the leaf, so every mutating event of the session is protected and the
    boundary moves back from its own id to the first of them: all of them stay, in pi's own tail."""
    result = compact(_params(recording, compaction_mode="manual"))
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    first_protected = next(i for i, e in enumerate(path) if e.id in _mutating_ids(recording))
    assert result.first_kept_entry_id == path[first_protected].id != result.compaction_event_id
    assert set(result.protected_entry_ids) >= _mutating_ids(recording)
    assert [w["entryId"] for w in result.compacted_window[1:]] == [e.id for e in path[first_protected:]]


def test_manual_mode_without_protection_keeps_its_boundary_at_its_own_id(tmp_path):
    """With nothing to protect, manual keeps OpenClaw's boundary: the summary alone (the tail after
    pi's cut is lost, as upstream)."""
    result = compact(_params(_read_only_session(6).write(tmp_path / "rec.jsonl"), compaction_mode="manual"))
    assert result.success and result.protected_entry_ids == [] and result.findings == []
    assert result.first_kept_entry_id == result.compaction_event_id
    assert [w["role"] for w in result.compacted_window] == ["compactionSummary"]


def test_every_mode_is_pis_context_with_every_protected_entry_in_it(recording, tmp_path, pi):
    """The real pi rebuilds each working copy into the very `compactedWindow`; in safeguard and manual
    it holds every protected entry, and pi's own cut (prepareCompaction on the recording) is later:
    pi alone would have summarized them."""
    path = load_transcript(recording).leaf_path()
    index = {e.id: i for i, e in enumerate(path)}
    pis_cut = pi.view(recording, keep_recent_tokens=SMALL["keep_recent_tokens"]).cut
    assert pis_cut is not None
    for mode in ("safeguard", "auto", "aggressive", "manual"):
        result = compact(_params(recording, compaction_mode=mode, working_copy=str(tmp_path / f"{mode}.jsonl")))
        assert result.success, (mode, result.error)
        view = _pis_context_is_the_compacted_window(pi, result)
        if mode in ("safeguard", "manual"):
            assert result.protected_entry_ids and {m.entry_id for m in view.context} >= _mutating_ids(recording)
            assert set(result.protected_entry_ids) & set(pis_cut.summarize)  # pi's cut summarizes them
            assert index[result.first_kept_entry_id] < index[pis_cut.first_kept_entry_id]
        elif mode == "auto":
            assert result.first_kept_entry_id == pis_cut.first_kept_entry_id  # auto is pi's compaction
            assert not _mutating_ids(recording) <= {m.entry_id for m in view.context}


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
    """Safeguard keeps everything from the first mutating event pi's cut would summarize; when that
    alone exceeds the budget it fails, naming the entry and the numbers, and writes nothing."""
    result = compact(
        _params(recording, context_tokens=1_600, reserve_tokens_floor=1_000, working_copy=str(tmp_path / "copy.jsonl"))
    )
    assert not result.success and result.failure == "protected_too_large"
    path = load_transcript(recording).leaf_path()
    first = next(i for i, e in enumerate(path) if e.id in _mutating_ids(recording))
    needed = sum(estimate_tokens(e.message) for e in path[first:])
    assert needed > result.budget_tokens == 600
    assert result.error.startswith(
        "compaction_failure: safeguard keeps everything from the first mutating event it would otherwise "
        f"summarize (entry {path[first].id}; "
    )
    assert (
        f"the {len(path) - first} entries from there on need {needed} tokens, more than the budget of 600 tokens "
        "(contextTokens 1600 − reserve 1000)" in result.error
    )
    assert "allowMutatingEventTruncate" not in result.error  # nothing can shrink them any more
    assert not (tmp_path / "copy.jsonl").exists() and result.compaction_event_id is None
    assert result.compacted_token_count == result.original_token_count and result.compacted_window == []


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


def _untimed(window):
    """A compacted window without its summary's timestamp (the time the compaction was written)."""
    return [{**w, "message": {k: v for k, v in w["message"].items() if k != "timestamp"}} for w in window[:1]] + window[
        1:
    ]


def test_allow_mutating_event_truncate_changes_nothing_for_safeguard(tmp_path):
    """pi shows a kept entry as it is stored, so safeguard has no shortened copy to offer: the flag
    (kept in the seed contract) neither rescues an over-budget compaction nor shortens a payload."""
    s = Session()
    s.user("tell me about reports " + "c" * 3_000)
    s.assistant("reports are " + "r" * 3_000)
    for i in range(3):
        s.user(f"write report {i}")
        s.tool_turn("write", {"path": f"/out/r{i}.txt", "content": "short"}, "written: " + "L" * 6_000)
        s.assistant(f"report {i} written")
    s.user("thanks")
    s.assistant("bye")
    recording = s.write(tmp_path / "rec.jsonl")
    recorded = {e.id: e for e in load_transcript(recording).entries}
    for context_tokens, fits in ((4_000, False), (9_000, True)):
        off, on = (
            compact(
                _params(
                    recording,
                    context_tokens=context_tokens,
                    keep_recent_tokens=50,
                    allow_mutating_event_truncate=allow,
                    working_copy=str(tmp_path / f"{context_tokens}-{allow}.jsonl"),
                )
            )
            for allow in (False, True)
        )
        assert off.success is on.success is fits
        assert (off.failure, off.error) == (on.failure, on.error)
        assert off.protected_entry_ids == on.protected_entry_ids
        assert _untimed(off.compacted_window) == _untimed(on.compacted_window) and off.summary_text == on.summary_text
        if not fits:
            assert on.failure == "protected_too_large" and not Path(tmp_path / f"{context_tokens}-True.jsonl").exists()
            continue
        entry = orjson.loads(Path(on.working_copy).read_bytes().splitlines()[-1])
        assert "shrunkEntries" not in entry["details"]["replaylab"]
        kept = {w["entryId"]: w for w in on.compacted_window}
        for entry_id in _mutating_ids(recording):  # every payload whole, results of 6,000 chars included
            assert orjson.dumps(kept[entry_id]["message"], option=orjson.OPT_SORT_KEYS) == dumped(
                recorded[entry_id].message
            )


def test_pending_approval_in_the_summarized_span_is_protected(tmp_path):
    s = Session()
    s.user("tell me about branches " + "n" * 3_000)
    s.assistant("branches are " + "k" * 3_000)
    s.user("delete the branch")
    pending, _ = s.assistant("Asking for approval first.", [("git_delete_branch", {"name": "old"})], stop="toolUse")
    s.user("what now?")
    later, _ = s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, tool_classes={"git_delete_branch": "read"}, keep_recent_tokens=1))
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    assert path[compute_cut_point(path, 1).first_kept_index].id == later  # pi's cut would summarize it
    assert result.protected_entry_ids == [pending] and result.first_kept_entry_id == pending
    window = {w["entryId"]: w for w in result.compacted_window}
    assert window[pending]["protected"] and window[pending]["message"]["stopReason"] == "toolUse"
    assert "n" * 3_000 not in "".join(str(w["message"]) for w in result.compacted_window)  # the chat is summarized


def _append_questions(writer, leaf, count, size):
    """`count` read-only question / answer pairs after `leaf` (what the agent did after a compaction)."""
    for i in range(count):
        entry = {
            "type": "message",
            "id": f"n{i}a",
            "parentId": leaf,
            "timestamp": "2026-04-10T11:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": f"next question {i} " + "q" * size}]},
        }
        writer.append(entry)
        answer = {
            "type": "message",
            "id": f"n{i}b",
            "parentId": f"n{i}a",
            "timestamp": "2026-04-10T11:00:01.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i} " + "a" * size}],
                "stopReason": "stop",
            },
        }
        writer.append(answer)
        leaf = f"n{i}b"
    return leaf


def test_a_second_compaction_cannot_summarize_the_first_ones_protected_entries(recording, tmp_path):
    """The first compaction's cut sits right before its first protected entry, which is where a
    chained compaction's boundary starts (pi 0.66.1): the second one can only re-summarize the
    summary, finds nothing to gain and appends nothing — the protected entries stay in the window."""
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    first = compact(_params(writer.path), writer=writer)
    assert first.success and first.protected_entry_ids
    leaf = _append_questions(writer, first.compaction_event_id, 4, 600)
    lines = writer.path.read_bytes().count(b"\n")
    second = compact(_params(writer.path), writer=writer)
    assert not second.success and second.failure == "nothing_to_gain" and "nothing to gain" in second.error
    assert writer.path.read_bytes().count(b"\n") == lines
    window = build_window(load_transcript(writer.path).path_to(leaf))
    assert set(first.protected_entry_ids) <= {w.entry_id for w in window}


def _chained(tmp_path, rule):
    """A write left in the first compaction's kept tail, then more turns and a second compaction:
    (the write's call and result entry ids, the first result, the second result)."""
    s = _read_only_session(6)
    s.user("cancel #W1")
    write = s.tool_turn("cancel_order", {"order_id": "#W1"}, "cancelled")
    s.assistant("cancelled")
    for i in range(3):
        s.user(f"question {i} " + "q" * 500)
        s.assistant("answer " + "a" * 500)
    writer = TranscriptWriter.working_copy(s.write(tmp_path / "rec.jsonl"), tmp_path / "copy.jsonl")
    first = compact(_params(writer.path, boundary_rule=rule), writer=writer)
    _append_questions(writer, first.compaction_event_id, 4, 2_000)
    return write, first, compact(_params(writer.path, boundary_rule=rule), writer=writer)


@pytest.mark.parametrize("rule", ["0.66.1", "0.58.3"])
def test_chained_compaction_keeps_every_mutating_entry_the_first_one_kept(tmp_path, rule):
    """The second compaction protects a write the first one kept in its tail, whichever boundary
    rule it cuts by: under pi 0.58.3 (boundary after the previous compaction) its cut moves back
    into the previous kept tail, since pi keeps nothing before a compaction's firstKeptEntryId."""
    write, first, second = _chained(tmp_path, rule)
    assert (
        first.success
        and first.protected_entry_ids == []
        and set(write) <= {w["entryId"] for w in first.compacted_window}
    )
    assert second.success and second.findings == [], second.error
    assert second.protected_entry_ids == list(write) and second.first_kept_entry_id == write[0]
    window = {w["entryId"]: w for w in second.compacted_window}
    recorded = {e.id: e for e in load_transcript(second.working_copy).entries}
    for entry_id in write:
        assert orjson.dumps(window[entry_id]["message"], option=orjson.OPT_SORT_KEYS) == dumped(
            recorded[entry_id].message
        )


@pytest.mark.parametrize("rule", ["0.66.1", "0.58.3"])
def test_chained_compaction_is_pis_context(tmp_path, rule, pi):
    write, _, second = _chained(tmp_path, rule)
    assert set(write) <= {m.entry_id for m in _pis_context_is_the_compacted_window(pi, second).context}


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


TIGHT = dict(context_tokens=3_000, reserve_tokens_floor=300, keep_recent_tokens=20_000)


def test_tail_is_refit_when_summary_and_tail_exceed_the_budget(tmp_path):
    recording = _read_only_session(20).write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, **TIGHT))
    assert result.original_token_count > result.budget_tokens == 2_700
    assert result.success and result.fits_budget and result.compacted_token_count <= result.budget_tokens
    # 20,000 is clamped to the budget (2,700), then cut down to what is left after the summary
    assert result.cut_point.keep_recent_tokens < 2_700


def test_no_tail_refit_once_protection_moved_the_cut(tmp_path):
    """Once the cut sits right before the first protected entry, a smaller tail cannot make the window
    smaller: the compaction keeps everything from that entry on and says the window is over budget."""
    recording = helpdesk_session(20).write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, context_tokens=5_150, reserve_tokens_floor=300, keep_recent_tokens=20_000))
    path = load_transcript(recording).leaf_path()
    first = next(e.id for e in path if e.id in _mutating_ids(recording))
    assert result.success and result.findings == [] and result.protected_entry_ids[0] == first
    assert result.first_kept_entry_id == first and result.budget_tokens == 4_850
    assert not result.fits_budget and result.compacted_token_count > result.budget_tokens
    assert any("still over the budget (4850)" in note for note in result.notes)


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

REPO = REPO_ROOT
#: the bench's compaction (bench/cases/pipeline.py SUITE), at its point (`bench_compaction_points`)
BENCH = dict(compaction_mode="safeguard", context_tokens=12000, reserve_tokens_floor=2000, keep_recent_tokens=1500)
DECIDED_EARLY = "decided before summarizing"


@pytest.mark.parametrize("mode", ["safeguard", "aggressive", "manual"])
def test_token_counts_are_the_estimates_of_the_windows(mode, tmp_path):
    """`originalTokenCount` is the estimate of the window before, each compacted item's `tokens`
    its message's estimate, and `compactedTokenCount` their sum, as the written entry says."""
    from replaylab.replay.tools.pack import load_tool_pack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.model import MESSAGE_ADAPTER
    from replaylab.transcript.tokens import estimate_tokens

    classifier = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
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
