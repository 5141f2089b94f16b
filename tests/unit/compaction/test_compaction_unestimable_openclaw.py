"""OpenClaw 2026.9.6's compaction where its own token estimate or summarizer fails on a message
(`compaction.estimate_failure` with `UnestimableRules.whole_context`).

OpenClaw's `prepareCompaction` (compaction-CAzwgOuQ.mjs) estimates the whole context
(`totalEstimatedTokens`), so a message its `estimateTokens` throws on makes it throw wherever it lies
in the context, summarized or kept; a NaN there leaves its tail budget unscaled and, once its cut's
walk reaches it, nothing to summarize (it returns nothing). Its estimate guards a call's arguments
and joins the texts of user and tool-result content whatever their type; its summarizer throws on a
call without arguments. Before, replaylab compacted every such session with its own count.
tests/oracles/test_unestimable_conformance.py checks the verdicts against OpenClaw's own code."""

from __future__ import annotations

from typing import Any

import pytest

from builders.linear import linear_jsonl, message
from replaylab.transcript.unestimable import openclaw_unestimable_item, openclaw_unserializable_item
from unit.compaction.test_compaction_unestimable import (
    BIG,
    HEADER,
    MISSING_TEXT,
    NO_ARGUMENTS,
    NULL_ITEM,
    NUMBER_TEXT,
    USAGE,
    _compact,
    _session,
)

OPENCLAW = "openclaw@2026.9.6"
WHERE = ["old", "walked", "after-usage"]
MISSING_THINKING = {"type": "thinking"}
CALL = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}


