"""OpenClaw 2026.9.6's token estimate (`estimateTokens`, `estimateContextTokens`,
compaction-CAzwgOuQ.mjs; `estimateStringChars`, cjk-chars-6ld30jSx.mjs).

`ceil(chars / 4)` per message, where a string's chars are its UTF-16 length plus a weight for
each CJK-like character (common CJK +3, rare BMP +11, width forms +7, supplementary ideographs
+10 / +14: the one table `CJK_WEIGHT_CATEGORIES` the truncation weighs by too, counted by
`replaylab.compaction.js_strings.weighted_length`); emoji are not weighted. A message marked
`excludeFromContext` counts 0. Content (user, custom, tool result) counts its text blocks joined
by newlines, 8,000 chars per image (user images included) and, when a block has no text, an
omission line (`[image data omitted from summary input]`, `[non-text data omitted from summary
input]`, each distinct line once) plus 17; a user message adds its persisted sender suffix
(` sender={"id":…}`); an assistant message counts text, thinking and each call's name and
`JSON.stringify(arguments)` (a text, thinking or name that is a list without CJK counts its
`.length`, as `estimateStringChars` reads it); a summary counts its summary only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from replaylab.agents.openclaw_2026_9_6.context import excluded, extra
from replaylab.compaction.js_strings import weighted_length
from replaylab.transcript.javascript import js_string, js_truthy, json_stringify
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    OpaqueBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.transcript.opaque_content import opaque_call
from replaylab.upstream.openclaw_2026_9_6 import (
    CHARS_PER_TOKEN,
    IMAGE_BLOCK_CHARS,
    IMAGE_OMISSION_TEXT,
    JS_WHITESPACE,
    NON_TEXT_OMISSION_TEXT,
    OMISSION_EXTRA_CHARS,
    UNUSABLE_STOP_REASONS,
)


def string_chars(text: str) -> int:
    """`estimateStringChars(text)`."""
    return weighted_length(text)


def field_chars(value: Any) -> int | None:
    """`estimateStringChars(value)` of an assistant item's field of any JSON type: a list whose
    `String()` is ASCII counts its `.length` (no CJK to weigh). None where it throws or gives NaN
    (`transcript.unestimable`): replaylab counts nothing of that item."""
    if isinstance(value, str):
        return string_chars(value)
    return len(value) if isinstance(value, list) and js_string(value).isascii() else None


def _block(block: Any) -> tuple[str | None, Any, Any]:
    """(type, text, content) of a content block, as its JSON holds them."""
    if isinstance(block, OpaqueBlock):  # an item as written: JavaScript reads its fields as they are
        block = block.value if isinstance(block.value, dict) else {}
    if isinstance(block, dict):
        return block.get("type"), block.get("text"), block.get("content")
    text = block.text if isinstance(block, TextBlock) else extra(block, "text")
    return getattr(block, "type", None), text, extra(block, "content")


def content_chars(content: Any) -> int:
    """`countContentChars(content)`."""
    if isinstance(content, str):
        return string_chars(content)
    texts: list[str] = []
    omissions: list[str] = []
    images = 0
    for block in content or ():
        kind, text, inner = _block(block)
        if kind == "image":
            images += 1
        # a `text` of another type is kept when JavaScript finds it truthy (`{}` and `[]` are) and
        # joined as `String()` prints it (an object as `[object Object]`)
        block_text: Any
        if kind in ("text", "toolResult", "tool_result") and js_truthy(text):
            block_text = text
        elif kind in ("toolResult", "tool_result") and isinstance(inner, str):
            block_text = inner
        else:
            block_text = ""
        if kind != "text" and not js_truthy(block_text):
            line = IMAGE_OMISSION_TEXT if kind == "image" else NON_TEXT_OMISSION_TEXT
            if line not in omissions:
                omissions.append(line)
        if js_truthy(block_text):
            texts.append(js_string(block_text))
    omission = "\n".join(omissions)
    return (
        string_chars("\n".join(texts))
        + IMAGE_BLOCK_CHARS * images
        + (len(omission) + OMISSION_EXTRA_CHARS if omission else 0)
    )


def sender_suffix(message: UserMessage) -> str:
    """`formatPersistedSenderSuffix`: ` sender={"id":…,"name":…,"username":…}` from the user
    message's `__openclaw` metadata, when it names a sender id."""
    metadata = extra(message, "__openclaw")
    if not isinstance(metadata, dict):
        return ""

    def normal(value: Any) -> str | None:
        if not isinstance(value, str):
            return None
        return value.replace("\0", "").strip(JS_WHITESPACE) or None

    sender = {"id": normal(metadata.get("senderId"))}
    if not sender["id"]:
        return ""
    for key, field in (("name", "senderName"), ("username", "senderUsername")):
        value = normal(metadata.get(field))
        if value is not None:
            sender[key] = value
    return " sender=" + json_stringify(sender)


