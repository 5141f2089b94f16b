"""A path whose leaf, as the agent sees it, is still its latest compaction: everything after that
compaction is an entry it restated (`transcript.restated`: a copy of one the model had already
seen), so nothing the agent or the user added reached the model since.

The agents refuse to compact when their leaf is a compaction (a compaction right after one would
summarize a summary, openclaw#12170). Their own compactions keep a tail *before* the entry, so the
entry stays the leaf; safeguard restates its protected entries and kept tail *after* it, so the
leaf is a restated copy. This module is the one reading of "nothing new since the compaction":
the double-compaction guards (`harness._refusal`, `plan.agent_refusal`) and the COMPACTION_LOOP
recheck (`compactors.recheck.loop_defects`) all ask it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from replaylab.transcript.context import latest_compaction
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry
from replaylab.transcript.restated import restated_sources


def compaction_still_leaf(
    path: Sequence[AnyEntry],
    memo: ItemMemo | None = None,
    shows: Callable[[AnyEntry], Any] | None = None,
    end: int | None = None,
) -> int | None:
    """The index of the latest compaction of `path[:end]` when every entry after it there restates
    an earlier entry, else None (also without a compaction). `shows`: an entry for which it gives
    None shows the model nothing and is no news either (the recheck's reading, where only what the
    model saw counts); without it every entry that restates nothing is new (the agent's leaf moved).
    `end`: the recheck's path ends in the compaction it judges; the whole path is read for the
    restatements, which the item's memo has answered for it already."""
    stop = len(path) if end is None else end
    found = latest_compaction(path[:stop])
    if found is None:
        return None
    index = found[0]
    after = path[index + 1 : stop]
    if not after:
        return index
    sources = restated_sources(path, memo)
    for entry in after:
        if entry.id in sources:
            continue
        if shows is not None and shows(entry) is None:
            continue
        return None
    return index
