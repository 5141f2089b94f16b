"""OpenClaw 2026.9.6's check before a run, against its own code: the host's
`runSessionCompactionIfNeeded` (agent-runner-memory-DnzQbIgI.mjs), which the reply pipeline and
`openclaw agent` run before each run in every compaction mode, is given a session whose context is
`totalTokens` and a prompt; its compaction is replaced by a sentinel thrown from `beforeCompaction`,
so only its decision runs. replaylab's rule for 2026.9.6 (`TurnStartRules`: the window and the
prompt reaching contextTokens less the release's reserve), given that context and its estimate of
the prompt as a user message, must decide alike, in safeguard and in the default mode.

Skips when the pinned OpenClaw is not installed, and fails so under CI=true."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from openclaw_probe import probe_answers
from replaylab.agents import item_memo, openclaw_2026_9_6
from replaylab.qa.boundaries import prompt_tokens
from replaylab.transcript.model import MessageEntry, TextBlock, UserMessage
from replaylab.upstream.profiles import profiles
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6

PROBE = """
import { createInterface } from "node:readline";
process.env.OPENCLAW_LOG_LEVEL = "silent";
const dist = process.argv[2];
const { n: runSessionCompactionIfNeeded } = await import(`${dist}/agent-runner-memory-DnzQbIgI.mjs`);
for await (const line of createInterface({ input: process.stdin })) {
  const { window, mode, totalTokens, prompt } = JSON.parse(line);
  const cfg = { agents: { defaults: { compaction: mode ? { mode } : {} } },
    models: { providers: { ollama: { models: [{ id: "m1", contextWindow: window }] } } } };
  const entry = { sessionId: "s1", totalTokens, totalTokensFresh: true, totalTokensVersion: 1, compactionCount: 0 };
  let fired = false;
  try {
    await runSessionCompactionIfNeeded({
      cfg, sessionKey: "agent:main:main", sessionEntry: entry, sessionStore: { "agent:main:main": entry },
      followupRun: { prompt, run: { provider: "ollama", model: "m1", sessionId: "s1", agentId: "main",
        thinkingCatalog: [{ provider: "ollama", id: "m1", contextWindow: window }] } },
      promptForEstimate: prompt, isHeartbeat: false,
      beforeCompaction: async () => { throw new Error("SENTINEL"); },
    });
  } catch (error) {
    if (error.message !== "SENTINEL") throw error;
    fired = true;
  }
  console.log(JSON.stringify(fired));
}
"""

#: (window, context tokens below its threshold, prompt characters): around the threshold, both ways
CASES = [
    (window, window - min(20_000, window // 4) - below, chars)
    for window in (3_200, 10_000, 200_000)
    for below, chars in ((200, 400), (200, 1_200), (1, 0), (1, 4), (0, 4), (100, 396), (100, 400), (-5_000, 4))
]
MODES = ["safeguard", None]


@pytest.fixture(scope="module")
def openclaw_fired(tmp_path_factory: pytest.TempPathFactory) -> list[bool]:
    lines = [
        {"window": window, "mode": mode, "totalTokens": total, "prompt": "x" * chars}
        for mode in MODES
        for window, total, chars in CASES
    ]
    return probe_answers(Path(tmp_path_factory.mktemp("host-compaction")), PROBE, lines)


def test_replaylab_compacts_before_a_run_where_openclaws_host_does(openclaw_fired: list[bool]) -> None:
    estimate, rules = openclaw_2026_9_6.RULES, OPENCLAW_2026_9_6.turn_start
    ours = []
    for _mode in MODES:
        for window, total, chars in CASES:
            prompt = estimate.tokens(UserMessage(content=[TextBlock(text="x" * chars)])) if chars else 0
            # the suite's floor is never read: 800 stands for any
            ours.append(rules.fires(total + prompt, window - rules.trigger_reserve(window, 800)))
    assert openclaw_fired == ours
    assert True in ours and False in ours  # both ways around the threshold


#: prompts whose estimate is not a plain count of ASCII characters
PROMPTS = [
    "请把订单 ORD-77123 的退款退回到原来的支付方式。" * 20,
    "Retour bestätigt – Rückerstattung über 129,99 € folgt. 🎧✅ " * 15,
    "   a prompt with blank lines around it\n\n\n   " * 10,
    "x" * 401,
]


def counted(prompt: str) -> int:
    """The prompt as the pipeline counts a turn's input under openclaw@2026.9.6."""
    entry = MessageEntry(id="u1", message=UserMessage(content=[TextBlock(text=prompt)]))
    return prompt_tokens(SimpleNamespace(inputs=[entry]), item_memo(profiles()["openclaw@2026.9.6"]))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def openclaw_at_the_edge(tmp_path_factory: pytest.TempPathFactory) -> list[bool]:
    """For each prompt, the host's decision at the context where replaylab's count of the prompt
    just reaches the threshold, and one token below."""
    window, rules = 10_000, OPENCLAW_2026_9_6.turn_start
    threshold = window - rules.trigger_reserve(window, 800)
    lines = [
        {"window": window, "mode": "safeguard", "totalTokens": threshold - counted(prompt) - below, "prompt": prompt}
        for prompt in PROMPTS
        for below in (0, 1)
    ]
    return probe_answers(Path(tmp_path_factory.mktemp("host-compaction-prompts")), PROBE, lines)


def test_replaylab_counts_a_prompt_as_the_host_estimates_it(openclaw_at_the_edge: list[bool]) -> None:
    """The host estimates the prompt's trimmed text as one user message
    (`estimatePromptTokensForMemoryFlush`); replaylab counts the turn's input by OpenClaw's message
    estimate, its one text block trimmed: at the edge the two decide alike, for CJK, accented text
    and emoji, and text with blank lines around it."""
    assert openclaw_at_the_edge == [True, False] * len(PROMPTS)
