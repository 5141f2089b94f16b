"""replayCheck invariants on hand-damaged windows: each defect code is produced by the damage it
names, and a clean window produces none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from builders.transcripts import TOOL_CLASSES, Session
from replaylab.compaction.invariants import (
    as_window,
    check_flags,
    check_mutations_kept,
    check_pairs,
    check_thinking,
    ledger_events,
    mutating_entries,
    mutating_events,
    replay_check,
)
from replaylab.compaction.safeguard import path_calls, select_protected
from replaylab.compaction.window import window_item_json
from replaylab.compactors.recheck import entry_turns
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import MESSAGE_ADAPTER, CompactionSummaryMessage, dump_entry

CLASSIFIER = ToolClassifier(declared=TOOL_CLASSES)


@pytest.fixture
def session(tmp_path):
    s = Session()
    s.user("cancel #W1 and check #W2")
    s.assistant(
        "on it",
        [("cancel_order", {"order_id": "#W1"}), ("get_order", {"order_id": "#W2"})],
        thinking="plan",
        signature="SIG1",
    )
    s.result("call_0001", "cancel_order", "cancelled")
    s.result("call_0002", "get_order", "pending")
    s.assistant("done")
    transcript = load_transcript(s.write(tmp_path / "rec.jsonl"))
    path = transcript.leaf_path()
    return transcript, path, build_window(path)


def _codes(defects):
    return sorted(d.code.value for d in defects)


def _summary():
    return WindowMessage("cmp", CompactionSummaryMessage(role="compactionSummary", summary="## Decisions\n-"))


def test_clean_window_has_no_defect(session):
    transcript, path, before = session
    ledger = build_ledger(transcript, CLASSIFIER)
    assert (
        replay_check(path, before, before, ledger=ledger, replay_safe=False, mutated_event_ids=ledger.mutated_event_ids)
        == []
    )


def test_mutating_entries_are_the_call_message_and_its_result(session):
    _, path, before = session
    found = mutating_entries(((w.entry_id, w.message) for w in before), CLASSIFIER)
    assert found == {"e0002": ("call_0001", "cancel_order"), "e0003": ("call_0001", "cancel_order")}


def test_dropped_mutation(session):
    """A dropped refund-like call and its result are one lost side effect: one MUTATION_DROPPED at
    the call's entry, naming both entries, the tool, its arguments and the turn."""
    _, path, before = session
    after = [_summary()] + [w for w in before if w.entry_id not in ("e0002", "e0003", "e0004")]
    mutating = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    defects = check_mutations_kept(path, before, after, mutating, entry_turns(path))
    assert _codes(defects) == ["MUTATION_DROPPED"]
    (dropped,) = defects
    assert (dropped.where.entry_id, dropped.where.tool_call_id, dropped.where.tool) == (
        "e0002",
        "call_0001",
        "cancel_order",
    )
    assert dropped.where.turn == 1  # the session's first turn: turns count from 1
    assert dropped.detail == {
        "call_entry_id": "e0002",
        "result_entry_id": "e0003",
        "arguments": {"order_id": "#W1"},
        "dropped": ["e0002", "e0003"],
    }
    assert "cancel_order" in dropped.message and '"order_id":"#W1"' in dropped.message
    assert "call entry e0002 and result entry e0003 are missing" in dropped.message


def test_parallel_dropped_calls_are_two_events(tmp_path):
    """Two mutating calls of one assistant message are two events, each with its own tool call id
    and result entry, though they share the call's entry."""
    s = Session()
    s.user("cancel #W1 and #W2")
    s.assistant("on it", [("cancel_order", {"order_id": "#W1"}), ("cancel_order", {"order_id": "#W2"})])
    s.result("call_0001", "cancel_order", "cancelled")
    s.result("call_0002", "cancel_order", "cancelled")
    s.assistant("done")
    transcript = load_transcript(s.write(tmp_path / "rec.jsonl"))
    path = transcript.leaf_path()
    before = build_window(path)
    after = [_summary(), before[-1]]
    ledger = build_ledger(transcript, CLASSIFIER)
    defects = replay_check(path, before, after, ledger=ledger)
    dropped = [d for d in defects if d.code.value == "MUTATION_DROPPED"]
    assert [(d.where.tool_call_id, d.where.entry_id) for d in dropped] == [
        ("call_0001", "e0002"),
        ("call_0002", "e0002"),
    ]
    assert [d.detail["result_entry_id"] for d in dropped] == ["e0003", "e0004"]
    assert [d.detail["arguments"] for d in dropped] == [{"order_id": "#W1"}, {"order_id": "#W2"}]


