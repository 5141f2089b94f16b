"""Safeguard on real sessions: the five Claude Code sessions with a real compact_boundary (compacted
at the recorded point) and the pi sessions with recorded compactions.

Safeguard never summarizes across a mutating event: its cut moves back to the first one pi's cut
would summarize. Every Bash call counts as mutating (unknown shell commands are unsafe), and each
Claude Code session makes one within its first few entries, so safeguard has next to nothing to
summarize there: it fails with the numbers — "nothing to gain" at the default budget, "protected
too large" at a budget below the window — and never drops a mutation to make room. auto (pi's own
compaction) compacts the same sessions at pi's cut, losing the mutations before it by design.

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
from replaylab.compaction.invariants import as_window, mutating_entries
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
#: the entries of a Claude Code session before its first Bash call (its set-up turn)
FIRST_BASH_WITHIN = 10
#: a budget below the window: a share of the window at the compaction point
TIGHT_SHARE = 0.6
NOTHING_TO_GAIN = re.compile(r"would hold (?:at least )?(\d+) tokens.*the current one (\d+)")


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
            "safeguard": _compact(transcript_path, boundary, classifier),
            "tight": _compact(
                transcript_path, boundary, classifier, context_tokens=tight + 20_000, reserve_tokens_floor=20_000
            ),
            "auto": _compact(transcript_path, boundary, classifier, compaction_mode="auto"),
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
    window = {w["entryId"]: w for w in result.compacted_window}
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
def test_claude_code_sessions_in_safeguard_keep_every_mutation_or_fail_with_the_numbers(claude_code, prefix):
    row = claude_code[prefix]
    history, result = row["history"], row["safeguard"]
    if result.success:
        m = _metrics(history, row["boundary"], result, row["classifier"])
        verbatim, mutating = m["mutating"]
        named, modified = m["named"]
        assert result.findings == [] and result.quality_guard.ok
        assert mutating > 0 and verbatim == mutating  # 100 % of the mutating entries, byte-identical
        assert modified > 0 and named == modified  # 100 % of the modified files, by full path
        return
    assert result.failure in ("nothing_to_gain", "protected_too_large"), result.error
    assert result.compacted_token_count == result.original_token_count and result.compaction_event_id is None
    if result.failure == "nothing_to_gain":
        after, current = map(int, NOTHING_TO_GAIN.search(result.error).groups())
        assert after >= current == result.original_token_count


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_a_claude_code_session_mutates_right_away_so_safeguard_has_nothing_to_summarize(claude_code, prefix):
    """What holds while every shell command counts as mutating: the first protected entry is a Bash
    call among the session's first entries, everything from it on is kept, and that is the window."""
    row = claude_code[prefix]
    history, result, classifier = row["history"], row["safeguard"], row["classifier"]
    first = _first_protected(history, classifier)
    assert first < FIRST_BASH_WITHIN and {c.name for c in message_calls(history[first].message)} == {"Bash"}
    assert not result.success and result.failure == "nothing_to_gain"
    kept = sum(estimate_tokens(e.message) for e in history[first:] if isinstance(e, MessageEntry))
    assert f"kept tail and protected entries {kept}" in result.error  # all but the set-up turn


@pytest.mark.realdata
@pytest.mark.parametrize("prefix", CLAUDE_SESSIONS)
def test_claude_code_sessions_over_a_tight_budget_fail_as_protected_too_large(claude_code, prefix):
    row = claude_code[prefix]
    history, result = row["history"], row["tight"]
    first = _first_protected(history, row["classifier"])
    needed = sum(estimate_tokens(e.message) for e in history[first:] if isinstance(e, MessageEntry))
    assert not result.success and result.failure == "protected_too_large" and result.compaction_event_id is None
    assert f"(entry {history[first].id}; " in result.error
    assert f"need {needed} tokens, more than the budget of {result.budget_tokens} tokens" in result.error
    assert needed > result.budget_tokens


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


#: (file, recorded compaction) → whether safeguard compacts there (else its cut, moved back to the
#: first mutating event since the boundary, leaves nothing worth summarizing)
PI_POINTS = {
    ("pi-before-compaction.jsonl", "l360"): True,
    ("pi-before-compaction.jsonl", "l629"): False,
    ("pi-compact.jsonl", "l670"): False,
    ("pi-session.jsonl", "l463"): True,
}


def _at_recorded_compaction(source: Path, compaction_id: str, mode: str, copy: Path):
    transcript = load_transcript(source)
    leaf = transcript.by_id[compaction_id].parent_id
    params = CompactParams(
        session_file=str(source), leaf_id=leaf, force_compact=True, compaction_mode=mode, working_copy=str(copy)
    )
    return transcript, transcript.path_to(leaf), compact(params)


@pytest.mark.realdata
@pytest.mark.parametrize(("name", "compaction_id"), sorted(PI_POINTS))
def test_safeguard_on_real_pi_sessions_at_their_recorded_compactions(shared_data, tmp_path, name, compaction_id):
    source = shared_data / "openclaw-fixtures" / name
    transcript, path, result = _at_recorded_compaction(source, compaction_id, "safeguard", tmp_path / "s.jsonl")
    _, _, auto = _at_recorded_compaction(source, compaction_id, "auto", tmp_path / "a.jsonl")
    index = {e.id: i for i, e in enumerate(path)}
    pis_cut = compute_cut_point(path, 20_000).first_kept_index
    assert auto.success and auto.first_kept_entry_id == path[pis_cut].id  # auto cuts where pi cuts
    if transcript.by_id[compaction_id].first_kept_entry_id == path[pis_cut].id:
        assert auto.first_kept_entry_id == transcript.by_id[compaction_id].first_kept_entry_id  # as pi recorded
    if not PI_POINTS[(name, compaction_id)]:
        assert not result.success and result.failure == "nothing_to_gain" and result.protected_entry_ids
        after, current = map(int, NOTHING_TO_GAIN.search(result.error).groups())
        assert after >= current == result.original_token_count
        return
    assert result.success and result.findings == []
    first_kept = index[result.first_kept_entry_id]
    assert first_kept < pis_cut and index[result.protected_entry_ids[0]] >= first_kept
    mutating = mutating_entries(((w.entry_id, w.message) for w in build_window(path)), ToolClassifier())
    window = {w["entryId"]: w for w in result.compacted_window}
    assert set(mutating) <= set(window) and all(index[i] >= first_kept for i in mutating)
    recorded = {e.id: e for e in path if isinstance(e, MessageEntry)}
    for entry_id in mutating:
        assert orjson.dumps(window[entry_id]["message"], option=orjson.OPT_SORT_KEYS) == orjson.dumps(
            dump_entry(recorded[entry_id].message), option=orjson.OPT_SORT_KEYS
        )
    # savings against auto on the same point: safeguard keeps more, so it saves less, but saves
    assert auto.compacted_token_count < result.compacted_token_count < result.original_token_count


@pytest.mark.realdata
@pytest.mark.parametrize(("name", "compaction_id"), sorted(k for k, compacts in PI_POINTS.items() if compacts))
def test_safeguard_copies_of_real_pi_sessions_are_pis_context(shared_data, tmp_path, pi, name, compaction_id):
    from replaylab.oracles.compare import context_mismatches

    source = shared_data / "openclaw-fixtures" / name
    _, _, result = _at_recorded_compaction(source, compaction_id, "safeguard", tmp_path / "s.jsonl")
    view = pi.view(result.working_copy)
    assert context_mismatches(as_window(result.compacted_window), view) == []
    assert set(result.protected_entry_ids) <= {m.entry_id for m in view.context}
