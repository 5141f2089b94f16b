"""OpenClaw 2026.9.6's compaction cut (`prepareCompaction`, `findCutPoint`, compaction-CAzwgOuQ.mjs;
packages/agent-core/src/harness/compaction/compaction.ts), without request-budget constraints.

* Refused outright when the leaf is a `reset` or a compaction written by a hook (`fromHook`).
* The boundary is the last `reset` or `compaction` on the path. After a compaction the search
  starts at its `firstKeptEntryId` (wherever it is on the path), else just after it. After a reset
  it starts just after the reset, and the messages the reset kept (its prelude) are summarized
  first: the tail budget grows by their estimate.
* The tail budget is `keepRecentTokens / triggerUnitScale`, where the scale is the recorded
  provider usage of the context's last trusted assistant message over OpenClaw's own estimate of
  the whole context (at least 1, at most keepRecentTokens): OpenClaw triggers in provider tokens and
  cuts in its own estimate's units.
* Walking back from the leaf, every entry that projects to a message adds its estimate (custom
  messages and branch summaries too; an `excludeFromContext` message is no message); the cut is the
  nearest cut point (user, assistant, bashExecution, custom — not a runtime-context carrier —,
  branch or compaction summary; never a tool result) at or after where the sum reaches the budget,
  else the first cut point; then it moves back over preceding non-message entries.
* A cut that is not at a turn start splits that turn. When nothing would be summarized (no message
  before the cut and no turn prefix) OpenClaw refuses the empty compaction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from replaylab.agents.openclaw_2026_9_6.context import context_messages, project, walked_path
from replaylab.agents.openclaw_2026_9_6.estimate import context_tokens
from replaylab.agents.openclaw_2026_9_6.pairing import reset_kept_entries
from replaylab.transcript.context import first_index_of
from replaylab.transcript.javascript import js_truthy
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id() call
from replaylab.transcript.model import AnyEntry, CompactionEntry, CustomMessage, MessageEntry, ResetEntry

#: JavaScript's Number.MAX_SAFE_INTEGER, the tail budget's ceiling
MAX_SAFE_INTEGER = 2**53 - 1

CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass(frozen=True)
class OpenClawCut:
    """Where OpenClaw cuts (indexes into the path as given), or why it will not."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool
    boundary_start: int
    #: the previous boundary (a compaction or a reset; -1: none)
    previous_compaction_index: int
    #: why OpenClaw would not compact (None: it cuts here)
    refused: str | None = None
    #: `triggerUnitScale` and the tail budget it searched with
    scale: float = 1.0
    keep_recent_tokens: float = 0.0
    #: `tokensBefore`: the context's recorded usage and the estimates after it
    tokens_before: float = 0
    #: path indexes of the messages it would summarize (the reset prelude's first) and of the
    #: split turn's prefix
    summarize: tuple[int, ...] = ()
    turn_prefix: tuple[int, ...] = ()


def refusal(path: Sequence[AnyEntry]) -> str | None:
    """`prepareCompaction`'s refusals before any cut."""
    if not path:
        return "the session has no entries"
    last = path[-1]
    if isinstance(last, ResetEntry):
        return "the leaf is a reset: its history starts afresh"
    if isinstance(last, CompactionEntry) and js_truthy(last.from_hook):
        return "the leaf is a compaction a hook wrote"
    return None


def _is_cut_point(message: Any) -> bool:
    role = getattr(message, "role", None)
    if role == "custom":
        return not _runtime_carrier(message)
    return role in CUT_POINT_ROLES


def _is_turn_start(message: Any) -> bool:
    role = getattr(message, "role", None)
    if role == "custom":
        return not _runtime_carrier(message)
    return role in TURN_START_ROLES


def _runtime_carrier(message: Any) -> bool:
    details = message.details if isinstance(message, CustomMessage) else None
    return isinstance(details, dict) and details.get("runtimeContextCarrier") is True


def _compaction_message(entry: AnyEntry) -> Any | None:
    """`getMessageFromEntryForCompaction`: a compaction entry stands for no message here."""
    return None if isinstance(entry, CompactionEntry) else project(entry)


