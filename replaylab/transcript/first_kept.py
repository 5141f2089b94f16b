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


def check_first_kept(index: TranscriptIndex, first_kept: dict[str, str | None], name: Path) -> list[Diagnostic]:
    """A diagnostic for each compaction (`first_kept`: its id → its `firstKeptEntryId`) whose
    first kept entry is not one of its ancestors. Runs after the graph check (cycles cut)."""
    if not first_kept:
        return []
    order = _tree_order(index)
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


def _tree_order(index: TranscriptIndex) -> dict[str, tuple[int, int]]:
    """Each entry's (entry, exit) time in a depth-first walk of the entry tree: `a` is an
    ancestor of `b` exactly when a's span holds b's. One pass over the tree (no walk up per
    compaction, which a file of many compactions on one long path would make quadratic)."""
    children: dict[str | None, list[str]] = {}
    for entry_id in index.ids:
        parent = index.parent_of.get(entry_id)
        children.setdefault(parent if parent in index.parent_of else None, []).append(entry_id)
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
