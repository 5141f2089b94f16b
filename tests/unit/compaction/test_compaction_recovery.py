"""Overflow detection and the recovery chain, branch by branch, against a fake provider that fails
with the real error messages providers send (quoted in pi's overflow.ts and OpenClaw's tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from replaylab.compaction.recovery import (
    AttemptResult,
    StepOutcome,
    create_compaction_diag_id,
    extract_observed_overflow_token_count,
    is_compaction_failure_error,
    is_context_overflow_error,
    is_likely_context_overflow_error,
    pi_is_context_overflow,
    run_with_recovery,
    select_compaction_timeout_snapshot,
    take_pre_compaction_snapshot,
)
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.openclaw_2026_4_12 import OVERFLOW_USER_TEXT, PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE

ANTHROPIC = "prompt is too long: 213462 tokens > 200000 maximum"
OPENROUTER = (
    "This endpoint's maximum context length is 128000 tokens. However, you requested about 140123 tokens "
    "(130000 of text input, 10123 in the output). Please reduce the length of either one."
)
BEDROCK = "ValidationException: Input is too long for requested model."
GEMINI = "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."
OPENAI = "Your input exceeds the context window of this model. Please adjust your input and try again."
XAI = "This model's maximum prompt length is 131072 but the request contains 537812 tokens."
GROQ_TPM = "413 Request too large for model `llama3` on tokens per minute (TPM): Limit 6000, Requested 9000"
RATE = "429 Too Many Requests: rate limit exceeded, retry in 20s"
BILLING = "402 Payment Required: insufficient credits to complete this request"
SMALL = "Model context window too small (4096 tokens). Minimum is 16000."
COMPACTION_FAILED = "Summarization failed: prompt is too long: 250000 tokens > 200000 maximum"


@pytest.mark.parametrize(
    "text",
    [
        ANTHROPIC,
        OPENROUTER,
        PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE,
        "Ollama error: context length exceeded, too many tokens",
        "上下文过长",
        "request_too_large",
        "Request size exceeds model context window",
    ],
)
def test_openclaw_recognizes_overflow(text):
    assert is_context_overflow_error(text) and is_likely_context_overflow_error(text)


def test_hint_only_overflow_is_likely_but_not_exact():
    text = "the context window limit was hit by this conversation"
    assert not is_context_overflow_error(text) and is_likely_context_overflow_error(text)


@pytest.mark.parametrize("text", [GROQ_TPM, RATE, BILLING, SMALL, "internal server error", ""])
def test_openclaw_exclusions(text):
    assert not is_likely_context_overflow_error(text)


def test_openai_wording_is_caught_by_pi_but_not_by_openclaws_run_loop():
    """A real gap, kept faithful: OpenAI's 'exceeds the context window' is in pi's patterns but
    matches none of OpenClaw's run-loop patterns, so only pi's in-attempt recovery sees it."""
    assert not is_likely_context_overflow_error(OPENAI)
    message = MESSAGE_ADAPTER.validate_python(
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": OPENAI}
    )
    assert pi_is_context_overflow(message)


@pytest.mark.parametrize(
    ("error", "stop", "usage", "window", "expected"),
    [
        (ANTHROPIC, "error", None, None, True),
        (BEDROCK, "error", None, None, True),
        (GEMINI, "error", None, None, True),
        (XAI, "error", None, None, True),
        ("413 status code (no body)", "error", None, None, True),  # Cerebras
        ("Throttling error: too many tokens, please wait", "error", None, None, False),  # 0.66.1 exclusion
        ("prompt is too long", "stop", None, None, False),  # only errored messages
        (None, "stop", {"input": 150_000, "cacheRead": 60_000, "output": 10}, 200_000, True),  # silent overflow
        (None, "stop", {"input": 150_000, "cacheRead": 40_000, "output": 10}, 200_000, False),
    ],
)
def test_pi_is_context_overflow(error, stop, usage, window, expected):
    data = {"role": "assistant", "content": [], "stopReason": stop}
    if error:
        data["errorMessage"] = error
    if usage:
        data["usage"] = usage
    assert pi_is_context_overflow(MESSAGE_ADAPTER.validate_python(data), window) is expected


def test_compaction_failure_and_observed_tokens():
    assert is_compaction_failure_error(COMPACTION_FAILED)
    assert is_compaction_failure_error("auto-compaction failed: context overflow")
    assert not is_compaction_failure_error(ANTHROPIC)
    assert extract_observed_overflow_token_count(ANTHROPIC) == 213_462
    assert extract_observed_overflow_token_count("you requested 140,123 tokens") == 140_123
    assert extract_observed_overflow_token_count("nothing here") is None


def test_diag_id_format():
    assert create_compaction_diag_id(1_700_000_000_000, "ab12") == "cmp-loyw3v28-ab12"
    assert re.fullmatch(r"cmp-[0-9a-z]+-[0-9a-z]{4}", create_compaction_diag_id())


# ---------------------------------------------------------------- the chain


@dataclass
class FakeProvider:
    """Answers attempts from a script: each item is an AttemptResult; the window is recorded."""

    script: list[AttemptResult]
    windows: list = field(default_factory=list)

    def __call__(self, window):
        self.windows.append(window)
        return self.script.pop(0)


@dataclass
class Spy:
    """A compact_fn / truncate_fn that records calls and answers from a script."""

    answers: list
    calls: list = field(default_factory=list)

    def __call__(self, *args):
        self.calls.append(args)
        return self.answers.pop(0)


def overflow(text=ANTHROPIC, **kw):
    return AttemptResult(prompt_error=text, **kw)


OK = AttemptResult(ok=True, output="answer")


def test_overflow_compacts_then_retries_with_the_new_window():
    provider = FakeProvider([overflow(), OK])
    compact = Spy([StepOutcome(True, window="compacted")])
    out = run_with_recovery(
        provider, compact, Spy([]), context_tokens=200_000, window="full", diag_id_factory=lambda: "cmp-x-0001"
    )
    assert out.ok and out.result.output == "answer"
    assert provider.windows == ["full", "compacted"]
    trigger, info = compact.calls[0]
    assert trigger == "overflow" and info["observed_tokens"] == 213_462 and info["source"] == "promptError"
    assert out.overflow_compaction_attempts == 1 and [s.kind for s in out.steps] == [
        "attempt",
        "overflow_compaction",
        "attempt",
    ]


def test_in_attempt_compaction_retries_without_compacting_again():
    provider = FakeProvider([overflow(in_attempt_compactions=1), OK])
    compact = Spy([])
    out = run_with_recovery(provider, compact, Spy([]), context_tokens=200_000)
    assert out.ok and compact.calls == [] and out.overflow_compaction_attempts == 1
    assert out.steps[1].kind == "retry_after_in_attempt_compaction"


def test_three_compactions_then_truncation_once_then_context_overflow():
    big = [MESSAGE_ADAPTER.validate_python({"role": "toolResult", "toolCallId": "c", "content": "z" * 70_000})]
    provider = FakeProvider([overflow(messages=big) for _ in range(5)])
    compact = Spy([True, True, True])
    truncate = Spy([StepOutcome(True)])
    out = run_with_recovery(provider, compact, truncate, context_tokens=200_000, diag_id_factory=lambda: "cmp-a-0000")
    assert not out.ok and out.error_kind == "context_overflow" and out.user_text == OVERFLOW_USER_TEXT
    assert len(compact.calls) == 3 and len(truncate.calls) == 1 and out.attempts == 5
    assert out.tool_result_truncation_attempted and out.diag_id == "cmp-a-0000"
    assert [s.kind for s in out.steps if s.kind != "attempt"] == ["overflow_compaction"] * 3 + [
        "truncate_tool_results",
        "give_up",
    ]


def test_failed_compaction_falls_through_to_truncation_and_gives_up_without_oversized_results():
    provider = FakeProvider([overflow(messages=[]), overflow(messages=[])])
    compact = Spy([StepOutcome(False, reason="nothing to compact"), StepOutcome(False, reason="nothing to compact")])
    truncate = Spy([])
    out = run_with_recovery(provider, compact, truncate, context_tokens=200_000)
    assert out.error_kind == "context_overflow" and truncate.calls == [] and out.attempts == 1
    assert [s.kind for s in out.steps] == ["attempt", "compaction_failed", "give_up"]


def test_compaction_failure_error_gives_up_at_once_as_compaction_failure():
    compact = Spy([])
    out = run_with_recovery(FakeProvider([overflow(COMPACTION_FAILED)]), compact, Spy([]), context_tokens=200_000)
    assert out.error_kind == "compaction_failure" and compact.calls == [] and out.user_text == OVERFLOW_USER_TEXT


def test_assistant_error_is_inspected_only_without_prompt_error():
    out = run_with_recovery(
        FakeProvider([AttemptResult(assistant_error=OPENROUTER), OK]), Spy([True]), Spy([]), context_tokens=200_000
    )
    assert out.ok and out.steps[1].kind == "overflow_compaction"
    out = run_with_recovery(
        FakeProvider([AttemptResult(prompt_error="socket hang up", assistant_error=ANTHROPIC)]),
        Spy([]),
        Spy([]),
        context_tokens=200_000,
    )
    assert out.error_kind == "other"  # a non-overflow prompt error hides older assistant errors


def test_aborted_attempt_is_never_an_overflow():
    out = run_with_recovery(FakeProvider([overflow(aborted=True)]), Spy([]), Spy([]), context_tokens=200_000)
    assert out.error_kind == "other" and out.overflow_compaction_attempts == 0


def test_timeout_with_high_prompt_share_compacts_at_most_twice():
    timeouts = [AttemptResult(timed_out=True, prompt_tokens=150_000) for _ in range(3)]
    compact = Spy([True, True])
    out = run_with_recovery(FakeProvider(timeouts), compact, Spy([]), context_tokens=200_000)
    assert [c[0] for c in compact.calls] == ["timeout_recovery", "timeout_recovery"]
    assert out.timeout_compaction_attempts == 2 and out.error_kind == "other" and out.attempts == 3


def test_timeout_with_low_prompt_share_or_during_compaction_does_not_compact():
    for result in (
        AttemptResult(timed_out=True, prompt_tokens=100_000),
        AttemptResult(timed_out=True, timed_out_during_compaction=True, prompt_tokens=190_000),
    ):
        compact = Spy([])
        run_with_recovery(FakeProvider([result]), compact, Spy([]), context_tokens=200_000)
        assert compact.calls == []


def test_compact_result_objects_are_understood():
    from replaylab.compaction.params import CompactResult

    compact = Spy([CompactResult(success=False, error="compaction_failure: too big", failure="protected_too_large")])
    out = run_with_recovery(FakeProvider([overflow(messages=[])]), compact, Spy([]), context_tokens=200_000)
    assert out.steps[1].kind == "compaction_failed" and "too big" in out.steps[1].detail
    assert out.steps[1].failure == "protected_too_large"  # the typed kind, not read from the text


def test_snapshot_choice_on_timeout():
    snapshot = take_pre_compaction_snapshot(False, ["m1", "m2"], False)
    assert snapshot == ["m1", "m2"] and take_pre_compaction_snapshot(True, ["m1"], False) is None
    choice = select_compaction_timeout_snapshot(
        timed_out_during_compaction=True,
        pre_compaction_snapshot=snapshot,
        pre_compaction_session_id="s1",
        current_messages=["m3"],
        current_session_id="s2",
    )
    assert (choice.messages, choice.session_id, choice.source) == (["m1", "m2"], "s1", "pre-compaction")
    choice = select_compaction_timeout_snapshot(
        timed_out_during_compaction=True,
        pre_compaction_snapshot=None,
        pre_compaction_session_id=None,
        current_messages=["m3"],
        current_session_id="s2",
    )
    assert choice.source == "current" and choice.messages == ["m3"]
    choice = select_compaction_timeout_snapshot(
        timed_out_during_compaction=False,
        pre_compaction_snapshot=snapshot,
        pre_compaction_session_id="s1",
        current_messages=["m3"],
        current_session_id="s2",
    )
    assert choice.source == "current"


def test_2026_9_6_surfaces_a_request_size_ceiling_without_compacting_or_truncating():
    """OpenClaw 2026.9.6's `recoverEmbeddedRunOverflow` reads a TPM limit the request alone
    exceeds as an overflow, and surfaces it at once: no compaction, no truncation, even after an
    in-attempt compaction; another overflow text still compacts."""
    from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6

    big = [MESSAGE_ADAPTER.validate_python({"role": "toolResult", "toolCallId": "c", "content": "z" * 70_000})]
    for attempt in (overflow(GROQ_TPM, messages=big), overflow(GROQ_TPM, in_attempt_compactions=1)):
        compact, truncate = Spy([True]), Spy([StepOutcome(True)])
        out = run_with_recovery(
            FakeProvider([attempt, OK]), compact, truncate, context_tokens=200_000, rules=OPENCLAW_2026_9_6
        )
        assert not out.ok and out.attempts == 1 and compact.calls == [] and truncate.calls == []
        assert out.error_kind == "context_overflow" and out.error_message == GROQ_TPM
        assert out.user_text == OPENCLAW_2026_9_6.give_up.overflow_user_text
        assert [s.kind for s in out.steps] == ["attempt", "give_up"]
    compact = Spy([True])
    out = run_with_recovery(
        FakeProvider([overflow(), OK]), compact, Spy([]), context_tokens=200_000, rules=OPENCLAW_2026_9_6
    )
    assert out.ok and len(compact.calls) == 1
