"""REPLAY_FLAG_WRONG / MUTATED_IDS_WRONG: the flags a compactor reports against the recording's ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Code, Defect

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactResult
    from replaylab.safety.ledger import Ledger


def flag_defects(outcome: CompactResult, ledger: Ledger) -> list[Defect]:
    """REPLAY_FLAG_WRONG / MUTATED_IDS_WRONG: what compact() reports vs the recording's ledger."""
    defects = []
    if outcome.replay_safe != ledger.replay_safe:
        defects.append(
            Defect.of(
                Code.REPLAY_FLAG_WRONG,
                "compact() reports replaySafe that disagrees with the ledger",
                expected=ledger.replay_safe,
                actual=outcome.replay_safe,
            )
        )
    expected = list(ledger.mutated_event_ids)
    actual = list(outcome.mutated_event_ids)
    if actual != expected:
        missing = [e for e in expected if e not in actual]
        extra = [e for e in actual if e not in expected]
        defects.append(
            Defect.of(
                Code.MUTATED_IDS_WRONG,
                f"mutatedEventIds: {len(missing)} missing, {len(extra)} extra",
                expected=expected,
                actual=actual,
                detail={"missing": missing, "extra": extra},
            )
        )
    return defects


def recorded_flag_defects(item: AfterRuns) -> list[Defect]:
    """The first compaction's flags against the ledger of the path it compacted: the history up
    to the compaction point."""
    from replaylab.safety.ledger import build_ledger

    return flag_defects(item.first, build_ledger(item.transcript, item.classifier, path=item.history, memo=item.memo))