def find_cut_point(
    entries: Sequence[AnyEntry],
    start: int,
    end: int,
    keep_recent_tokens: float,
    tokens_of: Callable[[Any], int],
    messages: Sequence[Any] | None = None,
) -> tuple[int, int, bool]:
    """`findCutPoint(entries, start, end, keepRecentTokens)`: (first kept index, turn start or -1,
    split turn). `messages`: `_compaction_message` of entries[start:end], when the caller has them."""
    if messages is None:
        messages = [_compaction_message(entries[i]) for i in range(start, end)]
    cut_index: int | None = None
    for offset, message in enumerate(messages):
        if message is not None and _is_cut_point(message):
            cut_index = start + offset
    if cut_index is None:
        return start, -1, False
    accumulated = 0
    for index in range(end - 1, start - 1, -1):
        message = messages[index - start]
        if message is None:
            continue
        if _is_cut_point(message):
            cut_index = index
        accumulated += tokens_of(message)
        if accumulated >= keep_recent_tokens:
            break
    cut_index = min(cut_index, end - 1)
    while cut_index > start:
        previous = entries[cut_index - 1]
        if (
            isinstance(previous, (CompactionEntry, ResetEntry, MessageEntry))
            or messages[cut_index - 1 - start] is not None
        ):
            break
        cut_index -= 1
    cut_message = messages[cut_index - start]
    if cut_message is not None and _is_turn_start(cut_message):
        return cut_index, -1, False
    turn_start = next(
        (i for i in range(cut_index, start - 1, -1) if (m := messages[i - start]) is not None and _is_turn_start(m)),
        -1,
    )
    return cut_index, turn_start, turn_start != -1


def prepare_cut(path: Sequence[AnyEntry], keep_recent_tokens: int, tokens_of: Callable[[Any], int]) -> OpenClawCut:
    """`prepareCompaction(path, {keepRecentTokens})`'s cut, indexes into `path`."""
    original = list(path)
    walked = walked_path(path)
    path, facts = walked.entries, walked.facts
    where = {identity(entry): index for index, entry in enumerate(original)} if facts is None else {}

    def stood_at(entry: AnyEntry) -> int:
        """Where a walked entry stands in the path as given: with unique ids no entry object
        stands twice, so the walk's position of it; else the last place the object stands."""
        return walked.positions[facts.first_of[entry.id]] if facts is not None else where[identity(entry)]

    def at(index: int) -> int:
        return stood_at(path[index]) if 0 <= index < len(path) else len(original)

    refused = refusal(path)
    if refused is not None:
        return OpenClawCut(len(original), -1, False, len(original), -1, refused=refused)
    boundary = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], (CompactionEntry, ResetEntry))), -1)
    effective_from, boundary_start, prelude = 0, 0, []
    # the previous boundary, a reset too: what the window shows from before it starts at its
    # `firstKeptEntryId` (replaylab's compactor protects nothing the agent no longer sees)
    previous_compaction = boundary
    if boundary >= 0:
        kept_id = path[boundary].first_kept_entry_id  # type: ignore[union-attr]
        found = first_index_of(path, kept_id, len(path), facts) if kept_id else None
        kept = -1 if found is None else found
        if isinstance(path[boundary], ResetEntry):
            prelude = [
                (stood_at(entry), message)
                for entry in (reset_kept_entries(path[kept:boundary]) if kept >= 0 else [])
                if (message := _compaction_message(entry)) is not None
            ]
            effective_from = boundary + 1
        else:
            boundary_start = kept if kept >= 0 else boundary + 1
    effective = path[effective_from:]
    context = [message for _, _, message in context_messages(path, facts)]
    tokens_before, usage = context_tokens(context, tokens_of)
    estimated = sum(map(tokens_of, context))
    scale = 1.0
    if estimated > 0 and math.isfinite(usage):
        scale = min(max(1, keep_recent_tokens), max(1, usage / estimated))
    keep = min(MAX_SAFE_INTEGER, keep_recent_tokens / scale + sum(tokens_of(m) for _, m in prelude))
    # each entry from the search's start projected once: the search and what it summarizes read them
    messages = [_compaction_message(effective[i]) for i in range(boundary_start, len(effective))]
    first, turn_start, split = find_cut_point(effective, boundary_start, len(effective), keep, tokens_of, messages)
    history_end = turn_start if split else first
    summarize = tuple(
        [i for i, _ in prelude]
        + [
            at(effective_from + i)
            for i in range(boundary_start, history_end)
            if messages[i - boundary_start] is not None
        ]
    )
    prefix = tuple(
        at(effective_from + i) for i in range(turn_start, first) if split and messages[i - boundary_start] is not None
    )
    cut = OpenClawCut(
        first_kept_index=at(effective_from + first),
        turn_start_index=at(effective_from + turn_start) if split else -1,
        is_split_turn=split,
        boundary_start=at(effective_from + boundary_start),
        previous_compaction_index=at(previous_compaction) if previous_compaction >= 0 else -1,
        scale=scale,
        keep_recent_tokens=keep,
        tokens_before=tokens_before,
        summarize=summarize,
        turn_prefix=prefix,
    )
    if not summarize and not prefix:
        return _refused(
            cut, "nothing to summarize: every message before the cut is kept (OpenClaw refuses an empty compaction)"
        )
    return cut


def _refused(cut: OpenClawCut, why: str) -> OpenClawCut:
    return replace(cut, refused=why)
