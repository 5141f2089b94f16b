"""A file is read again only when nothing can vouch that it is unchanged, and every
change the full read saw is still seen.

* `file_state` / `file_state_again`: the pipeline hashes a recording and its cassette before a
  run and checks them after it. A file whose status (inode, size, mtime, ctime) is unchanged
  and whose ctime had settled before the first hash is not read again; a rewrite that restores
  size and mtime still moves the ctime; a recently changed file is always read again.
* The re-check of a compactor's output (`replaylab.compactors.recheck`) takes the working copy's size
  and hash from its writer while the writer's seal holds; a compactor that rewrites the copy
  behind the writer (in place, same size, mtime restored) is still caught.
* End to end: a compactor that changes the recording during a run gives TRANSCRIPT_REWRITTEN
  with a settled recording (status check) and with a fresh one (read again).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from replaylab.compaction import compact
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from replaylab.transcript import writer as writer_module
from replaylab.transcript.writer import TranscriptWriter, file_state, file_state_again
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
TICK = 0.05  # longer than a coarse file-system clock's tick (jiffies: ≤ 10 ms)


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """Every file `file_state*` hashes."""
    seen: list[Path] = []
    real = writer_module._file_sha256

    def counting(path: Path) -> str:
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(writer_module, "_file_sha256", counting)
    return seen


@pytest.fixture
def settled(monkeypatch) -> None:
    """Files count as settled once a few ticks old (the real margin is 3 s)."""
    monkeypatch.setattr(writer_module, "SETTLED_NS", int(2 * TICK * 1e9))


def _write_aged(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    time.sleep(3 * TICK)


def test_a_settled_unchanged_file_is_not_read_again(tmp_path, reads, settled) -> None:
    target = tmp_path / "r.jsonl"
    _write_aged(target, b'{"a": 1}\n')
    before = file_state(target)
    assert before.status is not None and len(reads) == 1
    assert file_state_again(before, target) is before
    assert len(reads) == 1


def test_a_rewrite_restoring_size_and_mtime_is_seen(tmp_path, reads, settled) -> None:
    target = tmp_path / "r.jsonl"
    _write_aged(target, b'{"a": 1}\n')
    before = file_state(target)
    stat = os.stat(target)
    time.sleep(TICK)
    target.write_bytes(b'{"a": 2}\n')  # same size
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime restored: only the ctime moved
    after = file_state_again(before, target)
    assert after.sha256 != before.sha256 and len(reads) == 2


def test_a_recently_changed_file_is_always_read_again(tmp_path, reads) -> None:
    target = tmp_path / "r.jsonl"
    target.write_bytes(b'{"a": 1}\n')
    before = file_state(target)  # the real 3 s margin: the file was written just now
    assert before.status is None
    again = file_state_again(before, target)
    assert again.sha256 == before.sha256 and len(reads) == 2


# ---------------------------------------------------------------- the re-check's working copy


def _helpdesk(tmp_path: Path, name: str = "cancel-two-orders") -> tuple[object, Path]:
    """A bundled suite's scenario over a copy of one of its recordings (never the repo's files)."""
    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    source = next(r for r in suite.recordings if r.name == f"{name}.jsonl")
    folder = tmp_path / "recordings"
    folder.mkdir()
    for sibling in source.parent.glob(f"{name}*"):
        shutil.copy(sibling, folder / sibling.name)
    if (source.parent / "tool_classes.json").is_file():
        shutil.copy(source.parent / "tool_classes.json", folder / "tool_classes.json")
    return suite.scenarios[0], folder / source.name


def _rewrite_in_place(path: Path) -> None:
    """Change one byte of the file's first line, keep its size, put its mtime back."""
    stat = os.stat(path)
    data = bytearray(path.read_bytes())
    at = data.index(b'"', 1) + 1
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")
    time.sleep(TICK)
    with open(path, "r+b") as handle:
        handle.write(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_the_recheck_reads_nothing_when_only_the_writer_wrote(tmp_path) -> None:
    scenario, recording = _helpdesk(tmp_path)
    result = run_item(scenario, recording, RunOptions(work_dir=tmp_path))
    assert result.outcome == "passed"
    assert not [d for d in result.defects if d.code == Code.TRANSCRIPT_REWRITTEN]


def test_a_compactor_rewriting_the_working_copy_behind_its_writer_is_caught(tmp_path) -> None:
    scenario, recording = _helpdesk(tmp_path)

    def rewriting(params, *, classifier=None, writer=None):
        outcome = compact(params, classifier=classifier, writer=writer)
        _rewrite_in_place(Path(params.session_file))  # seal mtime restored; size unchanged
        return outcome

    result = run_item(scenario, recording, RunOptions(work_dir=tmp_path, compactor=rewriting))
    found = [d for d in result.defects if d.code == Code.TRANSCRIPT_REWRITTEN]
    assert found and "rewrote the working copy" in found[0].message


def test_the_writer_seal_breaks_when_the_mtime_is_put_back(tmp_path) -> None:
    copy = tmp_path / "copy.jsonl"
    source = tmp_path / "src.jsonl"
    source.write_bytes(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n')
    writer = TranscriptWriter.working_copy(source, copy)
    assert writer.sealed_state() == (copy.stat().st_size, writer_module.file_sha256(copy))
    _rewrite_in_place(copy)
    assert writer.sealed_state() is None


# ---------------------------------------------------------------- the recording itself


@pytest.mark.parametrize("margin", ["settled", "fresh"])
def test_a_recording_changed_during_the_run_is_reported(tmp_path, monkeypatch, margin) -> None:
    scenario, recording = _helpdesk(tmp_path)
    if margin == "settled":
        monkeypatch.setattr(writer_module, "SETTLED_NS", int(2 * TICK * 1e9))
        time.sleep(3 * TICK)

    def touching_the_recording(params, *, classifier=None, writer=None):
        _rewrite_in_place(recording)
        return compact(params, classifier=classifier, writer=writer)

    result = run_item(scenario, recording, RunOptions(work_dir=tmp_path, compactor=touching_the_recording))
    found = [d for d in result.defects if d.code == Code.TRANSCRIPT_REWRITTEN]
    assert found and found[0].expected[0] == result.recording_sha256
    assert found[0].actual[0] != result.recording_sha256
