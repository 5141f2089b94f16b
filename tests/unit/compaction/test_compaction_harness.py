"""compact(): one rule per test, on synthetic sessions read through the real loader."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from builders.transcripts import TOOL_CLASSES, Session, dumped, helpdesk_session
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.cutpoint import compute_cut_point
from replaylab.compaction.invariants import as_window, replay_check
from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.oracles.compare import context_mismatches
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import TranscriptWriter, build_window, file_sha256, load_transcript
from replaylab.transcript.model import CompactionEntry, message_text
from replaylab.transcript.restated import message_sha256, restated_sources
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


def _source(item) -> str:
    """The recorded entry a `compactedWindow` item is (a restated entry names it)."""
    return item.get("restates") or item["entryId"]


def _shown_sources(working_copy) -> dict[str, str]:
    """entry id → the recorded entry it is, for every entry of the working copy's leaf path."""
    path = load_transcript(working_copy).leaf_path()
    sources = restated_sources(path)
    return {e.id: sources.get(e.id, e.id) for e in path}


def _pis_context_is_the_compacted_window(pi, result):
    """What the real pi rebuilds from the working copy: the result's `compactedWindow`, position by
    position (entry, role, message, token estimate), with every protected entry in it (restated
    entries by the entry they restate)."""
    view = pi.view(result.working_copy)
    assert context_mismatches(as_window(result.compacted_window), view) == []
    assert [w["tokens"] for w in result.compacted_window] == [m.tokens for m in view.context]
    sources = _shown_sources(result.working_copy)
    assert set(result.protected_entry_ids) <= {sources.get(m.entry_id, m.entry_id) for m in view.context}
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
    assert copy.read_bytes().startswith(recording.read_bytes())  # appended to, never rewritten
    # one compaction line, then one line per entry it restates (every message of the window after it)
    assert copy.read_bytes().count(b"\n") == lines_before + len(result.compacted_window)
    recorded = {e.id: e for e in load_transcript(recording).entries}
    window_sources = [_source(w) for w in result.compacted_window]
    for entry_id in _mutating_ids(recording):
        assert entry_id in window_sources
    for item in result.compacted_window[1:]:
        assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(recorded[_source(item)].message)
    assert result.compacted_token_count < result.original_token_count
    assert result.token_saved == result.original_token_count - result.compacted_token_count


def test_window_is_rebuilt_from_the_working_copy_like_pi(recording, tmp_path):
    result = compact(_params(recording, working_copy=str(tmp_path / "copy.jsonl")))
    transcript = load_transcript(tmp_path / "copy.jsonl")
    compaction = transcript.by_id[result.compaction_event_id]
    # it keeps nothing itself: what pi shows after its summary is what it restated after it
    assert isinstance(compaction, CompactionEntry) and compaction.first_kept_entry_id == compaction.id
    assert transcript.leaf_id == result.leaf_id == result.compacted_window[-1]["entryId"] != compaction.id
    rebuilt = build_window(transcript.leaf_path())
    assert [w.entry_id for w in rebuilt] == [w["entryId"] for w in result.compacted_window]
    assert [w.restates for w in rebuilt] == [w.get("restates") for w in result.compacted_window]
    assert [w.protected for w in rebuilt] == [w["protected"] for w in result.compacted_window]
    for item in result.compacted_window[1:]:
        entry = transcript.by_id[item["entryId"]]
        assert entry.restates == item["restates"] and entry.restates in load_transcript(recording).by_id
    ours = compaction.details["replaylab"]
    assert ours["protectedEntryIds"] == result.protected_entry_ids and ours["mode"] == "safeguard"
    assert ours["tokensAfter"] == result.compacted_token_count and ours["replaySafe"] is False
    assert ours["mutatedEventIds"] == result.mutated_event_ids and compaction.from_hook is True
    assert ours["restated"] == {
        "protected": len(result.protected_entry_ids),
        "tail": len(result.compacted_window) - 1 - len(result.protected_entry_ids),
    }
    assert compaction.first_kept_entry_id == result.first_kept_entry_id
    assert result.compacted_window[0]["role"] == "compactionSummary"
    assert result.compacted_window[0]["message"]["summary"] == result.summary_text


def test_protected_entries_are_restated_in_order_with_pairs_intact(recording):
    """The cut stays where pi cuts, and everything before it is summarized; the protected entries
    of that span (mutating calls with all their results) are restated right after the summary,
    byte for byte and in path order, then the kept tail — so the window holds every one of them
    verbatim, paired, in chronological order, and nothing else from the summarized span."""
    result = compact(_params(recording))
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    index = {e.id: i for i, e in enumerate(path)}
    pis_cut = compute_cut_point(path, SMALL["keep_recent_tokens"]).first_kept_index
    window = result.compacted_window
    protected = [w for w in window if w["protected"]]
    assert protected and [_source(w) for w in protected] == result.protected_entry_ids
    assert all(index[i] < pis_cut for i in result.protected_entry_ids)  # from the summarized span
    assert _mutating_ids(recording) & {e.id for e in path[:pis_cut]} <= set(result.protected_entry_ids)
    tail = [e.id for e in path[pis_cut:]]
    assert [_source(w) for w in window[1:]] == result.protected_entry_ids + tail
    assert [index[_source(w)] for w in window[1:]] == sorted(index[_source(w)] for w in window[1:])
    for item in window[1:]:
        assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(path[index[_source(item)]].message)
    for i, item in enumerate(window):
        if item["role"] == "assistant":
            calls = [b["id"] for b in item["message"]["content"] if b["type"] == "toolCall"]
            following = [w["message"]["toolCallId"] for w in window[i + 1 : i + 1 + len(calls)]]
            assert sorted(following) == sorted(calls)


