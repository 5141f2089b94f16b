"""A replaylab window as OpenAI chat messages, and an OpenAI response as a pi assistant message.

Follows pi's `convertToLlm` and its provider-side transform (openclaw-internals §2.7):
compaction / branch summaries and custom messages become user text with pi's exact wrappers,
`bashExecution` becomes pi's "Ran `cmd`" text, errored / aborted assistant messages are dropped,
thinking blocks are dropped (a different model cannot use another model's signed thinking), and
an agent tool call left without a result gets pi's synthetic `No result provided` error result.

τ²-bench telecom has tool calls made by the *user* (on its own phone). Chat APIs only know
assistant tool calls, so a user's call and its result are rendered as user text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from replaylab.json_dump import compact_json
from replaylab.transcript.context import bash_execution_text
from replaylab.transcript.javascript import js_truthy
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.upstream.pi_0_73_1 import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    ORPHAN_TOOL_RESULT_TEXT,
)


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for block in content or []:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}})
        elif isinstance(block, ToolCallBlock):
            parts.append({"type": "text", "text": f"[user ran tool {block.name} {compact_json(block.arguments)}]"})
    return parts


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    parts = _text_parts(content)
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _result_text(message: ToolResultMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if isinstance(b, TextBlock))


def to_openai_messages(window: Sequence[Any], *, system: str | None = None) -> list[dict[str, Any]]:
    """OpenAI chat `messages` for a window (WindowMessage items or bare messages)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    pending: list[str] = []  # agent tool calls still waiting for a result
    user_calls: set[str] = set()

    def flush() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": ORPHAN_TOOL_RESULT_TEXT})
        pending.clear()

    for item in window:
        message = getattr(item, "message", item)
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id in pending:
                pending.remove(message.tool_call_id)
                out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": _result_text(message)})
            else:
                flush()
                who = "user" if message.tool_call_id in user_calls else "earlier"
                out.append(
                    {
                        "role": "user",
                        "content": f"[result of {who} tool {message.tool_name or ''}]: {_result_text(message)}",
                    }
                )
            continue
        flush()
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                continue
            calls = message.tool_calls()
            entry: dict[str, Any] = {"role": "assistant", "content": message.text() or None}
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": compact_json(c.arguments)},
                    }
                    for c in calls
                ]
                pending.extend(c.id for c in calls)
            out.append(entry)
        elif isinstance(message, UserMessage):
            if isinstance(message.content, list):
                user_calls.update(b.id for b in message.content if isinstance(b, ToolCallBlock))
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, CustomMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, CompactionSummaryMessage):
            out.append(
                {"role": "user", "content": COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX}
            )
        elif isinstance(message, BranchSummaryMessage):
            out.append({"role": "user", "content": BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX})
        elif isinstance(message, BashExecutionMessage):
            if not js_truthy(message.exclude_from_context):
                out.append({"role": "user", "content": bash_execution_text(message)})
    flush()
    return out


def from_openai_message(
    message: Any,
    *,
    usage: Any = None,
    provider: str | None = None,
    model: str | None = None,
    finish_reason: str | None = None,
) -> AssistantMessage:
    """A pi assistant message from an OpenAI-style response message (dict or SDK object)."""

    def get(obj: Any, key: str) -> Any:
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)

    content: list[Any] = []
    text = get(message, "content")
    if isinstance(text, str) and text:
        content.append(TextBlock(text=text))
    for call in get(message, "tool_calls") or []:
        function = get(call, "function")
        raw = get(function, "arguments") or "{}"
        try:
            arguments = orjson.loads(raw) if isinstance(raw, str) else dict(raw)
        except orjson.JSONDecodeError:
            arguments = {"_raw": raw}
        if not isinstance(arguments, dict):
            arguments = {"_raw": arguments}
        content.append(ToolCallBlock(id=str(get(call, "id")), name=str(get(function, "name")), arguments=arguments))
    stop = (
        "toolUse"
        if any(isinstance(b, ToolCallBlock) for b in content)
        else ("length" if finish_reason == "length" else "stop")
    )
    return AssistantMessage(
        content=content,
        api="openai-completions",
        provider=provider,
        model=model,
        usage=pi_usage(usage),
        stop_reason=stop,
    )


def pi_usage(usage: Any) -> dict[str, Any] | None:
    """OpenAI usage → pi's usage shape (input, output, totalTokens)."""
    if usage is None:
        return None

    def get(key: str) -> Any:
        return usage.get(key) if isinstance(usage, dict) else getattr(usage, key, None)

    prompt, completion = get("prompt_tokens") or 0, get("completion_tokens") or 0
    total = get("total_tokens") or (prompt + completion)
    return {"input": int(prompt), "output": int(completion), "cacheRead": 0, "cacheWrite": 0, "totalTokens": int(total)}
