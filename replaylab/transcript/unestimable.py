"""Messages pi's own token estimate cannot count: a warning naming file, line and field.

pi 0.73.1's and 1.6.0's `estimateTokens` (compaction.js) read `block.type` of every content item
and, in an assistant message, `text.length`, `thinking.length`, `name.length` and
`JSON.stringify(arguments).length` without a check; in other content, `text.length` of a truthy
text. A `null` item, or such a field that is absent or has no length, makes it throw or give NaN,
and so does a tool result whose content is one object, not a list (`object_content`):
pi's compaction fails where it estimates that message (the context after its last usage, the tail
its cut walks back over; a NaN there leaves it nothing to summarize), and its summarizer where it
serializes one it cannot (`unserializable_item`): `compaction.estimate_failure` refuses such a
compaction as the agent fails. replaylab counts what it can read (such an item adds nothing), so its
figures go on where pi's stop; the warning says so.

OpenClaw 2026.9.6 estimates with its own `estimateTokens`, which guards more and fails on less
(`openclaw_unestimable_item`, `openclaw_unserializable_item`); the parse's warning stays pi's.

Only an entry whose content failed validation can hold such an item (`opaque_content`), so only
those are looked at: a well-formed session never comes here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic
from replaylab.transcript.diagnose import diagnostic
from replaylab.transcript.javascript import js_string, js_truthy

#: the message roles pi's estimate reads content items of, and the fields each item type needs there
_ASSISTANT_FIELDS = {"text": "text", "thinking": "thinking", "toolCall": "name"}
_CONTENT_ROLES = frozenset({"user", "toolResult", "custom"})


def _message_content(obj: dict[str, Any]) -> tuple[Any, Any, str] | None:
    """(role, content, the content's field) of a message or custom message entry `obj`; None for
    any other entry."""
    if obj.get("type") == "custom_message":
        return "custom", obj.get("content"), "content"
    if obj.get("type") == "message" and isinstance(obj.get("message"), dict):
        message = obj["message"]
        return message.get("role"), message.get("content"), "message.content"
    return None


def unestimable_item(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The field of the first content item of entry `obj` pi's estimate fails on, and how; None
    when pi counts every item."""
    read = _message_content(obj)
    if read is not None and read[0] == "toolResult" and isinstance(read[1], dict):
        return read[2], "content is a JSON object, not a list: iterating it (`for … of`) throws"
    listed = _estimated_list(read)
    if listed is None:
        return None
    role, content, where = listed
    for position, item in enumerate(content):
        field = f"{where}.{position}"
        if item is None:
            return field, "content item is null: reading its `type` throws"
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if role == "assistant":
            key = _ASSISTANT_FIELDS.get(kind) if isinstance(kind, str) else None
            if key is not None and not _has_length(item.get(key)):
                how = "throws" if item.get(key) is None else "gives NaN"
                return f"{field}.{key}", f"content item has no {key} with a length: `{key}.length` {how}"
            if kind == "toolCall" and "arguments" not in item:
                return f"{field}.arguments", "content item has no arguments: `JSON.stringify(arguments).length` throws"
        elif kind == "text" and js_truthy(item.get("text")) and not _has_length(item.get("text")):
            return f"{field}.text", "content item has a text without a length: `text.length` gives NaN"
    return None


def _estimated_list(read: tuple[Any, Any, str] | None) -> tuple[Any, list[Any], str] | None:
    """`_message_content`'s answer when its content is a list whose items the estimates read
    (an assistant's, or a user, tool result or custom message's)."""
    if read is None:
        return None
    role, content, where = read
    if not isinstance(content, list) or (role != "assistant" and role not in _CONTENT_ROLES):
        return None
    return role, content, where


def argumentless_call(obj: dict[str, Any]) -> bool:
    """Whether message entry `obj` holds a `toolCall` block written without `arguments` (the block
    model reads it, so only this says so)."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(item, dict) and item.get("type") == "toolCall" and "arguments" not in item for item in content
    )


def estimate_throws(how: str) -> bool:
    """Whether the failure `unestimable_item` describes throws (else it gives NaN)."""
    return how.endswith("throws")


def unserializable_item(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The field of the first content item of entry `obj` pi's summarizer cannot serialize
    (compaction/utils.js `serializeConversation`, after `convertToLlm`), and how; None when it can.
    It reads `c.type` of every item of a list content, calls `.filter` on a user or tool-result
    content that is not a string, and `Object.entries(arguments)` of an assistant's call."""
    read = _message_content(obj)
    if read is None:
        return None
    role, content, where = read
    if role == "toolResult" and isinstance(content, dict):
        return where, "content is a JSON object, not a list: `content.filter` throws"
    if not isinstance(content, list) or (role != "assistant" and role not in _CONTENT_ROLES):
        return None
    for position, item in enumerate(content):
        if item is None:
            return f"{where}.{position}", "content item is null: reading its `type` throws"
        if role == "assistant" and isinstance(item, dict) and item.get("type") == "toolCall":
            if item.get("arguments") is None:
                return f"{where}.{position}.arguments", "call has no arguments: `Object.entries(arguments)` throws"
    return None


def openclaw_unestimable_item(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The field of the first content item of entry `obj` OpenClaw 2026.9.6's own `estimateTokens`
    (compaction-CAzwgOuQ.mjs) fails on, and how; None when it counts every item. It guards a call's
    arguments (`stringifyCompactionValue`) and joins the texts of other content whatever their type
    (`getCompactionContent`), but reads `type` of every item of a content list and passes an
    assistant's text, thinking and call name to `estimateStringChars` (cjk-chars-6ld30jSx.mjs),
    which reads `.length` of what has no CJK and calls `.search` on what has some."""
    listed = _estimated_list(_message_content(obj))
    if listed is None:
        return None
    role, content, where = listed
    for position, item in enumerate(content):
        field = f"{where}.{position}"
        if item is None:
            return field, "content item is null: reading its `type` throws"
        if role != "assistant" or not isinstance(item, dict):
            continue
        kind = item.get("type")
        key = _ASSISTANT_FIELDS.get(kind) if isinstance(kind, str) else None
        if key is None or isinstance(item.get(key), str):
            continue
        value = item.get(key)
        if value is None:
            return f"{field}.{key}", f"content item has no {key}: `estimateStringChars` reads its length and throws"
        if not isinstance(value, list):
            return f"{field}.{key}", f"content item has a {key} without a length: `estimateStringChars` gives NaN"
        if not js_string(value).isascii():
            return (
                f"{field}.{key}",
                f"content item has a {key} that is a list: `estimateStringChars` calls `.search` and throws",
            )
    return None


def openclaw_unserializable_item(obj: dict[str, Any]) -> tuple[str, str] | None:
    """The call of entry `obj` OpenClaw 2026.9.6's summarizer cannot serialize
    (compaction-CAzwgOuQ.mjs `serializeConversation`: `Object.entries(block.arguments)` of an
    assistant's call); None when it can. Every other item it cannot read its estimate throws on
    first, over the whole context."""
    read = _message_content(obj)
    if read is None or read[0] != "assistant" or not isinstance(read[1], list):
        return None
    for position, item in enumerate(read[1]):
        if isinstance(item, dict) and item.get("type") == "toolCall" and item.get("arguments") is None:
            return f"{read[2]}.{position}.arguments", "call has no arguments: `Object.entries(arguments)` throws"
    return None


def _has_length(value: Any) -> bool:
    """JavaScript's `value.length` is a number (a string's UTF-16 length, an array's size)."""
    return isinstance(value, (str, list))


def unestimable_diagnostics(name: Path, line: int, entry_id: str, obj: dict[str, Any]) -> list[Diagnostic]:
    """The warning for an entry pi's estimate cannot count (none when it can)."""
    found = unestimable_item(obj)
    if found is None:
        return []
    field, how = found
    counted = "it as OpenClaw reads it, one item" if field == "message.content" else "the rest of the message"
    message = (
        f"pi cannot estimate this message: its {how} in pi's estimateTokens, so pi's "
        f"compaction would fail where it estimates it (a compaction replaylab then refuses as pi fails); "
        f"replaylab counts {counted}"
    )
    return [diagnostic(name, line, "pi-unestimable", message, entry_id=entry_id, field=field)]
