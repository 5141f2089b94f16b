"""Messages on which OpenClaw 2026.9.6's compaction run, having rewritten the session's messages
(`sanitizeSessionHistory`), finds a real conversation where the messages as they are hold none, or
none where they hold one: as JSON, for replaylab's rule (tests/unit/compaction/
test_compaction_run_history.py) and OpenClaw's own code (tests/oracles/test_openclaw_run_history.py)."""

from __future__ import annotations

from typing import Any

ZERO_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def from_session(content: Any, kind: str = "inter_session") -> dict[str, Any]:
    """A user message another session sent (its `provenance`)."""
    provenance = {"kind": kind, "sourceTool": "sessions_send"}
    return {"role": "user", "content": content, "timestamp": 1, "provenance": provenance}


def reply(*blocks: dict[str, Any], provider: str = "openai", model: str = "m", **extra: Any) -> dict[str, Any]:
    """An assistant message as OpenClaw writes one."""
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "openai-completions",
        "provider": provider,
        "model": model,
        "usage": ZERO_USAGE,
        "stopReason": "stop",
        "timestamp": 1,
        **extra,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}

#: (a message after `real_conversation_cases.QUIET`, whether the run finds real conversation in the
#: messages as they are (`containsRealConversationMessages`), and after its rewriting)
CASES: list[tuple[dict[str, Any], bool, bool]] = [
    (from_session("NO_REPLY"), False, True),
    (from_session([text("HEARTBEAT_OK")]), False, True),
    (from_session([]), False, True),
    (from_session("   "), False, False),
    (from_session([text(" "), text("NO_REPLY")]), False, False),
    (from_session([IMAGE]), True, True),
    (from_session("NO_REPLY", kind="external_user"), False, False),
    (reply(text("The deploy finished."), provider="openclaw", model="delivery-mirror"), True, False),
    (reply(text("The deploy finished."), provider="openclaw", model="gateway-injected"), True, False),
    (reply(text("The deploy finished."), provider="openclaw"), True, True),
    (reply(text("The deploy finished."), openclawDeliveryMirror={"kind": "channel-final"}), True, False),
    (reply(text("The deploy finished."), openclawDeliveryMirror={"kind": "elsewhere"}), True, True),
    (reply(IMAGE), True, False),
    (
        reply({"type": "audio"}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}),
        True,
        False,
    ),
    (reply({"type": "widget"}), True, True),
    (reply(IMAGE, text("The deploy finished.")), True, True),
    ({"role": "user", "content": "Please ship it.", "timestamp": 1}, True, True),
]
