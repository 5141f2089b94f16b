"""pi 1.6.0's token estimates (compaction/compaction.js `estimateTokens`,
`estimateContextTokens`, `estimateProjectedContextTokens`; pi-ai utils/transcript.js
`getCurrentSystemMessage`).

* Per message, ceil(chars / 4) in UTF-16 units as 0.73.1, and: a system message counts its
  content (text, 4,800 per image), every non-empty section and `JSON.stringify(toolsAdded)`
  (`toolsRemoved` not); a user message's images count 4,800 each (0.73.1: 0).
* The context size: the last assistant message whose usage is neither aborted, an error nor all
  zero (0.73.1 took an all-zero usage) gives its usage plus the estimates after it — only when
  that message's entry lies after the branch's latest `context_edit` or compaction; otherwise the
  estimate of the replayed current system message (once) plus every other message's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from replaylab.agents.pi_1_6_0.context import Projected, extra, role_of
from replaylab.transcript.javascript import json_stringify, utf16_length
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    CustomMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
)
from replaylab.transcript.object_content import written_as_string
from replaylab.transcript.opaque_content import opaque_call, opaque_list_chars
from replaylab.upstream.pi_1_6_0 import CHARS_PER_TOKEN, CONTEXT_EDIT_TYPE, IMAGE_CHARS, SYSTEM_ROLE


def _field(block: Any, name: str) -> Any:
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)


def content_chars(content: Any) -> int:
    """`estimateTextAndImageContentChars`: a string's length, else text blocks + 4,800 per image."""
    if isinstance(content, str):
        return utf16_length(content)
    chars = 0
    for block in content or ():
        kind = _field(block, "type")
        if kind == "text":
            text = _field(block, "text")
            if isinstance(text, str):
                chars += utf16_length(text)
            else:
                chars += opaque_list_chars(block, False)
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def system_chars(message: Any) -> int:
    chars = content_chars(extra(message, "content"))
    sections = extra(message, "sections")
    if isinstance(sections, dict):
        chars += sum(utf16_length(v) for v in sections.values() if isinstance(v, str) and v)
    tools = extra(message, "toolsAdded")
    if tools:
        chars += utf16_length(json_stringify(tools))
    return chars


def message_chars(message: Any) -> int:
    if isinstance(message, UserMessage):
        return content_chars(message.content)
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
                chars += utf16_length(block.name) + utf16_length(json_stringify(block.arguments))
            elif (call := opaque_call(block)) is not None:  # a call without an id: pi counts it all the same
                chars += utf16_length(call[0]) + utf16_length(call[1])
            else:
                chars += opaque_list_chars(block, True)
        return chars
    if isinstance(message, (ToolResultMessage, CustomMessage)):
        return content_chars(message.content)
    if isinstance(message, BashExecutionMessage):
        return utf16_length(message.command) + utf16_length(message.output)
    if isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
        return utf16_length(message.summary)
    if isinstance(message, UnknownMessage) and message.role == SYSTEM_ROLE:
        return system_chars(message)
    return 0


def estimate_tokens(message: Any) -> int:
    return math.ceil(message_chars(message) / CHARS_PER_TOKEN)


