"""The entry tree's checks: a parent that names no entry, and parent links that form a cycle.

pi follows `parentId` from the leaf and stops where a link leads nowhere, so both are reported
where they are; a cycle is cut at the entry where it closes, so every walk ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replaylab.transcript.diagnose import diagnostic

if TYPE_CHECKING:
    from pathlib import Path

    from replaylab.transcript.index import TranscriptIndex


def check_graph(index: TranscriptIndex, name: Path) -> None:
    """Append the graph's diagnostics to `index.diagnostics`; a cycle's closing link is cut in
    `index.parent_of` (that entry's parent becomes None) and its id added to `index.cut_parents`."""
    parent_of, line_of, diags = index.parent_of, index.line_of, index.diagnostics
    for entry_id in index.ids:
        parent = parent_of[entry_id]
        if parent is not None and parent not in parent_of:
            diags.append(
                diagnostic(
                    name,
                    line_of[entry_id],
                    "dangling-parent",
                    f"parentId {parent!r} names no entry in the file; the path stops here",
                    entry_id=entry_id,
                    field="parentId",
                )
            )
    # cycle detection: colour walk over parent links
    state: dict[str, int] = {}
    for entry_id in index.ids:
        trail: list[str] = []
        current: str | None = entry_id
        while current is not None and current in parent_of and state.get(current) is None:
            state[current] = 1
            trail.append(current)
            current = parent_of[current]
        if current is not None and state.get(current) == 1:
            loop = trail[trail.index(current) :] if current in trail else [current]
            diags.append(
                diagnostic(
                    name,
                    line_of[current],
                    "cycle",
                    f"parentId links form a cycle ({' → '.join(loop)} → {current}); the path is cut there",
                    entry_id=current,
                    field="parentId",
                )
            )
            parent_of[current] = None
            index.cut_parents.add(current)
        for node in trail:
            state[node] = 2
