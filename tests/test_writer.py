"""The append-only writer: only files it created, never a recording, whole lines that survive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ENTRY_ADAPTER
from replaylab.transcript.writer import NotOwnedError, TranscriptWriter, file_sha256

HEADER = {"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/w"}


def entry(entry_id: str, parent: str | None, text: str = "hi") -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t",
            "message": {"role": "user", "content": text}}


def read_lines(path: Path) -> list[dict]:
    return [orjson.loads(x) for x in path.read_bytes().split(b"\n") if x]


def test_create_new_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(b"precious\n")
    with pytest.raises(FileExistsError):
        TranscriptWriter.create_new(path, [HEADER])
    assert path.read_bytes() == b"precious\n"


def test_writer_cannot_be_built_for_a_file_it_did_not_create(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(orjson.dumps(HEADER) + b"\n")
    before = file_sha256(path)
    with pytest.raises(NotOwnedError, match="never written"):
        TranscriptWriter(path)
    with pytest.raises(NotOwnedError):
        TranscriptWriter(path, _token=object())
    assert file_sha256(path) == before


def test_create_new_and_append_write_whole_lines_that_load(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.jsonl"
    writer = TranscriptWriter.create_new(path, [HEADER, entry("u1", None)])
    writer.append(entry("u2", "u1", "second ✓"))
    writer.append(ENTRY_ADAPTER.validate_python(entry("u3", "u2", "as a model")))
    assert read_lines(path) == [HEADER, entry("u1", None), entry("u2", "u1", "second ✓"), entry("u3", "u2", "as a model")]
    assert path.read_bytes().endswith(b"\n")
    transcript = load_transcript(path, strict=True)
    assert [e.id for e in transcript.leaf_path()] == ["u1", "u2", "u3"]


def test_append_detects_a_rewritten_prefix(tmp_path: Path) -> None:
    path = tmp_path / "copy.jsonl"
    writer = TranscriptWriter.create_new(path, [HEADER, entry("u1", None, "original")])
    writer.append(entry("u2", "u1"))
    data = path.read_bytes()
    path.write_bytes(data.replace(b"original", b"tampered"))  # same length, different bytes
    with pytest.raises(NotOwnedError, match="rewritten"):
        writer.append(entry("u3", "u2"))
    assert b"u3" not in path.read_bytes()


def test_append_detects_a_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "copy.jsonl"
    writer = TranscriptWriter.create_new(path, [HEADER, entry("u1", None)])
    path.write_bytes(orjson.dumps(HEADER) + b"\n")
    with pytest.raises(NotOwnedError):
        writer.verify_append_only()


def test_working_copy_leaves_the_recording_untouched(tmp_path: Path) -> None:
    recording = tmp_path / "rec.jsonl"
    recording.write_bytes(orjson.dumps(HEADER) + b"\n" + orjson.dumps(entry("u1", None)))  # no final newline
    os.chmod(recording, 0o444)
    before = file_sha256(recording)
    writer = TranscriptWriter.working_copy(recording, tmp_path / "work" / "rec.jsonl")
    assert writer.path.read_bytes() == recording.read_bytes()
    writer.append(entry("u2", "u1"))
    assert file_sha256(recording) == before
    # the missing newline of the source was added before the append: two whole lines, not one glued
    assert read_lines(writer.path) == [HEADER, entry("u1", None), entry("u2", "u1")]
    with pytest.raises(FileExistsError):
        TranscriptWriter.working_copy(recording, writer.path)


CHILD = textwrap.dedent("""
    import sys, time
    from replaylab.transcript.writer import TranscriptWriter
    writer = TranscriptWriter.create_new(sys.argv[1], [{"type": "session", "version": 3, "id": "k"}])
    for i in range(100000):
        writer.append({"type": "message", "id": f"e{i}", "parentId": f"e{i-1}" if i else None,
                       "timestamp": "t", "message": {"role": "user", "content": "x" * 200}})
        print(i, flush=True)
""")


def test_appends_survive_sigkill_as_whole_lines(tmp_path: Path) -> None:
    """Kill the writer mid-stream: every append it reported is on disk, whole, and the file
    loads without a diagnostic (no half line). fsync's protection against an OS crash cannot be
    tested here; this checks that an append is a complete line once `append` returns."""
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    reported = -1
    assert proc.stdout is not None
    for out in proc.stdout:
        reported = int(out)
        if reported >= 30:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    transcript = load_transcript(path)
    assert transcript.diagnostics == []
    written = [e.id for e in transcript.entries]
    assert len(written) >= reported + 1
    assert written == [f"e{i}" for i in range(len(written))]
