"""Claude Code's assistant records as pi's messages: the records of one API response are one
message, and the messages Claude Code writes itself (model `<synthetic>`: an API error, "No
response requested.") are no model's answer: their usage of zeros is no context size, and an API
error is pi's failed call."""

from __future__ import annotations

import json
from pathlib import Path

from builders.claude_code_logs import SESSION, Log
from replaylab.importers import import_sessions, write_session
from replaylab.transcript.foreign import CLAUDE_CODE, detect_foreign
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry
from replaylab.transcript.tokens import estimate_context_tokens

ZEROS = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _synthetic(log: Log, text: str, *, api_error: bool) -> dict:
    message = {"id": f"synthetic-{log.n}", "role": "assistant", "model": "<synthetic>", "stop_reason": "stop_sequence"}
    message |= {"content": [{"type": "text", "text": text}], "usage": ZEROS}
    return log.add("assistant", message, **({"isApiErrorMessage": True} if api_error else {}))


def test_an_api_error_is_a_failed_call_and_no_synthetic_message_gives_the_context_size(tmp_path: Path) -> None:
    log = Log(version="2.1.39")
    log.user("summarize the logs")
    log.say("The logs show three restarts.")["message"]["usage"] = {"input_tokens": 24_000, "output_tokens": 40}
    log.user("now refund order 7")
    _synthetic(log, "API Error: 529 Overloaded", api_error=True)
    log.user("[Request interrupted by user]")
    _synthetic(log, "No response requested.", api_error=False)
    log.user("try again")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    written, _ = write_session(session, tmp_path / "out")
    messages = [e.message for e in load_transcript(written).path_to() if isinstance(e, MessageEntry)]
    answers = [m for m in messages if isinstance(m, AssistantMessage)]

    failed, declined = answers[1], answers[2]
    assert failed.stop_reason == "error" and failed.error_message == "API Error: 529 Overloaded"
    assert failed.usage is None and declined.usage is None and declined.stop_reason == "stop"
    # pi's estimate reads the last real answer's usage, not the zeros Claude Code wrote
    assert estimate_context_tokens(messages) > 24_000


def test_the_records_of_one_response_are_one_message_and_a_reused_id_later_is_another(tmp_path: Path) -> None:
    """Claude Code splits a response over records sharing `message.id`, with the results of its
    calls written between them: one message. The same id again after a prompt (no real file
    does this) is a message of its own, so no call moves away from its result."""
    log = Log(version="2.1.39")
    log.user("read both configs")
    first = log.call("toolu_P1", "Read", {"file_path": "a.toml"}, message_id="msg_reused")
    log.result("toolu_P1", "a = 1", parent=first["uuid"])
    log.call("toolu_P2", "Read", {"file_path": "b.toml"}, message_id="msg_reused")
    log.result("toolu_P2", "b = 2")
    log.say("a is 1, b is 2.")
    log.user("and the third?")
    log.call("toolu_P3", "Read", {"file_path": "c.toml"}, message_id="msg_reused")
    log.result("toolu_P3", "c = 3")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    written, _ = write_session(session, tmp_path / "out")
    transcript = load_transcript(written)
    answers = [
        e.message
        for e in transcript.path_to()
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    ]

    assert [[c.id for c in a.tool_calls()] for a in answers] == [["toolu_P1", "toolu_P2"], [], ["toolu_P3"]]
    assert transcript.diagnostics == []


def test_an_answer_written_as_one_string_is_one_text_block(tmp_path: Path) -> None:
    """The API takes a message's content as a string too; read block by block, a string would be
    one text block per character."""
    log = Log(version="2.1.39")
    log.user("what is the title?")
    log.add("assistant", {"id": "msg_s", "role": "assistant", "model": "claude-x", "content": "It is Replaylab."})
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    answer = session.entries[-1]["message"]
    assert answer["content"] == [{"type": "text", "text": "It is Replaylab."}]


def test_a_call_or_a_result_without_an_id_pairs_with_nothing_and_is_named(tmp_path: Path) -> None:
    """A call and a result that carry no id are each a gap of the source: never the id "None",
    which would pair them (and every other id-less call and result) by accident."""
    log = Log(version="2.1.39")
    log.user("clean up")
    log.add("assistant", {"id": "msg_a", "role": "assistant", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "rm -rf build"}}]})  # fmt: skip
    log.add("user", {"role": "user", "content": [{"type": "tool_result", "content": "removed"}]})
    log.add("assistant", {"id": "msg_b", "role": "assistant", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]})  # fmt: skip
    log.say("Done.")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    written, _ = write_session(session, tmp_path / "out")
    text = written.read_text(encoding="utf-8")
    assert '"None"' not in text
    entries = [e for e in load_transcript(written).path_to() if isinstance(e, MessageEntry)]
    calls = [c.id for e in entries if isinstance(e.message, AssistantMessage) for c in e.message.tool_calls()]
    results = [e.message.tool_call_id for e in entries if e.message.role == "toolResult"]
    assert len(set(calls)) == 2 and len(results) == 1 and not set(calls) & set(results)
    assert sum("has no id" in note for note in session.notes) == 2
    assert sum("names no call (no tool_use_id)" in note for note in session.notes) == 1


