"""The context-grounded replay model's rules, turn splitting, scripts and the chat-format
conversion, on small hand-made sessions (the real-session checks are in test_replay_realdata.py;
here only the one on composed text: pi-session.jsonl's markdown anchor)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.replay import ReplayModel, calls_before, split_turns
from replaylab.replay.agent.candidate import VALUES, GroundingRules
from replaylab.replay.agent.grounding import Grounded, LostMarkers, ground
from replaylab.replay.agent.grounding_text import SEP, grounding_text
from replaylab.replay.agent.learned_candidates import candidates
from replaylab.replay.agent.llm_format import to_openai_messages
from replaylab.replay.agent.recording_text import RecordingText
from replaylab.replay.agent.script import load_script, substitute
from replaylab.replay.agent.window_text import VisibleText, WindowText
from replaylab.transcript.context import WindowMessage, build_window, entry_to_message
from replaylab.transcript.load import loads_transcript
from replaylab.transcript.memo import ItemMemo, identity
from replaylab.transcript.model import (
    AssistantMessage,
    CompactionSummaryMessage,
    MessageEntry,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.values import identifier_tokens


def _session(*messages: dict) -> list:
    lines = [{"type": "session", "version": 3, "id": "s1"}]
    parent = None
    for i, message in enumerate(messages):
        entry = {
            "type": "message",
            "id": f"e{i}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": message,
        }
        if message.get("role") == "custom-entry":
            entry = {
                "type": "custom",
                "id": f"e{i}",
                "parentId": parent,
                "customType": "system-prompt",
                "data": {"content": message["content"]},
            }
        lines.append(entry)
        parent = f"e{i}"
    return loads_transcript(b"\n".join(orjson.dumps(x) for x in lines))


def user(text):
    return {"role": "user", "content": text}


def call(cid, name, **args):
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": cid, "name": name, "arguments": args}],
        "stopReason": "toolUse",
    }


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
        call(
            "c2",
            "refund_order",
            order_id="ord_1001",
            amount=4250,
            method="card_on_file",
            note="ok",
            reason="Refund for ord_1001 requested by cus_7Q2X",
            quantity=2,
        ),
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


@pytest.mark.parametrize(
    ("read", "learned"),
    [
        ('{"flight": "HAT274", "id": "x12745", "rate": 0.274}', False),  # only inside longer tokens
        ('{"flights": ["HAT083"], "price": 274}', True),
        ('{"price": "$274.00 total"}', True),
    ],
)
def test_a_number_is_learned_only_where_it_stands_as_a_number(read: str, learned: bool):
    """An amount the agent computed itself is its own value, even when its digits happen to occur
    inside a flight number, a longer id or a decimal it read: it is lost only when it was read."""
    recording = _session(
        user("Book it"), call("c1", "search", q="JFK"), result("c1", read), call("c2", "book", amount=274)
    )
    book = recording.by_id["e3"]
    window = [w for w in _window(recording, "e3") if w.entry_id != "e2"]  # the read summarized away
    grounded = ReplayModel(recording).ground_step(book, window)
    assert ([c.value for c in grounded.lost] == ["274"]) is learned
    assert (grounded.message.tool_calls()[0].arguments["amount"] == 274) is not learned


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


# ---------------------------------------------------------------- composed text and levels

#: tokens the real sessions' composed text holds (τ, τ², pi, Claude Code), by whether the agent can
#: have written them itself
OPAQUE = ["credit_card_8003957", "M05KNL", "NQNU5R", "cus_7Q2X", "#W2378156", "mia_li_3668", "HAT275", "C1001"]
OPAQUE += ["555-123-2002", "2024-05-15", "2024-05-02T06:02:56", "8003957", "deadbeef01", "a12142e"]
OWN = ["#custom-tools", "JFK", "README", "MAX_TOKENS", "session_id", "128000", "200000", "175-176", "234.50"]
OWN += ["#303030", "#f0c674", "500ms", "100px", "20k", "win32", "x86_64", "UTF-8", "4G/5G", "gpt-4o", "a-zA-Z0-9"]


def test_opaque_tokens_are_those_an_agent_cannot_write_itself():
    from replaylab.values import is_opaque_token

    assert all(identifier_tokens(t) == [t] for t in OPAQUE + OWN)  # all identifier-like (`strict`)
    assert [t for t in OPAQUE if not is_opaque_token(t)] == []
    assert [t for t in OWN if is_opaque_token(t)] == []


#: a README the agent read: a markdown anchor, a placeholder path, a round number, a choice list, a
#: constant's name, a colour — and two ids it cannot make up
README = (
    "## Contents\n- [Custom Tools](#custom-tools)\n\nAttach: /path/to/image.png (contextWindow 128000, "
    "thinking off/minimal/low/medium/high, MAX_TOKENS, colour #303030).\n"
    "Billing: pay with credit_card_8003957, reservation M05KNL.\n"
)
NEW_TEXT = (
    "See [Custom Tools](#custom-tools); attach /path/to/image.png; contextWindow 128000; "
    "levels low/medium/high; MAX_TOKENS; #303030; pay with credit_card_8003957 for M05KNL."
)
OLD_TEXT = "Billing: pay with credit_card_8003957, reservation M05KNL."


@pytest.fixture()
def docs():
    """user → read README → edit it: `oldText` a line of the file (a whole learned leaf), `newText`
    text the agent composed with the file's anchors, numbers and ids → a summary of what it did."""
    return _session(
        user("Tidy README.md"),
        call("c1", "read", path="README.md"),
        result("c1", README),
        call("c2", "edit", path="README.md", oldText=OLD_TEXT, newText=NEW_TEXT),
        result("c2", "ok"),
        say("Linked #custom-tools and kept credit_card_8003957 (M05KNL) in README.md."),
    )


