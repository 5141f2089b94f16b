"""Safeguard on real sessions: the five Claude Code sessions with a real compact_boundary (compacted
at the recorded point) and the pi sessions with recorded compactions.

Safeguard cuts where pi cuts and summarizes everything older than the kept tail; when that span
holds protected entries (mutating calls, their results, pending approvals) its compaction keeps
nothing itself (`firstKeptEntryId` = its own id) and restates them after itself, byte for byte and
in path order, before the kept tail. Every Bash call counts as mutating (unknown shell commands are
unsafe) and each Claude Code session makes one within its first few entries, so safeguard restates
from there on — and still saves, because the reads between the writes are summarized. It refuses
(`protected_too_large`, with the numbers) only when the protected entries and the smallest summary
exceed the budget, and never drops a mutation to make room. auto (pi's own compaction) compacts the
same sessions at pi's cut, losing the mutations before it by design.

Per compaction the test measures what the report table gives: token saving, mutating entries kept
verbatim, modified files (Edit / Write `file_path`) named in the compacted window, beside Claude
Code's own summary of the same span."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from replaylab.compaction import CompactParams, compact
from replaylab.compaction.cutpoint import compute_cut_point
from replaylab.compaction.identifiers import extract_identifiers
from replaylab.compaction.invariants import as_window, check_pairs, mutating_entries
from replaylab.defects import Code
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import build_window, file_sha256, load_transcript
from replaylab.transcript.model import (
    CompactionEntry,
    MessageEntry,
    dump_entry,
    message_text,
)
from replaylab.transcript.pairing import message_calls
from replaylab.transcript.tokens import estimate_tokens

CLAUDE_SESSIONS = ["258c7280", "4d5611e5", "8463c716", "ae4a77f8", "fa812bfe"]
WRITE_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
#: the entries of a Claude Code session before its first write (its set-up turn and the reads of its issue)
FIRST_WRITE_WITHIN = 100
#: a budget below the window: a share of the window at the compaction point
TIGHT_SHARE = 0.6
TOO_LARGE = re.compile(
    r"the (\d+) protected entries .* need ([\d,]+) tokens and the smallest summary ([\d,]+): ([\d,]+) tokens, "
    r"more than the budget of ([\d,]+) tokens"
)


@pytest.fixture(scope="module")
def claude_code(shared_data, tmp_path_factory):
    """Import each main session once (the importer owns that format) and compact it at the point
    Claude Code compacted: safeguard at the default budget and at a tight one, and auto."""
    from replaylab.importers import import_sessions, write_session

    source = shared_data / "claude-code-spotter" / "sessions"
    classifier = ToolClassifier.from_json(source.parent / "tool_classes.json")
    out = tmp_path_factory.mktemp("cc")
    rows = {}
    for prefix in CLAUDE_SESSIONS:
        path = next(source.glob(f"{prefix}*.jsonl"))
        before_hash = file_sha256(path)
        transcript_path, _ = write_session(next(iter(import_sessions("claude-code", path))), out)
        transcript = load_transcript(transcript_path)
        boundary = next(e for e in transcript.entries if isinstance(e, CompactionEntry))
        history = transcript.path_to(boundary.parent_id)  # the entry just before Claude Code compacted

        window = sum(estimate_tokens(w.message) for w in build_window(history))
        tight = int(window * TIGHT_SHARE)
        rows[prefix] = {
            "history": history,
            "boundary": boundary,
            "classifier": classifier,
            "safeguard": _compact(transcript_path, boundary, classifier, working_copy=str(out / f"{prefix}.s.jsonl")),
            "tight": _compact(
                transcript_path,
                boundary,
                classifier,
                context_tokens=tight + 20_000,
                reserve_tokens_floor=20_000,
                working_copy=str(out / f"{prefix}.t.jsonl"),
            ),
            "auto": _compact(
                transcript_path,
                boundary,
                classifier,
                compaction_mode="auto",
                working_copy=str(out / f"{prefix}.a.jsonl"),
            ),
        }
        assert file_sha256(path) == before_hash
    return rows


def _compact(transcript_path, boundary, classifier, **settings):
    """`compact()` at the point Claude Code compacted (the entry before its boundary)."""
    params = CompactParams(
        session_file=str(transcript_path), leaf_id=boundary.parent_id, force_compact=True, **settings
    )
    return compact(params, classifier=classifier)


def _metrics(history, boundary, result, classifier):
    before = build_window(history)
    mutating = mutating_entries(((w.entry_id, w.message) for w in before), classifier)
    recorded = {e.id: e for e in history if isinstance(e, MessageEntry)}
    window = _by_recorded_id(result.compacted_window)
    verbatim = sum(
        1
        for entry_id in mutating
        if entry_id in window
        and orjson.dumps(window[entry_id]["message"], option=orjson.OPT_SORT_KEYS)
        == orjson.dumps(dump_entry(recorded[entry_id].message), option=orjson.OPT_SORT_KEYS)
    )
    modified: list[str] = []
    for w in before:
        for call in message_calls(w.message):
            path = call.arguments.get("file_path") or call.arguments.get("notebook_path")
            if call.name in WRITE_TOOLS and isinstance(path, str) and path not in modified:
                modified.append(path)
    text = "\n".join(message_text(w.message) for w in as_window(result.compacted_window))
    return {
        "saving": result.token_saved / result.original_token_count,
        "mutating": (verbatim, len(mutating)),
        "named": (sum(1 for p in modified if p in text), len(modified)),
        "cc_named": sum(1 for p in modified if Path(p).name in boundary.summary),
        "cc_kept": len(boundary.summary) / 4 / (boundary.tokens_before or 1),
    }


def _by_recorded_id(compacted_window) -> dict[str, dict]:
    """`compactedWindow` items by the recorded entry each one is (a restated copy: the one it restates)."""
    return {w.get("restates") or w["entryId"]: w for w in compacted_window}


def _verbatim(item, entry) -> bool:
    return orjson.dumps(item["message"], option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        dump_entry(entry.message), option=orjson.OPT_SORT_KEYS
    )


def assert_protected_restated(path, result, classifier) -> None:
    """What safeguard promises of a compaction that summarized past protected entries: it keeps
    nothing itself, and after its summary the window shows every protected entry and every mutating
    entry of the window before it byte-identical to the recording, each recorded entry once, in
    path order, every call followed by its result (no PAIR_BROKEN), then the kept tail."""
    index = {e.id: i for i, e in enumerate(path)}
    recorded = {e.id: e for e in path if isinstance(e, MessageEntry)}
    assert result.success and result.protected_entry_ids
    assert result.first_kept_entry_id == result.compaction_event_id  # keeps nothing itself
    assert result.compacted_window[0]["entryId"] == result.compaction_event_id  # the summary
    rest = result.compacted_window[1:]
    ids = [w.get("restates") or w["entryId"] for w in rest]
    assert all(i in index for i in ids)  # every restated copy names a recorded entry of the path
    assert [index[i] for i in ids] == sorted({index[i] for i in ids})  # chronological, each once
    restated = [w.get("restates") for w in rest]
    assert restated[: len(result.protected_entry_ids)] == result.protected_entry_ids  # restated first
    mutating = mutating_entries(((w.entry_id, w.message) for w in build_window(path)), classifier)
    window = dict(zip(ids, rest))
    for entry_id in [*result.protected_entry_ids, *mutating]:
        assert entry_id in window and _verbatim(window[entry_id], recorded[entry_id]), entry_id
    assert check_pairs(path, as_window(result.compacted_window)) == []


def _first_protected(history, classifier) -> int:
    """Path index of the first entry safeguard protects: the first message with a mutating call."""
    return next(
        i
        for i, e in enumerate(history)
        if isinstance(e, MessageEntry)
        and any(classifier.is_mutating(c.name, c.arguments) for c in message_calls(e.message))
    )


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_claude_code_sessions_in_safeguard_keep_every_mutation_verbatim(claude_code, prefix):
    """At the default budget safeguard compacts each session: every mutating entry byte-identical in
    the compacted window (restated where the summary went past it), every modified file named by its
    full path, no finding."""
    row = claude_code[prefix]
    history, result = row["history"], row["safeguard"]
    assert result.success and result.findings == [] and result.quality_guard.ok, result.error
    m = _metrics(history, row["boundary"], result, row["classifier"])
    verbatim, mutating = m["mutating"]
    named, modified = m["named"]
    assert mutating > 0 and verbatim == mutating  # 100 % of the mutating entries, byte-identical
    assert modified > 0 and named == modified  # 100 % of the modified files, by full path
    assert_protected_restated(history, result, row["classifier"])


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_a_claude_code_session_mutates_right_away_and_safeguard_still_compacts_it(claude_code, pi, prefix):
    """The first write, a shell command, comes among a session's first hundred entries (a few per
    cent of its history, once the agent has read its next issue with `bd show` / `bd ready`), so
    nearly all of the history is protected or kept — what safeguard used to refuse ("nothing to
    gain"). It now summarizes the reads between the writes, restates the writes from the first one
    on, and saves; pi, loading the working copy, rebuilds exactly that window."""
    from replaylab.oracles.compare import context_mismatches

    row = claude_code[prefix]
    history, result, classifier = row["history"], row["safeguard"], row["classifier"]
    first = _first_protected(history, classifier)
    assert first < FIRST_WRITE_WITHIN and "Bash" in {c.name for c in message_calls(history[first].message)}
    assert result.protected_entry_ids[0] == history[first].id  # restated from the very first write on
    # less than what cutting no later than the first write would keep (the old refusal's figure)
    kept_from_first = sum(estimate_tokens(e.message) for e in history[first:] if isinstance(e, MessageEntry))
    assert 0 < result.token_saved and result.compacted_token_count < kept_from_first
    view = pi.view(result.working_copy)
    assert context_mismatches(as_window(result.compacted_window), view) == []


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_claude_code_sessions_over_a_tight_budget_compact_within_it_or_fail_with_the_protected_tokens(
    claude_code, prefix
):
    """At 60 % of the window safeguard compacts within the budget keeping every mutation verbatim,
    or — only when the protected entries and the smallest summary alone exceed the budget — fails
    as `protected_too_large` naming those numbers, which add up to more than the budget."""
    row = claude_code[prefix]
    history, result = row["history"], row["tight"]
    recorded = {e.id: e for e in history if isinstance(e, MessageEntry)}
    if result.success:
        assert result.compacted_token_count <= result.budget_tokens and result.fits_budget
        assert result.findings == []
        assert_protected_restated(history, result, row["classifier"])
        return
    assert result.failure == "protected_too_large" and result.compaction_event_id is None, result.error
    assert result.compacted_token_count == result.original_token_count
    count, tokens, floor, total, budget = (int(g.replace(",", "")) for g in TOO_LARGE.search(result.error).groups())
    # on a failure protected_entry_ids lists every protected entry of the window: the ones counted
    assert count == len(result.protected_entry_ids) and budget == result.budget_tokens
    assert tokens == sum(estimate_tokens(recorded[i].message) for i in result.protected_entry_ids)
    assert tokens + floor == total > budget and floor > 0
    mutating = mutating_entries(((w.entry_id, w.message) for w in build_window(history)), row["classifier"])
    assert set(mutating) <= set(result.protected_entry_ids)


@pytest.mark.realdata
def test_the_tight_budget_refusal_is_the_exception(claude_code):
    """At 60 % of the window most sessions compact; a refusal is a session whose protected entries
    with the smallest summary need more than that (checked per session above)."""
    refused = [p for p in CLAUDE_SESSIONS if not claude_code[p]["tight"].success]
    assert len(refused) <= 1, refused


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_auto_mode_compacts_the_claude_code_sessions_at_pis_cut(claude_code, prefix):
    """auto is pi's compaction: it cuts where pi cuts, saves most of the window, names every modified
    file in its summary, and loses the mutations before the cut (its replayCheck says so)."""
    row = claude_code[prefix]
    history, result = row["history"], row["auto"]
    assert result.success and result.quality_guard.ok
    assert result.first_kept_entry_id == history[compute_cut_point(history, 20_000).first_kept_index].id
    m = _metrics(history, row["boundary"], result, row["classifier"])
    verbatim, mutating = m["mutating"]
    named, modified = m["named"]
    assert modified > 0 and named == modified
    assert 0 < verbatim < mutating and {f.code for f in result.findings} == {Code.MUTATION_DROPPED}
    assert 0.5 < m["saving"] < 0.9


@pytest.mark.realdata
def test_claude_codes_own_summary_for_comparison(claude_code):
    """Claude Code's own summaries name nearly every modified file by basename and keep a few
    percent of its own pre-compaction token count."""
    named = total = 0
    kept = []
    for prefix in CLAUDE_SESSIONS:
        row = claude_code[prefix]
        m = _metrics(row["history"], row["boundary"], row["auto"], row["classifier"])
        named, total = named + m["cc_named"], total + m["named"][1]
        kept.append(m["cc_kept"])
    assert (named, total) == (67, 69)
    assert all(0.015 < k < 0.03 for k in kept)


@pytest.mark.realdata
def test_claude_code_identifiers_mostly_survive(claude_code):
    """IDENTIFIER_LOST as the QA pipeline computes it, on the compactions that happen (auto): the
    identifiers of the summarized spans are visible in the compacted windows, nearly all of them."""
    lost_total = found_total = 0
    for prefix in CLAUDE_SESSIONS:
        row = claude_code[prefix]
        window = as_window(row["auto"].compacted_window)
        kept = {w.entry_id for w in window}
        visible = "\n".join(message_text(w.message) for w in window)
        span = "\n".join(
            message_text(e.message) for e in row["history"] if isinstance(e, MessageEntry) and e.id not in kept
        )
        ids = extract_identifiers(span)
        lost_total += sum(1 for i in ids if i not in visible and i.upper() not in visible.upper())
        found_total += len(ids)
    assert found_total > 500 and lost_total <= 4


#: (file, recorded compaction): the pi sessions' recorded compactions, each with mutating entries
#: before pi's cut
PI_POINTS = [
    ("pi-before-compaction.jsonl", "l360"),
    ("pi-before-compaction.jsonl", "l629"),
    ("pi-compact.jsonl", "l670"),
    ("pi-session.jsonl", "l463"),
]


def _at_recorded_compaction(source: Path, compaction_id: str, mode: str, copy: Path):
    transcript = load_transcript(source)
    leaf = transcript.by_id[compaction_id].parent_id
    params = CompactParams(
        session_file=str(source), leaf_id=leaf, force_compact=True, compaction_mode=mode, working_copy=str(copy)
    )
    return transcript, transcript.path_to(leaf), compact(params)


@pytest.mark.realdata
@pytest.mark.parametrize(("name", "compaction_id"), PI_POINTS)
def test_safeguard_on_real_pi_sessions_at_their_recorded_compactions(shared_data, tmp_path, name, compaction_id):
    """At each recorded compaction safeguard cuts where pi (auto) cuts, summarizes past the
    mutating entries before the cut and restates them verbatim, in order, paired: it saves less
    than auto (it keeps the writes) but saves."""
    source = shared_data / "openclaw-fixtures" / name
    transcript, path, result = _at_recorded_compaction(source, compaction_id, "safeguard", tmp_path / "s.jsonl")
    _, _, auto = _at_recorded_compaction(source, compaction_id, "auto", tmp_path / "a.jsonl")
    index = {e.id: i for i, e in enumerate(path)}
    pis_cut = compute_cut_point(path, 20_000).first_kept_index
    assert auto.success and auto.first_kept_entry_id == path[pis_cut].id  # auto cuts where pi cuts
    if transcript.by_id[compaction_id].first_kept_entry_id == path[pis_cut].id:
        assert auto.first_kept_entry_id == transcript.by_id[compaction_id].first_kept_entry_id  # as pi recorded
    assert result.success and result.findings == [], result.error
    assert all(index[i] < pis_cut for i in result.protected_entry_ids)  # summarized past, restated
    assert_protected_restated(path, result, ToolClassifier())
    # the tail after the restated entries is pi's own kept tail
    tail = [w.get("restates") for w in result.compacted_window[1 + len(result.protected_entry_ids) :]]
    assert tail and index[tail[0]] >= pis_cut
    # savings against auto on the same point: safeguard keeps more, so it saves less, but saves
    assert auto.compacted_token_count < result.compacted_token_count < result.original_token_count


@pytest.mark.realdata
@pytest.mark.parametrize(("name", "compaction_id"), PI_POINTS)
def test_safeguard_copies_of_real_pi_sessions_are_pis_context(shared_data, tmp_path, pi, name, compaction_id):
    """pi loads each working copy and rebuilds the compacted window position by position, so every
    protected entry the window restates is in pi's own context (a file pi migrates gets fresh ids:
    compared by message there)."""
    from replaylab.oracles.compare import context_mismatches

    source = shared_data / "openclaw-fixtures" / name
    _, _, result = _at_recorded_compaction(source, compaction_id, "safeguard", tmp_path / "s.jsonl")
    view = pi.view(result.working_copy)
    assert context_mismatches(as_window(result.compacted_window), view) == []
    assert len(view.context) == len(result.compacted_window)
    if not view.migrated:
        restating = {w["entryId"]: w.get("restates") for w in result.compacted_window}
        assert set(result.protected_entry_ids) <= {restating.get(m.entry_id) for m in view.context}
