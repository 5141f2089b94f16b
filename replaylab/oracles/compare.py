"""replaylab's window against pi's context, message by message.

Equal means: the same number of messages, and at each position the same source entry, the same
role and the same message as JSON — compared the way JavaScript holds it (pi parsed the file with
`JSON.parse`, so `2.0` is `2` there, and the timestamps of the messages pi makes itself are epoch
milliseconds).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.oracles.pi import PiView
from replaylab.transcript.context import WindowMessage
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
        return f"position {self.position}: {self.what} differs (replaylab {self.replaylab!r}, pi {self.pi!r})"


def as_javascript(value: Any) -> Any:
    """`value` as `JSON.parse` would hold it: integral floats are integers, -0.0 is 0."""
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value):
            return int(value)
        return value
    if isinstance(value, dict):
        return {k: as_javascript(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_javascript(v) for v in value]
    return value


def _epoch_ms(value: Any) -> Any:
    if isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_dt.UTC)
        return int(moment.timestamp() * 1000)
    return value


def message_as_pi_holds_it(message: Any) -> dict[str, Any]:
    """A replaylab message (a model, or its JSON as `compactedWindow` holds it) as pi holds it."""
    data = dict(message) if isinstance(message, dict) else dump_entry(message)
    data.setdefault("role", getattr(message, "role", None))  # a default role is left out of the dump
    data = as_javascript(data)
    if data.get("role") in MADE_BY_PI and "timestamp" in data:
        data["timestamp"] = _epoch_ms(data["timestamp"])
    return data


def context_mismatches(window: Sequence[WindowMessage], view: PiView) -> list[Mismatch]:
    """Every position where replaylab's `window` and pi's context differ (empty: equal). Entry ids
    are compared only for a file pi did not migrate: pi gives a v1 file's entries fresh random ids."""
    out: list[Mismatch] = []
    compare_ids = not view.migrated
    if len(window) != len(view.context):
        out.append(Mismatch(-1, "length", len(window), len(view.context)))
    for position, (ours, theirs) in enumerate(zip(window, view.context)):
        if compare_ids and ours.entry_id != theirs.entry_id:
            out.append(Mismatch(position, "entry", ours.entry_id, theirs.entry_id))
        mine = message_as_pi_holds_it(ours.message)
        if mine.get("role") != theirs.role:
            out.append(Mismatch(position, "role", mine.get("role"), theirs.role))
        elif mine != as_javascript(theirs.message):
            differing = sorted(k for k in set(mine) | set(theirs.message) if mine.get(k) != theirs.message.get(k))
            out.append(Mismatch(position, "message", differing, differing))
    return out