def _without_the_read(recording, upto_id: str) -> list[WindowMessage]:
    return [w for w in _window(recording, upto_id) if w.entry_id not in ("e1", "e2")]


def _edit(recording, rules: GroundingRules | None = None) -> Grounded:
    return ReplayModel(recording, grounding=rules).ground_step(
        recording.by_id["e3"], _without_the_read(recording, "e3")
    )


def test_composed_text_loses_only_the_ids_the_agent_cannot_make_up(docs):
    """`values`, the default: in the text the agent composed (`newText`) the anchor, placeholder
    path, round number, choice list, constant name and colour are its own words; only the two
    opaque ids were learned. The whole learned leaf (`oldText`) is lost as a whole."""
    grounded = _edit(docs)
    args = grounded.message.tool_calls()[0].arguments
    assert [c.value for c in grounded.lost] == [OLD_TEXT, "credit_card_8003957", "M05KNL"]
    assert args["oldText"] == "⟨lost:1⟩"
    assert args["newText"] == NEW_TEXT.replace("credit_card_8003957", "⟨lost:2⟩").replace("M05KNL", "⟨lost:3⟩")
    assert "#custom-tools" in args["newText"] and "128000" in args["newText"]
    assert args["path"] == "README.md"  # learned whole, and still visible: the user named it
    final = ReplayModel(docs).ground_step(docs.by_id["e5"], _without_the_read(docs, "e5"))
    # the edit (e3) still shows both ids in this window, so nothing is lost from the text block
    assert final.message is docs.by_id["e5"].message


def test_the_levels_change_what_the_same_edit_loses(docs):
    """`strict` loses every identifier-like token of the composed text too (the rule that gave the
    false alarms); `off` per argument keeps that argument as recorded; `off` for the tool keeps
    the whole call (the recorded message itself)."""
    strict = _edit(docs, GroundingRules({"edit": "strict"}))
    assert [c.value for c in strict.lost] == [
        OLD_TEXT,
        "#custom-tools",
        "128000",
        "MAX_TOKENS",
        "#303030",
        "credit_card_8003957",
        "M05KNL",
    ]
    assert "#custom-tools" not in strict.message.tool_calls()[0].arguments["newText"]
    new_text_off = _edit(docs, GroundingRules({"edit": {"newText": "off"}}))
    args = new_text_off.message.tool_calls()[0].arguments
    assert args["newText"] == NEW_TEXT and args["oldText"] == "⟨lost:1⟩"
    assert [c.value for c in new_text_off.lost] == [OLD_TEXT]
    tool_off = _edit(docs, GroundingRules({"edit": "off"}))
    assert tool_off.lost == [] and tool_off.message is docs.by_id["e3"].message
    other_tool = _edit(docs, GroundingRules({"write": "off"}))  # levels of another tool change nothing here
    assert [c.value for c in other_tool.lost] == [c.value for c in _edit(docs).lost]


def test_opaque_ids_in_the_agents_own_text_are_still_learned(docs):
    """A text block is composed text: without the read and the edit, its two ids are lost, the
    anchor is not."""
    window = [w for w in _window(docs, "e5") if w.entry_id not in ("e1", "e2", "e3")]
    grounded = ReplayModel(docs).ground_step(docs.by_id["e5"], window)
    assert grounded.message.text() == "Linked #custom-tools and kept ⟨lost:1⟩ (⟨lost:2⟩) in README.md."


# ---------------------------------------------------------------- what the agent composes


@pytest.fixture()
def composed():
    """turn 1 (e0-e10): the agent runs a build with a description and a timeout, reads a file and a
    README that names a deploy command, and tells a Slack user `user:<id>` it started; turn 2
    (e11-): the user dictates a schedule and names the Slack user again; the agent runs the same
    build, edits a line it read, messages `user:<id>`, schedules the dictated expression and runs
    the README's command."""
    return _session(
        user("build it and keep U0ABCD123 posted"),
        call("c1", "bash", command="mix compile", description="Verify the code compiles", timeout=120000),
        result("c1", "Compiled 12 files"),
        call("c2", "read", path="lib/app.ex", limit=100),
        result("c2", "defmodule App do\n  def old_line, do: :ok\nend"),
        call("c3", "read", path="README.md"),
        result("c3", "Deploy with: make deploy-prod REGION=eu-west-1"),
        call("c4", "message", action="send", target="user:U0ABCD123", text="Build started"),
        result("c4", "sent"),
        say("Built."),
        say("Anything else?"),
        user("every monday at 9, cron 0 9 * * 1, and tell U0ABCD123"),
        call("c5", "bash", command="mix compile", description="Verify the code compiles", timeout=120000),
        result("c5", "ok"),
        call("c6", "edit", path="lib/app.ex", oldText="  def old_line, do: :ok", newText="  def new_line, do: :ok"),
        result("c6", "ok"),
        call("c7", "message", action="send", target="user:U0ABCD123", text="Scheduled"),
        result("c7", "sent"),
        call("c8", "cron", action="add", schedule="0 9 * * 1"),
        result("c8", "added"),
        call("c9", "bash", command="make deploy-prod REGION=eu-west-1", description="Deploy as the README says"),
        result("c9", "deployed"),
        say("Done."),
    )


def _turn_two(recording, step: str, *, without: tuple[str, ...] = ()):
    """The window of a step of turn 2 after a compaction dropped all of turn 1."""
    dropped = {f"e{i}" for i in range(11)} | set(without)
    return [w for w in _window(recording, step) if w.entry_id not in dropped]


