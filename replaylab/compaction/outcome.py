"""The `CompactResult` of a compaction that happened (with the replayCheck findings), or of one
that did not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.compaction.invariants import replay_check
from replaylab.compaction.job import Job
from replaylab.compaction.params import (
    CompactResult,
    CutPointInfo,
    Failure,
    QualityGuardResult,
)
from replaylab.compaction.plan import Plan
from replaylab.compaction.plan_summary import PlanSummary
from replaylab.compaction.window import window_item_json
from replaylab.defects import Code, Defect
from replaylab.safety.ledger import Ledger
from replaylab.transcript.context import WindowMessage, build_window
from replaylab.transcript.model import AnyEntry
from replaylab.transcript.writer import TranscriptWriter, file_sha256

#: how many of the summarizer's errors the result's notes repeat
MAX_ERROR_NOTES = 5


@dataclass(frozen=True)
class Written:
    """A compaction appended to the working copy: its plan, its summary and the entry's JSON."""

    plan: Plan
    summary: PlanSummary
    entry: dict[str, Any]
    writer: TranscriptWriter
    #: the last entry written: the compaction entry, or the last entry it restated after itself
    leaf_id: str


def fail(
    result: CompactResult,
    failure: Failure,
    *,
    plan: Plan | None = None,
    summary: PlanSummary | None = None,
    protected: list[str] | None = None,
) -> CompactResult:
    """`result` as a compaction that did not happen: the window stays as it was. `protected`: the
    entries safeguard would have had to keep (else the plan's protected entries)."""
    result.success = False
    result.failure = failure.kind
    result.error = failure.error
    result.protected_over_budget = failure.protected_over_budget
    result.needed_budget = failure.needed_budget
    if protected is not None:
        result.protected_entry_ids = list(protected)
    elif plan is not None:
        result.protected_entry_ids = list(plan.protection.entry_ids)
    if summary is not None:
        result.summary_text = summary.text
    result.compacted_token_count = result.original_token_count
    return result


def finish(
    job: Job, result: CompactResult, path: list[AnyEntry], before: list[WindowMessage], written: Written, ledger: Ledger
) -> CompactResult:
    """`result` as the compaction `written`: the window rebuilt from the working copy, and with
    replayCheck the invariants checked against the window before it."""
    params, plan, summary, data = job.params, written.plan, written.summary, written.entry
    copy = written.writer.transcript()
    after = build_window(copy.path_to(written.leaf_id, job.memo), job.memo)
    result.success = True
    result.compaction_event_id = data["id"]
    result.leaf_id = written.leaf_id
    result.first_kept_entry_id = data["firstKeptEntryId"]
    result.protected_entry_ids = list(data["details"]["replaylab"]["protectedEntryIds"])
    result.summary_text = summary.text
    result.summarizer = summary.outcome.source
    result.summary_attempts = summary.outcome.calls
    result.quality_guard = QualityGuardResult(
        ok=summary.outcome.guard_ok,
        attempts=summary.outcome.guard_rounds,
        reasons=list(summary.outcome.reasons),
        enabled=params.summarizer.quality_guard,
    )
    if summary.outcome.errors:
        result.notes.extend(summary.outcome.errors[:MAX_ERROR_NOTES])
    result.compacted_window = [window_item_json(w, job.tokens) for w in after]
    result.compacted_token_count = sum(item["tokens"] for item in result.compacted_window)
    result.token_saved = result.original_token_count - result.compacted_token_count
    cut = plan.cut
    result.cut_point = CutPointInfo(
        first_kept_entry_id=data["firstKeptEntryId"],
        first_kept_index=cut.first_kept_index,
        tail_entry_id=path[cut.first_kept_index].id if cut.first_kept_index < len(path) else None,
        boundary_start_entry_id=path[cut.boundary_start].id if cut.boundary_start < len(path) else None,
        turn_start_entry_id=path[cut.turn_start_index].id if cut.is_split_turn else None,
        is_split_turn=cut.is_split_turn,
        keep_recent_tokens=plan.keep_recent,
        boundary_rule=params.boundary_rule,
    )
    if params.replay_check:
        result.findings = replay_check(
            path,
            before,
            after,
            ledger=ledger,
            replay_safe=result.replay_safe,
            mutated_event_ids=result.mutated_event_ids,
            truncation_allowed=params.allow_mutating_event_truncate,
            rules=job.rules,
        )
        result.findings.extend(_written_findings(data, ledger))
        result.findings.extend(_recording_findings(result, Path(params.session_file), written.writer))
    return result


def _written_findings(data: dict[str, Any], ledger: Ledger) -> list[Defect]:
    """The entry's own account must agree with the ledger."""
    written = data["details"]["replaylab"]
    if written["mutatedEventIds"] != ledger.mutated_event_ids or written["replaySafe"] != ledger.replay_safe:
        return [
            Defect.of(
                Code.MUTATED_IDS_WRONG,
                "the compaction entry's details.replaylab disagree with the ledger",
                expected=ledger.mutated_event_ids,
                actual=written["mutatedEventIds"],
                entry_id=data["id"],
            )
        ]
    return []


def _recording_findings(result: CompactResult, session_file: Path, writer: TranscriptWriter) -> list[Defect]:
    """The recording must be byte for byte what it was (unless it is the writer's own file)."""
    if not writer.writes_to(session_file) and file_sha256(session_file) != result.recording_sha256:
        return [
            Defect.of(
                Code.TRANSCRIPT_REWRITTEN,
                "the recording changed during compact()",
                expected=result.recording_sha256,
                actual=file_sha256(session_file),
            )
        ]
    return []
