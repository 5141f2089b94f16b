"""The pipeline's own check of a compactor's output: never trust the compactor under test.

`compact()` runs the replayCheck invariants on its own result, but a QA tool that only reads the
findings a compactor reports about itself cannot catch a compactor that does not check (every
upstream one) or checks wrongly. `rechecked(compactor)` wraps any compactor (the default one or a
seeded mutant of `replaylab selftest`) and, after every call, re-derives from the working copy
alone — the entries before the call and the entries it appended — what the compaction did:

* the replayCheck invariants (`compaction.invariants`: MUTATION_DROPPED / MUTATION_ALTERED,
  PAIR_BROKEN, THINKING_ALTERED, REPLAY_FLAG_WRONG / MUTATED_IDS_WRONG vs the ledger of the
  compacted path) on the window rebuilt from the working copy, as pi rebuilds it (whatever the
  compactor says it kept, only what pi shows counts);
* the flags persisted in the compaction entry (`details.replaylab.replaySafe / mutatedEventIds`);
* DUPLICATE_SIDE_EFFECT: a mutating event in the compacted window that the path before the call
  did not hold, repeating the tool and arguments of one it did (a compaction retry that replays a
  send: openclaw#126707, #84139) — a new call, not a copy of the recorded one standing in its place;
* COMPACTION_LOOP: nothing reaches the model between the previous compaction and this one — a
  summary of a summary (openclaw#12170); what a compaction restated after itself is not new;
* SUMMARY_INVALID: the quality guard failed on its last attempt, or the summary wipes the memory
  although the item's agent finds a real conversation to summarize (or a previous summary held
  one): empty, an empty skeleton (openclaw#127997), a "Summary unavailable" placeholder
  (openclaw#5224);
* TRANSCRIPT_REWRITTEN: the working copy is not append-only;
* the `compactedWindow` the compactor reports vs pi's window: a dropped mutating entry it
  claims to have kept is named so in its MUTATION_DROPPED.

Defects equal to the compactor's own findings collapse in the pipeline's de-duplication; so that
they can, the compactor's findings get the turn of their entry as these do (a compactor knows no
turns).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.defects import Code, Defect
from replaylab.transcript.context import WindowMessage, build_window, entry_to_message
from replaylab.transcript.load import Transcript, load_transcript
from replaylab.transcript.model import (
    AnyEntry,
    CompactionEntry,
)
from replaylab.upstream.openclaw_2026_4_12 import SUMMARY_UNAVAILABLE_MARKERS

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactParams, CompactResult
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.writer import TranscriptWriter

Compactor = Callable[..., Any]


def rechecked(compactor: Compactor, memo: ItemMemo | None = None) -> Compactor:
    """`compactor` with the pipeline's independent checks added to every result's `findings`;
    `memo`: the QA pipeline item's (`ItemMemo`), for the windows and ledgers the checks read."""

    @functools.wraps(compactor)
    def run(
        params: CompactParams,
        *,
        classifier: ToolClassifier | None = None,
        writer: TranscriptWriter | None = None,
        **kwargs: Any,
    ) -> Any:
        copy = Path(params.session_file)
        own = writer if writer is not None and writer.writes_to(copy) else None
        before = _copy_state(copy, own)
        transcript = _read(copy, own)
        path = transcript.path_to(params.leaf_id, memo)
        outcome = compactor(params, classifier=classifier, writer=writer, **kwargs)
        turns = entry_turns(path, memo)
        found: list[Defect] = []
        if not _prefix_kept(copy, before, own):
            found.append(
                Defect.of(
                    Code.TRANSCRIPT_REWRITTEN,
                    "the compactor rewrote the working copy instead of appending to it",
                    expected=before[1],
                    actual="prefix changed",
                )
            )
        elif outcome.success and outcome.compaction_event_id:
            after = _read(copy, writer)
            if outcome.compaction_event_id in after.by_id:  # where its context is rebuilt, read off the file
                outcome.leaf_id = compaction_leaf(after, outcome.compaction_event_id)
            found.extend(
                compaction_defects(
                    transcript, path, outcome, classifier, params, after_transcript=after, memo=memo, turns=turns
                )
            )
        outcome.findings = [located(d, turns) for d in outcome.findings or []] + found
        return outcome

    return run


