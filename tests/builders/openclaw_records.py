"""Records OpenClaw 2026.9.6 writes into a session, shaped as its own code writes them."""

from __future__ import annotations

from typing import Any

#: what the nested call below returned
NESTED_WROTE = "Successfully wrote 13 bytes to notes.txt"


def nested_tool_record() -> dict[str, Any]:
    """The `openclaw.nested-tool.v1` message OpenClaw writes for a call Tool Search's code made
    (`nested-tool-activity-*.mjs`): a `write` of notes.txt made by the code of call `call_code`. A
    new dict each time: callers may change it."""
    return {
        "role": "custom",
        "customType": "openclaw.nested-tool.v1",
        "display": True,
        "excludeFromContext": True,
        "content": "",
        "details": {
            "runId": "run-1",
            "scopeId": "scope-1",
            "afterEntryId": None,
            "startOrder": 0,
            "parentToolCallId": "call_code",
            "toolCallId": "call_write",
            "toolName": "write",
            "input": {"path": "notes.txt", "content": "call the bank"},
            "result": {"content": [{"type": "text", "text": NESTED_WROTE}]},
            "isError": False,
            "startedAt": 1796127800000,
            "timestamp": 1796127801000,
        },
        "timestamp": 1796127800000,
    }
