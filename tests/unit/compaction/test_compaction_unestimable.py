"""A compaction the agent's own token estimate or summarizer fails on is refused as the agent fails
(`compaction.estimate_failure`, the profile's `unestimable` rules).

pi's `prepareCompaction` throws when a message whose item its `estimateTokens` cannot count lies in
the context after its last usage (`tokensBefore`) or in the tail `findCutPoint` walks back over; a
NaN there keeps the sum below the tail, so the cut falls on the first valid cut point and nothing is
summarized (0.73.1 compacts nothing, 1.6.0 returns nothing); its default summarizer throws on an item
it cannot serialize among what it summarizes. Before, replaylab only warned (`pi-unestimable`) and
compacted with its own count. tests/oracles/test_unestimable_conformance.py checks the cut against
the agents' own `prepareCompaction`; OpenClaw 2026.9.6's own estimate: test_compaction_unestimable_openclaw.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.unestimable import unserializable_item

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
USAGE = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
BIG = "x" * 4_000
PI = ["pi@0.73.1", "pi@1.6.0"]

NULL_ITEM: Any = None
MISSING_TEXT = {"type": "text"}
NUMBER_TEXT = {"type": "text", "text": 5}
NO_ARGUMENTS = {"type": "toolCall", "id": "c9", "name": "note"}


def _session(item: Any, where: str) -> bytes:
    """Six big turns and a small last one, each answer with a usage. `where` the odd item is: `old`
    (the second answer, summarized), `walked` (the small last turn's answer, in the tail the cut
    walks over, before a usage) or `after-usage` (the last answer, with no usage after it)."""
    odd = [{"type": "text", "text": "a"}, item]
    entries = []
    for turn in range(6):
        entries.append(message("user", [{"type": "text", "text": BIG}]))
        content = odd if where == "old" and turn == 1 else [{"type": "text", "text": BIG}]
        entries.append(message("assistant", content, stopReason="stop", usage=USAGE))
    entries.append(message("user", [{"type": "text", "text": "b"}]))
    if where == "walked":
        entries.append(message("assistant", odd, stopReason="toolUse", usage=USAGE))
        entries.append(message("user", [{"type": "text", "text": "c"}]))
        entries.append(message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop", usage=USAGE))
    else:
        last_usage = {} if where == "after-usage" else {"usage": USAGE}
        last = odd if where == "after-usage" else [{"type": "text", "text": "ok"}]
        entries.append(message("assistant", last, stopReason="stop", **last_usage))
    return linear_jsonl(HEADER, *entries)


def _compact(tmp_path: Path, agent: str, data: bytes, mode: str = "auto") -> Any:
    recording = tmp_path / "s.jsonl"
    recording.write_bytes(data)
    params = CompactParams(
        session_file=str(recording),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=1_500,
        force_compact=True,
        compaction_mode=mode,
    )
    return compact(params, memo=ItemMemo(rules=rules_of(agent)))


@pytest.mark.parametrize("agent", PI)
@pytest.mark.parametrize("mode", ["auto", "manual", "safeguard"])
@pytest.mark.parametrize(
    "item,field", [(NULL_ITEM, "message.content.1"), (MISSING_TEXT, "message.content.1.text")], ids=["null", "no-text"]
)
def test_an_item_pis_estimate_throws_on_after_the_last_usage_is_refused(tmp_path, agent, mode, item, field):
    """Before: compacted with replaylab's count (the item counted 0)."""
    result = _compact(tmp_path, agent, _session(item, "after-usage"), mode)
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "entry e14" in result.error and "line 15" in result.error and f"({field})" in result.error
    assert "tokensBefore" in result.error and "prepareCompaction throws" in result.error
    assert ("ends the run with an error" in result.error) == (agent == "pi@1.6.0")


@pytest.mark.parametrize("agent", PI)
def test_an_item_pis_estimate_throws_on_in_the_walked_tail_is_refused(tmp_path, agent):
    result = _compact(tmp_path, agent, _session(NO_ARGUMENTS, "walked"))
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "entry e14" in result.error and "(message.content.1.arguments)" in result.error
    assert "findCutPoint walks back" in result.error


@pytest.mark.parametrize("agent,failure", [("pi@0.73.1", "nothing_to_gain"), ("pi@1.6.0", "agent_refuses")])
def test_a_nan_in_the_walked_tail_leaves_the_agent_nothing_to_summarize(tmp_path, agent, failure):
    """pi 0.73.1 writes a compaction that removes nothing; pi 1.6.0 returns no preparation."""
    result = _compact(tmp_path, agent, _session(NUMBER_TEXT, "walked"))
    assert not result.success and result.failure == failure, result.error
    assert "gives NaN on entry e14" in result.error and "(message.content.1.text)" in result.error


@pytest.mark.parametrize("agent", PI)
@pytest.mark.parametrize("item", [NULL_ITEM, NO_ARGUMENTS], ids=["null", "no-arguments"])
def test_a_summarized_item_pis_summarizer_cannot_serialize_is_refused_in_its_default_compaction(tmp_path, agent, item):
    """The cut never reaches the item, but pi's `serializeConversation` of the summarized span
    throws on it; safeguard writes its own summary (not modelled: compacted as before)."""
    result = _compact(tmp_path, agent, _session(item, "old"))
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "entry e4" in result.error and "the messages it summarizes" in result.error
    assert _compact(tmp_path, agent, _session(item, "old"), "safeguard").success


@pytest.mark.parametrize("agent", PI)
@pytest.mark.parametrize("item", [MISSING_TEXT, NUMBER_TEXT], ids=["no-text", "nan"])
def test_an_item_only_the_estimate_fails_on_outside_the_walked_tail_compacts(tmp_path, agent, item):
    """pi estimates only the context after its last usage and the tail it walks; its summarizer
    reads a text it cannot count."""
    assert _compact(tmp_path, agent, _session(item, "old")).success


@pytest.mark.parametrize(
    "obj,found",
    [
        (message("assistant", [None]), ("message.content.0", "content item is null: reading its `type` throws")),
        (
            message("assistant", [{"type": "toolCall", "id": "c", "name": "n", "arguments": None}]),
            ("message.content.0.arguments", "call has no arguments: `Object.entries(arguments)` throws"),
        ),
        (
            message("toolResult", {"type": "text", "text": "t"}),
            ("message.content", "content is a JSON object, not a list: `content.filter` throws"),
        ),
        (
            {"type": "custom_message", "content": [None]},
            ("content.0", "content item is null: reading its `type` throws"),
        ),
        (message("assistant", [{"type": "text"}]), None),
        (message("assistant", [{"type": "toolCall", "id": "c", "name": "n", "arguments": "{}"}]), None),
        (message("user", [7]), None),
    ],
)
def test_what_pis_summarizer_cannot_serialize(obj, found):
    assert unserializable_item(obj) == found