def test_arguments_in_findings_are_scrubbed(tmp_path):
    s = Session()
    s.user("pay")
    s.assistant("paying", [("cancel_order", {"order_id": "#W1", "api_key": "sk-live-0123456789abcdefghijklmnop"})])
    s.result("call_0001", "cancel_order", "ok")
    s.assistant("done")
    path = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    before = build_window(path)
    mutating = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    (dropped,) = check_mutations_kept(path, before, [_summary(), before[-1]], mutating)
    assert "sk-live-0123456789abcdefghijklmnop" not in dropped.message + str(dropped.detail)
    assert dropped.detail["arguments"]["order_id"] == "#W1"


def _restated(item, entry_id, **changes):
    """`item`'s message as a new entry (a copy the compactor wrote), optionally changed."""
    return WindowMessage(entry_id, MESSAGE_ADAPTER.validate_python({**dump_entry(item.message), **changes}))


def test_altered_mutation_and_restated_copies(session):
    """pi shows entries as stored, so a mutating entry survives either as itself or as a copy the
    compactor wrote (a new entry carrying the same tool call): byte-identical, it is kept; changed,
    it is MUTATION_ALTERED, blamed on the recorded entry; without any copy, MUTATION_DROPPED."""
    _, path, before = session
    mutating = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    short = [{"type": "text", "text": "cancel…"}]
    altered_in_place = [before[0], before[1], _restated(before[2], "e0003", content=short), *before[3:]]
    assert _codes(check_mutations_kept(path, before, altered_in_place, mutating)) == ["MUTATION_ALTERED"]
    copies = [_summary(), _restated(before[1], "c2"), _restated(before[2], "c3"), *before[3:]]
    assert check_mutations_kept(path, before, copies, mutating) == []
    altered_copy = [_summary(), _restated(before[1], "c2"), _restated(before[2], "c3", content=short), *before[3:]]
    defects = check_mutations_kept(path, before, altered_copy, mutating)
    assert _codes(defects) == ["MUTATION_ALTERED"] and defects[0].where.entry_id == "e0002"  # the call's entry
    assert defects[0].detail["altered"] == ["e0003"]
    assert defects[0].actual["content"] == short and defects[0].where.tool_call_id == "call_0001"
    call_only = [_summary(), _restated(before[1], "c2"), *before[3:]]
    defects = check_mutations_kept(path, before, call_only, mutating)
    assert _codes(defects) == ["MUTATION_DROPPED"] and defects[0].where.entry_id == "e0002"
    assert defects[0].detail["dropped"] == ["e0003"] and "result entry e0003 is missing" in defects[0].message


def test_changed_arguments_are_altered(session):
    _, path, before = session
    data = dump_entry(before[1].message)
    data["content"][2]["arguments"] = {"order_id": "#W9"}
    after = [before[0], WindowMessage("e0002", MESSAGE_ADAPTER.validate_python(data)), *before[2:]]
    mutating = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    (altered,) = check_mutations_kept(path, before, after, mutating)
    assert altered.code.value == "MUTATION_ALTERED"
    # the differing leaf by its human path, not the two dumped messages cut to one prefix
    [leaf] = altered.detail["differences"]
    assert leaf["path"] == "content[2].arguments.order_id" and leaf["actual"] == "#W9"
    assert "differ" in altered.message and "at content[2].arguments.order_id" in altered.message
    assert "root[" not in altered.message