def entry_turns(path: list[AnyEntry], memo: ItemMemo | None = None) -> dict[str, int]:
    """entry id → the number of the turn it belongs to (1-based, as the replay's traces number them)."""
    from replaylab.replay import split_turns
    from replaylab.replay.trace import turn_number

    out: dict[str, int] = {}
    for turn in split_turns(path, memo):
        for entry in (*turn.inputs, *turn.steps, *turn.results.values()):
            out.setdefault(entry.id, turn_number(turn.index))
    return out


def located(defect: Defect, turns: dict[str, int]) -> Defect:
    """`defect` with the turn of its entry when it names none: a compactor's own finding knows no
    turns, and the same finding found again here must stay one finding."""
    if defect.where.turn is not None or defect.where.entry_id not in turns:
        return defect
    return defect.model_copy(update={"where": defect.where.model_copy(update={"turn": turns[defect.where.entry_id]})})


def located_in_file(
    findings: list[Defect], session_file: Path, leaf_id: str | None = None, memo: ItemMemo | None = None
) -> list[Defect]:
    """`findings` of a compaction of `session_file` (up to `leaf_id`), each with the turn of its
    entry, turns by the item's agent (`memo`): what `replaylab compact` prints, since the compactor
    itself knows no turns. The file is read again only when a finding has an entry and no turn."""
    if not any(d.where.turn is None and d.where.entry_id for d in findings):
        return findings
    turns = entry_turns(load_transcript(session_file).path_to(leaf_id, memo), memo)
    return [located(d, turns) for d in findings]


def _read(copy: Path, writer: TranscriptWriter | None) -> Any:
    """The working copy as a fresh parse reads it. The pipeline's writer gives that without
    parsing again when only it wrote to the file since (`TranscriptWriter.transcript`: anything
    else writing to it breaks its seal and forces a parse), so this stays a reading of the file,
    independent of what the compactor reports."""
    return writer.transcript() if writer is not None else load_transcript(copy)


def compaction_defects(
    transcript: Any,
    path: list[AnyEntry],
    outcome: CompactResult,
    classifier: ToolClassifier | None,
    params: CompactParams,
    *,
    after_transcript: Any = None,
    memo: ItemMemo | None = None,
    turns: dict[str, int] | None = None,
) -> list[Defect]:
    """Every check of the module docstring for one successful compaction of `path`: the working
    copy (`transcript`, read before the compactor ran; `after_transcript` after it, read again
    from the file when not given) up to the compacted leaf; `turns`: `entry_turns(path)`."""
    from replaylab.compaction.invariants import (
        check_flags,
        check_mutations_kept,
        check_pairs,
        check_thinking,
        ledger_events,
    )
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger

    classifier = classifier or ToolClassifier()
    after_transcript = after_transcript or load_transcript(Path(params.session_file))
    # the window is rebuilt where the compaction left the file: after what it restated after itself
    entry_path = after_transcript.path_to(outcome.compaction_event_id, memo)
    entry = entry_path[-1] if entry_path else None
    after_path = after_transcript.path_to(compaction_leaf(after_transcript, outcome.compaction_event_id), memo)
    before, after = build_window(path, memo), build_window(after_path, memo)
    ledger = build_ledger(transcript, classifier, path=path, memo=memo)
    details = _ours(entry)
    turns = turns if turns is not None else entry_turns(path, memo)
    allowed = bool(getattr(params, "allow_mutating_event_truncate", False))
    kept = check_mutations_kept(path, before, after, ledger_events(ledger), turns, truncation_allowed=allowed)
    defects = claimed_kept(kept, outcome, after)
    defects += check_pairs(path, after, turns, memo.rules if memo is not None else None, before)
    defects += [located(d, turns) for d in check_thinking(path, after)]
    defects += check_flags(outcome.replay_safe, outcome.mutated_event_ids, ledger.mutated_event_ids)
    if details:
        defects += [
            _persisted(d)
            for d in check_flags(details.get("replaySafe"), details.get("mutatedEventIds"), ledger.mutated_event_ids)
        ]
    defects += duplicate_events(path, after, ledger, classifier, memo)
    if isinstance(entry, CompactionEntry):
        defects += loop_defects(entry_path, memo)
        defects += summary_defects(entry, before, after, entry_path, outcome, memo)
    return defects


