"""Restated entries (`transcript.restated`): an entry that names an earlier entry of its path and
holds the same bytes is that entry — in the window, the turns, the calls that ran — and a claim
whose bytes differ is an entry of its own."""

from __future__ import annotations

from pathlib import Path

from builders.transcripts import Session
from replaylab.replay import calls_before, split_turns
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.model import ENTRY_ADAPTER, TextBlock, dump_entry
from replaylab.transcript.restated import (
    is_cut_text,
    message_sha256,
    restated_copy,
    restated_sources,
    restatements,
    without_restatements,
)
from replaylab.upstream.openclaw_2026_4_12 import MIDDLE_OMISSION_MARKER
from replaylab.upstream.openclaw_2026_9_6 import IMAGE_OMISSION_NONE_FIT as NONE_FIT
from replaylab.upstream.openclaw_2026_9_6 import IMAGE_OMISSION_NOTICE


def _session() -> tuple[Session, dict[str, str]]:
    """A refund, a chat, a retain-none compaction, then the refund restated after it."""
    s = Session()
    ids = {"ask": s.user("refund order #W1")}
    ids["call"], _ = s.assistant(None, [("refund", {"order_id": "#W1"})])
    ids["result"] = s.result("call_0001", "refund", "refund ok " + "x" * 300)
    ids["chat"] = s.user("thanks, anything else?")
    ids["answer"], _ = s.assistant("no, all done")
    ids["compaction"] = s.raw(
        {"type": "compaction", "id": "c1", "summary": "## Decisions\n- refunded", "firstKeptEntryId": "c1"}
    )
    return s, ids


def _restate(s: Session, entry_id: str, new_id: str, **changes) -> str:
    original = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == entry_id))
    data = restated_copy(original, entry_id=new_id, parent_id=s.last, source_id=entry_id)
    data.update(changes)
    return s.raw(data)


def test_a_copy_with_the_recorded_bytes_is_the_entry_it_names(tmp_path: Path) -> None:
    s, ids = _session()
    _restate(s, ids["call"], "r1")
    _restate(s, ids["result"], "r2")
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert restated_sources(path) == {"r1": ids["call"], "r2": ids["result"]}
    window = build_window(path)
    # pi's window: the summary and what follows the compaction; each restated item names its entry
    assert [(w.entry_id, w.restates, w.source_id) for w in window[1:]] == [
        ("r1", ids["call"], ids["call"]),
        ("r2", ids["result"], ids["result"]),
    ]
    assert [e.id for e in without_restatements(path)] == [e.id for e in path if e.id not in ("r1", "r2")]


def test_a_copy_of_a_copy_names_the_first_entry(tmp_path: Path) -> None:
    s, ids = _session()
    _restate(s, ids["call"], "r1")
    s.raw({"type": "compaction", "id": "c2", "summary": "again", "firstKeptEntryId": "c2"})
    original = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == "r1"))
    s.raw(restated_copy(original, entry_id="r3", parent_id=s.last, source_id="r1"))  # names the copy
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert restated_sources(path) == {"r1": ids["call"], "r3": ids["call"]}
    assert [w.source_id for w in build_window(path)[1:]] == [ids["call"]]


def test_a_claim_whose_bytes_differ_is_an_entry_of_its_own(tmp_path: Path) -> None:
    """A copy with other arguments (a second refund passed off as the first), a claim naming a later
    entry or one that does not exist: none is the entry it names."""
    s, ids = _session()
    call = next(line for line in s.lines if line.get("id") == ids["call"])
    forged = {**call["message"], "content": [{**call["message"]["content"][0], "arguments": {"order_id": "#W2"}}]}
    _restate(s, ids["call"], "f1", message=forged)
    s.raw({**dump_entry(ENTRY_ADAPTER.validate_python(call)), "id": "f2", "parentId": s.last, "restates": "later"})
    s.raw({"type": "message", "id": "later", "message": {"role": "user", "content": "hi"}})
    s.raw({**dump_entry(ENTRY_ADAPTER.validate_python(call)), "id": "f3", "parentId": s.last, "restates": "nowhere"})
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert restated_sources(path) == {}
    assert {w.entry_id: w.restates for w in build_window(path)[1:]} == {
        "f1": None,
        "f2": None,
        "later": None,
        "f3": None,
    }


def test_a_declared_truncation_of_a_result_is_that_result(tmp_path: Path) -> None:
    """A restated tool result whose text is shortened names the recorded text's length and the
    recorded message's hash: it is the result it names, marked truncated. The same shortening
    without the declaration, or declaring another message, is not."""
    s, ids = _session()
    result = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == ids["result"]))
    short = result.message.model_copy(update={"content": [TextBlock(type="text", text="refund ok [... truncated]")]})
    copy = restated_copy(result, entry_id="t1", parent_id=s.last, source_id=ids["result"], truncated=short)
    assert copy["truncatedFrom"] == {"chars": 310, "sha256": message_sha256(result.message)}
    s.raw(copy)
    s.raw({**copy, "id": "t2", "parentId": s.last, "truncatedFrom": None})
    s.raw({**copy, "id": "t3", "parentId": s.last, "truncatedFrom": {"chars": 310, "sha256": "0" * 64}})
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    sources, truncated = restatements(path)
    assert sources == {"t1": ids["result"]} and truncated == {"t1"}
    assert [(w.entry_id, w.truncated) for w in build_window(path)[1:]] == [("t1", True), ("t2", False), ("t3", False)]