def test_pair_broken_variants(session):
    _, path, before = session
    assert check_pairs(path, before) == []
    missing_result = [w for w in before if w.entry_id != "e0004"]
    (broken,) = check_pairs(path, missing_result, entry_turns(path))
    assert (broken.code.value, broken.where.entry_id, broken.where.tool, broken.where.turn) == (
        "PAIR_BROKEN",
        "e0002",
        "get_order",
        1,
    )
    assert broken.detail["result_entry_id"] == "e0004" and broken.detail["arguments"] == {"order_id": "#W2"}
    orphan = [before[0]] + [w for w in before if w.entry_id in ("e0003", "e0005")]
    assert _codes(check_pairs(path, orphan)) == ["PAIR_BROKEN"]
    summary_between = [before[0], before[1], _summary(), before[2], before[3], before[4]]
    defects = check_pairs(path, summary_between)
    assert _codes(defects) == ["PAIR_BROKEN", "PAIR_BROKEN"]  # both calls lost their direct results
    swapped = [before[0], before[1], before[3], before[2], before[4]]
    assert check_pairs(path, swapped) == []  # parallel results in any order


def test_a_pair_the_recording_already_broke_is_not_the_compactions(tmp_path):
    """A result written twice breaks its pair in the recording's own window: the compaction that
    keeps the call, both results and what follows did not part them. Without the window before,
    it is judged as before; a pair whole before and broken after stays the compaction's."""
    s = Session()
    s.user("check #W2 and cancel #W1")
    s.assistant("on it", [("get_order", {"order_id": "#W2"})])
    s.result("call_0001", "get_order", "pending")
    s.result("call_0001", "get_order", "pending")  # written twice, as a retried write leaves it
    s.assistant("cancelling", [("cancel_order", {"order_id": "#W1"})])
    s.result("call_0002", "cancel_order", "cancelled")
    s.assistant("done")
    path = load_transcript(s.write(tmp_path / "twice.jsonl")).leaf_path()
    before = build_window(path)
    (own,) = check_pairs(path, before)
    assert "is separated from its call call_0001" in own.message
    after = [_summary(), *before[1:]]
    assert check_pairs(path, after, before=before) == []
    assert _codes(check_pairs(path, after)) == ["PAIR_BROKEN"]
    parted = [w for w in after if w.entry_id != before[5].entry_id]  # the cancel's result dropped
    (defect,) = check_pairs(path, parted, before=before)
    assert defect.where.tool_call_id == "call_0002" and "sits between call call_0002 and its result" in defect.message


def test_pairs_of_restated_copies(session):
    """A copy the compactor wrote carries the recorded calls: copied results right after it keep the
    pairs intact; a copy left without its results (a merged group) or split from them breaks them."""
    _, path, before = session
    call, *results = before[1:4]
    copies = [_summary(), _restated(call, "c2"), _restated(results[0], "c3"), _restated(results[1], "c4")]
    assert check_pairs(path, copies) == []
    defects = check_pairs(path, [_summary(), _restated(call, "c2")])
    assert _codes(defects) == ["PAIR_BROKEN", "PAIR_BROKEN"] and {d.where.entry_id for d in defects} == {"e0002"}
    assert {d.detail["seen_at"] for d in defects} == {"c2"}  # the recorded call's entry, and the copy that broke it
    assert {d.where.tool_call_id for d in defects} == {"call_0001", "call_0002"}
    defects = check_pairs(path, [_summary(), _restated(call, "c2"), before[4]])
    assert _codes(defects) == ["PAIR_BROKEN", "PAIR_BROKEN"] and {d.where.entry_id for d in defects} == {"e0002"}
    assert {d.detail["seen_at"] for d in defects} == {"e0005"}  # the entry between the copy and its results
    split = [_summary(), _restated(call, "c2"), before[4], _restated(results[0], "c3"), _restated(results[1], "c4")]
    assert _codes(check_pairs(path, split)) == ["PAIR_BROKEN", "PAIR_BROKEN"]


def _named(item, entry_id, *, truncated=False, **changes):
    """`item` restated as `entry_id`, naming the entry it restates (`transcript.restated`)."""
    copy = _restated(item, entry_id, **changes)
    return WindowMessage(entry_id, copy.message, item.protected, item.entry_id, truncated)