def test_parallel_calls_keep_the_whole_assistant_entry_and_all_results(recording):
    result = compact(_params(recording))
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
        for w in result.compacted_window
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
    assert with_thinking
    for item in with_thinking:
        original = [
            b for b in orjson.loads(dumped(recorded[_source(item)].message))["content"] if b["type"] == "thinking"
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


def test_manual_mode_restates_every_protected_entry_after_its_boundary(recording):
    """Manual summarizes up to the leaf and keeps nothing itself (OpenClaw's boundary); every
    mutating event of the session is protected, so all of them are restated after it, in order,
    and nothing else is."""
    result = compact(_params(recording, compaction_mode="manual"))
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    assert result.first_kept_entry_id == result.compaction_event_id
    assert set(result.protected_entry_ids) >= _mutating_ids(recording)
    protected = set(result.protected_entry_ids)
    assert [_source(w) for w in result.compacted_window[1:]] == [e.id for e in path if e.id in protected]
    assert all(w["protected"] for w in result.compacted_window[1:])


def test_manual_mode_without_protection_keeps_its_boundary_at_its_own_id(tmp_path):
    """With nothing to protect, manual keeps OpenClaw's boundary: the summary alone (the tail after
    pi's cut is lost, as upstream)."""
    result = compact(_params(_read_only_session(6).write(tmp_path / "rec.jsonl"), compaction_mode="manual"))
    assert result.success and result.protected_entry_ids == [] and result.findings == []
    assert result.first_kept_entry_id == result.compaction_event_id
    assert [w["role"] for w in result.compacted_window] == ["compactionSummary"]


def test_every_mode_is_pis_context_with_every_protected_entry_in_it(recording, tmp_path, pi):
    """The real pi rebuilds each working copy into the very `compactedWindow`; in safeguard and manual
    it holds every protected entry (restated), although pi's own cut (prepareCompaction on the
    recording) summarizes them — and safeguard cuts where pi cuts."""
    pis_cut = pi.view(recording, keep_recent_tokens=SMALL["keep_recent_tokens"]).cut
    assert pis_cut is not None
    for mode in ("safeguard", "auto", "aggressive", "manual"):
        result = compact(_params(recording, compaction_mode=mode, working_copy=str(tmp_path / f"{mode}.jsonl")))
        assert result.success, (mode, result.error)
        view = _pis_context_is_the_compacted_window(pi, result)
        sources = _shown_sources(result.working_copy)
        shown = {sources.get(m.entry_id, m.entry_id) for m in view.context}
        if mode in ("safeguard", "manual"):
            assert result.protected_entry_ids and shown >= _mutating_ids(recording)
            assert set(result.protected_entry_ids) & set(pis_cut.summarize)  # pi's cut summarizes them
            assert result.first_kept_entry_id == result.compaction_event_id
        if mode in ("safeguard", "auto"):  # pi's cut, summary and all: auto is pi's compaction
            assert result.cut_point.first_kept_index is not None
            first_kept = load_transcript(recording).leaf_path()[result.cut_point.first_kept_index].id
            assert first_kept == pis_cut.first_kept_entry_id
        if mode == "auto":
            assert result.first_kept_entry_id == pis_cut.first_kept_entry_id
            assert not _mutating_ids(recording) <= shown


def test_double_compaction_is_refused_unless_forced(recording, tmp_path):
    """A leaf that only restates what the compaction before it summarized past is no new history:
    compacting it again is a double compaction, as for a leaf that is a compaction."""
    first = compact(_params(recording, working_copy=str(tmp_path / "one.jsonl")))
    assert first.success and first.leaf_id != first.compaction_event_id
    again = compact(_params(tmp_path / "one.jsonl", working_copy=str(tmp_path / "two.jsonl")))
    assert not again.success and "double compaction" in again.error and not (tmp_path / "two.jsonl").exists()
    assert again.failure == "already_compacted"
    assert f"only restates what compaction {first.compaction_event_id} summarized past" in again.error
    forced = compact(_params(tmp_path / "one.jsonl", working_copy=str(tmp_path / "two.jsonl"), force_compact=True))
    # forcing passes the guard; with nothing new since, the summary of a summary saves nothing and
    # is refused too (a second pass would only re-summarize the summary)
    assert not forced.success and "double compaction" not in forced.error
    assert "nothing to gain" in forced.error and not (tmp_path / "two.jsonl").exists()
    assert forced.failure == "nothing_to_gain"


def test_protected_entries_over_budget_fail_and_append_nothing(recording, tmp_path):
    """Safeguard cannot compact only when its protected entries and the smallest summary alone
    exceed the budget: it fails with those numbers and writes nothing."""
    result = compact(
        _params(recording, context_tokens=1_600, reserve_tokens_floor=1_000, working_copy=str(tmp_path / "copy.jsonl"))
    )
    assert not result.success and result.failure == "protected_too_large"
    path = load_transcript(recording).leaf_path()
    protected = [e for e in path if e.id in set(result.protected_entry_ids)]
    assert {e.id for e in protected} >= _mutating_ids(recording)  # every entry it would have to keep
    needed = sum(estimate_tokens(e.message) for e in protected)
    assert needed > result.budget_tokens == 600
    match = re.search(
        rf"the {len(protected)} protected entries \(mutating tool calls, their results and pending approvals\) "
        rf"need {needed:,} tokens and the smallest summary (\d+): ([\d,]+) tokens, more than the budget of 600 "
        r"tokens \(contextTokens 1,600 − reserve 1,000\)",
        result.error,
    )
    assert match and int(match.group(2).replace(",", "")) == needed + int(match.group(1)) > 600
    assert not (tmp_path / "copy.jsonl").exists() and result.compaction_event_id is None
    assert result.compacted_token_count == result.original_token_count and result.compacted_window == []


def test_an_early_write_no_longer_keeps_the_whole_session(tmp_path):
    """The write comes first, then a long read-only conversation: the window from the write on is
    far over the budget, the write itself is not. Safeguard summarizes everything but the write
    and the kept tail, restates the write, and fits the budget."""
    s = Session()
    s.user("cancel #W1")
    write = s.tool_turn("cancel_order", {"order_id": "#W1"}, "cancelled #W1")
    s.assistant("cancelled")
    for i in range(30):
        s.user(f"question {i} " + "q" * 400)
        s.tool_turn("get_order", {"order_id": f"#W{i}"}, "order " + "o" * 1_200)
        s.assistant("answer " + "a" * 300)
    recording = s.write(tmp_path / "rec.jsonl")
    path = load_transcript(recording).leaf_path()
    after_write = sum(estimate_tokens(e.message) for e in path[path.index(next(e for e in path if e.id == write[0])) :])
    budget = dict(context_tokens=6_000, reserve_tokens_floor=1_500, keep_recent_tokens=1_500)
    assert after_write > 6_000 - 1_500
    result = compact(_params(recording, **budget))
    assert result.success and result.findings == [] and result.fits_budget
    assert result.protected_entry_ids == list(write)
    assert [_source(w) for w in result.compacted_window[1:3]] == list(write)
    assert result.compacted_token_count <= result.budget_tokens < result.original_token_count / 3
    auto = compact(_params(recording, compaction_mode="auto", **budget))
    protected_tokens = sum(w["tokens"] for w in result.compacted_window if w["protected"])
    assert result.token_saved >= 0.9 * (auto.token_saved - protected_tokens)


def test_a_compaction_that_does_not_happen_names_why(recording, tmp_path):
    empty = compact(_params(Session().write(tmp_path / "empty.jsonl")))
    assert (empty.failure, empty.error) == ("nothing_to_compact", "nothing to compact: the session has no entries")
    no_room = compact(_params(recording, reserve_tokens_floor=SMALL["context_tokens"]))
    assert no_room.failure == "no_budget" and "leaves no budget" in no_room.error
    assert compact(_params(recording, compaction_mode="auto", working_copy=str(tmp_path / "one.jsonl"))).success
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


def _three_big_writes(tmp_path):
    s = Session()
    s.user("tell me about reports " + "c" * 3_000)
    s.assistant("reports are " + "r" * 3_000)
    for i in range(3):
        s.user(f"write report {i}")
        s.tool_turn("write", {"path": f"/out/r{i}.txt", "content": "short"}, "written: " + "L" * 6_000)
        s.assistant(f"report {i} written")
    s.user("thanks")
    s.assistant("bye")
    return s.write(tmp_path / "rec.jsonl")


def test_a_protected_result_cut_between_the_halves_of_a_pair_is_restated_as_openclaw_writes_it(tmp_path, pi):
    """allowMutatingEventTruncate on a result of characters above U+FFFF (emoji): OpenClaw
    2026.4.12's truncation slices by UTF-16 units and may end the kept head with half a pair, which
    its file holds as a `\\ud83d` escape. Safeguard writes the restated copy so (it crashed with
    UnicodeEncodeError), and the copy is the declared truncation of the recorded result — no
    MUTATION_ALTERED for replaylab's own compaction; pi shows the compacted window."""
    s = Session()
    s.user("write the emoji file")
    s.tool_turn("write", {"path": "e.txt", "content": "x"}, "wrote: " + "\U0001f600" * 6000)
    for i in range(6):
        s.user(f"q{i} " + "tell me more about the weather " * 30)
        s.assistant(f"a{i} " + "the weather is fine " * 30)
    recording = s.write(tmp_path / "rec.jsonl")
    copy = tmp_path / "copy.jsonl"
    params = _params(
        recording,
        context_tokens=2_400,
        reserve_tokens_floor=400,
        keep_recent_tokens=300,
        allow_mutating_event_truncate=True,
        working_copy=str(copy),
    )
    result = compact(params)
    assert result.success and result.findings == [], result.error
    assert b"\\ud83d[... " in copy.read_bytes()  # as JSON.stringify writes the half
    entry = load_transcript(copy).by_id[result.compaction_event_id]
    (truncated,) = entry.details["replaylab"]["truncatedEntryIds"]
    assert truncated in restated_sources(load_transcript(copy).leaf_path()).values()
    assert [w["entryId"] for w in result.compacted_window if w.get("truncated")]
    # pi's JSON.parse keeps the half, which replaylab reads as U+FFFD (`transcript.jsonl`): else equal
    view = pi.view(result.working_copy)
    context = [dataclasses.replace(m, message=_lone_surrogates_read(m.message)) for m in view.context]
    assert context_mismatches(as_window(result.compacted_window), context) == []
    assert [w["tokens"] for w in result.compacted_window] == [m.tokens for m in view.context]


def _lone_surrogates_read(value):
    """`value` with each lone surrogate in its strings read as U+FFFD, as replaylab's loader reads it."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, list):
        return [_lone_surrogates_read(v) for v in value]
    if isinstance(value, dict):
        return {k: _lone_surrogates_read(v) for k, v in value.items()}
    return value


def test_allow_mutating_event_truncate_truncates_protected_results_only_when_they_do_not_fit(tmp_path, pi):
    """The seed's flag: protected results may be truncated like any other tool result. When the
    protected entries and the smallest summary fit the budget it changes nothing; when they do not,
    safeguard without it fails with the numbers (and names the flag), and with it restates the
    results shortened by OpenClaw's truncation, each declaring the recorded length and hash, the
    calls byte for byte — and the invariants accept exactly that."""
    recording = _three_big_writes(tmp_path)
    recorded = {e.id: e for e in load_transcript(recording).entries}

    def run(context_tokens, allow):
        copy = tmp_path / f"{context_tokens}-{allow}.jsonl"
        params = _params(
            recording,
            context_tokens=context_tokens,
            keep_recent_tokens=50,
            allow_mutating_event_truncate=allow,
            working_copy=str(copy),
        )
        return compact(params), copy

    (off, _), (on, _) = run(9_000, False), run(9_000, True)  # they fit: nothing is truncated
    assert off.success and on.success and off.findings == on.findings == []
    assert _untimed(off.compacted_window) == _untimed(on.compacted_window) and off.summary_text == on.summary_text
    assert not any(w.get("truncated") for w in on.compacted_window)

    (off, off_copy), (on, on_copy) = run(4_000, False), run(4_000, True)
    assert not off.success and off.failure == "protected_too_large" and not off_copy.exists()
    assert "or allow allowMutatingEventTruncate" in off.error
    assert on.success and on.findings == [] and on.fits_budget, on.error
    entry = load_transcript(on_copy).by_id[on.compaction_event_id]
    truncated = entry.details["replaylab"]["truncatedEntryIds"]
    assert truncated and any(truncated[0] in note for note in on.notes)
    window = {_source(w): w for w in on.compacted_window}
    copies = load_transcript(on_copy).by_id
    for entry_id in _mutating_ids(recording):
        item, original = window[entry_id], recorded[entry_id].message
        if entry_id in truncated:  # a result, shortened the way OpenClaw shortens results
            assert item["truncated"] and item["role"] == "toolResult"
            text = item["message"]["content"][0]["text"]
            head = text[: text.index("[...")].rstrip()  # the recorded text's head, then OpenClaw's notice
            assert len(text) < 6_000 and message_text(original).startswith(head) and "characters truncated]" in text
            declared = copies[item["entryId"]].truncated_from
            assert declared == {"chars": len(message_text(original)), "sha256": message_sha256(original)}
        else:  # the calls, never shortened
            assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(original)
    _pis_context_is_the_compacted_window(pi, on)
    # the same window judged as if the flag were off: every shortened result is an alteration
    path = load_transcript(recording).leaf_path()
    strict = replay_check(path, build_window(path), on.compacted_window, classifier=ToolClassifier(TOOL_CLASSES))
    assert {d.code for d in strict} == {Code.MUTATION_ALTERED} and len(strict) == len(truncated)


def test_pending_approval_in_the_summarized_span_is_protected(tmp_path):
    s = Session()
    s.user("tell me about branches " + "n" * 3_000)
    s.assistant("branches are " + "k" * 3_000)
    s.user("delete the branch")
    pending, _ = s.assistant("Asking for approval first.", [("git_delete_branch", {"name": "old"})], stop="toolUse")
    s.user("what now?")
    later, _ = s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    params = _params(
        recording, tool_classes={"git_delete_branch": "read"}, keep_recent_tokens=1, recent_turns_preserve=0
    )
    result = compact(params)
    assert result.success and result.findings == []
    path = load_transcript(recording).leaf_path()
    assert path[compute_cut_point(path, 1).first_kept_index].id == later  # pi's cut summarizes it
    assert result.protected_entry_ids == [pending] and result.first_kept_entry_id == result.compaction_event_id
    window = {_source(w): w for w in result.compacted_window}
    assert window[pending]["protected"] and window[pending]["message"]["stopReason"] == "toolUse"
    assert [_source(w) for w in result.compacted_window[1:]] == [pending, later]
    assert "n" * 3_000 not in "".join(str(w["message"]) for w in result.compacted_window)  # the chat is summarized
    assert 'git_delete_branch {"name":"old"} → pending (no result) (kept verbatim after this summary)' in (
        result.summary_text
    )


def _spawning_session(tmp_path, child: str, prompt: str = "tag and publish v2") -> tuple[Path, str, str, str, str]:
    """A `Task` call whose result names the sub-agent transcript `child`, between two long turns:
    (the recording, the spawning entry, its call id, its result, the last reply)."""
    s = Session()
    s.user("release it " + "n" * 3_000)
    spawn, (call_id,) = s.assistant("Starting a release agent.", [("Task", {"prompt": prompt})])
    answer = s.result(call_id, "Task", "Published.")
    for line in s.lines:
        if line.get("id") == answer:
            line["message"]["details"] = {"replaylab": {"childSession": child}}
    s.user("what now? " + "q" * 3_000)
    later, _ = s.assistant("done")
    return s.write(tmp_path / "rec.jsonl"), spawn, call_id, answer, later


def test_a_call_whose_sub_agent_cannot_be_loaded_is_protected(tmp_path):
    """Its class (`subagent`) is safe: its own calls are judged in its transcript. When that
    transcript is not there, what the sub-agent did is unknown, the ledger counts the spawning
    call as a mutating event, and safeguard keeps it as it keeps any other."""
    recording, spawn, call_id, answer, later = _spawning_session(tmp_path, "rec.sub-agent-gone.jsonl")
    params = _params(recording, tool_classes={"Task": "subagent"}, keep_recent_tokens=1, recent_turns_preserve=0)
    result = compact(params)
    assert result.success and result.findings == [] and result.mutated_event_ids == [call_id]
    assert result.protected_entry_ids == [spawn, answer]
    assert [_source(w) for w in result.compacted_window[1:]] == [spawn, answer, later]


def _child_that_removes_dist(folder):
    """A sub-agent transcript, `rec.sub-helper.jsonl` in `folder`, that ran `rm -rf dist`; its call id."""
    child = Session("child-1")
    child.user("delete dist")
    _, (child_call,) = child.assistant(None, [("bash", {"command": "rm -rf dist"})])
    child.result(child_call, "bash", "(no output)")
    child.write(folder / "rec.sub-helper.jsonl")
    return child_call


def test_a_call_whose_sub_agent_mutated_is_protected(tmp_path):
    """The spawning call's class (`subagent`) is safe, but its sub-agent ran `rm`: the ledger marks
    the call and its result unsafe, and safeguard keeps them as it keeps an unresolved one."""
    child_call = _child_that_removes_dist(tmp_path)
    recording, spawn, _, answer, later = _spawning_session(tmp_path, "rec.sub-helper.jsonl", "delete dist")
    params = _params(recording, tool_classes={"Task": "subagent"}, keep_recent_tokens=1, recent_turns_preserve=0)
    result = compact(params)
    assert result.success and result.findings == [] and result.mutated_event_ids == [f"child-1:{child_call}"]
    assert result.protected_entry_ids == [spawn, answer]
    assert [_source(w) for w in result.compacted_window[1:]] == [spawn, answer, later]


def test_where_a_sub_agent_no_call_names_shows_is_protected(tmp_path):
    """A forked slash command the user typed: no call names its sub-agent, which ran `rm`; the
    recording's header names it and the command's message (`spawn_links`), and safeguard keeps
    that message as it keeps a spawning call. A window without it is MUTATION_DROPPED."""
    child_call = _child_that_removes_dist(tmp_path)
    s = Session()
    s.user("release it " + "n" * 3_000)
    s.assistant("Ready.")
    command = s.user("/clean")
    s.user("what now? " + "q" * 3_000)
    later, _ = s.assistant("done")
    s.lines[0]["replaylab"] = {"unlinkedChildren": [{"childSession": "rec.sub-helper.jsonl", "at": command}]}
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, keep_recent_tokens=1, recent_turns_preserve=0))
    assert result.success and result.findings == [] and result.mutated_event_ids == [f"child-1:{child_call}"]
    assert result.protected_entry_ids == [command]
    assert [_source(w) for w in result.compacted_window[1:]] == [command, later]
    from replaylab.compaction.invariants import ledger_events
    from replaylab.safety.ledger import build_ledger

    transcript = load_transcript(recording)
    ledger = build_ledger(transcript, ToolClassifier())
    before = build_window(transcript.leaf_path())
    after = [w for w in before if w.entry_id != command]
    found = replay_check(transcript.leaf_path(), before, after, ledger=ledger, replay_safe=False,
                         mutated_event_ids=ledger.mutated_event_ids)  # fmt: skip
    assert [d.code for d in found] == [Code.MUTATION_DROPPED] and ledger_events(ledger)[0].spawn


@pytest.mark.parametrize(("tool", "protected"), [("exec", True), ("read", False)])
def test_a_result_whose_call_cannot_be_read_is_protected_when_its_tool_mutates(tmp_path, tool, protected):
    """The call's message fails validation (its content is an object), so replaylab reads no message
    in it; its result is all that shows an `rm -rf` ran, and safeguard keeps it."""
    s = Session()
    s.user("clean the build " + "n" * 3_000)
    call, (call_id,) = s.assistant("Cleaning.", [(tool, {"command": "rm -rf build", "path": "a.txt"})], thinking="go")
    for line in s.lines:
        if line["id"] == call:
            line["message"]["content"] = {"blocks": line["message"]["content"]}
    answer = s.result(call_id, tool, "removed")
    s.user("what now? " + "q" * 3_000)
    later, _ = s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, keep_recent_tokens=1, recent_turns_preserve=0))
    assert result.success
    assert result.mutated_event_ids == ([call_id] if protected else [])
    assert result.protected_entry_ids == ([answer] if protected else [])
    shown = [_source(w) for w in result.compacted_window[1:]]
    assert shown == ([answer, later] if protected else [later])


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


def test_a_second_compaction_protects_what_the_first_restated(recording, tmp_path):
    """After more turns, a second compaction summarizes the first one's summary, its restated
    entries and the new turns: the restated protected entries are protected again and restated once
    more, each naming the recorded entry (not the copy), byte for byte; the copy's ledger is still
    the recording's."""
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger

    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    first = compact(_params(writer.path), writer=writer)
    assert first.success and first.protected_entry_ids
    leaf = _append_questions(writer, first.leaf_id, 4, 600)
    second = compact(_params(writer.path), writer=writer)
    assert second.success and second.findings == [], second.error
    copy = load_transcript(writer.path)
    assert copy.leaf_id == second.leaf_id and copy.by_id[second.compaction_event_id].parent_id == leaf
    assert set(first.protected_entry_ids) <= set(second.protected_entry_ids)  # recorded ids, not the copies'
    recorded = {e.id: e for e in load_transcript(recording).entries}
    for item in second.compacted_window[1:]:
        if item["protected"]:
            assert item["restates"] in recorded and copy.by_id[item["entryId"]].restates == item["restates"]
            assert orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == dumped(
                recorded[item["restates"]].message
            )
    classifier = ToolClassifier(declared=TOOL_CLASSES)
    ledger = build_ledger(copy, classifier)
    assert ledger.events == build_ledger(load_transcript(recording), classifier).events


def test_a_sub_agent_spawn_stays_protected_through_a_second_compaction(tmp_path):
    """Safeguard restates an unresolved spawn after its first compaction; the copy has an id of its
    own, and the second compaction keeps it all the same (it dropped it, and then failed its own
    MUTATION_DROPPED check)."""
    recording, spawn, _, answer, _ = _spawning_session(tmp_path, "rec.sub-agent-gone.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    params = dict(tool_classes={"Task": "subagent"}, keep_recent_tokens=1, recent_turns_preserve=0)
    first = compact(_params(writer.path, **params), writer=writer)
    assert first.success and first.protected_entry_ids == [spawn, answer]
    _append_questions(writer, first.leaf_id, 2, 3_000)
    second = compact(_params(writer.path, **params), writer=writer)
    assert second.success and second.findings == [], second.error
    kept = [item["restates"] for item in second.compacted_window[1:] if item["protected"]]
    assert kept == [spawn, answer]


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
    _append_questions(writer, first.leaf_id, 4, 2_000)
    return write, first, compact(_params(writer.path, boundary_rule=rule), writer=writer)


@pytest.mark.parametrize("rule", ["0.66.1", "0.58.3"])
def test_chained_compaction_keeps_every_mutating_entry_the_first_one_kept(tmp_path, rule):
    """The second compaction protects a write the first one kept in its tail, whichever boundary
    rule it cuts by (under pi 0.58.3 the boundary starts after the previous compaction, and pi
    keeps nothing before a compaction's firstKeptEntryId): it restates the write after itself."""
    write, first, second = _chained(tmp_path, rule)
    assert (
        first.success
        and first.protected_entry_ids == []
        and set(write) <= {w["entryId"] for w in first.compacted_window}
    )
    assert second.success and second.findings == [], second.error
    assert second.protected_entry_ids == list(write) and second.first_kept_entry_id == second.compaction_event_id
    window = {_source(w): w for w in second.compacted_window}
    recorded = {e.id: e for e in load_transcript(second.working_copy).entries}
    for entry_id in write:
        assert window[entry_id]["protected"] and window[entry_id]["restates"] == entry_id
        assert orjson.dumps(window[entry_id]["message"], option=orjson.OPT_SORT_KEYS) == dumped(
            recorded[entry_id].message
        )


@pytest.mark.parametrize("rule", ["0.66.1", "0.58.3"])
def test_chained_compaction_is_pis_context(tmp_path, rule, pi):
    write, _, second = _chained(tmp_path, rule)
    sources = _shown_sources(second.working_copy)
    context = _pis_context_is_the_compacted_window(pi, second).context
    assert set(write) <= {sources[m.entry_id] for m in context if m.entry_id}


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


def test_the_tail_is_refit_around_the_protected_entries(tmp_path):
    """Summary + restated protected entries + pi's tail over the budget: the tail shrinks to what
    the budget leaves after the summary and the protected entries (more of them may then move into
    the summarized span, and are restated too), until the window fits."""
    recording = helpdesk_session(20).write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, context_tokens=5_150, reserve_tokens_floor=300, keep_recent_tokens=20_000))
    assert result.success and result.findings == [] and result.budget_tokens == 4_850
    assert result.fits_budget and result.compacted_token_count <= result.budget_tokens
    assert result.cut_point.keep_recent_tokens < 4_850  # clamped to the budget, then cut down
    assert set(result.protected_entry_ids) | {_source(w) for w in result.compacted_window} >= _mutating_ids(recording)