def test_what_the_agent_composes_itself_is_never_lost(composed):
    """A command it ran before, the description it wrote for it, the timeout it chose: all stand
    earlier only in its own calls, so losing them from the window loses nothing."""
    model = ReplayModel(composed)
    build = model.ground_step(composed.by_id["e12"], _turn_two(composed, "e12"))
    assert build.lost == [] and build.message is composed.by_id["e12"].message


def test_what_the_agent_read_is_still_lost(composed):
    """The line it edits came from a file it read, and the command it runs from a README: both
    were told to it, so a window without them lost them."""
    model = ReplayModel(composed)
    edit = model.ground_step(composed.by_id["e14"], _turn_two(composed, "e14"))
    assert [c.value for c in edit.lost] == ["  def old_line, do: :ok"]
    deploy = model.ground_step(composed.by_id["e20"], _turn_two(composed, "e20"))
    assert [c.value for c in deploy.lost] == ["make deploy-prod REGION=eu-west-1"]
    assert deploy.message.tool_calls()[0].arguments["description"] == "Deploy as the README says"


def test_a_prefix_around_a_visible_id_and_a_value_the_user_dictated_are_not_lost(composed):
    model = ReplayModel(composed)
    assert model.ground_step(composed.by_id["e16"], _turn_two(composed, "e16")).lost == []  # the id is in e11
    assert model.ground_step(composed.by_id["e18"], _turn_two(composed, "e18")).lost == []  # dictated in e11
    # without the user's message the id is gone: the wrapped id is lost as a whole
    without_user = _turn_two(composed, "e16", without=("e11",))
    assert [c.value for c in model.ground_step(composed.by_id["e16"], without_user).lost] == ["user:U0ABCD123"]


def test_strict_grounds_what_the_agent_composes_too(composed):
    strict = ReplayModel(composed, grounding=GroundingRules({"bash": "strict", "message": "strict"}))
    build = strict.ground_step(composed.by_id["e12"], _turn_two(composed, "e12"))
    assert [c.value for c in build.lost] == ["mix compile", "Verify the code compiles", "120000"]
    without_user = _turn_two(composed, "e16", without=("e11",))
    assert [c.value for c in strict.ground_step(composed.by_id["e16"], without_user).lost] == ["send", "user:U0ABCD123"]


def test_enum_values_of_a_tool_schema_are_visible(composed):
    model = ReplayModel(composed)
    window = _turn_two(composed, "e18", without=("e11",))
    # the user's own dictation gone: lost, unless the expression is a value the tool's schema lists
    assert [c.value for c in model.ground_step(composed.by_id["e18"], window).lost] == ["0 9 * * 1"]
    schedule = {"schedule": {"enum": ["0 9 * * 1", "@daily"]}}
    tools = [{"type": "function", "function": {"name": "cron", "parameters": {"properties": schedule}}}]
    assert model.ground_step(composed.by_id["e18"], window, tools).lost == []


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
        "      - say: 'order ${f.orders[0].id} costs ${f.orders[0].total}; literal $${x}'\n",
        encoding="utf-8",
    )
    loaded = load_script(script)
    assert loaded.name == "s" and loaded.turns[0].steps[1].say.startswith("order")
    data = {"orders": [{"id": "o1", "total": 12}]}
    from replaylab.replay.agent.script import walk

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
        WindowMessage(
            "a",
            AssistantMessage(content=[ToolCallBlock(id="a1", name="get", arguments={"k": 1})], stop_reason="toolUse"),
        ),
        WindowMessage("x", AssistantMessage(content=[TextBlock(text="boom")], stop_reason="error")),
        WindowMessage("u2", UserMessage(content="next")),
    ]
    messages = to_openai_messages(window, system="SYS")
    assert messages[0] == {"role": "system", "content": "SYS"}
    assert messages[1]["content"].startswith("The conversation history before this point was compacted")
    assert messages[2]["content"] == "[user ran tool check {}]"
    assert messages[3]["content"] == "[result of user tool check]: fine"
    assert messages[4]["tool_calls"][0]["function"] == {"name": "get", "arguments": '{"k":1}'}
    # the errored message is dropped and the unanswered call gets pi's synthetic result
    assert messages[5] == {"role": "tool", "tool_call_id": "a1", "content": "No result provided"}
    assert messages[6] == {"role": "user", "content": "next"}


# ---------------------------------------------------------------- the full rule, on any window

ORDER = "ORD-55210"


def _order_lookup(user_text: str = f"Where is {ORDER}?", lookup_result: str = '{"status": "shipped"}'):
    """user → lookup_order(ORD-55210) → result → answer. Entry ids are e0… whatever the texts, so
    two of these differ only in what their entries say."""
    return _session(
        user(user_text),
        call("c1", "lookup_order", order_id=ORDER),
        result("c1", lookup_result),
        say(f"{ORDER} shipped."),
    )


def _full_rule(
    recording,
    entry: MessageEntry,
    window,
    tools=(),
    system_prompt: str | None = None,
    rules: GroundingRules = VALUES,
    numbering: LostMarkers | None = None,
) -> Grounded:
    """The rule as the grounding module states it, computed from scratch: the step's candidates
    learned from the recording's text before it that `rules` ground, each lost unless the
    window's text or what the model always sees (tool schemas, system prompt) holds it; markers
    numbered over the run (`numbering`, shared by its steps)."""
    learned = candidates(entry.message, RecordingText(recording.leaf_path()).learned_at(entry.id), rules)
    tools_text = orjson.dumps(list(tools)).decode() if tools else ""
    visible = "".join(SEP + grounding_text(w.message) for w in window) + SEP + tools_text + SEP + (system_prompt or "")
    return ground(entry.message, learned, visible, numbering)


