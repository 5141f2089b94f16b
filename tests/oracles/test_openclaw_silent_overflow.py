"""What OpenClaw 2026.9.6 does with a finished reply (`stop`) whose usage exceeds the window, run
under node (`finishedReplyOverflow`: `AgentSessionCompaction.prototype.checkCompaction`,
resource-loader-v8341X6T.mjs, then `recoverEmbeddedRunOverflow`, embedded-agent-BaH7wGBd.mjs, as the
run loop asks it), against replaylab's chain under its rules (`replay.overflow.retries_silent_overflow`):
the reply stands, never dropped for a compact-and-retry, and the run loop reads no overflow in it;
an `error` overflow is the run loop's to recover. Skips with the reason only when the oracle cannot
run, and never under CI=true."""

from __future__ import annotations

import pytest

from openclaw_probe import rules_answers
from replaylab.compaction.recovery import pi_is_context_overflow
from replaylab.replay.overflow import retries_silent_overflow
from replaylab.transcript.model import AssistantMessage
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6

WINDOW = 1_000
TOO_LONG = "prompt is too long: 1200 tokens > 1000 maximum"


def _reply(stop_reason: str, tokens: int, error: str | None = None, output: int = 5) -> dict:
    usage = {"input": tokens, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + output}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Noted."}], "api": "replay"}
    reply |= {"provider": "replaylab", "model": "oracle", "stopReason": stop_reason, "usage": usage, "timestamp": 1}
    return reply | ({"errorMessage": error} if error else {})


#: (case, reply, the session's options): an attempt with a budget (the caller owns overflow
#: recovery, as every replayed attempt has one), default mode (the session's auto-compaction on)
#: or safeguard (off: `applyAgentAutoCompactionGuard`)
CASES = [
    ("stop-over-window", _reply("stop", 1_200), {"owner": "caller"}),
    ("stop-over-window-safeguard", _reply("stop", 1_200), {"owner": "caller", "autoCompaction": False}),
    ("stop-over-window-session-owner", _reply("stop", 1_200), {"owner": "session"}),
    ("stop-within-window", _reply("stop", 500), {"owner": "caller"}),
    ("error-overflow", _reply("error", 0, TOO_LONG), {"owner": "caller"}),
    ("length-overflow", _reply("length", 1_000, output=0), {"owner": "caller"}),
]


@pytest.fixture(scope="module")
def answers() -> dict[str, dict]:
    requests = [
        {"id": case, "fn": "finishedReplyOverflow", "args": [reply, WINDOW, opts]} for case, reply, opts in CASES
    ]
    return {row["id"]: row["ok"] for row in rules_answers(requests).answers}


@pytest.mark.parametrize(("case", "reply"), [(c, r) for c, r, _ in CASES], ids=[c for c, _, _ in CASES])
def test_replaylab_retries_a_reply_in_the_attempt_only_where_openclaw_2026_9_6_does(answers, case, reply):
    session = answers[case]["session"]
    openclaw_retries = session["compaction"] == "overflow" and session["willRetry"] and session["replyDropped"]
    message = AssistantMessage.model_validate(reply)
    assert retries_silent_overflow(message, WINDOW, OPENCLAW_2026_9_6) is openclaw_retries is False


def test_a_finished_reply_over_the_window_stands_and_is_no_overflow_to_the_run_loop(answers):
    for case in ("stop-over-window", "stop-over-window-safeguard", "stop-over-window-session-owner"):
        assert answers[case]["runLoop"] == {"action": "none"}, case
        assert not answers[case]["session"]["replyDropped"], case
    # default mode: the session's threshold compaction after the turn, the reply kept; safeguard: none
    assert answers["stop-over-window"]["session"] == {
        "compaction": "threshold",
        "willRetry": False,
        "replyDropped": False,
        "continues": False,
    }
    assert answers["stop-over-window-safeguard"]["session"]["compaction"] is None
    # the same reply is an overflow by @openclaw/ai's own test, which replaylab's classifier follows
    assert pi_is_context_overflow(AssistantMessage.model_validate(_reply("stop", 1_200)), WINDOW, OPENCLAW_2026_9_6)


def test_an_error_overflow_is_the_run_loops_to_recover(answers):
    """With a budget the session leaves it alone (`contextOverflowRecoveryOwner === "caller"`) and
    the run loop reads it as an overflow (here, its compactions and truncation used up: it surfaces)."""
    for case in ("error-overflow", "length-overflow"):
        assert answers[case]["session"]["compaction"] is None, case
        assert answers[case]["runLoop"] == {"action": "surface", "kind": "context_overflow"}, case
    assert pi_is_context_overflow(
        AssistantMessage.model_validate(_reply("error", 0, TOO_LONG)), WINDOW, OPENCLAW_2026_9_6
    )
