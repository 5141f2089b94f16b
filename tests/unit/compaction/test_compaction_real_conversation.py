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
    RUN_SKIPS,
    SESSIONS,
    assistant,
    bash,
    custom,
    quiet_session,
    real_to_the_run,
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


def _params(recording: Path, mode: str, trigger: str, working_copy: Path | None = None) -> Any:
    """The compaction parameters every test of this file compacts with."""
    from replaylab.compaction import CompactParams

    return CompactParams(
        session_file=str(recording),
        compaction_mode=mode,
        context_tokens=3200,
        reserve_tokens_floor=800,
        keep_recent_tokens=500,
        working_copy=None if working_copy is None else str(working_copy),
        trigger=trigger,
    )


def _compaction(tmp_path: Path, recording: Path, agent: str, mode: str, trigger: str) -> Any:
    """replaylab's compaction of `recording` under `agent`'s rules, in `mode`, for `trigger`."""
    from replaylab.agents import rules_of
    from replaylab.compaction import compact
    from replaylab.transcript.memo import ItemMemo

    params = _params(recording, mode, trigger, tmp_path / f"ours-{agent}-{mode}-{trigger}.jsonl")
    return compact(params, memo=ItemMemo(rules=rules_of(agent)))


def _compacted(
    tmp_path: Path, recording: Path, agent: str, mode: str = "safeguard", trigger: str = "manual"
) -> dict[str, Any]:
    """The `details` of the compaction replaylab appends under `agent`'s rules, in `mode`."""
    compacted = _compaction(tmp_path, recording, agent, mode, trigger)
    assert compacted.success, compacted.error
    out = Path(compacted.working_copy)
    entries = map(orjson.loads, reversed(out.read_bytes().splitlines()))
    details: dict[str, Any] = next(e for e in entries if e["type"] == "compaction")["details"]
    return details


@pytest.mark.parametrize(
    ("name", "extra", "ask_last", "summarized"),
    [pytest.param(*c, id=c[0]) for c in SESSIONS],
)
def test_the_openclaw_2026_9_6_safeguard_summarizes_where_its_code_finds_real_conversation(
    tmp_path: Path, name: str, extra: dict[str, Any] | None, ask_last: bool, summarized: bool
) -> None:
    """Its fallback holds no file lists; a session whose whole context holds nothing real does not
    reach the safeguard (its compaction run skips it). pi 0.73.1's profile keeps OpenClaw 2026.4.12's
    rule and compacts."""
    recording = quiet_session(tmp_path, extra, ask_last=ask_last)
    if name in RUN_SKIPS:
        skipped = _compaction(tmp_path, recording, "openclaw@2026.9.6", "safeguard", "manual")
        assert (skipped.success, skipped.failure) == (False, "agent_refuses")
    else:
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
    only: its default mode's threshold compaction is agent-core's plain `compact`, which summarizes
    whatever the span holds. pi 0.73.1's profile keeps the fallback it always wrote."""
    recording = quiet_session(tmp_path, None, ask_last=False)
    ours = _compacted(tmp_path, recording, "openclaw@2026.9.6", mode, "threshold")
    assert ours["replaylab"]["summarizer"] != NO_REAL and ours["readFiles"]
    assert _compacted(tmp_path, recording, "pi@0.73.1", mode)["replaylab"]["summarizer"] == NO_REAL


@pytest.mark.parametrize("mode", ["safeguard", "manual", "auto", "aggressive"])
@pytest.mark.parametrize("trigger", ["manual", "threshold", "overflow", "timeout_recovery"])
def test_openclaw_2026_9_6_does_not_compact_a_session_whose_context_holds_nothing_real(
    tmp_path: Path, mode: str, trigger: str
) -> None:
    """`compactEmbeddedAgentSessionDirectOnce` returns `{ok: true, compacted: false, reason: "no real
    conversation messages"}` before it cuts, for every trigger in safeguard mode and for all but the
    threshold in the default mode, where agent-core compacts inside the prompt without that run.
    Nothing is written. pi 0.73.1 and pi 1.6.0 compact it (the fallback)."""
    recording = quiet_session(tmp_path, None, ask_last=False)
    ours = _compaction(tmp_path, recording, "openclaw@2026.9.6", mode, trigger)
    if trigger == "threshold" and mode in ("auto", "aggressive"):
        assert ours.success, ours.error
    else:
        assert (ours.success, ours.failure) == (False, "agent_refuses")
        assert "would not compact here: no real conversation messages" in (ours.error or "")
        assert ours.working_copy is None or not Path(ours.working_copy).exists()
    for agent in ("pi@0.73.1", "pi@1.6.0"):
        assert _compaction(tmp_path, recording, agent, mode, trigger).success


