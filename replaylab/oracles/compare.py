"""replaylab's window against an agent's context (pi's, OpenClaw's), message by message.

Equal means: the same number of messages, and at each position the same source entry, the same
role and the same message as JSON — compared the way JavaScript holds it. pi parsed the file with
`JSON.parse`, so `2.0` is `2` there: Python's `==` already equates an integral float with its
integer (`2.0 == 2`, `-0.0 == 0`), so messages are compared as they are, without a converted copy.
The timestamps of the messages pi makes itself are epoch milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.json_dump import compact_json
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.javascript import date_time_ms
from replaylab.transcript.model import dump_entry

#: roles of the messages pi makes from an entry (not stored as a message): pi converts their
#: timestamps to epoch milliseconds
MADE_BY_PI = frozenset({"compactionSummary", "branchSummary", "custom"})


@dataclass(frozen=True)
class Mismatch:
    position: int
    what: str  # "length", "entry", "role", "message"
    replaylab: Any
    pi: Any

    def __str__(self) -> str:
        return f"position {self.position}: {self.what} differs (replaylab {self.replaylab!r}, the agent {self.pi!r})"


def _epoch_ms(value: Any) -> Any:
    if isinstance(value, str):
        ms = date_time_ms(value)
        return value if ms is None else ms
    return value


def message_as_pi_holds_it(message: Any) -> dict[str, Any]:
    """A replaylab message (a model, or its JSON as `compactedWindow` holds it) as pi holds it, for
    `==` with the message pi gives."""
    data: dict[str, Any] = dict(message) if isinstance(message, dict) else dump_entry(message)
    data.setdefault("role", getattr(message, "role", None))  # a default role is left out of the dump
    role = data.get("role")
    if isinstance(role, str) and role in MADE_BY_PI and "timestamp" in data:
        data["timestamp"] = _epoch_ms(data["timestamp"])
    return data


def context_mismatches(window: Sequence[WindowMessage], view: Any, migrated: bool | None = None) -> list[Mismatch]:
    """Every position where replaylab's `window` and the agent's context differ (empty: equal).
    `view`: the agent's answer for the file (`.context`, `.migrated`) or its context alone (items
    with `entry_id`, `role`, `message`). Entry ids are compared only for a file the agent did not
    migrate: pi and OpenClaw give a v1 file's entries fresh random ids."""
    context = getattr(view, "context", view)
    if migrated is None:
        migrated = bool(getattr(view, "migrated", False))
    out: list[Mismatch] = []
    compare_ids = not migrated
    if len(window) != len(context):
        out.append(Mismatch(-1, "length", len(window), len(context)))
    for position, (ours, theirs) in enumerate(zip(window, context)):
        if compare_ids and ours.entry_id != theirs.entry_id:
            out.append(Mismatch(position, "entry", ours.entry_id, theirs.entry_id))
        mine = message_as_pi_holds_it(ours.message)
        if mine.get("role") != theirs.role:
            out.append(Mismatch(position, "role", mine.get("role"), theirs.role))
        elif not _same(mine, theirs.message):
            keys = set(mine) | set(theirs.message)
            differing = sorted(k for k in keys if not _same(mine.get(k), theirs.message.get(k)))
            out.append(Mismatch(position, "message", differing, differing))
    return out


def _same(ours: Any, theirs: Any) -> bool:
    """`ours == theirs`; for values nested deeper than Python compares (a transcript may nest as
    deep as the agents read), their JSON texts with sorted keys."""
    try:
        return bool(ours == theirs)
    except RecursionError:
        return compact_json(ours, sort_keys=True) == compact_json(theirs, sort_keys=True)
