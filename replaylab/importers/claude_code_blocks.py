"""Claude Code's message content → pi's: Anthropic content blocks, stop reasons and usage."""

from __future__ import annotations

from typing import Any

STOP_REASONS = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "stop_sequence": "stop"}


def response_groups(records: list[tuple[int, dict[str, Any]]]) -> dict[int, str]:
    """The API response each assistant record is part of, by position: the records sharing a
    `message.id` (one response Claude Code split, tool results written between them), as long as
    no other response or prompt came between them; a later record with the same id after one
    did is a response of its own (an id no real file reuses, which would else move a call far
    from its result)."""
    group_of: dict[int, str] = {}
    taken: set[str] = set()
    open_group: tuple[str, str] | None = None  # (message id, group key)
    for position, (_, record) in enumerate(records):
        kind = record.get("type")
        if is_virtual(record):
            continue  # a script's call, written among the response's records: none of its parts
        if kind == "assistant":
            response = message_id(record) or f"#{position}"
            if open_group is None or open_group[0] != response:
                key = response if response not in taken else f"{response}#{position}"
                taken.add(key)
                open_group = (response, key)
            group_of[position] = open_group[1]
        elif kind == "user" and not has_tool_result(record):
            open_group = None
    return group_of


def is_virtual(record: dict[str, Any]) -> bool:
    """A user or assistant record Claude Code never sends the model (2.1.332's `Yp`, which its
    `yu` drops from every request): a call a tool's script ran, and its result."""
    return record.get("type") in ("user", "assistant") and record.get("isVirtual") is True


def has_tool_result(record: dict[str, Any]) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def message_id(record: dict[str, Any]) -> str | None:
    """The API response a record is part of: its `message.id`, else its own `uuid`; None when it
    has neither (then it is a response of its own)."""
    given = record.get("message")
    message = given if isinstance(given, dict) else {}
    value = message.get("id") or record.get("uuid")
    return None if value is None else str(value)


def content_blocks(message: Any) -> list[Any]:
    """A message's content as a list of blocks: the API also takes a string, one text block."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return content if isinstance(content, list) else []


def block_id(value: Any) -> str | None:
    """A call's `id` or a result's `tool_use_id` as the source wrote it; None when it wrote none
    (a block no call or result can be paired with, never the text "None")."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        return None
    return str(value)


def assistant_block(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {"type": "text", "text": str(block)}
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if block.get("signature") is not None:
            out["thinkingSignature"] = block["signature"]
        return out
    if kind == "image":  # not in an answer of today's API; as a user's image if it ever is
        return user_block(block)
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "thinkingSignature": block.get("data"), "redacted": True}
    if kind == "tool_use":
        arguments = block.get("input") if isinstance(block.get("input"), dict) else {"_raw": block.get("input")}
        return {
            "type": "toolCall",
            "id": block_id(block.get("id")),
            "name": str(block.get("name", "")),
            "arguments": arguments,
        }
    return dict(block)  # an Anthropic block pi does not model: kept verbatim


def user_block(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {"type": "text", "text": str(block)}
    if block.get("type") == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if block.get("type") == "image" and isinstance(block.get("source"), dict):
        source = block["source"]
        if source.get("type") == "base64":
            return {"type": "image", "data": source.get("data", ""), "mimeType": source.get("media_type", "")}
        return {"type": "text", "text": f"[image {source.get('url', '')}]"}
    return dict(block)


def usage_of(usage: Any) -> dict[str, int] | None:
    """Anthropic usage → pi `{input, output, cacheRead, cacheWrite, totalTokens}`."""
    if not isinstance(usage, dict):
        return None
    values = {
        "input": usage.get("input_tokens"),
        "output": usage.get("output_tokens"),
        "cacheRead": usage.get("cache_read_input_tokens"),
        "cacheWrite": usage.get("cache_creation_input_tokens"),
    }
    out = {k: int(v) if isinstance(v, (int, float)) else 0 for k, v in values.items()}
    out["totalTokens"] = sum(out.values())
    return out