def test_a_tail_refit_that_leaves_pi_no_cut_point_keeps_the_smaller_window(tmp_path):
    """Summary + restated write + pi's tail are over the budget, and the tail the budget leaves is
    smaller than the last tool result: pi finds no cut point in it and would keep everything. The
    compaction keeps the smaller window of the first cut (over the budget, and saying so) instead
    of finding nothing to gain."""
    s = Session()
    s.user("look into the build " + "b" * 400)
    s.tool_turn("bash", {"cmd": "make"}, "built " + "o" * 4_800)
    for i in range(3):
        s.tool_turn("get_order", {"order_id": f"#W{i}"}, f"order {i} " + "x" * 2_800)
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, context_tokens=3_000, reserve_tokens_floor=1_000, keep_recent_tokens=20_000))
    assert result.success and result.findings == [] and len(result.protected_entry_ids) == 2
    assert result.compacted_token_count < result.original_token_count and not result.fits_budget
    assert result.cut_point.keep_recent_tokens == 2_000  # the first cut's tail: the refit's was no better
    assert any("still over the budget" in note for note in result.notes)


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
        entry = load_transcript(Path(result.working_copy)).by_id[result.compaction_event_id]
        assert (
            result.compacted_token_count == sum(i["tokens"] for i in items) == entry.details["replaylab"]["tokensAfter"]
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


def test_a_mutating_result_a_recorded_compaction_kept_without_its_call_is_protected(tmp_path):
    """A recorded compaction whose firstKeptEntryId is the result of an `rm -rf` (its call lies
    before it): the window shows the result alone, all it still shows of the call. A new
    safeguard compaction that summarizes it must keep it (its call is before the span it judges)."""
    s = Session()
    s.user("clean the build")
    _, (call_id,) = s.assistant("Cleaning.", [("bash", {"command": "rm -rf build"})])
    answer = s.result(call_id, "bash", "(no output)")
    s.raw(
        {"type": "compaction", "summary": "The user asked to clean.", "firstKeptEntryId": answer, "tokensBefore": 900}
    )
    s.user("what next? " + "n" * 3_000)
    s.assistant("nothing " + "m" * 3_000)
    s.user("and now? " + "q" * 3_000)
    later, _ = s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, keep_recent_tokens=1, recent_turns_preserve=0))
    assert result.success and result.mutated_event_ids == [call_id]
    assert result.protected_entry_ids == [answer]
    assert answer in [_source(w) for w in result.compacted_window[1:]]