def test_restated_entries_are_no_new_turn_and_no_new_call(tmp_path: Path) -> None:
    """The turns of a working copy and the calls that ran on it are the recording's: a restated
    call is one that already ran, never a second one."""
    s, ids = _session()
    recording = load_transcript(s.write(tmp_path / "rec.jsonl")).leaf_path()
    _restate(s, ids["call"], "r1")
    _restate(s, ids["result"], "r2")
    copy = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert calls_before(copy) == calls_before(recording) == [("refund", {"order_id": "#W1"})]
    shape = [([e.id for e in t.inputs], [e.id for e in t.steps], sorted(t.results)) for t in split_turns(copy)]
    assert shape == [
        ([e.id for e in t.inputs], [e.id for e in t.steps], sorted(t.results)) for t in split_turns(recording)
    ]


def test_an_items_memo_gives_the_plain_answer_and_judges_a_claim_again_before_another_source(
    tmp_path: Path,
) -> None:
    """Every compaction of a long session asks about the same restated entries over its whole path;
    an item's memo keeps each pair's verdict (`ItemMemo.claim`) and gives what the plain judgement
    gives. The same claim before another source object (here a forged one) is judged afresh: a
    verdict kept for the recorded source is never served for it."""
    from replaylab.transcript.memo import ItemMemo

    s, ids = _session()
    _restate(s, ids["call"], "r1")
    _restate(s, ids["result"], "r2")
    copy = s.write(tmp_path / "copy.jsonl")
    path = load_transcript(copy).leaf_path()
    memo = ItemMemo()
    assert restatements(path, memo) == restatements(path) == ({"r1": ids["call"], "r2": ids["result"]}, frozenset())
    assert restatements(list(path), memo) == restatements(path)
    restatements(path, memo)[0].clear()  # each caller gets its own: the kept answer is unchanged
    assert restatements(path, memo) == restatements(path)

    at = next(i for i, e in enumerate(path) if e.id == ids["call"])
    call = path[at]
    other = call.message.content[0].model_copy(update={"arguments": {"order_id": "#W2"}})
    forged = [*path[:at], call.model_copy(update={"message": call.message.model_copy(update={"content": [other]})})]
    forged += path[at + 1 :]
    assert restated_sources(forged, memo) == restated_sources(forged) == {"r2": ids["result"]}
    assert restated_sources(path, memo) == {"r1": ids["call"], "r2": ids["result"]}
    reread = load_transcript(copy).leaf_path()  # new objects, the same bytes
    assert without_restatements(reread, memo) == [e for e in reread if e.id not in ("r1", "r2")]


def test_a_declared_truncation_must_be_a_cut_of_the_recorded_result(tmp_path: Path) -> None:
    """`truncatedFrom` is a claim like `restates`: a result whose text is replaced by another (no
    head of the recorded text, no truncation notice), whose other fields changed, or which declares
    another length is no truncation of the result it names — else a compactor allowed to truncate
    (allowMutatingEventTruncate) could rewrite what a mutating call returned and pass. A real cut
    (a head of the text and OpenClaw's notice) still is."""
    s, ids = _session()
    result = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == ids["result"]))

    def declared(new_id: str, text: str, **fields) -> None:
        short = result.message.model_copy(update={"content": [TextBlock(type="text", text=text)], **fields})
        copy = restated_copy(result, entry_id=new_id, parent_id=s.last, source_id=ids["result"], truncated=short)
        s.raw(copy)

    declared("ok", "refund ok xx[... 298 more characters truncated]")
    declared("replaced", "refund FAILED [... 296 more characters truncated]")  # not a head of the recorded text
    declared("no_notice", "(no output)")
    declared("details", "refund ok [... 300 more characters truncated]", details={"forged": True})
    s.raw(
        {
            **restated_copy(
                result,
                entry_id="chars",
                parent_id=s.last,
                source_id=ids["result"],
                truncated=result.message.model_copy(
                    update={"content": [TextBlock(type="text", text="refund ok [... 300 more characters truncated]")]}
                ),
            ),
            "truncatedFrom": {"chars": 5, "sha256": message_sha256(result.message)},
        }
    )
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    sources, truncated = restatements(path)
    assert sources == {"ok": ids["result"]} and truncated == {"ok"}


