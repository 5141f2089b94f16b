"""`contextTokens: auto`: a budget for one recording, chosen from its own windows.

A fixed budget fits no real set of sessions: they differ in size by orders of magnitude, so one
number leaves most of them never compacted. The rule (also printed with every item's result):

1. The windows at the start of every user turn after the first (`qa.boundaries`, pi's chars/4
   estimate, what the trigger compares with the budget); the largest is the session's *peak*.
2. The budget (contextTokens − reserveTokensFloor) starts at `BUDGET_SHARE` of the peak, so
   compaction happens where the session is large.
3. reserveTokensFloor is `RESERVE_SHARE` of the peak (OpenClaw's proportion: a 20,000-token floor
   in a 200,000-token window) within `RESERVE_MIN`–`RESERVE_MAX`; the summary may use
   `SUMMARY_MAX_TOKENS_SHARE` of it. keepRecentTokens is `KEEP_SHARE` of the budget.
4. At the first turn start where the window passes that budget, compaction must be able to gain:
   the window must be larger than what the compacted one could hold — the kept tail (in safeguard
   at least its protected entries, which it restates verbatim) plus the largest summary. Where it
   is not, the budget is raised past that turn start and the next one is tried.
5. When no turn start can gain only because of what safeguard must keep, the budget stays at step
   2: compaction is attempted where the session is large, and its failure is the finding
   (`CANNOT_COMPACT`), with the numbers. When none could gain even keeping just the tail, the
   compaction is attempted all the same, and if it finds nothing to gain the session is too small
   to be worth compacting: not exercised, and the reason says so.

A suite's or the command line's own contextTokens switches the rule off; its own
reserveTokensFloor or keepRecentTokens replaces that part of the rule only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from replaylab.qa.boundaries import Boundary
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
from replaylab.upstream.pi_0_73_1 import SUMMARY_MAX_TOKENS_SHARE

#: compaction triggers once the window passes this share of its largest turn-start size
BUDGET_SHARE = 0.6
#: reserveTokensFloor as a share of the peak: OpenClaw's floor over its default window
RESERVE_SHARE = 0.1
RESERVE_MIN = 1_000
RESERVE_MAX = DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
#: keepRecentTokens as a share of the budget, never below `KEEP_MIN`
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
    #: no turn start can gain even keeping nothing but a minimal tail: the session is not worth compacting
    too_small: bool = False

    @property
    def budget(self) -> int:
        return self.context_tokens - self.reserve_tokens_floor


def choose_budget(
    boundaries: Sequence[Boundary],
    *,
    protects: bool,
    reserve_tokens_floor: int | None = None,
    keep_recent_tokens: int | None = None,
) -> AutoBudget | None:
    """The budget for a recording with these turn starts; None when it has no turn start to
    compact at (one user turn). `protects`: the mode keeps protected entries (safeguard)."""
    if not boundaries:
        return None
    peak = max(b.tokens for b in boundaries)
    reserve = (
        reserve_tokens_floor
        if reserve_tokens_floor is not None
        else min(RESERVE_MAX, max(RESERVE_MIN, round(RESERVE_SHARE * peak)))
    )
    target = max(1, math.floor(BUDGET_SHARE * peak))
    keep = keep_recent_tokens if keep_recent_tokens is not None else max(KEEP_MIN, math.floor(KEEP_SHARE * target))
    summary_room = max(1, math.floor(SUMMARY_MAX_TOKENS_SHARE * reserve))
    parts = [
        f"largest turn-start window {peak:,} tokens; budget {BUDGET_SHARE:.0%} of it = {target:,}",
        f"reserveTokensFloor {reserve:,}"
        + (
            " (set)"
            if reserve_tokens_floor is not None
            else f" ({RESERVE_SHARE:.0%} of it, {RESERVE_MIN:,}–{RESERVE_MAX:,})"
        ),
        f"keepRecentTokens {keep:,}"
        + (" (set)" if keep_recent_tokens is not None else f" ({KEEP_SHARE:.0%} of the budget)"),
    ]
    found = _first_gaining(boundaries, target, keep, summary_room, protects=protects)
    if found is not None:
        budget, boundary, kept = found
        if budget > target:
            what = "protected entries" if protects and boundary.protected_tokens > keep else "tail"
            parts.append(
                f"raised to {budget:,} so compaction at turn {boundary.turn + 1} can gain "
                f"(kept {what} {kept:,} + summary ≤ {summary_room:,})"
            )
        return AutoBudget(budget + reserve, reserve, keep, peak, boundary.turn, "; ".join(parts))
    if protects and _first_gaining(boundaries, target, keep, summary_room, protects=False) is not None:
        parts.append(
            "no turn start has a window larger than what safeguard must keep (its protected entries) plus "
            "the summary: compaction is attempted at the budget and cannot gain"
        )
        return AutoBudget(target + reserve, reserve, keep, peak, None, "; ".join(parts))
    parts.append(
        f"no turn start has a window larger than a {keep:,}-token tail plus the largest summary: it may be "
        "too small to be worth compacting"
    )
    return AutoBudget(target + reserve, reserve, keep, peak, None, "; ".join(parts), too_small=True)


def _first_gaining(
    boundaries: Sequence[Boundary], target: int, keep: int, summary_room: int, *, protects: bool
) -> tuple[int, Boundary, int] | None:
    """(budget, turn start, kept tokens) of the first turn start where a compaction can gain, the
    budget just high enough for it; None when there is none."""
    earlier = 0  # the largest window of the turn starts passed over: the budget must stay above it
    for boundary in boundaries:
        if not boundary.after_compaction:
            kept = max(boundary.protected_tokens if protects else 0, keep)
            budget = max(target, earlier, kept + summary_room)
            if boundary.tokens > budget:
                return budget, boundary, kept
        earlier = max(earlier, boundary.tokens)
    return None
