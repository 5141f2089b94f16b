"""The run's check of every session file after each item (`checks.run_files.RunFiles`): with the
files settled, so that one `stat` each vouches for them, an unchanged run reads nothing again, and
any item's edit of another item's file — a rewrite that keeps its size and puts its mtime back
too — is that item's TRANSCRIPT_REWRITTEN, and the edited item's when it runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from replaylab.checks.run_files import RunFiles
from replaylab.defects import Code
from replaylab.transcript import writer as writer_module

TICK = 0.05


@pytest.fixture
def recordings(tmp_path: Path, monkeypatch) -> list[Path]:
    """Three recordings with their cassettes, settled (the real margin is 3 s)."""
    monkeypatch.setattr(writer_module, "SETTLED_NS", int(2 * TICK * 1e9))
    made = []
    for name in ("a", "b", "c"):
        recording = tmp_path / f"{name}.jsonl"
        recording.write_bytes(b'{"type": "session"}\n')
        (tmp_path / f"{name}.cassette.yaml").write_bytes(b"interactions: []\n")
        made.append(recording)
    time.sleep(3 * TICK)
    return made


def test_an_unchanged_run_is_checked_by_status_alone(recordings: list[Path], monkeypatch) -> None:
    run = RunFiles.of(recordings)
    assert all(state is not None and state.status is not None for state in run.last.values())
    reads: list[Path] = []
    real = writer_module._file_sha256
    monkeypatch.setattr(writer_module, "_file_sha256", lambda path: reads.append(Path(path)) or real(path))
    for recording in recordings:
        assert run.after_item(recording) == []
    assert reads == [] and run.at_end() == ([], [])


def test_an_edit_of_another_items_file_keeping_size_and_mtime_is_caught(recordings: list[Path]) -> None:
    run = RunFiles.of(recordings)
    first, second, _ = recordings
    assert run.after_item(first) == []
    stat = os.stat(second)
    time.sleep(TICK)
    second.write_bytes(b'{"type": "sessiox"}\n')  # same size
    os.utime(second, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back: only the ctime moved
    [during] = run.after_item(recordings[2])
    assert during.code == Code.TRANSCRIPT_REWRITTEN and "changed while this item ran" in during.message
    assert second.name in during.message
    [stale] = run.after_item(second)
    assert stale.code == Code.TRANSCRIPT_REWRITTEN and "before this item ran" in stale.message
    assert run.at_end() == ([second.absolute()], [])
