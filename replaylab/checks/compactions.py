"""What the compactions themselves broke: the re-check's findings of each, later compactions that
failed, and a budget no later compaction could meet."""

from __future__ import annotations

from replaylab.checks.after_runs import AfterRuns
from replaylab.checks.cannot_compact import cannot_compact
from replaylab.compactors.external import NOT_COMPACTED, compaction_failure
from replaylab.compactors.outcome import cannot_succeed, found_nothing_to_gain, refused_by_agent
from replaylab.defects import Defect


def compaction_findings(item: AfterRuns) -> list[Defect]:
    """The re-check's findings of every compaction (`compactors.recheck`); a failed compaction's
    own COMPACTION_FAILED / COMPACTION_CANCELLED is reported once, by `later_compaction_failures`."""
    return [
        d
        for result in (item.first, *item.later)
        for d in result.findings
        if result.success or d.code not in NOT_COMPACTED
    ]


def later_compaction_failures(item: AfterRuns) -> list[Defect]:
    """COMPACTION_FAILED (COMPACTION_CANCELLED) for each later compaction the compactor failed
    (declined), and one CANNOT_COMPACT
    (the first, with the count) when the budget could no longer be met: pi tries again at every
    later turn. Finding nothing worth compacting, or nothing the agent would compact, is no failure."""
    failed = [r for r in item.later if not r.success and not found_nothing_to_gain(r) and not refused_by_agent(r)]
    defects = [_later(compaction_failure(r)) for r in failed if not cannot_succeed(r)]
    impossible = [r for r in failed if cannot_succeed(r)]
    if impossible:
        defects.append(cannot_compact(impossible[0], item.scenario, item.budget, later=len(impossible)))
    return defects


def _later(defect: Defect) -> Defect:
    return defect.model_copy(update={"message": f"a later compaction failed: {defect.message}"})
