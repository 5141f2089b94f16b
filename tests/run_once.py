"""A session fixture's value computed once per test run, also under xdist.

pytest computes a session-scoped fixture once per process, so under `-n 2` each worker would run
an expensive set-up (every bundled item, say) again. `once_per_run` lets the first worker that
asks compute it and leave it, pickled, in the run's shared temporary folder; a worker that asks
later (or at the same time: it waits on the lock) reads that copy. In one process it just computes.
"""

from __future__ import annotations

import fcntl
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def once_per_run(request: pytest.FixtureRequest, name: str, compute: Callable[[], T]) -> T:
    """`compute()`, or the value another xdist worker of this run computed under `name`."""
    if not hasattr(request.config, "workerinput"):
        return compute()
    shared = request.getfixturevalue("tmp_path_factory").getbasetemp().parent  # one folder per run, every worker's
    stored = shared / f"once-{name}.pickle"
    with open(shared / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if stored.is_file():
                return pickle.loads(stored.read_bytes())
            value = compute()
            partial = stored.with_suffix(".partial")
            partial.write_bytes(pickle.dumps(value))
            partial.rename(stored)
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run_folder(request: pytest.FixtureRequest, name: str) -> Path:
    """A new folder for what `once_per_run` computes into files: in the run's shared temporary
    folder under xdist, where every worker reads it; in one process, the process's own."""
    factory = request.getfixturevalue("tmp_path_factory")
    if not hasattr(request.config, "workerinput"):
        return factory.mktemp(name)
    folder = factory.getbasetemp().parent / name
    shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed midway left
    folder.mkdir()
    return folder
