"""The append-only writer: only files it created, never a recording, whole lines that survive."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ENTRY_ADAPTER, dump_entry
from replaylab.transcript.writer import NotOwnedError, TranscriptWriter, file_sha256
from repo_paths import REPO_ROOT

HEADER = {"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/w"}


def entry(entry_id: str, parent: str | None, text: str = "hi") -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": {"role": "user", "content": text},
    }


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
    assert read_lines(path) == [
        HEADER,
        entry("u1", None),
        entry("u2", "u1", "second ✓"),
        entry("u3", "u2", "as a model"),
    ]
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


# ---------------------------------------------------------------- transcript(): parsed once, kept in step


def _same(a, b) -> None:
    """Two transcripts read the same: entries, ids, lines, leaf path and diagnostics."""
    assert [e.model_dump() for e in a.entries] == [e.model_dump() for e in b.entries]
    assert a.by_id.keys() == b.by_id.keys()
    assert a.line_of == b.line_of
    assert [e.id for e in a.leaf_path()] == [e.id for e in b.leaf_path()]
    assert [str(d) for d in a.diagnostics] == [str(d) for d in b.diagnostics]


def _recording(tmp_path: Path, trailing_newline: bool = True) -> Path:
    path = tmp_path / "rec.jsonl"
    data = b"\n".join(orjson.dumps(x) for x in (HEADER, entry("u1", None), entry("u2", "u1")))
    path.write_bytes(data + (b"\n" if trailing_newline else b""))
    return path


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_transcript_of_a_working_copy_is_what_a_fresh_parse_reads(tmp_path: Path, trailing_newline: bool) -> None:
    writer = TranscriptWriter.working_copy(_recording(tmp_path, trailing_newline), tmp_path / "w" / "rec.jsonl")
    _same(writer.transcript(), load_transcript(writer.path))
    writer.append(entry("u3", "u2"))
    writer.append(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "u3",
            "timestamp": "t",
            "summary": "s",
            "firstKeptEntryId": "u3",
            "tokensBefore": 5,
        }
    )
    writer.append(entry("u4", "c1"))
    kept = writer.transcript()
    _same(kept, load_transcript(writer.path))
    assert kept.line_of["u4"] == 6 and kept.leaf_id == "u4"


def test_a_lone_surrogate_is_written_as_json_stringify_writes_it_and_read_as_the_loader_reads_it(
    tmp_path: Path,
) -> None:
    """OpenClaw 2026.4.12's truncation slices between the halves of a pair (its `text.slice`), and
    replaylab's port of it does too (a restated result under allowMutatingEventTruncate, overflow
    recovery's session rewrite): the writer writes the half as JSON.stringify does, a `\\ud83d`
    escape, and its transcript reads it as the loader reads such a file — U+FFFD — instead of
    failing with UnicodeEncodeError (text with a lone surrogate has no UTF-8 form)."""
    writer = TranscriptWriter.working_copy(_recording(tmp_path), tmp_path / "w" / "rec.jsonl")
    writer.transcript()
    writer.append(entry("u3", "u2", "\U0001f600\ud83d[... 5 more characters truncated]"))
    assert writer.path.read_bytes().endswith(b'"\xf0\x9f\x98\x80\\ud83d[... 5 more characters truncated]"}}\n')
    kept = writer.transcript()
    _same(kept, load_transcript(writer.path))
    assert kept.by_id["u3"].message.content == "\U0001f600\ufffd[... 5 more characters truncated]"


def test_transcript_snapshots_do_not_change_with_later_appends(tmp_path: Path) -> None:
    writer = TranscriptWriter.working_copy(_recording(tmp_path), tmp_path / "w" / "rec.jsonl")
    before = writer.transcript()
    writer.append(entry("u3", "u2"))
    assert [e.id for e in before.entries] == ["u1", "u2"] and "u3" not in before.by_id
    assert [e.id for e in writer.transcript().entries] == ["u1", "u2", "u3"]


def test_transcript_is_parsed_again_after_someone_else_writes(tmp_path: Path) -> None:
    """A foreign append breaks the seal: the writer must not serve what it parsed before."""
    writer = TranscriptWriter.working_copy(_recording(tmp_path), tmp_path / "w" / "rec.jsonl")
    writer.transcript()
    with open(writer.path, "ab") as handle:
        handle.write(orjson.dumps(entry("x1", "u2")) + b"\n")
    assert "x1" in writer.transcript().by_id
    writer.append(entry("u3", "x1"))
    _same(writer.transcript(), load_transcript(writer.path))


@pytest.mark.parametrize(
    "odd",
    [
        entry("u1", "u2", "same id again"),
        entry("u3", "nowhere"),
        {"type": "message", "parentId": "u2", "timestamp": "t"},
        {"type": "message", "id": "bad", "parentId": "u2", "timestamp": "t", "message": {"role": "user", "content": 5}},
    ],
)
def test_entries_a_parse_would_diagnose_make_the_writer_parse_again(tmp_path: Path, odd: dict) -> None:
    """Reused ids, dangling parents, missing ids, invalid messages: the diagnostics and the
    'later id wins' rule are the loader's, so the writer hands out a fresh parse."""
    writer = TranscriptWriter.working_copy(_recording(tmp_path), tmp_path / "w" / "rec.jsonl")
    writer.transcript()
    writer.append(odd)
    fresh = load_transcript(writer.path)
    assert fresh.diagnostics, "the odd entry must be one a parse diagnoses"
    _same(writer.transcript(), fresh)


