"""`content: null` read as pi reads it (`transcript.null_content`): the message is kept with an
empty content and a warning, its children stay on the path, and the eager and the lazy load agree
(the lazy one re-reads the line and repairs it again). tests/oracles/test_pi_1_6_0.py checks the
window against pi 1.6.0."""

from __future__ import annotations

from builders.linear import linear_jsonl, message
from replaylab.transcript import loads_transcript

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
DATA = linear_jsonl(
    HEADER,
    message("user", "hi"),
    message("assistant", None, stopReason="stop"),
    message("user", None),
    {"type": "custom_message", "customType": "note", "content": None, "display": False},
    message("user", "after"),
)


def test_a_null_content_is_an_empty_one_with_a_warning_and_nothing_is_skipped() -> None:
    for lazy in (False, True):
        transcript = loads_transcript(DATA, lazy=lazy)
        path = transcript.leaf_path()
        assert [e.id for e in path] == ["e1", "e2", "e3", "e4", "e5"], lazy
        assert path[1].message.content == [] and path[2].message.content == [] and path[3].content == []
        assert [(d.code, d.severity, d.entry_id) for d in transcript.diagnostics] == [
            ("null-content", "warning", "e2"),
            ("null-content", "warning", "e3"),
            ("null-content", "warning", "e4"),
        ]


def test_a_content_of_the_wrong_kind_is_still_an_error() -> None:
    from replaylab.transcript.model import UnreadableEntry

    for lazy in (False, True):
        transcript = loads_transcript(linear_jsonl(HEADER, message("user", 42), message("user", "next")), lazy=lazy)
        assert [d.severity for d in transcript.diagnostics][0] == "error"
        # no message, but on the path: the agents' paths run through it
        assert isinstance(transcript.by_id["e1"], UnreadableEntry)
        assert [e.id for e in transcript.leaf_path()] == ["e1", "e2"]


def test_the_null_is_remembered_written_back_and_read_as_each_agent_reads_it() -> None:
    """pi 1.6.0 sends `[]`, pi 0.73.1 holds the null, OpenClaw's entry schema keeps the entry
    aside (`readableMessageSchema`: a list, or a string). Before: `[]` for every profile, written
    back as `[]`, in OpenClaw's window."""
    import orjson

    from builders.linear import linear_jsonl
    from replaylab.agents import rules_of
    from replaylab.oracles.compare import message_as_pi_holds_it
    from replaylab.transcript.model import dump_entry

    data = linear_jsonl(
        HEADER,
        message("user", "hi"),
        message("assistant", None, stopReason="stop"),
        message("toolResult", None, toolCallId="c", toolName="read", isError=False),
        message("user", "after"),
    )
    path = loads_transcript(data).leaf_path()
    assert [dump_entry(e) for e in path] == [orjson.loads(line) for line in data.splitlines()[1:]]
    openclaw = rules_of("openclaw@2026.9.6")
    assert [w.entry_id for w in openclaw.window(path)] == ["e1", "e4"]
    assert [e.id for e, _ in openclaw.kept_aside(path)] == ["e2", "e3"]
    for name, held in (("pi@1.6.0", []), ("pi@0.73.1", None)):
        window = rules_of(name).window(path)
        assert [w.entry_id for w in window] == ["e1", "e2", "e3", "e4"], name
        assert [message_as_pi_holds_it(w.message)["content"] for w in window[1:3]] == [held, held], name
