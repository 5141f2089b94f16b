"""The QA pipeline for one (recording × scenario), top to bottom (DESIGN §3).

    load → ledger → pick compaction point(s) → baseline run on the full window
         → compact() with replayCheck (appends to a working copy, never the recording)
         → compacted run on the compacted window (compacting again when the budget is crossed)
         → diff → defects → verdict

One function per arrow, each taking the values of the arrows before it and returning its own;
the `ItemResult` is assembled from them at the end. Nothing here is global, and a run is a value
(`ItemResult`) that crosses process boundaries as JSON. What the arrows compute once from the
messages they all read (estimates, texts, windows, ledgers) is the run's `ItemMemo`, made for
the run and passed down to every arrow that reads them.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.causes import (
    AGENT_REFUSES,
    COMPACTOR_UNAVAILABLE,
    MID_RUN,
    NEVER_CROSSES_BUDGET,
    ONE_USER_TURN,
    PAST_LAST_TURN,
    STARTS_AFRESH,
    SUMMARY_NOT_SMALLER,
    TOO_SMALL,
    Cause,
    ItemCause,
)
from replaylab.checks import AfterRuns, BeforeRuns, after_runs, before_runs
from replaylab.checks.agent_window import (
    WindowCheck,
    WindowsAsked,
    ask_windows,
    check_windows,
    start_oracle,
    unavailable_reason,
)
from replaylab.checks.cannot_compact import cannot_compact, cannot_compact_cause
from replaylab.checks.diff import drift_from_recording, first_divergence_of
from replaylab.checks.item import (
    abandoned_branches,
    cassette_missing,
    declared_over_rules,
    deduplicated,
    expected_flag_defects,
    kept_aside,
    pack_failed,
    recording_invalid,
    records_of_another_agent,
    unanswered_recorded_calls,
    unisolated_pack,
)
from replaylab.checks.lost_legend import CompactionStep, lost_legend, lost_records
from replaylab.checks.recorded import recorded_compactions
from replaylab.compactors.external import compaction_failure, compactor_under_test, start_worker
from replaylab.compactors.outcome import (
    CannotCompact,
    Compacted,
    CompactionFailed,
    CompactionOutcome,
    cannot_succeed,
    refused_after_compaction,
    refused_by_agent,
)
from replaylab.defects import Code, Defect
from replaylab.diagnostics import InputError
from replaylab.qa import views
from replaylab.qa.plan import ItemPlan, RunOptions, plan_item
from replaylab.qa.progress import audit_progress, report_phase, report_turns
from replaylab.qa.repeats import combined_repeats
from replaylab.qa.scratch import item_folder
from replaylab.qa.sources import SourceFiles, display_path
from replaylab.replay.tools.pack_data import PackFailure
from replaylab.replay.trace import RunTrace, turn_number
from replaylab.results import (
    BudgetView,
    CompactionView,
    Divergence,
    ItemResult,
    LostValue,
    RecordedCompactionView,
    WindowItem,
)
from replaylab.safety.ledger import LedgerView
from replaylab.suite import Expectations, MatchSettings, Scenario
from replaylab.transcript import load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.verdict import verdict

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactParams
    from replaylab.qa.boundaries import Boundary
    from replaylab.replay import Model, ToolExecutor, Turn
    from replaylab.replay.agent.model_protocol import LostRecord
    from replaylab.replay.overflow import OverflowRecovery, SessionRewrite, TruncationPlan
    from replaylab.replay.tools.pack import ToolPack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript import TranscriptWriter
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.model import AnyEntry
    from replaylab.transcript.rules import AgentRules


def item_name(recording: Path, scenario: Scenario) -> str:
    """Readable pytest id part: `<recording stem>::<scenario>` (the suite is the collector)."""
    return f"{Path(recording).name.removesuffix('.jsonl')}::{scenario.name}"


def item_id(recording: Path, scenario: Scenario) -> str:
    return f"{scenario.suite}::{item_name(recording, scenario)}"


#: the cyclic collector's thresholds while an item runs: (first generation, second, third).
#: An item allocates millions of short-lived objects beside the session it holds; at Python's
#: default (700, 10, 10) the older generations, which hold the whole session, are scanned again
#: every few thousand of them, a cost that grows with the session (superlinear on a large one).
ITEM_GC_THRESHOLDS = (10_000, 50, 100)


@contextmanager
def _item_collections() -> Iterator[None]:
    """Collect cycles less often while an item runs (`ITEM_GC_THRESHOLDS`), as before it after."""
    before = gc.get_threshold()
    gc.set_threshold(*ITEM_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def run_item(scenario: Scenario, recording: Path, options: RunOptions | None = None) -> ItemResult:
    """Replay one recording under one scenario (`repeats` times) and return its verdict and evidence."""
    with _item_collections():
        return _run_item(scenario, recording, options)


def _run_item(scenario: Scenario, recording: Path, options: RunOptions | None) -> ItemResult:
    started = time.perf_counter()
    plan = plan_item(scenario, Path(recording), options or RunOptions())
    # the agents' node processes the item will ask: their start overlaps its runs
    start_oracle(plan.profile, plan.verify_with_pi)
    start_worker(plan.compactor.spec, plan.profile)
    expect = scenario.expectations_for(plan.recording)
    runs = [_run_once(replace(plan, repeat=n), expect) for n in range(max(1, scenario.repeats))]
    result = runs[0] if len(runs) == 1 else combined_repeats(runs, expect, strict=plan.strict)
    result.excerpt_tool_results()
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _run_once(plan: ItemPlan, expect: Expectations) -> ItemResult:
    from replaylab.agents import item_memo

    files = SourceFiles.of(plan.recording, plan.known_states)
    with item_folder(plan.work_dir) as work:
        found = replay_and_compare(plan, files, work, item_memo(plan.profile))
    run_files = plan.after_item(plan.recording) if plan.after_item is not None else []
    defects = [*found.defects, *files.rewritten(), *run_files, *expected_flag_defects(found.ledger_before, expect)]
    final = verdict(
        defects,
        expect,
        exercised=found.not_exercised is None,
        uncompacted=found.uncompacted,
        strict=plan.strict,
        not_exercised_reason=found.not_exercised or "no compaction happened",
    )
    recording_sha256, cassette_sha256 = files.sha256
    scenario = plan.scenario
    return ItemResult(
        id=item_id(plan.recording, scenario),
        suite=scenario.suite,
        scenario=scenario.name,
        recording=display_path(plan.recording),
        model=plan.model_spec,
        compactor=plan.compactor.label,
        outcome=final.outcome,
        reason=final.reason,
        defects=defects,
        expected_defects=[c.value for c in expect.defects],
        missing_expected=final.missing_expected,
        recording_sha256=recording_sha256,
        cassette_sha256=cassette_sha256,
        diagnostics=list(found.diagnostics),
        ledger_before=found.ledger_before,
        ledger_after=found.ledger_after,
        ledger_after_point=found.ledger_after_point,
        window_before=found.window_before,
        window_after=found.window_after,
        compaction=found.compaction,
        budget=found.budget,
        cause=found.cause if final.outcome in ("skipped", "uncompacted") else None,
        recorded_compactions=found.recorded_compactions,
        baseline=found.baseline,
        compacted=found.compacted,
        first_divergence=found.first_divergence,
        lost_values=found.lost_values,
        agent=plan.profile.name,
        verified_against=found.window_checks[0].agent if found.window_checks else None,
        verified_windows=sum(1 for check in found.window_checks if check.equal),
    )


# ---------------------------------------------------------------- the values between the arrows


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


# ---------------------------------------------------------------- the data flow


def replay_and_compare(plan: ItemPlan, files: SourceFiles, work: Path, memo: ItemMemo) -> Evidence:
    """Every arrow from the recording to the defects, stopping where one leaves nothing to
    compare. The evidence takes each arrow's values as they come, so an input error midway (a
    recording, tool pack, script or model spec that cannot be used) keeps what came before it."""
    found = Evidence()
    cleanup = ExitStack()  # ends the tool process of live read tools with the item
    try:
        transcript = load_transcript(files.recording)
        found = found.adding(diagnostics=tuple(str(d) for d in transcript.diagnostics))
        if plan.strict and any(d.severity == "error" for d in transcript.diagnostics):
            raise InputError(transcript.diagnostics)
        if not files.cassette.is_file():
            return found.adding([cassette_missing(files.cassette)])
        report_phase(plan.progress, f"loaded {len(transcript.entries):,} entries")
        item = classify(plan, files, transcript, memo)
        recording = BeforeRuns(transcript, item.classifier, item.ledger, memo, progress=audit_progress(plan.progress))
        overrides = declared_over_rules(transcript.leaf_path(memo), item.classifier)
        abandoned = abandoned_branches(transcript, memo)
        from replaylab.agents import rules_of

        aside = kept_aside(transcript, memo, rules_of(plan.profile), plan.profile.label)
        foreign = records_of_another_agent(transcript, plan.profile)
        notes = (*overrides, *(n for n in (abandoned, aside, foreign) if n), *unisolated_pack(item.pack))
        found = found.adding(
            before_runs(recording),
            ledger_before=views.ledger_view(item.ledger),
            recorded_compactions=[audit.view for audit in recorded_compactions(recording)],
            diagnostics=(*found.diagnostics, *notes),
        )
        unavailable = plan.compactor.unavailable(profile=plan.profile)
        if unavailable is not None:
            return found.adding(not_exercised=unavailable, cause=ItemCause.of(COMPACTOR_UNAVAILABLE))
        start = starting_point(item)
        if isinstance(start, NotExercised):
            reason = "; ".join(n for n in (start.reason, abandoned, aside) if n)
            return found.adding(not_exercised=reason, budget=start.budget, cause=start.cause)
        item = replace(item, scenario=start.scenario)
        found = found.adding(budget=start.budget)
        if start.fresh_start:
            found = found.adding(diagnostics=(*found.diagnostics, start.fresh_start))
        # on a long session the window's view and the cassette's calls take a while before turn 1
        report_phase(plan.progress, "preparing the baseline: the window, the cassette's recorded calls, the model")
        cells = views.code_cells(transcript, memo)
        window_before = views.window_view(start.full_window, item.classifier, memo, code_cells=cells)
        found = found.adding(window_before=window_before)
        baseline = baseline_run(item, start)
        cleanup.callback(baseline.executor.close)
        found = found.adding(baseline.defects, baseline=baseline.trace)
        copy, outcome = compact(item, start, work)
        if isinstance(outcome, CannotCompact):
            cause = cannot_compact_cause(outcome.result, item.mode, start.budget, start.protected_tokens)
            figures = ItemCause.of(cause, largest_window=start.peak, budget=start.budget.budget)
            if cause is SUMMARY_NOT_SMALLER:  # an auto budget's session that no summary makes smaller
                reason = (outcome.result.error or "").removeprefix("compaction_failure: ")
                return found.adding(
                    compaction=views.compaction_view(outcome.result, item.mode),
                    not_exercised=f"too small to be worth compacting: {reason} ({start.budget.head()})",
                    cause=figures,
                )
            return found.adding(
                [
                    cannot_compact(
                        outcome.result,
                        item.scenario,
                        start.budget,
                        turn=turn_number(start.first),
                        protected_tokens=start.protected_tokens,
                        cause=cause,
                        where=start.within,
                    )
                ],
                compaction=views.compaction_view(outcome.result, item.mode),
                uncompacted=True,
                cause=figures,
            )
        if (
            isinstance(outcome, CompactionFailed)
            and (after := refused_after_compaction(outcome.result, start.history, item.memo)) is not None
        ):
            return found.adding(
                compaction=views.compaction_view(outcome.result, item.mode),
                not_exercised=(
                    f"{item.plan.profile.label} would not compact "
                    f"{start.within or f'before turn {turn_number(start.first):,}'}: the "
                    f"history ends in the recording's own compaction {after} (pi's guard against re-summarizing a "
                    f"summary); compact_at another turn ({start.budget.head()})"
                ),
                cause=ItemCause.of(AGENT_REFUSES, largest_window=start.peak, budget=start.budget.budget),
            )
        if isinstance(outcome, CompactionFailed) and refused_by_agent(outcome.result):
            return found.adding(
                compaction=views.compaction_view(outcome.result, item.mode),
                not_exercised=f"{outcome.result.error} ({start.budget.head()})",
                cause=ItemCause.of(AGENT_REFUSES, largest_window=start.peak, budget=start.budget.budget),
            )
        if isinstance(outcome, CompactionFailed):
            return found.adding(
                [compaction_failure(outcome.result)],
                compaction=views.compaction_view(outcome.result, item.mode),
            )
        ahead = ask_ahead(item, start, outcome, copy)
        compacted = compacted_run(item, start, copy, outcome, baseline.executor, ahead.settle if ahead else None)
        successes = sum(1 for c in (outcome.result, *compacted.later_compactions) if c.success)
        found = found.adding(
            compaction=views.compaction_view(outcome.result, item.mode, count=successes),
            window_after=views.window_view(compacted.first_window, item.classifier, memo, code_cells=cells),
            ledger_after=views.window_ledger_view(compacted.first_window, item.classifier, memo, item.transcript),
            ledger_after_point=views.events_after_point(item, start.history),
            compacted=compacted.trace,
        )
        defects, checks, first_divergence = compare(item, start, baseline, outcome, compacted, copy, ahead)
        legend = lost_legend([*baseline.lost, *compacted.lost], start.path, compacted.compactions, memo)
        found = found.adding(defects, first_divergence=first_divergence, window_checks=checks, lost_values=legend)
        return replace(found, defects=tuple(deduplicated(found.defects)))
    except InputError as error:
        return found.adding([recording_invalid(error)])
    except PackFailure as failure:  # the tool pack's code misbehaved in its own process
        return found.adding([pack_failed(failure)])
    finally:
        cleanup.close()


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


def starting_point(item: LoadedItem) -> StartPoint | NotExercised:
    """The turn starts of the recording, the budget settled on them, and where compaction first happens."""
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.qa.setup import resolve_budget
    from replaylab.replay import split_turns
    from replaylab.transcript import build_window

    memo = item.memo
    path = item.transcript.leaf_path(memo)
    turns = split_turns(path, memo, agent=item.plan.profile)
    before_replies = item.scenario.compact_at == "auto" and item.plan.profile.compacts_before_replies
    # an agent that checks before each reply reads the turn starts among every point, once
    boundaries = None if before_replies else turn_boundaries(path, turns, item.classifier, memo, item.plan.progress)
    settled: tuple[Scenario, BudgetView] | None = None
    if item.scenario.compact_at == "auto" and (before_replies or not boundaries):
        within = start_within_run(item, path, turns, turn_starts=before_replies)
        if isinstance(within, AtTurnStart):
            settled, boundaries = (within.scenario, within.budget), within.boundaries
        elif within is not None:
            return within
    if boundaries is None:  # no reply after tool results decided it: the turn starts on their own
        boundaries = turn_boundaries(path, turns, item.classifier, memo, item.plan.progress)
    if settled is None:
        settled = resolve_budget(item.scenario, item.plan.budget, boundaries, item.mode, tail=agent_tail(item, path))
    if settled is None or not boundaries:
        return NotExercised("one user turn: nothing before it to compact", ItemCause.of(ONE_USER_TURN))
    scenario, budget = settled
    peak = max(b.tokens for b in boundaries)
    if budget.too_small:  # `contextTokens: auto` found no compaction worth testing: none is attempted
        return NotExercised(
            f"too small to be worth compacting: {budget.rule}", ItemCause.of(TOO_SMALL, largest_window=peak)
        )
    points = compaction_points(scenario, turns, boundaries)
    if not points and scenario.compact_at == "auto":
        return NotExercised(
            f"never crosses the budget: its largest turn-start window is {peak:,} tokens, the budget "
            f"{budget.budget:,} ({budget.head()})",
            ItemCause.of(NEVER_CROSSES_BUDGET, largest_window=peak, budget=budget.budget),
            budget,
        )
    if not points:
        return NotExercised(
            f"{scenario.compact_at} is past the last turn ({len(turns)} turns)",
            ItemCause.of(PAST_LAST_TURN, largest_window=peak, budget=budget.budget),
            budget,
        )
    reached = first_reaching_point(item, path, turns, points)
    if isinstance(reached, Unreached):
        figures = ItemCause.of(reached.cause, largest_window=peak, budget=budget.budget)
        return NotExercised(reached.reason, figures, budget)
    point, history, later, notes = reached
    protected = next((b.protected_tokens for b in boundaries if b.turn == point), 0)
    points = [later_point for later_point in points if point <= later_point < point + len(later)]
    return StartPoint(
        path, points, history, later, build_window(history, memo), scenario, budget, protected, peak, notes
    )


@dataclass(frozen=True)
class AtTurnStart:
    """`start_within_run`'s answer when the first point whose window crosses the budget is a turn
    start: the budget settled on every point, and the turn starts' windows among them, for the
    turn starts' own way on."""

    scenario: Scenario
    budget: BudgetView
    boundaries: list[Boundary]