def _unread_spawn(recording):
    """The spawning call's message of `_spawning_session` fails validation (its content is an object):
    only the Task result shows the spawn."""
    lines = [orjson.loads(line) for line in recording.read_text().splitlines()]
    for line in lines:
        message = line.get("message") or {}
        if message.get("role") == "assistant" and any(b.get("type") == "toolCall" for b in message["content"]):
            message["content"] = {"blocks": message["content"]}
    recording.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


@pytest.mark.parametrize("mutated", [False, True])
def test_a_spawn_known_only_by_its_result_is_protected(tmp_path, mutated):
    """The Task call cannot be read, and its sub-agent cannot be loaded (the ledger counts the result's
    entry as the mutating event) or ran `rm`: safeguard keeps the result, as it keeps a readable
    spawn's call and result, instead of dropping what the ledger counts (MUTATION_DROPPED)."""
    if mutated:
        child_call = _child_that_removes_dist(tmp_path)
    recording, _, call_id, answer, later = _spawning_session(
        tmp_path, "rec.sub-helper.jsonl" if mutated else "rec.sub-agent-gone.jsonl"
    )
    _unread_spawn(recording)
    params = _params(recording, tool_classes={"Task": "subagent"}, keep_recent_tokens=1, recent_turns_preserve=0)
    result = compact(params)
    assert result.success and result.findings == []
    assert result.mutated_event_ids == ([f"child-1:{child_call}"] if mutated else [call_id])
    assert result.protected_entry_ids == [answer]
    assert [_source(w) for w in result.compacted_window[1:]] == [answer, later]


