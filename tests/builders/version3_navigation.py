"""Small version-3 sessions whose tree differs under pi's links and OpenClaw 2026.9's navigation:
each case → (its entries, OpenClaw's leaf path, pi's leaf path)."""

from __future__ import annotations

from typing import Any

import orjson


def entry(entry_id: str, parent: object, role: str | None = None, **message: Any) -> dict[str, Any]:
    role = role or ("user" if entry_id.startswith("u") else "assistant")
    content = entry_id if role == "user" else [{"type": "text", "text": entry_id}]
    body = {"role": role, "content": content, "timestamp": 1796127790000, **message}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-09-10T10:00:01.000Z",
        "message": body,
    }


def session_bytes(entries: list[dict[str, Any]], version: object = 3) -> bytes:
    header = {"type": "session", "version": version, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}
    return b"".join(orjson.dumps(o) + b"\n" for o in [header, *entries])


def no_parent_key() -> list[dict[str, Any]]:
    entries = [entry("u1", None), entry("a1", "u1"), entry("u2", None)]
    del entries[2]["parentId"]
    return entries


def numeric_parent_then_aside() -> list[dict[str, Any]]:
    """A tool result whose `parentId` is a number, a message OpenClaw's schema keeps aside with a link
    to it (the role `system`, which no agent writes), and the entry written to that message."""
    result = entry("t1", 5, "toolResult", toolCallId="c", toolName="read", isError=False)
    return [entry("u1", None), entry("a1", "u1"), result, entry("s1", "t1", "system"), entry("u2", "s1")]


def object_parent_then_system() -> list[dict[str, Any]]:
    """An entry whose `parentId` is an object and, under it, a message of the damaged role `system`
    (kept aside by OpenClaw with its link), then the entry written to it."""
    return [
        entry("u1", None),
        entry("a1", "u1"),
        entry("a2", {"id": "u1"}),
        entry("s1", "a2", "system"),
        entry("u2", "s1"),
    ]


CASES = {
    "no-parent-key": (no_parent_key, ["u1", "a1", "u2"], ["u2"]),
    "numeric-parent": (numeric_parent_then_aside, ["u1", "a1", "u2"], ["t1", "s1", "u2"]),
    "object-parent": (object_parent_then_system, ["u1", "a1", "u2"], ["a2", "s1", "u2"]),
}
