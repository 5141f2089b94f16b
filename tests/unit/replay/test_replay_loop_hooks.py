"""The agent loop (replaylab/replay/loop.py): its hooks for the compaction engine (the per-call
context guard and the overflow recovery hook, with the real `guard_context` from
replaylab.compaction.truncation), the context tokens it records for each model call, and the
trace dumps of recorded messages."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from builders.transcripts import message_chain_jsonl
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.compaction.truncation import ContextOverflowError, guard_context
from replaylab.replay import ToolExecutor, WindowTokenCount, make_model, run_turns, split_turns
from replaylab.replay.loop import message_dump, recorded_run_trace, window_tokens
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import TranscriptWriter, load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.load import loads_transcript
from replaylab.transcript.memo import ItemMemo, identity
from replaylab.transcript.model import TextBlock, ToolResultMessage, UserMessage, message_text
from replaylab.transcript.tokens import estimate_tokens

BIG = (
    "HEAD-LINE\n"
    + "\n".join(f"row {i}: filler text for the handbook" for i in range(900))
    + "\nSECRET-CODE-7731 in the middle\n"
    + "\n".join(f"row {i}: more filler" for i in range(900))
    + "\nTAIL-LINE done"
)


def _session(tmp_path: Path) -> Path:
    def msg(i, parent, message):
        return {
            "type": "message",
            "id": f"e{i}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": message,
        }

    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        msg(1, None, {"role": "user", "content": "Please fetch the handbook."}),
        msg(
            2,
            "e1",
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c1", "name": "get_doc", "arguments": {"doc": "handbook"}}],
                "stopReason": "toolUse",
            },
        ),
        msg(
            3,
            "e2",
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "get_doc",
                "content": [{"type": "text", "text": BIG}],
                "isError": False,
            },
        ),
        msg(4, "e3", {"role": "assistant", "content": [{"type": "text", "text": "Fetched."}], "stopReason": "stop"}),
        msg(5, "e4", {"role": "user", "content": "What is the code?"}),
        msg(
            6,
            "e5",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "The code is SECRET-CODE-7731."}],
                "stopReason": "stop",
            },
        ),
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
    return run_turns(
        [], split_turns(transcript.leaf_path()), model, executor, label="compacted", return_window=True, **hooks
    )


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
        return [
            m
            if not (isinstance(m.message, UserMessage) and "fetch" in str(m.message.content))
            else WindowMessage(m.entry_id, UserMessage(content="(summarized request)"))
            for m in window
        ]

    trace, _ = _run(path, context_guard=strict_guard, on_overflow=recover)
    assert seen and seen[0].startswith("Context overflow:") and trace.error is None
    assert [t.answer for t in trace.turns][1].startswith("The code is")


def test_overflow_without_recovery_ends_the_run_with_the_error(tmp_path):
    path = _session(tmp_path)

    def always_over(window):
        raise ContextOverflowError()

    trace, _ = _run(path, context_guard=always_over, on_overflow=lambda w, e: None)
    assert trace.error is not None and "Context overflow" in trace.error


# ---------------------------------------------------------------- context tokens and trace dumps

ORDER = "ORD-55210"


def _order_lookup():
    """user → lookup_order(ORD-55210) → result → answer, as a loaded transcript (a new one each call)."""
    messages = [
        {"role": "user", "content": f"Where is {ORDER}?"},
        {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": "c1", "name": "lookup_order", "arguments": {"order_id": ORDER}}],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "lookup_order",
            "isError": False,
            "content": [{"type": "text", "text": '{"status": "shipped"}'}],
        },
        {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": f"{ORDER} shipped."}]},
    ]
    data = message_chain_jsonl(messages, "lookup")
    return loads_transcript(data)


def _result(text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id="x", tool_name="t", content=[TextBlock(text=text)], is_error=False)


def _items(*texts: str) -> list[WindowMessage]:
    return [WindowMessage(f"w{i}", _result(t)) for i, t in enumerate(texts)]


def _plain_sum(window) -> int:
    return sum(estimate_tokens(w.message) for w in window)


def _noting_windows(model, seen: list[int]):
    """`model` whose `complete` also notes the plain token sum of each window it is sent."""
    complete = model.complete

    def complete_and_note(window, tools):
        seen.append(_plain_sum(window))
        return complete(window, tools)

    model.complete = complete_and_note
    return model


def _no_cassette_executor() -> ToolExecutor:
    return ToolExecutor(Path("/nonexistent/cassette.yaml"), ToolClassifier())


def test_running_token_count_follows_growth_replacement_and_shrinking():
    count = WindowTokenCount()
    window = _items("a" * 40, "b" * 80)
    assert count.grown(window) == _plain_sum(window) == 30
    window.append(WindowMessage("w2", _result("c" * 400)))
    assert count.grown(window) == _plain_sum(window) == 130
    replacement = _items("d" * 4)  # an overflow hook's new window: counted from the start
    assert count.grown(replacement) == 1
    window.pop()
    window.pop()  # the same list, shorter than last counted: not a running total any more
    assert count.grown(window) == 10
    changed = list(window)
    changed[0] = WindowMessage("w0", _result("e" * 400))  # another message object at the same place
    assert count.whole(changed) == _plain_sum(changed) == 100


def test_per_message_token_estimates_are_found_by_identity():
    message = _result("x" * 400)
    memo = ItemMemo()
    memo.estimates.values[identity(message)] = (_result("stale"), 7)  # an entry under this key, for another object
    assert window_tokens([WindowMessage("m", message)], memo) == 100
    count = WindowTokenCount()
    count.estimates.values[identity(message)] = (_result("stale"), 7)
    assert count.whole([WindowMessage("m", message)]) == 100


def test_context_tokens_of_a_run_are_those_of_the_window_each_call_saw():
    recording = _order_lookup()
    seen: list[int] = []
    model = _noting_windows(make_model("replay", recording=recording), seen)
    shrink = iter([False, True])

    def guard(window):  # the second call sees a window without its first message
        return window[1:] if next(shrink) else window

    trace, window = run_turns(
        [],
        split_turns(recording.leaf_path()),
        model,
        _no_cassette_executor(),
        label="baseline",
        context_guard=guard,
        return_window=True,
    )
    assert trace.error is None
    assert trace.turns[0].context_tokens == seen
    assert seen == [_plain_sum(window[:1]), _plain_sum(window[1:3])]


def test_a_shared_token_count_sees_a_changed_window_between_runs():
    recording = _order_lookup()
    turns = split_turns(recording.leaf_path())
    count = WindowTokenCount()
    executor = _no_cassette_executor()
    start = _items("f" * 400)
    first = run_turns(
        start, turns, make_model("replay", recording=recording), executor, label="compacted", token_count=count
    )
    start[0] = WindowMessage("w0", _result("g" * 40))  # the same list, one message swapped in place
    second = run_turns(
        start, turns, make_model("replay", recording=recording), executor, label="compacted", token_count=count
    )
    assert first.turns[0].context_tokens[0] - second.turns[0].context_tokens[0] == 100 - 10


def test_a_run_continued_turn_by_turn_counts_the_windows_each_call_saw():
    """The compacted run goes on turn by turn, each `run_turns` call continuing the window the
    last returned, with one running count: every call's context tokens are still the plain sum of
    the window it was sent."""
    recording = _order_lookup()
    turns = split_turns(recording.leaf_path())
    seen: list[int] = []
    model = _noting_windows(make_model("replay", recording=recording), seen)
    count = WindowTokenCount()
    window = _items("s" * 400)
    tokens: list[int] = []
    for _ in range(3):
        trace, window = run_turns(
            window, turns, model, _no_cassette_executor(), label="compacted", return_window=True, token_count=count
        )
        tokens.extend(trace.turns[0].context_tokens)
    assert len(tokens) == 6 and tokens == seen == sorted(tokens)


def test_the_token_count_of_an_item_is_the_plain_sum():
    """With an item's memo the running count reads and fills the item's estimates and keeps none
    of its own; without one, its own memo keeps them. Both give the plain sum."""
    window = [WindowMessage(f"w{i}", _result("é" * n)) for i, n in enumerate((3, 40, 401))]
    memo = ItemMemo()
    inside, outside = WindowTokenCount(memo), WindowTokenCount()
    assert inside.grown(window) == _plain_sum(window) == inside.whole(window) == window_tokens(window, memo)
    assert inside.estimates is memo.estimates and len(memo.estimates.values) == 3
    assert outside.grown(window) == _plain_sum(window) == outside.whole(window) == window_tokens(window)
    assert outside.estimates is not memo.estimates and len(outside.estimates.values) == 3


def _trace_dump(message) -> dict:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_a_recorded_message_is_dumped_once_for_the_recorded_trace_and_both_runs(tmp_path):
    """With the item's memo, the recorded trace and both replays of one recording hold the very
    same dict for a recorded assistant message, equal to its plain dump; another load of the file
    gets dicts of its own, a grounded (changed) copy is dumped for itself, and without a memo
    every trace dumps its own."""
    recording = _order_lookup()
    turns = split_turns(recording.leaf_path())
    cassette = write_cassette(
        tmp_path / "s.cassette.yaml",
        [recorded_tool_interaction("lookup_order", {"order_id": ORDER}, '{"status": "shipped"}')],
    )
    memo = ItemMemo()

    def model():
        return make_model("replay", recording=recording, memo=memo)

    executor = ToolExecutor(cassette, ToolClassifier())
    baseline = run_turns([], turns, model(), executor, label="baseline", memo=memo)
    recorded = recorded_run_trace(turns, ToolClassifier(), memo=memo)
    compacted = run_turns([], turns, model(), executor.fresh(), label="compacted", memo=memo)
    dumps = [t.assistant_messages for t in (baseline.turns[0], recorded.turns[0], compacted.turns[0])]
    expected = [_trace_dump(e.message) for e in turns[0].steps]
    assert dumps[0] == dumps[1] == dumps[2] == expected
    assert all(a is b is c for a, b, c in zip(*dumps))
    other = _order_lookup()
    alone = recorded_run_trace(split_turns(other.leaf_path()), ToolClassifier(), memo=memo)
    assert alone.turns[0].assistant_messages == expected
    assert all(a is not b for a, b in zip(alone.turns[0].assistant_messages, dumps[0]))
    grounded = model().ground_step(turns[0].steps[0], [])
    assert grounded.message is not turns[0].steps[0].message  # the order id was lost: a changed copy
    assert message_dump(grounded.message, memo) == _trace_dump(grounded.message)
    plain = recorded_run_trace(turns, ToolClassifier())
    assert plain.turns[0].assistant_messages == expected
    assert all(a is not b for a, b in zip(plain.turns[0].assistant_messages, dumps[0]))


def _excluded_reply_run(tmp_path: Path, profile: str, model_of=None) -> tuple[list, list, object]:
    """`builders.excluded_calls`' session (a run whose second reply, marked `excludeFromContext`,
    called a tool; then a second prompt) replayed from its start under `profile`'s rules: the
    windows the model was sent, the run's last window and the path."""
    from builders.excluded_calls import excluded_call_session
    from replaylab.agents import rules_of

    recording = load_transcript(excluded_call_session(tmp_path))
    memo = ItemMemo(rules=rules_of(profile))
    path = recording.leaf_path()
    model = make_model("replay", recording=recording, memo=memo)
    if model_of is not None:
        model = model_of(model)
    windows: list[list] = []
    complete = model.complete

    def noting(window, tools):
        windows.append(list(window))
        return complete(window, tools)

    model.complete = noting
    trace, window = run_turns(
        [], split_turns(path, memo), model, _no_cassette_executor(), label="baseline", memo=memo, return_window=True
    )
    assert trace.error is None
    return windows, window, path