def test_a_cut_between_the_halves_of_a_pair_is_a_cut_as_replaylab_reads_it() -> None:
    """OpenClaw 2026.4.12's `truncateToolResultText` slices by UTF-16 units (`text.slice`), so a
    head (or a tail after the middle marker) may end (start) with half of a character above U+FFFF:
    its file holds a lone surrogate escape, which replaylab reads as U+FFFD. That is still a cut of
    the recorded text; U+FFFD in place of a whole character is not."""
    text = "wrote: " + "\U0001f600" * 40 + " exit 0"
    assert is_cut_text("wrote: " + "\U0001f600" * 3 + "\ufffd[... 80 more characters truncated]", text)
    assert is_cut_text(
        "wrote: \U0001f600\ufffd"
        + MIDDLE_OMISSION_MARKER
        + "\ufffd\U0001f600 exit 0[... 70 more characters truncated]",
        text,
    )
    assert not is_cut_text("wrote: \ufffd[... 80 more characters truncated]", "wrote: x" + "y" * 80)
    assert not is_cut_text("wrote: \ufffd\ufffd[... 80 more characters truncated]", text)  # a whole character


def test_a_declared_truncation_keeps_every_text_block_and_says_which_images_it_left_out(tmp_path: Path) -> None:
    """OpenClaw cuts each text block of a result (`truncateToolResultMessage`: `content.map`) and
    leaves none out; its guard leaves images out only with a notice. A copy that drops the block
    saying what else the call did, or an image without a word, is no truncation of the result —
    else a compactor allowed to truncate hides part of a mutating call's outcome and passes."""
    s = Session()
    s.user("deploy the config")
    _, ids = s.assistant(None, [("write", {"path": "/srv/app.conf"})])
    source = s.raw(
        {
            "message": {
                "role": "toolResult",
                "toolCallId": ids[0],
                "toolName": "write",
                "content": [
                    {"type": "text", "text": "File written: /srv/app.conf " + "x" * 300},
                    {"type": "text", "text": "WARNING: also removed /srv/data (3,214 files)"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                ],
                "isError": False,
                "timestamp": 1,
            }
        }
    )
    s.raw({"type": "compaction", "id": "c1", "summary": "## Decisions\n- deployed", "firstKeptEntryId": "c1"})
    result = ENTRY_ADAPTER.validate_python(s.lines[-2])
    head = {"type": "text", "text": "File written: /srv/app.conf xx[... 298 more characters truncated]"}
    warning = result.message.content[1].model_dump(exclude_unset=True)
    image = result.message.content[2].model_dump(exclude_unset=True)
    notice = {"type": "text", "text": IMAGE_OMISSION_NOTICE.format(omitted=1, plural="", none_fit=NONE_FIT)}
    for new_id, content in {
        "ok": [head, warning, image],
        "ok_noticed": [head, warning, notice],
        "no_warning": [head, image],
        "no_image": [head, warning],
    }.items():
        short = result.message.model_copy(update={"content": content})
        s.raw(restated_copy(result, entry_id=new_id, parent_id=s.last, source_id=source, truncated=short))
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert restatements(path) == ({"ok": source, "ok_noticed": source}, {"ok", "ok_noticed"})


def _marked_session() -> tuple[Session, dict[str, str]]:
    """`_session` with the refund's call marked `excludeFromContext` (OpenClaw shows it only in a
    reset's kept range)."""
    s, ids = _session()
    call = next(line for line in s.lines if line.get("id") == ids["call"])
    call["message"]["excludeFromContext"] = True
    return s, ids


def test_a_copy_without_the_exclusion_mark_is_its_entry_only_when_it_says_so(tmp_path: Path) -> None:
    """A message a reset alone showed is restated without its `excludeFromContext` mark, declared:
    the same entry. The mark dropped without the declaration, the declaration with another change,
    or the declaration on a message that had no mark: each is an entry of its own."""
    s, ids = _marked_session()
    call = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == ids["call"]))
    copy = restated_copy(call, entry_id="x1", parent_id=s.last, source_id=ids["call"], shown=True)
    assert "excludeFromContext" not in copy["message"] and copy["excludeFromContextDropped"] is True
    assert "excludeFromContext" in restated_copy(call, entry_id="n", parent_id=None, source_id=ids["call"])["message"]
    s.raw(copy)
    s.raw({**copy, "id": "x2", "parentId": s.last, "excludeFromContextDropped": None})
    forged = {**copy["message"], "content": [{**copy["message"]["content"][0], "arguments": {"order_id": "#W2"}}]}
    s.raw({**copy, "id": "x3", "parentId": s.last, "message": forged})
    # equal in Python, not in bytes: a number written as a float is another message
    s.raw(
        {
            **copy,
            "id": "x5",
            "parentId": s.last,
            "message": {**copy["message"], "timestamp": float(copy["message"]["timestamp"])},
        }
    )
    result = ENTRY_ADAPTER.validate_python(next(line for line in s.lines if line.get("id") == ids["result"]))
    plain = restated_copy(result, entry_id="x4", parent_id=s.last, source_id=ids["result"], shown=True)
    assert "excludeFromContextDropped" not in plain  # no mark, nothing to drop
    s.raw({**plain, "excludeFromContextDropped": True})
    path = load_transcript(s.write(tmp_path / "copy.jsonl")).leaf_path()
    assert restated_sources(path) == {"x1": ids["call"]}
