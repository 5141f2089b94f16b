"""replaylab's reading of OpenClaw 2026.9.6's real-conversation test against its own code: each message
of tests/builders/real_conversation_cases.py, after the quiet ones, goes through the pinned build's
`stripRuntimeContextCustomMessages` and `isRealConversationMessage` (what its safeguard's
`containsRealConversation` does) and through replaylab's `contains_real_conversation` under the
openclaw@2026.9.6 profile; both answers and the cases' own must agree. So do its compaction run's
`containsRealConversationMessages` (compact-lmmQAHsq.mjs, which strips nothing) and replaylab's
reading with `strip=False`. The sessions themselves are
compacted by OpenClaw in tests/oracles/test_openclaw_compactor.py.

Skips when the pinned OpenClaw is not installed, and fails so under CI=true."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders.real_conversation_cases import CASES, QUIET, real_to_the_run
from openclaw_probe import probe_answers
from replaylab.compaction.summary.real_conversation import contains_real_conversation
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.profiles import profile_named

#: the chunks of the pinned build that hold the two functions (their export letters are the build's)
PROBE = """
import { createInterface } from "node:readline";
const dist = process.argv[2];
const { p: isRealConversationMessage } = await import(`${dist}/builtin-openclaw-q1hiFm14.mjs`);
const { m: stripRuntimeContextCustomMessages } = await import(`${dist}/internal-runtime-context-BH-o1oq1.mjs`);
const { r: compactTesting } = await import(`${dist}/compact-lmmQAHsq.mjs`);
for await (const line of createInterface({ input: process.stdin })) {
  const all = JSON.parse(line);
  const messages = stripRuntimeContextCustomMessages(all);
  const safeguard = messages.some((m, i, kept) => isRealConversationMessage(m, kept, i));
  console.log(JSON.stringify([safeguard, compactTesting.containsRealConversationMessages(all)]));
}
"""


@pytest.fixture(scope="module")
def openclaw_answers(tmp_path_factory: pytest.TempPathFactory) -> list[list[bool]]:
    """OpenClaw's `containsRealConversation` (its safeguard's) and `containsRealConversationMessages`
    (its compaction run's) of `QUIET` and each case's message."""
    folder = Path(tmp_path_factory.mktemp("real-conversation"))
    return probe_answers(folder, PROBE, [[*QUIET, message] for message, _ in CASES])


@pytest.mark.parametrize("index", range(len(CASES)))
def test_replaylab_reads_each_message_as_openclaw_2026_9_6_does(openclaw_answers: list[list[bool]], index: int) -> None:
    message, expected = CASES[index]
    rules = profile_named("openclaw@2026.9.6").real_conversation
    assert rules is not None
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in [*QUIET, message]]
    ours = contains_real_conversation(rules, messages)
    theirs: Any = openclaw_answers[index][0]
    assert (theirs, ours) == (expected, expected), json.dumps(message)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_replaylab_reads_each_message_as_openclaw_2026_9_6_compaction_run_does(
    openclaw_answers: list[list[bool]], index: int
) -> None:
    message, real = CASES[index]
    expected = real_to_the_run(message, real)
    rules = profile_named("openclaw@2026.9.6").real_conversation
    assert rules is not None
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in [*QUIET, message]]
    ours = contains_real_conversation(rules, messages, strip=False)
    theirs: Any = openclaw_answers[index][1]
    assert (theirs, ours) == (expected, expected), json.dumps(message)