def _outcome(result: Grounded, entry: MessageEntry) -> tuple:
    return (
        result.message is entry.message,
        [c.value for c in result.lost],
        result.markers,
        result.message.model_dump(mode="json"),
    )


TOKENS = ["ORD-1001", "C1001", "ab", "hello world", "JFK", "x\x00y", "mia_li_3", "12345", "ORD-100", "#anchor"]
#: levels a suite may set for the `lookup` tool of these sessions
RULES = [
    VALUES,
    GroundingRules({"lookup": "strict"}),
    GroundingRules({"lookup": "off"}),
    GroundingRules({"lookup": {"more": "strict", "q": "off"}}),
]
words = st.lists(st.sampled_from(TOKENS), max_size=4).map(" ".join)


@st.composite
def lookup_sessions(draw) -> list[dict]:
    """Turns of user → assistant tool call → result → answer, texts and arguments from a few
    colliding tokens (one holds SEP), so values are learned, lost and found again by accident."""
    messages: list[dict] = []
    for turn in range(draw(st.integers(1, 3))):
        args = {
            "q": draw(st.sampled_from(TOKENS)),
            "n": draw(st.sampled_from([123, 4567, 1, True])),
            "more": [draw(words)],
        }
        messages += [
            user(draw(words)),
            {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [
                    {"type": "text", "text": draw(words)},
                    {"type": "toolCall", "id": f"c{turn}", "name": "lookup", "arguments": args},
                ],
            },
            {
                "role": "toolResult",
                "toolCallId": f"c{turn}",
                "toolName": "lookup",
                "isError": False,
                "content": [{"type": "text", "text": draw(words)}],
            },
            say(draw(words)),
        ]
    return messages


def _compacted_session(messages: list[dict], compaction_after: int | None = None, summary: str = "ORD-1001 summary"):
    """`messages` as a session, with a compaction entry after message `compaction_after` (None: none)."""
    lines = [{"type": "session", "version": 3, "id": "grounding"}]
    entries = [
        {"type": "message", "id": f"e{i}", "timestamp": "2026-01-01T00:00:00.000Z", "message": m}
        for i, m in enumerate(messages)
    ]
    if compaction_after is not None and compaction_after < len(entries) - 1:
        entries.insert(
            compaction_after + 1,
            {
                "type": "compaction",
                "id": "cmp",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "summary": summary,
                "firstKeptEntryId": entries[compaction_after]["id"],
                "tokensBefore": 10,
            },
        )
    for i, entry in enumerate(entries):
        entry["parentId"] = entries[i - 1]["id"] if i else None
    return loads_transcript(b"\n".join(orjson.dumps(line) for line in lines + entries))


@settings(max_examples=300, deadline=None)
@given(messages=lookup_sessions(), data=st.data())
def test_grounding_is_the_full_rule_on_any_window(messages: list[dict], data: st.DataObject) -> None:
    """Each step grounded on a window that grows step by step (the replay's own) or keeps, drops
    and replaces the original messages (a compacted or diverged window), with or without tool
    schemas, at any levels: the same message, losses and markers as the rule computed from scratch."""
    compaction = data.draw(st.one_of(st.none(), st.integers(0, len(messages) - 1)), label="compaction after")
    recording = _compacted_session(messages, compaction)
    path = recording.leaf_path()
    rules = data.draw(st.sampled_from(RULES), label="levels")
    model = ReplayModel(recording, grounding=rules)
    numbering = LostMarkers()
    window: list[WindowMessage] = []
    for index, entry in enumerate(path):
        if not (isinstance(entry, MessageEntry) and entry.message.role == "assistant"):
            continue
        kind = data.draw(st.sampled_from(["grow", "grow", "rebuild"]), label="window")
        seen = [e for e in path[len(window) if kind == "grow" else 0 : index] if isinstance(e, MessageEntry)]
        if kind == "rebuild":
            window = []
        for e in seen:
            choice = data.draw(st.sampled_from(["keep"] * 5 + ["drop", "same text", "other text"]), label="message")
            if choice == "keep":
                window.append(WindowMessage(e.id, e.message))
            elif choice == "same text" and e.message.role == "toolResult":  # a replayed result: a new object
                window.append(WindowMessage(e.id, e.message.model_copy(deep=True)))
            elif choice == "other text":
                window.append(
                    WindowMessage(
                        e.id,
                        ToolResultMessage(
                            tool_call_id="x",
                            tool_name="lookup",
                            content=[TextBlock(text=data.draw(words))],
                            is_error=False,
                        ),
                    )
                )
        window = list(window)  # the loop hands each call its own list; a grown one continues the last
        tools = data.draw(
            st.sampled_from([(), ({"name": "lookup", "description": "ids like ORD-1001"},)]), label="tools"
        )
        assert _outcome(model.ground_step(entry, window, tools), entry) == _outcome(
            _full_rule(recording, entry, window, tools, rules=rules, numbering=numbering), entry
        )


def _assistant(text: str = "", **args) -> dict:
    content = [{"type": "text", "text": text}] if text else []
    if args:
        content.append({"type": "toolCall", "id": "c9", "name": "lookup", "arguments": args})
    return {"role": "assistant", "stopReason": "toolUse" if args else "stop", "content": content}


