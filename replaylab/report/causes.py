"""The items not exercised or that could not compact, grouped by cause: one line per cause with
the count, the range of the sessions' sizes and the knob, the same in every report."""

from __future__ import annotations

import re
from collections.abc import Iterable

from replaylab.causes import OTHER
from replaylab.results import CauseCount, ItemResult

#: how each grouped outcome reads at the start of its lines
GROUPED = {"skipped": "not exercised", "uncompacted": "cannot compact"}
_REASON_END = re.compile(r": | \(")
HEAD_CHARS = 60


def cause_counts(items: Iterable[ItemResult]) -> list[CauseCount]:
    """The not-exercised and cannot-compact items by cause, most frequent first (cannot compact,
    a failure, before not exercised). An item without a cause (a report written before causes)
    is grouped by the head of its reason."""
    groups: dict[tuple[str, str], CauseCount] = {}
    for item in items:
        outcome = item.outcome
        if outcome != "skipped" and outcome != "uncompacted":  # the outcomes in GROUPED
            continue
        cause = item.cause
        if cause is not None:
            key, summary, knob = cause.key, cause.summary, cause.knob
        else:
            key = summary = _reason_head(item.reason)
            knob = OTHER.knob
        group = groups.get((outcome, key))
        if group is None:
            group = groups[(outcome, key)] = CauseCount(outcome=outcome, key=key, summary=summary, knob=knob, items=0)
        group.items += 1
        if cause is not None:
            _widen(group, "window", cause.largest_window)
            _widen(group, "budget", cause.budget)
    return sorted(groups.values(), key=lambda g: (g.outcome != "uncompacted", -g.items, g.key))


def cause_line(group: CauseCount) -> str:
    """`not exercised 37: too small to be worth compacting … (largest windows 115–1,990 tokens);
    knob: …` — every report prints a group so."""
    figures = [
        _span("largest window", group.smallest_window, group.largest_window),
        _span("budget", group.smallest_budget, group.largest_budget),
    ]
    shown = "; ".join(f for f in figures if f)
    return (
        f"{GROUPED[group.outcome]} {group.items:,}: {group.summary}"
        + (f" ({shown})" if shown else "")
        + f"; knob: {group.knob}"
    )


def _widen(group: CauseCount, what: str, value: int | None) -> None:
    if value is None:
        return
    low, high = f"smallest_{what}", f"largest_{what}"
    if getattr(group, low) is None or value < getattr(group, low):
        setattr(group, low, value)
    if getattr(group, high) is None or value > getattr(group, high):
        setattr(group, high, value)


def _span(what: str, low: int | None, high: int | None) -> str:
    if low is None or high is None:
        return ""
    if low == high:
        return f"{what} {low:,} tokens"
    return f"{what}s {low:,}–{high:,} tokens"


def _reason_head(reason: str) -> str:
    """The words of a reason before its details (`one user turn`, `too small to compact`, …)."""
    text = reason.removeprefix("not exercised: ").strip() or "no reason given"
    head = _REASON_END.split(text, maxsplit=1)[0].strip() or text
    return head if len(head) <= HEAD_CHARS else head[: HEAD_CHARS - 1] + "…"
