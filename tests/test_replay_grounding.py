"""The context-grounded replay model's rules, turn splitting, scripts and the chat-format
conversion, on small hand-made sessions (the real-session checks are in test_replay_realdata.py)."""

from __future__ import annotations

import orjson
import pytest

from replaylab.diagnostics import InputError
from replaylab.replay import ReplayModel, calls_before, split_turns
from replaylab.replay.grounding import identifier_tokens
from replaylab.replay.llm_format import to_openai_messages
from replaylab.replay.script import load_script, substitute
from replaylab.transcript.context import WindowMessage, build_window
from replaylab.transcript.load import loads_transcript
from replaylab.transcript.model import (
    AssistantMessage,
    CompactionSummaryMessage,
    MessageEntry,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)


def _session(*messages: dict) -> list:
    lines = [{"type": "session", "version": 3, "id": "s1"}]
    parent = None
    for i, message in enumerate(messages):
        entry = {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                 "message": message}
        if message.get("role") == "custom-entry":
            entry = {"type": "custom", "id": f"e{i}", "parentId": parent, "customType": "system-prompt",
                     "data": {"content": message["content"]}}
        lines.append(entry)
        parent = f"e{i}"
    return loads_transcript(b"\n".join(orjson.dumps(x) for x in lines))


def user(text):
    return {"role": "user", "content": text}


def call(cid, name, **args):
    return {"role": "assistant", "content": [{"type": "toolCall", "id": cid, "name": name, "arguments": args}],
            "stopReason": "toolUse"}


def result(cid, text):
    return {"role": "toolResult", "toolCallId": cid, "content": [{"type": "text", "text": text}], "isError": False}


def say(text):
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}


@pytest.fixture()
def shop():
    """user → lookup → result with ids → answer; user → refund using a learned id and amount."""
    return _session(
        {"role": "custom-entry", "content": "Policy: refunds go to card_on_file. Never refund order ZZ999."},
        user("Hi, I'm cus_7Q2X"),
        call("c1", "find_orders", customer="cus_7Q2X"),
        result("c1", '{"orders": [{"id": "ord_1001", "total": 4250}]}'),
        say("You have order ord_1001."),
        user("Refund it please"),
        call("c2", "refund_order", order_id="ord_1001", amount=4250, method="card_on_file", note="ok",
             reason="Refund for ord_1001 requested by cus_7Q2X", quantity=2),
        result("c2", '{"refund_id": "re_55"}'),
        say("Refunded ord_1001 as re_55 (ref ZZ999 untouched, ticket T-12345)."),
    )


def _window(transcript, upto_id):
    path = transcript.leaf_path()
    index = [e.id for e in path].index(upto_id)
    return build_window(path[:index])


def test_own_window_reproduces_every_message_as_the_same_object(shop):
    model = ReplayModel(shop)
    for entry in shop.leaf_path():
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            grounded = model.ground_step(entry, _window(shop, entry.id))
            assert grounded.message is entry.message
            assert grounded.lost == []


def test_lost_identifier_becomes_a_marker_in_arguments_and_text(shop):
    model = ReplayModel(shop)
    refund = shop.by_id["e6"]
    # the compacted window: everything up to the refund request, without the lookup and its result
    window = [w for w in _window(shop, "e6") if w.entry_id not in ("e2", "e3", "e4")]
    grounded = model.ground_step(refund, window)
    args = grounded.message.tool_calls()[0].arguments
    assert args["order_id"] == "⟨lost:1⟩"  # learned from the tool result, no longer visible
    assert args["amount"] == "⟨lost:2⟩"  # a ≥3-digit number learned from the result
    assert args["method"] == "card_on_file"  # only in the system prompt: always visible, never lost
    assert args["note"] == "ok" and args["quantity"] == 2  # too short to count as a learned value
    # a composed string keeps its own words; only the lost identifier inside it is replaced
    assert args["reason"] == "Refund for ⟨lost:1⟩ requested by cus_7Q2X"
    assert "ord_1001" not in orjson.dumps(grounded.message.model_dump(mode="json")).decode()
    assert {c.value for c in grounded.lost} == {"ord_1001", "4250"}
    # the recorded message itself is untouched
    assert refund.message.tool_calls()[0].arguments["order_id"] == "ord_1001"


def test_text_tokens_are_grounded_and_unlearned_values_kept(shop):
    model = ReplayModel(shop)
    final = shop.by_id["e8"]
    window = [w for w in _window(shop, "e8") if w.entry_id not in ("e3", "e4", "e6")]
    text = model.ground_step(final, window).message.text()
    # ord_1001 survives only in the refund call (e6), removed here; re_55 is still in result e7
    assert text == "Refunded ⟨lost:1⟩ as re_55 (ref ZZ999 untouched, ticket T-12345)."
    # T-12345 was never in the context: the agent produced it, so it is not a learned value


