"""The compaction entry appended to the working copy: pi's `compaction` entry with replaylab's
account of it under `details.replaylab`, the entries it restates after itself
(`transcript.restated`), and the working copy they go to."""

from __future__ import annotations

import datetime as _dt
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.compaction.job import Job
from replaylab.compaction.params import CompactParams, CompactResult
from replaylab.compaction.plan import Plan
from replaylab.compaction.plan_summary import PlanSummary
from replaylab.transcript.context import build_window
from replaylab.transcript.ids import derived_entry_id
from replaylab.transcript.model import AnyEntry, CompactionEntry
from replaylab.transcript.restated import restated_copy, restated_sources
from replaylab.transcript.writer import TranscriptWriter

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

REPLAYLAB_DETAILS_VERSION = 1


def compaction_entry(
    job: Job, result: CompactResult, path: list[AnyEntry], plan: Plan, summary: PlanSummary
) -> CompactionEntry:
    """The entry `plan` with `summary` appends after the leaf (`tokensAfter` is filled in once
    the window it makes is measured). `result` holds what is known before it: the ledger's
    verdict, the token counts and the diagnostic id."""
    taken = {e.id for e in path}
    entry_id = derived_entry_id(taken, path[-1].id if path else "", "compaction", job.mode)
    # a compaction that restates keeps nothing itself: every rebuild then shows what follows it
    keeps_nothing = bool(plan.restated) or plan.first_kept_index >= len(path)
    first_kept = entry_id if keeps_nothing else path[plan.first_kept_index].id
    sources = restated_sources(path, job.memo)
    protected = [sources.get(i, i) for i in plan.protection.entry_ids]
    ours: dict[str, Any] = {
        "version": REPLAYLAB_DETAILS_VERSION,
        "mode": job.mode,
        "protectedEntryIds": protected,
        "mutatedEventIds": result.mutated_event_ids,
        "replaySafe": result.replay_safe,
        "tokensBefore": result.original_token_count,
        "tokensAfter": None,
        "summaryAttempts": summary.outcome.calls,
        "summarizer": summary.outcome.source,
        "qualityGuard": {
            "ok": summary.outcome.guard_ok,
            "rounds": summary.outcome.guard_rounds,
            "reasons": summary.outcome.reasons,
        },
        "cutPoint": {
            "keepRecentTokens": plan.keep_recent,
            "boundaryRule": job.params.boundary_rule,
            "isSplitTurn": plan.cut.is_split_turn,
            "piFirstKeptEntryId": path[plan.cut.first_kept_index].id if plan.cut.first_kept_index < len(path) else None,
        },
        "budgetTokens": job.budget,
        "diagId": result.diag_id,
    }
    if plan.restated:
        ours["restated"] = {"protected": len(protected), "tail": len(plan.restated) - len(protected)}
    if plan.shrunk:
        ours["truncatedEntryIds"] = [sources.get(e.id, e.id) for e in plan.restated if e.id in plan.shrunk]
    data: dict[str, Any] = {
        "type": "compaction",
        "id": entry_id,
        "parentId": path[-1].id,
        "timestamp": _now(),
        "summary": summary.text,
        "firstKeptEntryId": first_kept,
        "tokensBefore": result.tokens_before,
        "details": {"readFiles": summary.read_files, "modifiedFiles": summary.modified_files, "replaylab": ours},
    }
    if summary.read_files is None:  # the agent writes no lists with this summary: replaylab's account only
        data["details"] = {"replaylab": ours}
    if job.safeguard_like:
        data["fromHook"] = True
    if job.rules is not None:  # what the agent's own entry carries for its rebuild
        # the window the job's memo already holds (the harness built it): not rebuilt per attempt
        data.update(job.rules.compaction_fields(build_window(path, job.memo), data["timestamp"]))
    return CompactionEntry.model_validate(data)


def restatements(
    path: list[AnyEntry],
    plan: Plan,
    compaction_id: str,
    memo: ItemMemo | None = None,
    shown: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The entries appended after the compaction entry: each of `plan.restated`, byte for byte,
    chained in order from the compaction, naming the entry it restates (the first of a chain); a
    protected result `plan.shrunk` holds is written shortened, saying so; an entry the window before
    showed (`shown`: its entry ids) although marked `excludeFromContext` (a reset kept it) is written
    without the mark, saying so (`restated_copy`)."""
    taken = {e.id for e in path} | {compaction_id}
    sources = restated_sources(path, memo)
    out: list[dict[str, Any]] = []
    parent = compaction_id
    for entry in plan.restated:
        copy_id = derived_entry_id(taken, compaction_id, entry.id, "restated")
        source_id = sources.get(entry.id, entry.id)
        out.append(
            restated_copy(
                entry,
                entry_id=copy_id,
                parent_id=parent,
                source_id=source_id,
                truncated=plan.shrunk.get(entry.id),
                shown=entry.id in shown,
            )
        )
        parent = copy_id
    return out


def working_copy_writer(
    params: CompactParams, parsed: Any, parsed_sha256: str | None, lines: int | None = None
) -> TranscriptWriter:
    """A fresh working copy of the recording (`workingCopy`, else a temp file), started from the
    parse `compact()` already made of the same bytes; `lines`: only the file's first lines
    (`AgentRules.lines_to_copy`)."""
    session_file = Path(params.session_file)
    destination = (
        Path(params.working_copy)
        if params.working_copy
        else Path(tempfile.mkdtemp(prefix="replaylab-compact-")) / session_file.name
    )
    return TranscriptWriter.working_copy(
        session_file, destination, parsed=parsed, parsed_sha256=parsed_sha256, lines=lines
    )


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