@pytest.mark.parametrize("case", ["value across two entries", "value only in a summary"])
def test_what_a_window_of_the_same_texts_does_not_show_is_still_lost(case: str) -> None:
    """The window holds the text of every message the agent saw, yet the value is lost: it was
    learned across two adjacent entries (a value with SEP) that the window shows apart, or from the
    summary of a compaction on the recording's path that the window does not hold."""
    if case == "value across two entries":
        recording = _compacted_session([user("ab x"), user("y ab"), _assistant(q="x\x00y")])
        path = recording.leaf_path()
        window = [WindowMessage(e.id, e.message) for e in reversed(path[:2])]
    else:
        recording = _compacted_session(
            [user("hi"), _assistant("ok"), user("go"), _assistant(q="ORD-1001")], compaction_after=1
        )
        path = recording.leaf_path()
        window = [WindowMessage(e.id, e.message) for e in path if isinstance(e, MessageEntry)][:-1]
    step = path[-1]
    grounded = ReplayModel(recording).ground_step(step, window)
    assert _outcome(grounded, step) == _outcome(_full_rule(recording, step, window), step)
    assert grounded.lost and grounded.message is not step.message


@pytest.mark.parametrize("replay_from", ["before the compaction", "after it"])
def test_a_value_only_a_later_summary_holds_is_learned_only_where_the_replay_shows_that_summary(
    replay_from: str,
) -> None:
    """The recording's agent copies `REF-77Q` from the summary of a recorded compaction; the
    summary is the only text that holds it. A replay that starts before that compaction never
    shows the summary (turns skip compaction entries): the summarizer wrote the value, so it is
    kept, not lost — else the baseline, replayed on the full history, drifts on it. A value the
    summary holds that a real message gave first (`cus_7Q2X`) stays learned, and is lost when the
    window lacks that message. A replay that
    starts after the compaction has the summary in its first window: there the value is learned."""
    recording = _compacted_session(
        [
            user("I am cus_7Q2X"),
            _assistant("ok"),
            user("go on"),
            _assistant("fine"),
            user("pay it"),
            _assistant(q="REF-77Q", who="cus_7Q2X"),
        ],
        compaction_after=3,
        summary="cus_7Q2X asked to pay; the payment reference is REF-77Q.",
    )
    path = recording.leaf_path()
    turns = [t for t in split_turns(path) if t.inputs]
    step = path[-1]
    model = ReplayModel(recording)
    model.begin_turn(turns[1] if replay_from == "before the compaction" else turns[2])
    messages = [WindowMessage(e.id, e.message) for e in path[:-1] if isinstance(e, MessageEntry)]
    on_full_history = model.ground_step(step, messages)
    without_customer = model.ground_step(step, messages[1:])
    if replay_from == "before the compaction":
        assert on_full_history.message is step.message and on_full_history.lost == []
        assert [c.value for c in without_customer.lost] == ["cus_7Q2X"]
    else:
        assert [c.value for c in on_full_history.lost] == ["REF-77Q"]
        assert [c.value for c in without_customer.lost] == ["REF-77Q", "cus_7Q2X"]


@pytest.mark.parametrize("told", [False, True], ids=["the agent wrote it first", "a tool result told it"])
def test_a_date_the_agent_wrote_in_iso_form_itself_is_its_own(told: bool) -> None:
    """The user gives a date in words; the agent writes it as `2026-05-10` in one call and again
    in a later one. A window that lost the first call (a compaction kept the user's words) does
    not lose the date: the agent writes it again from any spelling. A date a tool result told it
    in that form is learned, and lost with it."""
    recording = _session(
        user("Book me in from May 10th to May 12th, 2026."),
        call("c1", "check_availability", check_in="2026-05-10"),
        result("c1", "available from 2026-05-10" if told else "available"),
        call("c2", "create_reservation", check_in="2026-05-10"),
    )
    path = recording.leaf_path()
    step = path[-1]
    window = [WindowMessage(path[0].id, path[0].message)]
    lost = ReplayModel(recording).ground_step(step, window).lost
    assert [c.value for c in lost] == (["2026-05-10"] if told else [])


def _reset_session(kept: bool):
    """Where is ORD-1001? → answer → an OpenClaw `reset` (keeping that question, or nothing) →
    a new question → a lookup of ORD-1001."""
    messages = [user("Where is ORD-1001?"), _assistant("looking"), user("and now?"), _assistant(q="ORD-1001")]
    entries = [
        {"type": "message", "id": f"e{i}", "timestamp": "2026-01-01T00:00:00.000Z", "message": m}
        for i, m in enumerate(messages)
    ]
    reset = {"type": "reset", "id": "rst", "timestamp": "2026-01-01T00:00:00.000Z", "reason": "reset"}
    entries.insert(2, {**reset, **({"firstKeptEntryId": "e0"} if kept else {})})
    for i, entry in enumerate(entries):
        entry["parentId"] = entries[i - 1]["id"] if i else None
    lines = [{"type": "session", "version": 4, "id": "reset", "timestamp": "2026-01-01T00:00:00.000Z"}, *entries]
    return loads_transcript(b"\n".join(orjson.dumps(line) for line in lines))


