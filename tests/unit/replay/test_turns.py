"""`split_turns` under the item's agent: a message the agent never shows the model starts no turn
(OpenClaw 2026.9.6's `convertToLlm` drops a `custom` or `bashExecution` message marked
`excludeFromContext`; pi's drops only such a `bashExecution`, a `!!` command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.excluded_calls import excluded_call_session
from builders.openclaw_records import nested_tool_record
from replaylab.replay import split_turns
from replaylab.transcript import load_transcript
from replaylab.upstream.profiles import profile_named

NESTED = nested_tool_record()
BANG_BANG = {"role": "bashExecution", "command": "ls", "output": "a\n", "exitCode": 0, "cancelled": False,
             "truncated": False, "excludeFromContext": True, "timestamp": 1796127800000}  # fmt: skip


def _session(tmp_path: Path, hidden: dict, version: int) -> Path:
    """Two prompts; in the first turn's run, between a call and its result, `hidden`."""
    call = {"type": "toolCall", "id": "call_code", "name": "tool_search_code", "arguments": {"code": "..."}}
    messages = [
        {"role": "user", "content": "Save 'call the bank' to notes.txt."},
        {"role": "assistant", "content": [call], "stopReason": "toolUse"},
        hidden,
        {
            "role": "toolResult",
            "toolCallId": "call_code",
            "toolName": "tool_search_code",
            "content": [{"type": "text", "text": "done"}],
            "isError": False,
        },  # fmt: skip
        {"role": "assistant", "content": [{"type": "text", "text": "Saved."}], "stopReason": "stop"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": [{"type": "text", "text": "You're welcome."}], "stopReason": "stop"},
    ]
    lines = [{"type": "session", "version": version, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}]
    parent = None
    for n, message in enumerate(messages, 1):
        message = {"timestamp": 1796127790000 + n, **message}
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": "2026-09-10T10:00:01.000Z", "message": message})  # fmt: skip
        parent = f"e{n}"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_openclaws_nested_tool_record_starts_no_turn(tmp_path: Path) -> None:
    path = load_transcript(_session(tmp_path, NESTED, 4)).leaf_path()
    turns = split_turns(path, agent=profile_named("openclaw@2026.9.6"))
    assert [t.user_text() for t in turns] == ["Save 'call the bank' to notes.txt.", "thanks"]
    assert [t.answer() for t in turns] == ["Saved.", "You're welcome."]
    assert set(turns[0].results) == {"call_code"}


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_a_bang_bang_command_starts_no_turn_under_any_agent(tmp_path: Path, agent: str) -> None:
    path = load_transcript(_session(tmp_path, BANG_BANG, 3)).leaf_path()
    assert len(split_turns(path, agent=profile_named(agent))) == 2


def test_pi_shows_a_custom_message_whatever_its_mark(tmp_path: Path) -> None:
    """pi's `convertToLlm` sends every `custom` message (it reads no `excludeFromContext` on one):
    under pi's rules it is an input, and starts a turn."""
    path = load_transcript(_session(tmp_path, NESTED, 3)).leaf_path()
    assert len(split_turns(path, agent=profile_named("pi@0.73.1"))) == 3
    assert len(split_turns(path)) == 3  # the fallback's rules


def _command_session(tmp_path: Path, flag: object) -> Path:
    """A prompt, a context-free command and its injected reply, both marked with `flag`, a prompt."""
    said = [
        ("user", "Where is my order?", None),
        ("assistant", "On its way.", None),
        ("user", "/status", flag),
        ("assistant", "Model: fixture.", flag),
        ("user", "Cancel it, please.", None),
        ("assistant", "Cancelled.", None),
    ]
    lines = [{"type": "session", "version": 4, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}]
    for n, (role, text, mark) in enumerate(said, 1):
        content = text if role == "user" else [{"type": "text", "text": text}]
        message = {"role": role, "content": content, "timestamp": 1796127790000 + n}
        if role == "assistant":
            message["stopReason"] = "stop"
        if mark is not None:
            message["excludeFromContext"] = mark
        parent = f"e{n - 1}" if n > 1 else None
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": "2026-09-10T10:00:01.000Z", "message": message})  # fmt: skip
    path = tmp_path / "command.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_openclaw_drops_an_excluded_message_of_any_role_from_its_turns(tmp_path: Path) -> None:
    """OpenClaw 2026.9.6's `projectSessionEntryMessage` leaves out a message of any role marked
    `excludeFromContext: true` (a context-free command and the reply the gateway injected): no turn
    starts at it and it is no step. pi 0.73.1 shows both: a turn of their own."""
    path = load_transcript(_command_session(tmp_path, True)).leaf_path()
    turns = split_turns(path, agent=profile_named("openclaw@2026.9.6"))
    assert [t.user_text() for t in turns] == ["Where is my order?", "Cancel it, please."]
    assert [t.answer() for t in turns] == ["On its way.", "Cancelled."]
    assert len(split_turns(path, agent=profile_named("pi@0.73.1"))) == 3


def test_openclaw_drops_a_user_or_assistant_message_only_when_its_mark_is_true(tmp_path: Path) -> None:
    """For these roles OpenClaw tests `excludeFromContext === true`: a truthy mark of another type
    leaves the message in its context, and a turn."""
    path = load_transcript(_command_session(tmp_path, 1)).leaf_path()
    assert len(split_turns(path, agent=profile_named("openclaw@2026.9.6"))) == 3


def test_an_excluded_reply_that_called_a_tool_is_a_step_of_its_prompts_turn(tmp_path: Path) -> None:
    """OpenClaw 2026.9.6 leaves the excluded reply out of every context it rebuilds but keeps its
    tool result (`buildSessionContext`), and its history activity counts the call and its result
    in the turn of the prompt before them (`projectAgentHistoryActivity`): the reply is a step, the
    result is its turn's and starts no turn (no compaction point in the middle of a run)."""
    path = load_transcript(excluded_call_session(tmp_path)).leaf_path()
    turns = split_turns(path, agent=profile_named("openclaw@2026.9.6"))
    assert [t.user_text() for t in turns] == ["Clean up /tmp.", "thanks"]
    assert [[e.id for e in t.inputs] for t in turns] == [["e1"], ["e7"]]
    assert [[e.id for e in t.steps] for t in turns] == [["e2", "e4", "e6"], ["e8"]]
    assert {k: v.id for k, v in turns[0].results.items()} == {"call_a": "e3", "call_b": "e5"}
    assert [t.answer() for t in turns] == ["Cleaned.", "You're welcome."]


def test_an_items_memo_splits_a_path_once_per_agent_and_hands_out_copies(tmp_path: Path) -> None:
    from replaylab.transcript.memo import ItemMemo

    memo = ItemMemo()
    path = load_transcript(_session(tmp_path, NESTED, 4)).leaf_path()
    openclaw, pi = profile_named("openclaw@2026.9.6"), profile_named("pi@0.73.1")
    first = split_turns(path, memo, agent=openclaw)
    first[0].steps.clear()  # a caller's change reaches no later caller
    again = split_turns(list(path), memo, agent=openclaw)
    assert again == split_turns(path, agent=openclaw) and again[0].steps
    assert split_turns(path, memo, agent=pi) == split_turns(path, agent=pi)
    assert split_turns(path[:-1], memo, agent=openclaw) == split_turns(path[:-1], agent=openclaw)
