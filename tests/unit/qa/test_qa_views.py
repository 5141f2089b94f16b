"""Report views and the session-level checks on them (replaylab/qa/views.py): the same with a
pipeline item's memo as without, and IDENTIFIER_LOST as its rule states it."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaylab.checks.identifiers import identifier_defects
from replaylab.compaction.identifiers import extract_identifiers, item_scans
from replaylab.defects import Code
from replaylab.qa.views import window_view
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MESSAGE_ADAPTER, MessageEntry, message_text
from repo_paths import REPO_ROOT

REPO = REPO_ROOT


def test_window_views_are_made_once_per_message_and_classifier() -> None:
    """With an item's memo the report's view of a message is made once per object (the windows
    before and after a compaction share most messages), equal to the plain view; another
    classifier — which decides `mutating` — gets its own view, not the first one's."""
    window = build_window(load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl").leaf_path())
    cautious, trusting = ToolClassifier(), ToolClassifier(declared={"issue_refund": "read", "send_email": "read"})
    plain = [window_view(window, cautious), window_view(window, trusting)]
    assert plain[0] != plain[1]  # the classifier matters: a memo must not mix them
    memo = ItemMemo()
    assert window_view(window, cautious, memo) == plain[0]
    assert len(memo.shown.values) == len({id(w.message) for w in window})
    assert window_view(window[3:], cautious, memo) == plain[0][3:]
    assert window_view(window, trusting, memo) == plain[1]


#: identifiers of every kind OpenClaw's patterns know (and near misses), e-mails and separators
PIECES = [
    "deadbeefcafe1234",
    "DEADBEEFCAFE1234",
    "DeadBeefCafe1234",
    "abcdef12",
    "abcdef1",
    "1234567",
    "12345",
    "https://x.example.com/a/b?c=1",
    "http://h",
    "/srv/app/main.py",
    "/a/b.",
    "C:\\Users\\x.txt",
    "C:\\.",
    "10.0.0.1:8080",
    "host.example:99999",
    "a.b:1",
    "ORD-48213",
    "#W2378156",
    "mia_garcia_4516",
    "a@b.example",
    "x.y+z@mail-host.example.org.",
    "bob@example.com)",
    "x" * 130 + "9",
    "(",
    ")",
    ".",
    ",",
    ";",
    "'",
    '"',
    "<",
    ">",
    ":",
    " ",
    "  ",
    "\n",
    "\t",
    "\u00a0",
    "the",
    "café",
    "日本",
]
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def _message(role: str, text: str) -> Any:
    if role == "user":
        return MESSAGE_ADAPTER.validate_python({"role": "user", "content": text})
    return MESSAGE_ADAPTER.validate_python(
        {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, min_size=1, max_size=8), st.data())
def test_identifier_lost_names_the_span_identifiers_the_window_does_not_show(span_texts, data) -> None:
    """A history, a kept subset of it and a summary that carries some of its identifiers (as
    written, upper-cased or not at all): IDENTIFIER_LOST names, in order, each identifier of the
    summarized span's text that the window's text does not hold in any case — with an item's
    memo (with texts scanned before) as without."""
    entries = [
        MessageEntry.model_validate(
            {
                "type": "message",
                "id": f"e{i}",
                "parentId": f"e{i - 1}" if i else None,
                "timestamp": "2026-01-01T00:00:00Z",
                "message": _message("user" if i % 2 else "assistant", text),
            }
        )
        for i, text in enumerate(span_texts)
    ]
    kept = data.draw(st.lists(st.sampled_from([e.id for e in entries]), unique=True))
    found = extract_identifiers("\n".join(span_texts))
    carried = [i if how == 0 else i.upper() for i in found if (how := data.draw(st.integers(0, 2))) < 2]
    summary = WindowMessage(None, _message("user", " ".join(carried) + data.draw(texts)))
    window = [summary] + [item for item in build_window(entries) if item.entry_id in kept]
    visible = "\n".join(message_text(item.message) for item in window).upper()
    span = "\n".join(text for entry, text in zip(entries, span_texts) if entry.id not in kept)
    lost = [i for i in extract_identifiers(span) if i.upper() not in visible]
    defects = identifier_defects(None, entries, window)
    assert [(d.code, d.actual) for d in defects] == ([(Code.IDENTIFIER_LOST, lost[:20])] if lost else [])
    memo = ItemMemo()
    if data.draw(st.booleans()):
        for text in span_texts[::2]:
            item_scans(memo).identifiers(text)
    assert identifier_defects(None, entries, window, memo) == defects


def test_a_result_row_is_marked_as_its_call_is() -> None:
    """A shell command's class depends on its arguments (OpenClaw's read-only commands), which the
    result does not hold: the result's row takes its call's mark, so `ls` and its output are not
    shown as mutating while `rm` and its output are."""

    def call(call_id: str, command: str) -> WindowMessage:
        message = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}}],
        }
        return WindowMessage(f"a-{call_id}", MESSAGE_ADAPTER.validate_python(message))

    def result(call_id: str) -> WindowMessage:
        message = {"role": "toolResult", "toolCallId": call_id, "toolName": "bash", "content": [], "isError": False}
        return WindowMessage(f"r-{call_id}", MESSAGE_ADAPTER.validate_python(message))

    window = [call("c1", "ls -la"), result("c1"), call("c2", "rm -rf build"), result("c2")]
    rows = window_view(window, ToolClassifier())
    assert [row.mutating for row in rows] == [False, False, True, True]
    # a result whose call is not in the window (summarized) is judged by its tool alone
    assert window_view([result("c1")], ToolClassifier())[0].mutating is True


