"""The plan of one compaction: pi's cut point for a tail size, what it summarizes and removes from
the window, and — in safeguard and manual mode — the protected entries that move the cut back.

Safeguard's promise (mutating events are never dropped, merged or truncated) is kept with entries
pi honours: the compaction never summarizes across a replay-unsafe boundary. When pi's cut would
summarize a protected entry (a mutating call, its results, a pending approval), the cut moves back
to the last valid cut point at or before the first of them, so pi's own `buildSessionContext`
keeps every one of them, in order, pairs intact, after the summary. The summarized span then holds
no protected entry at all. When the window kept from there on does not fit the budget, the
compaction fails with the numbers: safeguard does not drop them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.cutpoint import CutPoint, cut_no_later_than
from replaylab.compaction.job import Job
from replaylab.compaction.params import AGGRESSIVE_KEEP_RECENT_TOKENS, Failure
from replaylab.compaction.safeguard import Protection, answered_call_ids, select_protected
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.model import AnyEntry, CompactionEntry
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN, PI_KEEP_RECENT_TOKENS


@dataclass
class Plan:
    """One candidate compaction: where to cut, what goes away, what is summarized and kept."""

    cut: CutPoint
    keep_recent: int
    first_kept_index: int  # path index of the first kept entry (len(path) for manual)
    dropped: list[AnyEntry]
    messages: list[Any]
    turn_prefix: list[Any]
    previous: CompactionEntry | None
    #: the protected entries pi's own cut would have summarized, kept by moving the cut back
    protection: Protection = field(default_factory=Protection)
    #: tokens of the entries kept from the first protected one on (0 without protection)
    protected_tokens: int = 0
    #: tokens of the compacted window without its summary message (`window.window_tokens`)
    rest_tokens: int | None = None


def initial_keep_recent(job: Job) -> int:
    """pi's keepRecentTokens (aggressive: its small tail), never more than the budget."""
    wanted = job.params.keep_recent_tokens or PI_KEEP_RECENT_TOKENS
    if job.mode == "aggressive":
        wanted = min(wanted, AGGRESSIVE_KEEP_RECENT_TOKENS)
    return max(1, min(wanted, job.budget))


def plan_compaction(job: Job, path: list[AnyEntry], before: list[WindowMessage], keep_recent: int) -> Plan:
    """The plan for a tail of `keep_recent` tokens; in safeguard and manual mode with the cut moved
    back before the first protected entry pi's cut would summarize."""
    cut = job.cut(path, keep_recent)
    # manual writes its boundary at the leaf: everything after pi's cut is lost, as upstream
    span_end = len(path) if job.mode == "manual" else cut.first_kept_index
    # everything the window shows from before the cut is at stake, also a previous kept tail that
    # lies before the boundary (pi 0.58.3 starts after the previous compaction, and pi keeps nothing
    # before the new compaction's firstKeptEntryId) — unless pi finds nothing to compact at all,
    # which refuses the compaction as pi does (`nothing_after_boundary`)
    shown_from = cut.boundary_start
    if cut.first_kept_index < len(path) or job.mode == "manual":
        shown_from = min(shown_from, _window_start(path, cut.previous_compaction_index))
    protection = Protection()
    if job.safeguard_like:
        protection = select_protected(path[shown_from:span_end], job.classifier, answered=answered_call_ids(path))
    if protection.entry_ids:
        first = next(i for i in range(shown_from, span_end) if path[i].id == protection.entry_ids[0])
        if first < cut.boundary_start:
            cut = CutPoint(
                cut.first_kept_index, cut.turn_start_index, cut.is_split_turn, shown_from, cut.previous_compaction_index
            )
        boundary = CutPoint(span_end, -1, False, cut.boundary_start, cut.previous_compaction_index)
        cut = cut_no_later_than(path, cut if first < cut.first_kept_index else boundary, first)
        span_end = cut.first_kept_index
    first_kept = span_end
    previous = path[cut.previous_compaction_index] if cut.previous_compaction_index >= 0 else None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    messages = [
        m
        for e in _summarized(path, cut, history_end)
        if not isinstance(e, CompactionEntry) and (m := entry_to_message(e)) is not None
    ]
    prefix = (
        [
            m
            for e in path[cut.turn_start_index : cut.first_kept_index]
            if not isinstance(e, CompactionEntry) and (m := entry_to_message(e)) is not None
        ]
        if cut.is_split_turn
        else []
    )
    position = {e.id: i for i, e in enumerate(path)}
    dropped = [
        path[position[w.entry_id]]
        for w in before
        if w.entry_id in position
        and position[w.entry_id] < first_kept
        and not isinstance(path[position[w.entry_id]], CompactionEntry)
    ]
    plan = Plan(
        cut,
        keep_recent,
        first_kept,
        dropped,
        messages,
        prefix,
        previous if isinstance(previous, CompactionEntry) else None,
        protection,
    )
    if protection.entry_ids:
        plan.protected_tokens = sum(job.entry_tokens(e) for e in path[first_kept:])
    return plan


