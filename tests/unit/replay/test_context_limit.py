"""A model with a context window (replaylab/replay/agent/context_limit.py): a request that fits is
the wrapped model's; one that does not is the provider's overflow error, or a silent overflow."""

from __future__ import annotations

import pytest

from replaylab.compaction.recovery import pi_is_context_overflow
from replaylab.replay.agent.context_limit import ContextLimitedModel, ProviderOverflowError
from replaylab.replay.loop import window_tokens
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import AssistantMessage, TextBlock, UserMessage
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6


class Echo:
    """A model that answers every request with one recorded-looking message (its own usage)."""

    max_steps_seen = 0

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, window, tools) -> AssistantMessage:
        self.calls += 1
        return AssistantMessage(
            content=[TextBlock(text="done")], stop_reason="stop", usage={"input": 99_999, "output": 3}
        )

    def max_steps(self, turn) -> int:
        return 7


def _window(chars: int) -> list[WindowMessage]:
    return [WindowMessage("u", UserMessage(content="x" * chars))]


def test_a_request_that_fits_is_the_wrapped_models_with_the_window_as_its_usage():
    inner = Echo()
    model = ContextLimitedModel(inner, tokens=1_000, estimate=window_tokens)
    message = model.complete(_window(400), [])
    assert message.text() == "done" and message.usage["input"] == 100 and message.usage["output"] == 3
    assert model.max_steps(None) == 7 and model.overflows == 0  # the rest is the wrapped model's
    assert not pi_is_context_overflow(message, 1_000, OPENCLAW_2026_9_6)


def test_a_recorded_usage_is_kept_for_a_real_model():
    message = ContextLimitedModel(Echo(), tokens=1_000, estimate=window_tokens, restate_usage=False).complete(
        _window(400), []
    )
    assert message.usage["input"] == 99_999


def test_a_request_over_the_window_is_the_providers_error_and_never_reaches_the_model():
    inner = Echo()
    model = ContextLimitedModel(inner, tokens=1_000, estimate=window_tokens, provider="llama.cpp")
    with pytest.raises(ProviderOverflowError) as error:
        model.complete(_window(8_000), [])
    assert str(error.value) == (
        "400 request (2000 tokens) exceeds the available context size (1000 tokens), try increasing it"
    )
    assert (error.value.tokens, error.value.limit, inner.calls, model.overflows) == (2_000, 1_000, 0, 1)


@pytest.mark.parametrize("rules", [OPENCLAW_2026_4_12, OPENCLAW_2026_9_6], ids=str)
def test_a_silent_overflow_answers_and_only_its_usage_says_so(rules):
    model = ContextLimitedModel(Echo(), tokens=1_000, estimate=window_tokens, overflow="usage")
    message = model.complete(_window(8_000), [])
    assert message.stop_reason == "stop" and message.usage["input"] == 2_000
    assert pi_is_context_overflow(message, 1_000, rules)
