"""OpenClaw 2026.9.6's prompt "token pressure": the estimate its pre-prompt and mid-turn prechecks
weigh a request by (`estimateMessageTokenPressure`, `estimateRenderedPromptTokens`,
`estimateToolSchemaTokens`, resource-loader-v8341X6T.mjs; `estimateTranscriptBoundaryTokenPressure`
and `resolveCompactionPressureDecision`, settled-turn-finalization-result-C8Oihyzx.mjs).

Heavier than its compaction estimate (`estimate.py`, chars / 4): each message counts a boundary
overhead, each content block its own, a tool result at least one token per two UTF-16 units, a
tool call's name and arguments as JSON at three chars a token; the sum (with the rendered prompt's
overhead) is multiplied by the safety margin, and the request's tool schemas are added when the
caller passes them (`tool_schema_tokens`).

A precheck's budget is the window less the compaction reserve the attempt runs with — the pi
setting raised to OpenClaw's floor (`applyAgentCompactionSettingsFromConfig`) and capped at a
quarter of the window (`resolveEffectiveCompactionReserveTokens`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from replaylab.agents.openclaw_2026_9_6.context import excluded
from replaylab.agents.openclaw_2026_9_6.estimate import string_chars
from replaylab.transcript.context import bash_execution_text
from replaylab.transcript.javascript import json_stringify, utf16_length
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    dump_entry,
)
from replaylab.upstream.openclaw_2026_9_6 import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_RESERVE_TOKENS_FLOOR,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    CONTENT_BLOCK_OVERHEAD_TOKENS,
    IMAGE_BLOCK_TOKENS,
    JSON_PAYLOAD_CHARS_PER_TOKEN,
    MAX_COMPACTION_RESERVE_RATIO,
    MESSAGE_BOUNDARY_OVERHEAD_TOKENS,
    PRESSURE_SAFETY_MARGIN,
    TOOL_RESULT_CHARS_PER_TOKEN,
)


def string_pressure(text: str, chars_per_token: int = 4, tool_result: bool = False) -> int:
    """`estimateStringTokenPressure(text, charsPerToken, mode)`."""
    tokens = math.ceil(string_chars(text) / chars_per_token)
    return max(math.ceil(utf16_length(text) / TOOL_RESULT_CHARS_PER_TOKEN), tokens) if tool_result else tokens


def json_pressure(value: Any, chars_per_token: int = JSON_PAYLOAD_CHARS_PER_TOKEN, tool_result: bool = False) -> int:
    """`estimateJsonPayloadTokenPressure`."""
    return string_pressure(json_stringify(value), chars_per_token, tool_result)


def _json(value: Any) -> Any:
    return dump_entry(value) if hasattr(value, "model_dump") else value


def _block_pressure(block: Any, tool_result: bool = False) -> int:
    """`estimateContentBlockTokenPressure(block, 4, mode)`."""
    if isinstance(block, str):
        return string_pressure(block, 4, tool_result)
    if isinstance(block, TextBlock):
        return CONTENT_BLOCK_OVERHEAD_TOKENS + string_pressure(block.text, 4, tool_result)
    if isinstance(block, ThinkingBlock):
        return CONTENT_BLOCK_OVERHEAD_TOKENS + string_pressure(block.thinking, 4, tool_result)
    if isinstance(block, ImageBlock):
        return IMAGE_BLOCK_TOKENS
    return CONTENT_BLOCK_OVERHEAD_TOKENS + json_pressure(_json(block), 4, tool_result)


def _content_pressure(content: Any, tool_result: bool = False) -> int:
    """`estimateContentTokenPressure(content, mode)`."""
    if isinstance(content, str):
        return string_pressure(content, 4, tool_result)
    if isinstance(content, list):
        return sum(_block_pressure(block, tool_result) for block in content)
    if content is not None:
        return json_pressure(_json(content), 4 if tool_result else JSON_PAYLOAD_CHARS_PER_TOKEN, tool_result)
    return 0


def _identifier_pressure(value: Any) -> int:
    """`estimateIdentifierTokenPressure`."""
    if value is None:
        return 0
    if isinstance(value, (str, int, float, bool)):
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return string_pressure(text, JSON_PAYLOAD_CHARS_PER_TOKEN)
    return json_pressure(value)


def message_pressure(message: Any) -> int:
    """`estimateMessageTokenPressure(message)`."""
    if excluded(message):
        return 0
    tokens = MESSAGE_BOUNDARY_OVERHEAD_TOKENS
    if isinstance(message, ToolResultMessage):
        return tokens + _content_pressure(message.content, tool_result=True) + _identifier_pressure(message.tool_name)
    if isinstance(message, BashExecutionMessage):
        return tokens + string_pressure(bash_execution_text(message))
    if isinstance(message, BranchSummaryMessage):
        return tokens + string_pressure(BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX)
    if isinstance(message, CompactionSummaryMessage):
        return tokens + string_pressure(COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX)
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                tokens += (
                    CONTENT_BLOCK_OVERHEAD_TOKENS
                    + _identifier_pressure(block.name)
                    + json_pressure(block.arguments if "arguments" in block.model_fields_set else {})
                )
            else:
                tokens += _block_pressure(block)
        return tokens
    return tokens + _content_pressure(getattr(message, "content", None))


def prompt_pressure(messages: Sequence[Any], *, tool_schema_tokens: int = 0) -> int:
    """`estimateTranscriptBoundaryTokenPressure` of a request with no system prompt and no new
    prompt text (a call in the middle of a turn), no provider-measured context usage and no
    compaction replay: the messages' pressure and the rendered prompt's overhead, times the
    safety margin, plus the tool schemas' tokens."""
    local = MESSAGE_BOUNDARY_OVERHEAD_TOKENS + sum(message_pressure(m) for m in messages)
    return math.ceil(local * PRESSURE_SAFETY_MARGIN) + max(0, tool_schema_tokens)


def tool_schema_pressure(tools: Sequence[dict[str, Any]]) -> int:
    """`estimateToolSchemaTokenPressure`: the tools as the request sends them (name, description,
    parameters) as JSON, times the safety margin."""
    if not tools:
        return 0
    sent = [{k: tool[k] for k in ("name", "description", "parameters") if k in tool} for tool in tools]
    return math.ceil(json_pressure(sent) * PRESSURE_SAFETY_MARGIN)


def attempt_reserve_tokens(reserve_tokens: int | None = None) -> int:
    """The compaction reserve an attempt runs with (`applyAgentCompactionSettingsFromConfig`):
    pi's setting raised to OpenClaw's floor."""
    return max(reserve_tokens or 0, COMPACTION_RESERVE_TOKENS_FLOOR)


def prompt_budget(context_tokens: int, reserve_tokens: int) -> int:
    """`promptBudgetBeforeReserve`: the window less the effective reserve
    (`resolveEffectiveCompactionReserveTokens`: at most a quarter of the window)."""
    budget = max(1, math.floor(context_tokens))
    return max(1, budget - min(max(0, reserve_tokens), math.floor(budget * MAX_COMPACTION_RESERVE_RATIO)))


__all__ = [
    "attempt_reserve_tokens",
    "message_pressure",
    "prompt_budget",
    "prompt_pressure",
    "string_pressure",
    "tool_schema_pressure",
]