def test_the_header_takes_each_field_from_the_first_record_that_has_it(tmp_path: Path) -> None:
    """A `claude -p` log starts with a `queue-operation` record, which has no `cwd`, `version` or
    `gitBranch`."""
    log = Log(version="2.1.14")
    log.user("hello", cwd="/work/app", gitBranch="main")
    log.say("Hi.", cwd="/work/app", gitBranch="main")
    queued = {"type": "queue-operation", "operation": "dequeue", "timestamp": "2025-08-01T09:59:59.000Z"}
    path = log.write(tmp_path / f"{SESSION}.jsonl", [queued | {"sessionId": SESSION}, *log.records])
    (session,) = import_sessions("claude-code", path)
    assert session.header["cwd"] == "/work/app"
    source = session.header["source"]
    assert (source["claudeCodeVersion"], source["gitBranch"], source["sessionId"]) == ("2.1.14", "main", SESSION)


def test_records_without_a_message_id_or_uuid_are_each_a_response_of_their_own(tmp_path: Path) -> None:
    """A log stripped of its ids (a viewer's fixture) still has one response per record: never
    every answer merged into one, its calls and its final words before their results."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Run the test suite"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "npm test"}}],
            },
        },  # fmt: skip
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "FAIL"}]},
        },  # fmt: skip
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "a.ts"}}],
            },
        },  # fmt: skip
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]},
        },  # fmt: skip
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "One test fails."}]},
        },  # fmt: skip
    ]
    path = tmp_path / "fixture.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert detect_foreign(path) is CLAUDE_CODE  # as init finds it
    (session,) = import_sessions("claude-code", path)
    said = []
    for entry in session.entries:
        message = entry["message"]
        said += [b.get("name") or b.get("text") for b in message["content"]] if message["role"] == "assistant" else [message["role"]]  # fmt: skip
    assert said == ["user", "Bash", "toolResult", "Read", "toolResult", "One test fails."]


def test_a_virtual_record_is_kept_out_of_the_conversation_the_model_saw(tmp_path: Path) -> None:
    """2.1.332 writes the calls a script ran for a tool (`isVirtual: true` user and assistant
    records, its session writer's `xo`/`ho`) into the session; its `yu` keeps them out of every
    API request. They are no step of the model's and no call it made: kept as custom entries,
    which no agent shows the model, while the tool call that ran the script stays the model's."""
    log = Log(version="2.1.332")
    log.user("run the sweep")
    log.call("toolu_W", "Workflow", {"name": "sweep"})
    log.call("toolu_S1", "Write", {"file_path": "a.txt", "content": "hi"}, isVirtual=True)
    log.result("toolu_S1", "", isVirtual=True)
    log.result("toolu_W", "done")
    log.say("Done.")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    write_session(session, tmp_path / "out")
    transcript = load_transcript(tmp_path / "out" / f"{session.name}.jsonl")

    said = [e.message.role for e in transcript.path_to() if isinstance(e, MessageEntry)]
    assert said == ["user", "assistant", "toolResult", "assistant"]
    virtual = [e for e in session.entries if e["type"] == "custom"]
    assert [e["customType"] for e in virtual] == ["claude-code:assistant", "claude-code:user"]
    assert all(e["data"]["isVirtual"] is True for e in virtual)
    assert any("isVirtual" in note and "never sent the model" in note for note in session.notes)


def test_a_virtual_record_between_the_records_of_one_response_does_not_split_it(tmp_path: Path) -> None:
    """A script's call can be written while the response that started it is still being
    written (one record per block): the response stays one assistant message."""
    log = Log(version="2.1.332")
    log.user("run it")
    log.call("toolu_W", "Workflow", {"name": "sweep"}, message_id="msg_A")
    log.call("toolu_S1", "Read", {"file_path": "a.txt"}, isVirtual=True)
    log.result("toolu_S1", "", isVirtual=True)
    log.call("toolu_B", "Bash", {"command": "ls"}, message_id="msg_A")
    log.result("toolu_W", "done")
    log.result("toolu_B", "a.txt")
    log.say("Done.")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))

    calls = [
        [b.get("name") or b.get("text") for b in e["message"]["content"]]
        for e in session.entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert calls == [["Workflow", "Bash"], ["Done."]]
