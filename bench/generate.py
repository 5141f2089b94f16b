"""Seeded generators of OpenClaw-shaped inputs for the benchmarks (never written into the repo).

Why synthetic: the real sessions in ../shared/data are 1–2 MB and may not be copied; the targets
talk about 100 MB transcripts, 100k-entry sessions and 10k-interaction cassettes. The shape
follows the real pi / OpenClaw v3 files (openclaw-internals.md §1.3–§1.4) and their measured
mix (pi-before-compaction: ≈2.3 KB per line, heavy-tailed tool results, thinking blocks with
signatures, usage with cost):

* turns of user → assistant (thinking + text + tool calls, 20 % of them parallel 2–4 calls) →
  tool results → … → a final assistant answer;
* read-only tools (read, grep, web_fetch, memory_search) and mutating ones (write, edit, exec,
  message send, cron add), so a ledger has events;
* tool results with a heavy tail: most 0.2–2 KB, 10 % 5–20 KB, 1 % 50–200 KB ("large results"),
  multi-line text with quotes, tabs and some non-ASCII, 3 % errors;
* a `compaction` entry roughly every 150k estimated tokens (summary with OpenClaw's sections,
  `firstKeptEntryId` a user entry some turns back, `details.readFiles/modifiedFiles`);
* now and then an abandoned branch (the path continues from an earlier entry), model / thinking
  level changes, `custom` state entries and labels.

Everything is a pure function of the seed and the size, so two runs measure the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replaylab.cassette import recorded_tool_interaction, write_cassette

READ_TOOLS = ("read", "grep", "web_fetch", "memory_search")
MUTATING_TOOLS = ("write", "edit", "exec", "message", "cron")
#: chars/4 tokens between compactions (OpenClaw compacts near a 200k window)
COMPACT_EVERY_TOKENS = 150_000

_WORDS = (
    "the",
    "agent",
    "session",
    "context",
    "window",
    "summary",
    "tool",
    "result",
    "order",
    "ticket",
    "refund",
    "customer",
    "booking",
    "flight",
    "invoice",
    "deploy",
    "config",
    "branch",
    "commit",
    "review",
    "token",
    "packages/coding-agent/src/core/session-manager.ts",
    "def",
    "return",
    "import",
    "const",
    "function",
    "await",
    "async",
    "if",
    "else",
    "for",
    "while",
    "class",
    "self",
    "None",
    "true",
    "false",
    "null",
    "ORD-48213",
    "user@example.com",
    "2026-03-14",
    "réservation",
    "naïve",
    "✓",
    "→",
    "日本語",
    "данные",
)


@dataclass
class TranscriptInfo:
    """What a generated transcript holds (for sanity checks and the benchmark report)."""

    path: Path
    entries: int = 0
    bytes: int = 0
    compactions: int = 0
    tool_calls: int = 0
    mutating_calls: int = 0
    leaf_id: str = ""


class _Text:
    """Cheap seeded text: slices of one pre-built blob (generating 100 MB word by word is slow)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        lines = []
        for _ in range(6000):
            words = rng.choices(_WORDS, k=rng.randint(3, 14))
            indent = "\t" if rng.random() < 0.1 else "    " * rng.randint(0, 3)
            quote = '"' if rng.random() < 0.2 else ""
            lines.append(f"{indent}{quote}{' '.join(words)}{quote}")
        self.blob = "\n".join(lines)

    def __call__(self, size: int) -> str:
        size = max(1, size)
        if size >= len(self.blob):
            return (self.blob * (size // len(self.blob) + 1))[:size]
        start = self.rng.randrange(0, len(self.blob) - size)
        return self.blob[start : start + size]


@dataclass
class _State:
    rng: random.Random
    text: _Text
    ids: set[str] = field(default_factory=set)
    parent: str | None = None
    clock_ms: int = 1_763_681_581_000
    tokens_since_compaction: int = 0
    recent_users: list[str] = field(default_factory=list)
    call_no: int = 0

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def base(self, kind: str) -> dict[str, Any]:
        self.clock_ms += self.rng.randint(50, 4000)
        entry_id = self.new_id()
        seconds, ms = divmod(self.clock_ms, 1000)
        entry = {
            "type": kind,
            "id": entry_id,
            "parentId": self.parent,
            "timestamp": f"2026-03-{1 + seconds // 86400 % 28:02d}T{seconds // 3600 % 24:02d}:"
            f"{seconds // 60 % 60:02d}:{seconds % 60:02d}.{ms:03d}Z",
        }
        self.parent = entry_id
        return entry


def _usage(rng: random.Random) -> dict[str, Any]:
    inp, out, read = rng.randint(3, 4000), rng.randint(20, 3000), rng.randint(0, 150_000)
    cost = {"input": inp * 3e-6, "output": out * 1.5e-5, "cacheRead": read * 3e-7, "cacheWrite": 0.0}
    cost["total"] = sum(cost.values())
    return {
        "input": inp,
        "output": out,
        "cacheRead": read,
        "cacheWrite": 0,
        "totalTokens": inp + out + read,
        "cost": cost,
    }


def _call(st: _State) -> tuple[dict[str, Any], bool]:
    rng = st.rng
    st.call_no += 1
    call_id = f"toolu_{st.call_no:06d}{rng.getrandbits(40):010x}"
    if rng.random() < 0.25:
        name = rng.choice(MUTATING_TOOLS)
        args: dict[str, Any] = {
            "write": lambda: {"path": f"src/mod_{rng.randint(1, 500)}.py", "content": st.text(rng.randint(200, 3000))},
            "edit": lambda: {
                "path": f"src/mod_{rng.randint(1, 500)}.py",
                "oldText": st.text(80),
                "newText": st.text(90),
            },
            "exec": lambda: {"command": f"pytest -q tests/test_{rng.randint(1, 90)}.py"},
            "message": lambda: {"action": "send", "to": f"+1555{rng.randint(1000000, 9999999)}", "text": st.text(160)},
            "cron": lambda: {"action": "add", "schedule": "0 9 * * 1", "task": st.text(60)},
        }[name]()
        mutating = True
    else:
        name = rng.choice(READ_TOOLS)
        args = {
            "read": {"path": f"src/mod_{rng.randint(1, 500)}.py"},
            "grep": {"pattern": rng.choice(_WORDS), "path": "src"},
            "web_fetch": {"url": f"https://docs.example.com/page/{rng.randint(1, 9999)}"},
            "memory_search": {"query": st.text(40)},
        }[name]
        mutating = False
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}, mutating


def _result_size(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.01:
        return rng.randint(50_000, 200_000)
    if roll < 0.11:
        return rng.randint(5_000, 20_000)
    return rng.randint(200, 2_000)


def _turn(st: _State) -> Iterator[dict[str, Any]]:
    rng = st.rng
    user = st.base("message")
    user["message"] = {
        "role": "user",
        "content": [{"type": "text", "text": st.text(rng.randint(20, 400))}],
        "timestamp": st.clock_ms,
    }
    st.recent_users.append(user["id"])
    yield user
    for _step in range(rng.randint(1, 4)):
        content: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            content.append(
                {
                    "type": "thinking",
                    "thinking": st.text(rng.randint(100, 2000)),
                    "thinkingSignature": st.text(300).encode().hex()[:300],
                }
            )
        if rng.random() < 0.6:
            content.append({"type": "text", "text": st.text(rng.randint(10, 300))})
        calls = []
        for _ in range(rng.randint(2, 4) if rng.random() < 0.2 else 1):
            call, _mutating = _call(st)
            calls.append(call)
        content.extend(calls)
        assistant = st.base("message")
        assistant["message"] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": _usage(rng),
            "stopReason": "toolUse",
            "timestamp": st.clock_ms,
        }
        yield assistant
        for call in calls:
            result = st.base("message")
            is_error = rng.random() < 0.03
            result["message"] = {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": [{"type": "text", "text": st.text(_result_size(rng))}],
                "isError": is_error,
                "timestamp": st.clock_ms,
            }
            if call["name"] == "edit":
                result["message"]["details"] = {"diff": st.text(200)}
            yield result
    final = st.base("message")
    final["message"] = {
        "role": "assistant",
        "content": [{"type": "text", "text": st.text(rng.randint(40, 800))}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": _usage(rng),
        "stopReason": "stop",
        "timestamp": st.clock_ms,
    }
    yield final


def _side_entry(st: _State) -> dict[str, Any]:
    rng = st.rng
    kind = rng.choice(("thinking_level_change", "model_change", "custom", "label"))
    entry = st.base(kind)
    if kind == "thinking_level_change":
        entry["thinkingLevel"] = rng.choice(("off", "low", "medium", "high"))
    elif kind == "model_change":
        entry.update(provider="anthropic", modelId=rng.choice(("claude-sonnet-4-5", "claude-opus-4-5")))
    elif kind == "custom":
        entry.update(customType="openclaw.state", data={"step": st.call_no, "flags": [rng.random() < 0.5]})
    else:
        entry.update(targetId=st.recent_users[-1] if st.recent_users else None, label="checkpoint")
    return entry


def _compaction(st: _State) -> dict[str, Any]:
    rng = st.rng
    entry = st.base("compaction")
    kept = st.recent_users[-min(len(st.recent_users), 3)] if st.recent_users else None
    sections = "\n\n".join(
        f"## {title}\n{st.text(rng.randint(200, 1500))}"
        for title in ("Decisions", "Open TODOs", "Constraints/Rules", "Pending user asks", "Exact identifiers")
    )
    entry.update(
        summary=sections,
        firstKeptEntryId=kept,
        tokensBefore=st.tokens_since_compaction,
        details={
            "readFiles": [f"src/mod_{rng.randint(1, 500)}.py" for _ in range(rng.randint(0, 6))],
            "modifiedFiles": [f"src/mod_{rng.randint(1, 500)}.py" for _ in range(rng.randint(0, 4))],
        },
        fromHook=True,
    )
    st.tokens_since_compaction = 0
    return entry


def transcript_entries(
    seed: int = 0, *, entries: int | None = None, target_bytes: int | None = None, version: int = 3
) -> Iterator[dict[str, Any]]:
    """The header, then whole turns until at least `entries` entries or `target_bytes` bytes of
    JSON lines were produced. The leaf is always a turn's final assistant answer (no pending
    call), so `compact()` and the pairing check see a finished session. `version`: the header's
    (4: OpenClaw 2026.9.6 writes it, and its profile claims such sessions)."""
    if (entries is None) == (target_bytes is None):
        raise ValueError("give exactly one of entries / target_bytes")
    rng = random.Random(seed)
    st = _State(rng=rng, text=_Text(rng))
    yield {
        "type": "session",
        "version": version,
        "id": f"bench-{seed:04d}-{rng.getrandbits(64):016x}",
        "timestamp": "2026-03-01T00:00:00.000Z",
        "cwd": "/home/user/project",
    }
    count = size = 0
    while (entries is not None and count < entries) or (target_bytes is not None and size < target_bytes):
        pending: list[dict[str, Any]] = []
        if rng.random() < 0.08:
            pending.append(_side_entry(st))
        if st.tokens_since_compaction >= COMPACT_EVERY_TOKENS and len(st.recent_users) > 3:
            pending.append(_compaction(st))
        if rng.random() < 0.01 and len(st.recent_users) > 2:
            # abandoned branch: this turn continues from before the previous user message
            st.parent = st.recent_users[-2]
        pending.extend(_turn(st))
        for entry in pending:
            length = len(orjson.dumps(entry)) + 1
            st.tokens_since_compaction += length // 4
            count += 1
            size += length
            yield entry


def write_transcript(
    path: Path, seed: int = 0, *, entries: int | None = None, target_bytes: int | None = None, version: int = 3
) -> TranscriptInfo:
    """Write a generated transcript to `path` (must not exist) and say what it holds."""
    info = TranscriptInfo(path=path)
    with open(path, "xb", buffering=1 << 20) as handle:
        for entry in transcript_entries(seed, entries=entries, target_bytes=target_bytes, version=version):
            line = orjson.dumps(entry) + b"\n"
            handle.write(line)
            info.bytes += len(line)
            if entry["type"] == "session":
                continue
            info.entries += 1
            info.leaf_id = entry["id"]
            if entry["type"] == "compaction":
                info.compactions += 1
            message = entry.get("message") or {}
            if message.get("role") == "assistant":
                calls = [b for b in message["content"] if b["type"] == "toolCall"]
                info.tool_calls += len(calls)
                info.mutating_calls += sum(b["name"] in MUTATING_TOOLS for b in calls)
    return info


def cassette_interactions(count: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """`count` recorded-tool interactions of the shape the importers write (canonical JSON
    arguments; text results of 0.1–1.5 KB, 5 % of 2–8 KB: τ²-bench tool results are small)."""
    rng = random.Random(seed)
    st = _State(rng=rng, text=_Text(rng))
    for _ in range(count):
        call, _mutating = _call(st)
        size = rng.randint(2_000, 8_000) if rng.random() < 0.05 else rng.randint(100, 1_500)
        yield recorded_tool_interaction(call["name"], call["arguments"], st.text(size), is_error=rng.random() < 0.03)


def write_cassette_file(path: Path, count: int, seed: int = 0) -> Path:
    return write_cassette(path, cassette_interactions(count, seed))
