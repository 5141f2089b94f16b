"""Claude Code session logs written record by record, for the importer's tests."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "5e55-1000"


class Log:
    """Claude Code records, each `uuid` chained to the record before it in its own chain."""

    def __init__(self, version: str = "1.0.85") -> None:
        self.records: list[dict] = []
        self.version = version
        self.last: dict[bool, str | None] = {False: None, True: None}
        self.n = 0

    def add(
        self,
        kind: str,
        message: dict,
        *,
        side: bool = False,
        root: bool = False,
        parent: str | None = None,
        at: int | None = None,
        **extra,
    ) -> dict:
        """`parent`: hang the record from that uuid instead (a rewind, a parallel call's sibling);
        `at`: its second of the clock, where two records share one."""
        self.n += 1
        uuid = f"u{self.n:03d}"
        second = self.n if at is None else at
        record = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": None if root else parent or self.last[side],
            "sessionId": SESSION,
            "isSidechain": side,
            "version": self.version,
            "timestamp": f"2025-08-01T10:{second // 60:02d}:{second % 60:02d}.000Z",
            "message": message,
            **extra,
        }
        self.last[side] = uuid
        self.records.append(record)
        return record

    def user(self, text: str, **kw) -> dict:
        return self.add("user", {"role": "user", "content": text}, **kw)

    def call(self, call_id: str, name: str, args: dict, *, message_id: str | None = None, **kw) -> dict:
        """`message_id`: the API response it is part of (parallel calls share one)."""
        message = {
            "id": message_id or f"msg_{call_id}",
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "tool_use",
        }
        message["content"] = [{"type": "tool_use", "id": call_id, "name": name, "input": args}]
        return self.add("assistant", message, **kw)

    def result(self, call_id: str, text: str, tool_use_result: dict | None = None, **kw) -> dict:
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": False}]
        extra = {"toolUseResult": tool_use_result} if tool_use_result is not None else {}
        return self.add("user", {"role": "user", "content": content}, **extra, **kw)

    def say(self, text: str, **kw) -> dict:
        message = {"id": f"msg_t{self.n}", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn"}
        message["content"] = [{"type": "text", "text": text}]
        return self.add("assistant", message, **kw)

    def write(self, path: Path, records: list[dict] | None = None) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in records or self.records), encoding="utf-8")
        return path
