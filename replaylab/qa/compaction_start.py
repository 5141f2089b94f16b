"""Where an item's compaction first happens (the pipeline's third arrow, `qa.pipeline`): the
recording's turn starts, and under `compact_at: auto` the replies within a run, the budget settled
on their windows, and the first point with a recorded turn to replay after it — or why there is none.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from replaylab.causes import (
    MID_RUN,
    NEVER_CROSSES_BUDGET,
    ONE_USER_TURN,
    PAST_LAST_TURN,
    STARTS_AFRESH,
    TOO_SMALL,
    Cause,
    ItemCause,
)
from replaylab.qa.item import LoadedItem, NotExercised, StartPoint
from replaylab.replay.trace import turn_number
from replaylab.results import BudgetView
from replaylab.suite import Scenario

if TYPE_CHECKING:
    from replaylab.qa.boundaries import Boundary
    from replaylab.replay import Turn
    from replaylab.transcript.model import AnyEntry
    from replaylab.transcript.rules import AgentRules
    from replaylab.upstream.runtime_rules import TurnStartRules


def starting_point(item: LoadedItem) -> StartPoint | NotExercised:
    """The turn starts of the recording, the budget settled on them, and where compaction first happens."""
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.qa.setup import resolve_budget, turn_start_rules
    from replaylab.replay import split_turns
    from replaylab.transcript import build_window

    memo = item.memo
    path = item.transcript.leaf_path(memo)
    turns = split_turns(path, memo, agent=item.plan.profile)
    before_replies = item.scenario.compact_at == "auto" and item.plan.profile.compacts_before_replies
    # an agent that checks before each reply reads the turn starts among every point, once
    boundaries = None if before_replies else turn_boundaries(path, turns, item.classifier, memo, item.plan.progress)
    settled: tuple[Scenario, BudgetView] | None = None
    if item.scenario.compact_at == "auto" and (before_replies or not boundaries):
        within = start_within_run(item, path, turns, turn_starts=before_replies)
        if isinstance(within, AtTurnStart):
            settled, boundaries = (within.scenario, within.budget), within.boundaries
        elif within is not None:
            return within
    if boundaries is None:  # no reply after tool results decided it: the turn starts on their own
        boundaries = turn_boundaries(path, turns, item.classifier, memo, item.plan.progress)
    if settled is None:
        rules = turn_start_rules(memo)
        settled = resolve_budget(
            item.scenario, item.plan.budget, boundaries, item.mode, tail=agent_tail(item, path), rules=rules
        )
    if settled is None or not boundaries:
        return NotExercised("one user turn: nothing before it to compact", ItemCause.of(ONE_USER_TURN))
    scenario, budget = settled
    peak = max(b.tokens for b in boundaries)
    if budget.too_small:  # `contextTokens: auto` found no compaction worth testing: none is attempted
        return NotExercised(
            f"too small to be worth compacting: {budget.rule}", ItemCause.of(TOO_SMALL, largest_window=peak)
        )
    points = compaction_points(scenario, turns, boundaries, turn_start_rules(memo))
    if not points and scenario.compact_at == "auto":
        return NotExercised(
            f"never crosses the budget: its largest turn-start window is {peak:,} tokens, the budget "
            f"{budget.budget:,} ({budget.head()})",
            ItemCause.of(NEVER_CROSSES_BUDGET, largest_window=peak, budget=budget.budget),
            budget,
        )
    if not points:
        return NotExercised(
            f"{scenario.compact_at} is past the last turn ({len(turns)} turns)",
            ItemCause.of(PAST_LAST_TURN, largest_window=peak, budget=budget.budget),
            budget,
        )
    reached = first_reaching_point(item, path, turns, points)
    if isinstance(reached, Unreached):
        figures = ItemCause.of(reached.cause, largest_window=peak, budget=budget.budget)
        return NotExercised(reached.reason, figures, budget)
    point, history, later, notes = reached
    protected = next((b.protected_tokens for b in boundaries if b.turn == point), 0)
    points = [later_point for later_point in points if point <= later_point < point + len(later)]
    return StartPoint(
        path, points, history, later, build_window(history, memo), scenario, budget, protected, peak, notes
    )


@dataclass(frozen=True)
class AtTurnStart:
    """`start_within_run`'s answer when the first point whose window crosses the budget is a turn
    start: the budget settled on every point, and the turn starts' windows among them, for the
    turn starts' own way on."""

    scenario: Scenario
    budget: BudgetView
    boundaries: list[Boundary]


