"""What the compacted run's own tools and model found as it ran: blocked mutating calls
(SIDE_EFFECT_ESCAPED), repeats of recorded ones (DUPLICATE_SIDE_EFFECT), cassette misses."""

from __future__ import annotations

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Defect


def replay_findings(item: AfterRuns) -> list[Defect]:
    return list(item.compacted_run_findings)
