"""`python -m bench.safeguard_savings`: safeguard against auto on the same cuts, as it measures them.

One bundled session through the bench's own measure (both modes, the later compactions, every
safeguard working copy checked by the real pi), and the table and the exceptions it derives."""

from __future__ import annotations

import pytest

from bench.safeguard_savings import BUNDLED_PACK, Compaction, Row, decomposition, exceptions, measure, summary
from repo_paths import REPO_ROOT

LONG = REPO_ROOT / "recordings" / "helpdesk" / "long-account-review.jsonl"


@pytest.fixture(scope="module")
def long_row() -> Row:
    return measure("bundled helpdesk", LONG, BUNDLED_PACK, check_pi=True)


def test_both_modes_compact_the_same_cut_and_safeguard_costs_its_protected_entries(long_row: Row) -> None:
    auto, safe = long_row.first["auto"], long_row.first["safeguard"]
    assert long_row.due and auto.success and safe.success and auto.before == safe.before
    assert safe.protected > 0 and safe.protected_tokens > 0  # the writes it restates
    assert safe.saved == auto.saved - safe.protected_tokens - (safe.summary_tokens - auto.summary_tokens)
    assert decomposition([long_row]) == (1, 1, 0)


def test_later_compactions_succeed_and_every_pinned_agent_rebuilds_every_copy_as_promised(
    long_row: Row, pi, agent_oracles
) -> None:
    agents = ("openclaw@2026.9.6", "pi@1.6.0")
    for name in agents:
        agent_oracles(name)  # skips (fails under CI=true) when the agent is not installed
    later = long_row.later["safeguard"]
    assert later and all(c.success for c in later)
    checks = {"context", "missing", "order", "pairs", "ledger"} | {
        f"{name} {what}" for name in agents for what in ("missing", "order", "pairs")
    }
    for compaction in [long_row.first["safeguard"], *later]:
        assert compaction.pi == dict.fromkeys(checks, 0)


def test_the_table_counts_and_the_exceptions_name_what_fell_short() -> None:
    def row(name: str, auto: Compaction, safe: Compaction) -> Row:
        return Row("set", name, due=True, budget=600, first={"auto": auto, "safeguard": safe}, later={})

    rows = [
        row(
            "fine",
            Compaction(True, 1_000, 400, summary_tokens=200),
            Compaction(True, 1_000, 500, summary_tokens=200, protected_tokens=100),
        ),
        row("refused", Compaction(True, 1_000, 400), Compaction(False, 1_000, 1_000, failure="protected_too_large")),
        row("short", Compaction(True, 1_000, 100), Compaction(True, 1_000, 700, summary_tokens=500)),
    ]
    (line, total) = summary(rows)
    assert (line["due"], line["auto compacted"], line["safeguard where auto"]) == (3, 3, "2 (67%)")
    assert line["target met"] == "1/2" and total["dataset"] == "all"
    named = exceptions(rows)
    assert len(named) == 2 and "refused: safeguard protected_too_large (window 1,000" in named[0]
    assert "short: window 1,000: saved 300, auto 900" in named[1]
