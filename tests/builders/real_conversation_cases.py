"""Messages and sessions on which OpenClaw 2026.9.6's real-conversation test (`containsRealConversation`)
and OpenClaw 2026.4.12's differ: as JSON, for replaylab's rule (tests/unit/compaction/
test_compaction_real_conversation.py) and OpenClaw's own code (tests/oracles/
test_openclaw_real_conversation.py, test_openclaw_compactor.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.transcripts import Session


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1, **extra}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "timestamp": 1}


def custom(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "custom", "customType": "note", "content": text, "display": True, "timestamp": 1, **extra}


def bash(command: str, output: str = "", **extra: Any) -> dict[str, Any]:
    return {"role": "bashExecution", "command": command, "output": output, "exitCode": 0, "timestamp": 1, **extra}


def result(text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": content, "timestamp": 1}


#: what no rule reads as real conversation: a heartbeat, a silent reply, a read's result
QUIET = [user("HEARTBEAT_OK"), assistant({"type": "text", "text": "NO_REPLY"}), result("x" * 50)]

#: (a message after `QUIET`, whether OpenClaw 2026.9.6 then finds real conversation)
CASES: list[tuple[dict[str, Any], bool]] = [
    (custom("The deploy finished."), True),
    (custom("The deploy finished.", display=False), False),
    (custom("The deploy finished.", customType="openclaw.runtime-context"), False),
    (custom("NO_REPLY"), False),
    (bash("ls src", "a.py b.py"), True),
    (bash("ls src", "a.py", excludeFromContext=True), False),
    ({"role": "branchSummary", "summary": "Explored the other branch.", "fromId": "e1", "timestamp": 1}, True),
    ({"role": "compactionSummary", "summary": "## Decisions\nNone.", "tokensBefore": 10, "timestamp": 1}, True),
    ({"role": "compactionSummary", "summary": "  ", "tokensBefore": 10, "timestamp": 1}, False),
    ({"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "timestamp": 1}, True),
    (user("Please ship it.", excludeFromContext=True), False),
    (user("NO_REPLY."), False),
    (user("no_reply  NO_REPLY"), False),
    (user("...NO_REPLY..."), False),
    # `stripHeartbeatToken` keeps what is left after the token: punctuation after it, markup around it
    (user("HEARTBEAT_OK."), True),
    (user("**HEARTBEAT_OK**"), True),
    (user("<b>HEARTBEAT_OK</b>"), False),
    (user("HEARTBEAT_OK HEARTBEAT_OK"), False),
    (user("HEARTBEAT_OK thanks, all good"), True),
    (user("Please ship it."), True),
    (
        assistant(
            {"type": "thinking", "thinking": "hmm"}, {"type": "toolCall", "id": "c", "name": "x", "arguments": {}}
        ),
        False,
    ),
    (assistant({"type": "reasoning", "text": "hmm"}, {"type": "toolUse", "id": "c", "name": "x"}), False),
    (assistant({"type": "text", "text": "Done."}), True),
]


def quiet_session(folder: Path, extra: dict[str, Any] | None = None, *, ask_last: bool = False) -> Path:
    """Heartbeats and silent replies around reads, as a session file; `extra` (an entry) early in
    the span; with `ask_last` a real ask as the kept tail's last message."""
    s = Session()
    s.user("HEARTBEAT_OK")
    if extra is not None:
        s.raw(dict(extra))
    for n in range(6):
        s.tool_turn("read", {"path": f"src/f{n}.py"}, "x" * 1_500, text="NO_REPLY")
    s.assistant("NO_REPLY")
    s.user("Now write the report." if ask_last else "HEARTBEAT_OK")
    s.assistant("NO_REPLY")
    return s.write(folder / "quiet.jsonl")


#: entries for `quiet_session`'s span: (name, entry or None, `ask_last`, whether OpenClaw 2026.9.6's
#: safeguard summarizes rather than write its fallback)
SESSIONS: list[tuple[str, dict[str, Any] | None, bool, bool]] = [
    (
        "custom",
        {"type": "custom_message", "customType": "note", "content": "The deploy finished.", "display": True},
        False,
        True,
    ),
    (
        "custom-hidden",
        {"type": "custom_message", "customType": "note", "content": "The deploy finished.", "display": False},
        False,
        False,
    ),
    (
        "runtime-context",
        {
            "type": "custom_message",
            "customType": "openclaw.runtime-context",
            "content": "Runtime facts.",
            "display": True,
        },
        False,
        False,
    ),
    ("bash", {"message": bash("ls src", "f0.py")}, False, True),
    (
        "branch-summary",
        {"type": "branch_summary", "fromId": "e0001", "summary": "Explored the other branch."},
        False,
        True,
    ),
    (
        "image",
        {
            "message": {
                "role": "user",
                "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                "timestamp": 1,
            }
        },
        False,
        True,
    ),
    ("silent-punctuated", {"message": user("NO_REPLY.")}, False, False),
    ("heartbeat-punctuated", {"message": user("HEARTBEAT_OK.")}, False, True),
    ("kept-tail-real", None, True, True),
    (
        "previous-compaction",
        {"type": "compaction", "summary": "Shipped v2.", "firstKeptEntryId": "e0001", "tokensBefore": 900},
        False,
        True,
    ),
]

#: the `SESSIONS` whose whole context holds no real message even with its runtime-context messages:
#: OpenClaw 2026.9.6's compaction run (`compactEmbeddedAgentSessionDirectOnce`) does not compact them
#: at all. A runtime-context message is real to that run, so its session reaches the safeguard,
#: which strips it and writes its fallback
RUN_SKIPS = frozenset({"custom-hidden", "silent-punctuated"})


def real_to_the_run(message: dict[str, Any], real: bool) -> bool:
    """What the compaction run's `containsRealConversationMessages` finds in `QUIET` and a case's
    message: the safeguard's answer, except that it strips no runtime-context message."""
    return real or message.get("customType") == "openclaw.runtime-context"
