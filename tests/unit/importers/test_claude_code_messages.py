"""Claude Code's assistant records as pi's messages: the records of one API response are one
message, and the messages Claude Code writes itself (model `<synthetic>`: an API error, "No
response requested.") are no model's answer: their usage of zeros is no context size, and an API
error is pi's failed call."""

from __future__ import annotations

from pathlib import Path

from builders.claude_code_logs import SESSION, Log
from replaylab.importers import import_sessions, write_session
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