def start_within_run(
    item: LoadedItem, path: list[AnyEntry], turns: list[Turn], *, turn_starts: bool = False
) -> StartPoint | NotExercised | AtTurnStart | None:
    """Where an item compacts within a run under `compact_at: auto`: before the first reply within
    a run whose window crosses the budget — a reply after the agent's tool results, where pi 1.6.0
    checks for compaction and every agent compacts when the request overflows. That is every
    such session of an agent that checks before each reply (`AgentProfile.compacts_before_replies`,
    `turn_starts`: the turn starts are points too, in path order with the replies), and for any
    agent a session with no later turn start to compact at (one user turn, or only inputs typed
    while the run went on). The budget is settled on those points' windows; the rest of that run
    and the turns after it are replayed. `AtTurnStart` when the first point is a turn start; None
    when the session has no reply after tool results (nothing within a run to compact)."""
    from replaylab.qa.auto_budget import PointWords
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.qa.setup import auto_points, resolve_budget, turn_start_rules
    from replaylab.replay.turns import replies_after_tools, rest_of_run
    from replaylab.transcript import build_window

    replies = replies_after_tools(turns)
    if not replies:
        return None
    # (turn, step) in path order; step 0: the turn's start, which turn_boundaries skips when steered
    order = sorted([*((k, 0) for k in range(1, len(turns))), *replies]) if turn_starts else replies
    rests = [turns[0], *(turns[k] if not step else rest_of_run(turns[k], step) for k, step in order)]  # 0: no point
    boundaries = turn_boundaries(path, rests, item.classifier, item.memo, item.plan.progress)
    # the turn starts among the points, numbered as turns; none: a session of one run after all
    starts = [replace(b, turn=order[b.turn - 1][0]) for b in boundaries if not order[b.turn - 1][1]]
    turn_starts = bool(starts)

    def reply(index: int) -> str:
        turn, step = order[index - 1]
        return f"turn {turn_number(turn)}" if not step else f"reply {step + 1} of turn {turn_number(turn)}"

    words = (
        PointWords("turn start or reply after tool results", "largest window at a turn start or before a reply", reply)
        if turn_starts
        else PointWords("reply after tool results", "largest window before a reply", reply)
    )
    tail = agent_tail(item, path)
    # within a run the release's check before a turn plays no part: a point compacts past the
    # budget, its window alone, under the release's reserve
    rules = replace(turn_start_rules(item.memo), counts_prompt_first=False, at_threshold=False)
    settled = resolve_budget(item.scenario, item.plan.budget, boundaries, item.mode, words, tail, rules)
    if settled is None or not boundaries:
        return None
    scenario, budget = settled
    peak = max(b.tokens for b in boundaries)
    if budget.too_small:
        return NotExercised(
            f"too small to be worth compacting: {budget.rule}", ItemCause.of(TOO_SMALL, largest_window=peak)
        )
    points = auto_points(boundaries, scenario, rules)
    if not points:
        where = "" if turn_starts else " within its run"
        return NotExercised(
            f"never crosses the budget{where}: its {words.largest} is {peak:,} tokens, "
            f"the budget {budget.budget:,} ({budget.head()})",
            ItemCause.of(NEVER_CROSSES_BUDGET, largest_window=peak, budget=budget.budget),
            budget,
        )
    rest = rests[points[0]]
    turn, step = order[points[0] - 1]
    if not step:
        return AtTurnStart(scenario, budget, starts)
    boundary = next(b for b in boundaries if b.turn == points[0])
    history = path[: boundary.start]
    later, fresh = until_fresh_start(path, len(history), [rest, *turns[turn + 1 :]], item.memo.rules)
    if not later:
        return None
    line = item.transcript.line_of.get(rest.first_entry.id, "?")
    note = (
        (
            f"compacted within turn {turn_number(turn)}'s run, before reply {step + 1} (line {line}), the first "
            f"point whose window crosses the budget — {item.plan.profile.label} checks for compaction before each "
            "reply after tool results, not only at turn starts"
        )
        if turn_starts
        else (
            f"one user turn: compacted within its run, before reply {step + 1} of turn {turn_number(turn)} (line "
            f"{line}), the first reply after tool results whose window crosses the budget — where pi 1.6.0 checks "
            "for compaction before each reply, and any agent compacts when that request overflows the model's window"
        )
    )
    if fresh is not None:
        note += f"; the turns after the {fresh.type} entry {fresh.id} start afresh and are not replayed"
    window = build_window(history, item.memo)
    where = f"within turn {turn_number(turn)}'s run, before reply {step + 1}"
    return StartPoint(
        path, [turn], history, later, window, scenario, budget, boundary.protected_tokens, peak, note, where
    )


