"""What a replay run produces: one `RunTrace` per run (baseline or compacted), turn by turn.

Plain data, so a run crosses process boundaries as JSON and the reports read it as they are.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from replaylab.defects import Defect


def turn_number(index: int) -> int:
    """The number a user sees for the turn at `index` of `split_turns`: counted from 1, as
    `compact_at: turn:N` and the suites' comments count, so every report, message and finding
    names a turn the same way."""
    return index + 1


class ToolCallTrace(BaseModel):
    turn: int  # 1-based (`turn_number`)
    step: int
    tool_call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str | None = None
    is_error: bool = False
    mutating: bool = False
    # where the result came from: the cassette, blocked by fail-closed replay, or no recording
    source: Literal["cassette", "blocked", "missing", "live", "unanswered"] = "cassette"
    # set when `result` is an excerpt (see `REPORT_RESULT_CHARS`): the full result's length and the
    # sha256 of its UTF-8 text, to find it in the cassette
    result_chars: int | None = None
    result_sha256: str | None = None


class TurnTrace(BaseModel):
    turn: int  # 1-based (`turn_number`)
    user_text: str = ""
    answer: str = ""
    tool_calls: list[ToolCallTrace] = Field(default_factory=list)
    context_tokens: list[int] = Field(default_factory=list)  # estimated window tokens per model call
    # the assistant messages the model returned in this turn, in order (pi JSON shape)
    assistant_messages: list[dict[str, Any]] = Field(default_factory=list)


class RecoveryStepTrace(BaseModel):
    """One step of the overflow recovery chain in a turn (`replay.overflow`)."""

    #: guard | precheck | overflow | in_attempt_compaction | retry_after_in_attempt_compaction |
    #: overflow_compaction | compaction_failed | truncate_tool_results | truncation_failed | give_up
    kind: str
    step: int  # the model call of the turn it happened at (0-based, as `ToolCallTrace.step`)
    detail: str = ""
    #: a compaction's trigger as the compactor was told (`overflow`)
    trigger: str | None = None
    diag_id: str | None = None
    #: the window's estimated tokens before and after the step (the agent profile's estimate)
    tokens_before: int | None = None
    tokens_after: int | None = None
    #: the window entries the step cut or replaced, and those of them that are mutating events
    entry_ids: list[str] = Field(default_factory=list)
    mutating_entry_ids: list[str] = Field(default_factory=list)


class RecoveryTrace(BaseModel):
    """The recovery chain of one turn (one agent run, as OpenClaw counts its attempts)."""

    turn: int  # 1-based (`turn_number`)
    context_window: int
    rules: str  # the OpenClaw runtime rules it followed (`openclaw@2026.9.6`)
    steps: list[RecoveryStepTrace] = Field(default_factory=list)
    attempts: int = 1
    overflow_compactions: int = 0
    truncated: bool = False
    #: None: the turn went on; else the kind it gave up with (`context_overflow`, `compaction_failure`)
    gave_up: str | None = None
    user_text: str | None = None
    diag_id: str | None = None
    #: when it gave up: whether the window still held tool results OpenClaw takes for oversized
    oversized_results: bool = False


class RunTrace(BaseModel):
    label: Literal["baseline", "compacted"]
    turns: list[TurnTrace] = Field(default_factory=list)
    error: str | None = None
    # findings of the run itself: the executor's (fail-closed replay) and the model's (LLM cassette miss)
    defects: list[Defect] = Field(default_factory=list)
    #: the overflow recovery chain of each turn that met the context window (`replay.overflow`)
    recovery: list[RecoveryTrace] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_recovery(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A run with no context window has no chain: its data stays as it was without one."""
        data = handler(self)
        if not self.recovery:
            data.pop("recovery", None)
        return data
