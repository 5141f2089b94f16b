"""The real-session sweep: every real session of ../shared/data (τ-bench 200, τ²-bench 240,
Claude Code main sessions and sub-agents, pi 4) through the full QA pipeline (`run_item`) in
safeguard mode with the `replay` model. Safeguard's own guarantee holds: zero protection defects,
zero baseline drift, zero errors, every mutating entry kept byte-identical; every other blocking
finding is a value the summary lost that a later write needs, each checked true and counted; the figures go to reports/realdata-sweep.json and the table
is printed (`pytest -s`). Every session runs (no sampling), in two worker processes."""

from __future__ import annotations

import json

import pytest

from replaylab.qa.sweep import (
    LOSS_ONLY,
    PROTECTED_OVER_BUDGET,
    SOURCES,
    format_table,
    run_sweep,
    write_report,
)

pytestmark = pytest.mark.realdata

EXPECTED_SESSIONS = {"tau-bench": 200, "tau2-bench": 240, "claude-code": 15, "pi": 4}  # claude-code: 9 + 6 sub-agents
SKIP_KINDS = {
    "fewer than 2 user turns",
    "nothing to gain (summary + protected entries + tail ≥ the window)",
    LOSS_ONLY,
    PROTECTED_OVER_BUDGET,
}
#: what safeguard guarantees never to cause: a dropped, changed, unpaired or repeated side effect,
#: a wrong replay flag or ledger, altered thinking, a mislabelled tool, a rewritten recording
PROTECTION = {
    "MUTATION_DROPPED",
    "MUTATION_ALTERED",
    "PAIR_BROKEN",
    "DUPLICATE_SIDE_EFFECT",
    "REPLAY_FLAG_WRONG",
    "MUTATED_IDS_WRONG",
    "THINKING_ALTERED",
    "MISLABELLED_TOOL",
    "TRANSCRIPT_REWRITTEN",
}
#: a summary that lost a value of a summarized read which a later write needs (blocking: the write
#: cannot be reproduced), never a protected entry lost
SUMMARY_LOSS = {"SIDE_EFFECT_ESCAPED", "IDENTIFIER_LOST"}
BLOCKING = PROTECTION | SUMMARY_LOSS


@pytest.fixture(scope="module")
def sweep(swept_sessions, repo_root):
    report = run_sweep(swept_sessions, jobs=2)
    write_report(report, repo_root / "reports" / "realdata-sweep.json")
    print("\n" + format_table(report))
    return report


def test_every_real_session_is_swept(sweep):
    by_source = {s: sum(r.source == s for r in sweep.rows) for s in SOURCES}
    assert by_source == EXPECTED_SESSIONS
    assert sum(r.child for r in sweep.rows) == 6
    summary = sweep.summary()
    assert summary["sampled"] == "no: every session"
    exercised = [r for r in sweep.rows if r.exercised]
    assert len(exercised) >= 250, "the per-session scenario must compact most sessions"
    for source in SOURCES:
        assert summary["sessions"][source]["exercised"] >= 1, source
    # what was not exercised says why, and only for the two reasons the scenario allows
    for row in sweep.rows:
        if not row.exercised:
            assert row.outcome in ("skipped", "uncompacted") and row.reason, row.session
            assert set(summary["total"]["skipped"]) <= SKIP_KINDS, summary["total"]["skipped"]


def test_safeguard_has_zero_protection_defects_zero_drift_and_zero_errors(sweep):
    bad = [(r.session, r.codes) for r in sweep.rows if set(r.codes) & PROTECTION or r.drift or r.outcome == "error"]
    assert not bad
    total = sweep.summary()["total"]
    assert total["baseline_drift"] == 0 and "error" not in total["outcomes"]


def test_every_other_blocking_defect_is_a_summary_loss_checked_true_and_counted(sweep):
    """The blocking findings safeguard's guarantee does not cover: a value a later write needs, lost
    by a summary. Each names the values its replay lost, and each is checked: every value is in the
    span one of the replay's compactions summarized and absent from the window it left — or, a
    downstream loss, it follows another call that diverged or was blocked before it (what that call
    returned the replay never read), in a session where the summary's loss is itself shown."""
    for row in sweep.rows:
        assert row.unconfirmed_losses == [], (row.session, row.unconfirmed_losses)
        assert row.blocking == row.summary_losses + row.downstream_losses, (row.session, row.codes, row.lost_values)
        assert all(values for values in row.lost_values), (row.session, row.lost_values)
        if row.downstream_losses:
            assert row.summary_losses or row.codes.get("IDENTIFIER_LOST"), (row.session, row.codes)
    total = sweep.summary()["total"]
    assert total["blocking_defects"] == total["summary_losses"] + total["downstream_losses"]
    assert total["unconfirmed_losses"] == 0
    # the summary loses little: a handful of sessions of hundreds, none of τ-bench / τ²-bench
    assert sum(bool(r.blocking) for r in sweep.rows) <= 5
    assert not [r.session for r in sweep.rows if r.blocking and r.source.startswith("tau")]


def test_mutating_events_are_conserved_byte_identical(sweep):
    exercised = [r for r in sweep.rows if r.exercised]
    assert all(r.mutating_kept_verbatim == r.mutating_entries for r in exercised)
    assert sum(r.mutating_entries for r in exercised) > 1000
    assert all(r.tokens_after < r.tokens_before for r in exercised)


def test_tighter_budgets_that_lost_a_write_are_reported(sweep):
    """A session replayed at a roomier budget keeps what the tighter one lost, in the report."""
    for row in sweep.rows:
        for attempt in row.tighter:
            assert attempt["budget_share"] < row.budget_share and attempt["first"]
            assert set(attempt["codes"]) & (BLOCKING | {"BASELINE_DRIFT"}), attempt


def test_report_file_holds_the_figures(sweep, repo_root):
    data = json.loads((repo_root / "reports" / "realdata-sweep.json").read_text(encoding="utf-8"))
    total = data["summary"]["total"]
    assert total["sessions"] == sum(EXPECTED_SESSIONS.values()) == len(data["rows"])
    assert set(total["token_saving"]) == {"min", "median", "p90", "max"}
    assert (
        0
        < total["token_saving"]["min"]
        <= total["token_saving"]["median"]
        <= total["token_saving"]["p90"]
        <= total["token_saving"]["max"]
        < 1
    )
    assert 0 < total["identifiers_visible"] <= total["identifiers"]
    assert total["entries"] == sum(r["entries"] for r in data["rows"]) > 20_000
