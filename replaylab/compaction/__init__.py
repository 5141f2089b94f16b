"""The compaction engine: `compact()` (harness), pi's cut point, safeguard protection, summarizers,
tool-result truncation and guards, overflow recovery, and the replayCheck invariants.

Importing this package is cheap: litellm is imported only when an LLM summarizer runs.
"""

from replaylab.compaction.harness import compact
from replaylab.compaction.params import CompactParams, CompactResult, SummarizerOptions
from replaylab.compaction.recovery import (
    AttemptResult,
    RecoveryOutcome,
    StepOutcome,
    run_with_recovery,
)

__all__ = [
    "compact",
    "CompactParams",
    "CompactResult",
    "SummarizerOptions",
    "AttemptResult",
    "RecoveryOutcome",
    "StepOutcome",
    "run_with_recovery",
]