def tool_result_session(item: Any, where: str) -> bytes:
    """`_session`'s shape with the odd item in a tool result's content: the second turn's
    (`old`), the small last turn's before a later usage (`walked`), or the leaf (`after-usage`)."""

    def call_and_result(usage: bool) -> list[dict[str, Any]]:
        return [
            message("assistant", [CALL], stopReason="toolUse", **({"usage": USAGE} if usage else {})),
            message(
                "toolResult",
                [{"type": "text", "text": "r"}, item],
                toolCallId="c1",
                toolName="read",
                isError=False,
            ),
        ]

    entries = []
    for turn in range(6):
        entries.append(message("user", [{"type": "text", "text": BIG}]))
        if where == "old" and turn == 1:
            entries += call_and_result(True)
        entries.append(message("assistant", [{"type": "text", "text": BIG}], stopReason="stop", usage=USAGE))
    entries.append(message("user", [{"type": "text", "text": "b"}]))
    if where == "walked":
        entries += call_and_result(True)
        entries.append(message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop", usage=USAGE))
    elif where == "after-usage":
        entries += call_and_result(False)
    else:
        entries.append(message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop", usage=USAGE))
    return linear_jsonl(HEADER, *entries)


@pytest.mark.parametrize("mode", ["auto", "manual", "safeguard"])
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("item", [MISSING_TEXT, MISSING_THINKING], ids=["no-text", "no-thinking"])
def test_a_message_openclaws_estimate_throws_on_anywhere_in_the_context_is_refused(tmp_path, mode, where, item):
    """Before: compacted with replaylab's count, wherever the message lay."""
    result = _compact(tmp_path, OPENCLAW, _session(item, where), mode)
    assert not result.success and result.failure == "agent_refuses", result.error
    entry = "e4" if where == "old" else "e14"
    assert f"entry {entry}" in result.error and "totalEstimatedTokens" in result.error
    assert "prepareCompaction throws" in result.error and "Auto-compaction failed" in result.error


@pytest.mark.parametrize("where", WHERE)
def test_a_null_item_of_a_tool_result_throws_wherever_it_lies(tmp_path, where):
    """OpenClaw's load keeps such a tool result (a user or assistant message with one it keeps
    aside, never estimated); its estimate reads the null's `type`."""
    result = _compact(tmp_path, OPENCLAW, tool_result_session(NULL_ITEM, where), "safeguard")
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "content item is null" in result.error


def test_a_null_item_of_an_assistant_message_is_kept_aside_and_never_estimated(tmp_path):
    assert _compact(tmp_path, OPENCLAW, _session(NULL_ITEM, "after-usage")).success


@pytest.mark.parametrize("where", ["walked", "after-usage"])
def test_a_nan_its_cut_walks_over_leaves_openclaw_nothing_to_summarize(tmp_path, where):
    result = _compact(tmp_path, OPENCLAW, _session(NUMBER_TEXT, where))
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "gives NaN on entry e14" in result.error and "(message.content.1.text)" in result.error
    assert "Nothing to compact" in result.error


def test_a_summarized_nan_leaves_its_cut_something_to_summarize(tmp_path):
    assert _compact(tmp_path, OPENCLAW, _session(NUMBER_TEXT, "old")).success


def scaled_session(nan: bool) -> bytes:
    """Six big turns and a small last one whose usage is far over OpenClaw's estimate (its tail
    budget is scaled down by that ratio); `nan`: the second answer's estimate is NaN."""
    usage = {**USAGE, "input": 50_000, "totalTokens": 50_010}
    entries = []
    for turn in range(6):
        entries.append(message("user", [{"type": "text", "text": BIG}]))
        content = [{"type": "text", "text": "a"}, NUMBER_TEXT] if nan and turn == 1 else [{"type": "text", "text": BIG}]
        entries.append(message("assistant", content, stopReason="stop", usage=usage))
    entries.append(message("user", [{"type": "text", "text": "b"}]))
    entries.append(message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop", usage=usage))
    return linear_jsonl(HEADER, *entries)


def test_a_summarized_nan_leaves_openclaws_tail_budget_unscaled(tmp_path):
    """Its whole-context estimate is NaN, so `triggerUnitScale` is 1: the tail is the full
    keepRecentTokens, and the cut falls at the last big turn's start (e11), not within it (e12,
    where replaylab cut before, with the budget scaled)."""
    assert _compact(tmp_path, OPENCLAW, scaled_session(False), "safeguard").first_kept_entry_id == "e12"
    result = _compact(tmp_path, OPENCLAW, scaled_session(True), "safeguard")
    assert result.success and result.first_kept_entry_id == "e11", result.error


@pytest.mark.parametrize("where", WHERE)
def test_openclaws_estimate_guards_a_call_without_arguments(tmp_path, where):
    """Safeguard writes its own summary: OpenClaw compacts wherever the call lies."""
    assert _compact(tmp_path, OPENCLAW, _session(NO_ARGUMENTS, where), "safeguard").success


def test_a_summarized_call_without_arguments_fails_openclaws_default_summarizer(tmp_path):
    result = _compact(tmp_path, OPENCLAW, _session(NO_ARGUMENTS, "old"))
    assert not result.success and result.failure == "agent_refuses", result.error
    assert "entry e4" in result.error and "the messages it summarizes" in result.error
    assert _compact(tmp_path, OPENCLAW, _session(NO_ARGUMENTS, "walked")).success  # kept, not summarized


@pytest.mark.parametrize(
    "obj,found",
    [
        (message("assistant", [{"type": "text", "text": 5}]), ("message.content.0.text", "NaN")),
        (message("assistant", [{"type": "thinking"}]), ("message.content.0.thinking", "throws")),
        (message("assistant", [{"type": "toolCall", "id": "c", "name": 5}]), ("message.content.0.name", "NaN")),
        (message("assistant", [{"type": "text", "text": ["a", "b"]}]), None),  # `.length` of a list
        (message("assistant", [{"type": "text", "text": ["中"]}]), ("message.content.0.text", "throws")),
        (message("assistant", [{"type": "toolCall", "id": "c", "name": "n"}]), None),  # guarded
        (message("user", [{"type": "text", "text": 5}]), None),  # joined as String() prints it
        (message("toolResult", [None]), ("message.content.0", "throws")),
        (message("toolResult", {"type": "text", "text": "t"}), None),  # its load reads it as a list
    ],
)
def test_what_openclaws_estimate_fails_on(obj, found):
    got = openclaw_unestimable_item(obj)
    assert (got and (got[0], "throws" if got[1].endswith("throws") else "NaN")) == found


def test_what_openclaws_summarizer_cannot_serialize():
    call = {"type": "toolCall", "id": "c", "name": "n"}
    assert openclaw_unserializable_item(message("assistant", [call]))[0] == "message.content.0.arguments"
    assert openclaw_unserializable_item(message("assistant", [{**call, "arguments": None}])) is not None
    assert openclaw_unserializable_item(message("assistant", [{**call, "arguments": {}}])) is None
    assert openclaw_unserializable_item(message("toolResult", {"type": "text", "text": "t"})) is None