def current_system_message(messages: Sequence[Any]) -> dict[str, Any] | None:
    """`getCurrentSystemMessage(messages)` (pi-ai utils/transcript.js) as its JSON, or None: the
    system messages replayed in order — non-empty contents joined by a blank line, sections
    patched by name (null removes one), tools removed then added by name — stamped with the
    first one's time; none when no message gave a time and no tool is left."""
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for message in messages:
        if role_of(message) != SYSTEM_ROLE:
            continue
        if timestamp is None:  # `??=`: a missing or null time leaves the next one to give it
            timestamp = extra(message, "timestamp")
        content = extra(message, "content")
        text = (
            content
            if isinstance(content, str)
            else "\n".join(
                t for b in content or () if _field(b, "type") == "text" and isinstance(t := _field(b, "text"), str)
            )
        )
        if text:
            texts.append(text)
        for name, value in (extra(message, "sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in extra(message, "toolsRemoved") or ():
            tools.pop(_field(tool, "name"), None)
        for tool in extra(message, "toolsAdded") or ():
            tools[_field(tool, "name")] = tool
    if timestamp is None and not tools:
        return None
    current: dict[str, Any] = {"role": SYSTEM_ROLE, "content": "\n\n".join(texts)}
    if sections:
        current["sections"] = sections
    if tools:
        current["toolsAdded"] = list(tools.values())
    current["timestamp"] = 0 if timestamp is None else timestamp
    return current


def current_system_tokens(messages: Sequence[Any]) -> int:
    """The estimate of `getCurrentSystemMessage(messages)` (0 when there is none)."""
    current = current_system_message(messages)
    if current is None:
        return 0
    sections = current.get("sections") or {}
    chars = utf16_length(current["content"]) + sum(
        utf16_length(v) for v in sections.values() if isinstance(v, str) and v
    )
    if "toolsAdded" in current:
        chars += utf16_length(json_stringify(current["toolsAdded"]))
    return math.ceil(chars / CHARS_PER_TOKEN)


def usage_tokens(message: Any) -> float | None:
    """`calculateContextTokens(usage)` of a usable assistant message (None: not usable — aborted,
    an error, no usage, or a total that is not above zero; a missing part makes JavaScript's sum NaN,
    and so does a usage of another JSON type: `getAssistantUsage`'s `> 0` skips it)."""
    if not isinstance(message, AssistantMessage) or message.stop_reason in ("aborted", "error"):
        return None
    usage = message.usage
    if not usage or not isinstance(usage, dict):  # another JSON type: a NaN sum, which `> 0` refuses
        return None
    total = usage.get("totalTokens")
    if not total:
        parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
        if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in parts):
            return None
        total = sum(parts)  # type: ignore[arg-type]
    return total if isinstance(total, (int, float)) and total > 0 else None


def _last_usage(messages: Sequence[Any]) -> tuple[int, float] | None:
    for index in range(len(messages) - 1, -1, -1):
        used = usage_tokens(messages[index])
        if used is not None:
            return index, used
    return None


def unused_context_tokens(messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> int:
    """The estimate without provider usage: the current system message once, every other message."""
    return current_system_tokens(messages) + sum(tokens_of(m) for m in messages if role_of(m) != SYSTEM_ROLE)


def context_tokens(messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> float:
    """`estimateContextTokens` of a context alone, with the fallback of
    `estimateProjectedContextTokens` (which entry a usage came from needs the path: see
    `projected_context_tokens`)."""
    found = _last_usage(messages)
    if found is None:
        return unused_context_tokens(messages, tokens_of)
    index, used = found
    return used + sum(map(tokens_of, messages[index + 1 :]))


def projected_context_tokens(
    found: Sequence[Projected], path: Sequence[AnyEntry], tokens_of: Callable[[Any], int]
) -> float:
    """`estimateProjectedContextTokens(projection, path)`: the recorded usage counts only when its
    entry lies after the branch's latest context edit or compaction."""
    messages = [m for item in found for m in item.messages]
    usage = _last_usage(messages)
    if usage is not None:
        index, used = usage
        position = 0
        source = None
        for item in found:
            position += len(item.messages)
            if index < position:
                source = item.entry.id
                break
        source_index = next((i for i, e in enumerate(path) if e.id == source), -1) if source else -1
        latest = next(
            (
                i
                for i in range(len(path) - 1, -1, -1)
                if isinstance(path[i], CompactionEntry) or path[i].type == CONTEXT_EDIT_TYPE
            ),
            -1,
        )
        if source_index > latest:
            return used + sum(map(tokens_of, messages[index + 1 :]))
    return unused_context_tokens(messages, tokens_of)