def _shown(window) -> list[tuple[str, str]]:
    return [(w.message.role, message_text(w.message)) for w in window]


def test_an_excluded_reply_leaves_openclaws_window_at_the_next_prompt(tmp_path: Path) -> None:
    """OpenClaw 2026.9.6 rebuilds its context from the session for each prompt, and the rebuild
    drops a reply marked `excludeFromContext: true` but keeps its tool result
    (`buildSessionContext`): the replay's window at the second prompt is that rebuild, the excluded
    reply gone. Within its own run the reply stays (no rebuild there). pi keeps it."""
    from replaylab.agents import rules_of
    from replaylab.upstream.profiles import profile_named

    windows, _, path = _excluded_reply_run(tmp_path, "openclaw@2026.9.6")
    rebuilt = rules_of("openclaw@2026.9.6").window(list(path[: [e.id for e in path].index("e7") + 1]))
    assert [w.entry_id for w in rebuilt] == ["e1", "e2", "e3", "e5", "e6", "e7"]
    second_prompt = windows[-1]
    assert [role for role, _ in _shown(second_prompt)] == [role for role, _ in _shown(rebuilt)]
    assert not any(w.entry_id == "baseline:e4" for w in second_prompt)
    assert any(w.entry_id == "baseline:e4:call_b" for w in second_prompt)  # its result stays
    assert any(w.entry_id == "baseline:e4" for w in windows[2])  # the run's own reply after it

    (tmp_path / "pi").mkdir()
    pi_windows, _, _ = _excluded_reply_run(tmp_path / "pi", "pi@0.73.1")
    assert any(w.entry_id == "baseline:e4" for w in pi_windows[-1])
    # a steered turn is no new prompt: the run's messages stay
    from replaylab.replay.loop import prompt_window

    turns = split_turns(path, ItemMemo(rules=rules_of("openclaw@2026.9.6")))
    steered = dataclasses.replace(turns[1], steered=True)
    held = pi_windows[-1]
    assert prompt_window(held, steered, profile_named("openclaw@2026.9.6"), "baseline") is held


def test_a_replayed_reply_at_an_excluded_step_is_marked_and_dropped_as_openclaw_does(tmp_path: Path) -> None:
    """A model whose reply at the excluded recorded step carries no mark (a live model, a grounded
    copy): OpenClaw marks the reply of that step whatever it says, so the replayed one is marked —
    the working copy holds it as the session would — and is gone from the next prompt's window."""
    from replaylab.transcript.model import AssistantMessage

    class Unmarked:
        def __init__(self, model):
            self.model = model
            self.begin_turn = model.begin_turn

        def complete(self, window, tools):
            message = self.model.complete(window, tools)
            copy = AssistantMessage.model_validate(message.model_dump(by_alias=True, exclude_none=True))
            copy.__pydantic_extra__ = {
                k: v for k, v in (copy.__pydantic_extra__ or {}).items() if k != "excludeFromContext"
            }
            return copy

    windows, window, _ = _excluded_reply_run(tmp_path, "openclaw@2026.9.6", Unmarked)
    assert not any(w.entry_id == "baseline:e4" for w in windows[-1])
    marked = [w for w in windows[2] if w.entry_id == "baseline:e4"]
    assert [(w.message.__pydantic_extra__ or {}).get("excludeFromContext") for w in marked] == [True]
