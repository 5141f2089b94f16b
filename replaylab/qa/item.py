"""An item's name, and the values its pipeline's arrows hand on (`qa.pipeline`): what the replay
found so far, the recording loaded and classified (the ledger arrow, `classify`), where both runs
start, the runs and the working copy compaction appends to.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.causes import ItemCause
from replaylab.checks.agent_window import WindowCheck
from replaylab.checks.lost_legend import CompactionStep
from replaylab.defects import Defect
from replaylab.qa.plan import ItemPlan
from replaylab.qa.sources import SourceFiles
from replaylab.replay.trace import RunTrace
from replaylab.results import BudgetView, CompactionView, Divergence, LostValue, RecordedCompactionView, WindowItem
from replaylab.safety.ledger import LedgerView
from replaylab.suite import MatchSettings, Scenario
from replaylab.transcript.memo import ItemMemo

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactParams
    from replaylab.replay import Model, ToolExecutor, Turn
    from replaylab.replay.agent.model_protocol import LostRecord
    from replaylab.replay.tools.pack import ToolPack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript import TranscriptWriter
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.model import AnyEntry


def item_name(recording: Path, scenario: Scenario) -> str:
    """Readable pytest id part: `<recording stem>::<scenario>` (the suite is the collector)."""
    return f"{Path(recording).name.removesuffix('.jsonl')}::{scenario.name}"


def item_id(recording: Path, scenario: Scenario) -> str:
    return f"{scenario.suite}::{item_name(recording, scenario)}"


@dataclass(frozen=True)
class Evidence:
    """What the replay of one item found, as far as it got: the parts of its `ItemResult`."""

    diagnostics: tuple[str, ...] = ()
    ledger_before: LedgerView | None = None
    window_before: list[WindowItem] = field(default_factory=list)
    baseline: RunTrace | None = None
    compaction: CompactionView | None = None
    window_after: list[WindowItem] = field(default_factory=list)
    ledger_after: LedgerView | None = None
    ledger_after_point: list[str] = field(default_factory=list)
    compacted: RunTrace | None = None
    first_divergence: Divergence | None = None
    #: the legend of the markers the replay model put where values were lost (`qa.lost_legend`)
    lost_values: list[LostValue] = field(default_factory=list)
    defects: tuple[Defect, ...] = ()
    #: why the scenario was not exercised (no compaction happened); None when it was
    not_exercised: str | None = None
    #: the cause of not being exercised, or of the first compaction's `CANNOT_COMPACT`
    cause: ItemCause | None = None
    #: compaction was due and could not succeed (`CANNOT_COMPACT`): nothing was replayed on a compacted window
    uncompacted: bool = False
    #: the budget the item ran with (None: it stopped before one was settled)
    budget: BudgetView | None = None
    #: the compactions the recording itself holds, audited (`checks.recorded`)
    recorded_compactions: list[RecordedCompactionView] = field(default_factory=list)
    #: the compacted windows compared with the agent's own context, equal or not (`checks.agent_window`)
    window_checks: tuple[WindowCheck, ...] = ()

    def adding(self, defects: Iterable[Defect] = (), **parts: Any) -> Evidence:
        return replace(self, defects=(*self.defects, *defects), **parts)


@dataclass(frozen=True)
class LoadedItem:
    """The recording loaded and its tools classified: what every arrow after the ledger reads."""

    plan: ItemPlan
    #: the plan's scenario, with its budget in numbers once it is settled (`starting_point`)
    scenario: Scenario
    files: SourceFiles
    transcript: Transcript
    pack: ToolPack | None
    classifier: ToolClassifier
    ledger: Ledger
    #: the run's memo: what its arrows compute once from the messages they all read
    memo: ItemMemo

    @property
    def mode(self) -> str:
        return self.plan.mode

    @property
    def drift_rules(self) -> MatchSettings:
        """How the baseline must match the recording: exactly for a model that replays it, by
        the suite's match rules for a real one."""
        from replaylab.checks.diff import EXACT
        from replaylab.model_spec import is_litellm

        return self.scenario.match if is_litellm(self.plan.model_spec) else EXACT

    def model(self, run: str) -> Model:
        """A new model for one run, `baseline` or `compacted` (a model keeps state over the turns
        it answers). A litellm model gets the suite's settings (secrets from the environment) and
        the run's own LLM cassette."""
        from replaylab.model_spec import is_litellm
        from replaylab.qa.setup import llm_cassette_path
        from replaylab.replay import make_model

        spec = self.plan.model_spec
        if not is_litellm(spec):
            return make_model(
                spec,
                recording=self.transcript,
                record_mode=self.plan.record_mode,
                memo=self.memo,
                grounding=self.scenario.match.grounding_rules(),
            )
        mode = self.plan.record_mode
        settings = self.scenario.model_settings.model_options(os.environ)
        if self.scenario.model_settings.local_model:
            from replaylab.local_model.shared import REPLAY_ONLY_BASE_URL, shared_endpoint

            # the compacted run of a window the model itself has: a server of that context size
            window = self.scenario.context_window
            own = window.tokens if run == "compacted" and window and window.overflow == "model" else None
            settings["api_base"] = shared_endpoint(own).base_url if mode != "none" else REPLAY_ONLY_BASE_URL
        return make_model(
            spec,
            recording=self.transcript,
            llm_cassette=llm_cassette_path(self.files.recording, self.scenario, run, repeat=self.plan.repeat),
            record_mode=mode,
            memo=self.memo,
            **settings,
        )


