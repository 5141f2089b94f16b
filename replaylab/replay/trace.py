"""What a replay run produces: one `RunTrace` per run (baseline or compacted), turn by turn.

Plain data, so a run crosses process boundaries as JSON and the reports read it as they are.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

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


class RunTrace(BaseModel):
    label: Literal["baseline", "compacted"]
    turns: list[TurnTrace] = Field(default_factory=list)
    error: str | None = None
    # findings of the run itself: the executor's (fail-closed replay) and the model's (LLM cassette miss)
    defects: list[Defect] = Field(default_factory=list)
