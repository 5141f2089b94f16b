"""`pytest --replaylab ...` in the test's own process, through pytester (`from inprocess import
pytest_in`; pytest puts `tests/` on sys.path).

Pytester drops every module imported during a test when the test ends (and during an in-process
run when the run ends), and importing a C extension that holds its package's classes a second
time breaks it (yaml's C loader, for one). So the modules a replaylab run needs are imported with
this module, at collection, before any pytester snapshot: every run then shares this one copy.

`importlib_metadata` (the backport, which litellm's dependencies import) is one of them for another
reason: at its import it deletes the standard library's `PathFinder.find_distributions` and puts
its own finder on `sys.meta_path`. Imported during an in-process run, pytester restores
`sys.meta_path` after the run and the process is left with no finder of installed distributions:
every later in-process pytest finds no plugin entry point ("unrecognized arguments: --replaylab").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

SHARED_MODULES = (
    "replaylab.qa.pipeline",
    "replaylab.compactors.recheck",
    "replaylab.qa.setup",
    "replaylab.report.story",
    "replaylab.compaction",
    "replaylab.replay.cassettes.playback",
    "replaylab.replay.cassettes.vcr_session",
    "replaylab.report.html",
    "replaylab.report.markdown",
    "replaylab.report.merge",
    "replaylab.report.jsonio",
    "replaylab.pytest_plugin.run_end",
    "examples.helpdesk",
    "importlib_metadata",
)
for _name in SHARED_MODULES:
    importlib.import_module(_name)


def pytest_in(
    pytester: pytest.Pytester, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., pytest.RunResult]:
    """A function that runs `pytest ARGS` in this process with `folder` as the working directory."""
    monkeypatch.chdir(folder)

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)

    return run