def test_a_code_mode_cell_row_is_marked_as_the_ledger_counts_it() -> None:
    """An `exec` whose `command` reads as a harmless shell command but that OpenClaw's nested-tool
    records name as the parent of catalog calls (`code_cells`) is a mutating event in the ledger and
    protected by safeguard: its row and its result's are marked mutating too."""
    command = 'cat <<x\nvar cat, x; await write({path: "notes.txt", content: "call the bank"})\nx'
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"command": command}}],
    }
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "exec", "content": [], "isError": False}
    window = [
        WindowMessage("a", MESSAGE_ADAPTER.validate_python(call)),
        WindowMessage("r", MESSAGE_ADAPTER.validate_python(result)),
    ]
    assert [row.mutating for row in window_view(window, ToolClassifier())] == [False, False]
    memo = ItemMemo()
    assert [row.mutating for row in window_view(window, ToolClassifier(), memo, code_cells=frozenset({"c1"}))] == [
        True,
        True,
    ]
    assert [row.mutating for row in window_view(window, ToolClassifier(), memo)] == [False, False]


def test_a_passing_items_ledger_names_the_writes_after_the_compaction_point() -> None:
    """safeguard on a session that writes both before and after its compaction point: every write
    of the span before the cut is in the window, the later ones are named as after the point (the
    compacted run replays them), so the report shows nothing missing."""
    from replaylab import RunOptions, load_suite, run_item
    from replaylab.report.html_view import ledger_diff

    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    found = []
    for recording in suite.recordings:
        result = run_item(suite.scenarios[0], recording, RunOptions())
        if result.outcome == "passed" and result.ledger_after_point:
            found.append(result)
    assert found, "no bundled safeguard session writes after its compaction point"
    for result in found:
        before = set(result.ledger_before.mutated_event_ids)
        assert set(result.ledger_after_point) <= before
        diff = ledger_diff(result.ledger_before, result.ledger_after, result.ledger_after_point)
        assert diff.missing_after == [] and diff.after_point == result.ledger_after_point
        assert set(diff.before.mutated_event_ids) == before - set(result.ledger_after_point)


def test_a_restating_compaction_shows_its_cut_and_what_each_restated_entry_is(tmp_path) -> None:
    """The views of a safeguard compaction that keeps nothing itself: the cut drawn where its
    restated tail starts (pi's cut), each restated window row naming the recorded entry, and the
    ledger after it the recording's events (the same entries, not new ones)."""
    from replaylab.compaction import CompactParams, compact
    from replaylab.qa.views import compaction_view, window_ledger_view, window_of
    from replaylab.replay.tools.pack import load_tool_pack
    from replaylab.safety.ledger import build_ledger

    recording = REPO / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
    params = CompactParams(
        session_file=str(recording),
        context_tokens=3_400,
        reserve_tokens_floor=800,
        keep_recent_tokens=500,
        working_copy=str(tmp_path / "copy.jsonl"),
    )
    result = compact(params, classifier=classifier)
    assert result.success and result.first_kept_entry_id == result.compaction_event_id
    view = compaction_view(result, "safeguard")
    assert view.cut_entry_id == result.cut_point.tail_entry_id and view.cut_entry_id in {
        e.id for e in load_transcript(recording).entries
    }
    window = window_of(result)
    rows = window_view(window, classifier)
    assert [r.restates for r in rows[1:]] == [w["restates"] for w in result.compacted_window[1:]]
    assert [r.entry_id for r in rows] == [w["entryId"] for w in result.compacted_window]
    recorded = {e.event_id: e for e in build_ledger(load_transcript(recording), classifier).events}
    after = window_ledger_view(window, classifier)
    assert after.events and all(e == recorded[e.event_id] for e in after.events)


def test_a_pi_codemode_row_is_marked_as_its_recorded_nested_calls_judge_it(tmp_path) -> None:
    """pi 1.6.0's `codemode` call and its result are marked mutating as the ledger counts them:
    by the nested calls pi recorded on the result (`nestedCalls`), not by the call alone; a
    result whose call the window no longer shows is judged the same way."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from replaylab.qa.views import code_cells

    session = pi16_session()
    session.user("check the notes")
    codemode_turn(session, "return await tools.read({path: 'notes.txt'})", [("read", {"path": "notes.txt"})])
    codemode_turn(session, "await tools.write({path: 'b', content: 'x'})", [("write", {"path": "b", "content": "x"})])
    transcript = load_transcript(session.write(tmp_path / "s.jsonl"))
    window = build_window(transcript.leaf_path())[2:]  # the system message and the ask left out
    records = code_cells(transcript)
    rows = window_view(window, ToolClassifier(), ItemMemo(), code_cells=records)
    assert [row.mutating for row in rows] == [False, False, True, True]
    assert [row.mutating for row in window_view(window[1:2] + window[3:], ToolClassifier(), code_cells=records)] == [
        False,
        True,
    ]
    # without the records the call alone runs any tool
    assert [row.mutating for row in window_view(window, ToolClassifier())] == [True, True, True, True]