def start_within_run(
    item: LoadedItem, path: list[AnyEntry], turns: list[Turn], *, turn_starts: bool = False
) -> StartPoint | NotExercised | AtTurnStart | None:
    """Where an item compacts within a run under `compact_at: auto`: before the first reply within
    a run whose window crosses the budget — a reply after the agent's tool results, where pi 1.6.0
    checks for compaction and every agent compacts when the request overflows. That is every
    such session of an agent that checks before each reply (`AgentProfile.compacts_before_replies`,
    `turn_starts`: the turn starts are points too, in path order with the replies), and for any
    agent a session with no later turn start to compact at (one user turn, or only inputs typed
    while the run went on). The budget is settled on those points' windows; the rest of that run
    and the turns after it are replayed. `AtTurnStart` when the first point is a turn start; None
    when the session has no reply after tool results (nothing within a run to compact)."""
    from replaylab.qa.auto_budget import PointWords
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.qa.setup import auto_points, resolve_budget
    from replaylab.replay.turns import replies_after_tools, rest_of_run
    from replaylab.transcript import build_window

    replies = replies_after_tools(turns)
    if not replies:
        return None
    # (turn, step) in path order; step 0: the turn's start, which turn_boundaries skips when steered
    order = sorted([*((k, 0) for k in range(1, len(turns))), *replies]) if turn_starts else replies
    rests = [turns[0], *(turns[k] if not step else rest_of_run(turns[k], step) for k, step in order)]  # 0: no point
    boundaries = turn_boundaries(path, rests, item.classifier, item.memo, item.plan.progress)
    # the turn starts among the points, numbered as turns; none: a session of one run after all
    starts = [replace(b, turn=order[b.turn - 1][0]) for b in boundaries if not order[b.turn - 1][1]]
    turn_starts = bool(starts)

    def reply(index: int) -> str:
        turn, step = order[index - 1]
        return f"turn {turn_number(turn)}" if not step else f"reply {step + 1} of turn {turn_number(turn)}"

    words = (
        PointWords("turn start or reply after tool results", "largest window at a turn start or before a reply", reply)
        if turn_starts
        else PointWords("reply after tool results", "largest window before a reply", reply)
    )
    tail = agent_tail(item, path)
    settled = resolve_budget(item.scenario, item.plan.budget, boundaries, item.mode, words, tail)
    if settled is None or not boundaries:
        return None
    scenario, budget = settled
    peak = max(b.tokens for b in boundaries)
    if budget.too_small:
        return NotExercised(
            f"too small to be worth compacting: {budget.rule}", ItemCause.of(TOO_SMALL, largest_window=peak)
        )
    points = auto_points(boundaries, scenario)
    if not points:
        where = "" if turn_starts else " within its run"
        return NotExercised(
            f"never crosses the budget{where}: its {words.largest} is {peak:,} tokens, "
            f"the budget {budget.budget:,} ({budget.head()})",
            ItemCause.of(NEVER_CROSSES_BUDGET, largest_window=peak, budget=budget.budget),
            budget,
        )
    rest = rests[points[0]]
    turn, step = order[points[0] - 1]
    if not step:
        return AtTurnStart(scenario, budget, starts)
    boundary = next(b for b in boundaries if b.turn == points[0])
    history = path[: boundary.start]
    later, fresh = until_fresh_start(path, len(history), [rest, *turns[turn + 1 :]], item.memo.rules)
    if not later:
        return None
    line = item.transcript.line_of.get(rest.first_entry.id, "?")
    note = (
        (
            f"compacted within turn {turn_number(turn)}'s run, before reply {step + 1} (line {line}), the first "
            f"point whose window crosses the budget — {item.plan.profile.label} checks for compaction before each "
            "reply after tool results, not only at turn starts"
        )
        if turn_starts
        else (
            f"one user turn: compacted within its run, before reply {step + 1} of turn {turn_number(turn)} (line "
            f"{line}), the first reply after tool results whose window crosses the budget — where pi 1.6.0 checks "
            "for compaction before each reply, and any agent compacts when that request overflows the model's window"
        )
    )
    if fresh is not None:
        note += f"; the turns after the {fresh.type} entry {fresh.id} start afresh and are not replayed"
    window = build_window(history, item.memo)
    where = f"within turn {turn_number(turn)}'s run, before reply {step + 1}"
    return StartPoint(
        path, [turn], history, later, window, scenario, budget, boundary.protected_tokens, peak, note, where
    )


