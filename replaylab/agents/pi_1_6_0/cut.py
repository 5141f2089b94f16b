"""pi 1.6.0's compaction cut (compaction/compaction.js `prepareCompaction`,
`findProjectedCutPoint`), in the projection (`context.projection`), as path indexes.

* Refused when the leaf is a compaction ("Already compacted"), when the cut lands on no entry
  with an id, and when nothing would be summarized (#4811: no message before the cut and no turn
  prefix; 0.73.1 wrote such an empty compaction).
* The search starts right after the newest compaction, which the projection puts first: at its
  kept range (system messages left out), so in path order the compaction entry itself is skipped.
* Cut points: entries yielding a user / assistant / bashExecution / custom / branch or compaction
  summary message (never a tool result, never a compaction entry).
* Walking back from the leaf, every projected entry's messages count (custom messages and branch
  summaries too; entries totalling 0 are skipped). Once the sum reaches keepRecentTokens the cut is
  the first cut point at or after that entry, or — none — the last cut point (0.73.1: the first,
  keeping everything).
* A closed suffix of omitted recovery attempts (context edits removing an assistant attempt, no
  other entry visible) moves the cut one entry later.
* The cut moves back over entries without messages, stopping at a compaction or any entry with
  messages; it splits a turn unless its entry yields a user / bashExecution / custom / branch or
  compaction summary message (0.73.1: only a user message).
* Summarized: the projected messages from the boundary to the history's end, compaction entries
  and system messages left out; the turn prefix likewise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from replaylab.agents.pi_1_6_0.context import Projected, entry_messages, extra, projection, role_of
from replaylab.agents.pi_1_6_0.estimate import projected_context_tokens
from replaylab.transcript.model import AnyEntry, CompactionEntry, MessageEntry
from replaylab.upstream.pi_1_6_0 import CONTEXT_EDIT_TYPE, CUT_POINT_ROLES, SYSTEM_ROLE, TURN_START_ROLES


@dataclass(frozen=True)
class PiCut:
    """Where pi 1.6.0 cuts (indexes into the path as given), or why it will not."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool
    boundary_start: int
    previous_compaction_index: int
    #: why pi would not compact (None: it cuts here)
    refused: str | None = None
    #: `tokensBefore` (`estimateProjectedContextTokens`)
    tokens_before: float = 0
    #: path indexes of the summarized messages and of the split turn's prefix, one per message
    summarize: tuple[int, ...] = ()
    turn_prefix: tuple[int, ...] = ()


def refusal(path: Sequence[AnyEntry]) -> str | None:
    if path and isinstance(path[-1], CompactionEntry):
        return "the leaf already is a compaction"
    return None


def _is_cut_point(item: Projected) -> bool:
    return not isinstance(item.entry, CompactionEntry) and any(role_of(m) in CUT_POINT_ROLES for m in item.messages)


def _is_turn_start(item: Projected) -> bool:
    return not isinstance(item.entry, CompactionEntry) and any(role_of(m) in TURN_START_ROLES for m in item.messages)


def _recovery_omission_suffix(suffix: Sequence[Projected]) -> bool:
    """Everything after the cut is an omitted recovery attempt: context edits removed at least one
    assistant message, nothing after the cut is visible, and no edit replaces another entry."""

    def intrinsically_visible(item: Projected) -> bool:
        return item.entry.type != CONTEXT_EDIT_TYPE and bool(entry_messages(item.entry))

    def omitted(item: Projected) -> bool:
        return intrinsically_visible(item) and not item.messages

    omitted_ids = {item.entry.id for item in suffix if omitted(item)}
    external = any(
        item.entry.type == CONTEXT_EDIT_TYPE
        and extra(item.entry, "replacement") is not None
        and extra(item.entry, "targetId") not in omitted_ids
        for item in suffix
    )
    return (
        not external
        and any(
            isinstance(item.entry, MessageEntry) and role_of(item.entry.message) == "assistant" and omitted(item)
            for item in suffix
        )
        and all(
            not isinstance(item.entry, CompactionEntry) and (not intrinsically_visible(item) or omitted(item))
            for item in suffix
        )
    )


def find_cut_point(
    found: Sequence[Projected], start: int, keep_recent_tokens: float, tokens_of: Callable[[Any], int]
) -> tuple[int, int, bool]:
    """`findProjectedCutPoint`: (first kept, turn start or -1, split turn), projection indexes."""
    end = len(found)
    cut_points = [i for i in range(start, end) if _is_cut_point(found[i])]
    if not cut_points:
        return start, -1, False
    accumulated = 0
    exceeded = False
    cut_index = cut_points[0]
    for i in range(end - 1, start - 1, -1):
        tokens = sum(map(tokens_of, found[i].messages))
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            exceeded = True
            cut_index = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    if exceeded and _recovery_omission_suffix(found[cut_index + 1 : end]):
        cut_index += 1
    while cut_index > start:
        previous = found[cut_index - 1]
        if isinstance(previous.entry, CompactionEntry) or previous.messages:
            break
        cut_index -= 1
    if _is_turn_start(found[cut_index]):
        return cut_index, -1, False
    turn_start = next((i for i in range(cut_index, start - 1, -1) if _is_turn_start(found[i])), -1)
    return cut_index, turn_start, turn_start != -1


def _summarized(found: Sequence[Projected]) -> tuple[int, ...]:
    return tuple(
        item.index
        for item in found
        if not isinstance(item.entry, CompactionEntry)
        for message in item.messages
        if role_of(message) != SYSTEM_ROLE
    )


def prepare_cut(path: Sequence[AnyEntry], keep_recent_tokens: int, tokens_of: Callable[[Any], int]) -> PiCut:
    """`prepareCompaction(path, {keepRecentTokens})`'s cut, indexes into `path`."""
    previous = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)
    refused = refusal(path)
    if refused is not None:
        return PiCut(len(path), -1, False, len(path), previous, refused=refused)
    found = projection(path)
    start = 1 if found and isinstance(found[0].entry, CompactionEntry) and found[0].messages else 0
    tokens_before = projected_context_tokens(found, path, tokens_of)
    first, turn_start, split = find_cut_point(found, start, keep_recent_tokens, tokens_of)

    def at(position: int) -> int:
        return found[position].index if 0 <= position < len(found) else len(path)

    history_end = turn_start if split else first
    cut = PiCut(
        first_kept_index=at(first),
        turn_start_index=at(turn_start) if split else -1,
        is_split_turn=split,
        boundary_start=at(start),
        previous_compaction_index=previous,
        tokens_before=tokens_before,
        summarize=_summarized(found[start:history_end]),
        turn_prefix=_summarized(found[turn_start:first]) if split else (),
    )
    if first >= len(found) or not found[first].entry.id:
        return _refused(cut, "the cut lands on no entry")
    if not cut.summarize and not cut.turn_prefix:
        return _refused(
            cut, "nothing to summarize: every message before the cut is kept (pi 1.6.0 refuses an empty compaction)"
        )
    return cut


def _refused(cut: PiCut, why: str) -> PiCut:
    return replace(cut, refused=why)
