"""Defect codes of DESIGN §9, their severities, and the `Defect` finding every check returns.

Severity decides the outcome: `blocking` and `regression` fail an item unless the suite expects
them (negative controls); `error` is infrastructure (JUnit <error>, not <failure>); `warning`
never fails.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field

Severity = Literal["blocking", "regression", "warning", "error"]


class Code(str, Enum):
    MUTATION_DROPPED = "MUTATION_DROPPED"
    MUTATION_ALTERED = "MUTATION_ALTERED"
    PAIR_BROKEN = "PAIR_BROKEN"
    REPLAY_FLAG_WRONG = "REPLAY_FLAG_WRONG"
    MUTATED_IDS_WRONG = "MUTATED_IDS_WRONG"
    SIDE_EFFECT_ESCAPED = "SIDE_EFFECT_ESCAPED"
    DUPLICATE_SIDE_EFFECT = "DUPLICATE_SIDE_EFFECT"
    TRANSCRIPT_REWRITTEN = "TRANSCRIPT_REWRITTEN"
    MISLABELLED_TOOL = "MISLABELLED_TOOL"
    THINKING_ALTERED = "THINKING_ALTERED"
    TOOL_SEQUENCE_DIVERGED = "TOOL_SEQUENCE_DIVERGED"
    ANSWER_DIVERGED = "ANSWER_DIVERGED"
    IDENTIFIER_LOST = "IDENTIFIER_LOST"
    SUMMARY_INVALID = "SUMMARY_INVALID"
    COMPACTION_LOOP = "COMPACTION_LOOP"
    COMPACTION_BYPASSED = "COMPACTION_BYPASSED"
    TRANSCRIPT_OVERSIZE = "TRANSCRIPT_OVERSIZE"
    BASELINE_DRIFT = "BASELINE_DRIFT"
    RECORDING_INVALID = "RECORDING_INVALID"
    CASSETTE_MISSING = "CASSETTE_MISSING"
    COMPACTION_FAILED = "COMPACTION_FAILED"
    COMPACTION_CANCELLED = "COMPACTION_CANCELLED"
    CANNOT_COMPACT = "CANNOT_COMPACT"
    TOOL_FAILED = "TOOL_FAILED"
    AGENT_CONTEXT_DIFFERS = "AGENT_CONTEXT_DIFFERS"
    RECOVERY_CHAIN_WRONG = "RECOVERY_CHAIN_WRONG"
    OVERFLOW_GAVE_UP = "OVERFLOW_GAVE_UP"
    RECORDED_MUTATION_DROPPED = "RECORDED_MUTATION_DROPPED"
    RECORDED_IDENTIFIER_LOST = "RECORDED_IDENTIFIER_LOST"
    RECORDED_SUMMARY_INVALID = "RECORDED_SUMMARY_INVALID"


SEVERITY: dict[Code, Severity] = {
    Code.MUTATION_DROPPED: "blocking",
    Code.MUTATION_ALTERED: "blocking",
    Code.PAIR_BROKEN: "blocking",
    Code.REPLAY_FLAG_WRONG: "blocking",
    Code.MUTATED_IDS_WRONG: "blocking",
    Code.SIDE_EFFECT_ESCAPED: "blocking",
    Code.DUPLICATE_SIDE_EFFECT: "blocking",
    Code.TRANSCRIPT_REWRITTEN: "blocking",
    Code.MISLABELLED_TOOL: "blocking",
    Code.THINKING_ALTERED: "blocking",
    Code.TOOL_SEQUENCE_DIVERGED: "regression",
    Code.ANSWER_DIVERGED: "regression",
    Code.IDENTIFIER_LOST: "regression",
    Code.SUMMARY_INVALID: "regression",
    Code.COMPACTION_LOOP: "regression",
    Code.COMPACTION_BYPASSED: "regression",
    Code.CANNOT_COMPACT: "regression",
    # the compactor under test declined to compact (OpenClaw's safeguard cancels when its quality
    # guard rejects the summary twice): the agent would go on past its budget, or give up
    Code.COMPACTION_CANCELLED: "regression",
    # the overflow recovery of the compacted run broke its release's rules (checks.overflow)
    Code.RECOVERY_CHAIN_WRONG: "regression",
    # the agent gave up on a context overflow: the user got the give-up text instead of an answer
    Code.OVERFLOW_GAVE_UP: "regression",
    Code.TRANSCRIPT_OVERSIZE: "warning",
    Code.BASELINE_DRIFT: "error",
    Code.RECORDING_INVALID: "error",
    Code.CASSETTE_MISSING: "error",
    Code.COMPACTION_FAILED: "error",
    # a tool's code could not be run safely or did not come back: it exited its process, hung or
    # left threads running, or no network isolation could be made for it (opt-in live read tools)
    Code.TOOL_FAILED: "error",
    # the compacted window is not the context the item's agent (pi, OpenClaw: its own pinned code)
    # rebuilds from the working copy: a verdict on it would be about a context the agent never sees
    Code.AGENT_CONTEXT_DIFFERS: "error",
    # a compaction the recording itself holds (the agent's, in production) lost what replaylab's
    # own compaction may never lose: a side effect summarized away, identifiers gone from the
    # window, a memory wiped by an empty or "unavailable" summary. Found on the recording as it
    # is, for every item; blocking until a suite tolerates it (`expect: {tolerate: [...]}`)
    Code.RECORDED_MUTATION_DROPPED: "blocking",
    Code.RECORDED_IDENTIFIER_LOST: "blocking",
    Code.RECORDED_SUMMARY_INVALID: "blocking",
}

SEVERITY_ORDER = {"blocking": 0, "error": 1, "regression": 2, "warning": 3}
#: the findings about a compaction the recording itself holds (`checks.recorded`)
RECORDED_CODES = frozenset(
    {Code.RECORDED_MUTATION_DROPPED, Code.RECORDED_IDENTIFIER_LOST, Code.RECORDED_SUMMARY_INVALID}
)


class Where(BaseModel):
    """Where a finding is: enough to find it in the transcript and in the runs."""

    entry_id: str | None = None
    turn: int | None = None
    tool_call_id: str | None = None
    tool: str | None = None
    session: str | None = None


class Defect(BaseModel):
    code: Code
    severity: Severity
    message: str
    where: Where = Field(default_factory=Where)
    expected: Any = None
    actual: Any = None
    detail: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(
        cls,
        code: Code,
        message: str,
        *,
        expected: Any = None,
        actual: Any = None,
        detail: dict[str, Any] | None = None,
        **where: Any,
    ) -> Defect:
        return cls(
            code=code,
            severity=SEVERITY[code],
            message=message,
            where=Where(**where),
            expected=expected,
            actual=actual,
            detail=detail or {},
        )

    @property
    def blocking(self) -> bool:
        return self.severity == "blocking"