def agent_tail(item: LoadedItem, path: list[AnyEntry]) -> Callable[[Boundary, int], int]:
    """The tokens the agent's own cut keeps of the window at a point for a keepRecentTokens: from
    its first kept entry to the point. Within a run this may be the whole window — no tool result
    is a cut point, so a burst of results larger than the tail leaves none after where the tail
    is reached — and such a point cannot gain, whatever the budget."""
    from replaylab.compaction import CompactParams
    from replaylab.compaction.cutpoint import compute_cut_point
    from replaylab.transcript.model import MessageEntry

    memo, rules = item.memo, item.memo.rules
    boundary_rule = CompactParams.model_fields["boundary_rule"].default  # what the item's compaction uses

    def entry_tokens(entry: AnyEntry) -> int:
        return memo.tokens(entry.message) if isinstance(entry, MessageEntry) else 0

    # a budget that no point gains under is chosen a second time without the protected entries
    known: dict[tuple[int, int], int] = {}

    def kept(boundary: Boundary, keep: int) -> int:
        key = (boundary.start, keep)
        if key not in known:
            history = path[: boundary.start]
            cut = (
                compute_cut_point(history, keep, tokens_of=entry_tokens)
                if rules is None
                else rules.cut(history, keep, boundary_rule, entry_tokens, memo.tokens)
            )
            known[key] = sum(entry_tokens(entry) for entry in history[cut.first_kept_index :])
        return known[key]

    return kept


