"""Every real session of ../shared/data under the defaults — what a suite that names only its
recordings runs: safeguard, `contextTokens: auto`, `compact_at: auto`, the replay model. Each
session with two user turns or more is compacted and compared, or compaction is a finding
(`CANNOT_COMPACT`), or the session is too small for a compaction to gain anything (said so); no
infrastructure error, no baseline drift; every blocking defect is a write whose replay lost a value
the agent learned, checked against the recording (mostly an opaque id). The figures go to reports/realdata-defaults.json
and the table is printed (`pytest -s`)."""

from __future__ import annotations

import pytest

from replaylab.qa.sweep import (
    NOTHING_TO_GAIN,
    PROTECTED_OVER_BUDGET,
    TOO_SMALL,
    format_table,
    run_sweep,
    write_report,
)
from replaylab.values import is_opaque_token

pytestmark = pytest.mark.realdata

#: the share of the sessions with two user turns or more that is compacted and compared
MIN_COMPACTED_SHARE = 0.8


@pytest.fixture(scope="module")
def defaults(swept_sessions, repo_root):
    report = run_sweep(swept_sessions, jobs=2, defaults=True)
    write_report(report, repo_root / "reports" / "realdata-defaults.json")
    print("\n" + format_table(report))
    return report


def test_every_session_with_two_user_turns_is_exercised_or_says_why_not(defaults):
    several = [r for r in defaults.rows if r.turns >= 2]
    assert len(several) >= 400
    compacted = [r for r in several if r.exercised]
    assert len(compacted) >= MIN_COMPACTED_SHARE * len(several), (len(compacted), len(several))
    for row in several:
        if row.exercised:
            assert row.outcome in ("passed", "failed"), (row.session, row.reason)
            assert "(auto)" not in row.budget_rule and "; auto)" in row.budget_rule, row.budget_rule
        elif row.outcome == "uncompacted":
            assert row.codes.get("CANNOT_COMPACT") and "Knobs:" in row.reason, row.reason
        else:
            assert row.outcome == "skipped" and row.reason.startswith(
                "not exercised: too small to be worth compacting"
            ), (
                row.session,
                row.reason,
            )
    kinds = set(defaults.summary()["total"]["skipped"])
    assert kinds <= {"fewer than 2 user turns", TOO_SMALL, NOTHING_TO_GAIN, PROTECTED_OVER_BUDGET}, kinds
    for source in ("tau-bench", "tau2-bench", "claude-code", "pi"):
        assert any(r.source == source and (r.exercised or r.outcome == "uncompacted") for r in several), source


def test_no_infrastructure_error_and_no_baseline_drift(defaults):
    assert not [(r.session, r.reason) for r in defaults.rows if r.outcome == "error" or r.drift]


def test_each_blocking_defect_is_a_write_that_lost_a_learned_value_checked_true(defaults):
    """Each blocked write names the values its replay lost, and each loss is checked against the
    recording: the values were in the span a compaction summarized and are absent from the window
    it left, or the write follows another call of the replay that diverged or was blocked. A plain
    number the agent computed itself is no learned value (`replay.agent.grounding`)."""
    blocked = [(r.session, values) for r in defaults.rows for values in r.lost_values]
    assert sum(r.blocking for r in defaults.rows) == len(blocked)
    for session, values in blocked:
        assert values, session
    for row in defaults.rows:
        assert row.unconfirmed_losses == [], (row.session, row.unconfirmed_losses)
        assert row.blocking == row.summary_losses + row.downstream_losses, (row.session, row.codes)
    # most of what the summaries lose are ids the agent cannot make up
    opaque = sum(any(is_opaque_token(v) for v in values) for _, values in blocked)
    assert opaque >= 0.8 * len(blocked), (opaque, len(blocked))


def test_a_session_of_one_run_is_compacted_within_it_or_says_why_not(defaults):
    """A session with no later turn start (one prompt, one run of tool calls) compacts within its
    run: before a reply after tool results whose window crosses the budget. Most such real
    sessions are exercised that way; the others are too small for a summary to gain."""
    single = [r for r in defaults.rows if r.turns == 1 and not r.child]
    exercised = [r for r in single if r.exercised]
    assert len(exercised) >= 20 and len(exercised) >= 0.5 * len(single), (len(exercised), len(single))
    for row in single:
        if row.exercised:
            assert row.outcome in ("passed", "failed") and not row.drift, (row.session, row.reason)
        else:
            assert row.outcome == "skipped" and "too small to be worth compacting" in row.reason, (
                row.session,
                row.reason,
            )
