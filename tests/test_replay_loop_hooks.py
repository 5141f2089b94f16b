"""The agent loop's hooks for the compaction engine: the per-call context guard and the overflow
recovery hook, with the real `guard_context` from replaylab.compaction.truncation."""

from __future__ import annotations

from pathlib import Path

from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.compaction.truncation import ContextOverflowError, guard_context
from replaylab.replay import ToolExecutor, make_model, run_turns, split_turns
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import TranscriptWriter, load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import UserMessage, message_text

BIG = "HEAD-LINE\n" + "\n".join(f"row {i}: filler text for the handbook" for i in range(900)) + "\nSECRET-CODE-7731 in the middle\n" \
    + "\n".join(f"row {i}: more filler" for i in range(900)) + "\nTAIL-LINE done"


def _session(tmp_path: Path) -> Path:
    def msg(i, parent, message):
        return {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:00Z",
                "message": message}

    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        msg(1, None, {"role": "user", "content": "Please fetch the handbook."}),
        msg(2, "e1", {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "get_doc",
                                                        "arguments": {"doc": "handbook"}}], "stopReason": "toolUse"}),
        msg(3, "e2", {"role": "toolResult", "toolCallId": "c1", "toolName": "get_doc",
                      "content": [{"type": "text", "text": BIG}], "isError": False}),
        msg(4, "e3", {"role": "assistant", "content": [{"type": "text", "text": "Fetched."}], "stopReason": "stop"}),
        msg(5, "e4", {"role": "user", "content": "What is the code?"}),
        msg(6, "e5", {"role": "assistant", "content": [{"type": "text", "text": "The code is SECRET-CODE-7731."}],
                      "stopReason": "stop"}),
    ]
    path = tmp_path / "s.jsonl"
    TranscriptWriter.create_new(path, lines)
    write_cassette(tmp_path / "s.cassette.yaml", [recorded_tool_interaction("get_doc", {"doc": "handbook"}, BIG)])
    return path


def _run(path: Path, **hooks):
    transcript = load_transcript(path)
    classifier = ToolClassifier(declared={"get_doc": "read"})
    executor = ToolExecutor(path.with_name("s.cassette.yaml"), classifier)
    model = make_model("replay", recording=transcript)
    return run_turns([], split_turns(transcript.leaf_path()), model, executor, label="compacted",
                     return_window=True, **hooks)


def test_context_guard_shrinks_each_call_not_the_window(tmp_path):
    path = _session(tmp_path)
    plain, plain_window = _run(path)
    guarded, guarded_window = _run(path, context_guard=lambda w: guard_context(w, 4000)[0])
    assert plain.turns[1].answer == "The code is SECRET-CODE-7731."
    # the guard cut the 40k-char result for the calls after it, so the code in its middle is no
    # longer visible to the model: the replay model marks it lost
    assert "SECRET-CODE-7731" not in guarded.turns[1].answer and "⟨lost:" in guarded.turns[1].answer
    assert max(guarded.turns[1].context_tokens) < max(plain.turns[1].context_tokens)
    # ... but only for the call: the run's own window still holds the whole result
    assert any(BIG in message_text(m.message) for m in guarded_window)
    assert len(guarded_window) == len(plain_window)


def test_overflow_hook_gets_the_guard_error_and_its_window_is_retried(tmp_path):
    path = _session(tmp_path)
    seen: list[str] = []

    def strict_guard(window):
        if any(isinstance(m.message, UserMessage) and "fetch" in str(m.message.content) for m in window):
            raise ContextOverflowError()
        return window

    def recover(window, error):
        seen.append(str(error))
        return [m if not (isinstance(m.message, UserMessage) and "fetch" in str(m.message.content))
                else WindowMessage(m.entry_id, UserMessage(content="(summarized request)")) for m in window]

    trace, _ = _run(path, context_guard=strict_guard, on_overflow=recover)
    assert seen and seen[0].startswith("Context overflow:") and trace.error is None
    assert [t.answer for t in trace.turns][1].startswith("The code is")


def test_overflow_without_recovery_ends_the_run_with_the_error(tmp_path):
    path = _session(tmp_path)

    def always_over(window):
        raise ContextOverflowError()

    trace, _ = _run(path, context_guard=always_over, on_overflow=lambda w, e: None)
    assert trace.error is not None and "Context overflow" in trace.error