def test_a_runtime_context_message_is_real_to_the_compaction_run_and_not_to_the_safeguard(tmp_path: Path) -> None:
    """The run reads the context as it is (`containsRealConversationMessages`); the safeguard strips
    runtime-context messages first, so such a session is compacted, with the fixed fallback."""
    runtime = next(c for c in SESSIONS if c[0] == "runtime-context")
    recording = quiet_session(tmp_path, runtime[1], ask_last=False)
    for trigger in ("manual", "threshold", "overflow", "timeout_recovery"):
        assert _compacted(tmp_path, recording, "openclaw@2026.9.6", "safeguard", trigger)["replaylab"][
            "summarizer"
        ] == (NO_REAL)


@pytest.mark.parametrize(("message", "real"), CASES, ids=range(len(CASES)))
def test_the_compaction_run_reads_each_kind_of_message_unstripped(message: dict[str, Any], real: bool) -> None:
    expected = real_to_the_run(message, real)
    assert contains_real_conversation(RULES, _messages(*QUIET, message), strip=False) is expected


def test_only_openclaw_2026_9_6_has_a_compaction_run_that_skips() -> None:
    named = {
        name
        for name, profile in profiles().items()
        if profile.real_conversation is not None and profile.real_conversation.compaction_run_skip is not None
    }
    assert named == {"openclaw@2026.9.6"}


def _range_session(folder: Path) -> Path:
    """A real ask kept before an earlier compaction (its `firstKeptEntryId`), then only heartbeats,
    silent replies and reads: the next compaction's span holds nothing real, the context before
    its kept tail does."""
    from builders.transcripts import Session

    s = Session()
    s.user("HEARTBEAT_OK")
    ask = s.user("Please draft the release notes for the v2 launch.")
    s.assistant("NO_REPLY")
    s.raw({"type": "compaction", "summary": "Shipped v2.", "firstKeptEntryId": ask, "tokensBefore": 900})
    for n in range(6):
        s.user("HEARTBEAT_OK")
        s.tool_turn("read", {"path": f"src/f{n}.py"}, "x" * 1_500, text="NO_REPLY")
        s.assistant("NO_REPLY")
    return s.write(folder / "range.jsonl")


@pytest.mark.parametrize("mode", ["safeguard", "manual"])
def test_openclaw_2026_9_6_span_is_already_the_range_before_the_kept_tail(tmp_path: Path, mode: str) -> None:
    """`collectPreparationRangeMessages` (the context before `firstKeptEntryId`, less the previous
    summary), which its safeguard summarizes when the span and the prefix hold nothing real, is the
    span and the prefix again: `prepareCompaction` starts at the previous compaction's
    `firstKeptEntryId` and projects entries as the context does. So replaylab, summarizing the
    agent's span, summarizes that range too (here the ask kept before the earlier compaction)."""
    from replaylab.agents import rules_of
    from replaylab.compaction.harness import _classifier_from
    from replaylab.compaction.job import Job
    from replaylab.compaction.plan import initial_keep_recent, plan_compaction
    from replaylab.compaction.safeguard import path_calls
    from replaylab.transcript import build_window, load_transcript
    from replaylab.transcript.memo import ItemMemo

    recording = _range_session(tmp_path)
    params = _params(recording, mode, "threshold")
    memo = ItemMemo(rules=rules_of("openclaw@2026.9.6"))
    job = Job(params, _classifier_from(None, recording), memo)
    path = load_transcript(recording).path_to(None, memo)
    before = build_window(path, memo)
    plan = plan_compaction(job, path, before, initial_keep_recent(job), path_calls(path))
    kept = {e.id for e in path[: plan.cut.first_kept_index]}
    in_range = [w.message for w in before if w.entry_id in kept and w.message.role != "compactionSummary"]
    span = plan.messages + plan.turn_prefix
    assert [m.model_dump() for m in span] == [m.model_dump() for m in in_range]
    assert "release notes" in str(span[0].model_dump())
