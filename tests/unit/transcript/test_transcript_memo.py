"""Per-object memos of a QA pipeline item (replaylab/transcript/memo.py): an `ItemMemo` passed to a
function gives what the plain computation gives, keyed by the identity of the very objects it
read, holds those objects only as long as the memo lives, and the plain functions never consult one."""

from __future__ import annotations

import dataclasses
import gc
import weakref

from replaylab.transcript import load_transcript, model, tokens
from replaylab.transcript.context import build_window
from replaylab.transcript.memo import MAX_TEXT_CHARS, IdentityMemo, ItemMemo, identity
from replaylab.transcript.model import AssistantMessage, TextBlock
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
LONG_SESSION = REPO / "recordings" / "helpdesk" / "long-account-review.jsonl"


def _said(text: str) -> AssistantMessage:
    return AssistantMessage(role="assistant", content=[TextBlock(type="text", text=text)])


def test_identity_keys_are_unique_among_live_objects() -> None:
    objects = [TextBlock(text=str(i)) for i in range(20000)] + [object() for _ in range(20000)]
    assert len({identity(o) for o in objects}) == len(objects)
    assert identity(objects[0]) == identity(objects[0])


def test_a_value_kept_for_another_object_is_never_served() -> None:
    message, other = _said("x" * 400), _said("stale")
    kept = IdentityMemo()
    kept.values[identity(message)] = (other, 7)  # an entry under this key, for another object
    assert kept.get(message, tokens.estimate_tokens) == 100
    assert kept.get(message, lambda m: 0) == 100  # now kept for this one
    memo = ItemMemo()
    memo.estimates.values[identity(message)] = (other, 7)
    memo.texts.values[identity(message)] = (other, "stale")
    assert memo.tokens(message) == 100 and memo.text(message) == "x" * 400


def test_a_bounded_memo_keeps_values_while_they_fit_and_computes_the_rest_each_time() -> None:
    texts = [str(i) * 40 for i in range(5)]
    messages = [_said(text) for text in texts]
    bounded = IdentityMemo(room=100)
    assert [bounded.get(m, model.message_text) for m in messages] == texts
    assert len(bounded.values) == 2  # 40 + 40 of 100 characters; the third did not fit
    computed: list[str] = []

    def text_of(message):
        computed.append(message.content[0].text)
        return model.message_text(message)

    assert [bounded.get(m, text_of) for m in messages] == texts
    assert computed == texts[2:]
    item = ItemMemo()  # an item keeps its texts up to the module's bound, its estimates unbounded
    assert item.texts.room == MAX_TEXT_CHARS and item.estimates.room is None
    # an item's room bounds the texts it joins anew (two parts: a new string)...
    joined = [
        AssistantMessage(role="assistant", content=[TextBlock(text=t[:20]), TextBlock(text=t[20:])]) for t in texts
    ]
    small = ItemMemo(text_room=100)
    assert [small.text(m) for m in joined] == [model.message_text(m) for m in joined]
    assert len(small.texts.values) == 2 and small.texts.room == 100 - 2 * 41
    # ...not those a message holds itself, which keeping copies nowhere
    assert [small.text(m) for m in messages] == texts and all(small.text(m) is m.content[0].text for m in messages)
    assert len(small.texts.values) == 2 + len(messages) and small.texts.room == 100 - 2 * 41


def test_memoized_estimates_and_texts_equal_the_plain_ones() -> None:
    messages = [w.message for w in build_window(load_transcript(LONG_SESSION).leaf_path())]
    plain = [tokens.estimate_tokens(m) for m in messages]
    texts = [model.message_text(m) for m in messages]
    memo = ItemMemo()
    for _ in range(2):  # computed, then answered from the memo
        assert [memo.tokens(m) for m in messages] == plain
        assert [memo.text(m) for m in messages] == texts
    assert len(memo.estimates.values) == len(memo.texts.values) == len({id(m) for m in messages})
    assert tokens.estimate_context_tokens(messages, memo.tokens) == tokens.estimate_context_tokens(messages)
    assert len(ItemMemo().estimates.values) == 0  # another item starts empty


def test_the_plain_functions_never_read_a_memo() -> None:
    """`estimate_tokens` and `message_text` stay pure whatever memo exists: a message changed in
    place (which the pipeline never does) keeps its first value in a memo, and only there."""
    message = _said("x" * 40)
    memo = ItemMemo()
    assert memo.tokens(message) == 10 and memo.text(message) == "x" * 40
    message.content[0].text = "x" * 400
    assert tokens.estimate_tokens(message) == 100 and model.message_text(message) == "x" * 400
    assert memo.tokens(message) == 10 and memo.text(message) == "x" * 40


