"""Linear sessions for rule tests: entries e1, e2, … each the child of the one before."""

from __future__ import annotations

from typing import Any

import orjson

TIMESTAMP = "2026-12-01T12:00:00.000Z"


def linear_jsonl(header: dict[str, Any], *entries: dict[str, Any]) -> bytes:
    """The JSONL of `header` and `entries` linked in order (ids e1, e2, … unless given)."""
    lines, parent = [header], None
    for n, entry in enumerate(entries, 1):
        entry = {"id": f"e{n}", "parentId": parent, "timestamp": TIMESTAMP, **entry}
        parent = entry["id"]
        lines.append(entry)
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def message(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": content, **extra}}