def agent_tail(item: LoadedItem, path: list[AnyEntry]) -> Callable[[Boundary, int], int]:
    """The tokens the agent's own cut keeps of the window at a point for a keepRecentTokens: from
    its first kept entry to the point. Within a run this may be the whole window — no tool result
    is a cut point, so a burst of results larger than the tail leaves none after where the tail
    is reached — and such a point cannot gain, whatever the budget."""
    from replaylab.compaction import CompactParams
    from replaylab.compaction.cutpoint import compute_cut_point
    from replaylab.transcript.model import MessageEntry

    memo, rules = item.memo, item.memo.rules
    boundary_rule = CompactParams.model_fields["boundary_rule"].default  # what the item's compaction uses

    def entry_tokens(entry: AnyEntry) -> int:
        return memo.tokens(entry.message) if isinstance(entry, MessageEntry) else 0

    # a budget that no point gains under is chosen a second time without the protected entries
    known: dict[tuple[int, int], int] = {}

    def kept(boundary: Boundary, keep: int) -> int:
        key = (boundary.start, keep)
        if key not in known:
            history = path[: boundary.start]
            cut = (
                compute_cut_point(history, keep, tokens_of=entry_tokens)
                if rules is None
                else rules.cut(history, keep, boundary_rule, entry_tokens, memo.tokens)
            )
            known[key] = sum(entry_tokens(entry) for entry in history[cut.first_kept_index :])
        return known[key]

    return kept


@dataclass(frozen=True)
class Unreached:
    """Why no compaction point reaches a recorded turn, and its cause."""

    reason: str
    cause: Cause


def first_reaching_point(
    item: LoadedItem, path: list[AnyEntry], turns: list[Turn], points: list[int]
) -> tuple[int, list[AnyEntry], list[Turn], str | None] | Unreached:
    """The first compaction point with a recorded turn to replay after it — its history, the turns
    replayed from it and why any are not — or why there is none, and its cause. A point no agent
    compacts at (an input typed while its run goes on: `Turn.steered`) and a point whose next
    turn the agent's context starts afresh in (it reaches nothing) give way to the next point."""
    rules, line_of = item.memo.rules, item.transcript.line_of
    skipped: str | None = None
    cause = STARTS_AFRESH
    for point in points:
        first = turns[point]
        if first.steered:
            if skipped is None:
                skipped, cause = (
                    f"no compaction before turn {point + 1}: its input (line {line_of.get(first.inputs[0].id, '?')}) "
                    "comes while the agent's run goes on, after the results of its tool calls and before its "
                    "reply, where pi 0.73.1 and OpenClaw do not check for compaction (pi 1.6.0 checks before "
                    "each reply of a run: under compact_at auto its items compact there; turn:N and every:N name "
                    "turn starts)",
                    MID_RUN,
                )
            continue
        # by identity: `list.index` compares each earlier entry's fields until it meets this one
        history = path[: next(i for i, e in enumerate(path) if e is first.inputs[0])] if first.inputs else path
        later, fresh = until_fresh_start(path, len(history), turns[point:], rules)
        if fresh is None:
            return point, history, later, skipped
        assert rules is not None  # only an agent's rules start a context afresh
        where = f"the {fresh.type} entry {fresh.id} (line {line_of.get(fresh.id, '?')})"
        if later:
            unreplayed = (
                f"{len(turns) - point - len(later):,} recorded turn(s) after {where} are not replayed: "
                f"{rules.name}'s context starts afresh there, so what a compaction before it did reaches none of them"
            )
            return point, history, later, "; ".join(note for note in (skipped, unreplayed) if note)
        if skipped is None:
            skipped, cause = (
                f"no compaction before turn {point + 1}: {rules.name}'s context starts afresh at {where}, within "
                "that turn, so a compaction there reaches no turn",
                STARTS_AFRESH,
            )
    return Unreached(skipped or "", cause)


def until_fresh_start(
    path: list[AnyEntry], start: int, later: list[Turn], rules: AgentRules | None
) -> tuple[list[Turn], AnyEntry | None]:
    """The later turns up to the first entry after `path[start]` where the agent's context starts
    afresh (`AgentRules.starts_afresh`), and that entry when it cuts any turn off (None: every
    turn is replayed). A compaction before it reaches no turn after it, and replaylab's runs do
    not start afresh there."""
    if rules is None:
        return later, None
    fresh = next((i for i in range(start, len(path)) if rules.starts_afresh(path[i])), None)
    if fresh is None:
        return later, None
    after = {entry.id for entry in path[fresh + 1 :]}
    kept = list(itertools.takewhile(lambda turn: not any(e.id in after for e in (*turn.inputs, *turn.steps)), later))
    return (later, None) if len(kept) == len(later) else (kept, path[fresh])


def compaction_points(
    scenario: Scenario, turns: list[Turn], boundaries: list[Boundary], rules: TurnStartRules | None = None
) -> list[int]:
    """Indexes of the turns *before which* compaction happens (never 0: nothing to compact yet);
    `rules`: how the item's release meets a turn start under `compact_at: auto`."""
    from replaylab.qa.setup import auto_points

    kind, _, number = scenario.compact_at.partition(":")
    if kind == "turn":
        n = int(number) - 1  # turn:N is 1-based: compact before user turn N
        return [n] if 0 < n < len(turns) else []
    if kind == "every":
        step = int(number)
        if step <= 0:
            return []
        # an input typed while the agent's run goes on is no point an agent compacts at
        return [n for n in range(step, len(turns), step) if not turns[n].steered]
    return auto_points(boundaries, scenario, rules)
