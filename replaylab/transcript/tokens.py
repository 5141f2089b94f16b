"""pi's token estimate: ceil(chars / 4) per message, images 4800 chars (pi `estimateTokens`).

Kept deliberately crude and identical to pi's, because pi and OpenClaw decide *when* and *where*
to cut with exactly this number; a better tokenizer would make replaylab cut elsewhere. "chars"
are JavaScript's: UTF-16 code units, and a tool call's arguments as `JSON.stringify` prints them
(`replaylab.transcript.javascript`). Reference: openclaw-internals.md §2.2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from replaylab.transcript.javascript import js_truthy, json_stringify, utf16_length
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageBlock,
    OpaqueBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.transcript.object_content import written_as_string
from replaylab.transcript.opaque_content import opaque_call, opaque_list_chars
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN, IMAGE_CHARS


def message_chars(message: Any) -> int:
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return utf16_length(message.content)
        # user images: 0
        return sum(
            utf16_length(b.text) if isinstance(b, TextBlock) else opaque_list_chars(b, False) for b in message.content
        )
    if isinstance(message, AssistantMessage):
        if written_as_string(message.content):  # pi walks the string's characters: none has a type
            return 0
        chars = 0
        for block in message.content:
            if isinstance(block, TextBlock):
                chars += utf16_length(block.text)
            elif isinstance(block, ThinkingBlock):
                chars += utf16_length(block.thinking)
            elif isinstance(block, ToolCallBlock):
                # JSON.stringify: no spaces after separators
                chars += utf16_length(block.name) + utf16_length(json_stringify(block.arguments))
            elif (call := opaque_call(block)) is not None:  # a call without an id: pi counts it all the same
                chars += utf16_length(call[0]) + utf16_length(call[1])
            else:
                chars += opaque_list_chars(block, True)
        return chars
    if isinstance(message, (ToolResultMessage, CustomMessage)):
        content = message.content
        if isinstance(content, str):
            return utf16_length(content)
        chars = 0
        for block in content:
            if isinstance(block, TextBlock):
                chars += utf16_length(block.text)
            elif isinstance(block, ImageBlock) or (type(block) is OpaqueBlock and block.type == "image"):
                chars += IMAGE_CHARS  # pi reads only the type
            else:
                chars += opaque_list_chars(block, False)
        return chars
    if isinstance(message, BashExecutionMessage):
        return utf16_length(message.command) + utf16_length(message.output)
    if isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
        return utf16_length(message.summary)
    return 0


def estimate_tokens(message: Any) -> int:
    return math.ceil(message_chars(message) / CHARS_PER_TOKEN)


def usage_context_tokens(usage: Any) -> int | None:
    """pi `calculateContextTokens`: totalTokens, else input+output+cacheRead+cacheWrite (None for
    a usage of another JSON type, whose parts JavaScript reads as undefined: a NaN sum)."""
    if not usage or not isinstance(usage, dict):
        return None
    total = usage.get("totalTokens")
    if isinstance(total, (int, float)) and total:
        return int(total)
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if not any(isinstance(p, (int, float)) for p in parts):
        return None
    return int(sum(p for p in parts if isinstance(p, (int, float))))


def estimate_context_tokens(messages: Iterable[Any], tokens_of: Callable[[Any], int] = estimate_tokens) -> int:
    """pi `estimateContextTokens`: the last usable assistant usage plus estimates after it.
    `tokens_of`: the estimate of one message (an item's memo passes its own, `ItemMemo.tokens`).

    pi 0.73.1's `getAssistantUsage` takes any truthy `usage`: one of another JSON type is the last
    usage, so nothing before it is estimated, but `calculateContextTokens` reads it as NaN (the
    agent's count is NaN, `shouldCompact` false); replaylab's count is a number, so that part is 0."""
    messages = list(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
            usage = message.usage
            used = 0 if js_truthy(usage) and not isinstance(usage, dict) else usage_context_tokens(usage)
            if used is not None:
                return used + sum(map(tokens_of, messages[index + 1 :]))
    return sum(map(tokens_of, messages))
