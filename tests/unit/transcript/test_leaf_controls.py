"""OpenClaw's load-time navigation as replaylab's load reads it (`transcript.leaf_controls`): once a
reset is read, an entry whose parent is no descendant of the latest reset continues from the entry
read just before it (`SessionEntryNavigation.appendCanonicalNavigationEntry`, openclaw@2026.9.6);
a side append keeps its parent. Checked against OpenClaw's own load by
tests/oracles/test_openclaw_store.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replaylab.transcript import load_transcript


def _entry(entry_id: str, parent: str | None, kind: str = "message", **fields: Any) -> dict[str, Any]:
    if kind == "message" and "message" not in fields:
        role = "user" if entry_id.startswith("u") else "assistant"
        content = entry_id if role == "user" else [{"type": "text", "text": entry_id}]
        fields["message"] = {"role": role, "content": content, "timestamp": 1796127790000}
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-09-10T10:00:01.000Z", **fields}


def _file(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    header = {"type": "session", "version": 4, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in [header, *entries]))
    return path


@pytest.mark.parametrize("lazy", [False, True])
def test_a_branch_from_before_a_reset_continues_from_the_entry_read_before_it(tmp_path: Path, lazy: bool) -> None:
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("r1", "a1", "reset", reason="reset"),
        _entry("u2", "r1"),
        _entry("a2", "u2"),
        _entry("u3", "a1"),  # branched from before the reset
        _entry("a3", "u3"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "r1", "u2", "a2", "u3", "a3"]


def test_a_side_append_after_a_reset_keeps_its_parent(tmp_path: Path) -> None:
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("r1", "a1", "reset", reason="reset"),
        _entry("u2", "r1"),
        _entry("c1", "a1", "custom", customType="note", data={}, appendMode="side"),
    ]
    transcript = load_transcript(_file(tmp_path, entries))
    assert [e.id for e in transcript.path_to("c1")] == ["u1", "a1", "c1"]


def test_before_any_reset_a_branch_keeps_its_parent(tmp_path: Path) -> None:
    entries = [_entry("u1", None), _entry("a1", "u1"), _entry("u2", "a1"), _entry("a2", "u2"), _entry("u3", "a1")]
    assert [e.id for e in load_transcript(_file(tmp_path, entries)).leaf_path()] == ["u1", "a1", "u3"]


@pytest.mark.parametrize("lazy", [False, True])
def test_the_entry_written_after_a_side_append_continues_from_the_leaf(tmp_path: Path, lazy: bool) -> None:
    """A side append (a transcript rewrite's copy) leaves OpenClaw's leaf where it stands; the next
    entry, written with the side entry as its `parentId`, continues from that leaf
    (`appendCanonicalNavigationEntry`), reset or not: the side message is no part of the path."""
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("u2", "a1", appendMode="side"),
        _entry("c1", "u2", "custom", customType="note", data={}, appendMode="side"),
        _entry("u3", "c1"),
        _entry("a3", "u3"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u3", "a3"]
    assert [e.id for e in transcript.path_to("c1")] == ["u1", "a1", "u2", "c1"]


def test_a_side_append_after_a_followed_control_keeps_its_parent(tmp_path: Path) -> None:
    """A control's `appendParentId` relinks the next entry to its target unless that entry is a
    side append, which keeps its parent; the entry after it continues from the target."""
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("u2", "a1"),
        {"type": "leaf", "id": "l1", "parentId": "u2", "targetId": "a1", "appendParentId": "u2"},
        _entry("c1", "u2", "custom", customType="note", data={}, appendMode="side"),
        _entry("u3", "c1"),
    ]
    transcript = load_transcript(_file(tmp_path, entries))
    assert [e.id for e in transcript.path_to("c1")] == ["u1", "a1", "u2", "c1"]
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u3"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_session_ending_with_side_appends_stands_at_the_last_entry_before_them(tmp_path: Path, lazy: bool) -> None:
    """A side append never moves OpenClaw's leaf (`appendCanonicalNavigationEntry`): a file that
    ends with side entries resumes at the last entry written before them."""
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("u2", "a1"),
        _entry("c1", None, "custom", customType="note", data={}, appendMode="side"),
        _entry("c2", "c1", "custom", customType="note", data={}, appendMode="side"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert transcript.leaf_id == "u2"
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u2"]
    assert [e.id for e in transcript.abandoned_entries()] == ["c1", "c2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_control_ignored_after_a_reset_continues_from_the_leaf(tmp_path: Path, lazy: bool) -> None:
    """After a reset, OpenClaw ignores a control aimed outside the reset's branch and gives it the
    leaf it stands at as its parent (`appendOpaqueNavigationRecord`): a side entry the control was
    written under stays off the path."""
    entries = [
        _entry("u1", None),
        _entry("r1", "u1", "reset", reason="reset"),
        _entry("c1", "r1", "custom", customType="note", data={}, appendMode="side"),
        {"type": "leaf", "id": "l1", "parentId": "c1", "targetId": "u1"},
        _entry("u2", "l1"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "r1", "l1", "u2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_an_openclaw_entry_without_a_parent_key_continues_from_the_leaf(tmp_path: Path, lazy: bool) -> None:
    """OpenClaw 2026.9 gives an entry with no `parentId` key the leaf as its parent
    (`appendCanonicalNavigationEntry`'s `!hasParentId`), reset or not."""
    entries = [_entry("u1", None), _entry("u2", "u1"), _entry("a2", None)]
    del entries[2]["parentId"]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "u2", "a2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_pi_entry_without_a_parent_key_is_a_root(tmp_path: Path, lazy: bool) -> None:
    """pi reads a missing `parentId` as no parent: only OpenClaw 2026.9's files (version 4) attach it."""
    entries = [_entry("u1", None), _entry("u2", "u1"), _entry("a2", None)]
    del entries[2]["parentId"]
    path = _file(tmp_path, entries)
    path.write_bytes(path.read_bytes().replace(b'"version":4', b'"version":3', 1))
    transcript = load_transcript(path, lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["a2"]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    "last",
    [
        _entry("l1", "u1", "label", targetId="nowhere", label="x"),
        {"type": "leaf", "id": "c1", "parentId": "u1", "targetId": "nowhere"},
        {"type": "leaf", "id": "c1", "parentId": "u1", "targetId": "u1", "appendMode": "sideways"},
    ],
    ids=["label-of-an-unknown-target", "control-of-an-unknown-target", "control-of-an-unknown-mode"],
)
def test_a_record_openclaw_keeps_aside_never_becomes_the_leaf(tmp_path: Path, lazy: bool, last: dict) -> None:
    """A label whose target OpenClaw never indexed, and a control it rejects, leave its load where
    it stands (`appendCanonicalNavigationEntry`, `appendOpaqueNavigationRecord`): a file that ends
    with one resumes at the entry before it, not on the record's own branch."""
    entries = [_entry("u1", None), _entry("a1", "u1"), _entry("u2", "a1"), _entry("a2", "u2"), last]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert transcript.leaf_id == "a2"
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u2", "a2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_record_kept_aside_leaves_a_followed_controls_append_parent(tmp_path: Path, lazy: bool) -> None:
    """The entry written to a control's `appendParentId` continues from its target even when a
    record OpenClaw keeps aside was read in between: that record moves nothing."""
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("u2", "a1"),
        {"type": "leaf", "id": "c1", "parentId": "u2", "targetId": "a1", "appendParentId": "u2"},
        _entry("l1", "a1", "label", targetId="nowhere", label="x"),
        {"type": "leaf", "id": "c2", "parentId": "a1", "targetId": "nowhere"},
        _entry("u3", "u2"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u3"]


@pytest.mark.parametrize("lazy", [False, True])
def test_after_a_reset_an_entry_under_a_record_kept_aside_continues_from_the_leaf(tmp_path: Path, lazy: bool) -> None:
    """A record kept aside joins no reset's branch: once a reset is read, an entry written under
    one is attached to the leaf the load stands at, as any entry from off the branch."""
    entries = [
        _entry("u1", None),
        _entry("r1", "u1", "reset", reason="reset"),
        _entry("u2", "r1"),
        _entry("l1", "r1", "label", targetId="nowhere", label="x"),
        _entry("u3", "l1"),
    ]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "r1", "u2", "u3"]


def _aside(entry_id: str, parent: object) -> dict[str, Any]:
    """A tool result OpenClaw's schema keeps aside (no `role`), linked to `parent`."""
    message = {"toolCallId": "t", "toolName": "read", "content": [{"type": "text", "text": "x"}], "isError": False}
    return {**_entry(entry_id, None, message=message), "parentId": parent}


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("link", ["t1", "nowhere", None], ids=["itself", "nowhere", "null"])
def test_an_entry_written_to_a_record_kept_aside_continues_from_the_leaf(tmp_path: Path, lazy: bool, link) -> None:
    """OpenClaw's load appends the next entry to a record its schema keeps aside when the record
    still links to a parent (`parseParentLinkedOpaqueEntry`), and an entry whose `parentId` is
    that record continues from the leaf (`appendCanonicalNavigationEntry`: `parentId ===
    appendParentId` while the leaf is another entry), wherever the record's own link leads."""
    entries = [_entry("u1", None), _entry("a1", "u1"), _aside("t1", link), _entry("a2", "t1"), _entry("u2", "a2")]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "a2", "u2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_an_entry_under_a_record_kept_aside_and_not_read_next_keeps_its_parent(tmp_path: Path, lazy: bool) -> None:
    """Only the entry written next to the record continues from the leaf: a later child of it is
    walked through it, as OpenClaw resolves a record kept aside to its parent."""
    entries = [_entry("u1", None), _entry("a1", "u1"), _aside("t1", "nowhere"), _entry("u2", "a1"), _entry("a2", "t1")]
    transcript = load_transcript(_file(tmp_path, entries), lazy=lazy)
    assert [e.id for e in transcript.leaf_path()] == ["t1", "a2"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_pi_entry_written_to_a_record_kept_aside_keeps_its_parent(tmp_path: Path, lazy: bool) -> None:
    """pi reads the record like any entry: in its files (version 3) the entry keeps its parent."""
    entries = [_entry("u1", None), _entry("a1", "u1"), _aside("t1", "nowhere"), _entry("a2", "t1")]
    path = _file(tmp_path, entries)
    path.write_bytes(path.read_bytes().replace(b'"version":4', b'"version":3', 1))
    assert [e.id for e in load_transcript(path, lazy=lazy).leaf_path()] == ["t1", "a2"]
