"""The plan of one compaction: pi's cut point for a tail size, what it summarizes and removes from
the window, and — in safeguard and manual mode — the protected entries it restates after itself.

Safeguard's promise (mutating events are never dropped, merged or truncated) is kept with entries
every agent's rebuild honours. The cut stays where the agent puts it (pi's rule, or the item's
profile's), and everything older than the kept tail is summarized — protected entries too, each as
one line of the summary's tool outcomes. When that span holds a protected entry (a mutating call,
its results, a pending approval), the compaction keeps nothing itself (`firstKeptEntryId` = its
own id) and the entries after it restate, byte for byte and in path order, the protected entries
of the span and then the kept tail
(`transcript.restated`). pi 0.73.1 and 1.x and OpenClaw 2026.9.6 all rebuild such a compaction as
its summary followed by every entry after it, so the agent sees each protected entry verbatim,
paired, in chronological order. A span with no protected entry is compacted as pi compacts it.

Safeguard cannot compact only when the protected entries alone and the smallest summary exceed the
budget (`protected_too_large`); a tail that does not fit shrinks (`smaller_tail`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.job import Job
from replaylab.compaction.params import AGGRESSIVE_KEEP_RECENT_TOKENS, Failure
from replaylab.compaction.restated_leaf import compaction_still_leaf
from replaylab.compaction.safeguard import (
    PathCalls,
    Protection,
    select_protected,
    shrink_protected_results,
)
from replaylab.compaction.summary.run_history import compaction_run_finds_real_conversation
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.model import AnyEntry, CompactionEntry
from replaylab.transcript.rules import Cut
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN, PI_KEEP_RECENT_TOKENS


@dataclass
class Plan:
    """One candidate compaction: where to cut, what goes away, what is summarized and kept."""

    cut: Cut
    keep_recent: int
    first_kept_index: int  # path index of the first kept entry (len(path): a boundary at the leaf)
    dropped: list[AnyEntry]
    messages: list[Any]
    turn_prefix: list[Any]
    previous: CompactionEntry | None
    #: the protected entries of the summarized span, restated after the compaction entry
    protection: Protection = field(default_factory=Protection)
    #: what the compaction restates after itself, in path order: the protected entries of the
    #: summarized span, then the kept tail (empty: nothing protected was summarized, pi's own cut)
    restated: list[AnyEntry] = field(default_factory=list)
    #: tokens of the protected entries restated (0 without protection)
    protected_tokens: int = 0
    #: protected tool results restated shortened (allowMutatingEventTruncate): entry id → message
    shrunk: dict[str, Any] = field(default_factory=dict)
    #: tokens of the compacted window without its summary message (`window.window_tokens`)
    rest_tokens: int | None = None
    #: the window before the compaction: an agent's safeguard may look past the span for a real conversation
    window: list[WindowMessage] = field(default_factory=list)


def initial_keep_recent(job: Job) -> int:
    """pi's keepRecentTokens (aggressive: its small tail), never more than the budget."""
    wanted = job.params.keep_recent_tokens or PI_KEEP_RECENT_TOKENS
    if job.mode == "aggressive":
        wanted = min(wanted, AGGRESSIVE_KEEP_RECENT_TOKENS)
    return max(1, min(wanted, job.budget))