@dataclass(frozen=True)
class Unreached:
    """Why no compaction point reaches a recorded turn, and its cause."""

    reason: str
    cause: Cause


def first_reaching_point(
    item: LoadedItem, path: list[AnyEntry], turns: list[Turn], points: list[int]
) -> tuple[int, list[AnyEntry], list[Turn], str | None] | Unreached:
    """The first compaction point with a recorded turn to replay after it — its history, the turns
    replayed from it and why any are not — or why there is none, and its cause. A point no agent
    compacts at (an input typed while its run goes on: `Turn.steered`) and a point whose next
    turn the agent's context starts afresh in (it reaches nothing) give way to the next point."""
    rules, line_of = item.memo.rules, item.transcript.line_of
    skipped: str | None = None
    cause = STARTS_AFRESH
    for point in points:
        first = turns[point]
        if first.steered:
            if skipped is None:
                skipped, cause = (
                    f"no compaction before turn {point + 1}: its input (line {line_of.get(first.inputs[0].id, '?')}) "
                    "comes while the agent's run goes on, after the results of its tool calls and before its "
                    "reply, where pi 0.73.1 and OpenClaw do not check for compaction (pi 1.6.0 checks before "
                    "each reply of a run: under compact_at auto its items compact there; turn:N and every:N name "
                    "turn starts)",
                    MID_RUN,
                )
            continue
        # by identity: `list.index` compares each earlier entry's fields until it meets this one
        history = path[: next(i for i, e in enumerate(path) if e is first.inputs[0])] if first.inputs else path
        later, fresh = until_fresh_start(path, len(history), turns[point:], rules)
        if fresh is None:
            return point, history, later, skipped
        assert rules is not None  # only an agent's rules start a context afresh
        where = f"the {fresh.type} entry {fresh.id} (line {line_of.get(fresh.id, '?')})"
        if later:
            unreplayed = (
                f"{len(turns) - point - len(later):,} recorded turn(s) after {where} are not replayed: "
                f"{rules.name}'s context starts afresh there, so what a compaction before it did reaches none of them"
            )
            return point, history, later, "; ".join(note for note in (skipped, unreplayed) if note)
        if skipped is None:
            skipped, cause = (
                f"no compaction before turn {point + 1}: {rules.name}'s context starts afresh at {where}, within "
                "that turn, so a compaction there reaches no turn",
                STARTS_AFRESH,
            )
    return Unreached(skipped or "", cause)


