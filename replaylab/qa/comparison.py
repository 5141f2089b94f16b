"""The item's last arrow: the runs compared, the compacted windows checked against the agent's own
rebuild of the working copy, and where the runs first part.
"""

from __future__ import annotations

from replaylab.checks.agent_window import WindowCheck, WindowsAsked, check_windows
from replaylab.checks.diff import first_divergence_of
from replaylab.checks.hooks import AfterRuns, after_runs
from replaylab.compactors.outcome import Compacted
from replaylab.defects import Defect
from replaylab.qa.item import Baseline, CompactedRun, LoadedItem, StartPoint, WorkingCopy
from replaylab.qa.progress import report_phase
from replaylab.qa.working_copy import agent_leaves
from replaylab.results import Divergence


def compare(
    item: LoadedItem,
    start: StartPoint,
    baseline: Baseline,
    first: Compacted,
    compacted: CompactedRun,
    copy: WorkingCopy,
    ahead: WindowsAsked | None = None,
) -> tuple[list[Defect], tuple[WindowCheck, ...], Divergence | None]:
    """Diff → defects: every check after the runs, in `checks.hooks.AFTER_RUNS`' order; the compacted
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