def test_a_window_that_drops_a_spawn_whose_sub_agent_mutated_is_mutation_dropped(tmp_path):
    """The sub-agent ran `rm`; the spawning `Task` call and its result are all the parent's window
    shows of it, and safeguard protects them (`test_a_call_whose_sub_agent_mutated_is_protected`).
    A compacted window without them loses that event: MUTATION_DROPPED, not a pass."""
    from replaylab.checks.classified import with_classification
    from replaylab.safety.ledger import build_ledger
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.model import CompactionSummaryMessage

    child_call = _child_that_removes_dist(tmp_path)
    recording, spawn, call_id, answer, later = _spawning_session(tmp_path, "rec.sub-helper.jsonl", "delete dist")
    transcript = load_transcript(recording)
    path = transcript.leaf_path()
    ledger = build_ledger(transcript, ToolClassifier(declared={"Task": "subagent"}))
    assert ledger.mutated_event_ids == [f"child-1:{child_call}"]
    before = build_window(path)
    summary = WindowMessage("cmp", CompactionSummaryMessage(role="compactionSummary", summary="## Decisions\n-"))
    after = [summary, *(w for w in before if w.entry_id not in (spawn, answer) and w.entry_id != before[0].entry_id)]
    found = replay_check(
        path, before, after, ledger=ledger, replay_safe=False, mutated_event_ids=ledger.mutated_event_ids
    )
    assert [(d.code, d.where.tool_call_id) for d in found] == [(Code.MUTATION_DROPPED, call_id)]
    # it says why a `Task` call (safe by its class) is an event, and the classifier's word is not added
    assert found[0].detail["classification"]["rule"] == "sub-agent" and "sub-agent mutated" in found[0].message
    assert with_classification(found, ToolClassifier(declared={"Task": "subagent"})) == found


