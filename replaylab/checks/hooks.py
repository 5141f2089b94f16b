"""Every defect producer that judges an item, in the order they run (the hooks the package
docstring describes). A module of its own: importing one check (`checks.run_files`, which the
plugin's configure reads on an xdist controller before its workers start) does not import them all."""

from __future__ import annotations

from collections.abc import Callable

from replaylab.checks.after_runs import AfterRuns
from replaylab.checks.agent_rebuild import window_differences
from replaylab.checks.before_runs import BeforeRuns
from replaylab.checks.classified import with_classification
from replaylab.checks.compactions import compaction_findings, later_compaction_failures
from replaylab.checks.diff import run_divergences
from replaylab.checks.flags import recorded_flag_defects
from replaylab.checks.identifiers import lost_identifiers
from replaylab.checks.overflow import overflow_findings
from replaylab.checks.recorded import recorded_compaction_findings
from replaylab.checks.replayed import replay_findings
from replaylab.defects import Defect

Check = Callable[[AfterRuns], list[Defect]]
RecordingCheck = Callable[[BeforeRuns], list[Defect]]

BEFORE_RUNS: tuple[RecordingCheck, ...] = (
    recorded_compaction_findings,  # RECORDED_MUTATION_DROPPED, RECORDED_IDENTIFIER_LOST, RECORDED_SUMMARY_INVALID
)

AFTER_RUNS: tuple[Check, ...] = (
    compaction_findings,  # MUTATION_*, PAIR_BROKEN, THINKING_ALTERED, ... of each compaction
    later_compaction_failures,  # COMPACTION_FAILED / CANNOT_COMPACT of later compactions
    replay_findings,  # SIDE_EFFECT_ESCAPED, DUPLICATE_SIDE_EFFECT, CASSETTE_MISSING of the compacted run
    overflow_findings,  # MUTATION_ALTERED, RECOVERY_CHAIN_WRONG, OVERFLOW_GAVE_UP of its overflow recovery
    recorded_flag_defects,  # REPLAY_FLAG_WRONG, MUTATED_IDS_WRONG
    lost_identifiers,  # IDENTIFIER_LOST
    run_divergences,  # TOOL_SEQUENCE_DIVERGED, ANSWER_DIVERGED
    window_differences,  # AGENT_CONTEXT_DIFFERS
)


def before_runs(item: BeforeRuns) -> list[Defect]:
    """Every check of the recording as it is, in order; each about a mutating call says why it is mutating."""
    return with_classification((defect for check in BEFORE_RUNS for defect in check(item)), item.classifier)


def after_runs(item: AfterRuns) -> list[Defect]:
    """Every check's findings, in order; each about a mutating call says why the call is mutating."""
    return with_classification((defect for check in AFTER_RUNS for defect in check(item)), item.classifier)


__all__ = [
    "AFTER_RUNS",
    "BEFORE_RUNS",
    "AfterRuns",
    "BeforeRuns",
    "Check",
    "RecordingCheck",
    "after_runs",
    "before_runs",
]