def test_restatements_are_held_to_the_entries_they_name(session):
    """A restated entry names its entry: byte-identical it is that entry (kept, its pairs and thinking
    the recorded ones); changed, it is MUTATION_ALTERED. A declared truncation of a result is no
    alteration only where the compaction was allowed to truncate."""
    _, path, before = session
    mutating = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    call, cancelled, pending = before[1:4]
    restated = [_summary(), _named(call, "c2"), _named(cancelled, "c3"), _named(pending, "c4"), before[4]]
    assert check_mutations_kept(path, before, restated, mutating) == []
    assert check_pairs(path, restated) == [] and check_thinking(path, restated) == []
    short = [{"type": "text", "text": "canc [... 5 more characters truncated]"}]
    shortened = [_summary(), _named(call, "c2"), _named(cancelled, "c3", truncated=True, content=short), *restated[3:]]
    defects = check_mutations_kept(path, before, shortened, mutating)
    assert _codes(defects) == ["MUTATION_ALTERED"] and defects[0].detail["altered"] == ["e0003"]
    assert check_mutations_kept(path, before, shortened, mutating, truncation_allowed=True) == []
    undeclared = [*shortened[:2], _named(cancelled, "c3", content=short), *shortened[3:]]
    assert _codes(check_mutations_kept(path, before, undeclared, mutating, truncation_allowed=True)) == [
        "MUTATION_ALTERED"
    ]
    json_window = [window_item_json(w) for w in shortened]
    assert as_window(json_window) == shortened  # restates and truncated survive the JSON form


def test_interleaving_present_in_the_recording_is_not_blamed(tmp_path):
    s = Session()
    s.user("go")
    _, ids = s.assistant(None, [("bash", {"cmd": "sleep 1"})])
    s.raw(
        {
            "type": "custom_message",
            "customType": "openclaw.sessions_yield",
            "content": "sub-agent done",
            "display": False,
        }
    )
    s.result(ids[0], "bash", "ok")
    path = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    assert check_pairs(path, build_window(path)) == []


def test_errored_assistant_calls_need_no_result(tmp_path):
    s = Session()
    s.user("go")
    s.assistant(None, [("bash", {"cmd": "x"})], stop="aborted")
    s.user("again")
    path = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    assert check_pairs(path, build_window(path)) == []


def test_a_result_of_an_errored_assistants_call_is_no_pair_a_compaction_broke(tmp_path):
    """pi drops an errored / aborted assistant message before the next request, so a result of
    its call (OpenClaw's runner records some) has no call in any window, the recording's own
    included: no compaction parted them, kept or restated. A result whose call was dropped by the
    compaction is still an orphan."""
    s = Session()
    s.user("go")
    s.assistant(None, [("create_ticket", {"title": "x"})], stop="error")
    s.result("call_0001", "create_ticket", "created")
    s.assistant(None, [("get_order", {"order_id": "#W2"})])
    s.result("call_0002", "get_order", "pending")
    s.assistant("done")
    path = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    window = build_window(path)
    assert check_pairs(path, window) == []
    assert check_pairs(path, [_summary(), *window[1:]]) == []  # the errored call summarized away
    assert check_pairs(path, [_summary(), window[1], window[2], *window[4:]]) != []  # a live call dropped


def _path_with_call_ids(session: Session, folder, *ids: str):
    """The session's leaf path with its calls `call_0001`, `call_0002`, … renamed `ids`."""
    text = session.write(folder / "rec.jsonl").read_text()
    for n, new_id in enumerate(ids, 1):
        text = text.replace(f'"call_{n:04d}"', f'"{new_id}"')
    (folder / "renamed.jsonl").write_text(text)
    return load_transcript(folder / "renamed.jsonl").leaf_path()


def test_reused_call_ids_pair_each_result_with_the_latest_call_before_it(tmp_path):
    """Some providers number their calls afresh in every message (`call_0` each time): a result
    answers the latest call of its id before it. The events, safeguard's protection and the
    copies' lookup follow that, so a read sharing an id with a write is neither protected with it
    nor taken for its copy."""
    s = Session()
    s.user("cancel #W1")
    s.assistant(None, [("cancel_order", {"order_id": "#W1"})])
    s.result("call_0001", "cancel_order", "cancelled")
    s.user("and #W2?")
    s.assistant(None, [("get_order", {"order_id": "#W2"})])
    s.result("call_0002", "get_order", "pending")
    s.assistant("done")
    path = _path_with_call_ids(s, tmp_path, "call_0", "call_0")
    before = build_window(path)
    write_call, write_result, read_call, read_result = (before[i].entry_id for i in (1, 2, 4, 5))
    events = mutating_events(((w.entry_id, w.message) for w in before), CLASSIFIER)
    assert [(e.tool, e.call_entry_id, e.result_entry_id) for e in events] == [
        ("cancel_order", write_call, write_result)
    ]
    protected = select_protected(path, CLASSIFIER, calls=path_calls(path))
    assert protected.entry_ids == [write_call, write_result]
    # an earlier compaction's copies of the write, then the later one's copies after the read's pair
    copied = [_summary(), *(replace(w, entry_id=f"c{i}", restates=w.entry_id) for i, w in enumerate(before[1:3]))]
    earlier = [*copied, *before[3:]]
    later = [_summary(), *before[3:6], *(replace(w, entry_id=f"d{i}") for i, w in enumerate(copied[1:])), before[6]]
    assert check_mutations_kept(path, earlier, later, events) == []
    assert check_pairs(path, later) == [] and check_pairs(path, before) == []


