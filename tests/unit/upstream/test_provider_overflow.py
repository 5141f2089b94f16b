"""The providers' overflow texts a model with a context window answers with: each one is what the
agent's own classifiers (both OpenClaw releases, and pi) take for a context overflow, with the
size it states."""

from __future__ import annotations

from replaylab.compaction.recovery import (
    extract_observed_overflow_token_count,
    is_compaction_failure_error,
    is_likely_context_overflow_error,
    pi_is_context_overflow,
)
from replaylab.transcript.model import AssistantMessage
from replaylab.upstream.provider_overflow import PROVIDER_OVERFLOW_TEXTS
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6

#: provider → (OpenClaw's isLikelyContextOverflowError, pi's / @openclaw/ai's isContextOverflow on
#: an errored reply) under (2026.4.12, 2026.9.6): the later releases learned texts the earlier missed
RECOGNIZED = {
    "anthropic": ((True, True), (True, True)),
    "moonshot": ((True, True), (True, True)),
    "llama.cpp": ((True, True), (True, True)),
    "vllm": ((True, True), (False, True)),
    "llama-server": ((False, True), (False, True)),
}


def test_every_provider_text_is_an_overflow_to_2026_9_6_and_some_were_not_to_2026_4_12():
    assert set(RECOGNIZED) == set(PROVIDER_OVERFLOW_TEXTS)
    for provider, (openclaw, pi) in RECOGNIZED.items():
        text = PROVIDER_OVERFLOW_TEXTS[provider].text(tokens=12_345, limit=8_000)
        assert "12345" in text and "8000" in text
        errored = AssistantMessage(content=[], stop_reason="error", error_message=text)
        rules = (OPENCLAW_2026_4_12, OPENCLAW_2026_9_6)
        assert tuple(is_likely_context_overflow_error(text, r) for r in rules) == openclaw, provider
        assert tuple(pi_is_context_overflow(errored, 8_000, r) for r in rules) == pi, provider
        assert not any(is_compaction_failure_error(text, r) for r in rules)


def test_the_stated_size_is_read_back_where_the_release_reads_one():
    anthropic = PROVIDER_OVERFLOW_TEXTS["anthropic"].text(tokens=12_345, limit=8_000)
    moonshot = PROVIDER_OVERFLOW_TEXTS["moonshot"].text(tokens=12_345, limit=8_000)
    assert extract_observed_overflow_token_count(anthropic, OPENCLAW_2026_4_12) == 12_345
    assert extract_observed_overflow_token_count(anthropic, OPENCLAW_2026_9_6) == 12_345
    assert extract_observed_overflow_token_count(moonshot, OPENCLAW_2026_4_12) is None
    assert extract_observed_overflow_token_count(moonshot, OPENCLAW_2026_9_6) == 12_345