def _summarized(path: list[AnyEntry], cut: CutPoint, history_end: int) -> list[AnyEntry]:
    """The entries the summary is made of: the agent's own list when its cut gives one (OpenClaw:
    what a reset kept comes first), else pi's span from the boundary to the history's end."""
    listed = getattr(cut, "summarize", None)
    if listed is not None:
        return [path[i] for i in listed]
    return path[cut.boundary_start : history_end]


def _window_start(path: list[AnyEntry], previous_index: int) -> int:
    """Index of the first entry pi's context shows before the previous compaction: its
    firstKeptEntryId when that names an earlier entry, else the entry after it."""
    if previous_index < 0:
        return 0
    kept_id = getattr(path[previous_index], "first_kept_entry_id", None)
    return next((i for i in range(previous_index) if path[i].id == kept_id), previous_index + 1)


def nothing_after_boundary(job: Job, plan: Plan, path: list[AnyEntry]) -> Failure | None:
    """pi's prepareCompaction finds nothing to summarize after the previous compaction's boundary
    (manual summarizes up to the leaf whatever the cut)."""
    if job.rules is not None:  # the agent's own refusals (pi 0.73.1 has none beyond the ones below)
        refused = job.rules.refusal(path) or getattr(plan.cut, "refused", None)
        if refused:
            return Failure("agent_refuses", f"nothing to compact: {job.rules.name} would not compact here: {refused}")
    if plan.cut.first_kept_index >= len(path) and job.mode != "manual":
        return Failure(
            "nothing_to_compact",
            "nothing to compact: no entries after the previous compaction's "
            "boundary (pi's prepareCompaction returns nothing here)",
        )
    return None


def protect(job: Job, plan: Plan, path: list[AnyEntry]) -> Failure | None:
    """The failure when safeguard's kept window — everything from the first protected entry on —
    cannot fit the budget whatever the summary (safeguard does not drop them)."""
    if not plan.protection.entry_ids or plan.protected_tokens <= job.budget:
        return None
    params = job.params
    first = plan.protection.entry_ids[0]
    return Failure(
        "protected_too_large",
        (
            f"compaction_failure: safeguard keeps everything from the first mutating event it would otherwise "
            f"summarize (entry {first}; {len(plan.protection.entry_ids)} protected entries: mutating tool calls, "
            f"their results and pending approvals), and the {len(path) - plan.first_kept_index} entries from there "
            f"on need {plan.protected_tokens} tokens, more than the budget of {job.budget} tokens (contextTokens "
            f"{params.context_tokens} − reserve {job.reserve}); safeguard will not summarize them. Raise "
            "contextTokens or lower reserveTokensFloor"
        ),
    )


def smaller_tail(job: Job, plan: Plan, path: list[AnyEntry], summary_text: str, window_tokens: int) -> int | None:
    """The tail for the next plan when this one's window is over the budget: what is left of the
    budget after the protected entries and the summary; None when there is no next plan — the
    window fits, the mode is not safeguard (only safeguard shrinks the tail to keep
    reserveTokensFloor free; the others cut like pi), or the tail cannot get smaller."""
    if window_tokens <= job.budget or job.mode != "safeguard" or plan.protection.entry_ids:
        return None  # with protection the tail starts at the first protected entry: it cannot shrink
    room = job.budget - math.ceil(len(summary_text) / CHARS_PER_TOKEN)
    smaller = max(1, room)
    if smaller >= plan.keep_recent or plan.first_kept_index >= len(path):
        return None
    return smaller