def until_fresh_start(
    path: list[AnyEntry], start: int, later: list[Turn], rules: AgentRules | None
) -> tuple[list[Turn], AnyEntry | None]:
    """The later turns up to the first entry after `path[start]` where the agent's context starts
    afresh (`AgentRules.starts_afresh`), and that entry when it cuts any turn off (None: every
    turn is replayed). A compaction before it reaches no turn after it, and replaylab's runs do
    not start afresh there."""
    if rules is None:
        return later, None
    fresh = next((i for i in range(start, len(path)) if rules.starts_afresh(path[i])), None)
    if fresh is None:
        return later, None
    after = {entry.id for entry in path[fresh + 1 :]}
    kept = list(itertools.takewhile(lambda turn: not any(e.id in after for e in (*turn.inputs, *turn.steps)), later))
    return (later, None) if len(kept) == len(later) else (kept, path[fresh])


def compaction_points(scenario: Scenario, turns: list[Turn], boundaries: list[Boundary]) -> list[int]:
    """Indexes of the turns *before which* compaction happens (never 0: nothing to compact yet)."""
    from replaylab.qa.setup import auto_points

    kind, _, number = scenario.compact_at.partition(":")
    if kind == "turn":
        n = int(number) - 1  # turn:N is 1-based: compact before user turn N
        return [n] if 0 < n < len(turns) else []
    if kind == "every":
        step = int(number)
        if step <= 0:
            return []
        # an input typed while the agent's run goes on is no point an agent compacts at
        return [n for n in range(step, len(turns), step) if not turns[n].steered]
    return auto_points(boundaries, scenario)


def baseline_run(item: LoadedItem, start: StartPoint) -> Baseline:
    """The later turns replayed on the full window: on it the agent must do what the recording did."""
    from replaylab.qa.setup import replay_tools
    from replaylab.replay import recorded_run_trace, run_turns

    executor = replay_tools(
        item.scenario,
        item.files.cassette,
        item.classifier,
        item.pack,
        path=start.path,
        history=start.history,
        entries=item.transcript.entries,
        base_url=item.plan.tool_base_url,
        memo=item.memo,
    )
    model = item.model("baseline")
    trace = run_turns(
        start.full_window,
        start.later,
        model,
        executor,
        label="baseline",
        tools=views.tool_schemas(item.pack),
        memo=item.memo,
        on_turn=lambda done: report_turns(item.plan.progress, "baseline", done, len(start.later)),
    )
    infrastructure = [d for d in executor.defects if d.code in (Code.CASSETTE_MISSING, Code.TOOL_FAILED)]
    # a model's own findings (a litellm model's cassette miss) stop the run where they happen: the
    # drift from the recording that follows is their consequence, not a finding of its own
    own = list(getattr(model, "defects", []))
    recorded = recorded_run_trace(start.later, item.classifier, memo=item.memo)
    drift = [] if own else drift_from_recording(trace, recorded, item.drift_rules)
    defects = [
        *own,
        *drift,
        *(d for d in executor.defects if d.code == Code.MISLABELLED_TOOL),
        *infrastructure,
        # a call a live read tool failed on is reported as that, not again as a cassette gap
        *unanswered_recorded_calls(
            _without_calls(trace, {d.where.tool_call_id for d in infrastructure}),
            recorded,
            item.files.cassette,
            drifted=bool(drift),
        ),
    ]
    return Baseline(trace, executor, defects, lost_records([model]))


