"""A session whose run called a tool from a reply marked `excludeFromContext: true` (OpenClaw
2026.9.6 writes the mark on replies only for a context-free command, which calls no tool; such a
reply comes from an edited or imported file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _reply(call: str | None, text: str = "", **mark: object) -> dict[str, Any]:
    content = [{"type": "toolCall", "id": call, "name": "exec", "arguments": {"command": f"rm /tmp/{call}"}}]
    return {
        "role": "assistant",
        "content": content if call else [{"type": "text", "text": text}],
        "stopReason": "toolUse" if call else "stop",
        **mark,
    }


def _result(call: str) -> dict[str, Any]:
    content = [{"type": "text", "text": "removed"}]
    return {"role": "toolResult", "toolCallId": call, "toolName": "exec", "content": content, "isError": False}


def excluded_call_lines() -> list[dict[str, Any]]:
    """Header and entries e1…e8: a prompt (e1) whose run calls `call_a` (e2, result e3), then
    `call_b` from an excluded reply (e4, result e5), and answers (e6); a second prompt (e7, e8)."""
    messages = [
        {"role": "user", "content": "Clean up /tmp."},
        _reply("call_a"),
        _result("call_a"),
        _reply("call_b", excludeFromContext=True),
        _result("call_b"),
        _reply(None, "Cleaned."),
        {"role": "user", "content": "thanks"},
        _reply(None, "You're welcome."),
    ]
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 4, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}
    ]
    for n, message in enumerate(messages, 1):
        lines.append(
            {
                "type": "message",
                "id": f"e{n}",
                "parentId": f"e{n - 1}" if n > 1 else None,
                "timestamp": "2026-09-10T10:00:01.000Z",
                "message": {"timestamp": 1796127790000 + n, **message},
            }
        )
    return lines


def excluded_call_session(folder: Path) -> Path:
    """`excluded_call_lines` written to `folder`/excluded-call.jsonl."""
    path = folder / "excluded-call.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in excluded_call_lines()), encoding="utf-8")
    return path
