"""`contextTokens: auto`: a budget for one recording, chosen from its own windows.

A fixed budget fits no real set of sessions: they differ in size by orders of magnitude, so one
number leaves most of them never compacted. The rule (also printed with every item's result):

1. The windows at the start of every user turn after the first (`qa.boundaries`, the agent's
   estimate, what the trigger compares with the budget); the largest is the session's *peak*.
2. A session whose peak is under `MIN_PEAK_TOKENS` is *too small to be worth compacting*: a
   reserve within `RESERVE_WINDOW_SHARE` of its window would leave the summary less than
   `MIN_SUMMARY_TOKENS`. It is not exercised, with that reason, and no compaction is attempted —
   whatever a compactor would have said about it.
3. The budget (contextTokens − reserveTokensFloor) starts at `BUDGET_SHARE` of the peak, so
   compaction happens where the session is large.
4. reserveTokensFloor is `RESERVE_SHARE` of the peak (OpenClaw's proportion: a 20,000-token floor
   in a 200,000-token window) within `RESERVE_MIN`–`RESERVE_MAX`, and never more than
   `RESERVE_WINDOW_SHARE` of the peak (a session under 2,000 tokens gets less); the summary may use
   `SUMMARY_MAX_TOKENS_SHARE` of it. keepRecentTokens is `KEEP_SHARE` of the budget, at least
   `KEEP_MIN` and never more than the budget.
5. At the first turn start where the window passes that budget, compaction must be able to gain:
   the window must be larger than what the compacted one could hold — the kept tail (in safeguard
   at least its protected entries, which it restates verbatim) plus the largest summary. The tail
   is what the agent's own cut keeps there, which may be more than keepRecentTokens: within a run
   no tool result is a cut point, so right after a burst of results larger than the tail the cut
   keeps the whole window. Where it cannot gain, the budget is raised past that turn start and
   the next one is tried.
6. When no turn start can gain only because of what safeguard must keep, the budget stays at step
   3: compaction is attempted where the session is large, and its failure is the finding
   (`CANNOT_COMPACT`), with the numbers. When none could gain even keeping just the tail, the
   session is too small to be worth compacting (step 2's outcome, with this reason).

7. A point is counted as the item's OpenClaw release checks it (`TurnStartRules`): 2026.9.6 adds
   the turn's prompt and compacts on reaching the budget. Its reserve stays step 4's, though
   2026.9.6 keeps the least of 20,000 and a quarter of a set window: the auto window stands for a
   real one scaled down to the session, and at a real window (80,000 tokens or more) that reserve
   is its 20,000 floor, the proportion step 4 scales; a quarter of the small window itself would
   leave the summary less room than the real run has.

A suite's or the command line's own contextTokens switches the rule off; its own
reserveTokensFloor or keepRecentTokens replaces that part of the rule only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replaylab.qa.boundaries import Boundary, counted
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
from replaylab.upstream.pi_0_73_1 import SUMMARY_MAX_TOKENS_SHARE
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, TurnStartRules

#: compaction triggers once the window passes this share of its largest turn-start size
BUDGET_SHARE = 0.6
#: reserveTokensFloor as a share of the peak: OpenClaw's floor over its default window
RESERVE_SHARE = 0.1
#: the least reserve: room for a summary of `SUMMARY_MAX_TOKENS_SHARE` of it (800 tokens)
RESERVE_MIN = 1_000
RESERVE_MAX = DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
#: the reserve may take at most this share of the session's largest window (a smaller session
#: gets a smaller reserve than `RESERVE_MIN`)
RESERVE_WINDOW_SHARE = 0.5
#: the least room for a summary (`SUMMARY_MAX_TOKENS_SHARE` of the reserve)
MIN_SUMMARY_TOKENS = 200
#: the smallest peak the rule compacts: below it a reserve within its share of the window leaves
#: less than `MIN_SUMMARY_TOKENS` for the summary
MIN_PEAK_TOKENS = round(MIN_SUMMARY_TOKENS / SUMMARY_MAX_TOKENS_SHARE / RESERVE_WINDOW_SHARE)
#: keepRecentTokens as a share of the budget, never below `KEEP_MIN` nor above the budget
KEEP_SHARE = 0.25
KEEP_MIN = 200


@dataclass(frozen=True)
class AutoBudget:
    context_tokens: int
    reserve_tokens_floor: int
    keep_recent_tokens: int
    peak: int  # the largest turn-start window
    turn: int | None  # the turn before which the rule expects the first compaction (0-based); None: none gains
    why: str  # the rule as it applied to this recording, in words
    #: the session is too small to be worth compacting (`why` says which way): it is not exercised,
    #: and no compaction is attempted
    too_small: bool = False

    @property
    def budget(self) -> int:
        return self.context_tokens - self.reserve_tokens_floor


@dataclass(frozen=True)
class PointWords:
    """How the budget's rule names the points it was chosen on: turn starts, the replies within a
    run of a session that has no later turn start, or both for an agent that checks before each
    reply (`qa.compaction_start.start_within_run`)."""

    #: the kind of point, as in "no turn start has a window …"
    kind: str = "turn start"
    #: the figure the budget is a share of
    largest: str = "largest turn-start window"
    #: the point of a boundary, as in "compaction at turn 3 can gain"
    name: Callable[[int], str] = lambda turn: f"turn {turn + 1}"


TURN_STARTS = PointWords()


#: the tokens a compaction at a point keeps of its window for a keepRecentTokens, by the agent's
#: own cut (None: the keepRecentTokens themselves)
TailOf = Callable[[Boundary, int], int]


def choose_budget(
    boundaries: Sequence[Boundary],
    *,
    protects: bool,
    reserve_tokens_floor: int | None = None,
    keep_recent_tokens: int | None = None,
    words: PointWords = TURN_STARTS,
    tail: TailOf | None = None,
    rules: TurnStartRules = OPENCLAW_2026_4_12.turn_start,
) -> AutoBudget | None:
    """The budget for a recording with these turn starts; None when it has no turn start to
    compact at (one user turn). `protects`: the mode keeps protected entries (safeguard); `words`:
    how the rule names the points; `tail`: what the agent's cut keeps at a point, where it may
    keep more than keepRecentTokens (within a run no tool result is a cut point, so a run of
    results larger than the tail keeps the whole window); `rules`: how the item's release counts a
    point against the budget (step 7)."""
    if not boundaries:
        return None
    peak = max(b.tokens for b in boundaries)
    target = max(1, math.floor(BUDGET_SHARE * peak))
    reserve, reserve_why = _reserve(peak, reserve_tokens_floor)
    keep, keep_why = _keep(target, keep_recent_tokens)
    if peak < MIN_PEAK_TOKENS:
        return AutoBudget(
            target + reserve,
            reserve,
            keep,
            peak,
            None,
            f"{words.largest} {peak:,} tokens, under the {MIN_PEAK_TOKENS:,} contextTokens: auto "
            f"compacts (a reserve of at most {RESERVE_WINDOW_SHARE:.0%} of the window would leave less than "
            f"{MIN_SUMMARY_TOKENS:,} tokens for the summary)",
            too_small=True,
        )
    summary_room = max(1, math.floor(SUMMARY_MAX_TOKENS_SHARE * reserve))
    parts = [
        f"{words.largest} {peak:,} tokens; budget {BUDGET_SHARE:.0%} of it = {target:,}",
        f"reserveTokensFloor {reserve:,} ({reserve_why})",
        f"keepRecentTokens {keep:,} ({keep_why})",
    ]
    found = _gaining(boundaries, target, keep, summary_room, rules, protects=protects, tail=tail)
    if found is not None:
        budget, boundary, kept, held = found
        if budget > target:
            what = "protected entries" if protects and boundary.protected_tokens > keep else "tail"
            parts.append(
                f"raised to {budget:,} so compaction at {words.name(boundary.turn)} can gain "
                f"(kept {what} {kept:,} + summary ≤ {summary_room:,})"
            )
        parts.extend(
            f"at {words.name(point.turn)} the agent's own cut keeps {cut_keeps:,} of its {point.tokens:,} tokens: "
            "no cut point lies after where its tail is reached"
            for point, cut_keeps in held
        )
        return AutoBudget(budget + reserve, reserve, keep, peak, boundary.turn, "; ".join(parts))
    if protects and _gaining(boundaries, target, keep, summary_room, rules, protects=False, tail=tail) is not None:
        parts.append(
            f"no {words.kind} has a window larger than what safeguard must keep (its protected entries) plus "
            "the summary: compaction is attempted at the budget and cannot gain"
        )
        return AutoBudget(target + reserve, reserve, keep, peak, None, "; ".join(parts))
    tail_words = (
        f"a {keep:,}-token tail" if tail is None else f"the tail the agent's cut keeps (at least {keep:,} tokens)"
    )
    parts.append(
        f"no {words.kind} has a window larger than {tail_words} plus a summary of up to "
        f"{summary_room:,}: no compaction could make it smaller"
    )
    return AutoBudget(target + reserve, reserve, keep, peak, None, "; ".join(parts), too_small=True)


def _reserve(peak: int, given: int | None) -> tuple[int, str]:
    """reserveTokensFloor for a session of this peak, and how it was chosen, in words."""
    if given is not None:
        return given, "set"
    share = round(RESERVE_SHARE * peak)
    within = math.floor(RESERVE_WINDOW_SHARE * peak)
    if share < RESERVE_MIN and within < RESERVE_MIN:
        return within, (
            f"{RESERVE_WINDOW_SHARE:.0%} of the window: the least reserve, {RESERVE_MIN:,}, may take no more; "
            f"{RESERVE_SHARE:.0%} of the window would be {share:,}"
        )
    if share < RESERVE_MIN:
        return RESERVE_MIN, f"the least reserve; {RESERVE_SHARE:.0%} of the window would be {share:,}"
    if share > RESERVE_MAX:
        return RESERVE_MAX, f"the largest reserve; {RESERVE_SHARE:.0%} of the window would be {share:,}"
    return share, f"{RESERVE_SHARE:.0%} of the window"


def _keep(target: int, given: int | None) -> tuple[int, str]:
    """keepRecentTokens for this budget, and how it was chosen, in words."""
    if given is not None:
        return given, "set" + (
            "; more than the budget, so a compaction may find nothing to summarize" if given > target else ""
        )
    share = math.floor(KEEP_SHARE * target)
    if share >= KEEP_MIN:
        return min(target, share), f"{KEEP_SHARE:.0%} of the budget"
    if KEEP_MIN > target:
        return target, f"the budget; the least tail, {KEEP_MIN:,}, is more"
    return KEEP_MIN, f"the least tail; {KEEP_SHARE:.0%} of the budget would be {share:,}"


def _gaining(
    boundaries: Sequence[Boundary],
    target: int,
    keep: int,
    summary_room: int,
    rules: TurnStartRules,
    *,
    protects: bool,
    tail: TailOf | None = None,
) -> tuple[int, Boundary, int, list[tuple[Boundary, int]]] | None:
    """(budget, turn start, kept tokens) of the first turn start where a compaction can gain, the
    budget just high enough for it, and the points passed over only because the agent's cut keeps
    more than the tail there (each with what it keeps); None when there is none. A point compacts
    as the release's check counts it (`rules`)."""
    earlier = 0  # the least budget at which none of the turn starts passed over compacts
    held: list[tuple[Boundary, int]] = []
    for boundary in boundaries:
        count = counted(boundary, rules)
        if not boundary.after_compaction:
            kept = max(boundary.protected_tokens if protects else 0, keep)
            budget = max(target, earlier, kept + summary_room)
            if rules.fires(count, budget) and tail is not None:  # the agent's cut, only where it matters
                cut_keeps = tail(boundary, keep)
                if cut_keeps > kept:
                    kept = cut_keeps
                    budget = max(target, earlier, kept + summary_room)
                    if not rules.fires(count, budget):
                        held.append((boundary, cut_keeps))
            # the window itself, not only with its prompt, must be larger than what compaction keeps
            if rules.fires(count, budget) and boundary.tokens > kept + summary_room:
                return budget, boundary, kept, held
        earlier = max(earlier, count + (1 if rules.at_threshold else 0))
    return None
