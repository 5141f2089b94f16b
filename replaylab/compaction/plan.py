"""The plan of one compaction: pi's cut point for a tail size, what it summarizes and removes from
the window, the entries safeguard protects in it — and whether they fit the budget at all."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.cutpoint import CutPoint, compute_cut_point
from replaylab.compaction.job import Job
from replaylab.compaction.params import AGGRESSIVE_KEEP_RECENT_TOKENS, Failure
from replaylab.compaction.safeguard import (
    Protection,
    Shrink,
    answered_call_ids,
    select_protected,
    shrink_protected,
)
from replaylab.constants import CHARS_PER_TOKEN, PI_KEEP_RECENT_TOKENS
from replaylab.transcript.context import WindowMessage, entry_to_message, protected_ids
from replaylab.transcript.model import AnyEntry, CompactionEntry, MessageEntry
from replaylab.transcript.tokens import estimate_tokens


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
    protection: Protection = field(default_factory=Protection)
    shrinks: list[Shrink] = field(default_factory=list)
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
    """The plan for a tail of `keep_recent` tokens, protection not chosen yet (`protect`)."""
    cut = compute_cut_point(path, keep_recent, job.params.boundary_rule, job.entry_tokens)
    previous = path[cut.previous_compaction_index] if cut.previous_compaction_index >= 0 else None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    messages = [
        m
        for e in path[cut.boundary_start : history_end]
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
    first_kept = len(path) if job.mode == "manual" else cut.first_kept_index
    position = {e.id: i for i, e in enumerate(path)}
    dropped = [
        path[position[w.entry_id]]
        for w in before
        if w.entry_id in position
        and position[w.entry_id] < first_kept
        and not isinstance(path[position[w.entry_id]], CompactionEntry)
    ]
    return Plan(
        cut,
        keep_recent,
        first_kept,
        dropped,
        messages,
        prefix,
        previous if isinstance(previous, CompactionEntry) else None,
    )


def nothing_after_boundary(job: Job, plan: Plan, path: list[AnyEntry]) -> Failure | None:
    """pi's prepareCompaction finds nothing to summarize after the previous compaction's boundary
    (manual summarizes up to the leaf whatever the cut)."""
    if plan.cut.first_kept_index >= len(path) and job.mode != "manual":
        return Failure(
            "nothing_to_compact",
            "nothing to compact: no entries after the previous compaction's "
            "boundary (pi's prepareCompaction returns nothing here)",
        )
    return None


def protect(job: Job, plan: Plan, path: list[AnyEntry]) -> Failure | None:
    """Choose the protected entries (safeguard, manual); the failure when they cannot fit the
    budget — shrinking their tool-result payloads first when allowMutatingEventTruncate permits."""
    if not job.safeguard_like:
        return None
    previous = protected_ids(plan.previous) if plan.previous is not None else []
    plan.protection = select_protected(
        plan.dropped, job.classifier, answered=answered_call_ids(path), previously_protected=previous
    )
    by_id = {e.id: e for e in plan.dropped}
    entries = [by_id[i] for i in plan.protection.entry_ids]
    plan.protected_tokens = sum(job.entry_tokens(e) for e in entries)
    if plan.protected_tokens <= job.budget:
        return None
    params = job.params
    if params.allow_mutating_event_truncate:
        reserve_for_summary = min(math.ceil(job.summary_chars / CHARS_PER_TOKEN), job.budget // 4)
        plan.shrinks = shrink_protected(
            [e for e in entries if isinstance(e, MessageEntry)], job.budget - reserve_for_summary
        )
        shrunk = {s.entry_id: s for s in plan.shrinks}
        plan.protected_tokens = sum(
            estimate_tokens(shrunk[e.id].message) if e.id in shrunk else job.entry_tokens(e) for e in entries
        )
        if plan.protected_tokens <= job.budget:
            return None
        return Failure(
            "protected_too_large",
            (
                f"compaction_failure: even with allowMutatingEventTruncate the {len(entries)} protected entries "
                f"need {plan.protected_tokens} tokens (only tool-result payloads may shrink; calls never do), "
                f"more than the budget of {job.budget} tokens (contextTokens {params.context_tokens} − "
                f"reserve {job.reserve}); safeguard will not drop them"
            ),
        )
    return Failure(
        "protected_too_large",
        (
            f"compaction_failure: the {len(entries)} protected entries (mutating tool calls, their results and "
            f"pending approvals) need {plan.protected_tokens} tokens, more than the budget of {job.budget} tokens "
            f"(contextTokens {params.context_tokens} − reserve {job.reserve}); safeguard will not drop them. "
            "Raise contextTokens, lower reserveTokensFloor, or allow allowMutatingEventTruncate to shrink their "
            "tool-result payloads"
        ),
    )


def smaller_tail(job: Job, plan: Plan, path: list[AnyEntry], summary_text: str, window_tokens: int) -> int | None:
    """The tail for the next plan when this one's window is over the budget: what is left of the
    budget after the protected entries and the summary; None when there is no next plan — the
    window fits, the mode is not safeguard (only safeguard shrinks the tail to keep
    reserveTokensFloor free; the others cut like pi), or the tail cannot get smaller."""
    if window_tokens <= job.budget or job.mode != "safeguard":
        return None
    room = job.budget - plan.protected_tokens - math.ceil(len(summary_text) / CHARS_PER_TOKEN)
    smaller = max(1, room)
    if smaller >= plan.keep_recent or plan.first_kept_index >= len(path):
        return None
    return smaller
