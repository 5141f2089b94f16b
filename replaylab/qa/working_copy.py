"""The item's first compaction on a working copy of its recording, and the working copy's windows
as the agent rebuilds them (the leaf it rebuilds at, asked ahead of the compacted run when no
later compaction is due).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from replaylab.checks.agent_window import WindowsAsked, ask_windows, unavailable_reason
from replaylab.compactors.external import compactor_under_test
from replaylab.compactors.outcome import CannotCompact, Compacted, CompactionFailed, CompactionOutcome, cannot_succeed
from replaylab.qa import views
from replaylab.qa.item import LoadedItem, StartPoint, WorkingCopy
from replaylab.qa.progress import report_phase

if TYPE_CHECKING:
    from replaylab.transcript.context import WindowMessage


def compact(item: LoadedItem, start: StartPoint, work: Path) -> tuple[WorkingCopy, CompactionOutcome]:
    """The first compaction, at the first point, on a working copy of the recording in `work`."""
    from replaylab.compaction import compact as default_compactor
    from replaylab.compactors.recheck import rechecked
    from replaylab.qa.setup import compact_params, copy_children, forced_past_guard
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
    params = compact_params(item.scenario, item.mode, writer.path, leaf_id=leaf, force=forced_past_guard(item.memo))
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
