"""The items not exercised or that could not compact, grouped by cause: one line per cause with the
count, the range of the sessions' sizes and the knob, the same in every report."""

from __future__ import annotations

from replaylab.causes import NEVER_CROSSES_BUDGET, ONE_USER_TURN, SAFEGUARD_KEEPS_TOO_MUCH, TOO_SMALL, ItemCause
from replaylab.report.causes import cause_counts, cause_line
from replaylab.report.markdown import render_markdown
from replaylab.report.merge import compute_totals
from replaylab.results import ItemResult, RunMeta, RunReport


def _item(n: int, outcome: str, cause: ItemCause | None, reason: str = "") -> ItemResult:
    return ItemResult(
        id=f"s.yaml::r{n}::m", suite="s", scenario="m", recording=f"r{n}", outcome=outcome, reason=reason, cause=cause
    )


ITEMS = [
    _item(1, "skipped", ItemCause.of(TOO_SMALL, largest_window=115)),
    _item(2, "skipped", ItemCause.of(TOO_SMALL, largest_window=1_990)),
    _item(3, "skipped", ItemCause.of(TOO_SMALL, largest_window=640)),
    _item(4, "skipped", ItemCause.of(ONE_USER_TURN)),
    _item(5, "uncompacted", ItemCause.of(SAFEGUARD_KEEPS_TOO_MUCH, largest_window=9_000, budget=5_400)),
    _item(6, "skipped", ItemCause.of(NEVER_CROSSES_BUDGET, largest_window=3_000, budget=108_000)),
    # a report written before causes: grouped by the head of its reason
    _item(7, "skipped", None, "not exercised: one user turn: nothing before it to compact (an auto budget …)"),
    _item(8, "passed", None),
]


def test_items_are_grouped_by_cause_failures_first_then_the_most_frequent() -> None:
    groups = cause_counts(ITEMS)
    assert [(g.outcome, g.key, g.items) for g in groups] == [
        ("uncompacted", "safeguard-keeps-too-much", 1),
        ("skipped", "too-small", 3),
        ("skipped", "never-crosses-budget", 1),
        ("skipped", "one user turn", 1),
        ("skipped", "one-user-turn", 1),
    ]
    small = groups[1]
    assert (small.smallest_window, small.largest_window) == (115, 1_990)


def test_a_group_is_one_line_with_its_count_its_sizes_and_its_knob() -> None:
    small = cause_counts(ITEMS)[1]
    line = cause_line(small)
    assert line.startswith("not exercised 3: too small to be worth compacting")
    assert "(largest windows 115–1,990 tokens)" in line and line.endswith(f"; knob: {TOO_SMALL.knob}")
    failing = cause_line(cause_counts(ITEMS)[0])
    assert failing.startswith("cannot compact 1: safeguard must keep")
    assert "largest window 9,000 tokens; budget 5,400 tokens" in failing


def test_the_totals_and_the_markdown_carry_the_groups() -> None:
    totals = compute_totals(ITEMS)
    assert [g.key for g in totals.causes] == [g.key for g in cause_counts(ITEMS)]
    meta = RunMeta(replaylab_version="0", git_sha=None, model="replay", started_at="", python="3.11", argv=[])
    markdown = render_markdown(RunReport(meta=meta, items=ITEMS, totals=totals))
    assert "### Not exercised and cannot compact, by cause" in markdown
    assert markdown.count("not exercised 3: too small to be worth compacting") == 1


def test_the_verification_line_says_when_no_window_was_made_to_check() -> None:
    """With no item compacted there is no window to check: the line says so, and does not blame
    an oracle that is installed; with compacted items and none verified, it names the oracle."""
    from replaylab.report.agent_line import agent_verification_line
    from replaylab.results import Totals

    nothing = agent_verification_line(Totals(items=3, skipped=2, uncompacted=1))
    assert "no item compacted, so there was no window to check" in nothing and "oracle" not in nothing
    unchecked = agent_verification_line(Totals(items=2, passed=2))
    assert "their oracle is not installed, or the check is off" in unchecked
    checked = agent_verification_line(Totals(items=2, passed=2, verified_windows={"pi 0.73.1": 2}))
    assert checked.startswith("window verified against pi 0.73.1: 2 compacted windows")
