"""The bundled overflow suites (suites/overflow*.yaml) item by item: each negative control of the
recovery chain is caught with its own code, from the step that broke the rules, and the release's
chains give up with their release's kind and text (2026.9.6 with its side-effect caution after a
write, 2026.4.12 without) or recover and pass.

Items run through `run_item`, as the plugin runs them; the suites' own `expect:` decides the
verdict, so a control whose code is no longer found fails here as it fails the main command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.results import ItemResult
from replaylab.suite import load_suite
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6
from repo_paths import REPO_ROOT

SUITES = REPO_ROOT / "suites"


def _item(suite: str, recording: str, scenario: str) -> ItemResult:
    loaded = load_suite(SUITES / suite)
    (chosen,) = [s for s in loaded.scenarios if s.name == scenario]
    (path,) = [p for p in loaded.recordings if p.name == f"{recording}.jsonl"]
    return run_item(chosen, Path(path), RunOptions())


def _messages(result: ItemResult, code: Code) -> list[str]:
    return [d.message for d in result.defects if d.code == code]


def _passed(result: ItemResult) -> None:
    """The item's verdict under its suite's expectations: every expected code found."""
    assert result.outcome == "passed", (result.outcome, result.missing_expected, [d.code for d in result.defects])
    assert not result.missing_expected


#: (suite, recording, scenario, code, what its message says)
CONTROLS = [
    pytest.param(
        "overflow-controls-refund.yaml",
        "refund-long-reason",
        "cut-refund",
        Code.MUTATION_ALTERED,
        "cut the result of a mutating event",
        id="cut-refund",
    ),
    pytest.param(
        "overflow-controls-refund.yaml",
        "refund-long-reason",
        "double-compact",
        Code.RECOVERY_CHAIN_WRONG,
        "compacted again in an attempt that had already compacted (in-attempt)",
        id="double-compact",
    ),
    pytest.param(
        "overflow-controls-compactions.yaml",
        "policy-tour-long-turn",
        "four-compactions",
        Code.RECOVERY_CHAIN_WRONG,
        "4 overflow compaction attempts, openclaw@2026.9.6 allows 3",
        id="four-compactions",
    ),
    pytest.param(
        "overflow-controls.yaml",
        "threshold-exact-budget",
        "no-truncation",
        Code.RECOVERY_CHAIN_WRONG,
        "gave up with oversized tool results it never tried to truncate",
        id="no-truncation",
    ),
]


@pytest.mark.parametrize(("suite", "recording", "scenario", "code", "says"), CONTROLS)
def test_each_negative_control_is_caught_with_its_code(suite, recording, scenario, code, says):
    result = _item(suite, recording, scenario)
    _passed(result)
    assert any(says in m for m in _messages(result, code)), _messages(result, code)


def test_the_refunds_result_is_cut_by_the_guard_and_by_the_truncation_only_under_the_fault():
    """The refund's result (issue_refund, a mutating event) is what the faulty chain cuts, in both
    of its cutting steps; the release's chain at the same window leaves every mutating result whole."""
    faulty = _item("overflow-controls-refund.yaml", "refund-long-reason", "cut-refund")
    steps = {d.detail["recovery_step"] for d in faulty.defects if d.code == Code.MUTATION_ALTERED}
    assert steps == {"guard", "truncate_tool_results"}
    (refund,) = [c.tool_call_id for t in faulty.baseline.turns for c in t.tool_calls if c.tool == "issue_refund"]
    cut = {d.where.entry_id for d in faulty.defects if d.code == Code.MUTATION_ALTERED}
    assert any(str(e).endswith(f":{refund}") for e in cut), cut
    release = _item("overflow-controls-refund.yaml", "refund-long-reason", "release")
    _passed(release)
    assert not _messages(release, Code.MUTATION_ALTERED)
    assert all(not s.mutating_entry_ids for chain in release.compacted.recovery for s in chain.steps)