def test_a_code_mode_cell_that_ran_catalog_tools_is_protected(tmp_path):
    """An OpenClaw `exec` whose `command` reads as a harmless shell command but ran as a Code Mode
    cell: OpenClaw's `openclaw.nested-tool.v1` record names it as the parent of a `write`. The
    ledger counts it as a mutating event (`nested_call_parents`), so safeguard keeps it, and its
    result, as it keeps any mutating call."""
    from builders.openclaw_records import nested_tool_record

    code = 'cat <<x\nvar cat, x; await write({path: "notes.txt", content: "call the bank"})\nx'
    assert ToolClassifier().explain("exec", {"command": code}).tool_class == "read"
    s = Session()
    s.user("take a note " + "n" * 3_000)
    cell, (call_id,) = s.assistant("Writing it down.", [("exec", {"command": code})])
    nested = nested_tool_record()
    nested["details"]["parentToolCallId"] = call_id
    s._add({"message": nested})
    answer = s.result(call_id, "exec", '{"status":"completed","value":null}')
    s.user("what now? " + "q" * 3_000)
    later, _ = s.assistant("done")
    recording = s.write(tmp_path / "rec.jsonl")
    result = compact(_params(recording, tool_classes={}, keep_recent_tokens=1, recent_turns_preserve=0))
    assert result.success and result.findings == [] and result.mutated_event_ids == [call_id]
    assert result.protected_entry_ids == [cell, answer]
    assert [_source(w) for w in result.compacted_window[1:]][:2] == [cell, answer]


