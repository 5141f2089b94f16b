"""Append-only transcript writing, for working copies and new recordings only.

Recordings are evidence: replaylab never writes to one. The writer can only be obtained for a
file it creates itself (`create_new`, `working_copy`), checks before each append that nobody
rewrote what it wrote before (size and hash of the prefix), and writes each entry as one whole
line, the lines of an append with one `write` (a SIGKILL leaves whole lines). New recordings are
evidence and are also fsynced at each append (`durable`), against an OS crash; a working copy is
scratch that lives in a temporary folder for one run, so it is not (an fsync per append would be
a large share of the QA pipeline's time per session; bench/cases/pipeline.py measures it).

`transcript()` gives the file as `load_transcript` reads it, parsed once per writer: the writer
wrote every byte after that parse itself, so it extends the parsed transcript with what it
appends instead of parsing the file again (compact() and the pipeline's own re-check each read the
working copy two or three times per compaction). Whenever that would not be exactly what a new
parse gives — the file is no longer sealed (someone else wrote to it), an appended entry
reuses an id, names a parent that is not there, or needs migration — the next call parses the
file again.

Cost of that check: O(appended bytes), not O(file). The writer keeps a running sha256 of what
the file must hold and, after each of its own writes, stamps the file's mtime with a value some
seconds *before* that write (its "seal"; a margin for coarse file-system clocks and 1–2 s mtime
granularity). Any later write by anyone — a rewrite, a truncation,
an append — sets the mtime to the current time, which can never equal the seal, and setting the
mtime back (`os.utime`) moves the ctime, which nothing can set back; so when the file's inode,
size, mtime and ctime are still exactly the sealed ones, nothing has written to it and the bytes
need not be read again (`sealed_state()` gives their size and sha256). Anything else (or a file
system that refuses the stamp) makes `append` re-hash the whole file and compare it with the
running digest, exactly as `verify_append_only()` always does. Not covered: a writer racing
into the microseconds between an append and its seal, or writing and restoring the mtime within
one tick of a coarse file-system clock, or a system clock stepped back by more than the margin
in between.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson
from pydantic import BaseModel

from replaylab.errors import ReplaylabError
from replaylab.input_files import open_regular
from replaylab.json_dump import compact_json
from replaylab.transcript.leaf_controls import KEEP
from replaylab.transcript.model import ENTRY_ADAPTER, dump_entry
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION
from replaylab.upstream.profiles import Navigation

if TYPE_CHECKING:
    from hashlib import _Hash

    from replaylab.transcript.load import Transcript


class NotOwnedError(ReplaylabError, PermissionError):
    """Raised when asked to write to a file this writer did not create."""


class TranscriptWriter:
    """Appends JSON lines to a file this object created. Use `create_new` or `working_copy`."""

    def __init__(
        self, path: Path, *, durable: bool = True, _token: object = None, _copied: tuple[Any, int, bytes] | None = None
    ):
        if _token is not _OWNER:
            raise NotOwnedError(
                f"{path}: replaylab writes only to files it created itself "
                "(TranscriptWriter.create_new / working_copy); recordings are never written"
            )
        self.path = path
        self.durable = durable
        self._mirror: Transcript | None = None  # see transcript()
        self._newlines = 0  # newline bytes in the file while the mirror is kept: the appended entries' line numbers
        self._read_as: Navigation | None = None  # the navigation each parse of the file builds its tree with
        if _copied is not None:  # `working_copy`: the sha256 of the bytes it wrote, their size and last byte
            self._hash, self._size, self._last_byte = _copied
            self._digest = self._hash.hexdigest()
        else:
            self._size = 0
            self._digest = hashlib.sha256().hexdigest()
            self._verify_and_resync()  # hashes what the file holds now: the prefix every append checks
        self._seal_file()

    @classmethod
    def create_new(cls, path: str | Path, lines: Iterable[dict[str, Any] | BaseModel] = ()) -> TranscriptWriter:
        """Create a file that must not exist yet (O_EXCL) and write the first lines."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            for line in lines:
                handle.write(_encode(line))
            handle.flush()
            os.fsync(handle.fileno())
        return cls(path, durable=True, _token=_OWNER)

    @classmethod
    def create_v3(cls, destination: Path, transcript: Transcript) -> TranscriptWriter:
        """A scratch working copy holding `transcript` as v3: its header at version 3 and every
        entry as replaylab migrated it (ids `l<line>`, parent links, renamed roles), in file order.
        Lines the loader could not read are left out, as pi leaves them out."""
        header = dump_entry(transcript.header)
        header["version"] = CURRENT_SESSION_VERSION
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(_encode(header))
            for entry in transcript.entries:
                handle.write(_encode(entry))
        return cls(destination, durable=False, _token=_OWNER)

    @classmethod
    def working_copy(
        cls,
        recording: str | Path,
        destination: str | Path,
        *,
        parsed: Transcript | None = None,
        parsed_sha256: str | None = None,
        recording_state: FileState | None = None,
        lines: int | None = None,
    ) -> TranscriptWriter:
        """Byte copy of a recording to a new file that this writer owns (scratch: not fsynced).
        `lines`: copy only the file's first lines, the file as it stood when its agent was at the
        entry of the last one (`AgentRules.lines_to_copy`; None: the whole file).

        A v1 / v2 recording is copied in v3 form instead (`create_v3`): pi migrates an older file by
        giving every entry a fresh random id, so a compaction entry naming replaylab's migrated ids
        would keep nothing under pi; written as v3 with those ids, the copy means the same to both.

        `parsed` / `parsed_sha256`: the caller's eager parse of the recording and the sha256 of
        the bytes it parsed. When the copied bytes hash the same, that parse is the copy's (under
        the copy's path; its diagnostics still name the recording) and `transcript()` starts from
        it instead of parsing the copy again.

        The writer's running hash of the copy (what every append checks) is made from the bytes
        as they are copied, not by reading the copy back. `recording_state`: the caller's
        `file_state(recording)`; when its status still vouches for the recording's bytes after
        the copy (nothing wrote to it since it was hashed), the copied bytes are the hashed ones
        and its hash is taken as is: no second sha256 of the same bytes."""
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        migrated = _older_version(recording, parsed)
        if migrated is not None:
            return cls.create_v3(destination, migrated if lines is None else _first_lines(migrated, lines))
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        vouched = (
            lines is None
            and recording_state is not None
            and recording_state.status is not None
            and recording_state.hasher is not None
        )
        digest = hashlib.sha256()
        size, last = 0, b""
        left = -1 if lines is None else lines  # newlines still to copy (-1: all of the file)
        with os.fdopen(fd, "wb") as out, open_regular(recording) as src:
            while left and (chunk := src.read(COPY_CHUNK)):
                if left > 0:
                    chunk, left = _through_newlines(chunk, left)
                out.write(chunk)
                if not vouched:
                    digest.update(chunk)
                size += len(chunk)
                last = chunk[-1:] or last
        if vouched:
            assert recording_state is not None and recording_state.hasher is not None
            try:
                vouched = _status(Path(recording)) == recording_state.status and recording_state.status[2] == size
            except OSError:
                vouched = False
            if vouched:
                digest = recording_state.hasher.copy()
            else:  # the recording changed since it was hashed: hash what was copied
                with open(destination, "rb") as copied:
                    digest = _digest_of(copied)
        writer = cls(destination, durable=False, _token=_OWNER, _copied=(digest, size, last))
        if parsed is not None:  # the copy is read as its recording was, under the item's profile
            writer._read_as = parsed.read_as
        from replaylab.transcript.load import LazyTranscript

        if (
            parsed is not None
            and parsed_sha256 == writer._digest
            and writer._seal is not None
            and parsed.newlines is not None
            and not isinstance(parsed, LazyTranscript)
        ):
            writer._mirror = _snapshot(parsed, path=destination)
            writer._newlines = parsed.newlines  # counted by the parse of these very bytes
        return writer

    def append(self, entry: dict[str, Any] | BaseModel) -> None:
        self.append_many((entry,))

    def append_many(self, entries: Iterable[dict[str, Any] | BaseModel]) -> None:
        """`append` each entry, in order, as one write of whole lines: the file is checked once
        before it and sealed once after it (what lay between two appends of these lines was only
        this writer's own code). All are encoded first: one that cannot be is an error before any
        of them is written."""
        lines = [_encode(entry) for entry in entries]
        if not lines:
            return
        if not self._still_sealed():
            self._verify_and_resync()
            self._mirror = None
        lead = b"" if not self._size or self._last_byte == b"\n" else b"\n"
        data = lead + b"".join(lines)
        with open(self.path, "ab") as handle:
            handle.write(data)
            if self.durable:
                handle.flush()
                os.fsync(handle.fileno())
        self._hash.update(data)
        self._size += len(data)
        self._digest = self._hash.hexdigest()
        self._last_byte = b"\n"
        self._seal_file()
        if self._mirror is not None:
            self._newlines += lead.count(b"\n")
        for line in lines:
            if self._mirror is None:
                break
            self._newlines += line.count(b"\n")
            self._extend_mirror(line)

    def transcript(self) -> Transcript:
        """The file as `load_transcript(path)` reads it (eager), without parsing it again when
        only this writer wrote since the last parse (see the module docstring). Each call gives
        its own snapshot: later appends do not change a transcript already handed out. The
        diagnostics are those of the last parse (appended entries are replaylab's own)."""
        if self._mirror is None or not self._still_sealed():
            self._mirror = self._parse_sealed()
            if self._mirror is None:
                from replaylab.transcript.load import load_transcript

                return load_transcript(self.path, navigation=self._read_as)
        return _snapshot(self._mirror, newlines=self._newlines)

    def _parse_sealed(self) -> Transcript | None:
        """Parse the file; None when it cannot be kept (no seal on this file system, or a write
        by someone else during the parse)."""
        from replaylab.transcript.load import loads_transcript

        if self._seal is None:
            return None
        data = self.path.read_bytes()
        if not self._still_sealed() or len(data) != self._size:
            return None
        parsed = loads_transcript(data, path=self.path, navigation=self._read_as)
        self._newlines = parsed.newlines if parsed.newlines is not None else data.count(b"\n")
        return parsed

    def _extend_mirror(self, line: bytes) -> None:
        """Add the entry just appended, exactly as a new parse would read it, or drop the mirror.
        The parse's navigation state reads it on (`leaf_controls`): after a reset, a followed control
        or a record kept aside, the parse places an entry elsewhere than its `parentId` says."""
        mirror = self._mirror
        assert mirror is not None
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:  # a lone surrogate escape: the loader's own reading of it
            self._mirror = None
            return
        entry_id, parent_id = obj.get("id"), obj.get("parentId")
        navigation = mirror.navigation
        if (
            navigation is None  # a transcript no parse made: what a parse would read is not known here
            or mirror.source_version != CURRENT_SESSION_VERSION
            or not isinstance(entry_id, str)
            or obj.get("type") in ("session", "leaf")
            # OpenClaw's navigation (`leaf_controls`): a side append, a control, a missing parentId
            or "appendMode" in obj
            or "parentId" not in obj
            or parent_id in mirror.side_ids
            or entry_id in mirror.by_id
            or (parent_id is not None and parent_id not in mirror.by_id)
        ):
            self._mirror = None
            return
        relinked = navigation.place(obj, mirror.by_id)
        if relinked is not KEEP:
            obj = {**obj, "parentId": relinked}
        try:
            model = ENTRY_ADAPTER.validate_python(obj)
        except ValueError:
            self._mirror = None
            return
        navigation.placed(entry_id, model.type, model.parent_id, obj)
        mirror.entries.append(model)
        mirror.by_id[entry_id] = model
        mirror.line_of[entry_id] = self._newlines

    def adopt_appended(self) -> None:
        """Take what another program appended to the file as the writer's own (an external
        compactor appends its entry itself): the prefix is checked (NotOwnedError when it
        changed), the running hash continues over the new bytes, and the file is sealed again,
        so `transcript()` parses it once more and then follows this writer's appends as before."""
        self._verify_and_resync()
        self._mirror = None
        self._seal_file()

    def verify_append_only(self) -> None:
        """Raise if the file no longer starts with what this writer left in it (reads it all)."""
        with open(self.path, "rb") as handle:
            self._check_prefix(handle)

    def _check_prefix(self, handle: Any) -> Any:
        """Hash the first `_size` bytes in chunks; raise unless they are what was written.
        Returns the sha256 object, positioned after the prefix, for `_verify_and_resync`."""
        digest, left, last = hashlib.sha256(), self._size, b""
        while left > 0:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
            last = chunk[-1:]
        if left > 0 or digest.hexdigest() != self._digest:
            raise NotOwnedError(
                f"{self.path}: the working copy was rewritten behind replaylab's back "
                "(its prefix changed); it is no longer append-only"
            )
        self._last_byte = last
        return digest

    # ------------------------------------------------------------ the seal

    def _seal_file(self) -> None:
        """Stamp mtime `SEAL_MARGIN_S` whole seconds before now (see the module docstring) and
        remember the file's identity; `_still_sealed` compares against it."""
        try:
            stat = os.stat(self.path)
            seal_ns = (time.time_ns() // 1_000_000_000 - SEAL_MARGIN_S) * 1_000_000_000
            os.utime(self.path, ns=(stat.st_atime_ns, seal_ns))
            stat = os.stat(self.path)
        except OSError:
            self._seal = None
            return
        self._seal = (
            (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
            if stat.st_mtime_ns == seal_ns
            else None
        )

    def _still_sealed(self) -> bool:
        if self._seal is None:
            return False
        try:
            stat = os.stat(self.path)
        except OSError:
            return False
        return (
            stat.st_dev,
            stat.st_ino,
            stat.st_size,
            stat.st_mtime_ns,
            stat.st_ctime_ns,
        ) == self._seal and stat.st_size == self._size

    def writes_to(self, path: str | Path) -> bool:
        """Whether `path` names this writer's file: compared as spelled first, resolved only when
        spelled differently (resolving is a syscall per path component)."""
        path = Path(path)
        return path == self.path or path.resolve() == Path(self.path).resolve()

    def sealed_state(self) -> tuple[int, str] | None:
        """(size, sha256) of the file as it is now, without reading it, while the seal holds
        (nothing but this writer wrote to it since: see the module docstring); None otherwise —
        then only a read of the file says what it holds."""
        return (self._size, self._digest) if self._still_sealed() else None

    def _verify_and_resync(self) -> None:
        """The full check (one read of the file), then continue from what is there now: the
        prefix is ours, and bytes someone else appended after it are kept, as before."""
        with open(self.path, "rb") as handle:
            digest = self._check_prefix(handle)
            last = self._last_byte
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
                last = chunk[-1:]
        self._hash, self._last_byte = digest, last
        self._size = self.path.stat().st_size
        self._digest = digest.hexdigest()


_OWNER = object()
#: how far before an append its seal is stamped (see the module docstring)
SEAL_MARGIN_S = 5


def _older_version(recording: str | Path, parsed: Transcript | None) -> Transcript | None:
    """The eager parse of `recording` when it is a v1 / v2 session (its working copy is then
    written as v3), else None."""
    from replaylab.transcript.load import LazyTranscript, load_transcript

    if parsed is not None and parsed.source_version >= CURRENT_SESSION_VERSION:
        return None
    if parsed is None or isinstance(parsed, LazyTranscript):
        with open(recording, "rb") as handle:
            head = handle.readline(1 << 16)
        try:
            version = orjson.loads(head).get("version", 1)
        except (orjson.JSONDecodeError, AttributeError):
            return None  # not a session header: the loader reports it; the copy stays a byte copy
        if isinstance(version, int) and version >= CURRENT_SESSION_VERSION:
            return None
        parsed = load_transcript(Path(recording), lazy=False)
    return parsed if parsed.source_version < CURRENT_SESSION_VERSION else None


def _through_newlines(chunk: bytes, left: int) -> tuple[bytes, int]:
    """The chunk up to and including its `left`-th newline (all of it when it holds fewer), and
    the newlines still to copy after it."""
    at = -1
    for _ in range(left):
        at = chunk.find(b"\n", at + 1)
        if at < 0:
            return chunk, left - chunk.count(b"\n")
    return chunk[: at + 1], 0


def _first_lines(transcript: Transcript, lines: int) -> Transcript:
    """A migrated transcript's entries on its first `lines` lines."""
    from dataclasses import replace

    line_of = transcript.line_of
    return replace(transcript, entries=[e for e in transcript.entries if line_of.get(e.id, lines + 1) <= lines])


def _snapshot(transcript: Transcript, path: Path | None = None, newlines: int | None = None) -> Transcript:
    """A copy whose containers are its own (the entry models are shared: nothing mutates them),
    so appends to the writer's parse never change a transcript handed out, nor the caller's.
    `newlines`: the file's newline count now (None: not known — the writer's mirror keeps it apart)."""
    from dataclasses import replace

    navigation = None if transcript.navigation is None else transcript.navigation.copy()
    return replace(
        transcript,
        path=path or transcript.path,
        entries=list(transcript.entries),
        by_id=dict(transcript.by_id),
        line_of=dict(transcript.line_of),
        diagnostics=list(transcript.diagnostics),
        newlines=newlines,
        navigation=navigation,
        side_ids=set(transcript.side_ids) if navigation is None else navigation.side,
    )


def _encode(entry: dict[str, Any] | BaseModel) -> bytes:
    obj = dump_entry(entry) if isinstance(entry, BaseModel) else entry
    try:
        return orjson.dumps(obj) + b"\n"
    except orjson.JSONEncodeError:  # nested deeper than orjson prints, or a lone surrogate: printed apart
        # a lone surrogate (OpenClaw 2026.4.12's truncation slices between the halves of a pair) is
        # written as JSON.stringify writes it, a `\uD83D` escape: text with one has no UTF-8 form
        return compact_json(obj).encode("utf-8", "backslashreplace") + b"\n"


#: bytes per read when copying or hashing a file
COPY_CHUNK = 1 << 20


def _digest_of(handle: BinaryIO) -> _Hash:
    """The sha256 object of what is left to read from `handle`."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: handle.read(COPY_CHUNK), b""):
        digest.update(chunk)
    return digest


def _file_digest(path: Path) -> _Hash:
    with open(path, "rb") as handle:
        return _digest_of(handle)


def _file_sha256(path: Path) -> str:
    return _file_digest(path).hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes (used to prove a recording did not change)."""
    return _file_sha256(Path(path))


#: a file whose status last changed this recently may change again within the same tick of a
#: coarse file-system clock without its ctime moving: such a file is always hashed again
SETTLED_NS = 3_000_000_000


@dataclass(frozen=True)
class FileState:
    """A file's sha256 and the status it had while it was hashed (`file_state`).

    Why: the pipeline proves that a recording and its cassette did not change during a run by
    hashing both before and after it, and reading both files a second time is a cost per item.
    The kernel sets a file's ctime to the current time on every change of its bytes (and no
    call sets it back), so a file whose identity, size, mtime and ctime are those it had when
    hashed, with a ctime settled before the hash began, still holds the hashed bytes. Not
    covered: a system clock stepped back by more than `SETTLED_NS` in between."""

    sha256: str
    #: (device, inode, size, mtime, ctime) when it can vouch for the bytes; None: hash again
    status: tuple[int, int, int, int, int] | None
    #: the sha256 object after the hashed bytes (`TranscriptWriter.working_copy` continues from
    #: a copy of it while `status` vouches that the file still holds them); None: not kept
    hasher: _Hash | None = field(default=None, compare=False, repr=False)


def _status(path: Path) -> tuple[int, int, int, int, int]:
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def file_state(path: str | Path, *, keep_hasher: bool = False) -> FileState:
    """The file's sha256, with its status when that status can vouch for the bytes later
    (`keep_hasher`: and then the sha256 object too, for a working copy of the file; off by
    default, so that a state stays plain data)."""
    path = Path(path)
    started = time.time_ns()
    status = _status(path)
    hasher = _file_digest(path) if keep_hasher else None
    digest = hasher.hexdigest() if hasher is not None else _file_sha256(path)
    settled = status[4] < started - SETTLED_NS and _status(path) == status
    return FileState(digest, status if settled else None, hasher if settled else None)


def _still_vouched(before: FileState, path: str | Path) -> bool:
    """Whether `before`'s status vouches that the file holds the bytes it was hashed with."""
    if before.status is None:
        return False
    try:
        return _status(Path(path)) == before.status
    except OSError:
        return False


def file_state_again(before: FileState, path: str | Path, *, keep_hasher: bool = False) -> FileState:
    """The file's state now: `before` itself when its status vouches that nothing changed since
    (and, with `keep_hasher`, it holds its sha256 object), else a new hash."""
    if _still_vouched(before, path) and (before.hasher is not None or not keep_hasher):
        return before
    return file_state(path, keep_hasher=keep_hasher)
