"""AGENT_CONTEXT_DIFFERS: a compacted window the agent's own rebuild of the working copy disagrees
with — the verdict would be about a context the agent never sees."""

from __future__ import annotations

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Defect


def window_differences(item: AfterRuns) -> list[Defect]:
    return [check.defect() for check in item.agent_windows if not check.equal]
