"""Safeguard against auto on the same cuts, over every bundled recording, the generated
write-early sessions and every real session of ../shared/data (`python -m bench.safeguard_savings`):
safeguard compacts wherever auto compacts with a gain but for a few sessions, each named with its
numbers; it saves what auto saves minus the protected entries it restates; and every safeguard
working copy, at the first and every later compaction, is rebuilt by each pinned agent (pi 0.73.1,
pi 1.6.0, OpenClaw 2026.9.6) with no protected entry missing, out of order or unpaired; every auto
working copy is pi 0.73.1's context of it."""

from __future__ import annotations

import re

import pytest

from bench.safeguard_savings import collect, exceptions, readings

pytestmark = pytest.mark.realdata

#: the issue's floor: safeguard compacts at least this share of the sessions auto compacts with a gain
COMPACTS_WHERE_AUTO = 0.95
#: a refusal is named with its numbers: protected entries + smallest summary against the budget
NAMED_REFUSAL = re.compile(
    r": safeguard (protected_too_large \(window [\d,]+, budget [\d,]+; its \d+ protected entries [\d,]+ \+ smallest "
    r"summary [\d,]+|nothing_to_gain \(window [\d,]+, budget [\d,]+;)"
)


@pytest.fixture(scope="module")
def rows(shared_data, pi, agent_oracles):
    for name in ("openclaw@2026.9.6", "pi@1.6.0"):
        agent_oracles(name)
    measured, _ = collect(shared_data, jobs=2, check_pi=True)
    return measured


def test_safeguard_compacts_wherever_auto_gains_but_named_refusals(rows):
    gained = [r for r in rows if r.due and r.first["auto"].success]
    compacted = [r for r in gained if r.first["safeguard"].success]
    assert len(gained) > 500  # every source was read
    assert len(compacted) >= COMPACTS_WHERE_AUTO * len(gained), (len(compacted), len(gained))
    refused = [line for line in exceptions(rows) if ": safeguard " in line]
    assert len(refused) == len(gained) - len(compacted)
    assert all(NAMED_REFUSAL.search(line) for line in refused), refused


def test_safeguard_saves_what_auto_saves_minus_what_it_restates(rows):
    read = readings(rows)
    assert read.aggregate >= 0.9, read
    assert read.large_strict >= COMPACTS_WHERE_AUTO * read.large, read


def test_every_safeguard_copy_is_rebuilt_by_every_pinned_agent_with_its_protected_entries(rows):
    copies = [c for r in rows if r.due for c in [r.first["safeguard"], *r.later.get("safeguard", [])] if c.success]
    checked = [c for c in copies if c.pi]
    assert len(checked) == len(copies) > 1_000
    problems = {
        f"{r.session}: {key}"
        for r in rows
        if r.due
        for c in [r.first["safeguard"], *r.later.get("safeguard", [])]
        for key, n in c.pi.items()
        if n
    }
    assert not problems
    agents = {key.split(" ")[0] for c in checked for key in c.pi if " " in key}
    assert agents == {"openclaw@2026.9.6", "pi@1.6.0"}


def test_every_auto_copy_is_pis_context(rows):
    """An auto working copy protects nothing: pi 0.73.1's context of it is its `compactedWindow`,
    message by message, at the first and every later compaction."""
    copies = [c for r in rows if r.due for c in [r.first["auto"], *r.later.get("auto", [])] if c.success]
    assert len(copies) > 1_000 and all(c.pi.keys() == {"context"} for c in copies)
    assert [c for c in copies if c.pi["context"]] == []


def test_later_compactions_of_the_long_sessions_succeed(rows):
    """The long sessions (real pi / OpenClaw fixtures, the bundled helpdesk) compact again and again
    as they go on; a later refusal elsewhere is a window with nothing to gain or protected entries
    over the budget, never another cause."""
    for row in rows:
        if row.dataset in ("openclaw-fixtures (pi)", "bundled helpdesk") and row.due:
            assert all(c.success for c in row.later.get("safeguard", [])), row.session
    failures = {c.failure for r in rows for c in r.later.get("safeguard", []) if not c.success}
    assert failures <= {"nothing_to_gain", "protected_too_large", "nothing_to_compact"}, failures
