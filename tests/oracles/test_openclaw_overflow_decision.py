"""OpenClaw 2026.9.6's run loop after an attempt that overflowed (`recoverEmbeddedRunOverflow`,
embedded-agent-BaH7wGBd.mjs, run under node) against replaylab's chain under its rules
(`compaction.recovery.run_with_recovery`): which overflow texts it surfaces at once, and which it
retries after a compaction in the attempt. Skips with the reason only when the oracle cannot run,
and never under CI=true."""

from __future__ import annotations

import pytest

from openclaw_probe import rules_answers
from replaylab.compaction.recovery import AttemptResult, run_with_recovery
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6

GROQ_413 = (
    "413 Request too large for model `openai/gpt-oss-120b` in organization `org_x` service tier `on_demand` on tokens "
    "per minute (TPM): Limit 8000, Requested 8098, please reduce your message size and try again."
)
ANTHROPIC = "prompt is too long: 213462 tokens > 200000 maximum"
COMPACTION_FAILED = "Summarization failed: prompt is too long: 250000 tokens > 200000 maximum"
#: (prompt error, compactions in the attempt): each answered without a compaction of the run loop's own
CASES = [(GROQ_413, 0), (GROQ_413, 1), (ANTHROPIC, 1), (COMPACTION_FAILED, 0), (COMPACTION_FAILED, 1)]


@pytest.fixture(scope="module")
def decisions() -> list[dict]:
    requests = [
        {"id": str(i), "fn": "overflowRecoveryDecision", "args": [text, count]} for i, (text, count) in enumerate(CASES)
    ]
    return [answer["ok"] for answer in rules_answers(requests).answers]


def _replaylab(text: str, in_attempt: int) -> dict:
    """replaylab's chain on the same attempt, its first decision in OpenClaw's terms."""
    attempts = iter([AttemptResult(prompt_error=text, in_attempt_compactions=in_attempt), AttemptResult(ok=True)])
    out = run_with_recovery(
        lambda _window: next(attempts),
        lambda *_: pytest.fail("the run loop compacts"),
        lambda *_: pytest.fail("the run loop truncates"),
        context_tokens=200_000,
        has_oversized_tool_results=lambda _result: False,
        rules=OPENCLAW_2026_9_6,
    )
    if out.ok:
        return {"action": "retry"}
    return {"action": "surface", "kind": out.error_kind, "errorText": out.error_message, "userText": out.user_text}


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_run_loop_decides_as_openclaw_2026_9_6(decisions: list[dict], index: int) -> None:
    assert _replaylab(*CASES[index]) == decisions[index]
