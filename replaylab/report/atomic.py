"""Files written whole or not at all, through temporaries no one else can plant or predict.

Why: a report is first written to a temporary file in the target folder and renamed over the old
one, so a reader never sees half a file. That temporary is opened with `O_CREAT | O_EXCL |
O_NOFOLLOW` under a random name: a file or symbolic link planted at a guessable name cannot make
the write land somewhere else (the open fails instead). The rename replaces a link at the
target's own name, never the file it points to. While temporaries exist, SIGTERM and SIGINT first
remove them and then take their usual course (the process still ends, or KeyboardInterrupt is
raised), so an interrupted run leaves no partial file behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

#: a report is readable by whoever may read the folder it is written to (as before)
FILE_MODE = 0o644
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def temporary_path(target: Path) -> Path:
    """An unpredictable name next to `target` (same folder, so the rename stays on one file system)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")


def write_temporary(target: Path, data: bytes, pending: set[Path], mode: int = FILE_MODE) -> Path:
    """`data` in a new temporary next to `target`, synced; returns its path. The path joins
    `pending` before the file exists, so a signal handler removes it however far the write got.
    Raises OSError (the temporary removed)."""
    tmp = temporary_path(target)
    pending.add(tmp)
    try:
        fd = os.open(tmp, _FLAGS, mode)
    except OSError:
        pending.discard(tmp)
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        remove(tmp)
        pending.discard(tmp)
        raise
    return tmp


def write_file(target: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """`target` replaced by `data` in one rename (`write_temporary`), temporaries removed on a
    failure or a signal."""
    pending: set[Path] = set()
    with removed_on_signal(pending):
        try:
            tmp = write_temporary(target, data, pending, mode)
            os.replace(tmp, target)
            pending.discard(tmp)
        finally:
            for path in list(pending):
                remove(path)


@contextlib.contextmanager
def removed_on_signal(pending: set[Path]) -> Iterator[None]:
    """While inside: SIGTERM / SIGINT remove every path in `pending`, then do what they did
    before (the earlier handler runs, or the default action ends the process). Only the main
    thread can set handlers; elsewhere this does nothing and the callers' `finally` cleans up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {
        number: signal.getsignal(number) for number in _SIGNALS
    }

    raised: list[BaseException] = []  # what the earlier handler raised, if it did

    def cleanup_then_resend(number: int, frame: FrameType | None) -> None:
        for path in list(pending):
            remove(path)
        pending.clear()
        before = previous[number]
        signal.signal(number, before if before is not None else signal.SIG_DFL)
        if callable(before):
            try:
                before(number, frame)  # e.g. Python's SIGINT handler: raises KeyboardInterrupt
            except BaseException as exc:
                raised.append(exc)
                raise
        else:
            os.kill(os.getpid(), number)  # the default action, now that the handler is back

    installed = []
    try:
        for number, before in previous.items():
            if before is not signal.SIG_IGN:
                signal.signal(number, cleanup_then_resend)
                installed.append(number)
        yield
    except BaseException as error:
        # the handler's exception surfaces as it was raised, whatever the code it interrupted made
        # of it (pydantic turns one raised in a serializer's Python callback into its own error)
        if raised and error is not raised[0]:
            raise raised[0] from error
        raise
    else:
        if raised:  # the interrupted code swallowed it
            raise raised[0]
    finally:
        for number in installed:
            if signal.getsignal(number) is cleanup_then_resend:
                signal.signal(number, previous[number] if previous[number] is not None else signal.SIG_DFL)


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
