"""OpenClaw's runtime rules as one frozen value per release, looked up by the name a profile gives."""

from __future__ import annotations

import dataclasses

import pytest

from replaylab.upstream import openclaw_2026_4_12 as OC412
from replaylab.upstream.profiles import profiles
from replaylab.upstream.runtime_rules import (
    OPENCLAW_2026_4_12,
    OPENCLAW_2026_9_6,
    RUNTIME_RULES,
    UnknownRuntimeRules,
    runtime_rules_named,
)


def test_each_release_is_found_by_its_name_and_every_profile_names_one() -> None:
    assert runtime_rules_named("openclaw@2026.4.12") is OPENCLAW_2026_4_12
    assert runtime_rules_named("openclaw@2026.9.6") is OPENCLAW_2026_9_6
    assert all(profile.runtime_rules in RUNTIME_RULES for profile in profiles().values())
    with pytest.raises(UnknownRuntimeRules, match=r"'openclaw@2026\.9\.7'; expected one of: openclaw@2026\.4\.12, "):
        runtime_rules_named("openclaw@2026.9.7")


def test_a_rule_set_is_a_value_no_caller_can_change() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        OPENCLAW_2026_9_6.truncation.min_keep_chars = 0  # type: ignore[misc]


def test_the_2026_4_12_set_is_replaylabs_behaviour_before_the_sets_were_named() -> None:
    rules = OPENCLAW_2026_4_12
    assert rules.truncation.notice.format(n=5) == "[... 5 more characters truncated]"
    assert rules.truncation.write_cap_by_context == ((0, OC412.DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS),)
    assert not rules.truncation.fits_max_chars and rules.truncation.cuts_string_content
    assert rules.guard.preemptive_overflow_ratio == OC412.PREEMPTIVE_OVERFLOW_RATIO
    assert rules.guard.old_result_placeholder == OC412.PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER
    assert rules.give_up.overflow_user_text == OC412.OVERFLOW_USER_TEXT and rules.give_up.side_effect_caution == ""
    assert not rules.quality_guard.cancels_on_failure


def test_the_2026_9_6_set_differs_where_openclaw_changed() -> None:
    rules = OPENCLAW_2026_9_6
    assert (
        rules.truncation.notice.format(n=5) == "[... 5 more characters truncated; rerun with narrower args if needed]"
    )
    assert rules.truncation.fits_max_chars and not rules.truncation.cuts_string_content
    assert rules.guard.preemptive_overflow_ratio is None and rules.guard.old_result_placeholder is None
    assert rules.quality_guard.cancels_on_failure
    assert rules.quality_guard.cancel_reason == "Compaction safeguard finalized summary failed quality checks."
    assert rules.give_up.side_effect_caution.startswith(" Completed tool actions were not replayed")
