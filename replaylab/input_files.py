"""What a path handed to replaylab names, found by `stat` before anything opens it.

Why: a recording, suite, cassette or classification file given on the command line or matched by a
glob can be a FIFO (opening it waits for a writer forever), a device (`/dev/zero` reads without
end), a socket, or a symbolic link loop. Each is told apart by its `stat` and refused with a
sentence; only a regular file is opened, and then without blocking and checked again on the open
descriptor, so a file swapped for a FIFO in between is refused too. Reading whole files is
bounded, so a file too big for memory is an error naming its size, not a MemoryError.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

REGULAR = "file"
MISSING = "missing"
DIRECTORY = "directory"

#: what each kind of path is, as the sentence that refuses it says it
PHRASES = {
    MISSING: "no such file",
    DIRECTORY: "is a directory",
    "fifo": "is a FIFO (named pipe), not a file: reading it would wait for a writer",
    "char-device": "is a character device, not a file",
    "block-device": "is a block device, not a file",
    "socket": "is a socket, not a file",
    "link-loop": "is a symbolic link loop (the links never reach a file)",
    "dangling-link": "is a symbolic link to a file that does not exist",
    "name-too-long": "has a name too long for the file system",
    "other": "is not a regular file",
}


class NotAFileError(OSError):
    """A path that is not a regular file to read; `kind` says what it is (a key of `PHRASES`)."""

    def __init__(self, path: str | Path, kind: str):
        super().__init__(errno.EINVAL, PHRASES.get(kind, kind), str(path))
        self.kind = kind


def kind_of(path: str | Path) -> str:
    """`REGULAR`, `MISSING`, `DIRECTORY`, another key of `PHRASES`, or `unreadable: <why>`.
    Follows symbolic links (a link to a file is a file) without opening anything."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "dangling-link" if os.path.islink(path) else MISSING
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "link-loop"
        if exc.errno == errno.ENAMETOOLONG:
            return "name-too-long"
        if exc.errno == errno.ENOTDIR:
            return MISSING
        return f"unreadable: {exc.strerror or exc}"
    except ValueError:  # a NUL byte in the name
        return MISSING
    return _kind_of_mode(mode)


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISREG(mode):
        return REGULAR
    if stat.S_ISDIR(mode):
        return DIRECTORY
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode):
        return "char-device"
    if stat.S_ISBLK(mode):
        return "block-device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def phrase(kind: str) -> str:
    """The sentence part for `kind` (`kind_of`): "is a FIFO (named pipe) ...", "cannot be read: ..."."""
    if kind.startswith("unreadable: "):
        return "cannot be read: " + kind.removeprefix("unreadable: ")
    return PHRASES.get(kind, PHRASES["other"])


def open_regular(path: str | Path, buffering: int = -1) -> BinaryIO:
    """`open(path, "rb")` for a regular file only: refused by `stat` first, opened without
    blocking (a FIFO swapped in after the check cannot hang the open), and checked once more on
    the descriptor. Raises `NotAFileError` (an OSError, `kind` set) or the open's own OSError."""
    kind = kind_of(path)
    if kind == MISSING:
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    if kind != REGULAR:
        raise NotAFileError(path, kind)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        opened = _kind_of_mode(os.fstat(fd).st_mode)
        if opened != REGULAR:
            raise NotAFileError(path, opened)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


class TooBigError(OSError):
    """A file larger than a reader takes whole into memory."""

    def __init__(self, path: str | Path, size: int, limit: int):
        super().__init__(errno.EFBIG, f"is {size:,} bytes, more than the {limit:,} bytes replaylab reads", str(path))
        self.size = size
        self.limit = limit


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`open_regular`'s refusals, and
    `TooBigError` past the limit, also for a file that grows while it is read)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise TooBigError(path, size, limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooBigError(path, len(data), limit)
    return data
