"""The overflow recovery chain on real sessions: a sample of ../shared/data (every n-th
main session of each source, at most `PER_SOURCE`), each in the sweep's scenario (safeguard,
`replay` model, compacted once near 60 % of the session) with the agent's model given a window of
60 % of the session's largest request (its whole final window, by pi's estimate). Every chain keeps
its release's rules, none cuts a mutating result, no run errs; the counts per source (sessions
that met the window, turns recovered / given up) are printed (`pytest -s`)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.overflow_sweep import sweep, table, touched_mutating

pytestmark = pytest.mark.realdata

PER_SOURCE = 12


@pytest.fixture(scope="module")
def rows(swept_sessions) -> list[dict[str, Any]]:
    found = sweep(swept_sessions, per_source=PER_SOURCE)
    print("\n" + table(found))
    return found


def test_every_chain_keeps_its_rules_and_no_step_cuts_a_mutating_result(rows):
    assert rows and any(r["chains"] for r in rows)
    assert [r["session"] for r in rows if r.get("error")] == []
    assert [r["session"] for r in rows if "RECOVERY_CHAIN_WRONG" in r.get("codes", [])] == []
    assert touched_mutating(rows) == []
