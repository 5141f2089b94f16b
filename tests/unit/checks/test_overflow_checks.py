"""Findings of the overflow recovery chain (replaylab/checks/overflow.py), from chain traces: the
chain replaylab runs keeps its release's rules, and a chain that does not — compacting four times,
compacting twice in one attempt, truncating first or twice, giving up without the steps or with
another text — is caught as RECOVERY_CHAIN_WRONG; a mutating result cut under safeguard is
MUTATION_ALTERED; every give-up is OVERFLOW_GAVE_UP."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from replaylab.checks.overflow import chain_violations, overflow_findings
from replaylab.defects import Code
from replaylab.replay.trace import RecoveryStepTrace, RecoveryTrace, RunTrace, ToolCallTrace, TurnTrace
from replaylab.suite.schema import CompactionSettings
from replaylab.upstream import openclaw_2026_9_6 as OC96
from replaylab.upstream.pi_0_73_1 import PI_OVERFLOW_RECOVERY_FAILED_TEXT
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6

ERROR = '400 {"type":"error","error":{"message":"prompt is too long: 3300 tokens > 3000 maximum"}}'


def _steps(*kinds: str) -> list[RecoveryStepTrace]:
    details = {"overflow": ERROR, "give_up": "context_overflow", "in_attempt_compaction": "compacted"}
    return [RecoveryStepTrace(kind=k, step=1, detail=details.get(k, "")) for k in kinds]


def _chain(*kinds: str, rules=OPENCLAW_2026_9_6, gave_up: bool | None = None, text: str | None = None, **extra):
    gave = kinds[-1] == "give_up" if gave_up is None else gave_up
    return RecoveryTrace(
        turn=2,
        context_window=3_000,
        rules=rules.name,
        steps=_steps(*kinds),
        gave_up="context_overflow" if gave else None,
        user_text=(rules.give_up.overflow_user_text if text is None else text) if gave else None,
        diag_id="cmp-x-0000",
        **extra,
    )


def _turn(mutating: bool) -> TurnTrace:
    call = ToolCallTrace(turn=2, step=0, tool_call_id="c1", tool="issue_refund", mutating=mutating)
    return TurnTrace(turn=2, tool_calls=[call])


def _problems(chain, rules=OPENCLAW_2026_9_6, mutating: bool = False) -> list[str]:
    found = chain_violations(chain, rules, _turn(mutating))
    assert all(d.code == Code.RECOVERY_CHAIN_WRONG and d.severity == "regression" for d in found)
    return [d.message.split(": ", 2)[-1] for d in found]


@pytest.mark.parametrize(
    "kinds",
    [
        ("overflow", "overflow_compaction"),
        ("guard", "overflow", "overflow_compaction", "overflow", "overflow_compaction"),
        ("in_attempt_compaction", "overflow", "retry_after_in_attempt_compaction"),
        ("overflow", "compaction_failed", "truncate_tool_results"),
        (
            *("overflow", "overflow_compaction") * 3,
            *("overflow", "truncation_failed", "give_up"),
        ),
    ],
)
def test_chains_that_keep_the_rules_have_no_findings(kinds):
    # a compaction in the attempt is pi's, for a silent overflow: 2026.4.12's (2026.9.6 keeps the reply)
    rules = OPENCLAW_2026_4_12 if "in_attempt_compaction" in kinds else OPENCLAW_2026_9_6
    assert _problems(_chain(*kinds, rules=rules), rules) == []


def test_four_compactions_are_more_than_the_release_allows():
    chain = _chain(*("overflow", "overflow_compaction") * 4)
    assert _problems(chain) == ["4 overflow compaction attempts, openclaw@2026.9.6 allows 3"]


def test_a_second_compaction_after_an_in_attempt_one_is_caught():
    chain = _chain("in_attempt_compaction", "overflow", "overflow_compaction", rules=OPENCLAW_2026_4_12)
    assert _problems(chain, OPENCLAW_2026_4_12) == [
        "compacted again in an attempt that had already compacted (in-attempt)"
    ]
    # an in-attempt compaction that did not happen leaves the compaction to the run loop
    chain.steps[0].detail = "nothing to compact"
    assert _problems(chain, OPENCLAW_2026_4_12) == []


def test_a_compaction_in_the_attempt_for_a_finished_reply_is_caught_under_2026_9_6():
    """2026.9.6 keeps a `stop` reply whose usage exceeds the window (`RuntimeRules.silent_overflow`):
    a chain that compacts in the attempt for it, as pi does, broke its rules, tried or not."""
    for detail in ("compacted", "nothing to compact"):
        chain = _chain("in_attempt_compaction", "overflow", "retry_after_in_attempt_compaction")
        chain.steps[0].detail = detail
        assert _problems(chain) == [
            "compacted and asked again for a finished reply over the window, which openclaw@2026.9.6 keeps"
        ]


def test_truncation_first_or_twice_is_caught():
    assert _problems(_chain("overflow", "truncate_tool_results")) == [
        "tool results truncated before compaction was tried"
    ]
    twice = _chain("overflow", "compaction_failed", "truncate_tool_results", "overflow", "truncation_failed")
    assert _problems(twice) == ["tool results truncated 2 times in one run, at most once"]


def test_a_compaction_failure_error_truncates_without_compacting():
    chain = _chain("overflow", "truncate_tool_results")
    chain.steps[0].detail = "Summarization failed: prompt is too long: 250000 tokens > 200000 maximum"
    assert _problems(chain) == []


def test_giving_up_without_the_required_steps_or_with_another_text_is_caught():
    assert _problems(_chain("overflow", "give_up")) == ["gave up on an overflow without trying compaction"]
    oversized = _chain("overflow", "compaction_failed", "give_up", oversized_results=True)
    assert _problems(oversized) == ["gave up with oversized tool results it never tried to truncate"]
    plain = _chain("overflow", "compaction_failed", "give_up", text="Something went wrong.")
    assert _problems(plain) == [
        f"gave up saying 'Something went wrong.', openclaw@2026.9.6 says {OC96.OVERFLOW_USER_TEXT!r}"
    ]


@pytest.mark.parametrize(
    ("rules", "caution"), [(OPENCLAW_2026_4_12, ""), (OPENCLAW_2026_9_6, OC96.SIDE_EFFECT_CAUTION)]
)
def test_the_side_effect_caution_is_2026_9_6s_and_only_when_a_mutating_call_ran(rules, caution):
    kinds = ("overflow", "compaction_failed", "give_up")
    with_caution = _chain(*kinds, rules=rules, text=rules.give_up.overflow_user_text + caution)
    assert _problems(with_caution, rules, mutating=True) == []
    if caution:
        assert len(_problems(with_caution, rules, mutating=False)) == 1
        assert len(_problems(_chain(*kinds, rules=rules), rules, mutating=True)) == 1


def test_pi_s_failed_retry_text_is_an_overflow_not_a_compaction_failure():
    chain = _chain("in_attempt_compaction", "overflow", "retry_after_in_attempt_compaction", rules=OPENCLAW_2026_4_12)
    chain.steps[1].detail = PI_OVERFLOW_RECOVERY_FAILED_TEXT
    assert _problems(chain, OPENCLAW_2026_4_12) == []


def _item(chain: RecoveryTrace, mode: str = "safeguard", allow: bool = False):
    compaction = CompactionSettings(mode=mode, allowMutatingEventTruncate=allow)
    compacted = RunTrace(label="compacted", turns=[_turn(True)], recovery=[chain])
    return SimpleNamespace(scenario=SimpleNamespace(compaction=compaction), compacted=compacted)


def test_a_mutating_result_cut_by_a_recovery_step_is_blocking_under_safeguard_only():
    chain = _chain("guard", "overflow", "overflow_compaction", gave_up=False)
    chain.steps[0].entry_ids = chain.steps[0].mutating_entry_ids = ["compacted:e5:r1"]
    [found] = overflow_findings(_item(chain))
    assert found.code == Code.MUTATION_ALTERED and found.blocking and found.where.entry_id == "compacted:e5:r1"
    assert overflow_findings(_item(chain, allow=True)) == []
    assert overflow_findings(_item(chain, mode="aggressive")) == []


def test_every_give_up_is_reported_with_its_kind_text_and_diag_id():
    chain = _chain(
        *("overflow", "overflow_compaction") * 3,
        "overflow",
        "truncation_failed",
        "give_up",
        text=OC96.OVERFLOW_USER_TEXT + OC96.SIDE_EFFECT_CAUTION,
    )
    [found] = overflow_findings(_item(chain))
    assert found.code == Code.OVERFLOW_GAVE_UP and found.where.turn == 2 and "cmp-x-0000" in found.message
    assert found.detail["user_text"].endswith(OC96.SIDE_EFFECT_CAUTION)


def test_an_error_the_release_does_not_take_for_an_overflow_is_reported_not_judged():
    chain = _chain("overflow", gave_up=True)
    chain.gave_up, chain.user_text = (
        "other",
        "400 Prompt has 3300 tokens, but the configured context size is 3000 tokens",
    )
    assert _problems(chain, OPENCLAW_2026_4_12) == []
    [found] = overflow_findings(_item(chain, mode="aggressive"))
    assert found.code == Code.OVERFLOW_GAVE_UP and "does not take the provider's answer" in found.message


@pytest.mark.parametrize(("tokens_after", "caught"), [(3_300, False), (900, True)])
def test_a_timeout_during_compaction_is_reported_and_a_mid_compaction_snapshot_is_caught(tokens_after, caught):
    """The turn that timed out during a compaction is OVERFLOW_GAVE_UP (kind timeout, no give-up
    text judged); the run must go on from the window before the compaction: a 'pre-compaction'
    snapshot of another size was read mid-compaction."""
    chain = _chain("in_attempt_compaction", "compaction_timeout", gave_up=False, rules=OPENCLAW_2026_4_12)
    chain.steps[1].detail, chain.steps[1].tokens_before, chain.steps[1].tokens_after = (
        "pre-compaction",
        3_300,
        tokens_after,
    )
    chain.gave_up, chain.user_text = "timeout", "timed out"
    problems = _problems(chain, OPENCLAW_2026_4_12)
    assert problems == (
        [
            "after a timeout during compaction the run went on from a snapshot taken mid-compaction (900 tokens; "
            "the window before the compaction held 3,300)"
        ]
        if caught
        else []
    )
    gave_up = [d for d in overflow_findings(_item(chain)) if d.code == Code.OVERFLOW_GAVE_UP]
    assert [d.actual for d in gave_up] == ["timeout"]
    assert "timed out during a compaction" in gave_up[0].message and "pre-compaction snapshot" in gave_up[0].message