@pytest.mark.parametrize("kept", [False, True], ids=["reset keeps nothing", "reset keeps the question"])
def test_what_lies_before_a_reset_the_agent_starts_afresh_at_was_not_learned(kept: bool) -> None:
    """OpenClaw 2026.9.6 starts its context afresh at a `reset`: an id only the history before it
    holds was not in the agent's window, so the agent wrote it itself and the baseline keeps it;
    one the reset's kept range holds was learned. pi ignores a reset: there it was learned."""
    from replaylab.agents import rules_of

    recording = _reset_session(kept)
    path = recording.leaf_path()
    step = path[-1]
    memo = ItemMemo(rules=rules_of("openclaw@2026.9.6"))
    openclaw = ReplayModel(recording, memo=memo)
    baseline = build_window(path[:-1], memo)
    assert [w.entry_id for w in baseline] == (["e0", "e1", "e2"] if kept else ["e2"])
    assert openclaw.ground_step(step, baseline).message is step.message
    without_question = [w for w in baseline if w.entry_id != "e0"]
    lost = openclaw.ground_step(step, without_question).lost
    assert [c.value for c in lost] == (["ORD-1001"] if kept else [])
    pi = ReplayModel(recording)
    assert [c.value for c in pi.ground_step(step, without_question).lost] == ["ORD-1001"]


def test_a_replaced_window_is_checked_from_the_start() -> None:
    """A window that does not continue the last one (a compaction's, an overflow's) is checked
    again from the first entry: what the last window covered says nothing about it."""
    recording = _compacted_session(
        [user("Where is ORD-1001?"), _assistant("looking"), user("well?"), _assistant(q="ORD-1001")]
    )
    path = recording.leaf_path()
    model, step = ReplayModel(recording), path[-1]
    full = [WindowMessage(e.id, e.message) for e in path[:-1]]
    assert model.ground_step(step, full).message is step.message  # covered: nothing lost
    without_question = full[1:]
    grounded = model.ground_step(step, without_question)
    assert [c.value for c in grounded.lost] == ["ORD-1001"]
    assert _outcome(grounded, step) == _outcome(_full_rule(recording, step, without_question), step)


def test_the_baseline_grounds_the_recorded_steps_without_planning_them() -> None:
    """On the recording's own window nothing is lost, and no step's plan is made: plans (and the
    joined text of the recording) are made only for a window that needs them."""
    recording = _order_lookup()
    model = ReplayModel(recording)  # without an item's memo: a text of its own
    path = recording.leaf_path()
    for index, entry in enumerate(path):
        if isinstance(entry, MessageEntry) and entry.message.role == "assistant":
            own = [WindowMessage(e.id, e.message) for e in path[:index]]
            assert model.ground_step(entry, own).message is entry.message
    assert model.history.plans == {}
    lost_window = [WindowMessage("u", UserMessage(content="Where is it?"))]
    grounded = model.ground_step(path[1], lost_window)
    assert [c.value for c in grounded.lost] == [ORDER] and model.history.plans
    texts = [grounding_text(m) if m is not None else "" for m in (entry_to_message(e) for e in path)]
    assert model.history.full == SEP.join(texts) + SEP


# ---------------------------------------------------------------- what models of one recording share


def test_two_recordings_with_the_same_entry_ids_do_not_share_grounding():
    learned = _order_lookup()
    not_learned = _order_lookup(user_text="Where is my order?")
    for recording, lost in ((learned, True), (not_learned, False), (learned, True)):
        model = ReplayModel(recording)
        step = split_turns(recording.leaf_path())[0].steps[0]
        grounded = model.ground_step(step, [WindowMessage("u", UserMessage(content="Where is my order?"))])
        assert [c.value for c in grounded.lost] == ([ORDER] if lost else [])
        assert (grounded.message is step.message) is not lost


def test_the_tool_schemas_of_each_call_decide_what_is_visible():
    recording = _order_lookup()
    model = ReplayModel(recording)
    step = split_turns(recording.leaf_path())[0].steps[0]
    window = [WindowMessage("u", UserMessage(content="Where is my order?"))]
    naming = [{"name": "lookup_order", "description": f"e.g. {ORDER}"}]
    for tools, lost in ((naming, []), ([{"name": "lookup_order"}], [ORDER]), (naming, [])):
        assert [c.value for c in model.ground_step(step, window, list(tools)).lost] == lost


def test_the_models_of_an_item_share_one_text_and_a_reload_gets_its_own():
    """With the item's memo, the baseline's and the compacted run's models of a recording share
    its text; the same file loaded again, another item, or no memo, build their own (the same)."""
    recording = _order_lookup()
    memo = ItemMemo()
    baseline, compacted = ReplayModel(recording, memo=memo), ReplayModel(recording, memo=memo)
    assert compacted.history is baseline.history
    assert ReplayModel(_order_lookup(), memo=memo).history is not baseline.history  # the same file loaded again
    for other in (ReplayModel(recording, memo=ItemMemo()).history, ReplayModel(recording).history):
        assert other is not baseline.history and other.full == baseline.history.full
    assert ReplayModel(recording, memo=memo).history is baseline.history


def test_shared_plans_equal_freshly_computed_ones():
    recording = _order_lookup(f"Customer asks about {ORDER} and ORD-1", '{"id": "ORD-1", "carrier": "UPS-22"}')
    memo = ItemMemo()
    ReplayModel(recording, memo=memo).plan(split_turns(recording.leaf_path())[0].steps[0])  # planned before
    shared = ReplayModel(recording, memo=memo)
    fresh = ReplayModel(recording)
    assert fresh.history is not shared.history and shared.history.plans
    for step in (s for t in split_turns(recording.leaf_path()) for s in t.steps):
        assert shared.plan(step) == fresh.plan(step)


# ---------------------------------------------------------------- window text and visible text


def _tool_result(text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id="x", tool_name="t", content=[TextBlock(text=text)], is_error=False)


