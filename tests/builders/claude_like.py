"""A small Claude Code-like session (Bash and Edit calls answered from a recorded-tool cassette)
and a replay of some of its calls through the real `ToolExecutor`, for the tests of what a
blocked call is reported against: the recorded call at its step, the nearest one as a hint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.transcripts import message_chain_jsonl
from replaylab.cassette import cassette_path_for, recorded_tool_interaction, write_cassette
from replaylab.replay import ToolExecutor
from replaylab.replay.tools.recorded_results import RecordedResults
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ToolCallBlock

#: a long file text whose edit differs only deep inside (`OLD_STRING` vs `changed_old_string()`)
OLD_STRING = "".join(f"    line {n:03d}: keep this exactly as it is\n" for n in range(40))
FILE = "/home/USER/project/lib/app.ex"
CHECKOUT = {"command": "git checkout -b refactor", "description": "New branch"}
MKDIR = {"command": "mkdir -p build/assets", "description": "Make the folder"}
EDIT = {"file_path": FILE, "old_string": OLD_STRING, "new_string": "replaced\n", "replace_all": False}


def changed_old_string() -> str:
    """`OLD_STRING` with one word changed in its 21st line (character ~870 of ~1,640)."""
    return OLD_STRING.replace("line 020: keep this", "line 020: KEEP this")


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}],
        "stopReason": "toolUse",
    }


def _result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }


def write_session(folder: Path) -> Path:
    """Turn 1: `git checkout -b refactor`; turn 2: `mkdir -p build/assets`, then an Edit of a long
    `old_string`, then the answer."""
    messages = [
        {"role": "user", "content": "start a refactor branch"},
        _call("t1", "Bash", CHECKOUT),
        _result("t1", "Bash", "Switched to a new branch 'refactor'"),
        {"role": "assistant", "content": [{"type": "text", "text": "On branch refactor."}], "stopReason": "stop"},
        {"role": "user", "content": "make the assets folder and fix app.ex"},
        _call("t2", "Bash", MKDIR),
        _result("t2", "Bash", ""),
        _call("t3", "Edit", EDIT),
        _result("t3", "Edit", "The file has been updated."),
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop"},
    ]
    path = folder / "claude-like.jsonl"
    path.write_bytes(message_chain_jsonl(messages))
    write_cassette(
        cassette_path_for(path),
        [
            recorded_tool_interaction("Bash", CHECKOUT, "Switched to a new branch 'refactor'"),
            recorded_tool_interaction("Bash", MKDIR, ""),
            recorded_tool_interaction("Edit", EDIT, "The file has been updated."),
        ],
    )
    return path


def executor_for(path: Path) -> ToolExecutor:
    """The executor a replay of the whole session uses (nothing before the starting point)."""
    classifier = ToolClassifier(declared={"Bash": "write", "Edit": "write", "Write": "write"})
    leaf = load_transcript(path).leaf_path()
    return ToolExecutor(cassette_path_for(path), classifier, recorded=RecordedResults.of(leaf))


def call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name=name, arguments=arguments)


def edit_item(folder: Path) -> Any:
    """A failed item whose one finding is the Edit of turn 2 blocked: its `old_string` differs
    from the recorded one only in its 21st line (`changed_old_string`)."""
    return blocked_item(folder, call("x1", "Edit", {**EDIT, "old_string": changed_old_string()}), turn=2, step=1)


def blocked_item(folder: Path, blocked: ToolCallBlock, *, turn: int, step: int) -> Any:
    """A failed item whose findings are those of replaying `blocked` at `turn`, `step`."""
    from replaylab.results import ItemResult

    executor = executor_for(write_session(folder))
    with executor:
        executor.execute(blocked, turn=turn, step=step)
    return ItemResult(
        id="claude-like.jsonl::auto",
        suite="claude",
        scenario="auto",
        recording="claude-like.jsonl",
        outcome="failed",
        reason="1 blocking defect",
        defects=executor.defects,
    )
