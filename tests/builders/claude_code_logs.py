"""Claude Code session logs written record by record, for the importer's tests."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

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
        message = {"id": f"msg_say{self.n}", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn"}
        message["content"] = [{"type": "text", "text": text}]
        return self.add("assistant", message, **kw)

    def write(self, path: Path, records: list[dict] | None = None) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in records or self.records), encoding="utf-8")
        return path


def random_claude_code_log(rnd: random.Random, size: int) -> list[dict[str, Any]]:
    """`size` records of Claude Code's kinds, linked at random from small pools of uuids, message
    ids and call ids: duplicates, cycles, parents that are missing or later in the file, calls
    answered twice or never, sidechains, compaction boundaries and rewinds all happen."""
    uuids = [f"u{n}" for n in range(max(2, size // 2))]
    calls = [f"toolu_{n}" for n in range(4)]

    def pick(pool: list[str], none: float = 0.15) -> str | None:
        return None if rnd.random() < none else rnd.choice(pool)

    def block() -> dict[str, Any]:
        kind = rnd.choice(["text", "text", "tool_use", "thinking", "image", "other"])
        if kind == "tool_use":
            name = rnd.choice(["Bash", "Read", "Edit", "Task", "mcp__x__send"])
            command = rnd.choice(["ls", "rm -rf build", "git push", "cat a"])
            return {"type": "tool_use", "id": rnd.choice(calls), "name": name, "input": {"command": command}}
        if kind == "thinking":
            return {"type": "thinking", "thinking": "hmm", "signature": rnd.choice([None, "sig"])}
        if kind == "image":
            return {"type": "image", "source": rnd.choice([{"type": "base64", "data": "AA=="}, {"type": "url"}])}
        if kind == "other":
            return {"type": "server_tool_use", "id": "s1"}
        return {"type": "text", "text": rnd.choice(["go", "", "done", "ok 😀"])}

    def content() -> Any:
        shape = rnd.random()
        if shape < 0.25:
            return rnd.choice(["hello", "", "[Request interrupted by user]"])
        blocks: list[Any] = []
        for _ in range(rnd.randint(0, 3)):
            if rnd.random() < 0.4:
                blocks.append({"type": "tool_result", "tool_use_id": rnd.choice(calls), "content": rnd.choice(["ok", [], [{"type": "text", "text": "r"}]]), "is_error": rnd.random() < 0.2})  # fmt: skip
            else:
                blocks.append(block())
        return blocks

    records: list[dict[str, Any]] = []
    for n in range(size):
        kind = rnd.choice(["user", "user", "assistant", "assistant", "system", "progress", "attachment", "summary"])
        record: dict[str, Any] = {"type": kind, "uuid": pick(uuids, 0.05), "parentUuid": pick(uuids, 0.2)}
        record["sessionId"] = "fuzz"
        record["isSidechain"] = rnd.random() < 0.1
        record["timestamp"] = rnd.choice(
            [f"2025-08-01T10:00:{n % 60:02d}.000Z", "2025-08-01T10:00:00.000Z", None, "soon"]
        )
        if kind == "user":
            record["message"] = {"role": "user", "content": content()}
            if rnd.random() < 0.1:
                record["isCompactSummary"] = True
        elif kind == "assistant":
            blocks = [block() for _ in range(rnd.randint(0, 3))]
            message_id = rnd.choice(["m0", "m1", "m2", None])
            record["message"] = {"id": message_id, "role": "assistant", "content": blocks, "stop_reason": rnd.choice([None, "tool_use", "end_turn"])}  # fmt: skip
        elif kind == "system":
            record["subtype"] = rnd.choice(["compact_boundary", "stop_hook_summary", "local_command"])
            record["logicalParentUuid"] = pick(uuids, 0.3)
            record["content"] = "Conversation compacted"
            record["compactMetadata"] = rnd.choice([{"trigger": "auto", "preTokens": 1000}, None, "x"])
        elif kind == "summary":
            record = {"type": "summary", "summary": "a title", "leafUuid": pick(uuids)}
        records.append(record)
    return records


def workflow_session(folder: Path) -> Path:
    """2.1.x: a Workflow call whose run keeps its agent (and its journal) in
    `<sessionId>/subagents/workflows/<runId>/`, as Claude Code 2.1.332 writes and reads them."""
    log = Log(version="2.1.332")
    log.user("run the docs sweep")
    log.call("toolu_WF", "Workflow", {"scriptPath": "/home/u/sweep.workflow.js"})
    log.result("toolu_WF", "Workflow launched in background.", {"runId": "wf_1", "status": "async_launched"})
    log.say("Launched.")
    run = folder / SESSION / "subagents" / "workflows" / "wf_1"
    run.mkdir(parents=True)
    main = log.write(folder / f"{SESSION}.jsonl")
    agent = Log(version="2.1.332")
    agent.user("Sweep docs batch a", side=True, root=True, agentId="ag1")
    agent.call("toolu_S", "Edit", {"file_path": "docs/a.md", "old_string": "teh", "new_string": "the"}, side=True)
    agent.result("toolu_S", "ok", side=True)
    agent.say("Swept.", side=True)
    agent.write(run / "agent-ag1.jsonl")
    (run / "journal.jsonl").write_text('{"type": "started", "key": "v2:h0", "agentId": "ag1"}\n', encoding="utf-8")
    return main