def test_parallel_calls_without_ids_are_answered_in_order(tmp_path):
    """A server that gives no call ids leaves pi with `""` for every call (pi-ai's
    openai-completions: `toolCall.id || ""`), parallel calls of one message included: their
    results answer them in order, so the recording's own window holds no broken pair, and a
    window that lost one of them still says so."""
    s = Session()
    s.user("check #W1 and #W2")
    s.assistant(None, [("get_order", {"order_id": "#W1"}), ("get_order", {"order_id": "#W2"})])
    s.result("call_0001", "get_order", "paid")
    s.result("call_0002", "get_order", "pending")
    s.assistant("done")
    path = _path_with_call_ids(s, tmp_path, "", "")
    window = build_window(path)
    assert check_pairs(path, window) == []
    assert _codes(check_pairs(path, [*window[:3], *window[4:]])) == ["PAIR_BROKEN"]


def test_thinking_altered_or_stripped(session):
    _, path, before = session
    data = dump_entry(before[1].message)
    data["content"][0]["thinkingSignature"] = "FORGED"
    forged = [before[0], WindowMessage("e0002", MESSAGE_ADAPTER.validate_python(data)), *before[2:]]
    assert _codes(check_thinking(path, forged)) == ["THINKING_ALTERED"]
    data["content"] = data["content"][1:]
    stripped = [before[0], WindowMessage("e0002", MESSAGE_ADAPTER.validate_python(data)), *before[2:]]
    assert _codes(check_thinking(path, stripped)) == ["THINKING_ALTERED"]
    assert check_thinking(path, before) == []


def test_thinking_of_a_restated_copy_is_the_recorded_one(session):
    """A copy the compactor wrote in place of a recorded assistant message (same tool calls, new
    entry id) must carry its thinking blocks as recorded, signature included."""
    _, path, before = session
    blocks = dump_entry(before[1].message)["content"]
    unsigned = [{k: v for k, v in blocks[0].items() if k != "thinkingSignature"}, *blocks[1:]]
    assert check_thinking(path, [before[0], _restated(before[1], "c2"), *before[2:]]) == []
    defects = check_thinking(path, [before[0], _restated(before[1], "c2", content=unsigned), *before[2:]])
    assert _codes(defects) == ["THINKING_ALTERED"] and defects[0].where.entry_id == "c2"


def test_flags():
    assert _codes(check_flags(True, ["a"], ["a"])) == ["REPLAY_FLAG_WRONG"]
    assert _codes(check_flags(False, ["a"], ["a", "b"])) == ["MUTATED_IDS_WRONG"]
    extra = check_flags(False, ["b", "a"], ["a", "b"])
    assert _codes(extra) == ["MUTATED_IDS_WRONG"] and "order" in extra[0].message
    assert check_flags(True, [], []) == []


def test_compacted_window_json_round_trips(session):
    transcript, path, before = session
    as_json = [window_item_json(w) for w in before]
    assert [w.entry_id for w in as_window(as_json)] == [w.entry_id for w in before]
    ledger = build_ledger(transcript, CLASSIFIER)
    assert (
        replay_check(
            path, before, as_json, ledger=ledger, replay_safe=False, mutated_event_ids=ledger.mutated_event_ids
        )
        == []
    )


