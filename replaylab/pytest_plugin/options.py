"""The plugin's settings as pytest reads them: command-line option first, then the ini value."""

from __future__ import annotations

from pathlib import Path

import pytest


def report_dir(config: pytest.Config) -> Path:
    value = config.getoption("replaylab_report") or config.getini("replaylab_report") or "reports"
    path = Path(value)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path