def test_known_message_texts_are_checked_by_identity():
    message, other = _tool_result("the real text"), _tool_result("another text")
    text = WindowText(known={identity(message): (other, "stale")})
    assert text.text_of(message) == grounding_text(message)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["ab", "C1001", "x\x00y", "", "ORD-7"]), max_size=4), max_size=40),
    st.integers(min_value=0, max_value=3),
)
def test_window_text_pieces_join_to_the_whole_text(growth, drop):
    text = WindowText()
    window: list = []
    for step, added in enumerate(growth):
        window = window + [_tool_result(t) for t in added]
        if step == drop:
            window = window[1:]  # not a continuation of the last window: built again
        pieces = text.blocks(window)
        expected = (SEP + SEP.join(grounding_text(m) for m in window)) if window else ""
        assert "".join(pieces) == expected
        assert all(piece.startswith(SEP) for piece in pieces)
        assert len(pieces) <= WindowText.MAX_BLOCKS
        assert all(len(a) > 2 * len(b) for a, b in zip(pieces, pieces[1:]))
    assert WindowText()(window) == text(window) == "".join(text.blocks(window))


def test_window_text_of_window_items_is_that_of_their_messages() -> None:
    """`blocks` of the window's items gives the pieces of their messages, grown while the window
    grows, rebuilt when an item is replaced."""
    items = [WindowMessage(f"w{i}", _tool_result(f"text {i} C100{i}")) for i in range(6)]
    by_items, by_messages = WindowText(), WindowText()
    for n in (2, 4, 6):
        assert by_items.blocks(items[:n]) == by_messages.blocks([w.message for w in items[:n]])
    pieces = by_items.blocks(items)
    assert all(len(a) > 2 * len(b) for a, b in zip(pieces, pieces[1:]))  # merged as they come: sizes halve
    replaced = [items[0], WindowMessage("w1", _tool_result("other"))]
    assert "".join(by_items.blocks(replaced)) == "".join(WindowText().blocks([w.message for w in replaced]))