def test_a_copy_that_shows_a_marked_call_the_window_before_did_not_show_is_altered(tmp_path):
    """A copy may drop a message's `excludeFromContext` mark only when the window before showed the
    message (a reset kept it). One that unhides a call the model never saw — a compactor writing
    the mark away where the agent hid it — is MUTATION_ALTERED; the same copy of a shown call is kept."""
    s = Session()
    s.user("cancel #W1")
    s.assistant("on it", [("cancel_order", {"order_id": "#W1"})])
    s.lines[-1]["message"]["excludeFromContext"] = True
    s.result("call_0001", "cancel_order", "cancelled")
    s.assistant("done")
    path = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    shown = build_window(path)
    mutating = mutating_events(((w.entry_id, w.message) for w in shown), CLASSIFIER)
    call = shown[1]
    unmarked = {k: v for k, v in dump_entry(call.message).items() if k != "excludeFromContext"}
    copy = WindowMessage("c2", MESSAGE_ADAPTER.validate_python(unmarked), restates=call.entry_id)
    after = [_summary(), copy, WindowMessage("c3", shown[2].message, restates=shown[2].entry_id), shown[3]]
    assert check_mutations_kept(path, shown, after, mutating) == []
    hidden = [w for w in shown if w.entry_id != call.entry_id]  # the agent did not show the call
    (altered,) = check_mutations_kept(path, hidden, after, mutating)
    assert altered.code.value == "MUTATION_ALTERED" and altered.detail["altered"] == [call.entry_id]


def test_safeguard_protects_the_result_the_ledger_pairs_with_a_mutating_call_across_a_reused_id(tmp_path):
    """A mutating call still waits when a later message reuses its id for a read; the write's
    result (its tool name) comes after the read's. `pair_path` (the ledger, overflow recovery)
    pairs it with the write, so safeguard protects it with the write: otherwise its own
    compaction drops a result the ledger counts (MUTATION_DROPPED)."""
    s = Session()
    s.user("cancel #W1")
    s.assistant(None, [("cancel_order", {"order_id": "#W1"})])
    s.assistant(None, [("get_order", {"order_id": "#W2"})])
    s.result("call_0002", "get_order", "pending")
    s.result("call_0001", "cancel_order", "cancelled")
    s.assistant("done")
    path = _path_with_call_ids(s, tmp_path, "call_0", "call_0")
    write_call, write_result = path[1].id, path[4].id
    ledger = build_ledger(load_transcript(tmp_path / "renamed.jsonl"), CLASSIFIER)
    assert [(e.entry_id, e.result_entry_id) for e in ledger.events] == [(write_call, write_result)]
    protected = select_protected(path, CLASSIFIER, calls=path_calls(path))
    assert protected.entry_ids == [write_call, write_result]


def test_a_dropped_call_known_only_by_its_result_names_its_result(tmp_path):
    """The ledger names the result's entry for both ends of a call that cannot be read: the
    finding calls it the result entry, not the call's."""
    s = Session()
    s.user("clean up")
    s.result("call_0009", "bash", "removed build")  # its call's message is not in the file
    s.assistant("done")
    transcript = load_transcript(s.write(tmp_path / "rec.jsonl"))
    path = transcript.leaf_path()
    ledger = build_ledger(transcript, ToolClassifier())
    before = build_window(path)
    (dropped,) = check_mutations_kept(path, before, [_summary(), before[-1]], ledger_events(ledger))
    assert f"result entry {path[1].id} is missing" in dropped.message


def test_the_events_a_check_finds_without_a_ledger_are_the_ledgers_for_pi_codemode(tmp_path) -> None:
    """`replay_check` given no ledger finds the events itself: a pi 1.6.0 `codemode` call is
    judged by the nested calls recorded on its result there too (`nested_calls`), as the ledger
    judges it."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from replaylab.compaction.invariants import mutating_entries

    session = pi16_session()
    session.user("check the notes")
    codemode_turn(session, "return await tools.read({path: 'a'})", [("read", {"path": "a"})])
    wrote, answer, call_id = codemode_turn(
        session, "await tools.write(...)", [("write", {"path": "b", "content": "x"})]
    )
    transcript = load_transcript(session.write(tmp_path / "s.jsonl"))
    items = [(w.entry_id, w.message) for w in build_window(transcript.leaf_path())]
    assert mutating_entries(items, CLASSIFIER) == {wrote: (call_id, "codemode"), answer: (call_id, "codemode")}
    assert build_ledger(transcript, CLASSIFIER).mutated_event_ids == [call_id]