def _without_calls(trace: RunTrace, tool_call_ids: set[str | None]) -> RunTrace:
    """`trace` without the tool calls of these ids (the same trace when there are none)."""
    if not tool_call_ids:
        return trace
    copy = trace.model_copy(deep=True)
    for turn in copy.turns:
        turn.tool_calls = [c for c in turn.tool_calls if c.tool_call_id not in tool_call_ids]
    return copy


def compact(item: LoadedItem, start: StartPoint, work: Path) -> tuple[WorkingCopy, CompactionOutcome]:
    """The first compaction, at the first point, on a working copy of the recording in `work`."""
    from replaylab.compaction import compact as default_compactor
    from replaylab.compactors.recheck import rechecked
    from replaylab.qa.setup import compact_params, copy_children
    from replaylab.transcript import TranscriptWriter

    recording = item.files.recording
    report_phase(item.plan.progress, f"compacting {len(start.history):,} entries")
    leaf = start.history[-1].id if start.history else None
    rules = item.memo.rules
    writer = TranscriptWriter.working_copy(
        recording,
        work / recording.name,
        parsed=item.transcript,
        parsed_sha256=item.files.sha256[0],
        recording_state=item.files.before[0],
        lines=rules.lines_to_copy(item.transcript, leaf, item.memo) if rules is not None and leaf else None,
    )
    copy_children(recording, work)
    params = compact_params(item.scenario, item.mode, writer.path, leaf_id=leaf)
    if item.memo.rules is not None:  # the agent's own refusals apply; the double-compaction guard is pi 0.73.1's
        params = params.model_copy(update={"force_compact": True})
    # the item's memo goes to the default compactor only: a compactor under test takes the seed
    # contract's arguments, and the pipeline re-checks whatever it did
    compactor = (
        item.plan.compactor.given
        or compactor_under_test(item.plan.compactor.spec, item.files, item.plan.suite_folder, item.plan.profile)
        or functools.partial(default_compactor, memo=item.memo)
    )
    if item.plan.observe_compactor is not None:
        compactor = item.plan.observe_compactor(compactor)
    copy = WorkingCopy(writer, params, rechecked(compactor, item.memo))
    result = copy.compactor(params, classifier=item.classifier, writer=writer)
    if result.success:
        window = views.window_of(result, writer, item.memo, at_leaf=True)
        return copy, Compacted(result, window, writer.transcript().leaf_id)
    if cannot_succeed(result):
        return copy, CannotCompact(result)
    return copy, CompactionFailed(result)


def ask_ahead(item: LoadedItem, start: StartPoint, first: Compacted, copy: WorkingCopy) -> WindowsAsked | None:
    """The first compaction's window sent to the agent for its own rebuild now, before the
    compacted run, when no later compaction is due: the agent reads the working copy on another
    core while the run goes on. With a later compaction due (a later point, or `compact_at:
    auto`) the check waits for the run's end, so the agent reads the copy once for every window."""
    scenario = item.scenario
    if first.leaf is None or scenario.compact_at == "auto":
        return None
    if any(start.first + offset in start.points for offset in range(1, len(start.later))):
        return None
    windows = agent_leaves(item, copy, [(first.leaf, first.window)])
    return ask_windows(item.plan.profile, copy.writer.path, windows, item.plan.verify_with_pi)


def agent_leaves(
    item: LoadedItem, copy: WorkingCopy, windows: list[tuple[str, list[WindowMessage]]]
) -> list[tuple[str, list[WindowMessage]]]:
    """Each window with the entry the agent rebuilds it at (`views.agent_leaf`), when the check
    will run (otherwise as they are: no walk of a long copy for nothing)."""
    profile = item.plan.profile
    if not windows or unavailable_reason(profile, item.plan.verify_with_pi) is not None:
        return windows
    from replaylab.agents import rules_of

    rules = rules_of(profile)
    return [(views.agent_leaf(copy.writer, leaf, rules, item.memo), window) for leaf, window in windows]


