"""Why an item was not exercised or could not compact: one cause per condition, with the knob.

A run over real sessions leaves many items uncompared for a handful of reasons. Each reason is a
`Cause`: a stable key, the same one-line summary for every item it applies to, and the setting
that changes it. Items carry theirs (`ItemResult.cause`, with the session's largest turn-start
window and its budget), so every report groups them by cause — one line per cause with the
count, the range of window sizes and the knob — instead of repeating a paragraph per item.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS


@dataclass(frozen=True)
class Cause:
    key: str
    #: what it says of every item it applies to (the item's own figures are in its reason)
    summary: str
    #: the setting that changes it, as a user would type it
    knob: str


ONE_USER_TURN = Cause(
    "one-user-turn",
    "one user turn: nothing before it to compact",
    "compact_at: auto compacts such a session within its run, before a reply after its tool results "
    "(none here, or compact_at names a turn)",
)
TOO_SMALL = Cause(
    "too-small",
    "too small to be worth compacting: its largest window is below what contextTokens: auto compacts",
    "--replaylab-context-tokens N with --replaylab-keep-recent-tokens K (a fixed budget below the session's "
    f"largest window, a kept tail smaller than it: pi's own is {PI_KEEP_RECENT_TOKENS:,} tokens) compacts it anyway, "
    "unless that window is no larger than a summary: then no budget gains anything",
)
SUMMARY_NOT_SMALLER = Cause(
    "summary-not-smaller",
    "too small to be worth compacting: a summary would not make its window smaller",
    "none: a smaller budget cannot make the summary smaller than the window it replaces (a longer recording can)",
)
NEVER_CROSSES_BUDGET = Cause(
    "never-crosses-budget",
    "never crosses the budget: its largest window stays below it, so the agent would never compact it",
    "--replaylab-context-tokens auto (a budget from each session's own size) or a number below its largest window",
)
PAST_LAST_TURN = Cause(
    "past-last-turn",
    "compact_at names a turn past the session's last",
    "compact_at: auto, or turn:N within the session",
)
AGENT_REFUSES = Cause(
    "agent-refuses",
    "the agent the item is judged under would not compact here (each item says why: its kept tail, "
    "keepRecentTokens, holds every message before the cut, or the history ends in a compaction or a reset)",
    "--replaylab-keep-recent-tokens N (a kept tail smaller than the window), compact_at another turn, or "
    "--replaylab-agent AGENT@VERSION to judge it under another agent's rules",
)
STARTS_AFRESH = Cause(
    "starts-afresh",
    "the agent's context starts afresh (a reset) before the next recorded turn is over: a compaction here "
    "reaches no turn",
    "compact_at: auto, or turn:N earlier in the same history",
)
MID_RUN = Cause(
    "mid-run",
    "the turn's input comes while the agent's run goes on (after its tool results, before its reply): "
    "neither pi nor OpenClaw checks for compaction there",
    "compact_at: auto, or turn:N at a turn that starts after the agent's reply",
)
COMPACTOR_UNAVAILABLE = Cause(
    "compactor-unavailable",
    "the compactor under test cannot run here",
    "install what the compactor needs, or --replaylab-compactor another one",
)
SAFEGUARD_KEEPS_TOO_MUCH = Cause(
    "safeguard-keeps-too-much",
    "safeguard must keep its protected entries verbatim, and with a summary they leave no compaction under the budget",
    "--replaylab-mode auto (compaction without protection), a larger --replaylab-context-tokens, or "
    "declare read-only tools that are classed mutating (classification:)",
)
NOTHING_TO_GAIN = Cause(
    "nothing-to-gain",
    "compaction is due and the compacted window would not be smaller at this budget",
    "--replaylab-context-tokens (a budget the session crosses by more) or --replaylab-keep-recent-tokens "
    "(a smaller kept tail)",
)
NO_BUDGET = Cause(
    "no-budget",
    "the reserve leaves no budget for the window",
    "--replaylab-reserve-tokens-floor (lower) or --replaylab-context-tokens (higher)",
)
OTHER = Cause("other", "another reason (see each item's reason)", "see each item's reason")

CAUSES: dict[str, Cause] = {
    cause.key: cause
    for cause in (
        ONE_USER_TURN,
        TOO_SMALL,
        SUMMARY_NOT_SMALLER,
        NEVER_CROSSES_BUDGET,
        PAST_LAST_TURN,
        AGENT_REFUSES,
        STARTS_AFRESH,
        MID_RUN,
        COMPACTOR_UNAVAILABLE,
        SAFEGUARD_KEEPS_TOO_MUCH,
        NOTHING_TO_GAIN,
        NO_BUDGET,
        OTHER,
    )
}


class ItemCause(BaseModel):
    """An item's cause as its result carries it: the cause, and the figures its group line ranges over."""

    key: str
    summary: str
    knob: str
    #: the session's largest turn-start window (the agent's estimate), where it was measured
    largest_window: int | None = None
    #: the budget the item ran with (contextTokens − reserveTokensFloor), where one was settled
    budget: int | None = None

    @classmethod
    def of(cls, cause: Cause, *, largest_window: int | None = None, budget: int | None = None) -> ItemCause:
        return cls(key=cause.key, summary=cause.summary, knob=cause.knob, largest_window=largest_window, budget=budget)
