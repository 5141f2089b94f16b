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


#: shell commands of a coherent session: reads and writes as agents run them
_COMMANDS = [
    "ls -la src", "git status", "git log --oneline -5", "grep -rn TODO src", "head -40 src/{f}.py",
    "pytest -q tests/test_{f}.py", "rm -rf build", "git commit -am 'fix {f}'", "mkdir -p out/{f}",
    "sed -i 's/a/b/' src/{f}.py", "curl -X POST https://api.example.com/orders/{n}", "echo done > out/{f}.txt",
]  # fmt: skip
_FILES = ["auth", "orders", "billing", "users", "cache", "router"]
_WORDS = ["config", "return", "value", "handler", "request", "order", "user", "status", "import", "def"]


def coherent_claude_code_log(rnd: random.Random, turns: int) -> list[dict[str, Any]]:
    """A session as Claude Code 2.1.x writes one, at random: prompts naming files and tickets;
    responses split over records sharing `message.id`, with thinking, text and one to three
    parallel calls (shell commands that read or write, Read, Edit, Write, Grep); results of a few
    lines to a screenful, some failed; usage growing with the conversation; API errors,
    interruptions, and compactions (a boundary and its summary) now and then."""
    log = Log(version="2.1.39")
    conversation_chars = 0

    def usage() -> dict[str, int]:
        return {"input_tokens": 4, "cache_read_input_tokens": 15_000 + conversation_chars // 4, "output_tokens": 90}

    def filler(lines: int) -> str:
        return "\n".join(" ".join(rnd.choices(_WORDS, k=rnd.randint(4, 12))) + f" {rnd.randint(1000, 99999)}" for _ in range(lines))  # fmt: skip

    calls = 0
    for turn in range(turns):
        f, n = rnd.choice(_FILES), rnd.randint(100, 99_999)
        prompt = rnd.choice(
            [f"Fix the bug in src/{f}.py (ticket ORD-{n})", f"Refund order {n}", f"run the tests for {f}"]
        )
        log.user(prompt)
        conversation_chars += len(prompt)
        if rnd.random() < 0.05:
            message = {"id": f"syn{log.n}", "role": "assistant", "model": "<synthetic>", "stop_reason": "stop_sequence"}
            message |= {"content": [{"type": "text", "text": "API Error: 529 Overloaded"}], "usage": {"input_tokens": 0, "output_tokens": 0}}  # fmt: skip
            log.add("assistant", message, isApiErrorMessage=True)
            continue
        for _ in range(rnd.randint(1, 4)):
            response = f"msg_{rnd.getrandbits(48):012x}"
            blocks: list[dict[str, Any]] = []
            if rnd.random() < 0.4:
                blocks.append({"type": "thinking", "thinking": f"Look at {f}.", "signature": "sig"})
            made = []
            for _ in range(rnd.choice([1, 1, 2, 3])):
                calls += 1
                call_id, kind = f"toolu_{calls:04d}", rnd.random()
                if kind < 0.5:
                    made.append((call_id, "Bash", {"command": rnd.choice(_COMMANDS).format(f=f, n=n)}))
                elif kind < 0.7:
                    made.append((call_id, "Read", {"file_path": f"/work/src/{f}.py"}))
                elif kind < 0.85:
                    made.append((call_id, "Edit", {"file_path": f"/work/src/{f}.py", "old_string": f"x{n}", "new_string": f"y{n}"}))  # fmt: skip
                elif kind < 0.93:
                    made.append((call_id, "Write", {"file_path": f"/work/out/{f}-{n}.md", "content": f"notes {n}"}))
                else:
                    made.append((call_id, "Grep", {"pattern": "TODO", "path": "src"}))
            blocks += [{"type": "tool_use", "id": c, "name": name, "input": args} for c, name, args in made]
            for block in blocks:  # one record per block, as Claude Code writes a response
                message = {"id": response, "role": "assistant", "model": "claude-x", "stop_reason": None}
                log.add("assistant", message | {"content": [block], "usage": usage()})
            for call_id, name, args in made:
                text = f"{name} {f} {n}\n" + filler(rnd.choice([1, 4, 20]))
                conversation_chars += len(json.dumps(args)) + len(text)
                content = [
                    {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": rnd.random() < 0.08}
                ]
                log.add("user", {"role": "user", "content": content})
        if rnd.random() < 0.08:
            log.user("[Request interrupted by user]")
            continue
        answer = {"id": f"msg_end{log.n}", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn"}
        log.add("assistant", answer | {"content": [{"type": "text", "text": f"Done: ORD-{n} in src/{f}.py."}], "usage": usage()})  # fmt: skip
        if turn > 2 and rnd.random() < 0.1:
            before = log.records[-1]["uuid"]
            meta = {"trigger": "auto", "preTokens": usage()["cache_read_input_tokens"]}
            log.add(
                "system", None, root=True, subtype="compact_boundary", logicalParentUuid=before, compactMetadata=meta
            )
            log.user(f"Summary: worked on src/{f}.py for ORD-{n}.", isCompactSummary=True)
            conversation_chars = 0
    return log.records