def test_working_copies_of_old_versions_are_written_as_v3_with_the_migrated_ids(tmp_path: Path) -> None:
    """pi gives the entries of a v1 file fresh random ids when it opens it, so a working copy that
    kept the v1 bytes would have a compaction naming ids pi never sees: the copy is v3 instead,
    holding exactly what replaylab's migration read (ids `l<line>`, parent links, renamed roles)."""
    hook = {"role": "hookMessage", "customType": "x", "content": "hook", "display": True}
    v1 = [
        {"type": "session", "id": "v1", "timestamp": "t"},
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "hi"}},
        {"type": "message", "timestamp": "t", "message": hook},
    ]
    v2 = [{"type": "session", "version": 2, "id": "v2"}, entry("u1", None), {**entry("h1", "u1"), "message": hook}]
    for name, lines in (("v1", v1), ("v2", v2)):
        recording = tmp_path / f"{name}.jsonl"
        recording.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
        parsed = load_transcript(recording)
        writer = TranscriptWriter.working_copy(recording, tmp_path / "w" / f"{name}.jsonl", parsed=parsed)
        copy = read_lines(writer.path)
        assert copy[0]["version"] == 3 and copy[0]["id"] == name
        fresh = load_transcript(writer.path)
        assert fresh.source_version == 3 and fresh.diagnostics == []
        assert [dump_entry(e) for e in fresh.entries] == [dump_entry(e) for e in parsed.entries]
        assert fresh.entries[-1].message.role == "custom"  # v2's hookMessage, renamed by the migration
        assert recording.read_bytes() == b"".join(orjson.dumps(x) + b"\n" for x in lines)  # never written
        writer.append(entry("u9", fresh.entries[-1].id))
        _same(writer.transcript(), load_transcript(writer.path))
    assert [e.id for e in load_transcript(tmp_path / "w" / "v1.jsonl").entries] == ["l2", "l3", "u9"]


def test_only_new_recordings_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recordings are evidence (fsync per append against an OS crash); a working copy is one
    run's scratch in a temporary folder."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    recording = TranscriptWriter.create_new(tmp_path / "new.jsonl", [HEADER])
    recording.append(entry("u1", None))
    assert len(synced) == 2
    copy = TranscriptWriter.working_copy(recording.path, tmp_path / "w" / "copy.jsonl")
    copy.append(entry("u2", "u1"))
    assert len(synced) == 2
    assert read_lines(copy.path)[-1]["id"] == "u2"


