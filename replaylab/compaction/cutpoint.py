"""pi's cut point: where the kept recent tail starts (`findValidCutPoints`, `findCutPoint`,
`findTurnStartIndex`, and the boundary part of `prepareCompaction`).

Why a faithful copy and not something smarter: pi (and OpenClaw on top of it) decides with exactly
these rules which entries a compaction summarizes. A QA tool that cut elsewhere would test a
different compactor. The rules (openclaw-internals.md §2.4–§2.5):

* cut points are user / assistant / bashExecution / custom / branchSummary / compactionSummary
  messages and `branch_summary` / `custom_message` entries — never a tool result, so an assistant
  entry and the results after it always stay on the same side;
* walk back from the newest entry summing `estimate_tokens` of `message` entries only; once the sum
  reaches keepRecentTokens, cut at the first cut point at or after that index (if there is none,
  pi keeps everything: the first cut point);
* pull preceding non-message entries (model / thinking changes, labels, custom) into the kept side,
  stopping at a message or a compaction;
* a cut that is not on a user message splits a turn: the turn's start (nearest preceding user /
  bashExecution message or branch_summary / custom_message entry) is remembered.

Boundary of a chained compaction: pi 0.58.3 starts after the previous compaction; 0.66.1 (the
version OpenClaw pins) starts at the previous compaction's `firstKeptEntryId`, so
the previous kept tail is summarized again instead of silently dropped.

Linear in the number of entries: one pass for the cut points, one backwards walk, and token
estimates are computed once per entry by the caller's cache when given.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from replaylab.transcript.model import (
    AnyEntry,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
)
from replaylab.transcript.tokens import estimate_tokens

BoundaryRule = Literal["0.66.1", "0.58.3"]

#: message roles that may start the kept tail (pi `findValidCutPoints`)
CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
#: roles that start a turn (pi `findTurnStartIndex`)
TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True)
class CutPoint:
    """pi's `CutPointResult` plus the boundary it was searched in (indexes into the path)."""

    first_kept_index: int
    turn_start_index: int  # -1 when the cut is not inside a turn
    is_split_turn: bool
    boundary_start: int
    previous_compaction_index: int  # -1 when none


def _role(entry: AnyEntry) -> str | None:
    return getattr(entry.message, "role", None) if isinstance(entry, MessageEntry) else None


def is_cut_point(entry: AnyEntry) -> bool:
    if isinstance(entry, MessageEntry):
        return _role(entry) in CUT_POINT_ROLES
    return isinstance(entry, (BranchSummaryEntry, CustomMessageEntry))


def find_valid_cut_points(entries: Sequence[AnyEntry], start: int, end: int) -> list[int]:
    return [i for i in range(start, end) if is_cut_point(entries[i])]


def find_turn_start_index(entries: Sequence[AnyEntry], entry_index: int, start: int) -> int:
    for i in range(entry_index, start - 1, -1):
        entry = entries[i]
        if isinstance(entry, (BranchSummaryEntry, CustomMessageEntry)):
            return i
        if _role(entry) in TURN_START_ROLES:
            return i
    return -1


def find_cut_point(
    entries: Sequence[AnyEntry],
    start: int,
    end: int,
    keep_recent_tokens: int,
    tokens_of: Callable[[AnyEntry], int] | None = None,
) -> tuple[int, int, bool]:
    """(first kept index, turn start index or -1, is split turn) — pi `findCutPoint`."""
    cut_points = find_valid_cut_points(entries, start, end)
    if not cut_points:
        return start, -1, False
    tokens_of = tokens_of or _message_entry_tokens
    accumulated = 0
    cut_index = cut_points[0]
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if not isinstance(entry, MessageEntry):
            continue
        accumulated += tokens_of(entry)
        if accumulated >= keep_recent_tokens:
            pos = bisect.bisect_left(cut_points, i)
            if pos < len(cut_points):
                cut_index = cut_points[pos]
            break
    return _settled(entries, cut_index, start)


def _message_entry_tokens(entry: AnyEntry) -> int:
    """pi's estimate of a message entry's message (the walk sums message entries only)."""
    assert isinstance(entry, MessageEntry)
    return estimate_tokens(entry.message)


def _settled(entries: Sequence[AnyEntry], cut_index: int, start: int) -> tuple[int, int, bool]:
    """pi's last steps of `findCutPoint` for a chosen cut point: the non-message entries just
    before it are kept with it, and a cut that is not at a user message splits a turn."""
    while cut_index > start:
        previous = entries[cut_index - 1]
        if isinstance(previous, (CompactionEntry, MessageEntry)):
            break
        cut_index -= 1
    if _role(entries[cut_index]) == "user":
        return cut_index, -1, False
    turn_start = find_turn_start_index(entries, cut_index, start)
    return cut_index, turn_start, turn_start != -1


def boundary_start(path: Sequence[AnyEntry], rule: BoundaryRule = "0.66.1") -> tuple[int, int]:
    """(boundary start index, previous compaction index or -1) for a root→leaf path."""
    previous = -1
    for i in range(len(path) - 1, -1, -1):
        if isinstance(path[i], CompactionEntry):
            previous = i
            break
    if previous < 0:
        return 0, -1
    if rule == "0.66.1":
        kept_id = path[previous].first_kept_entry_id  # type: ignore[union-attr]
        for i in range(len(path)):  # pi's findIndex: anywhere on the path, even after the compaction
            if path[i].id == kept_id:
                return i, previous
    return previous + 1, previous


def compute_cut_point(
    path: Sequence[AnyEntry],
    keep_recent_tokens: int,
    rule: BoundaryRule = "0.66.1",
    tokens_of: Callable[[AnyEntry], int] | None = None,
) -> CutPoint:
    """pi's cut point for compacting `path` (root→leaf) with the given tail budget."""
    start, previous = boundary_start(path, rule)
    first_kept, turn_start, split = find_cut_point(path, start, len(path), keep_recent_tokens, tokens_of)
    return CutPoint(first_kept, turn_start, split, start, previous)
