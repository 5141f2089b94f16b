"""The hooks replaylab's plugin adds to pytest, for a `conftest.py` or a plugin to implement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from replaylab.suite import Scenario


@pytest.hookspec(firstresult=True)
def pytest_replaylab_compactor(config: pytest.Config, scenario: Scenario) -> Any:
    """The compactor to put under test in `scenario` (a `replaylab.suite.Scenario`; its
    `suite`, `name` and `suite_file` say which), or None for the suite's own choice.

    Return a callable `compactor(params: CompactParams, working_copy: Path)` that appends its
    compaction entry to `working_copy` and returns a `CompactResult` (or a dict in its JSON
    shape), or a spec string as `--replaylab-compactor` takes it (`python:package.module:callable`,
    `command:ARGV`, `pi`). It wins over the suite's `compactor:`; `--replaylab-compactor` wins over it.
    Called once per item, at collection: a value that is none of these is a usage error."""