def compaction_leaf(transcript: Transcript, compaction_id: str | None) -> str | None:
    """Where the context after a compaction is rebuilt: the file's leaf, when the compaction lies on
    its path (a compactor appends its entry and what it restates after it, nothing else), else the
    compaction entry itself. Read off the file, whatever the compactor reports."""
    leaf = transcript.leaf_id
    if leaf is not None and any(e.id == compaction_id for e in transcript.path_to(leaf)):
        return leaf
    return compaction_id


# ---------------------------------------------------------------- the window it reports


def claimed_kept(defects: list[Defect], outcome: CompactResult, after: list[WindowMessage]) -> list[Defect]:
    """The compactor's `compactedWindow` against the window pi rebuilds (`after`): a dropped
    mutating entry it claims to have kept says so in its MUTATION_DROPPED, and any other
    difference goes to the result's notes. Only pi's window counts either way."""
    reported = [
        item.get("entryId") for item in getattr(outcome, "compacted_window", None) or [] if isinstance(item, dict)
    ]
    if not reported:
        return defects
    claimed = set(reported)
    shown = [w.entry_id for w in after]
    if reported != shown and hasattr(outcome, "notes"):
        missing = [i for i in reported if i not in set(shown)]
        unclaimed = [i for i in shown if i not in claimed]
        outcome.notes.append(
            f"compactedWindow differs from the window pi rebuilds from the working copy: "
            f"{len(missing)} entries reported but not shown, {len(unclaimed)} shown but not reported"
        )
    out = []
    for defect in defects:
        dropped = defect.detail.get("dropped", []) if defect.code == Code.MUTATION_DROPPED else []
        lied = [i for i in dropped if i in claimed]
        if lied:
            defect = defect.model_copy(
                update={
                    "message": f"{defect.message}; the compactor's compactedWindow claims it kept {', '.join(lied)}",
                    "detail": {**defect.detail, "claimedKept": lied},
                }
            )
        out.append(defect)
    return out


# ---------------------------------------------------------------- flags


def _ours(entry: Any) -> dict[str, Any]:
    details = getattr(entry, "details", None)
    ours = details.get("replaylab") if isinstance(details, dict) else None
    return ours if isinstance(ours, dict) else {}


def _persisted(defect: Defect) -> Defect:
    return defect.model_copy(update={"message": f"the compaction entry's details.replaylab: {defect.message}"})


# ---------------------------------------------------------------- duplicate side effects


def duplicate_events(
    path: list[AnyEntry],
    after: list[WindowMessage],
    ledger: Ledger,
    classifier: ToolClassifier,
    memo: ItemMemo | None = None,
) -> list[Defect]:
    """DUPLICATE_SIDE_EFFECT: a mutating event the compaction put in the window (its entries were
    not on the path) that repeats the tool and arguments of an event that already ran."""
    from replaylab.safety.ledger import ledger_for_window

    on_path = {e.id for e in path}
    in_window = {w.entry_id for w in after}
    ran = {(e.tool, e.args_hash): e for e in ledger.events if not e.session}
    calls = {e.tool_call_id: e for e in ledger.events if not e.session}
    defects = []
    for event in ledger_for_window(after, classifier, memo=memo).events:
        if event.entry_id in on_path:
            continue
        same_call = calls.get(event.tool_call_id)
        if (
            same_call is not None
            and (same_call.tool, same_call.args_hash) == (event.tool, event.args_hash)
            and same_call.entry_id not in in_window
        ):
            continue  # the recorded call itself, restated in place of its entry: no new call was made
        original = ran.get((event.tool, event.args_hash))
        if original is not None:
            defects.append(
                Defect.of(
                    Code.DUPLICATE_SIDE_EFFECT,
                    f"the compacted window holds {event.tool} ({event.tool_call_id}, entry {event.entry_id}) "
                    f"again: same tool and arguments as {original.tool_call_id} (entry {original.entry_id}), "
                    "which already ran",
                    expected="each side effect once",
                    actual=[original.entry_id, event.entry_id],
                    entry_id=event.entry_id,
                    tool_call_id=event.tool_call_id,
                    tool=event.tool,
                )
            )
    return defects


# ---------------------------------------------------------------- loops and summaries


