"""The QA pipeline for one (recording × scenario), top to bottom (DESIGN §3).

    load → ledger → pick compaction point(s) → baseline run on the full window
         → compact() with replayCheck (appends to a working copy, never the recording)
         → compacted run on the compacted window (compacting again when the budget is crossed)
         → diff → defects → verdict

One function per arrow, each taking the values of the arrows before it and returning its own;
`replay_and_compare` calls them in order and the `ItemResult` is assembled from them at the end.
The arrows live beside this module, one job each: the values they hand on and the ledger arrow
(`qa.item`), where compaction first happens (`qa.compaction_start`), the first compaction on a
working copy (`qa.working_copy`), the baseline and compacted runs (`qa.runs`) and the diff
(`qa.comparison`). Nothing here is global, and a run is a value (`ItemResult`) that crosses
process boundaries as JSON. What the arrows compute once from the messages they all read
(estimates, texts, windows, ledgers) is the run's `ItemMemo`, made for the run and passed down to
every arrow that reads them.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path

from replaylab.causes import AGENT_REFUSES, COMPACTOR_UNAVAILABLE, SUMMARY_NOT_SMALLER, ItemCause
from replaylab.checks.agent_window import start_oracle
from replaylab.checks.cannot_compact import cannot_compact, cannot_compact_cause
from replaylab.checks.hooks import BeforeRuns, before_runs
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
    unisolated_pack,
)
from replaylab.checks.lost_legend import lost_legend
from replaylab.checks.recorded import recorded_compactions
from replaylab.compactors.external import compaction_failure, start_worker
from replaylab.compactors.outcome import CannotCompact, CompactionFailed, refused_after_compaction, refused_by_agent
from replaylab.diagnostics import InputError
from replaylab.qa import views
from replaylab.qa.compaction_start import starting_point
from replaylab.qa.comparison import compare
from replaylab.qa.item import Evidence, NotExercised, classify, item_id
from replaylab.qa.plan import ItemPlan, RunOptions, plan_item
from replaylab.qa.progress import audit_progress, report_phase
from replaylab.qa.repeats import combined_repeats
from replaylab.qa.runs import baseline_run, compacted_run
from replaylab.qa.scratch import item_folder
from replaylab.qa.sources import SourceFiles, display_path
from replaylab.qa.working_copy import ask_ahead, compact
from replaylab.replay.tools.pack_data import PackFailure
from replaylab.replay.trace import turn_number
from replaylab.results import ItemResult
from replaylab.suite import Expectations, Scenario
from replaylab.transcript import load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.verdict import verdict

#: the cyclic collector's thresholds while an item runs: (first generation, second, third).
#: An item allocates millions of short-lived objects beside the session it holds; at Python's
#: default (700, 10, 10) the older generations, which hold the whole session, are scanned again
#: every few thousand of them, a cost that grows with the session (superlinear on a large one).
ITEM_GC_THRESHOLDS = (10_000, 50, 100)


@contextmanager
def item_collections() -> Iterator[None]:
    """Collect cycles less often while an item runs (`ITEM_GC_THRESHOLDS`), as before it after;
    and while its result is handed over to the reports (`pytest_plugin.results.hand_over`), which
    makes as many objects again beside it."""
    before = gc.get_threshold()
    gc.set_threshold(*ITEM_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def run_item(scenario: Scenario, recording: Path, options: RunOptions | None = None) -> ItemResult:
    """Replay one recording under one scenario (`repeats` times) and return its verdict and evidence."""
    with item_collections():
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


def replay_and_compare(plan: ItemPlan, files: SourceFiles, work: Path, memo: ItemMemo) -> Evidence:
    """Every arrow from the recording to the defects, stopping where one leaves nothing to
    compare. The evidence takes each arrow's values as they come, so an input error midway (a
    recording, tool pack, script or model spec that cannot be used) keeps what came before it."""
    found = Evidence()
    cleanup = ExitStack()  # ends the tool process of live read tools with the item
    try:
        transcript = load_transcript(files.recording, navigation=plan.profile.navigation)
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
        baseline = baseline_run(item, start, cells)
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
