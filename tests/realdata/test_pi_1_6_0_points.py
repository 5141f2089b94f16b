"""Every real session of ../shared/data judged by pi 1.6.0's rules: the defaults (safeguard,
`contextTokens: auto`, `compact_at: auto`, the replay model) with `agent: pi@1.6.0`, every compacted
window checked against pi 1.6.0's own rebuild of the working copy (`verify_with_pi: on`).

pi 1.6.0 checks for compaction before each reply of a run, after the agent's tool results
(`AgentProfile.compacts_before_replies`), so most of these sessions compact within a run, and
their compacted runs compact again there. None of that may cost a window pi 1.6.0 would not build,
an error, a drift of the baseline, or a finding that is not a loss."""

from __future__ import annotations

import pytest

from replaylab.qa.sweep import run_sweep

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def judged(swept_sessions, agent_oracles):
    agent_oracles("pi@1.6.0")  # skipped (failed under CI=true) with the install command when missing
    return run_sweep(swept_sessions, jobs=2, defaults=True, agent="pi@1.6.0")


def test_most_real_sessions_compact_within_a_run_where_pi_1_6_0_checks(judged):
    exercised = [r for r in judged.rows if r.exercised]
    within = [r for r in exercised if r.within_run]
    assert len(exercised) >= 400 and len(within) >= 0.4 * len(exercised), (len(within), len(exercised))
    for row in within:
        assert row.within_run.startswith(("compacted within turn ", "compacted within its run")), row.within_run
    # a session compacted at a turn start is one whose first crossing is a turn start
    assert any(r.exercised and not r.within_run for r in judged.rows)


def test_every_compacted_window_is_pi_1_6_0s_own_rebuild(judged):
    """The first compaction and every later one, within a run or at a turn start: each window the
    replay went on with is the context pi 1.6.0 builds from the working copy there."""
    exercised = [r for r in judged.rows if r.exercised]
    assert sum(r.compactions for r in exercised) > len(exercised)  # later compactions were checked too
    for row in exercised:
        assert row.verified_windows == row.compactions, (row.session, row.verified_windows, row.compactions)
        assert not row.codes.get("AGENT_CONTEXT_DIFFERS"), row.session


def test_no_error_no_drift_and_each_blocking_defect_is_a_confirmed_loss(judged):
    assert not [(r.session, r.reason) for r in judged.rows if r.outcome == "error" or r.drift]
    for row in judged.rows:
        assert row.unconfirmed_losses == [], (row.session, row.unconfirmed_losses)
        assert row.blocking == row.summary_losses + row.downstream_losses, (row.session, row.codes)