def compacted_run(
    item: LoadedItem,
    start: StartPoint,
    copy: WorkingCopy,
    first: Compacted,
    baseline_executor: ToolExecutor,
    before_writing: Callable[[], None] | None = None,
) -> CompactedRun:
    """The later turns replayed on the compacted window, compacting again at each later point
    (and, under `compact_at: auto`, whenever the window crosses the budget again: at a turn
    start, and before each reply after tool results for an agent that checks there).
    `before_writing` is called before anything changes the working copy (an agent asked ahead
    may still be reading it)."""
    from replaylab.compaction.recovery import StepOutcome
    from replaylab.qa.setup import ReplayedTurns, budget, crosses_budget
    from replaylab.replay import WindowTokenCount, run_turns

    scenario = item.scenario
    window = list(first.window)  # this run's own list, grown turn by turn (`copy_window=False`)
    executor = baseline_executor.fresh()
    model = item.model("compacted")
    trace = RunTrace(label="compacted")
    replayed = ReplayedTurns(copy.writer, views.compaction_leaf(first.result))
    tools = views.tool_schemas(item.pack)
    token_count = WindowTokenCount(item.memo)  # one running count over the turns (a new window restarts it)
    later_compactions = []
    agent_windows: list[tuple[str, list[WindowMessage]]] = []
    steps = [
        CompactionStep(
            1,
            first.result.compaction_event_id,
            first.result.summary_text,
            start.first,
            first.window,
            at=len(start.history),
        )
    ]
    synced: list[int | None] = [None]  # where the window's messages not yet in the working copy start
    #: replaylab's own compaction failed because the entries safeguard keeps are over the budget on
    #: their own: until one succeeds (none can), each later one fails alike
    hopeless: list[Any] = [None]
    own_compactor = item.plan.compactor.given is None and item.plan.compactor.spec is None
    settle = before_writing or (lambda: None)
    turn_start = [0]

    def compact_again(at: int, why: str, trigger: str | None = None) -> tuple[Any, list[WindowMessage] | None]:
        """The compactor under test once more on the working copy (the replayed run written to
        it first); its window when it compacted. `trigger`: the recovery chain's (`overflow`,
        `timeout_recovery`); else the scenario's, as for the first compaction."""
        if hopeless[0] is not None:
            # the window still holds every entry that was over the budget on its own, and more:
            # the attempt fails as the last one did (counted, as pi tries again too), not re-run
            later_compactions.append(hopeless[0])
            return hopeless[0], None
        leaf = replayed.write()  # the next compaction summarizes the replayed turns
        report_phase(item.plan.progress, why)
        update: dict[str, Any] = {"leaf_id": leaf, "force_compact": True}
        if trigger is not None:
            update["trigger"] = trigger
        again = copy.compactor(
            copy.params.model_copy(update=update),
            classifier=item.classifier,
            writer=copy.writer,
        )
        later_compactions.append(again)
        if not again.success:
            if own_compactor and again.protected_over_budget:
                hopeless[0] = again
            return again, None
        compacted_window = views.window_of(again, copy.writer, item.memo, at_leaf=True)
        replayed.leaf = views.compaction_leaf(again)
        # a copy: the loop grows the window in place, and the legend reads it as compaction left it
        steps.append(
            CompactionStep(len(steps) + 1, again.compaction_event_id, again.summary_text, at, list(compacted_window))
        )
        leaf_now = copy.writer.transcript().leaf_id
        if leaf_now is not None:
            agent_windows.append((leaf_now, list(compacted_window)))
        return again, compacted_window

    #: the working copy's leaf and the window's length before the chain's last compaction
    pre_compaction: list[tuple[str | None, int]] = []

    def sync(current: list[WindowMessage]) -> None:
        """The turn's messages not yet in the working copy queued for it (a recovery step mid-turn
        writes the turn so far before it acts on the copy)."""
        replayed.add_messages(current[synced[0] if synced[0] is not None else turn_start[0] :])
        synced[0] = len(current)

    def compact_on_overflow(trigger: str, current: list[WindowMessage], info: dict[str, Any]) -> StepOutcome:
        """A compaction the recovery chain asks for, mid-turn: the turn's messages so far are
        written to the working copy with the turns before it."""
        settle()
        sync(current)
        pre_compaction[:] = [(replayed.write(), len(current))]
        again, compacted_window = compact_again(index, f"compacting on a context overflow ({trigger})", trigger)
        if compacted_window is None:
            return StepOutcome(False, reason=again.error, failure=getattr(again, "failure", None))
        synced[0] = len(compacted_window)
        return StepOutcome(True, window=compacted_window)

    def truncate_in_session(current: list[WindowMessage], plan: TruncationPlan) -> list[WindowMessage]:
        """The chain's truncation as OpenClaw rewrites its session: the turn so far written to
        the working copy, the plan made on the window rebuilt from it, the branch taken again
        with the cut results; the window rebuilt from the rewritten copy (the agent's window
        there is checked against the agent's own rebuild, as after a compaction)."""
        from replaylab.compaction.session_truncation import rewrite_branch
        from replaylab.transcript import build_window

        settle()
        sync(current)
        written = replayed.write()  # first: each transcript() is a snapshot of the file as it is
        transcript = copy.writer.transcript()
        path = transcript.path_to(written, item.memo)
        leaf, _ = rewrite_branch(copy.writer.append, path, plan(build_window(path, item.memo)), set(transcript.by_id))
        if leaf is None:
            return current
        replayed.leaf = leaf
        rewritten = views.window_of(None, copy.writer, item.memo, at_leaf=True)
        synced[0] = len(rewritten)
        agent_windows.append((leaf, list(rewritten)))
        return rewritten

    reply_tokens = WindowTokenCount(item.memo)  # the run's window grows reply by reply: counted as it grows

    def compact_before_reply(current: list[WindowMessage]) -> list[WindowMessage] | None:
        """An agent that checks before each reply of a run compacts there when the window crosses
        the budget: the turn's messages so far are written to the working copy first."""
        if reply_tokens.grown(current) <= budget(scenario):
            return None
        settle()
        sync(current)
        _, compacted_window = compact_again(index, f"compacting again within turn {turn_number(index):,}'s run")
        if compacted_window is not None:
            synced[0] = len(compacted_window)
        return compacted_window

    def restore_session(snapshot: list[WindowMessage]) -> None:
        """After a compaction timeout the run goes on from the pre-compaction snapshot: the
        working copy from the leaf written before the compaction (its entry stays in the file,
        off the path), as OpenClaw's session, whose compaction never completed."""
        if pre_compaction and pre_compaction[0][1] == len(snapshot):
            replayed.leaf, synced[0] = pre_compaction[0]

    recovery = overflow_recovery(item, compact_on_overflow, truncate_in_session, restore_session)
    model = recovery_model(item, model)
    checks_before_replies = scenario.compact_at == "auto" and item.plan.profile.compacts_before_replies
    for offset, turn in enumerate(start.later):
        index = start.first + offset
        if offset and (
            index in start.points
            or (
                scenario.compact_at == "auto"
                and not turn.steered
                and crosses_budget(window, turn, scenario, item.memo, token_count)
            )
        ):
            _, compacted_window = compact_again(index, f"compacting again before turn {turn_number(index):,}")
            if compacted_window is not None:
                window = compacted_window
            # a failed re-compaction leaves the window as it was (pi keeps going too); `compare`
            # reports it unless it only found nothing worth compacting
        before = turn_start[0] = len(window)
        synced[0] = None
        turn_trace, window = run_turns(
            window,
            [turn],
            model,
            executor,
            label="compacted",
            tools=tools,
            return_window=True,
            token_count=token_count,
            memo=item.memo,
            copy_window=False,
            recovery=recovery,
            before_reply=compact_before_reply if checks_before_replies else None,
        )
        trace.turns.extend(turn_trace.turns)
        trace.recovery.extend(turn_trace.recovery)
        trace.error = trace.error or turn_trace.error
        if synced[0] is None:
            replayed.add(window, turn, since=before)
        else:  # a recovery compaction in the turn wrote what came before it
            replayed.add_messages(window[synced[0] :])
        report_turns(item.plan.progress, "compacted run", offset + 1, len(start.later))
    first_window = views.window_of(first.result, copy.writer, item.memo)
    return CompactedRun(
        trace,
        later_compactions,
        [*executor.defects, *getattr(model, "defects", [])],
        first_window,
        lost_records([model]),
        steps,
        agent_windows,
    )


