"""Synthetic v3 sessions for the compaction tests: an entry-by-entry builder, a helpdesk conversation
and the tool classes its tools have.

Sessions are written as real JSONL files and read back with the real loader, so every test goes
through the same path as a recording does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replaylab.transcript.model import dump_entry

TOOL_CLASSES = {
    "get_order": "read",
    "search": "read",
    "cancel_order": "write",
    "send_email": "write",
    "refund": "write",
    "read": "read",
    "write": "write",
    "edit": "write",
    "bash": "exec",
}


class Session:
    """Append-only builder: each call adds one entry chained to the previous one."""

    def __init__(self, session_id: str = "sess-1"):
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-04-10T09:00:00.000Z", "cwd": "/tmp"}
        ]
        self.last: str | None = None
        self.n = 0
        self.calls = 0

    def _add(self, obj: dict[str, Any], parent: str | None = ...) -> str:  # type: ignore[assignment]
        self.n += 1
        entry_id = obj.pop("id", None) or f"e{self.n:04d}"
        full = {
            "type": obj.pop("type", "message"),
            "id": entry_id,
            "parentId": self.last if parent is ... else parent,
            "timestamp": f"2026-04-10T09:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
            **obj,
        }
        self.lines.append(full)
        self.last = entry_id
        return entry_id

    def user(self, text: str) -> str:
        return self._add(
            {
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": 1775811600000 + self.n,
                }
            }
        )

    def assistant(
        self,
        text: str | None = None,
        calls: list[tuple[str, dict]] | None = None,
        *,
        thinking: str | None = None,
        signature: str | None = None,
        stop: str | None = None,
        usage: dict | None = None,
    ) -> tuple[str, list[str]]:
        content: list[dict[str, Any]] = []
        if thinking is not None:
            block = {"type": "thinking", "thinking": thinking}
            if signature:
                block["thinkingSignature"] = signature
            content.append(block)
        if text is not None:
            content.append({"type": "text", "text": text})
        ids = []
        for name, args in calls or []:
            self.calls += 1
            call_id = f"call_{self.calls:04d}"
            ids.append(call_id)
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "stopReason": stop or ("toolUse" if ids else "stop"),
            "timestamp": 1775811600000 + self.n,
        }
        if usage is not None:
            message["usage"] = usage
        return self._add({"message": message}), ids

    def result(self, call_id: str, name: str, text: str, *, is_error: bool = False) -> str:
        return self._add(
            {
                "message": {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": text}],
                    "isError": is_error,
                    "timestamp": 1775811600000 + self.n,
                }
            }
        )

    def tool_turn(
        self, name: str, args: dict, result: str, *, text: str | None = None, thinking: str | None = None
    ) -> tuple[str, str]:
        entry, ids = self.assistant(
            text, [(name, args)], thinking=thinking, signature="sig-" + name if thinking else None
        )
        return entry, self.result(ids[0], name, result)

    def raw(self, obj: dict[str, Any]) -> str:
        return self._add(dict(obj))

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in self.lines))
        return path


def helpdesk_session(turns: int = 6, *, big: int = 400) -> Session:
    """A helpdesk conversation: reads and writes (cancel, refund, e-mail), a parallel call, thinking."""
    s = Session()
    for turn in range(turns):
        s.user(
            f"Turn {turn}: please look at order #W{1000000 + turn} for user mia_garcia_{4500 + turn}. "
            f"Do not refund without approval."
        )
        s.tool_turn(
            "get_order",
            {"order_id": f"#W{1000000 + turn}"},
            f'{{"order_id": "#W{1000000 + turn}", "status": "pending", "note": "{"x" * big}"}}',
            thinking=f"look up order {turn}",
        )
        if turn % 2 == 0:
            s.tool_turn(
                "cancel_order",
                {"order_id": f"#W{1000000 + turn}", "reason": "no longer needed"},
                f"cancelled #W{1000000 + turn}",
            )
        else:
            entry, ids = s.assistant(
                "Refunding and notifying in parallel.",
                [
                    ("refund", {"order_id": f"#W{1000000 + turn}", "amount": 120 + turn}),
                    ("search", {"q": f"policy {turn}"}),
                ],
            )
            s.result(ids[0], "refund", f"refund ok for #W{1000000 + turn}")
            s.result(ids[1], "search", "policy: refunds within 30 days " + "y" * big)
        s.assistant(f"Done with order #W{1000000 + turn}; see https://help.example.com/t/{turn}.")
    return s


def reset_keeps_a_marked_rm(turns: int = 8, *, output: str = "") -> Session:
    """A `bash rm -rf build` whose message is marked `excludeFromContext`, kept by an OpenClaw
    `reset` (which shows a kept message whatever its mark), then turns long enough to compact.
    `output`: the rm's result, marked too when there is one."""
    s = Session()
    s.user("Look at the log.")
    s.assistant("Looked.")
    first = s.user("Clean the build directory.")
    call, ids = s.assistant(None, [("bash", {"command": "rm -rf build"})])
    s.lines[-1]["message"]["excludeFromContext"] = True
    s.result(ids[0], "bash", output)
    if output:
        s.lines[-1]["message"]["excludeFromContext"] = True
    s.assistant("Cleaned.")
    s.raw({"type": "reset", "reason": "reset", "firstKeptEntryId": first})
    for n in range(turns):
        s.user(f"question {n}: " + "tell me about the weather in detail " * 20)
        s.assistant(f"answer {n}: " + "the weather is fine and mild today " * 20)
    return s