def test_a_working_copy_starts_from_the_callers_parse_only_when_the_bytes_match(tmp_path: Path) -> None:
    """The pipeline hands over its parse of the recording with the sha256 it took: the copy
    reuses it (same reading as a fresh parse, under the copy's path); a wrong hash is ignored."""
    recording = _recording(tmp_path)
    parsed = load_transcript(recording)
    writer = TranscriptWriter.working_copy(
        recording, tmp_path / "w" / "rec.jsonl", parsed=parsed, parsed_sha256=file_sha256(recording)
    )
    assert writer._mirror is not None and writer._mirror.path == writer.path
    writer.append(entry("u3", "u2"))
    _same(writer.transcript(), load_transcript(writer.path))
    assert [e.id for e in parsed.entries] == ["u1", "u2"]  # the caller's parse is not changed

    stale = parsed.entries[0].model_copy(update={"message": parsed.entries[1].message})
    wrong = load_transcript(recording)
    wrong.entries[0] = stale
    other = TranscriptWriter.working_copy(
        recording, tmp_path / "w2" / "rec.jsonl", parsed=wrong, parsed_sha256="0" * 64
    )
    assert other._mirror is None
    _same(other.transcript(), load_transcript(other.path))


def test_compact_parses_the_session_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compact() without a writer: the working copy it makes starts from its own parse, and the
    result is built from it, so the file is parsed once (not at the start, the copy and the finish each)."""
    import shutil

    from replaylab.compaction import compact
    from replaylab.compaction.params import CompactParams
    from replaylab.transcript import parse

    source = REPO_ROOT / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
    session = tmp_path / source.name
    shutil.copyfile(source, session)
    passes: list[object] = []
    real = parse.build_index
    monkeypatch.setattr(parse, "build_index", lambda *a, **k: (passes.append(a), real(*a, **k))[1])
    monkeypatch.setattr("replaylab.transcript.load.build_index", parse.build_index)
    result = compact(
        CompactParams(
            session_file=str(session),
            context_tokens=3400,
            reserve_tokens_floor=300,
            keep_recent_tokens=500,
            compaction_mode="auto",
            working_copy=str(tmp_path / "copy.jsonl"),
        )
    )
    assert result.success, result.error
    assert len(passes) == 1
    monkeypatch.undo()
    fresh = load_transcript(tmp_path / "copy.jsonl")
    assert result.compaction_event_id == fresh.leaf_id and result.compaction_event_id in fresh.by_id


def test_a_writer_knows_its_file_however_it_is_spelled(tmp_path) -> None:
    """compact() and the pipeline's re-check ask whether a writer is the session file's: the same
    file spelled another way is, another file is not — and compact() refuses a writer for
    another file instead of appending to it."""
    from replaylab.compaction import CompactParams, compact

    source = tmp_path / "rec.jsonl"
    source.write_bytes(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n')
    writer = TranscriptWriter.working_copy(source, tmp_path / "work" / "copy.jsonl")
    (tmp_path / "link").symlink_to(tmp_path / "work")
    assert writer.writes_to(tmp_path / "work" / "copy.jsonl")
    assert writer.writes_to(tmp_path / "work" / ".." / "work" / "copy.jsonl")
    assert writer.writes_to(tmp_path / "link" / "copy.jsonl")
    assert not writer.writes_to(source)
    with pytest.raises(ValueError, match="pass the writer's own file as sessionFile"):
        compact(CompactParams(session_file=str(source)), writer=writer)
    assert source.read_bytes().count(b"\n") == 1


LINE_SHAPES = {
    "plain": b"%s\n%s\n%s\n",
    "no trailing newline": b"%s\n%s\n%s",
    "blank lines": b"%s\n\n%s\n\n\n%s\n\n",
    "crlf": b"%s\r\n%s\r\n%s\r\n",
    "garbage line": b"%s\nnot json\n%s\n%s\n",
    "glued lines": b"%s\n%s%s\n",
    "bom": b"\xef\xbb\xbf%s\n%s\n%s\n",
}


@pytest.mark.parametrize("shape", sorted(LINE_SHAPES))
def test_a_parse_counts_the_newlines_and_a_working_copy_numbers_its_lines_by_it(tmp_path: Path, shape: str) -> None:
    """The parse counts the newline bytes it read (a working copy's writer numbers the lines it
    appends from that count instead of counting the copy again): equal to counting them, and
    the copy's entries, appended ones included, read as a fresh parse reads them."""
    from replaylab.transcript.load import loads_transcript

    recording = tmp_path / "rec.jsonl"
    data = LINE_SHAPES[shape] % tuple(orjson.dumps(x) for x in (HEADER, entry("u1", None), entry("u2", "u1")))
    recording.write_bytes(data)
    parsed = load_transcript(recording)
    assert parsed.newlines == data.count(b"\n") == loads_transcript(data).newlines
    writer = TranscriptWriter.working_copy(
        recording, tmp_path / "w" / "rec.jsonl", parsed=parsed, parsed_sha256=file_sha256(recording)
    )
    assert writer._mirror is not None
    writer.append(entry("u3", "u2"))
    writer.append(entry("u4", "u3"))
    kept, fresh = writer.transcript(), load_transcript(writer.path)
    # (the kept parse's diagnostics name the recording, where they were found: only lines compared)
    _same(dataclasses.replace(kept, diagnostics=[]), dataclasses.replace(fresh, diagnostics=[]))
    assert [d.line for d in kept.diagnostics] == [d.line for d in fresh.diagnostics]
    assert kept.line_of["u4"] == fresh.line_of["u4"]
    assert kept.newlines == fresh.newlines == writer.path.read_bytes().count(b"\n")


