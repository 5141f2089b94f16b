"""Recorded compactions whose `firstKeptEntryId` is not an earlier entry on their own path.

pi rebuilds the context (`buildSessionContext`) as the compaction's summary, then the path's
entries from `firstKeptEntryId` up to the compaction, then what follows it; it looks for that
id only before the compaction, so an id that names the compaction itself, a later entry,
another branch or nothing keeps no message from before the compaction — silently. The next
compaction (`prepareCompaction`) looks for the same id along the whole path and starts its
summary there, or right after the compaction when it is not found. Each such link is reported
where it is, with what pi makes of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

from replaylab.diagnostics import Diagnostic
from replaylab.transcript.diagnose import diagnostic

if TYPE_CHECKING:
    from pathlib import Path

    from replaylab.transcript.index import TranscriptIndex

FIELD = "firstKeptEntryId"
KEEPS_NOTHING = (
    "pi's buildSessionContext looks for it only before the compaction, so no message from before the compaction "
    "is kept (only the summary and what follows it)"
)


def check_first_kept(
    index: TranscriptIndex, first_kept: dict[str, str | None], name: Path, leaf_path: Sequence[str] | None = None
) -> list[Diagnostic]:
    """A diagnostic for each compaction (`first_kept`: its id → its `firstKeptEntryId`) whose
    first kept entry is not one of its ancestors. Runs after the graph check (cycles cut);
    `leaf_path`: the leaf path's ids, when the caller has them (the tree is then not walked whole)."""
    if not first_kept:
        return []
    order = _tree_order(index) if leaf_path is None else _compared_order(index, first_kept, leaf_path)
    out = []
    for compaction_id, kept_id in first_kept.items():
        if compaction_id not in index.line_of:
            continue
        line = index.line_of[compaction_id]
        problem = _problem(index, order, compaction_id, kept_id)
        if problem is None:
            continue
        code, message = problem
        out.append(diagnostic(name, line, code, message, entry_id=compaction_id, field=FIELD))
    return out


def _problem(
    index: TranscriptIndex, order: dict[str, tuple[int, int]], compaction_id: str, kept_id: str | None
) -> tuple[str, str] | None:
    if kept_id is None:
        return "first-kept-missing", f"the compaction names no first kept entry; {KEEPS_NOTHING}"
    if kept_id == compaction_id:
        return "first-kept-itself", f"names the compaction itself (a way to keep nothing); {KEEPS_NOTHING}"
    if kept_id not in order:
        return "first-kept-unknown", f"{kept_id!r} names no entry in the file; {KEEPS_NOTHING}"
    start, end = order[compaction_id]
    kept_start, kept_end = order[kept_id]
    if kept_start < start and end <= kept_end:
        return None  # an ancestor: an earlier entry on the compaction's own path
    where = f"line {index.line_of[kept_id]}"
    if start < kept_start <= end:
        return (
            "first-kept-later",
            f"{kept_id!r} names an entry after the compaction on its branch ({where}); {KEEPS_NOTHING}, and pi's "
            "next compaction on this path starts its summary at that entry (prepareCompaction looks along the "
            "whole path)",
        )
    return (
        "first-kept-other-branch",
        f"{kept_id!r} names an entry on another branch ({where}), not one before the compaction on its path; "
        f"{KEEPS_NOTHING}",
    )


def _compared_order(
    index: TranscriptIndex, first_kept: dict[str, str | None], leaf_path: Sequence[str]
) -> dict[str, tuple[int, int]]:
    """`_tree_order`'s spans for the entries the check compares (the compactions and the entries
    they name), without walking the whole tree: a contracted tree of them, where the leaf path
    stands as one chain of the compared entries on it, and each compared entry off it hangs
    under its ancestors up to the path (or its own root), each followed once. An entry's
    ancestors in the contracted tree are its ancestors in the file, so its spans tell the same."""
    parent_of = index.parent_of
    if leaf_path and parent_of[leaf_path[0]] in parent_of:  # the path stopped at an empty parent id
        return _tree_order(index)
    position_of = dict(zip(leaf_path, range(len(leaf_path))))
    on_path: set[int] = set()
    contracted: dict[str, str | None] = {}
    for entry_id in chain(first_kept, first_kept.values()):
        if entry_id is None or entry_id not in parent_of:
            continue
        if entry_id in position_of:
            on_path.add(position_of[entry_id])
            continue
        node = entry_id
        while node not in contracted:
            up = parent_of[node]
            if up not in parent_of:  # a root
                contracted[node] = None
                break
            contracted[node] = up
            if up in position_of:
                on_path.add(position_of[up])
                break
            node = up
    along = sorted(on_path)
    for above, position in zip([None, *along], along):
        contracted[leaf_path[position]] = None if above is None else leaf_path[above]
    children: dict[str | None, list[str]] = {}
    for node, up in contracted.items():
        children.setdefault(up, []).append(node)
    return _spans(children)


def _tree_order(index: TranscriptIndex) -> dict[str, tuple[int, int]]:
    """Each entry's (entry, exit) time in a depth-first walk of the entry tree: `a` is an
    ancestor of `b` exactly when a's span holds b's. One pass over the tree (no walk up per
    compaction, which a file of many compactions on one long path would make quadratic)."""
    children: dict[str | None, list[str]] = {}
    for entry_id in index.ids:
        parent = index.parent_of.get(entry_id)
        children.setdefault(parent if parent in index.parent_of else None, []).append(entry_id)
    return _spans(children)


def _spans(children: dict[str | None, list[str]]) -> dict[str, tuple[int, int]]:
    """(entry, exit) times of a depth-first walk of the forest `children` (parent → children, None → roots)."""
    order: dict[str, tuple[int, int]] = {}
    clock = 0
    stack: list[tuple[str, bool]] = [(root, False) for root in reversed(children.get(None, []))]
    entered: dict[str, int] = {}
    while stack:
        node, leaving = stack.pop()
        if leaving:
            order[node] = (entered[node], clock)
            continue
        clock += 1
        entered[node] = clock
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children.get(node, [])))
    return order
