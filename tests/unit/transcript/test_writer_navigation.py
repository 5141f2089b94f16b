"""The writer's kept parse of an OpenClaw working copy reads what a fresh load reads
(`TranscriptWriter.transcript`): every append goes through the navigation the load followed
(`transcript.leaf_controls`), so a reset, a followed control or a record kept aside earlier in the
file places an appended entry exactly where `load_transcript` places it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.transcript.load import load_transcript
from replaylab.transcript.writer import TranscriptWriter, file_sha256

HEADER = {"type": "session", "version": 4, "id": "w1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}


def _entry(entry_id: str, parent: str | None, kind: str = "message", **fields: Any) -> dict[str, Any]:
    if kind == "message" and "message" not in fields:
        fields["message"] = {"role": "user", "content": entry_id, "timestamp": 1796127790000}
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-09-10T10:00:01.000Z", **fields}


def _recording(tmp_path: Path, entries: list[dict[str, Any]], version: int = 4) -> Path:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in [{**HEADER, "version": version}, *entries]))
    return path


def _same(kept: Any, fresh: Any) -> None:
    """What a fresh load reads: entries with their parents, the leaf and its path, lines."""
    assert [e.model_dump() for e in kept.entries] == [e.model_dump() for e in fresh.entries]
    assert {k: e.parent_id for k, e in kept.by_id.items()} == {k: e.parent_id for k, e in fresh.by_id.items()}
    assert kept.leaf_id == fresh.leaf_id
    assert [e.id for e in kept.leaf_path()] == [e.id for e in fresh.leaf_path()]
    assert kept.line_of == fresh.line_of


def _writers(tmp_path: Path, recording: Path) -> list[TranscriptWriter]:
    """A working copy that parses itself, and one that starts from the caller's parse."""
    own = TranscriptWriter.working_copy(recording, tmp_path / "own" / recording.name)
    own.transcript()
    given_parse = TranscriptWriter.working_copy(
        recording,
        tmp_path / "given" / recording.name,
        parsed=load_transcript(recording),
        parsed_sha256=file_sha256(recording),
    )
    return [own, given_parse]


def test_an_entry_appended_to_a_branch_from_before_a_reset_continues_where_the_load_stands(tmp_path: Path) -> None:
    """Once OpenClaw's load has read a reset, an entry whose parent is not after it is attached
    to the leaf the load stands at (`appendCanonicalNavigationEntry`): so is one the writer appends
    (a rewrite of the branch at an earlier leaf, a mutant branching from before the reset)."""
    entries = [_entry("u1", None), _entry("a1", "u1"), _entry("r1", "a1", "reset", reason="reset"), _entry("u2", "r1")]
    for writer in _writers(tmp_path, _recording(tmp_path, entries)):
        writer.append(_entry("u3", "a1"))
        writer.append(_entry("u4", "u3"))
        fresh = load_transcript(writer.path)
        assert [e.id for e in fresh.leaf_path()] == ["u1", "a1", "r1", "u2", "u3", "u4"]
        _same(writer.transcript(), fresh)


def test_an_entry_appended_to_a_followed_controls_append_parent_continues_from_its_target(tmp_path: Path) -> None:
    """A file that ends with a followed control: the next entry written to its `appendParentId`
    continues from its target, appended by the writer or not."""
    entries = [
        _entry("u1", None),
        _entry("a1", "u1"),
        _entry("u2", "a1"),
        {"type": "leaf", "id": "l1", "parentId": "u2", "targetId": "a1", "appendParentId": "u2"},
    ]
    for writer in _writers(tmp_path, _recording(tmp_path, entries)):
        writer.append(_entry("u3", "u2"))
        fresh = load_transcript(writer.path)
        assert [e.id for e in fresh.leaf_path()] == ["u1", "a1", "u3"]
        _same(writer.transcript(), fresh)


def _random_session(rng: random.Random, size: int) -> list[dict[str, Any]]:
    """Entries of an OpenClaw file: messages on any earlier entry, resets, side appends, controls
    (followed, rejected, with an append parent), labels of known and unknown targets."""
    entries: list[dict[str, Any]] = []
    for n in range(size):
        ids = [e["id"] for e in entries]
        parent = rng.choice([None, *ids]) if ids and rng.random() < 0.4 else (ids[-1] if ids else None)
        roll = rng.random()
        if roll < 0.1:
            entries.append(_entry(f"r{n}", parent, "reset", reason="reset"))
        elif roll < 0.2 and ids:
            target = rng.choice([None, "nowhere", *ids])
            control: dict[str, Any] = {"type": "leaf", "id": f"c{n}", "parentId": ids[-1], "targetId": target}
            if rng.random() < 0.4:
                control["appendParentId"] = rng.choice(ids)
            entries.append(control)
        elif roll < 0.3 and ids:
            target = rng.choice(["nowhere", *ids])
            entries.append(_entry(f"l{n}", parent, "label", targetId=target, label="x"))
        else:
            entries.append(_entry(f"m{n}", parent, **({"appendMode": "side"} if roll < 0.4 else {})))
    return entries


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(st.integers(1, 14), st.integers(1, 5), st.randoms(use_true_random=False))
def test_the_kept_parse_of_a_working_copy_is_a_fresh_load_after_every_append(
    size: int, appended: int, rng: random.Random
) -> None:
    """Any OpenClaw file, any entries appended (to any entry, the leaf most often): after every
    append the writer's transcript is what `load_transcript` reads from the file."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tmp_path = Path(folder)
        entries = _random_session(rng, size)
        for writer in _writers(tmp_path, _recording(tmp_path, entries, version=rng.choice([3, 4]))):
            ids = [e["id"] for e in entries]
            for n in range(appended):
                parent = writer.transcript().leaf_id if rng.random() < 0.5 else rng.choice([None, *ids])
                kind = rng.random()
                if kind < 0.15:
                    added = _entry(f"w{n}", parent, "reset", reason="reset")
                elif kind < 0.3:
                    added = _entry(f"w{n}", parent, "label", targetId=rng.choice(["nowhere", *ids]), label="y")
                else:
                    added = _entry(f"w{n}", parent)
                writer.append(added)
                ids.append(added["id"])
                _same(writer.transcript(), load_transcript(writer.path))


@pytest.mark.parametrize("lazy", [False, True])
def test_a_label_of_an_unknown_target_appended_last_leaves_the_leaf(tmp_path: Path, lazy: bool) -> None:
    """A label whose target OpenClaw never indexed is kept aside: the leaf stays where it was."""
    entries = [_entry("u1", None), _entry("u2", "u1")]
    writer = _writers(tmp_path, _recording(tmp_path, entries))[1]
    writer.append(_entry("l1", "u1", "label", targetId="nowhere", label="x"))
    assert writer.transcript().leaf_id == load_transcript(writer.path, lazy=lazy).leaf_id == "u2"
