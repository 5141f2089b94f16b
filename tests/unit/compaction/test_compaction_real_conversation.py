"""Whether a compaction has a real conversation to summarize: OpenClaw 2026.9.6's safeguard rule
(`containsRealConversation`, the openclaw@2026.9.6 profile's `real_conversation`) against OpenClaw
2026.4.12's, which every other profile keeps. tests/oracles/test_openclaw_real_conversation.py and
test_openclaw_compactor.py run OpenClaw's own code on the same messages and sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from builders.real_conversation_cases import (
    CASES,
    QUIET,
    SESSIONS,
    assistant,
    bash,
    custom,
    quiet_session,
    result,
)
from replaylab.compaction.summary.real_conversation import (
    compaction_has_real_conversation,
    contains_real_conversation,
    is_real_conversation_message,
)
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.openclaw_2026_9_6_real_conversation import REAL_CONVERSATION as RULES
from replaylab.upstream.profiles import profiles

#: the summary source of the fixed fallback
NO_REAL = "fallback:no-real-conversation"


def _messages(*objs: dict[str, Any]) -> list[Any]:
    return [MESSAGE_ADAPTER.validate_python(o) for o in objs]


def _window(messages: list[Any]) -> list[WindowMessage]:
    return [WindowMessage(f"e{i}", m) for i, m in enumerate(messages)]


@pytest.mark.parametrize(("message", "real"), CASES, ids=range(len(CASES)))
def test_openclaw_2026_9_6_reads_each_kind_of_message_as_its_code_does(message: dict[str, Any], real: bool) -> None:
    assert contains_real_conversation(RULES, _messages(*QUIET, message)) is real


def test_a_tool_result_is_real_within_twenty_messages_after_an_anchor_never_after_an_assistant() -> None:
    """The anchor is itself real: the tool-result rule never changes a list's answer, only the message's."""
    anchored = _messages(bash("ls", "a"), *[result("x")] * 21)
    assert is_real_conversation_message(RULES, anchored[20], anchored, 20)
    assert not is_real_conversation_message(RULES, anchored[21], anchored, 21)
    after_assistant = _messages(assistant({"type": "text", "text": "Done."}), result("x"))
    assert not is_real_conversation_message(RULES, after_assistant[1], after_assistant, 1)


def test_a_span_with_nothing_real_is_real_when_the_session_context_holds_a_real_message() -> None:
    """The rule OpenClaw 2026.9.6 has (`session_context`), which its profile reads."""
    quiet = _messages(*QUIET)
    with_ask = _window([*quiet, *_messages(*CASES[-1][:1])])
    assert compaction_has_real_conversation(replace(RULES, session_context=True), quiet, with_ask)
    assert not compaction_has_real_conversation(replace(RULES, session_context=True), quiet, _window(quiet))
    assert compaction_has_real_conversation(RULES, quiet, with_ask)
    assert not compaction_has_real_conversation(replace(RULES, session_context=False), quiet, with_ask)
    # OpenClaw 2026.4.12's rule, every other profile's: the span alone, users and assistants only
    assert not compaction_has_real_conversation(None, quiet, with_ask)
    assert not compaction_has_real_conversation(None, [*quiet, *_messages(custom("The deploy finished."))])


def test_only_the_openclaw_2026_9_6_profile_names_the_rule() -> None:
    named = {name for name, profile in profiles().items() if profile.real_conversation is not None}
    assert named == {"openclaw@2026.9.6"}


def _compacted(tmp_path: Path, recording: Path, agent: str, mode: str = "safeguard") -> dict[str, Any]:
    """The `details` of the compaction replaylab appends under `agent`'s rules, in `mode`."""
    from replaylab.agents import rules_of
    from replaylab.compaction import CompactParams, compact
    from replaylab.transcript.memo import ItemMemo

    out = tmp_path / f"ours-{agent}-{mode}.jsonl"
    params = CompactParams(
        session_file=str(recording),
        compaction_mode=mode,
        context_tokens=3200,
        reserve_tokens_floor=800,
        keep_recent_tokens=500,
        working_copy=str(out),
    )
    compacted = compact(params, memo=ItemMemo(rules=rules_of(agent)))
    assert compacted.success, compacted.error
    entries = map(orjson.loads, reversed(out.read_bytes().splitlines()))
    details: dict[str, Any] = next(e for e in entries if e["type"] == "compaction")["details"]
    return details


@pytest.mark.parametrize(
    ("extra", "ask_last", "summarized"),
    [pytest.param(*c[1:], id=c[0]) for c in SESSIONS],
)
def test_the_openclaw_2026_9_6_safeguard_summarizes_where_its_code_finds_real_conversation(
    tmp_path: Path, extra: dict[str, Any] | None, ask_last: bool, summarized: bool
) -> None:
    """Its fallback holds no file lists; pi 0.73.1's profile keeps OpenClaw 2026.4.12's rule."""
    recording = quiet_session(tmp_path, extra, ask_last=ask_last)
    ours = _compacted(tmp_path, recording, "openclaw@2026.9.6")
    assert (ours["replaylab"]["summarizer"] != NO_REAL) is summarized
    assert ("readFiles" in ours) is summarized
    if extra is None or "message" in extra and extra["message"]["role"] == "user":
        return  # a user message: OpenClaw 2026.4.12 reads it by its text alone
    assert _compacted(tmp_path, recording, "pi@0.73.1")["replaylab"]["summarizer"] == NO_REAL


@pytest.mark.parametrize("mode", ["auto", "aggressive"])
def test_outside_safeguard_mode_openclaw_2026_9_6_summarizes_a_span_with_nothing_real(
    tmp_path: Path, mode: str
) -> None:
    """OpenClaw registers its safeguard extension, and with it the fixed fallback, in safeguard mode
    only: its default mode runs agent-core's plain `compact`, which summarizes whatever the span
    holds. pi 0.73.1's profile keeps the fallback it always wrote."""
    recording = quiet_session(tmp_path, None, ask_last=False)
    assert _compacted(tmp_path, recording, "openclaw@2026.9.6", "safeguard")["replaylab"]["summarizer"] == NO_REAL
    ours = _compacted(tmp_path, recording, "openclaw@2026.9.6", mode)
    assert ours["replaylab"]["summarizer"] != NO_REAL and ours["readFiles"]
    assert _compacted(tmp_path, recording, "pi@0.73.1", mode)["replaylab"]["summarizer"] == NO_REAL
