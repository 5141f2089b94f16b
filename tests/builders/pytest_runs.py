"""`pytest` in a fresh process, the way a user runs it: the one runner of the end-to-end tests.

The child gets the parent's environment minus pytest's own `PYTEST_*` variables (an xdist worker's
`PYTEST_XDIST_WORKER` would make the child think it is a worker), with bytecode writing off (the
child must not leave `__pycache__` in a test's project) and the cache provider off unless asked
(its `.pytest_cache` is state the next run would read).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: a guard against a hung child, not an assertion on speed
TIMEOUT_S = 900
#: the child runs no plugin the tests' own environment brings that no child test uses: hypothesis's
#: imports the whole of hypothesis at the end of every run, the largest import a child would make
CHILD_PLUGINS = {"PYTEST_ADDOPTS": "-p no:hypothesispytest"}


def pytest_env(*, pythonpath: Sequence[Path | str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(CHILD_PLUGINS)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env.update(extra or {})
    return env


def run_pytest(
    cwd: Path,
    *args: str,
    pythonpath: Sequence[Path | str] = (),
    env: Mapping[str, str] | None = None,
    cache: bool = False,
    timeout: float = TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """`python -m pytest ARGS` in `cwd`; `env`: variables set on top of `pytest_env`."""
    command = [sys.executable, "-m", "pytest", *([] if cache else ["-p", "no:cacheprovider"]), *args]
    return subprocess.run(
        command,
        cwd=cwd,
        env=pytest_env(pythonpath=pythonpath, extra=env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_replaylab(
    cwd: Path, suite: str, *args: str, pythonpath: Sequence[Path | str] = (), env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pytest --replaylab SUITE` in `cwd`, its reports and JUnit in `cwd/reports`."""
    return run_pytest(
        cwd,
        "--replaylab",
        suite,
        "--replaylab-report",
        "reports",
        "--junitxml",
        "reports/junit.xml",
        *args,
        pythonpath=pythonpath,
        env=env,
    )
