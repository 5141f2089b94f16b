"""The sweep's blocking findings that are not safeguard's to prevent: a value a later write
needs, lost by a summary of the replay (confirmed on the span it summarized and the window it
left), or never read because an earlier call diverged."""

from __future__ import annotations

from typing import Any

#: the blocking findings a summary causes by losing a value a later write needs
SUMMARY_LOSS_CODES = frozenset({"SIDE_EFFECT_ESCAPED", "IDENTIFIER_LOST"})


def confirmed_loss(values: list[str], compactions: list[tuple[str, str]]) -> bool:
    """A compaction of the replay (the first, or a later one) had every lost value in the span it
    summarized and left a window (summary included) without any of them: a summary really lost
    them. No value named, or no compaction: not confirmed."""
    return bool(values) and any(
        all(v in summarized and v not in window for v in values) for summarized, window in compactions
    )


def after_a_divergence(defect: Any, findings: list[Any], position: int) -> bool:
    """Another call of the replay diverged or was blocked before this one — at an earlier turn, or
    at the same turn listed before it (findings of one code are in call order): what that call
    would have read, the replay never got."""
    turn = defect.where.turn
    return turn is not None and any(
        d.code.value in ("TOOL_SEQUENCE_DIVERGED", "SIDE_EFFECT_ESCAPED")
        and d.where.turn is not None
        and (d.where.turn < turn or (d.where.turn == turn and index < position))
        and d.where.tool_call_id != defect.where.tool_call_id
        for index, d in enumerate(findings)
    )


def lost_values(defect: Any, legend: dict[str, str]) -> list[str]:
    """The recorded values behind the `⟨lost:N⟩` markers of a blocked call's arguments, read from
    the item's legend (marker → value)."""
    from replaylab.replay.agent.grounding import MARKER_RE
    from replaylab.replay.agent.grounding_text import iter_leaves

    actual = defect.actual.get("arguments") if isinstance(defect.actual, dict) else None
    if not isinstance(actual, dict):
        return []
    markers = [m for _, value in iter_leaves(actual) if isinstance(value, str) for m in MARKER_RE.findall(value)]
    return [legend[m] for m in dict.fromkeys(markers) if m in legend]