def plan_compaction(
    job: Job,
    path: list[AnyEntry],
    before: list[WindowMessage],
    keep_recent: int,
    calls: PathCalls,
    tokens: Callable[[Any], float] | None = None,
) -> Plan:
    """The plan for a tail of `keep_recent` tokens at the agent's cut; in safeguard and manual mode
    with the protected entries of the summarized span (and then the kept tail) to restate.
    `calls`: `path_calls(path)`, made once for every refit of the tail; `tokens`: the estimate the
    agent's cut is found with, when not the item's (`Job.cut`)."""
    cut = job.cut(path, keep_recent, tokens)
    # OpenClaw 2026.4.12's `/compact` moves its boundary to the leaf: everything after the cut is lost
    span_end = len(path) if job.boundary_at_leaf else cut.first_kept_index
    # everything the window shows from before the cut is at stake, also a previous kept tail that
    # lies before the boundary (pi 0.58.3 starts after the previous compaction, and pi keeps nothing
    # before the new compaction's firstKeptEntryId) — unless pi finds nothing to compact at all,
    # which refuses the compaction as pi does (`nothing_after_boundary`)
    shown_from = cut.boundary_start
    if cut.first_kept_index < len(path) or job.boundary_at_leaf:
        shown_from = min(shown_from, _window_start(path, cut.previous_compaction_index))
    protection = Protection()
    if job.safeguard_like:
        protection = select_protected(
            path[shown_from:span_end],
            job.classifier,
            calls=calls,
            unresolved_spawns=job.unresolved_spawns,
            earlier=path[:shown_from],
            shown=frozenset(w.entry_id for w in before if w.entry_id),
        )
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
        window=before,
    )
    if protection.entry_ids:
        protected = set(protection.entry_ids)
        kept_protected = [e for e in path[shown_from:span_end] if e.id in protected]
        tail = [e for e in path[first_kept:] if entry_to_message(e) is not None]
        plan.restated = kept_protected + tail
        plan.protected_tokens = sum(job.entry_tokens(e) for e in kept_protected)
    return plan


