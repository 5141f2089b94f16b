"""A mutating call of a reply OpenClaw leaves out of its contexts (`excludeFromContext: true`) is in
the ledger: the call ran, whatever the model is shown later. Split from test_ledger.py by
responsibility (the excluded-reply case of OpenClaw 2026.9.6's profile)."""

from __future__ import annotations

from pathlib import Path

from builders.excluded_calls import excluded_call_session
from replaylab.agents import rules_of
from replaylab.safety import ToolClassifier, build_ledger, ledger_for_window
from replaylab.transcript.load import load_transcript


def test_a_mutating_call_of_an_excluded_reply_stays_in_the_ledger(tmp_path: Path) -> None:
    """The path's ledger holds the call at its entry with its result; the window OpenClaw rebuilds
    shows only the result (`buildSessionContext`), and the window's ledger still counts the call
    by it, as one known only by its result: no mutation is lost from either."""
    transcript = load_transcript(excluded_call_session(tmp_path))
    classifier = ToolClassifier()
    events = build_ledger(transcript, classifier).events
    assert [(e.tool_call_id, e.entry_id, e.result_entry_id) for e in events] == [
        ("call_a", "e2", "e3"),
        ("call_b", "e4", "e5"),
    ]
    window = rules_of("openclaw@2026.9.6").window(transcript.path_to("e6"))
    assert [w.entry_id for w in window] == ["e1", "e2", "e3", "e5", "e6"]
    shown = ledger_for_window(window, classifier).events
    assert [(e.tool_call_id, e.result_entry_id) for e in shown] == [("call_a", "e3"), ("call_b", "e5")]
    assert all(e.tool_class == "exec" for e in shown)
