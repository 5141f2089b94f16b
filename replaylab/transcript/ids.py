"""New entry ids for what replaylab appends to a working copy.

pi draws 8 random hex digits; replaylab derives them from what the entry hangs off (its parent,
the entry it replaces), so two runs of the same scenario write the same ids and their reports
compare equal (with and without xdist, across shards). Collisions are checked like pi does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def derived_entry_id(taken: set[str], *parts: str) -> str:
    """8 hex digits from `parts`, not in `taken` (which it then includes)."""
    seed = "\x00".join(parts)
    for attempt in range(1 << 16):
        candidate = hashlib.sha256(f"{seed}\x00{attempt}".encode()).hexdigest()[:8]
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise RuntimeError("no free entry id")  # 65,536 collisions in a row cannot happen in practice


def taken_ids(ids: Iterable[str]) -> set[str]:
    return set(ids)