def compact_reset_keeps_a_marked_rm(
    folder: Path, agent: str, *, output: str = "", allow_truncate: bool = False
) -> tuple[Any, Path, Path]:
    """(result, recording, working copy) of a small safeguard compaction of
    `reset_keeps_a_marked_rm` under `agent`'s rules."""
    from replaylab.agents import rules_of
    from replaylab.compaction import CompactParams, compact
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.memo import ItemMemo

    recording = reset_keeps_a_marked_rm(output=output).write(folder / "reset.jsonl")
    copy = folder / "copy.jsonl"
    params = CompactParams(
        session_file=str(recording),
        compaction_mode="safeguard",
        context_tokens=2_400,
        reserve_tokens_floor=400,
        keep_recent_tokens=300,
        working_copy=str(copy),
        allow_mutating_event_truncate=allow_truncate,
    )
    return compact(params, classifier=ToolClassifier(), memo=ItemMemo(rules=rules_of(agent))), recording, copy


def dumped(entry: Any) -> bytes:
    return orjson.dumps(dump_entry(entry), option=orjson.OPT_SORT_KEYS)


def late_writes_session(turns: int = 10, first_write: int = 4, *, big: int = 400) -> Session:
    """The helpdesk conversation with its writes (cancel, refund beside a parallel search) only from
    turn `first_write` on; the turns before it read (get_order, search)."""
    s = Session()
    for turn in range(turns):
        order = f"#W{1000000 + turn}"
        s.user(
            f"Turn {turn}: please look at order {order} for user mia_garcia_{4500 + turn}. Do not refund without approval."
        )
        s.tool_turn(
            "get_order",
            {"order_id": order},
            f'{{"order_id": "{order}", "status": "pending", "note": "{"x" * big}"}}',
            thinking=f"look up order {turn}",
        )
        if turn < first_write:
            s.tool_turn("search", {"q": f"policy {turn}"}, "policy: refunds within 30 days " + "y" * big)
        elif turn % 2 == 0:
            s.tool_turn("cancel_order", {"order_id": order, "reason": "no longer needed"}, f"cancelled {order}")
        else:
            _, ids = s.assistant(
                "Refunding and notifying in parallel.",
                [("refund", {"order_id": order, "amount": 120 + turn}), ("search", {"q": f"policy {turn}"})],
            )
            s.result(ids[0], "refund", f"refund ok for {order}")
            s.result(ids[1], "search", "policy: refunds within 30 days " + "y" * big)
        s.assistant(f"Done with order {order}; see https://help.example.com/t/{turn}.")
    return s


def message_chain_jsonl(messages: list[dict[str, Any]], session_id: str = "s") -> bytes:
    """A v3 transcript of `messages` (pi message dicts), each entry the child of the one before."""
    lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": session_id}]
    lines += [
        {
            "type": "message",
            "id": f"e{i}",
            "parentId": f"e{i - 1}" if i else None,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": m,
        }
        for i, m in enumerate(messages)
    ]
    return b"\n".join(orjson.dumps(line) for line in lines) + b"\n"


#: a safeguard budget small sessions of a few turns cross
SMALL_SAFEGUARD = "compaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}\n"


def imported_suite(session: Session, folder: Path, settings: str = SMALL_SAFEGUARD) -> Path:
    """`session` written as a pi session under `folder/src`, imported by `replaylab import --from
    pi` into `folder/rec` (transcript + cassette), and a suite over it with `settings` (YAML
    lines); the suite file's path."""
    from replaylab.cli import main as cli_main

    (folder / "src").mkdir(parents=True)
    session.write(folder / "src" / f"{session.lines[0]['id']}.jsonl")
    assert cli_main(["import", "--from", "pi", str(folder / "src"), "--out", str(folder / "rec")]) == 0
    (folder / "suite.yaml").write_text(f"name: s\nrecordings: rec/*.jsonl\n{settings}", encoding="utf-8")
    return folder / "suite.yaml"