def test_a_changed_copy_of_a_message_is_estimated_afresh() -> None:
    """The memos are keyed by object identity and hold each object, so no other message can take
    a cached one's key; a changed copy is another object."""
    short = _said("x" * 40)
    memo = ItemMemo()
    assert memo.tokens(short) == 10 and memo.text(short) == "x" * 40
    longer = short.model_copy(deep=True)
    longer.content[0].text = "x" * 400
    assert memo.tokens(longer) == 100 and memo.text(longer) == "x" * 400
    assert memo.tokens(short) == 10 and memo.text(short) == "x" * 40


def test_a_memo_lets_its_objects_go_with_it() -> None:
    message = _said("gone with the item")
    seen = weakref.ref(message)
    memo = ItemMemo()
    assert memo.tokens(message) == 5 and memo.text(message) == "gone with the item"
    del message
    gc.collect()
    assert seen() is not None  # the memo holds what it keyed
    del memo
    gc.collect()
    assert seen() is None


def test_a_window_is_built_once_per_path_and_handed_out_as_a_new_list() -> None:
    """With a memo the same entries give the same window items in a list of the caller's own
    (changing it changes no later window); other entries, and any call without it, build anew."""
    path = load_transcript(LONG_SESSION).leaf_path()
    plain = build_window(path)
    memo = ItemMemo()
    first = build_window(path, memo)
    assert first == plain
    first.append(first[0])
    again = build_window(list(path), memo)
    assert again == plain and all(a is b for a, b in zip(again, first)) and again is not first
    shorter = build_window(path[:-2], memo)
    assert shorter == plain[: len(shorter)] and len(shorter) < len(plain)
    assert all(a is not b for a, b in zip(build_window(path), first))
    assert all(a is not b for a, b in zip(build_window(path, ItemMemo()), first))  # another item's


def test_a_path_is_walked_once_per_transcript_and_leaf_and_handed_out_as_a_new_list() -> None:
    """With a memo a transcript's path to a leaf is walked once and each caller gets a list of
    its own; another leaf, another transcript, or entries added or swapped since, walk anew."""
    transcript = load_transcript(LONG_SESSION)
    plain = transcript.leaf_path()
    middle = plain[len(plain) // 2].id
    memo = ItemMemo()
    first = transcript.leaf_path(memo)
    assert first == plain and all(a is b for a, b in zip(first, plain))
    first.append(first[0])
    again = transcript.leaf_path(memo)
    assert again == plain and again is not first
    assert transcript.path_to(middle, memo) == plain[: len(plain) // 2 + 1]
    assert len(memo.paths) == 2
    copy = dataclasses.replace(transcript, by_id=dict(transcript.by_id))
    leaf = copy.by_id[plain[-1].id]
    copy.by_id[leaf.id] = leaf.model_copy(update={"parent_id": plain[-3].id})  # same size, new object
    assert copy.leaf_path(memo) == plain[:-2] + [copy.by_id[leaf.id]]
    transcript.by_id = dict(transcript.by_id)  # swapped wholesale: walked again
    transcript.by_id[leaf.id] = copy.by_id[leaf.id]
    assert transcript.leaf_path(memo) == plain[:-2] + [copy.by_id[leaf.id]]


def test_what_a_higher_layer_keeps_is_one_value_per_owner_and_memo() -> None:
    memo, made = ItemMemo(), []

    def make() -> list[str]:
        made.append("new")
        return []

    owner, other = object(), object()
    first = memo.kept(owner, make)
    assert memo.kept(owner, make) is first and len(made) == 1
    assert memo.kept(other, make) is not first and ItemMemo().kept(owner, make) is not first
    assert len(made) == 3


def test_a_claim_is_judged_once_per_pair_of_objects() -> None:
    """`ItemMemo.claim`: the verdict on a restated entry is kept with both entry objects; the same
    entry before another source object is judged again, and that verdict replaces the first."""
    memo = ItemMemo()
    entry, source, other = object(), object(), object()
    asked: list[tuple[object, object]] = []

    def judge(a: object, b: object) -> int:
        asked.append((a, b))
        return 1 if b is source else 0

    assert [memo.claim(entry, source, judge) for _ in range(3)] == [1, 1, 1]
    assert memo.claim(entry, other, judge) == 0
    assert memo.claim(entry, other, judge) == 0
    assert memo.claim(entry, source, judge) == 1
    assert asked == [(entry, source), (entry, other), (entry, source)]


def test_a_paths_restatements_are_answered_once_per_path_of_the_same_objects() -> None:
    """`ItemMemo.path_restatements`: the answer is kept with the path's objects; the same objects
    in another sequence get it, a path with one other object (or one fewer) is answered anew."""
    memo = ItemMemo()
    a, b, c = object(), object(), object()
    made: list[list[object]] = []

    def compute(path) -> int:
        made.append(list(path))
        return len(made)

    assert memo.path_restatements([a, b], compute) == 1
    assert memo.path_restatements((a, b), compute) == 1
    assert memo.path_restatements([a, c], compute) == 2
    assert memo.path_restatements([a], compute) == 3
    assert memo.path_restatements([a, b], compute) == 1
    assert made == [[a, b], [a, c], [a]]
