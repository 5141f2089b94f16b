"""Pipeline-level savings (issue 8) give the results the plain computation gives.

* `messages_as_values`: one pipeline item estimates and reads the same message objects many
  times; inside the block each object's token estimate and text are computed once.
* The whole pipeline with the cache and without it: identical item results on every bundled
  suite (the cache may only change how fast, never what).
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import pytest

from replaylab.transcript import load_transcript, model, tokens
from replaylab.transcript import memo
from replaylab.transcript.memo import messages_as_values
from replaylab.transcript.context import build_window
from replaylab.transcript.model import AssistantMessage, TextBlock

REPO = Path(__file__).resolve().parents[1]


def test_cached_estimates_equal_the_plain_ones_and_end_with_the_block() -> None:
    path = load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl").leaf_path()
    messages = [w.message for w in build_window(path)]
    plain = [tokens.estimate_tokens(m) for m in messages]
    texts = [model.message_text(m) for m in messages]
    with messages_as_values():
        for _ in range(2):  # computed, then answered from the memos
            assert [tokens.estimate_tokens(m) for m in messages] == plain
            assert [model.message_text(m) for m in messages] == texts
        assert len(memo.tokens.values) == len(memo.texts.values) == len({id(m) for m in messages})
        with messages_as_values():  # nested: the same memos
            assert len(memo.tokens.values) == len({id(m) for m in messages})
        assert memo.tokens is not None and memo.texts is not None
    assert memo.tokens is None and memo.texts is None  # the block ended: the messages are let go


def test_texts_are_kept_up_to_the_bound(monkeypatch) -> None:
    """A session's texts are kept only up to `MAX_TEXT_CHARS`: a 100 MB transcript's are not all
    held twice; past the bound texts are computed each time, the same."""
    monkeypatch.setattr(memo, "MAX_TEXT_CHARS", 100)
    messages = [AssistantMessage(role="assistant", content=[TextBlock(type="text", text=str(i) * 40)])
                for i in range(5)]
    with messages_as_values():
        assert [model.message_text(m) for m in messages] == [str(i) * 40 for i in range(5)]
        assert len(memo.texts.values) == 2  # 40 + 40 of 100 characters; the third did not fit
        assert [model.message_text(m) for m in messages] == [str(i) * 40 for i in range(5)]
        assert len(memo.tokens.values) == 0 and tokens.estimate_tokens(messages[4]) == 10  # ints: unbounded


def test_a_new_object_in_place_of_a_freed_one_is_estimated_afresh() -> None:
    """The cache is keyed by object identity and holds each object, so an id cannot come back
    for another message while it is cached; a changed copy is another object."""
    short = AssistantMessage(role="assistant", content=[TextBlock(type="text", text="x" * 40)])
    with messages_as_values():
        assert tokens.estimate_tokens(short) == 10 and model.message_text(short) == "x" * 40
        longer = short.model_copy(deep=True)
        longer.content[0].text = "x" * 400
        assert tokens.estimate_tokens(longer) == 100 and model.message_text(longer) == "x" * 400
        assert tokens.estimate_tokens(short) == 10 and model.message_text(short) == "x" * 40


def _results(suite_file: Path) -> list[str]:
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.qa.suite import load_suite

    suite = load_suite(suite_file)
    out = []
    for scenario in suite.scenarios:
        for recording in suite.recordings:
            result = run_item(scenario, recording, RunOptions())
            result.duration_s = 0.0
            data = result.model_dump(mode="json")
            if data.get("compaction"):
                data["compaction"].pop("diag_id", None)
            out.append(repr(data))
    return out


@pytest.mark.parametrize("suite", sorted(p.name for p in (REPO / "suites").glob("*.yaml")))
def test_the_pipeline_gives_the_same_results_without_the_memos(suite: str, monkeypatch) -> None:
    import replaylab.qa.pipeline as pipeline

    cached = _results(REPO / "suites" / suite)
    monkeypatch.setattr(pipeline, "messages_as_values", contextlib.nullcontext)
    assert _results(REPO / "suites" / suite) == cached


def test_a_ledger_is_built_once_per_path_classifier_and_child_folder(tmp_path) -> None:
    """Inside the block, the same entries, classifier and sub-agent folder give the ledger built
    before; another path, classifier or folder (whose sub-agent files may differ) its own."""
    import shutil

    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger

    source = REPO / "recordings" / "helpdesk"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for name in ("security-lockout.jsonl", "security-lockout.sub-security-specialist.jsonl"):
            shutil.copy(source / name, tmp_path / folder / name)
    classifier = ToolClassifier()
    a = load_transcript(tmp_path / "a" / "security-lockout.jsonl")
    b = load_transcript(tmp_path / "b" / "security-lockout.jsonl")
    (tmp_path / "b" / "security-lockout.sub-security-specialist.jsonl").unlink()  # b's child cannot be found
    path = a.leaf_path()
    plain = build_ledger(a, classifier, path=path)
    with messages_as_values():
        first = build_ledger(a, classifier, path=path)
        assert build_ledger(a, classifier, path=list(path)) is first  # same entries: built once
        assert first.mutated_event_ids == plain.mutated_event_ids and first.children.keys() == plain.children.keys()
        assert build_ledger(a, classifier, path=path[:-3]) is not first
        assert build_ledger(a, ToolClassifier(), path=path) is not first
        other_folder = build_ledger(b, classifier, path=b.path_to(path[-1].id))
        assert other_folder is not first and other_folder.unresolved_children and not first.unresolved_children
        # the same entries read from another folder (a working copy's): its sub-agents are its own
        moved = dataclasses.replace(a, path=tmp_path / "b" / "security-lockout.jsonl")
        assert build_ledger(moved, classifier, path=path).unresolved_children
        # a session that names no sub-agent has the same ledger wherever it is read from
        plain_session = load_transcript(source / "cancel-two-orders.jsonl")
        alone = build_ledger(plain_session, classifier)
        assert not alone.children and not alone.unresolved_children
        assert build_ledger(dataclasses.replace(plain_session, path=tmp_path / "x.jsonl"), classifier) is alone
    assert build_ledger(a, classifier, path=path) is not plain  # outside the block: built each time


def test_a_window_is_built_once_per_path_and_handed_out_as_a_new_list() -> None:
    """Inside the block the same entries give the same window items in a list of the caller's
    own (changing it changes no later window); other entries, and any call outside, build anew."""
    transcript = load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl")
    path = transcript.leaf_path()
    plain = build_window(path)
    with messages_as_values():
        first = build_window(path)
        assert first == plain
        first.append(first[0])
        again = build_window(list(path))
        assert again == plain and all(a is b for a, b in zip(again, first)) and again is not first
        shorter = build_window(path[:-2])
        assert shorter == plain[:len(shorter)] and len(shorter) < len(plain)
    assert all(a is not b for a, b in zip(build_window(path), first))


def test_window_views_are_made_once_per_message_and_classifier() -> None:
    """The report's view of a message is made once per object inside the block (the window before
    and after a compaction share most messages), equal to the plain view; another classifier —
    which decides `mutating` — gets its own view, not the first one's."""
    from replaylab.qa.views import window_view
    from replaylab.safety.classify import ToolClassifier

    window = build_window(load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl").leaf_path())
    cautious, trusting = ToolClassifier(), ToolClassifier(declared={"issue_refund": "read", "send_email": "read"})
    plain = [window_view(window, cautious), window_view(window, trusting)]
    assert plain[0] != plain[1]  # the classifier matters: a memo must not mix them
    with messages_as_values():
        assert window_view(window, cautious) == plain[0]
        assert len(memo.shown.values) == len({id(w.message) for w in window})
        assert window_view(window[3:], cautious) == plain[0][3:]  # answered from the memo
        assert window_view(window, trusting) == plain[1]


def test_ledger_hashes_are_computed_once_per_call_and_result() -> None:
    """Inside the block each call's argument hash and each result's text hash are computed once:
    the recording's ledger and the one of a shorter path share their calls, and both equal the
    plain ledgers."""
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger

    transcript = load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl")
    classifier, path = ToolClassifier(), transcript.leaf_path()
    plain = [build_ledger(transcript, classifier), build_ledger(transcript, classifier, path=path[:-4])]
    assert plain[0].events and plain[0].events != plain[1].events
    with messages_as_values():
        assert build_ledger(transcript, classifier) == plain[0]
        hashed = len(memo.hashes.values)
        assert hashed == 2 * len(plain[0].events)  # every event has its call and its result
        assert build_ledger(transcript, classifier, path=path[:-4]) == plain[1]
        assert len(memo.hashes.values) == hashed  # the shorter path's calls: hashed already


def test_a_path_is_walked_once_per_transcript_and_leaf_and_handed_out_as_a_new_list() -> None:
    """Inside the block a transcript's path to a leaf is walked once and each caller gets a list
    of its own; another leaf, another transcript, or entries added or swapped since, walk anew."""
    transcript = load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl")
    plain = transcript.leaf_path()
    middle = plain[len(plain) // 2].id
    with messages_as_values():
        first = transcript.leaf_path()
        assert first == plain and all(a is b for a, b in zip(first, plain))
        first.append(first[0])
        again = transcript.leaf_path()
        assert again == plain and again is not first
        assert transcript.path_to(middle) == plain[:len(plain) // 2 + 1]
        copy = dataclasses.replace(transcript, by_id=dict(transcript.by_id))
        leaf = copy.by_id[plain[-1].id]
        copy.by_id[leaf.id] = leaf.model_copy(update={"parent_id": plain[-3].id})  # same size, new object
        assert copy.leaf_path() == plain[:-2] + [copy.by_id[leaf.id]]
        transcript.by_id = dict(transcript.by_id)  # swapped wholesale: walked again
        transcript.by_id[leaf.id] = copy.by_id[leaf.id]
        assert transcript.leaf_path() == plain[:-2] + [copy.by_id[leaf.id]]


def test_a_windows_ledger_is_built_once_per_window_content_and_classifier() -> None:
    """The re-check and the report both read the ledger of the window after a compaction: inside
    the block it is built once for the same messages and classifier, equal to the plain one;
    another classifier, another message in a slot, or a child resolver build their own."""
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import ledger_for_window
    from replaylab.transcript.context import WindowMessage

    window = build_window(load_transcript(REPO / "recordings" / "helpdesk" / "long-account-review.jsonl").leaf_path())
    cautious, trusting = ToolClassifier(), ToolClassifier(declared={"issue_refund": "read", "send_email": "read"})
    plain = ledger_for_window(window, cautious)
    assert plain.events and plain.mutated_event_ids != ledger_for_window(window, trusting).mutated_event_ids
    with messages_as_values():
        first = ledger_for_window(window, cautious)
        assert first == plain
        assert ledger_for_window(list(window), cautious) is first
        assert ledger_for_window(window, trusting) is not first
        mutating = next(i for i, w in enumerate(window) if w.entry_id == plain.events[0].entry_id)
        quiet = AssistantMessage(content=[TextBlock(text="nothing to see")])
        swapped = window[:mutating] + [WindowMessage(window[mutating].entry_id, quiet, False)] + window[mutating + 1:]
        other = ledger_for_window(swapped, cautious)
        assert other is not first and plain.events[0].event_id not in {e.event_id for e in other.events}
        assert ledger_for_window(window, cautious, resolve_child=lambda name: None) is not first
