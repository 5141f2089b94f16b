"""The real-session sweep: every real session of ../shared/data (τ-bench 200, τ²-bench 240,
Claude Code main sessions and sub-agents, pi 4) through the full QA pipeline (`run_item`) in
safeguard mode with the `replay` model. Zero blocking defects, zero baseline drift, every
mutating entry kept byte-identical; the figures go to reports/realdata-sweep.json and the table
is printed (`pytest -s`). Every session runs (no sampling), in two worker processes."""

from __future__ import annotations

import json

import pytest

from replaylab.qa.sweep import (
    LOSS_ONLY,
    PROTECTED_OVER_BUDGET,
    SOURCES,
    format_table,
    import_shared_data,
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
BLOCKING = {
    "SIDE_EFFECT_ESCAPED",
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


@pytest.fixture(scope="module")
def sweep(shared_data, tmp_path_factory, repo_root):
    sessions = import_shared_data(shared_data, tmp_path_factory.mktemp("realdata"))
    report = run_sweep(sessions, jobs=2)
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


def test_safeguard_has_zero_blocking_defects_and_zero_drift(sweep):
    bad = [(r.session, r.codes) for r in sweep.rows if r.blocking or r.drift or r.outcome == "error"]
    assert not bad
    total = sweep.summary()["total"]
    assert total["blocking_defects"] == 0 and total["baseline_drift"] == 0


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
