"""What the compacted run's own tools and model found as it ran: blocked mutating calls
(SIDE_EFFECT_ESCAPED), repeats of recorded ones (DUPLICATE_SIDE_EFFECT), cassette misses. A call
blocked only for want of an earlier blocked call's result is listed under that call's finding
(`cascades.py`)."""

from __future__ import annotations

from replaylab.checks.after_runs import AfterRuns
from replaylab.checks.cascades import fold_cascades
from replaylab.defects import Defect


def replay_findings(item: AfterRuns) -> list[Defect]:
    return fold_cascades(item.compacted_run_findings, item.compacted, item.compacted_lost, item.transcript)
