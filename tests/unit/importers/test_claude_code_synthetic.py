"""The assistant messages Claude Code writes itself (model `<synthetic>`: an API error, "No
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
