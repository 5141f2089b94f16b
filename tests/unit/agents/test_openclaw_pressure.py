"""OpenClaw 2026.9.6's prompt pressure (replaylab/agents/openclaw_2026_9_6/pressure.py), the
estimate its mid-turn precheck weighs a request by: each message against the pinned build's own
`estimateMessageTokenPressure`, and the whole request and its budget against its
`shouldPreemptivelyCompactBeforePrompt`, on the windows of the bundled sessions and on messages of
every kind."""

from __future__ import annotations

import subprocess

import orjson
import pytest

from replaylab.agents.openclaw_2026_9_6.pressure import (
    attempt_reserve_tokens,
    message_pressure,
    prompt_budget,
    prompt_pressure,
    tool_schema_pressure,
)
from replaylab.oracles import openclaw as oracle
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from repo_paths import REPO_ROOT, TESTS

KINDS = [
    UserMessage(content="Hallo — 你好, wie geht's?"),
    UserMessage(content=[TextBlock(text="see"), ImageBlock(data="AAAA", mime_type="image/png")]),
    AssistantMessage(
        content=[
            ThinkingBlock(thinking="let me look"),
            TextBlock(text="Looking."),
            ToolCallBlock(id="c1", name="get_order", arguments={"order_id": "ORD-1", "n": [1, 2.5]}),
        ],
        stop_reason="toolUse",
    ),
    ToolResultMessage(tool_call_id="c1", tool_name="get_order", content=[TextBlock(text="x" * 5_001)]),
    ToolResultMessage(tool_call_id="c2", tool_name="note", content="plain string result"),
    BashExecutionMessage(command="ls -la", output="a\nb", exit_code=2),
    BashExecutionMessage(command="true", output=""),
    BashExecutionMessage(
        command="make", output="partial", cancelled=True, truncated=True, full_output_path="/tmp/o.log"
    ),
    # flags of other types, as written: their truth and text as JavaScript reads them
    BashExecutionMessage(command="make", output="", exit_code={"signal": 9}, truncated="yes", full_output_path=5),
    BashExecutionMessage(command="make", output="x", exit_code=2.5, cancelled=[], exclude_from_context="true"),
    CompactionSummaryMessage(summary="## Goal\nRefund ORD-1."),
]


def _real(cases: list[dict]) -> list[dict]:
    node = oracle.node_executable()
    dist = oracle.NODE_DIR / "node_modules" / "openclaw" / "dist"
    if oracle.oracle_unavailable() is not None or node is None:
        pytest.skip(f"OpenClaw 2026.9.6 is not runnable here: {oracle.oracle_unavailable()}")
    done = subprocess.run(
        [node, str(TESTS / "oracles" / "openclaw_pressure.mjs"), str(dist)],
        input=orjson.dumps(cases),
        capture_output=True,
        timeout=120,
        check=True,
    )
    return orjson.loads(done.stdout)


def _json(message) -> dict:
    """The message as the agent holds it (its role and every field set, defaults included)."""
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def _windows() -> list[list]:
    """Every bundled helpdesk session's window at its leaf and at each third entry before it."""
    out = []
    for path in sorted((REPO_ROOT / "recordings" / "helpdesk").glob("*.jsonl")):
        entries = load_transcript(path).leaf_path()
        for end in range(3, len(entries) + 1, max(3, len(entries) // 4)):
            out.append([w.message for w in build_window(entries[:end])])
    return out


def test_each_message_and_request_weighs_what_openclaw_weighs() -> None:
    windows = [KINDS, *_windows()]
    tools = [{"name": "get_order", "description": "Look an order up", "parameters": {"type": "object"}}]
    cases = [
        {"messages": [_json(m) for m in window], "context": context, "reserve": reserve, "tools": tools}
        for window in windows
        for context, reserve in ((2_400, 20_000), (200_000, 16_384))
    ]
    real = _real(cases)
    assert len(real) == len(cases) > 20
    for case, window, got in zip(cases, [w for w in windows for _ in range(2)], real, strict=True):
        assert [message_pressure(m) for m in window] == got["each"]
        decision = got["decision"]
        assert prompt_pressure(window) == decision["estimatedPromptTokens"]
        assert prompt_budget(case["context"], case["reserve"]) == decision["promptBudgetBeforeReserve"]
        # the tool schemas as the pre-prompt precheck counts them (estimateToolSchemaTokenPressure)
        assert tool_schema_pressure(tools) == -(-got["tools"] * 6 // 5)


def test_the_budget_keeps_at_most_a_quarter_of_the_window_for_the_reserve() -> None:
    assert prompt_budget(2_400, attempt_reserve_tokens(800)) == 1_800  # the 20,000-token floor, capped at 600
    assert prompt_budget(200_000, attempt_reserve_tokens(16_384)) == 180_000  # the floor raises pi's default
    assert prompt_budget(200_000, attempt_reserve_tokens(30_000)) == 170_000


def test_a_tool_result_weighs_at_least_a_token_per_two_chars_and_every_message_its_overhead() -> None:
    (result,) = [m for m in KINDS if isinstance(m, ToolResultMessage) and m.tool_call_id == "c1"]
    # 12 per message, 6 for the block, 2,501 for 5,001 chars, 3 for the name (8 chars / 3)
    assert message_pressure(result) == 12 + 6 + 2_501 + 3
    assert prompt_pressure([]) == 15  # the rendered prompt's overhead, times 1.2
