"""Working-folder set-up of the QA pipeline: sub-agent transcripts follow their parent."""

from __future__ import annotations

import os
from pathlib import Path

from replaylab.qa.setup import copy_children


def test_children_are_copied_and_a_child_added_later_is_seen(tmp_path: Path) -> None:
    """The folder listing is reused between items, but a file added to the folder since (its
    mtime moves) is found; other sessions' children and look-alike names are not copied."""
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "a.jsonl").write_text("{}\n")
    (rec / "a.sub-1.jsonl").write_text("child 1\n")
    (rec / "ab.sub-9.jsonl").write_text("another session's child\n")
    (rec / "b.jsonl").write_text("{}\n")
    first, second = tmp_path / "w1", tmp_path / "w2"
    first.mkdir(), second.mkdir()
    copy_children(rec / "a.jsonl", first)
    listed_at = rec.stat().st_mtime_ns
    assert sorted(os.listdir(first)) == ["a.sub-1.jsonl"]
    (rec / "a.sub-2.cassette.yaml").write_text("child 2 cassette\n")
    # a coarse clock: the folder's mtime did not move (and the change is recent)
    os.utime(rec, ns=(rec.stat().st_atime_ns, listed_at))
    copy_children(rec / "a.jsonl", second)
    assert sorted(os.listdir(second)) == ["a.sub-1.jsonl", "a.sub-2.cassette.yaml"]
    assert (second / "a.sub-2.cassette.yaml").read_text() == "child 2 cassette\n"
