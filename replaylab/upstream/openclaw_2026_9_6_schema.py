"""OpenClaw 2026.9.6's entry schema on an entry object as written (transcript-payload-qsg5dB6v.mjs,
src/config/sessions/session-entry-codec.ts): `isIndexedSessionEntry`, which decides whether its load
indexes an entry or keeps it aside, and `parseParentLinkedOpaqueEntry`, which decides whether a
record kept aside still links to a parent (and becomes the parent the next entry appends to).

Read before replaylab's own models validate the entry, so that its load can follow OpenClaw's
navigation for what OpenClaw keeps aside (`transcript.leaf_controls`).
"""

from __future__ import annotations

from typing import Any

from replaylab.upstream.openclaw_2026_9_6 import RESET_REASONS


def _string(value: Any, minimum: int = 0) -> bool:
    return type(value) is str and len(value) >= minimum


def _optional_string(obj: dict[str, Any], key: str) -> bool:
    """`string().optional()`: absent, or a string (a JSON null fails it)."""
    return key not in obj or type(obj[key]) is str


def _readable_content(value: Any) -> bool:
    """`readableContentSchema`: a string, or a list of objects each with a string `type`."""
    if type(value) is str:
        return True
    return type(value) is list and all(type(item) is dict and type(item.get("type")) is str for item in value)


def _coerced_reason(value: Any) -> bool:
    """`string$1().pipe(_enum(reasons))`: `String(value)` is a known reason (an array's String is its
    items joined by commas, so only a one-item array of a reason reads as it)."""
    while type(value) is list and len(value) == 1:
        value = value[0]
    return type(value) is str and value in RESET_REASONS


def _readable_message(message: Any) -> bool:
    """`readableMessageSchema`: a discriminated union on `role`, each a loose object."""
    if type(message) is not dict:
        return False
    role = message.get("role")
    if role in ("user", "assistant"):
        return "content" in message and _readable_content(message["content"])
    if role == "toolResult":
        # `normalizeLoadedFileEntry` (session-manager-codec) made a string or an object content a list first
        return (
            _string(message.get("toolCallId"))
            and _string(message.get("toolName"))
            and type(message.get("isError")) is bool
            and type(message.get("content")) in (list, str, dict)
        )
    if role == "custom":
        # `normalizePersistedLegacyHookMessage` gives a readable one without a customType "hook" first
        readable = "content" in message and _readable_content(message["content"])
        return readable and ("customType" not in message or _string(message["customType"]))
    if role == "bashExecution":
        return _string(message.get("command")) and _string(message.get("output"))
    return False


def indexes(obj: dict[str, Any]) -> bool:
    """`isIndexedSessionEntry` of a version 3 or 4 file's entry: the entry OpenClaw indexes."""
    parent = obj.get("parentId")
    if not _string(obj.get("id"), 1) or not (parent is None or type(parent) is str):
        return False
    if not _optional_string(obj, "timestamp"):
        return False
    kind = obj.get("type")
    if kind == "message":
        return _readable_message(obj.get("message"))
    if kind == "thinking_level_change":
        return _string(obj.get("thinkingLevel"), 1)
    if kind == "model_change":
        return _string(obj.get("provider"), 1) and _string(obj.get("modelId"), 1)
    if kind == "compaction":
        tokens = obj.get("tokensBefore")
        number = type(tokens) in (int, float)
        return _string(obj.get("summary")) and _string(obj.get("firstKeptEntryId"), 1) and number
    if kind == "reset":
        return _coerced_reason(obj.get("reason")) and _optional_string(obj, "firstKeptEntryId")
    if kind == "branch_summary":
        return _string(obj.get("fromId")) and _string(obj.get("summary"))
    if kind == "custom":
        return _string(obj.get("customType"), 1)
    if kind == "custom_message":
        readable = "content" in obj and _readable_content(obj["content"])
        return _string(obj.get("customType"), 1) and readable and type(obj.get("display")) is bool
    if kind == "label":
        return _string(obj.get("targetId"), 1) and _optional_string(obj, "label")
    if kind == "session_info":
        return _optional_string(obj, "name")
    return False


def parent_linked_aside(obj: dict[str, Any]) -> bool:
    """A record OpenClaw keeps aside (`indexes` fails it) that `parseParentLinkedOpaqueEntry` still
    reads: no header or leaf control, a non-empty string id, and a `parentId` written as a string
    or null. Its load then appends the next entry to it (`appendParentId`)."""
    if indexes(obj) or obj.get("type") in ("session", "leaf"):
        return False
    parent = obj.get("parentId", 0)  # the key is required: an absent one fails as a number does
    return _string(obj.get("id"), 1) and (parent is None or type(parent) is str)
