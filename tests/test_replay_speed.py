"""The replay engine's caches (issue 8) never serve a stale value.

Each cache that makes a replayed session cheaper is checked against the uncached computation
on inputs that change between calls: a window that is replaced, changed in place or shrunk, a
second recording with the same entry ids, a message at an address a cached one had, a rewritten
cassette file. No timing is asserted anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.cassette import canonical_json, recorded_tool_interaction, write_cassette
from replaylab.replay import (
    ReplayModel,
    ToolExecutor,
    WindowTokenCount,
    make_model,
    run_turns,
    split_turns,
)
from replaylab.replay.executor import recorded_tool_key, recorded_tool_request
from replaylab.replay.grounding import (
    SEP,
    RecordingText,
    VisibleText,
    WindowText,
    grounding_text,
)
from replaylab.replay.loop import window_tokens
from replaylab.transcript.memo import IdentityMemo
from replaylab.replay.playback import open_playback, request_key
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.load import loads_transcript
from replaylab.transcript.model import (
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.transcript.tokens import estimate_tokens

ORDER = "ORD-55210"


def _recording(user_text: str, lookup_result: str):
    """user → lookup_order(ORD-55210) → result → answer; entry ids e0… are the same for every
    text, so two recordings differ only in what their entries say."""
    messages = [
        {"role": "user", "content": user_text},
        {"role": "assistant", "stopReason": "toolUse",
         "content": [{"type": "toolCall", "id": "c1", "name": "lookup_order", "arguments": {"order_id": ORDER}}]},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "lookup_order", "isError": False,
         "content": [{"type": "text", "text": lookup_result}]},
        {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": f"{ORDER} shipped."}]},
    ]
    lines = [{"type": "session", "version": 3, "id": "speed"}]
    lines += [{"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None,
               "timestamp": "2026-01-01T00:00:00.000Z", "message": m} for i, m in enumerate(messages)]
    return loads_transcript(b"\n".join(orjson.dumps(line) for line in lines))


def _result(text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id="x", tool_name="t", content=[TextBlock(text=text)], is_error=False)


def _items(*texts: str) -> list[WindowMessage]:
    return [WindowMessage(f"w{i}", _result(t)) for i, t in enumerate(texts)]


def _plain_sum(window) -> int:
    return sum(estimate_tokens(w.message) for w in window)


# ---------------------------------------------------------------- token counts


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


def test_per_message_token_cache_is_checked_by_identity():
    message = _result("x" * 400)
    memo = IdentityMemo()
    memo.values[id(_result("short"))] = (_result("short"), 1)
    memo.values[id(message)] = (_result("stale"), 7)  # an entry under this address, for another object
    assert window_tokens([WindowMessage("m", message)], memo) == 100


def test_context_tokens_of_a_run_are_those_of_the_window_each_call_saw():
    recording = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    turns = split_turns(recording.leaf_path())
    seen: list[int] = []
    model = make_model("replay", recording=recording)
    complete = model.complete

    def complete_and_note(window, tools):
        seen.append(_plain_sum(window))
        return complete(window, tools)

    model.complete = complete_and_note
    shrink = iter([False, True])

    def guard(window):  # the second call sees a window without its first message
        return window[1:] if next(shrink) else window

    executor = ToolExecutor(Path("/nonexistent/cassette.yaml"), ToolClassifier())
    trace, window = run_turns([], turns, model, executor, label="baseline", context_guard=guard,
                              return_window=True)
    assert trace.error is None
    assert trace.turns[0].context_tokens == seen
    assert seen == [_plain_sum(window[:1]), _plain_sum(window[1:3])]


def test_a_shared_token_count_sees_a_changed_window_between_runs():
    recording = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    turns = split_turns(recording.leaf_path())
    count = WindowTokenCount()
    executor = ToolExecutor(Path("/nonexistent/cassette.yaml"), ToolClassifier())
    start = _items("f" * 400)
    first = run_turns(start, turns, make_model("replay", recording=recording), executor, label="compacted",
                      token_count=count)
    start[0] = WindowMessage("w0", _result("g" * 40))  # the same list, one message swapped in place
    second = run_turns(start, turns, make_model("replay", recording=recording), executor, label="compacted",
                       token_count=count)
    assert first.turns[0].context_tokens[0] - second.turns[0].context_tokens[0] == 100 - 10


# ---------------------------------------------------------------- shared recording text and plans


def test_two_recordings_with_the_same_entry_ids_do_not_share_grounding():
    learned = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    not_learned = _recording("Where is my order?", '{"status": "shipped"}')
    for recording, lost in ((learned, True), (not_learned, False), (learned, True)):
        model = ReplayModel(recording)
        step = split_turns(recording.leaf_path())[0].steps[0]
        grounded = model.ground_step(step, [WindowMessage("u", UserMessage(content="Where is my order?"))])
        assert [c.value for c in grounded.lost] == ([ORDER] if lost else [])
        assert (grounded.message is step.message) is not lost


def test_the_tool_schemas_of_each_call_decide_what_is_visible():
    recording = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    model = ReplayModel(recording)
    step = split_turns(recording.leaf_path())[0].steps[0]
    window = [WindowMessage("u", UserMessage(content="Where is my order?"))]
    naming = [{"name": "lookup_order", "description": f"e.g. {ORDER}"}]
    for tools, lost in ((naming, []), ([{"name": "lookup_order"}], [ORDER]), (naming, [])):
        assert [c.value for c in model.ground_step(step, window, list(tools)).lost] == lost


def test_the_same_recording_shares_one_text_and_a_reload_gets_its_own():
    recording = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    baseline, compacted = make_model("replay", recording=recording), make_model("replay", recording=recording)
    assert compacted.history is baseline.history
    reloaded = _recording(f"Where is {ORDER}?", '{"status": "shipped"}')
    assert ReplayModel(reloaded).history is not baseline.history
    others = [_recording(f"order {n}", "{}") for n in range(RecordingText.SHARED_MAX)]
    for other in others:
        ReplayModel(other)
    assert ReplayModel(recording).history is not baseline.history  # dropped, built again
    assert ReplayModel(recording).history.full == baseline.history.full


def test_shared_plans_equal_freshly_computed_ones():
    recording = _recording(f"Customer asks about {ORDER} and ORD-1", '{"id": "ORD-1", "carrier": "UPS-22"}')
    shared = ReplayModel(recording)
    fresh = ReplayModel(recording)
    fresh.history = RecordingText(recording.leaf_path())
    for step in (s for t in split_turns(recording.leaf_path()) for s in t.steps):
        assert shared.plan(step) == fresh.plan(step)


# ---------------------------------------------------------------- window text


def test_known_message_texts_are_checked_by_identity():
    message, other = _result("the real text"), _result("another text")
    text = WindowText(known={id(message): (other, "stale")})
    assert text.text_of(message) == grounding_text(message)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ab", "C1001", "x\x00y", "", "ORD-7"]), max_size=4), max_size=40),
       st.integers(min_value=0, max_value=3))
def test_window_text_pieces_join_to_the_whole_text(growth, drop):
    text = WindowText()
    window: list = []
    for step, added in enumerate(growth):
        window = window + [_result(t) for t in added]
        if step == drop:
            window = window[1:]  # not a prefix of the last window: built again
        pieces = text.blocks(window)
        expected = (SEP + SEP.join(grounding_text(m) for m in window)) if window else ""
        assert "".join(pieces) == expected
        assert all(piece.startswith(SEP) for piece in pieces)
        assert len(pieces) <= WindowText.MAX_BLOCKS
    assert WindowText()(window) == text(window) == ("".join(text.blocks(window)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00", max_size=6), max_size=5), st.text(alphabet="ab\x00", min_size=1, max_size=4))
def test_visible_text_answers_like_the_joined_text(tails, value):
    pieces = ["ab"] + [SEP + tail for tail in tails]
    assert (value in VisibleText(pieces)) == (value in "".join(pieces))


def test_visible_text_refuses_pieces_that_could_join_a_value():
    with pytest.raises(ValueError):
        VisibleText(["ab", "cd"])


# ---------------------------------------------------------------- cassette fast path

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["lookup_order", "send-email", "x.y", "a b", "q?x=1"]),
       st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4))
def test_recorded_tool_key_is_the_request_key_of_the_recorded_tool_request(name, args):
    """The key the playback serves by, the key of replaylab's own request record, and the key of
    the vcrpy `Request` of the same fields (what vcrpy's side matches) are one value."""
    from vcr.request import Request

    request = recorded_tool_request(name, args)
    vcr_request = Request(request.method, request.uri, request.body, request.headers)
    assert recorded_tool_key(name, args) == request_key(request) == request_key(vcr_request)
    assert (request.path, request.query) == (vcr_request.path, vcr_request.query)


def _cassette(path: Path, *results: str) -> Path:
    write_cassette(path, [recorded_tool_interaction("lookup_order", {"order_id": ORDER}, text, is_error=False)
                          for text in results])
    return path


def _call() -> ToolCallBlock:
    return ToolCallBlock(id="c1", name="lookup_order", arguments={"order_id": ORDER})


def test_executors_of_one_cassette_share_parsing_but_not_play_counts(tmp_path):
    cassette = _cassette(tmp_path / "s.cassette.yaml", "first", "second")
    classifier = ToolClassifier(declared={"lookup_order": "read"})
    before = ToolExecutor(cassette, classifier, executed_before=[("lookup_order", {"order_id": ORDER})])
    fresh = ToolExecutor(cassette, classifier)
    assert before.cassette.data[0] is fresh.cassette.data[0]  # one parse
    with before, fresh:
        assert before.execute(_call(), turn=0, step=0)[1].result == "second"
        trace = before.execute(_call(), turn=0, step=1)[1]
        assert (trace.source, len(before.cassette.misses)) == ("missing", 1)
        assert [fresh.execute(_call(), turn=0, step=i)[1].result for i in range(2)] == ["first", "second"]
    assert before.cassette.misses[0].body == canonical_json({"order_id": ORDER}).encode()


def test_a_rewritten_cassette_is_parsed_again(tmp_path):
    cassette = _cassette(tmp_path / "s.cassette.yaml", "old answer")
    assert open_playback(cassette).play_key(recorded_tool_key("lookup_order", {"order_id": ORDER}))
    inode = cassette.stat().st_ino
    cassette.write_bytes(_cassette(tmp_path / "longer.cassette.yaml", "a newer, longer answer").read_bytes())
    assert cassette.stat().st_ino == inode  # rewritten in place: the same file, another size
    with ToolExecutor(cassette, ToolClassifier()) as executor:
        assert executor.execute(_call(), turn=0, step=0)[1].result == "a newer, longer answer"
    replacement = _cassette(tmp_path / "new.cassette.yaml", "replaced")
    os.replace(replacement, cassette)  # another file at the same path
    with ToolExecutor(cassette, ToolClassifier()) as executor:
        assert executor.execute(_call(), turn=0, step=0)[1].result == "replaced"


def test_the_parsed_cassette_cache_keeps_only_the_latest_few(tmp_path: Path) -> None:
    """A nightly run opens thousands of cassettes: the per-process cache must not keep them all,
    and a cassette pushed out is parsed again (same answers) when it is opened again."""
    from replaylab.replay import playback

    paths = []
    for i in range(playback.MAX_PARSED_CASSETTES + 5):
        path = tmp_path / f"c{i}.cassette.yaml"
        write_cassette(path, [recorded_tool_interaction("lookup_order", {"order_id": f"O-{i}"}, f"order {i}")])
        paths.append(path)
        assert open_playback(path).play_key(recorded_tool_key("lookup_order", {"order_id": f"O-{i}"}))
    assert len(playback._PARSED) <= playback.MAX_PARSED_CASSETTES
    assert open_playback(paths[0]).play_key(recorded_tool_key("lookup_order", {"order_id": "O-0"}))
