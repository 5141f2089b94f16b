"""The words every report uses for its counts, so the terminal, HTML, markdown and `replaylab
report` say the same thing with the same numbers (`RunReport.totals` is the only source)."""

from __future__ import annotations

from collections.abc import Sequence

from replaylab.results import ItemResult, Totals


def items_phrase(items: Sequence[ItemResult]) -> str:
    """`65 items (13 recordings × 5 scenarios)`: an item is one recording under one scenario, so
    calling 65 of them "sessions" overstates what was recorded."""
    recordings = len({item.recording for item in items})
    scenarios = len({(item.suite, item.scenario) for item in items})
    head = f"{len(items):,} item{'s' if len(items) != 1 else ''}"
    if not items:
        return head
    shape = " ×" if recordings * scenarios == len(items) else ","
    return (
        f"{head} ({recordings:,} recording{'s' if recordings != 1 else ''}{shape} "
        f"{scenarios:,} scenario{'s' if scenarios != 1 else ''})"
    )


def expected_phrase(totals: Totals) -> str:
    """The negative controls' expected findings, counted apart ("" when there are none)."""
    n = totals.expected_defects
    if not n:
        return ""
    return f"{n:,} expected finding{'s' if n != 1 else ''} of negative controls"


def unexpected_phrase(totals: Totals) -> str:
    """The unexpected findings that fail items: blocking defects, and regressions when any."""
    regressions = (
        f", {totals.regression_defects} unexpected regression{'s' if totals.regression_defects != 1 else ''}"
        if totals.regression_defects
        else ""
    )
    return f"{totals.blocking_defects} unexpected blocking defects{regressions}"


def terminal_summary(totals: Totals) -> str:
    """The run's one-line summary in the terminal (after pytest's own)."""
    t = totals
    return (
        f"replaylab: {t.items} items: {t.passed} passed, {t.failed} failed, {t.error} error, "
        f"{t.uncompacted} cannot compact, {t.skipped} not exercised; "
        f"{unexpected_phrase(t)}" + (f"; {expected_phrase(t)} (as their suites expect)" if t.expected_defects else "")
    )