def test_tool_schemas_count_as_visible(shop):
    model = ReplayModel(shop)
    refund = shop.by_id["e6"]
    window = [w for w in _window(shop, "e6") if w.entry_id not in ("e2", "e3", "e4")]
    tools = [{"type": "function", "function": {"name": "refund_order", "description": "ids look like ord_1001"}}]
    args = model.ground_step(refund, window, tools).message.tool_calls()[0].arguments
    assert args["order_id"] == "ord_1001" and args["amount"] == "⟨lost:1⟩"


def test_identifier_tokens():
    tokens = identifier_tokens("Reservation M05KNL for mia_li_3668 (555-123-2002, JFK→SEA) costs $1,234.50 ok the")
    assert tokens == ["M05KNL", "mia_li_3668", "555-123-2002", "JFK", "SEA", "234.50"]


def test_split_turns_greeting_user_side_tool_calls_and_results():
    transcript = _session(
        say("Hi! How can I help?"),
        user("my data is slow"),
        {"role": "user", "content": [{"type": "toolCall", "id": "u1", "name": "check_status_bar", "arguments": {}}]},
        result("u1", "Airplane mode"),
        user("I see a plane icon"),
        call("a1", "get_line", phone="555-123-2002"),
        result("a1", '{"line": "L1"}'),
        {"role": "assistant", "content": [], "stopReason": "error"},
        call("a2", "reset", line="L1"),
        result("a2", "ok"),
        say("Done."),
    )
    turns = split_turns(transcript.leaf_path())
    assert [len(t.inputs) for t in turns] == [0, 4]
    assert [e.id for e in turns[1].inputs] == ["e1", "e2", "e3", "e4"]  # user-side call + result are inputs
    assert [e.id for e in turns[1].steps] == ["e5", "e7", "e8", "e10"]
    assert set(turns[1].results) == {"a1", "a2"}
    assert turns[1].user_text() == "my data is slow\nI see a plane icon"
    assert turns[1].answer() == "Done."
    assert calls_before(transcript.leaf_path()) == [("get_line", {"phone": "555-123-2002"}), ("reset", {"line": "L1"})]


def test_script_references_and_errors(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text(
        "turns:\n"
        "  - user: hi\n"
        "    steps:\n"
        "      - tool_calls:\n"
        "          - {name: find, arguments: {q: x}, as: f}\n"
        "      - say: 'order ${f.orders[0].id} costs ${f.orders[0].total}; literal $${x}'\n", encoding="utf-8")
    loaded = load_script(script)
    assert loaded.name == "s" and loaded.turns[0].steps[1].say.startswith("order")
    data = {"orders": [{"id": "o1", "total": 12}]}
    from replaylab.replay.script import walk

    lookup = lambda ref: walk(data, ref.partition(".")[2] and "." + ref.partition(".")[2], ref)  # noqa: E731
    assert substitute({"a": "${f.orders[0].total}", "b": "x ${f.orders[0].total}"}, lookup) == {"a": 12, "b": "x 12"}
    assert substitute("cost $${f}", lookup) == "cost ${f}"

    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - user: hi\n    steps:\n      - {tool_calls: [{arguments: {}}]}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_script(bad)
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.line == 4 and diagnostic.field == "turns[0].steps[0].tool_calls[0]"


def test_openai_messages_follow_pi_conversion():
    window = [
        WindowMessage("c", CompactionSummaryMessage(summary="S")),
        WindowMessage("u", UserMessage(content=[ToolCallBlock(id="u1", name="check", arguments={})])),
        WindowMessage("r", ToolResultMessage(tool_call_id="u1", tool_name="check", content=[TextBlock(text="fine")])),
        WindowMessage("a", AssistantMessage(content=[ToolCallBlock(id="a1", name="get", arguments={"k": 1})],
                                            stop_reason="toolUse")),
        WindowMessage("x", AssistantMessage(content=[TextBlock(text="boom")], stop_reason="error")),
        WindowMessage("u2", UserMessage(content="next")),
    ]
    messages = to_openai_messages(window, system="SYS")
    assert messages[0] == {"role": "system", "content": "SYS"}
    assert messages[1]["content"].startswith("The conversation history before this point was compacted")
    assert messages[2]["content"] == '[user ran tool check {}]'
    assert messages[3]["content"] == "[result of user tool check]: fine"
    assert messages[4]["tool_calls"][0]["function"] == {"name": "get", "arguments": '{"k":1}'}
    # the errored message is dropped and the unanswered call gets pi's synthetic result
    assert messages[5] == {"role": "tool", "tool_call_id": "a1", "content": "No result provided"}
    assert messages[6] == {"role": "user", "content": "next"}