@dataclass(frozen=True)
class NotExercised:
    reason: str
    cause: ItemCause
    budget: BudgetView | None = None


@dataclass(frozen=True)
class StartPoint:
    """Where both runs start: the recorded history up to the first compaction point, and the
    recorded turns replayed from there."""

    path: list[AnyEntry]  # the recording's root → leaf path
    points: list[int]  # indexes of the turns before which compaction happens
    history: list[AnyEntry]
    later: list[Turn]
    full_window: list[WindowMessage]  # the baseline's window: the history as pi would send it
    scenario: Scenario  # the item's scenario with its budget in numbers
    budget: BudgetView
    protected_tokens: int = 0  # of the history window's protected entries
    peak: int = 0  # the largest turn-start window of the recording
    #: what the item says of an earlier point that reached no turn and of recorded turns not
    #: replayed, where the agent's context starts afresh (None: every later turn is replayed)
    fresh_start: str | None = None
    #: where a compaction within a run happens ("within turn 1's run, before reply 6"; None: at
    #: the start of turn `first`)
    within: str | None = None

    @property
    def first(self) -> int:
        return self.points[0]


@dataclass(frozen=True)
class Baseline:
    trace: RunTrace
    #: the run's tools; their state before it ran starts the compacted run (`ToolExecutor.fresh`)
    executor: ToolExecutor
    #: what the baseline shows of the recording and its cassette (drift, unanswered calls)
    defects: list[Defect]
    #: the values its model lost (on the full window: none, unless the recording itself lacks them)
    lost: list[LostRecord] = field(default_factory=list)


@dataclass(frozen=True)
class WorkingCopy:
    """The recording's copy that compaction appends to, and how to compact it again."""

    writer: TranscriptWriter
    params: CompactParams
    compactor: Callable[..., Any]  # the compactor under test, its output re-checked by the pipeline


@dataclass(frozen=True)
class CompactedRun:
    trace: RunTrace
    later_compactions: list[Any]  # the `CompactResult` of each compaction after the first
    executor_defects: list[Defect]
    #: the first compaction's window, read again from the working copy after the run: the report
    #: and the checks see the copy as the run left it, whatever a compactor did to it meanwhile
    first_window: list[WindowMessage]
    #: the values its model lost, and every successful compaction with the window it left
    lost: list[LostRecord] = field(default_factory=list)
    compactions: list[CompactionStep] = field(default_factory=list)
    #: each later compaction's window and the working copy's leaf right after it (where the agent
    #: would rebuild its context from), for the check against the agent's own rebuild
    agent_windows: list[tuple[str, list[WindowMessage]]] = field(default_factory=list)


def classify(plan: ItemPlan, files: SourceFiles, transcript: Transcript, memo: ItemMemo) -> LoadedItem:
    """The ledger arrow: the tools' classes (suite, tool pack, next to the recording), then the
    recording's mutating events by them."""
    from replaylab.qa.setup import classifier_for, load_pack
    from replaylab.safety.ledger import build_ledger

    pack = load_pack(plan.scenario)
    classifier = classifier_for(plan.scenario, files.recording, pack)
    if plan.classifier_override is not None:
        classifier = plan.classifier_override(classifier)
    ledger = build_ledger(transcript, classifier, memo=memo)
    return LoadedItem(plan, plan.scenario, files, transcript, pack, classifier, ledger, memo)