def test_window_text_of_a_long_growing_window_stays_in_few_pieces() -> None:
    """A window grown one message at a time, as a long replay grows it, keeps O(log) pieces
    (each over twice the next), so no step copies the whole window text again."""
    text, window = WindowText(), []
    for i in range(3_000):
        window.append(_tool_result(f"result {i} ORD-{i:05d}"))
        pieces = text.blocks(window)
    assert "".join(pieces) == SEP + SEP.join(grounding_text(m) for m in window)
    assert len(pieces) <= 12 and all(len(a) > 2 * len(b) for a, b in zip(pieces, pieces[1:]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\x00", max_size=6), max_size=5), st.text(alphabet="ab\x00", min_size=1, max_size=4))
def test_visible_text_answers_like_the_joined_text(tails, value):
    pieces = ["ab"] + [SEP + tail for tail in tails]
    assert (value in VisibleText(pieces)) == (value in "".join(pieces))


def test_visible_text_refuses_pieces_that_could_join_a_value():
    with pytest.raises(ValueError):
        VisibleText(["ab", "cd"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["grow", "replace", "shrink"]),
            st.lists(st.text(alphabet="ab\x00 #1", max_size=6), max_size=4),
        ),
        max_size=25,
    ),
    st.lists(st.text(alphabet="ab\x00 #1", min_size=1, max_size=4), max_size=6),
    st.text(alphabet="ab\x00", max_size=5),
)
def test_window_pieces_need_no_check_and_answer_as_checked(changes, values, tools_text) -> None:
    """`VisibleText.of_window` trusts `WindowText.blocks` pieces to start with SEP: they do, on
    windows that grow, are replaced or shrink, and it answers every value as the checked
    constructor and the joined text do."""
    window_text = WindowText()
    window: list = []
    always = SEP + tools_text + SEP + "system"
    for change, texts in changes:
        messages = [UserMessage(content=text) for text in texts]
        if change == "grow":
            window = window + messages
        elif change == "replace":
            window = messages
        else:
            window = window[: len(window) // 2]
        blocks = window_text.blocks(window)
        assert all(piece.startswith(SEP) for piece in blocks)
        checked = VisibleText([*blocks, always])
        trusted = VisibleText.of_window(blocks, always)
        assert trusted.pieces == checked.pieces and trusted.pieces is not blocks
        for value in values:
            assert (value in trusted) == (value in checked) == (value in "".join(checked.pieces))


# ---------------------------------------------------------------- a real session


def _pi_session_item(shared_data, tmp_path, match: dict):
    """pi-session.jsonl (imported) through the QA pipeline in safeguard, compacted before user
    turn 26 with a 1,000-token reserve: the summary cannot hold the README the agent read in turn
    1, whose anchor `#custom-tools` a later `edit` writes into the file again."""
    from replaylab.importers import import_sessions, write_session
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import CompactionSettings, Expectations, MatchSettings, Scenario

    [session] = import_sessions("pi", shared_data / "openclaw-fixtures" / "pi-session.jsonl")
    recording, _ = write_session(session, tmp_path)
    compaction = CompactionSettings(
        mode="safeguard", contextTokens=98_028, reserveTokensFloor=1_000, keepRecentTokens=32_342
    )
    scenario = Scenario(
        suite="grounding",
        name="pi-session",
        suite_file=recording,
        tools=None,
        tool_classes=None,
        model="replay",
        compaction=compaction,
        compact_at="turn:26",
        match=MatchSettings.model_validate(match),
        expect=Expectations(),
        per_recording={},
        repeats=1,
    )
    return run_item(scenario, recording, RunOptions())


@pytest.mark.realdata
def test_a_markdown_anchor_an_edit_writes_again_is_no_lost_identifier(shared_data, tmp_path):
    """The false SIDE_EFFECT_ESCAPED of the composed-text rule is gone with the default level; the
    same item at `strict` for `edit` still shows it (the anchor replaced by a marker in `newText`).
    (Safeguard summarizes the whole span before pi's cut here, so the summary also loses a model id
    of turn 3 that the edit writes again: a real loss, the same at both levels.)"""
    default = _pi_session_item(shared_data, tmp_path / "values", {})
    assert default.compaction is not None and default.compaction.success
    assert "#custom-tools" not in {lost.value for lost in default.lost_values}
    strict = _pi_session_item(shared_data, tmp_path / "strict", {"args": {"edit": {"grounding": "strict"}}})
    assert "#custom-tools" in {lost.value for lost in strict.lost_values}
    [escaped] = [
        d for d in strict.defects if d.severity == "blocking" and "(#custom-tools)" in str(d.detail.get("differences"))
    ]
    assert escaped.code == Code.SIDE_EFFECT_ESCAPED and escaped.where.tool == "edit"
    [changed] = [leaf for leaf in escaped.detail["differences"] if leaf["path"] == "newText"]
    # the window around the first difference, at the same offsets on both sides
    assert "(#custom-tools)" in changed["expected"] and "(⟨lost:1⟩)" in changed["actual"]


def test_a_whole_value_of_one_word_is_the_agents_own_vocabulary():
    """`one_way` and `basic_economy` came from the search result, `FL-204-X` too: once the search
    is out of the window only the flight id is lost at `values` — the words are an enum the agent
    writes from the request; at `strict` every learned leaf is."""
    booking = _session(
        user("Book me the cheapest flight to Oslo"),
        call("c1", "search_flights", to="OSL"),
        result("c1", '{"flight": "FL-204-X", "type": "one_way", "cabin": "basic_economy"}'),
        call("c2", "book", flight="FL-204-X", flight_type="one_way", cabin="basic_economy"),
        result("c2", "booked"),
    )
    window = [w for w in _window(booking, "e3") if w.entry_id not in ("e1", "e2")]
    step = booking.by_id["e3"]
    values = ReplayModel(booking).ground_step(step, window)
    assert values.message.tool_calls()[0].arguments == {
        "flight": "⟨lost:1⟩",
        "flight_type": "one_way",
        "cabin": "basic_economy",
    }
    strict = ReplayModel(booking, grounding=GroundingRules({"book": "strict"})).ground_step(step, window)
    assert [c.value for c in strict.lost] == ["FL-204-X", "one_way", "basic_economy"]


def test_a_number_is_found_where_the_number_pattern_finds_it_at_any_bounds() -> None:
    """`_number_at` checks the characters around each occurrence of the value's text instead of
    compiling a pattern per value: it must answer as that pattern's own search over the same
    bounds does, at the edges of a segment too (a character just before the start still rules a
    match out, the end cuts a longer number)."""
    import random
    import re

    from replaylab.replay.agent.recording_text import _number_at

    rnd = random.Random(7)
    alphabet = "0123456789.,$ aHT-_\n"
    checked = found = 0
    for _ in range(4_000):
        value = rnd.choice(["274", "12.5", "-3", "1234", "0", "7"])
        text = "".join(value if rnd.random() < 0.2 else rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        start = rnd.randint(0, len(text))
        end = rnd.randint(start, len(text))
        number = re.compile(rf"(?<![\w.]){re.escape(value)}(?!\w|\.0*[1-9])")
        expected = number.search(text, start, end) is not None
        assert _number_at(value, text, start, end) == expected, (value, text, start, end)
        checked += 1
        found += expected
    assert checked == 4_000 and 200 < found < 3_800


def test_what_a_recording_remembers_of_a_value_answers_as_a_fresh_search_at_every_step() -> None:
    """`RecordingText.occurs` keeps, per value and segment start, an occurrence and how far the
    text is known to hold none, so the steps of a replay do not search the same text again. Asked
    at the steps' offsets in any order (a compacted run asks from the start again after the
    baseline reached the end), each answer must be a fresh search's: a plain substring, or a
    number standing as one — also one right before an entry's end, and one that only a later
    entry holds."""
    import random

    from replaylab.replay.agent.grounding_text import SEP
    from replaylab.replay.agent.recording_text import _places

    rnd = random.Random(11)
    words = ["274", "HAT274", "12.5", "1234", "$1234.00", "0.1234", "ord_1001", "ord_10012", "x", "7", "a b"]
    messages = [user("start")]
    for i in range(60):
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6)))
        messages.append(say(text) if i % 2 else user(text))
    history = RecordingText(_session(*messages).leaf_path())
    values = ["274", "1234", "12.5", "7", "ord_1001", "ord_10012", "a b", "b 7", "missing", "4 H"]
    asked = agreed = 0
    for _ in range(3):
        ends = list(range(1, len(history.path) + 1))
        rnd.shuffle(ends)
        for index in ends[: len(ends) // 2] + sorted(ends[len(ends) // 2 :]):
            start = history.offsets[rnd.choice([0, 1, index // 2, index - 1])]
            end = history.offsets[index]
            for value in values:
                for external in (False, True):
                    text = history.external_full if external else history.full
                    number = value.replace(".", "", 1).isdigit()
                    fresh = next(_places(value, text, start, end, number=number), None) is not None
                    assert SEP not in value
                    assert history.occurs(value, start, end, external=external) == fresh, (value, start, end)
                    asked += 1
                    agreed += fresh
    assert asked > 3_000 and 0.2 * asked < agreed < 0.8 * asked
