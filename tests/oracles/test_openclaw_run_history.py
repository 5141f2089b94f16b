"""replaylab's reading of the messages OpenClaw 2026.9.6's compaction run asks about, against its own
code: each message of tests/builders/run_history_cases.py, after the quiet ones, goes through the
pinned build's `sanitizeSessionHistory` and `validateReplayTurns` (what
`compactEmbeddedAgentSessionDirectOnce` does to `session.messages` before it asks) and then
`containsRealConversationMessages`, and as it is through the latter alone; both answers, replaylab's
(`compaction_run_finds_real_conversation`, `contains_real_conversation(strip=False)`) and the case's
must agree. The session manager given holds no model snapshot, so the one the run appends is thrown
away; the provider is one with no plugin of its own.

Skips when the pinned OpenClaw is not installed, and fails so under CI=true."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders.real_conversation_cases import QUIET
from builders.run_history_cases import CASES
from openclaw_probe import probe_answers
from replaylab.compaction.summary.real_conversation import contains_real_conversation
from replaylab.compaction.summary.run_history import compaction_run_finds_real_conversation
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.profiles import profile_named

#: the chunks of the pinned build that hold the functions (their export letters are the build's)
PROBE = """
import { createInterface } from "node:readline";
process.env.OPENCLAW_LOG_LEVEL = "silent";
const dist = process.argv[2];
const { Z: sanitizeSessionHistory, Q: validateReplayTurns } = await import(`${dist}/builtin-openclaw-q1hiFm14.mjs`);
const { r: compactTesting } = await import(`${dist}/compact-lmmQAHsq.mjs`);
const sessionManager = { getBranch: () => [], getEntries: () => [], appendCustomEntry() {} };
const replay = { modelApi: "openai-completions", modelId: "m", provider: "openai", sessionId: "s" };
for await (const line of createInterface({ input: process.stdin })) {
  const messages = JSON.parse(line);
  const prior = await sanitizeSessionHistory({ ...replay, messages, sessionManager, preserveLatestAssistantThinking: false });
  const validated = await validateReplayTurns({ ...replay, messages: prior });
  const real = compactTesting.containsRealConversationMessages;
  console.log(JSON.stringify([real(messages), real(validated)]));
}
"""


@pytest.fixture(scope="module")
def openclaw_answers(tmp_path_factory: pytest.TempPathFactory) -> list[list[bool]]:
    """OpenClaw's `containsRealConversationMessages` of `QUIET` and each case's message, as they are
    and as its compaction run has rewritten them."""
    folder = Path(tmp_path_factory.mktemp("run-history"))
    return probe_answers(folder, PROBE, [[*QUIET, message] for message, _, _ in CASES])


@pytest.mark.parametrize("index", range(len(CASES)))
def test_replaylab_reads_the_run_s_rewritten_history_as_openclaw_2026_9_6_does(
    openclaw_answers: list[list[bool]], index: int
) -> None:
    message, as_is, rewritten = CASES[index]
    rules = profile_named("openclaw@2026.9.6").real_conversation
    assert rules is not None
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in [*QUIET, message]]
    ours = [
        contains_real_conversation(rules, messages, strip=False),
        compaction_run_finds_real_conversation(rules, messages),
    ]
    theirs: Any = openclaw_answers[index]
    assert (theirs, ours) == ([as_is, rewritten], [as_is, rewritten]), json.dumps(message)
