"""`CANNOT_COMPACT`: compaction was due and cannot succeed at this budget.

Not the compactor's fault and not a skip: the agent in production would be past its budget with
no way back under it, which a QA engineer needs to see with the numbers, and the knobs that change
it. The first compaction failing this way gives the item its own outcome, `uncompacted`. A later
one is a warning: the run goes on over the window as it was (pi keeps going too) and is compared
in full, and under safeguard a session whose protected entries alone outgrow the budget cannot be
compacted again.

Its cause (`replaylab.causes`) is decided from the condition, never from which words the compactor
chose: what safeguard must keep, a reserve that leaves no budget, or nothing to gain — which, under
`contextTokens: auto`, means the session is too small to be worth compacting (not exercised).
"""

from __future__ import annotations

from typing import Any

from replaylab.causes import NO_BUDGET, NOTHING_TO_GAIN, SAFEGUARD_KEEPS_TOO_MUCH, SUMMARY_NOT_SMALLER, Cause
from replaylab.defects import Code, Defect
from replaylab.results import BudgetView
from replaylab.suite import Scenario
from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS

#: modes whose compaction keeps protected entries verbatim
PROTECTING_MODES = ("safeguard", "manual")

WHAT = {
    "protected_too_large": "what safeguard must keep verbatim (its protected entries) and the smallest summary "
    "exceed the budget",
    "nothing_to_gain": "the compacted window would not be smaller than the current one",
    "no_budget": "the reserve leaves no budget for the window",
}


def cannot_compact_cause(result: Any, mode: str, budget: BudgetView, protected_tokens: int) -> Cause:
    """Why a compaction that cannot succeed (`compactors.outcome.CANNOT_SUCCEED`) cannot: safeguard
    keeps too much when its protected entries are over the budget, or when they alone are more
    than the tail a compaction keeps anyway (so they are what leaves nothing to gain);
    `protected_tokens`: the tokens of the window's protected entries."""
    if result.failure == "no_budget":
        return NO_BUDGET
    keep = budget.keep_recent_tokens or PI_KEEP_RECENT_TOKENS
    if mode in PROTECTING_MODES and (result.failure == "protected_too_large" or protected_tokens > keep):
        return SAFEGUARD_KEEPS_TOO_MUCH
    return SUMMARY_NOT_SMALLER if budget.source == "auto" else NOTHING_TO_GAIN


def cannot_compact(
    result: Any,
    scenario: Scenario,
    budget: BudgetView,
    *,
    turn: int | None = None,
    protected_tokens: int = 0,
    later: int = 0,
    cause: Cause | None = None,
    where: str | None = None,
) -> Defect:
    """The finding for a `CompactResult` that failed for one of `compaction_outcome.CANNOT_SUCCEED`;
    `turn`: the number (1-based) of the turn the compaction came before (`where` says it instead
    of "before turn N", for a compaction within a run); `later`: how many later
    compactions failed so (this result is the first of them). The message names the budget's
    numbers, not its rule: the item's budget paragraph is printed once, with the item."""
    mode = result.mode or scenario.compaction.mode
    cause = cause or cannot_compact_cause(result, mode, budget, protected_tokens)
    if later:
        when = "at a later compaction" + (f" (and {later - 1} more attempts after it)" if later > 1 else "")
    else:
        when = where or (f"before turn {turn}" if turn is not None else "at the first compaction")
    reason = (result.error or "").removeprefix("compaction_failure: ")
    # what the protected entries and the smallest summary need, as the compaction counted them
    needed = result.needed_budget if result.needed_budget > budget.budget else None
    # with no keepRecentTokens the tail kept verbatim is pi's default, which a small budget cannot
    # hold: the tail is then the whole window, and a larger window only keeps more of it
    whole_tail = result.failure == "nothing_to_gain" and not budget.keep_recent_tokens
    reserve_name = "reserveTokensFloor" if budget.reserve_rule is None else "its reserve"
    knobs = [
        f"set keepRecentTokens below the budget ({budget.budget:,}): unset, it is pi's "
        f"{PI_KEEP_RECENT_TOKENS:,}, so the tail kept verbatim is the whole window"
        if whole_tail
        else None,
        None
        if whole_tail
        else f"raise contextTokens until the budget (contextTokens − {reserve_name}, now {budget.budget:,}) "
        f"passes {needed:,}"
        if needed
        else "raise contextTokens",
        # a reserve that follows the window has no setting to lower
        "lower reserveTokensFloor" if budget.reserve_tokens_floor and budget.reserve_rule is None else None,
        "compact earlier (compact_at: turn:N)" if mode == "safeguard" else None,
        "declare read-only tools that are classed mutating (classification:, docs/classification.md)"
        if cause is SAFEGUARD_KEEPS_TOO_MUCH
        else None,
        "compare without protection (--replaylab-mode auto)" if cause is SAFEGUARD_KEEPS_TOO_MUCH else None,
    ]
    message = (
        f"{mode} cannot compact {when}: {reason or WHAT.get(result.failure or '', str(result.failure))}. "
        f"{budget.head()}. Knobs: "
        + "; ".join(k for k in knobs if k)
        + " (suite compaction: keys, or --replaylab-context-tokens / --replaylab-reserve-tokens-floor / "
        "--replaylab-keep-recent-tokens)"
    )
    defect = Defect.of(
        Code.CANNOT_COMPACT,
        message,
        turn=turn,
        detail={
            "failure": result.failure,
            "tokens_before": result.tokens_before,
            "protected_tokens": protected_tokens,
            "protected_entries": len(result.protected_entry_ids or []),
            "context_tokens": budget.context_tokens,
            "reserve_tokens_floor": budget.reserve_tokens_floor,
            "keep_recent_tokens": budget.keep_recent_tokens,
            "budget_source": budget.source,
            "cause": cause.key,
        },
    )
    return defect.model_copy(update={"severity": "warning"}) if later else defect
