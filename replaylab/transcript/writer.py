"""Append-only transcript writing, for working copies and new recordings only.

Recordings are evidence: replaylab never writes to one. The writer can only be obtained for a
file it creates itself (`create_new`, `working_copy`), checks before each append that nobody
rewrote what it wrote before (size and hash of the prefix), and fsyncs each append so a
SIGKILL leaves whole lines.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

import orjson
from pydantic import BaseModel

from replaylab.transcript.model import dump_entry


class NotOwnedError(PermissionError):
    """Raised when asked to write to a file this writer did not create."""


class TranscriptWriter:
    """Appends JSON lines to a file this object created. Use `create_new` or `working_copy`."""

    def __init__(self, path: Path, *, _token: object = None):
        if _token is not _OWNER:
            raise NotOwnedError(f"{path}: replaylab writes only to files it created itself "
                                "(TranscriptWriter.create_new / working_copy); recordings are never written")
        self.path = path
        self._size = path.stat().st_size
        self._digest = _file_sha256(path)

    @classmethod
    def create_new(cls, path: str | Path, lines: Iterable[dict[str, Any] | BaseModel] = ()) -> "TranscriptWriter":
        """Create a file that must not exist yet (O_EXCL) and write the first lines."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            for line in lines:
                handle.write(_encode(line))
            handle.flush()
            os.fsync(handle.fileno())
        return cls(path, _token=_OWNER)

    @classmethod
    def working_copy(cls, recording: str | Path, destination: str | Path) -> "TranscriptWriter":
        """Byte copy of a recording to a new file that this writer owns."""
        destination = Path(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out, open(recording, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
        return cls(destination, _token=_OWNER)

    def append(self, entry: dict[str, Any] | BaseModel) -> None:
        self.verify_append_only()
        data = _encode(entry)
        with open(self.path, "ab") as handle:
            if self._size and not _ends_with_newline(self.path):
                data = b"\n" + data
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        self._size = self.path.stat().st_size
        self._digest = _file_sha256(self.path)

    def verify_append_only(self) -> None:
        """Raise if the file no longer starts with what this writer left in it."""
        size = self.path.stat().st_size
        with open(self.path, "rb") as handle:
            prefix = handle.read(self._size)
        if size < self._size or hashlib.sha256(prefix).hexdigest() != self._digest:
            raise NotOwnedError(f"{self.path}: the working copy was rewritten behind replaylab's back "
                                "(its prefix changed); it is no longer append-only")


_OWNER = object()


def _encode(entry: dict[str, Any] | BaseModel) -> bytes:
    obj = dump_entry(entry) if isinstance(entry, BaseModel) else entry
    return orjson.dumps(obj) + b"\n"


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes (used to prove a recording did not change)."""
    return _file_sha256(Path(path))