def _summarized(path: list[AnyEntry], cut: Cut, history_end: int) -> list[AnyEntry]:
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
    (a `/compact` whose boundary moves to the leaf summarizes up to it whatever the cut)."""
    if job.rules is not None:  # the agent's own refusals (pi 0.73.1 has none beyond the ones below)
        refused = agent_refusal(job, path) or getattr(plan.cut, "refused", None)
        if refused:
            return Failure("agent_refuses", f"nothing to compact: {job.rules.name} would not compact here: {refused}")
    if plan.cut.first_kept_index >= len(path) and not job.boundary_at_leaf:
        return Failure(
            "nothing_to_compact",
            "nothing to compact: no entries after the previous compaction's "
            "boundary (pi's prepareCompaction returns nothing here)",
        )
    return None


def agent_refusal(job: Job, path: list[AnyEntry]) -> str | None:
    """Why the item's agent would not compact `path` before any cut. Where its profile says it
    refuses after a compaction leaf, a path whose latest compaction is followed only by the entries
    it restated (`restated_leaf`: safeguard's, written after the entry where the agent keeps its
    tail before it) is read as ending in that compaction: nothing new reached the model since."""
    assert job.rules is not None
    refused = job.rules.refusal(path)
    if refused or not path or not job.profile.refuses_after_compaction_leaf or isinstance(path[-1], CompactionEntry):
        return refused
    index = compaction_still_leaf(path, job.memo)
    if index is None:
        return None
    as_leaf = job.rules.refusal(path[: index + 1])
    if as_leaf is None:
        return None
    return f"{as_leaf} ({path[index].id}), followed only by the entries it restated"


def run_skips(job: Job, before: list[WindowMessage]) -> Failure | None:
    """The agent's own compaction run does not compact a session whose context (the window before
    the compaction, as the run has rewritten its messages) holds no real conversation, before it
    asks where to cut (its profile's `real_conversation.compaction_run_skip`). Agent-core's
    threshold compaction in the agent's default mode (replaylab's `auto`, `aggressive`) runs inside
    the prompt, outside that run."""
    rules = job.profile.real_conversation
    if rules is None or rules.compaction_run_skip is None:
        return None
    if job.params.trigger == "threshold" and not job.safeguard_like:
        return None
    if compaction_run_finds_real_conversation(rules, [w.message for w in before]):
        return None
    return Failure(
        "agent_refuses",
        f"nothing to compact: {job.profile.name} would not compact here: {rules.compaction_run_skip} "
        "(its compaction run finds no real conversation in the session's context and skips it)",
    )


def protected_entries(job: Job, path: list[AnyEntry], before: list[WindowMessage], calls: PathCalls) -> list[AnyEntry]:
    """Every entry safeguard must keep verbatim in this compaction's window, wherever its cut
    falls: the protected entries among those the window before it shows."""
    if not job.safeguard_like:
        return []
    shown = {w.entry_id for w in before}
    entries = [e for e in path if e.id in shown]
    first_shown = next((i for i, e in enumerate(path) if e.id in shown), len(path))
    protection = select_protected(
        entries,
        job.classifier,
        calls=calls,
        unresolved_spawns=job.unresolved_spawns,
        earlier=path[:first_shown],
    )
    chosen = set(protection.entry_ids)
    return [e for e in entries if e.id in chosen]


def protect(job: Job, protected: list[AnyEntry], summary_floor_tokens: int) -> tuple[Failure | None, dict[str, Any]]:
    """(the failure when the protected entries and the smallest summary alone exceed the budget —
    no cut can make that window fit, and safeguard does not drop them —, the protected results to
    restate shortened). With allowMutatingEventTruncate their results are shortened first
    (`safeguard.shrink_protected_results`) to leave room for a whole summary, and only what
    still does not fit with the smallest one fails."""
    tokens = sum(job.entry_tokens(e) for e in protected)
    if not protected or tokens + summary_floor_tokens <= job.budget:
        return None, {}
    params = job.params
    shrunk: dict[str, Any] = {}
    if params.allow_mutating_event_truncate:
        # room for a whole summary, not its floor only (the tail shrinks to what is left)
        summary_room = max(summary_floor_tokens, min(math.ceil(job.summary_chars / CHARS_PER_TOKEN), job.budget // 2))
        shown = [e.model_copy(update={"message": job.unmarked[e.id]}) if e.id in job.unmarked else e for e in protected]
        shrunk = shrink_protected_results(shown, job.budget - summary_room, job.tokens)
        tokens = sum(job.tokens(shrunk[e.id]) if e.id in shrunk else job.entry_tokens(e) for e in protected)
        if tokens + summary_floor_tokens <= job.budget:
            return None, shrunk
    # no summary and no cut can make room: the entries alone are over the budget
    alone_over = not shrunk and not params.allow_mutating_event_truncate and tokens > job.budget
    what = "even with their results truncated (allowMutatingEventTruncate) " if shrunk else ""
    knob = "" if params.allow_mutating_event_truncate else ", or allow allowMutatingEventTruncate"
    # a reserve that follows the window (OpenClaw 2026.9.6) has no floor to lower
    lower = "" if job.reserve_follows_window else " or lower reserveTokensFloor"
    return (
        Failure(
            "protected_too_large",
            (
                f"compaction_failure: the {len(protected)} protected entries (mutating tool calls, their results "
                f"and pending approvals) {what}need {tokens:,} tokens and the smallest summary "
                f"{summary_floor_tokens:,}: {tokens + summary_floor_tokens:,} tokens, more than the budget of "
                f"{job.budget:,} tokens (contextTokens {params.context_tokens:,} − reserve {job.reserve:,}); "
                f"safeguard keeps every one of them verbatim. Raise contextTokens{lower}{knob}"
            ),
            protected_over_budget=alone_over,
            needed_budget=tokens + summary_floor_tokens,
        ),
        {},
    )


def smaller_tail(job: Job, plan: Plan, path: list[AnyEntry], summary_text: str, window_tokens: int) -> int | None:
    """The tail for the next plan when this one's window is over the budget: what is left of the
    budget after the summary and the protected entries restated before the tail; None when there
    is no next plan — the window fits, the mode is not safeguard (only safeguard shrinks the tail
    to keep reserveTokensFloor free; the others cut like pi), or the tail cannot get smaller. A
    smaller tail may move more protected entries into the summarized span: they are restated, so
    the next plan is measured again."""
    if window_tokens <= job.budget or job.mode != "safeguard":
        return None
    room = job.budget - math.ceil(len(summary_text) / CHARS_PER_TOKEN) - plan.protected_tokens
    smaller = max(1, room)
    if smaller >= plan.keep_recent or plan.first_kept_index >= len(path):
        return None
    return smaller
