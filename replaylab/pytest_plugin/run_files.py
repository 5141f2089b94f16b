"""The run's session files, watched from the start of the run to its end (`checks.run_files`).

The process that validates the suites (the run's own, or xdist's controller) hashes every
recording of every suite then, before any item runs; an xdist worker takes those states from its
controller (`RunStartForWorkers`) and hashes again only a file whose status moved since. Each item
then checks them all after it ran, and the run's end checks them once more.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from replaylab.checks.run_files import RunFiles

RUN_FILES = pytest.StashKey["RunFiles"]()


#: where an xdist controller puts the states it hashed in each worker's `workerinput`
STARTED_KEY = "replaylab_run_files"


def watch(config: pytest.Config, recordings: Iterable[Path]) -> None:
    recordings = list(recordings)
    if not recordings:
        return  # nothing to watch: a run without suites imports none of the checks
    from replaylab.checks.run_files import RunFiles  # here: loading the plugin stays cheap

    started = getattr(config, "workerinput", {}).get(STARTED_KEY)
    config.stash[RUN_FILES] = RunFiles.of(recordings, started)


class RunStartForWorkers:
    """On an xdist controller: each worker gets the states the controller hashed at the run's
    start, so it neither reads every session file again nor takes a file changed since for its
    start (the item that runs on it says so, as in a run without xdist)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        files = watched(node.config)
        if files is not None:
            node.workerinput[STARTED_KEY] = files.plain_start()


def watched(config: pytest.Config) -> RunFiles | None:
    return config.stash.get(RUN_FILES, None)