# ---------------------------------------------------------------- a working copy's running hash

_HEADER_LINE = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}'
_ENTRY_LINE = b'{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}'


def _sealed_as_on_disk(writer: TranscriptWriter) -> None:
    assert writer.sealed_state() == (writer.path.stat().st_size, file_sha256(writer.path))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        _HEADER_LINE,
        _HEADER_LINE + b"\n",
        _HEADER_LINE + b"\n" + _ENTRY_LINE + b"\n",
        _HEADER_LINE + b"\r\n" + _ENTRY_LINE,
    ],
)
@pytest.mark.parametrize("settled", [False, True])
def test_a_working_copy_is_sealed_on_the_bytes_it_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: bytes, settled: bool
) -> None:
    """With the recording's state (settled: its status vouches for the hashed bytes, so the copy
    takes that hash) or without one, the copy holds the recording's bytes, its seal is the copy's
    size and sha256, and appends keep both true."""
    from replaylab.transcript import writer as writer_module
    from replaylab.transcript.writer import file_state

    if settled:
        monkeypatch.setattr(writer_module, "SETTLED_NS", 0)  # a file whose ctime is in the past is settled
    recording = tmp_path / "rec.jsonl"
    recording.write_bytes(body)
    state = file_state(recording, keep_hasher=True)
    assert (state.hasher is not None) == settled and file_state(recording).hasher is None  # kept only when asked
    parsed = load_transcript(recording) if body else None
    with_state = TranscriptWriter.working_copy(
        recording, tmp_path / "a" / "rec.jsonl", parsed=parsed, parsed_sha256=state.sha256, recording_state=state
    )
    without = TranscriptWriter.working_copy(
        recording, tmp_path / "b" / "rec.jsonl", parsed=parsed, parsed_sha256=state.sha256
    )
    for writer in (with_state, without):
        assert writer.path.read_bytes() == body
        _sealed_as_on_disk(writer)
        writer.append(entry("z9", None, "again"))
        writer.verify_append_only()
        _sealed_as_on_disk(writer)
    assert with_state.path.read_bytes() == without.path.read_bytes()


@pytest.mark.parametrize("change", ["append", "same size"])
def test_a_recording_changed_since_its_state_is_hashed_as_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The recording's hash is taken only while its status still vouches for it. Changed after
    its state was taken (even to the same size), the copy holds other bytes: the writer hashes
    them, and the stale parse is not taken for the copy's."""
    from replaylab.transcript import writer as writer_module
    from replaylab.transcript.writer import file_state

    monkeypatch.setattr(writer_module, "SETTLED_NS", 0)
    recording = tmp_path / "rec.jsonl"
    recording.write_bytes(_HEADER_LINE + b"\n" + _ENTRY_LINE + b"\n")
    state = file_state(recording, keep_hasher=True)
    parsed = load_transcript(recording)
    assert state.hasher is not None
    if change == "append":
        with open(recording, "ab") as handle:
            handle.write(_ENTRY_LINE.replace(b'"a1","parentId":null', b'"a2","parentId":"a1"') + b"\n")
    else:
        recording.write_bytes(recording.read_bytes().replace(b'"hi"', b'"ho"'))
    copy = TranscriptWriter.working_copy(
        recording, tmp_path / "w" / "rec.jsonl", parsed=parsed, parsed_sha256=state.sha256, recording_state=state
    )
    _sealed_as_on_disk(copy)
    assert file_sha256(copy.path) == file_sha256(recording) != state.sha256
    _same(copy.transcript(), load_transcript(copy.path))
    copy.append(entry("z9", None, "x"))
    copy.verify_append_only()


