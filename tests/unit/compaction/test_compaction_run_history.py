"""OpenClaw 2026.9.6's compaction run asks whether the session holds a real conversation of the
messages it has rewritten (`sanitizeSessionHistory` in `compactEmbeddedAgentSessionDirectOnce`), not
of the context as the session holds it: the profile's `real_conversation.compaction_run_history`.
tests/oracles/test_openclaw_run_history.py runs OpenClaw's own code on the same messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders.real_conversation_cases import QUIET, quiet_session
from builders.run_history_cases import CASES, IMAGE, from_session, reply, text
from replaylab.compaction.summary.real_conversation import contains_real_conversation
from replaylab.compaction.summary.run_history import compaction_run_finds_real_conversation, run_history
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.openclaw_2026_9_6_real_conversation import REAL_CONVERSATION as RULES
from replaylab.upstream.profiles import profiles
from unit.compaction.test_compaction_real_conversation import NO_REAL, _compacted, _compaction


def _messages(*objs: dict[str, Any]) -> list[Any]:
    return [MESSAGE_ADAPTER.validate_python(o) for o in objs]


@pytest.mark.parametrize(("message", "as_is", "rewritten"), CASES, ids=range(len(CASES)))
def test_the_compaction_run_reads_each_message_as_it_has_rewritten_it(
    message: dict[str, Any], as_is: bool, rewritten: bool
) -> None:
    messages = _messages(*QUIET, message)
    assert contains_real_conversation(RULES, messages, strip=False) is as_is
    assert compaction_run_finds_real_conversation(RULES, messages) is rewritten


def test_the_rewriting_leaves_other_messages_and_the_originals_alone() -> None:
    assert RULES.compaction_run_history is not None
    messages = _messages(*QUIET, from_session("NO_REPLY"), reply(text("Hi."), IMAGE))
    dumped = [m.model_dump() for m in messages]
    seen = run_history(RULES.compaction_run_history, messages)
    assert [m.model_dump() for m in messages] == dumped
    assert seen[:3] == messages[:3]
    assert seen[3].content.startswith("[Inter-session message] isUser=false\nNO_REPLY")
    assert [b.type for b in seen[4].content] == ["text"]


def _session(tmp_path: Path, message: dict[str, Any]) -> Path:
    return quiet_session(tmp_path, {"message": message}, ask_last=False)


@pytest.mark.parametrize("trigger", ["manual", "threshold", "overflow", "timeout_recovery"])
def test_a_silent_message_from_another_session_is_real_to_the_run_and_not_to_the_safeguard(
    tmp_path: Path, trigger: str
) -> None:
    """The run annotates it (`annotateInterSessionUserMessages`), so it compacts; the safeguard reads
    the session's entries as written and writes its fixed fallback."""
    recording = _session(tmp_path, from_session("NO_REPLY"))
    ours = _compacted(tmp_path, recording, "openclaw@2026.9.6", "safeguard", trigger)
    assert ours["replaylab"]["summarizer"] == NO_REAL


@pytest.mark.parametrize(
    "message",
    [
        reply(text("The deploy finished."), provider="openclaw", model="delivery-mirror"),
        reply(text("The deploy finished."), openclawDeliveryMirror={"kind": "message-tool-source-reply"}),
        reply(IMAGE),
    ],
    ids=["delivery-mirror", "mirror-marker", "assistant-image"],
)
@pytest.mark.parametrize("mode", ["safeguard", "auto"])
@pytest.mark.parametrize("trigger", ["manual", "threshold", "overflow"])
def test_a_session_real_only_by_what_the_run_drops_is_not_compacted(
    tmp_path: Path, message: dict[str, Any], mode: str, trigger: str
) -> None:
    """A transcript-only assistant message, or an assistant's image, is real to the safeguard, not to
    the run, which drops it first: the run skips such a session, except agent-core's threshold
    compaction in the default mode, which runs without it. pi's profiles compact it."""
    recording = _session(tmp_path, message)
    ours = _compaction(tmp_path, recording, "openclaw@2026.9.6", mode, trigger)
    if trigger == "threshold" and mode == "auto":
        assert ours.success, ours.error
    else:
        assert (ours.success, ours.failure) == (False, "agent_refuses")
        assert "would not compact here: no real conversation messages" in (ours.error or "")
    for agent in ("pi@0.73.1", "pi@1.6.0"):
        assert _compaction(tmp_path, recording, agent, mode, trigger).success


def test_only_openclaw_2026_9_6_rewrites_the_history_its_run_reads() -> None:
    named = {
        name
        for name, profile in profiles().items()
        if profile.real_conversation is not None and profile.real_conversation.compaction_run_history is not None
    }
    assert named == {"openclaw@2026.9.6"}
