"""Where a pipeline item keeps its working copy: one scratch folder per process, emptied after
each item, removed when the process exits.

Why not a temporary folder per item: creating and removing a directory is a journaled metadata
change, which on file systems mounted with `discard` (common on cloud VMs) costs many times what
creating and removing the item's files does, a noticeable share of a small item. The item's
files are still removed as soon as it ends (a large working copy must not outlive its item);
only the folder stays.

One folder per (process, thread, parent folder): items of one process run one after another,
and a thread or a forked child gets its own. The folders known are a process cache
(`replaylab.caches`): after `caches.clear()` the next item makes a new folder (each is removed
when the process exits).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from replaylab import caches

_FOLDERS: caches.ProcessCache[tuple[int, int, str | None], Path] = caches.ProcessCache("qa.item_folders")


@contextmanager
def item_folder(parent: Path | None = None) -> Iterator[Path]:
    """An empty folder for one item's files (under `parent`, else the system's temporary
    folder), emptied again when the item ends, whatever happened in it."""
    key = (os.getpid(), threading.get_ident(), str(parent) if parent is not None else None)
    folder = _FOLDERS.get(key)
    if folder is None or not folder.is_dir():
        folder = _FOLDERS[key] = Path(tempfile.mkdtemp(prefix="replaylab-", dir=parent))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _empty(folder)  # an item interrupted before its cleanup leaves nothing to the next one
    try:
        yield folder
    finally:
        _empty(folder)


def _empty(folder: Path) -> None:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass
