"""The legend of lost values: one `⟨lost:N⟩` per value over an item's run, and per marker the
value, where the recording last showed it, where the replay first lacked it and which compaction
took it — in the JSON result, the terminal story, the HTML and the markdown, scrubbed in each."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from builders.planted_secrets import GITHUB
from builders.reports import XSS_SCRIPT, build_items, build_report
from html_dom import Dom, el_text
from replaylab.checks.lost_legend import CompactionStep, lost_legend
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.replay import ReplayModel, make_model, split_turns
from replaylab.replay.agent.grounding_text import grounding_text
from replaylab.replay.turns import rest_of_run
from replaylab.report.html import render_html
from replaylab.report.jsonio import dump_json
from replaylab.report.markdown import render_markdown
from replaylab.report.story import failure_story
from replaylab.results import LostValue
from replaylab.suite import load_suite
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.load import loads_transcript
from replaylab.transcript.model import CompactionSummaryMessage
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
ORDER = "ORD-1001"


def _session(*messages: dict):
    lines = [{"type": "session", "version": 3, "id": "s1"}]
    for i, message in enumerate(messages):
        parent = f"e{i - 1}" if i else None
        lines.append(
            {
                "type": "message",
                "id": f"e{i}",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": message,
            }
        )
    return loads_transcript(b"\n".join(orjson.dumps(x) for x in lines))


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def call(cid: str, name: str, **args) -> dict:
    content = [{"type": "toolCall", "id": cid, "name": name, "arguments": args}]
    return {"role": "assistant", "content": content, "stopReason": "toolUse"}


def result(cid: str, text: str) -> dict:
    return {"role": "toolResult", "toolCallId": cid, "content": [{"type": "text", "text": text}], "isError": False}


def say(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}


def _orders(token: str = ORDER):
    """Turn 1 learns `token` from a lookup; turn 2 cancels it and names it in the answer; turn 3
    looks it up again."""
    return _session(
        user("Hi, what are my orders?"),
        call("c1", "find_orders", customer="cus_7Q2X"),
        result("c1", orjson.dumps({"orders": [{"id": token}]}).decode()),
        say(f"You have {token}."),
        user("Cancel it"),
        call("c2", "cancel_order", order_id=token),
        result("c2", '{"ok": true, "ticket": "TCK-5001"}'),
        say(f"Cancelled {token} (ticket TCK-5001)."),
        user("Status?"),
        call("c3", "get_order", order_id=token),
        result("c3", '{"status": "cancelled"}'),
        say("It is cancelled."),
    )


def _replay_turn(model: ReplayModel, transcript, turn_index: int, window: list[WindowMessage]) -> list:
    """Every step of one recorded turn, on `window` plus what the replay itself added (its own
    messages and the recorded results), as the agent loop would run them."""
    turn = split_turns(transcript.leaf_path())[turn_index]
    model.begin_turn(turn)
    window = [*window, *(WindowMessage(e.id, entry_to_message(e)) for e in turn.inputs)]
    messages = []
    for step in turn.steps:
        message = model.complete(window, [])
        messages.append(message)
        window.append(WindowMessage(step.id, message))
        for block in message.content:
            recorded = turn.results.get(getattr(block, "id", ""))
            if recorded is not None:
                window.append(WindowMessage(recorded.id, recorded.message))
    return messages


# ---------------------------------------------------------------- numbering and the legend rule


def test_the_same_value_in_a_call_and_the_answer_gets_one_marker_and_one_legend_row():
    transcript = _orders()
    model = ReplayModel(transcript)
    summary = WindowMessage("c9", CompactionSummaryMessage(summary="The user asked about their orders."))
    cancel, answer = _replay_turn(model, transcript, 1, [summary])
    assert cancel.content[0].arguments == {"order_id": "⟨lost:1⟩"}
    assert answer.text() == "Cancelled ⟨lost:1⟩ (ticket TCK-5001)."  # the ticket came with the replayed result
    assert [(r.marker, r.value, r.kind, r.entry_id) for r in model.lost] == [
        ("⟨lost:1⟩", ORDER, "arg", "e5"),
        ("⟨lost:1⟩", ORDER, "text", "e7"),
    ]
    compaction = CompactionStep(1, "c9", summary.message.summary, 1, [summary])
    (row,) = lost_legend(model.lost, transcript.leaf_path(), [compaction])
    assert (row.marker, row.value) == ("⟨lost:1⟩", ORDER)
    assert (row.seen_entry_id, row.seen_turn) == ("e3", 1)  # the turn-1 answer, the last to name it
    assert (row.lost_entry_id, row.lost_turn, row.lost_in) == ("e5", 2, "call")
    assert (row.compaction, row.compaction_entry_id, row.summary_lacks) == (1, "c9", True)


def test_later_steps_keep_the_numbers_of_the_run_and_a_new_value_takes_the_next():
    transcript = _orders()
    model = ReplayModel(transcript)
    _replay_turn(model, transcript, 1, [])
    (lookup, _) = _replay_turn(model, transcript, 2, [])
    assert lookup.content[0].arguments == {"order_id": "⟨lost:1⟩"}  # the same value two turns on
    assert {r.marker for r in model.lost} == {"⟨lost:1⟩"}
    model.begin_turn(split_turns(transcript.leaf_path())[1])  # the turn again, its ticket gone too
    model.complete([], [])
    answer = model.complete([], [])
    assert answer.text() == "Cancelled ⟨lost:1⟩ (ticket ⟨lost:2⟩)."
    legend = lost_legend(model.lost, transcript.leaf_path(), [])
    assert [(r.marker, r.value, r.seen_entry_id, r.compaction) for r in legend] == [
        ("⟨lost:1⟩", ORDER, "e3", None),
        ("⟨lost:2⟩", "TCK-5001", "e6", None),  # no compaction given: none took them
    ]


def test_the_compaction_that_took_a_value_is_the_one_after_the_last_window_that_held_it():
    """Learned in turn 1, needed again in turn 3: compaction 1 (before turn 2) keeps it in its
    summary, compaction 2 (before turn 3) does not — the second took it, and the legend names its
    number and entry. A compaction before the turn that showed the value, or after the step that
    lacked it, cannot have taken it."""
    transcript = _session(
        user("Hi, what are my orders?"),
        call("c1", "find_orders", customer="cus_7Q2X"),
        result("c1", orjson.dumps({"orders": [{"id": ORDER}]}).decode()),
        say(f"You have {ORDER}."),
        user("Thanks"),
        say("You are welcome."),
        user("Status?"),
        call("c3", "get_order", order_id=ORDER),
        result("c3", '{"status": "cancelled"}'),
        say("It is cancelled."),
    )
    kept = WindowMessage("k1", CompactionSummaryMessage(summary=f"Orders: {ORDER}."))
    dropped = WindowMessage("k2", CompactionSummaryMessage(summary="The user has one order."))
    model = ReplayModel(transcript)
    (lookup, _) = _replay_turn(model, transcript, 2, [dropped])
    assert lookup.content[0].arguments == {"order_id": "⟨lost:1⟩"}
    steps = [
        CompactionStep(1, "k1", kept.message.summary, 1, [kept]),
        CompactionStep(2, "k2", dropped.message.summary, 2, [dropped]),
    ]
    path = transcript.leaf_path()
    (row,) = lost_legend(model.lost, path, steps)
    assert (row.compaction, row.compaction_entry_id, row.summary_lacks) == (2, "k2", True)
    assert (row.seen_entry_id, row.seen_turn, row.lost_entry_id, row.lost_turn) == ("e3", 1, "e7", 3)
    assert "taken by compaction 2 of 2 (k2); its summary lacks it" in row.line(compactions=2)
    (alone,) = lost_legend(model.lost, path, [CompactionStep(1, "k2", dropped.message.summary, 2, [dropped])])
    assert alone.compaction == 1 and "taken by compaction (k2)" in alone.line()
    (before_seen,) = lost_legend(model.lost, path, [CompactionStep(1, "k0", "", 0, [])])
    assert before_seen.compaction is None and before_seen.never_received
    assert before_seen.line().endswith(
        "; no compaction took it (the recording got it after the compaction: the replay never received it)"
    )
    (after_step,) = lost_legend(model.lost, path, [CompactionStep(1, "k3", "", 3, [])])
    assert after_step.compaction is None and not after_step.never_received
    assert after_step.line().endswith("; no compaction took it")
    # a compaction within turn 3's run, after its own lookup and before the answer, came after the step that lacked the value
    position = {entry.id: index for index, entry in enumerate(path)}
    (within_after,) = lost_legend(model.lost, path, [CompactionStep(1, "k4", "", 2, [], at=position["e9"])])
    assert within_after.compaction is None and not within_after.never_received


def test_a_compaction_within_a_run_took_what_that_run_showed_before_it():
    """One prompt, one run: the order id comes from the first call's result, and the agent needs
    it two replies later, after a compaction within the run that left it out. That compaction,
    after the result and in the same turn, took it (a turn-granular reading would say the replay
    never received it)."""
    transcript = _session(
        user("Cancel my order, please."),
        call("c1", "find_orders", customer="cus_7Q2X"),
        result("c1", orjson.dumps({"orders": [{"id": ORDER}]}).decode()),
        call("c2", "get_policy", topic="cancellation"),
        result("c2", '{"policy": "free within 24h"}'),
        call("c3", "cancel_order", order_id=ORDER),
        result("c3", '{"status": "cancelled"}'),
        say("It is cancelled."),
    )
    dropped = WindowMessage("k1", CompactionSummaryMessage(summary="The user wants a cancellation."))
    model = ReplayModel(transcript)
    turn = split_turns(transcript.leaf_path())[0]
    model.begin_turn(rest_of_run(turn, 2))
    call_step = model.complete([dropped], [])
    assert call_step.content[0].arguments == {"order_id": "⟨lost:1⟩"}
    path = transcript.leaf_path()
    position = {entry.id: index for index, entry in enumerate(path)}
    within = CompactionStep(1, "k1", dropped.message.summary, 0, [dropped], at=position["e5"])
    (row,) = lost_legend(model.lost, path, [within])
    assert (row.compaction, row.seen_entry_id, row.lost_entry_id) == (1, "e2", "e5") and not row.never_received
    assert row.summary_lacks is True
    # read by turn (the compaction at turn 1's start), the value would seem never received
    (by_turn,) = lost_legend(model.lost, path, [CompactionStep(1, "k1", dropped.message.summary, 0, [dropped])])
    assert by_turn.compaction is None and by_turn.never_received


# ---------------------------------------------------------------- through the pipeline


@pytest.fixture(scope="module")
def address_change():
    """The bundled negative control: CUST-10046 was only in turn 1's results, which aggressive's
    summary leaves out; the replayed update_address is blocked, and the answer's ADDR-2001, which
    the recording got from that call's result, never reaches the replay."""
    suite = load_suite(REPO / "suites" / "aggressive.yaml")
    (scenario,) = suite.scenarios
    (recording,) = [r for r in suite.recordings if r.stem == "early-identifier-address-change"]
    return run_item(scenario, recording, RunOptions()), recording


def _recorded(recording: Path):
    path = loads_transcript(recording.read_bytes()).leaf_path()
    turn_of = {e.id: t.index for t in split_turns(path) for e in (*t.inputs, *t.steps, *t.results.values())}
    return path, turn_of


def _last_holding(path, value: str, before: str) -> str:
    """The last entry before `before` whose text (as a model reads it) holds `value`."""
    ids = [e.id for e in path]
    messages = [(e.id, entry_to_message(e)) for e in path[: ids.index(before)]]
    return [i for i, m in messages if m is not None and value in grounding_text(m)][-1]


def test_a_value_lost_in_a_call_and_another_in_the_answer_get_two_markers_and_a_legend_of_two(address_change):
    result, recording = address_change
    path, turn_of = _recorded(recording)
    escaped = next(d for d in result.defects if d.code == Code.SIDE_EFFECT_ESCAPED)
    answer = next(d for d in result.defects if d.code == Code.ANSWER_DIVERGED)
    assert escaped.actual["arguments"]["customer_id"] == "⟨lost:1⟩"
    assert "⟨lost:2⟩" in answer.actual and "⟨lost:1⟩" not in answer.actual
    customer, address = result.lost_values
    assert (customer.marker, customer.value, customer.lost_in) == ("⟨lost:1⟩", "CUST-10046", "call")
    assert (address.marker, address.value, address.lost_in) == ("⟨lost:2⟩", "ADDR-2001", "text")
    # where the recording last showed each value, and the recorded steps that lost them
    by_id = {e.id: e for e in path}
    update = by_id[customer.lost_entry_id].message.content[0]
    assert update.name == "update_address" and update.arguments["customer_id"] == "CUST-10046"
    assert "ADDR-2001" in by_id[address.lost_entry_id].message.text()
    for lost in (customer, address):
        assert lost.seen_entry_id == _last_holding(path, lost.value, lost.lost_entry_id)
        assert lost.seen_turn == turn_of[lost.seen_entry_id] + 1
        assert lost.lost_turn == turn_of[lost.lost_entry_id] + 1
    assert customer.seen_turn == 1 and address.seen_turn == address.lost_turn  # the update's own result
    # the one compaction took the customer id; nothing took the address id: the replay never got it
    assert result.compaction.compactions == 1
    assert (customer.compaction, customer.compaction_entry_id) == (1, result.compaction.compaction_event_id)
    assert customer.summary_lacks and "CUST-10046" not in result.compaction.summary_text
    assert address.compaction is None and address.compaction_entry_id is None
    assert address.never_received and not customer.never_received


def test_the_story_explains_each_marker_after_the_defects(address_change):
    result, _ = address_change
    lines = failure_story(result).splitlines()
    start = lines.index("  lost values:")
    legend = lines[start + 1 : start + 3]
    assert legend[0].startswith('    ⟨lost:1⟩ = "CUST-10046": last seen in entry ')
    assert f"taken by compaction ({result.compaction.compaction_event_id}); its summary lacks it" in legend[0]
    assert legend[1].startswith('    ⟨lost:2⟩ = "ADDR-2001": ')
    assert legend[1].endswith(
        "no compaction took it (the recording got it after the compaction: the replay never received it)"
    )
    defect_lines = [n for n, line in enumerate(lines) if line.startswith("  [")]
    divergence = next(n for n, line in enumerate(lines) if line.startswith("  first divergence"))
    assert max(defect_lines) < start < divergence


def test_the_json_report_holds_the_legend(address_change, tmp_path):
    result, _ = address_change
    report = build_report(items=[result])
    (item,) = orjson.loads(dump_json(report))["items"]
    assert [(v["marker"], v["value"], v["compaction"]) for v in item["lost_values"]] == [
        ("⟨lost:1⟩", "CUST-10046", 1),
        ("⟨lost:2⟩", "ADDR-2001", None),
    ]


