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