def loop_defects(after_path: list[AnyEntry], memo: ItemMemo | None = None) -> list[Defect]:
    """COMPACTION_LOOP: the previous compaction on the path is followed by nothing the model sees
    but what that compaction restated (`transcript.restated`: entries the model had seen), read as
    the agents' double-compaction refusal reads it (`compaction.restated_leaf`)."""
    from replaylab.compaction.restated_leaf import compaction_still_leaf

    entry = after_path[-1]
    index = compaction_still_leaf(after_path, memo, shows=entry_to_message, end=len(after_path) - 1)
    if index is None:
        return []
    earlier = after_path[index]
    return [
        Defect.of(
            Code.COMPACTION_LOOP,
            f"compaction {entry.id} follows compaction {earlier.id} with nothing new in between: "
            "it summarizes a summary (openclaw#12170)",
            entry_id=entry.id,
            expected="a new conversation since the last compaction",
            actual=f"{earlier.id} → {entry.id}",
        )
    ]


def summary_defects(
    entry: CompactionEntry,
    before: list[WindowMessage],
    after: list[WindowMessage],
    after_path: list[AnyEntry],
    outcome: CompactResult | None,
    memo: ItemMemo | None = None,
) -> list[Defect]:
    """SUMMARY_INVALID (see the module docstring); a real conversation as the item's agent
    (`memo.rules`, None: pi 0.73.1's) finds one, so only a summary it would write is judged."""
    from replaylab.compaction.summary.real_conversation import compaction_has_real_conversation
    from replaylab.compaction.summary.sections import is_empty_skeleton
    from replaylab.upstream.profiles import profile_named

    guard = getattr(outcome, "quality_guard", None)
    if guard is not None and getattr(guard, "enabled", True) and not getattr(guard, "ok", True):
        reasons = ", ".join(getattr(guard, "reasons", [])[:3])
        attempts = getattr(guard, "attempts", 0)
        # a deterministic summarizer is asked once: the same input would give the same summary
        tried = f"after {attempts} attempts" if attempts > 1 else "on its only attempt"
        return [
            Defect.of(
                Code.SUMMARY_INVALID,
                f"the quality guard failed {tried} ({reasons})",
                entry_id=entry.id,
                expected="summary passes the quality guard",
                actual=reasons,
            )
        ]
    kept = {w.entry_id for w in after}
    span = [w.message for w in before if w.entry_id not in kept]
    previous = next((e for e in reversed(after_path[:-1]) if isinstance(e, CompactionEntry)), None)
    rules = profile_named(memo.rules.name).real_conversation if memo is not None and memo.rules is not None else None
    real = compaction_has_real_conversation(rules, span, before)
    had_memory = real or (previous is not None and not is_empty_skeleton(previous.summary))
    summary = entry.summary or ""
    if not had_memory:
        return []
    wipe = None
    if not summary.strip():
        wipe = "an empty summary"
    elif any(marker in summary for marker in SUMMARY_UNAVAILABLE_MARKERS):
        wipe = "a 'Summary unavailable' placeholder (openclaw#5224)"
    elif is_empty_skeleton(summary):
        wipe = "an empty skeleton (openclaw#127997)"
    if wipe is None:
        return []
    what = f"{len(span)} summarized messages" + (" and a previous summary" if previous is not None else "")
    return [
        Defect.of(
            Code.SUMMARY_INVALID,
            f"the summary is {wipe}: the memory of {what} is wiped",
            entry_id=entry.id,
            expected="a summary of the span",
            actual=summary[:300],
        )
    ]


# ---------------------------------------------------------------- append-only


def _copy_state(path: Path, writer: TranscriptWriter | None = None) -> tuple[int, str, bool]:
    """The working copy's size and sha256, and whether its writer's seal vouched for them: then
    they come from the writer without reading the file (nothing else wrote to it since the
    writer last wrote or read it all)."""
    sealed = writer.sealed_state() if writer is not None else None
    if sealed is not None:
        return sealed[0], sealed[1], True
    size = path.stat().st_size
    return size, _prefix_hash(path, size), False


def _prefix_kept(path: Path, before: tuple[int, str, bool], writer: TranscriptWriter | None = None) -> bool:
    """Whether the file still starts with the bytes it held before. When the writer's seal held
    then and holds now, nothing but the writer wrote in between, and each of its appends checked
    the prefix first (`TranscriptWriter.append`): no read needed. Otherwise the prefix is read."""
    size, digest, vouched = before
    sealed = writer.sealed_state() if writer is not None and vouched else None
    if sealed is not None and sealed[0] >= size:
        return True
    return _prefix_hash(path, size) == digest


def _prefix_hash(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    remaining = size
    with open(path, "rb") as handle:
        while remaining > 0:
            chunk = handle.read(min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    return digest.hexdigest()