def _codemode_session(nested: list, tool: str = "codemode") -> tuple[Session, str, str, str]:
    """A pi 1.6.0 session whose early call (`codemode`, or an extension's `tool`) made the `nested`
    calls, then more turns."""
    from builders.pi16_codemode import codemode_turn, extension_turn, pi16_session

    s = pi16_session()
    s.user("what do the notes say? " + "n" * 3_000)
    if tool == "codemode":
        cell, answer, call_id = codemode_turn(s, "return await tools.read({path: 'notes.txt'})", nested)
    else:
        cell, answer, call_id = extension_turn(s, tool, {"topic": "bank"}, nested)
    s.assistant("Done.")
    s.user("what now? " + "q" * 3_000)
    s.assistant("done")
    return s, cell, answer, call_id


def test_a_pi_codemode_script_that_only_read_is_compacted_away(tmp_path):
    """pi 1.6.0's `codemode` call whose result records only reads (`nestedCalls`) is a read:
    safeguard summarizes it like any read, where the call alone ("runs any tool") would be kept."""
    s, cell, answer, _ = _codemode_session([("read", {"path": "notes.txt"}), ("grep", {"pattern": "bank"})])
    result = compact(
        _params(s.write(tmp_path / "rec.jsonl"), tool_classes={}, keep_recent_tokens=1, recent_turns_preserve=0)
    )
    assert result.success and result.findings == [] and result.mutated_event_ids == []
    assert result.protected_entry_ids == []
    assert not {cell, answer} & {_source(w) for w in result.compacted_window}