def _arguments_text(block: ToolCallBlock) -> str:
    if "arguments" not in block.model_fields_set:
        return "undefined"  # `JSON.stringify(undefined) ?? "undefined"`
    return json_stringify(block.arguments)


def _opaque_chars(item: Any) -> int:
    """What `estimateTokens` counts of an assistant's item no block model reads (`text`, `thinking`
    or a call's `name` of another type, read as `field_chars` reads it)."""
    if not isinstance(item, dict):
        return 0
    kind = item.get("type")
    if kind in ("text", "thinking"):
        return field_chars(item.get(kind)) or 0
    if kind == "toolCall" and (name := field_chars(item.get("name"))) is not None:
        return name + string_chars(json_stringify(item["arguments"]) if "arguments" in item else "undefined")
    return 0


def estimate_tokens(message: Any) -> int:
    """`estimateTokens(message)`."""
    if excluded(message):
        return 0
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextBlock):
                chars += string_chars(block.text)
            elif isinstance(block, ThinkingBlock):
                chars += string_chars(block.thinking)
            elif isinstance(block, ToolCallBlock):
                chars += string_chars(block.name) + string_chars(_arguments_text(block))
            elif (call := opaque_call(block)) is not None:  # a call without an id: counted all the same
                chars += string_chars(call[0]) + string_chars(call[1])
            elif isinstance(block, OpaqueBlock):
                chars += _opaque_chars(block.value)
        return math.ceil(chars / CHARS_PER_TOKEN)
    if isinstance(message, UserMessage):
        return math.ceil((content_chars(message.content) + string_chars(sender_suffix(message))) / CHARS_PER_TOKEN)
    if isinstance(message, (CustomMessage, ToolResultMessage)):
        return math.ceil(content_chars(message.content) / CHARS_PER_TOKEN)
    if isinstance(message, BashExecutionMessage):
        return math.ceil((string_chars(message.command) + string_chars(message.output)) / CHARS_PER_TOKEN)
    if isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        return math.ceil(string_chars(message.summary) / CHARS_PER_TOKEN)
    return 0


# ---------------------------------------------------------------- recorded usage


def usage_tokens(usage: Any) -> float:
    """`calculateContextTokens(usage)`: the provider's context usage when it says it is
    available, else `totalTokens`, else input + output + cacheRead + cacheWrite."""
    context = usage.get("contextUsage")
    if isinstance(context, dict) and context.get("state") == "available":
        return _number(context.get("totalTokens"))
    total = _number(usage.get("totalTokens"))
    if total and not math.isnan(total):  # `usage.totalTokens || ...`: NaN and 0 fall through
        return total
    return sum(_number(usage.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite"))


def _number(value: Any) -> float:
    """A JSON value as JavaScript's `+` and `||` treat it here (absent or not a number: NaN → 0 for
    the sum's purpose; the upstream sum of an absent field is NaN, which no comparison accepts)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return value
    return math.nan


def _usable_usage(message: Any) -> dict[str, Any] | None:
    """`getAssistantUsage`: the usage of an assistant message that may be trusted."""
    if not isinstance(message, AssistantMessage) or (
        type(message.stop_reason) is str and message.stop_reason in UNUSABLE_STOP_REASONS
    ):
        return None
    usage = message.usage
    if not usage or not isinstance(usage, dict):
        return None
    return usage if usage_tokens(usage) > 0 else None


def _barrier(message: Any) -> bool:
    """`isUnavailableContextBarrier`: a message past which no earlier usage is trusted. Any truthy
    usage is read, one of another JSON type too (`usage.contextUsage` is then undefined)."""
    if not isinstance(message, AssistantMessage) or not js_truthy(message.usage):
        return False
    usage = message.usage
    context = usage.get("contextUsage") if isinstance(usage, dict) else None
    if message.api == "cli" and context is None:
        return True
    if not isinstance(context, dict) or context.get("state") != "unavailable":
        return False
    return usage_tokens(usage) == 0


def last_usage(messages: Sequence[Any]) -> tuple[float, int] | None:
    """`getLastAssistantUsageInfo`: (its tokens, its index) of the last trusted usage."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _barrier(message):
            return None
        usage = _usable_usage(message)
        if usage is not None:
            context = usage.get("contextUsage")
            if not (isinstance(context, dict) and context.get("state") == "unavailable"):
                return usage_tokens(usage), index
    return None


def context_tokens(messages: Sequence[Any], tokens_of: Callable[[Any], int] = estimate_tokens) -> tuple[float, float]:
    """`estimateContextTokens(messages)`: (tokens, the usage part of them; 0 without usage)."""
    found = last_usage(messages)
    if found is None:
        return sum(map(tokens_of, messages)), 0
    used, index = found
    return used + sum(map(tokens_of, messages[index + 1 :])), used
