"""What providers answer when a request does not fit their model's context window: real error
bodies, as the providers word them, with the stated sizes as placeholders.

Each text is one OpenClaw's own tests hold as a provider's answer (the source names the test file
and the commit read; the classifier corpus of tests/builders/openclaw_upstream_cases.py holds the
same texts with their recorded numbers); `{tokens}` is the request's size and `{limit}` the
window, both in tokens. A model with a context window (`replay.agent.context_limit`) answers a
request that does not fit with one of them, so the recovery chain meets the texts it must
recognize.
"""

from __future__ import annotations

from dataclasses import dataclass

OPENCLAW_OVERFLOW_CASES = "openclaw/openclaw src/agents/failover/failover-classification.overflow.cases.ts@96147410"
OPENCLAW_HELPERS_TESTS = "openclaw/openclaw src/agents/embedded-agent-helpers (errors) tests"
OPENCLAW_AI_OVERFLOW_TEST = "openclaw/openclaw packages/ai/src/utils/overflow.test.ts@26056ed5"


@dataclass(frozen=True)
class ProviderOverflowText:
    provider: str
    template: str
    source: str

    def text(self, tokens: int, limit: int) -> str:
        return self.template.format(tokens=tokens, limit=limit)


PROVIDER_OVERFLOW_TEXTS: dict[str, ProviderOverflowText] = {
    t.provider: t
    for t in (
        ProviderOverflowText(
            "anthropic",
            '400 {{"type":"error","error":{{"message":"prompt is too long: {tokens} tokens > {limit} maximum"}}}}',
            OPENCLAW_HELPERS_TESTS,
        ),
        ProviderOverflowText(
            "moonshot",
            "error, status code: 400, message: Invalid request: Your request exceeded model token limit: "
            "{limit} (requested: {tokens})",
            OPENCLAW_OVERFLOW_CASES,
        ),
        ProviderOverflowText(
            "llama.cpp",
            "400 request ({tokens} tokens) exceeds the available context size ({limit} tokens), try increasing it",
            OPENCLAW_OVERFLOW_CASES,
        ),
        ProviderOverflowText(
            "vllm",
            "Error: 400 Input length ({tokens}) exceeds model's maximum context length ({limit}).",
            OPENCLAW_AI_OVERFLOW_TEST,
        ),
        ProviderOverflowText(
            "llama-server",
            "400 Prompt has {tokens} tokens, but the configured context size is {limit} tokens",
            OPENCLAW_OVERFLOW_CASES,
        ),
    )
}

#: the provider a scenario's context window answers as when it names none
DEFAULT_PROVIDER = "anthropic"