def overflow_recovery(
    item: LoadedItem,
    compact: Callable[..., Any],
    rewrite_session: SessionRewrite | None = None,
    restore_session: Callable[[list[WindowMessage]], None] | None = None,
) -> OverflowRecovery | None:
    """The compacted run's recovery chain when the scenario gives the agent a context window:
    the item's OpenClaw runtime rules, its agent's token estimate, safeguard's protection of
    mutating events unless the scenario allows truncating them, the truncation's rewrite of the
    working copy and the copy's return to a snapshot after a compaction timeout."""
    from replaylab.replay.loop import window_tokens
    from replaylab.replay.overflow import OverflowRecovery, spawning_entries
    from replaylab.upstream.runtime_rules import runtime_rules_named

    limit = item.scenario.context_window
    if limit is None:
        return None
    settings = item.scenario.compaction
    return OverflowRecovery(
        context_tokens=limit.tokens,
        rules=runtime_rules_named(item.plan.profile.runtime_rules),
        compact=compact,
        estimate=lambda window: window_tokens(window, item.memo),
        is_mutating=item.classifier.is_mutating,
        spawns=spawning_entries(item.ledger),
        protect_mutating=item.mode == "safeguard"
        and not settings.allow_mutating_event_truncate
        and "cut_mutating" not in limit.faults,
        faults=frozenset(limit.faults),
        diag_id_factory=_diag_ids(),
        rewrite_session=rewrite_session,
        # the reserve the scenario compacts with (its floor): what pi's setting is in the item
        reserve_tokens=settings.reserve_tokens_floor,
        mid_turn_precheck=limit.mid_turn_precheck,
        compaction_timeout=limit.compaction_timeout,
        restore_session=restore_session,
    )


def _diag_ids() -> Callable[[], str]:
    """OpenClaw's diagnostic ids (`cmp-<time base36>-<4 chars>`) numbered from the item's start
    instead of by the clock and chance: an item's results are the same at every run."""
    from replaylab.compaction.recovery import create_compaction_diag_id

    count = iter(range(1, 1 << 31))
    return lambda: create_compaction_diag_id(now_ms=0, token=f"{next(count):04d}")


def recovery_model(item: LoadedItem, model: Model) -> Model:
    """The compacted run's model, answering as its provider when a request does not fit."""
    from replaylab.model_spec import is_litellm
    from replaylab.replay.agent.context_limit import ContextLimitedModel
    from replaylab.replay.loop import window_tokens

    limit = item.scenario.context_window
    if limit is None or limit.overflow == "model":
        return model
    return ContextLimitedModel(
        model,
        tokens=limit.tokens,
        estimate=lambda window: window_tokens(window, item.memo),
        overflow=limit.overflow,
        provider=limit.provider,
        restate_usage=not is_litellm(item.plan.model_spec),
    )


def compare(
    item: LoadedItem,
    start: StartPoint,
    baseline: Baseline,
    first: Compacted,
    compacted: CompactedRun,
    copy: WorkingCopy,
    ahead: WindowsAsked | None = None,
) -> tuple[list[Defect], tuple[WindowCheck, ...], Divergence | None]:
    """Diff → defects: every check after the runs, in `checks.AFTER_RUNS`' order; the compacted
    windows checked against the agent's own rebuild of the working copy (one request for them
    all, or the first window's `ahead` and one request for the windows the run made after it);
    and where the runs first part."""
    judged_windows = [(first.leaf, list(first.window))] if first.leaf is not None else []
    label = item.plan.profile.label

    def asking(count: int) -> None:  # on a long session the longest wait after the runs
        what = f"{count} compacted window{'s' if count != 1 else ''}"
        report_phase(item.plan.progress, f"checking {what} against {label}'s own rebuild")

    if ahead is not None:
        asking(len(ahead.windows))  # most often answered by now
        judged_windows = []
    windows = (
        *(ahead.checks() if ahead is not None else ()),
        *check_windows(
            item.plan.profile,
            copy.writer.path,
            agent_leaves(item, copy, [*judged_windows, *compacted.agent_windows]),
            item.plan.verify_with_pi,
            asking,
        ),
    )
    report_phase(item.plan.progress, "comparing the runs")
    judged = AfterRuns(
        scenario=item.scenario,
        budget=start.budget,
        transcript=item.transcript,
        classifier=item.classifier,
        history=start.history,
        first=first.result,
        later=compacted.later_compactions,
        first_window=compacted.first_window,
        baseline=baseline.trace,
        compacted=compacted.trace,
        compacted_run_findings=compacted.executor_defects,
        compacted_lost=tuple(compacted.lost),
        agent_windows=windows,
        memo=item.memo,
    )
    return after_runs(judged), windows, first_divergence_of(baseline.trace, compacted.trace, item.scenario.match)