# ---------------------------------------------------------------- scrubbed in every format


def test_a_secret_looking_lost_value_is_scrubbed_in_every_format():
    """A token learned from a tool result and lost by the replay: its legend row names the marker
    and where it was seen in the story, the HTML, the markdown and the JSON — never the token."""
    transcript = _orders(GITHUB)
    model = ReplayModel(transcript)
    _replay_turn(model, transcript, 1, [])
    legend = lost_legend(model.lost, transcript.leaf_path(), [])
    assert [row.value for row in legend] == [GITHUB]
    items = build_items()
    failed = next(i for i in items if i.outcome == "failed")
    failed.lost_values = legend
    report = build_report(items=items)
    outputs = {  # each with what shows its row
        "story": (failure_story(failed), "⟨lost:1⟩ = "),
        "html": (render_html(report), 'data-marker="⟨lost:1⟩"'),
        "markdown": (render_markdown(report), "⟨lost:1⟩ = "),
        "json": (dump_json(report).decode(), '"marker":"⟨lost:1⟩"'),
    }
    for name, (text, row) in outputs.items():
        assert GITHUB not in text and GITHUB[4:16] not in text, name
        assert row in text, name
        assert ("e3" if name in ("html", "json") else "last seen in entry e3 (turn 1)") in text, name


def test_a_scripted_model_numbers_its_unresolved_references_over_the_run(tmp_path):
    """Replayed on a window without the lookup's result, the same reference in a call and in the
    answer is one marker, another reference the next; the legend names the references."""
    script = tmp_path / "refund.yaml"
    script.write_text(
        "turns:\n"
        "  - user: refund my order\n"
        "    steps:\n"
        "      - tool_calls: [{name: refund, arguments: {order_id: '${find.orders[0].id}'}}]\n"
        "      - say: 'Refunded ${find.orders[0].id} (${find.orders[0].total})'\n",
        encoding="utf-8",
    )
    transcript = _orders()
    model = make_model("scripted", script=script)
    model.begin_turn(split_turns(transcript.leaf_path())[0])
    refund, answer = model.complete([], []), model.complete([], [])
    assert refund.content[0].arguments == {"order_id": "⟨lost:1⟩"}
    assert answer.text() == "Refunded ⟨lost:1⟩ (⟨lost:2⟩)"
    legend = lost_legend(model.lost, transcript.leaf_path(), [])
    assert [(r.marker, r.value, r.lost_in, r.seen_entry_id, r.lost_turn) for r in legend] == [
        ("⟨lost:1⟩", "${find.orders[0].id}", "call", None, 1),
        ("⟨lost:2⟩", "${find.orders[0].total}", "text", None, 1),
    ]
    assert legend[0].line().startswith('⟨lost:1⟩ = "${find.orders[0].id}": seen in no recorded entry; ')


def test_a_hostile_lost_value_stays_text_on_one_line_in_every_format():
    """A recorded value is tool output: markup stays text in the HTML, and a line break or a table
    pipe cannot start a line or a cell of its own in the story or the markdown."""
    value = f"{XSS_SCRIPT}\n| forged | row |"
    items = build_items()
    failed = next(i for i in items if i.outcome == "failed")
    failed.lost_values = [LostValue(marker="⟨lost:1⟩", value=value, seen_entry_id="e3", seen_turn=1, lost_turn=2)]
    report = build_report(items=items)
    dom = Dom(render_html(report))
    (row,) = dom.find("tr", data_testid="lost-value")
    assert XSS_SCRIPT in el_text(row) and len(dom.find("script")) == 1  # only the report's own filter script
    story = [line for line in failure_story(failed).splitlines() if "⟨lost:1⟩" in line]
    markdown = [line for line in render_markdown(report).splitlines() if "⟨lost:1⟩" in line]
    assert len(story) == 1 and "| forged | row |" in story[0]
    assert len(markdown) == 1 and "\\| forged \\| row \\|" in markdown[0] and "<script>" not in markdown[0]
