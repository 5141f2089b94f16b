"""The run's check of every session file after each item (`checks.run_files.RunFiles`): with the
files settled, so that one `stat` each vouches for them, an unchanged run reads nothing again, and
somebody else's code (a process started through `replaylab.children`) editing another item's
file — a rewrite that keeps its size and puts its mtime back too — is that item's
TRANSCRIPT_REWRITTEN, and the edited item's when it runs. After an item that started no such
process only its own files are compared; an edit nothing foreign made is still seen at the end."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from replaylab import children
from replaylab.checks.run_files import RunFiles, session_files
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


def _same_size_edit(path: Path) -> str:
    """A Python program rewriting `path` in place with as many bytes, its mtime put back (only the
    ctime moves)."""
    return (
        "import os, time, sys\n"
        f"p = {str(path)!r}\n"
        "st = os.stat(p)\n"
        "time.sleep(0.05)\n"
        "data = open(p, 'rb').read()\n"
        "open(p, 'wb').write(data.replace(b'session', b'sessiox'))\n"
        "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
    )


def test_foreign_code_editing_another_items_file_keeping_size_and_mtime_is_caught(
    recordings: list[Path], tmp_path: Path
) -> None:
    run = RunFiles.of(recordings)
    first, second, third = recordings
    assert run.after_item(first) == []
    before = second.read_bytes()
    child = children.start(
        [sys.executable, "-c", _same_size_edit(second)], env=children.minimal_environment(tmp_path), cwd=tmp_path
    )
    assert child.popen.wait(timeout=60) == 0
    child.end()
    assert second.read_bytes() != before and len(second.read_bytes()) == len(before)
    [during] = run.after_item(third)
    assert during.code == Code.TRANSCRIPT_REWRITTEN and "changed while this item ran" in during.message
    assert second.name in during.message
    [stale] = run.after_item(second)
    assert stale.code == Code.TRANSCRIPT_REWRITTEN and "before this item ran" in stale.message
    assert run.at_end() == ([second.absolute()], [])


def test_without_foreign_code_an_item_compares_its_own_files_and_the_end_all(
    recordings: list[Path], monkeypatch
) -> None:
    # this process's own children only: one another test of the same worker left running (the
    # OpenClaw worker serves a whole run) would rightly make every check a full one
    import weakref

    monkeypatch.setattr(children, "_LIVE", weakref.WeakSet())
    run = RunFiles.of(recordings)
    first, second, third = recordings
    stat = os.stat(second)
    time.sleep(TICK)
    second.write_bytes(second.read_bytes().replace(b"session", b"sessiox"))  # this process: no child
    os.utime(second, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert run.after_item(third) == []  # nothing foreign ran: its own files only
    [stale] = run.after_item(second)  # the edited item itself ran on changed input
    assert stale.code == Code.TRANSCRIPT_REWRITTEN and second.name in stale.message
    assert "before this item ran" in stale.message  # nothing in the item could have changed it
    assert run.at_end() == ([second.absolute()], [])


def test_a_folder_of_many_recordings_gives_each_its_own_sub_agent_files(tmp_path: Path) -> None:
    """The folder is listed once for all its recordings: each still gets exactly its own
    sub-agents' transcripts and cassettes (not a neighbour's whose name starts alike, nor an LLM
    cassette), as when it is asked alone."""
    made = []
    for name in ("a", "ab", "b"):
        recording = tmp_path / f"{name}.jsonl"
        recording.write_bytes(b'{"type": "session"}\n')
        made.append(recording)
    for sub in ("a.sub-1.jsonl", "a.sub-1.cassette.yaml", "a.sub-1.llm.cassette.yaml", "ab.sub-2.jsonl"):
        (tmp_path / sub).write_bytes(b"x\n")
    run = RunFiles.of(made)
    a, ab, b = (recording.absolute() for recording in made)
    assert [p.name for p in run.owned[a]] == ["a.jsonl", "a.cassette.yaml", "a.sub-1.cassette.yaml", "a.sub-1.jsonl"]
    assert [p.name for p in run.owned[ab]] == ["ab.jsonl", "ab.cassette.yaml", "ab.sub-2.jsonl"]
    assert [p.name for p in run.owned[b]] == ["b.jsonl", "b.cassette.yaml"]
    assert all(run.owned[r] == session_files(r) for r in (a, ab, b))


def test_a_worker_takes_the_runs_start_as_its_controller_hashed_it_without_reading_again(
    recordings: list[Path], monkeypatch
) -> None:
    """An xdist worker gets the controller's states (`plain_start`): it reads no file whose
    status still vouches for them, and a file edited since the controller hashed it is the
    edited item's TRANSCRIPT_REWRITTEN, as in a run without xdist."""
    controller = RunFiles.of(recordings)
    started = controller.plain_start()
    reads: list[Path] = []
    real = writer_module._file_sha256
    monkeypatch.setattr(writer_module, "_file_sha256", lambda path: reads.append(Path(path)) or real(path))
    worker = RunFiles.of(recordings, started)
    assert reads == [] and worker.start == controller.start
    edited = recordings[1]
    edited.write_bytes(b'{"type": "session", "edited": true}\n')
    late = RunFiles.of(recordings, started)
    assert reads == [edited]  # the one file whose status moved is read again, for its state now
    assert late.start[edited] == controller.start[edited] != late.last[edited]
    [defect] = late.after_item(edited)
    assert defect.code == Code.TRANSCRIPT_REWRITTEN and "changed after the run started" in defect.message
    assert late.after_item(recordings[0]) == []


def test_an_item_starting_takes_the_runs_state_of_its_files_and_reads_one_that_moved(
    recordings: list[Path], monkeypatch
) -> None:
    """An item's own start (`qa.sources.SourceFiles`) takes the state the run hashed its files in
    (`RunFiles.state_of`), with the sha256 object its working copy continues: a pytest run reads
    each session file once, not once more per item. A file whose status moved since is read for
    its state now, and the item then sees it changed."""
    from replaylab.qa.sources import SourceFiles

    run = RunFiles.of(recordings)
    reads: list[Path] = []
    real = writer_module._file_digest
    monkeypatch.setattr(writer_module, "_file_digest", lambda path: reads.append(Path(path)) or real(path))
    first = recordings[0]
    files = SourceFiles.of(first, run.state_of)
    assert reads == [] and files.before == (run.state_of(first), run.state_of(files.cassette))
    assert all(state is not None and state.hasher is not None for state in files.before)
    assert files.sha256 == SourceFiles.of(first).sha256 and len(reads) == 2  # the same digests, read alike
    reads.clear()
    edited = recordings[1]
    edited.write_bytes(b'{"type": "session", "edited": true}\n')
    moved = SourceFiles.of(edited, run.state_of)
    assert reads == [edited] and moved.sha256[0] != run.state_of(edited).sha256  # type: ignore[union-attr]
    [defect] = run.after_item(edited)
    assert defect.code == Code.TRANSCRIPT_REWRITTEN
