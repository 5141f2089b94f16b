"""What the first compaction of an item gives the pipeline, as a type: a compacted window to
replay on, nothing worth compacting (the scenario is not exercised), or a failure (a defect)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.transcript.context import WindowMessage


def found_nothing_to_gain(result: Any) -> bool:
    """A compaction that failed only because the compacted window would not be smaller: nothing
    was worth compacting, which is not a fault of the compactor."""
    return not result.success and result.failure == "nothing_to_gain"


@dataclass(frozen=True)
class Compacted:
    result: Any  # the compactor's `CompactResult`
    window: list[WindowMessage]  # the compacted window, rebuilt from the working copy
    pi_check: Any = None  # `pi_check.PiCheck` of that window; None when not checked


@dataclass(frozen=True)
class NothingToGain:
    result: Any


@dataclass(frozen=True)
class CompactionFailed:
    result: Any


CompactionOutcome = Compacted | NothingToGain | CompactionFailed
