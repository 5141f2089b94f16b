"""`content: null` in a message, as pi reads it.

pi parses session files without validating them, and old versions, forks or hand edits leave
messages whose `content` is null. pi 1.6.0's projection reads such a user / assistant / tool-result
message as `content: []` and a custom message's missing or null content as `[]`
(session-manager.js `sessionEntryToContextMessages`). pi 0.73.1 passes the null on and its
`estimateTokens` then throws (`content is not iterable`), so it can neither estimate nor compact
such a session. OpenClaw 2026.9.6's entry schema wants a list (or, but for a tool result, a
string) and keeps such an entry aside (`readableMessageSchema`, transcript-payload-*.mjs). replaylab
reads the null as an empty list that remembers it (`object_content.ObjectContent`, written back as
null): pi's rules read `[]`, OpenClaw's keep the entry aside; a warning says so.
"""

from __future__ import annotations

from typing import Any

from replaylab.transcript.object_content import ObjectContent

#: the message roles whose null content is read as an empty list
LIST_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})


def null_content_patch(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The fields that make an entry with a null content readable (None: it has none)."""
    if obj.get("type") == "message":
        message = obj.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        if isinstance(message, dict) and isinstance(role, str) and role in LIST_CONTENT_ROLES:
            if "content" in message and message["content"] is None:
                return {"message": {**message, "content": ObjectContent([], None)}}
    elif obj.get("type") == "custom_message" and "content" in obj and obj["content"] is None:
        return {"content": []}
    return None


NULL_CONTENT_NOTE = (
    "message content is null: read as [] as pi 1.6.0 reads it (pi 0.73.1 keeps the null and cannot "
    "estimate or compact the session; OpenClaw keeps the entry aside)"
)
