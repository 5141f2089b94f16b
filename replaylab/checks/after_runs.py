"""What the checks after an item's runs read: the runs, the compactions and the windows, as one value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.checks.agent_window import WindowCheck
    from replaylab.compaction.params import CompactResult
    from replaylab.replay.trace import RunTrace
    from replaylab.results import BudgetView
    from replaylab.safety.classify import ToolClassifier
    from replaylab.suite import Scenario
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.model import AnyEntry


@dataclass(frozen=True)
class AfterRuns:
    """One item after both runs: everything a check may judge, read-only."""

    #: the item's scenario with its budget in numbers
    scenario: Scenario
    budget: BudgetView
    transcript: Transcript
    classifier: ToolClassifier
    #: the recording's path up to the first compaction point: what the first compaction answers for
    history: list[AnyEntry]
    #: the first compaction (successful), then every later one, successful or not
    first: CompactResult
    later: list[CompactResult]
    #: the first compaction's window, read again from the working copy after the runs
    first_window: list[WindowMessage]
    baseline: RunTrace
    compacted: RunTrace
    #: what the compacted run's tools and model found (blocked calls, cassette misses)
    compacted_run_findings: list[Any]
    #: the values the compacted run's model lost (`LostRecord`s), to tell a call blocked for a
    #: value only an earlier blocked call would have brought
    compacted_lost: tuple[Any, ...]
    #: every compacted window compared with the agent's own rebuild
    agent_windows: tuple[WindowCheck, ...]
    memo: ItemMemo