def test_the_release_compacts_three_times_in_one_turn_then_gives_up():
    """The seed's consecutive compactions: 2026.9.6 compacts three times in the long turn (each one
    through the compactor under test, each freeing room), then gives up without truncating: its
    gate finds no result over the per-result cap, nor the results together over the aggregate
    budget (four caps, more than this whole window)."""
    result = _item("overflow-controls-compactions.yaml", "policy-tour-long-turn", "release")
    _passed(result)
    (chain,) = [c for c in result.compacted.recovery if c.overflow_compactions == 3]
    compactions = [s for s in chain.steps if s.kind == "overflow_compaction"]
    assert len(compactions) == 3 and all(s.tokens_after < s.tokens_before for s in compactions)
    assert chain.gave_up == "context_overflow" and not chain.truncated and not chain.oversized_results
    assert not _messages(result, Code.RECOVERY_CHAIN_WRONG)


@pytest.mark.parametrize(
    ("suite", "recording", "scenario", "rules", "caution"),
    [
        # 2026.9.6: the turn that gives up ran the refund, so the text carries the caution
        ("overflow-controls-refund.yaml", "refund-long-reason", "release", OPENCLAW_2026_9_6, True),
        # 2026.9.6: no write ran in the turn
        ("overflow-controls.yaml", "threshold-exact-budget", "gives-up", OPENCLAW_2026_9_6, False),
        # 2026.4.12 (pi 0.73.1's sessions): its own text, and that release has no caution
        ("overflow-controls.yaml", "threshold-exact-budget", "gives-up-pi", OPENCLAW_2026_4_12, False),
    ],
    ids=["openclaw-2026.9.6-after-a-write", "openclaw-2026.9.6", "pi-0.73.1"],
)
def test_give_up_kind_and_text_per_profile(suite, recording, scenario, rules, caution):
    result = _item(suite, recording, scenario)
    _passed(result)
    gave_up = [c for c in result.compacted.recovery if c.gave_up is not None]
    assert gave_up and {c.rules for c in gave_up} == {rules.name}
    assert {c.gave_up for c in gave_up} == {"context_overflow"}
    turns = {t.turn: t for t in result.compacted.turns}
    first = gave_up[0]
    wrote = any(call.mutating for call in turns[first.turn].tool_calls)
    assert wrote is caution
    text = rules.give_up.overflow_user_text + (rules.give_up.side_effect_caution if caution else "")
    assert first.user_text == text and first.diag_id
    assert any(text in m and first.diag_id in m for m in _messages(result, Code.OVERFLOW_GAVE_UP))
    assert not _messages(result, Code.RECOVERY_CHAIN_WRONG)


def test_an_overflow_that_fits_after_one_compaction_passes_with_nothing_found():
    result = _item("overflow-controls-refund.yaml", "refund-long-reason", "recovers")
    _passed(result)
    assert not result.defects
    assert [c.overflow_compactions for c in result.compacted.recovery if c.overflow_compactions] == [1]


@pytest.mark.parametrize("scenario", ["gives-up-pi", "no-truncation"])
def test_pi_0_73_1_refuses_an_overflow_compaction_right_after_its_compaction(scenario):
    """pi 0.73.1's items meet pi 0.73.1's own guard (`prepareCompaction`: nothing for a compaction
    leaf): an overflow compaction right after one, with nothing new but the entries safeguard
    restated, is refused (before, it was forced past the guard and found nothing to gain), and the
    chain truncates or gives up as it would. A compaction with something new since stays pi's to try."""
    result = _item("overflow-controls.yaml", "threshold-exact-budget", scenario)
    _passed(result)
    failed = [s for c in result.compacted.recovery for s in c.steps if s.kind == "compaction_failed"]
    assert failed, [s.kind for c in result.compacted.recovery for s in c.steps]
    says = "nothing to compact: pi@0.73.1 would not compact here: the leaf already is a compaction"
    assert any(s.detail.startswith(says) for s in failed), [s.detail for s in failed]
    assert not any("double compaction refused" in s.detail for s in failed)  # the guard's own words: not pi's
    assert not _messages(result, Code.COMPACTION_FAILED)