@pytest.mark.parametrize("chunk", [1 << 20, 7], ids=["one-chunk", "lines-across-chunks"])
def test_a_working_copy_of_the_first_lines_holds_them_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """`lines=N`: the file as it stood N lines in (a blank line counts: lines are the file's), then
    appends as after any copy; a v1 file's migrated entries on those lines."""
    monkeypatch.setattr("replaylab.transcript.writer.COPY_CHUNK", chunk)
    raw = [orjson.dumps(HEADER), orjson.dumps(entry("u1", None)), b"", orjson.dumps(entry("u2", "u1"))]
    recording = tmp_path / "rec.jsonl"
    whole = b"\n".join([*raw, orjson.dumps(entry("u3", "u2"))])  # no final newline
    recording.write_bytes(whole)
    parsed = load_transcript(recording)
    held = {1: [], 2: ["u1"], 3: ["u1"], 4: ["u1", "u2"], 5: ["u1", "u2", "u3"]}
    for lines, ids in held.items():
        destination = tmp_path / f"w{chunk}" / f"{lines}.jsonl"
        writer = TranscriptWriter.working_copy(recording, destination, parsed=parsed, lines=lines)
        assert writer.path.read_bytes() == (whole if lines == 5 else b"".join(x + b"\n" for x in raw[:lines]))
        writer.append(entry("z9", None))
        _same(writer.transcript(), load_transcript(writer.path))
        assert [e.id for e in load_transcript(writer.path).entries] == [*ids, "z9"]
    v1 = tmp_path / "v1.jsonl"
    v1_lines = [
        {"type": "session", "id": "v1", "timestamp": "t"},
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "hi"}},
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "again"}},
    ]
    v1.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in v1_lines))
    writer = TranscriptWriter.working_copy(v1, tmp_path / "w" / "v1.jsonl", parsed=load_transcript(v1), lines=2)
    assert [e.id for e in load_transcript(writer.path).entries] == ["l2"]


def test_a_working_copy_that_appends_an_openclaw_side_entry_reads_as_a_fresh_parse(tmp_path: Path) -> None:
    """A side append (`appendMode: "side"`) never becomes the leaf, and the entry after it continues
    from the leaf (`transcript.leaf_controls`): the writer's kept parse reads them as a new parse does."""
    recording = _recording(tmp_path)
    parsed = load_transcript(recording)
    writer = TranscriptWriter.working_copy(
        recording, tmp_path / "w" / "rec.jsonl", parsed=parsed, parsed_sha256=file_sha256(recording)
    )
    writer.append({**entry("s1", "u2"), "appendMode": "side"})
    assert writer.transcript().leaf_id == load_transcript(writer.path).leaf_id == "u2"
    writer.append(entry("u3", "s1"))
    _same(writer.transcript(), load_transcript(writer.path))


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_append_many_writes_what_appends_one_by_one_write(tmp_path: Path, trailing_newline: bool) -> None:
    """Several entries in one write: the same bytes, hash and parse as an `append` for each, and a
    rewritten prefix is still caught before anything is written."""
    entries = [entry("u3", "u2"), entry("u4", "u3", "second ✓"), entry("u5", "u4")]
    one = TranscriptWriter.working_copy(_recording(tmp_path, trailing_newline), tmp_path / "one" / "rec.jsonl")
    many = TranscriptWriter.working_copy(_recording(tmp_path, trailing_newline), tmp_path / "many" / "rec.jsonl")
    one.transcript(), many.transcript()
    for item in entries:
        one.append(item)
    many.append_many(entries)
    many.append_many([])
    assert many.path.read_bytes() == one.path.read_bytes()
    assert many.sealed_state() == one.sealed_state() == (many.path.stat().st_size, file_sha256(many.path))
    _same(many.transcript(), load_transcript(many.path))
    many.path.write_bytes(many.path.read_bytes().replace(b'"hi"', b'"ho"'))
    with pytest.raises(NotOwnedError, match="rewritten"):
        many.append_many([entry("u6", "u5")])