@pytest.mark.parametrize(
    ("tool", "nested"),
    [
        ("codemode", [("read", {"path": "notes.txt"}), ("write", {"path": "notes.txt", "content": "x"})]),
        ("codemode", [("read", None)]),
        ("lookup_notes", [("read", {"path": "notes.txt"}), ("write", {"path": "notes.txt", "content": "x"})]),
    ],
    ids=["codemode-wrote", "codemode-incomplete", "read-named-tool-wrote"],
)
def test_a_call_whose_recorded_nested_calls_wrote_or_are_incomplete_is_protected(tmp_path, tool, nested):
    """A nested `write`, or a record pi left incomplete (a call's arguments omitted past its size
    limit): the call mutates, whatever its own name reads as (an extension's `lookup_notes` that
    wrote through `ctx.executeTool()`), and safeguard keeps it and its result verbatim."""
    s, cell, answer, call_id = _codemode_session(nested, tool)
    result = compact(
        _params(s.write(tmp_path / "rec.jsonl"), tool_classes={}, keep_recent_tokens=1, recent_turns_preserve=0)
    )
    assert result.success and result.findings == [] and result.mutated_event_ids == [call_id]
    assert result.protected_entry_ids == [cell, answer]
    assert [_source(w) for w in result.compacted_window[1:]][:2] == [cell, answer]


@pytest.mark.parametrize(("agent", "compacts"), [("openclaw@2026.9.6", True), ("pi@1.6.0", False)])
def test_compact_reads_the_file_into_the_tree_of_the_items_agent(tmp_path: Path, agent: str, compacts: bool) -> None:
    """A version-3 file whose last user message has no `parentId`: OpenClaw 2026.9.6 continues it
    from its leaf (it migrates no version-3 file), so there is a long history to compact; pi reads
    it as a root, and its path is that message and its reply."""
    from builders.linear import linear_jsonl, message
    from replaylab.agents import rules_of
    from replaylab.transcript.memo import ItemMemo

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    stop = {"assistant": {"stopReason": "stop"}, "user": {}}
    turns = [
        message(role, [{"type": "text", "text": "word " * 800}], **stop[role])
        for _ in range(6)
        for role in ("user", "assistant")
    ]
    entries = [orjson.loads(line) for line in linear_jsonl(header, *turns, *_turn("b")).splitlines()]
    del entries[-2]["parentId"]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    params = _params(path, compaction_mode="auto", keep_recent_tokens=1_500, context_tokens=30_000)
    result = compact(params, memo=ItemMemo(rules=rules_of(agent)))
    assert result.success is compacts, result.error
    assert (result.original_token_count > 12_000) is compacts


def _turn(text: str) -> list[dict]:
    from builders.linear import message

    return [
        message("user", [{"type": "text", "text": text}]),
        message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop"),
    ]
