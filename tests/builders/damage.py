"""Damaged sessions for the fuzz tests: generated sessions (`bench.generate`, under pi's header
and under OpenClaw 2026.9.6's) with one to three fields of their message entries given a value of
another JSON type, removed, or set to a role, stop reason or parent no agent wrote."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bench.generate import transcript_entries

#: values of every JSON type, and items no block model reads
ODD_VALUES: list[Any] = [
    None,
    5,
    "x",
    [],
    {},
    True,
    -1.5,
    {"type": "text"},
    {"type": 7},
    [{"type": "text", "text": None}],
]
ROLES: list[Any] = ["user", "assistant", "toolResult", "bashExecution", "custom", "system", "weird", 5, ["user"], {}]


def damage(entry: dict[str, Any], rng: random.Random) -> None:
    """One field of a message entry changed in place."""
    message = entry["message"]
    kind = rng.randrange(7)
    if kind == 0:
        message["content"] = rng.choice(ODD_VALUES)
    elif kind == 1 and isinstance(message.get("content"), list) and message["content"]:
        block = rng.choice(message["content"])
        if isinstance(block, dict) and block:
            key = rng.choice(sorted(block))
            if rng.random() < 0.5:
                block.pop(key)
            else:
                block[key] = rng.choice(ODD_VALUES)
    elif kind == 2:
        message["role"] = rng.choice(ROLES)
    elif kind == 3:
        message[rng.choice(sorted(message))] = rng.choice(ODD_VALUES)
    elif kind == 4:
        message.pop(rng.choice(sorted(message)), None)
    elif kind == 5:
        entry["parentId"] = rng.choice([None, "nowhere", entry["id"], 5])
    elif message.get("role") == "assistant":
        message["stopReason"] = rng.choice(["error", "aborted", "length", None, 5])


def damaged_session(folder: Path, seed: int) -> tuple[Path, set[int]]:
    """A generated session with some message entries damaged; its path and their line numbers."""
    rng = random.Random(seed)
    entries = list(transcript_entries(seed, entries=rng.randrange(20, 90), version=rng.choice((3, 4))))
    messages = [i for i, e in enumerate(entries) if e.get("type") == "message"]
    lines = set()
    for _ in range(rng.randrange(1, 4)):
        index = rng.choice(messages)
        damage(entries[index], rng)
        lines.add(index + 1)
    recording = folder / "session.jsonl"
    recording.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return recording, lines
