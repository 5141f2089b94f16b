"""Run an external compactor once: the params on stdin, its answer on stdout, its stderr kept.

The process is contained and bounded as every child of replaylab is (`replaylab.children`): a
PID namespace of its own where the machine allows (whatever it starts ends with it; replaylab's
environment is not readable through /proc), a minimal environment (no API keys, tokens or other
secrets of the run: a compactor under test is somebody else's code), stdout and stderr read as
they come up to a cap each (over it, it is killed), and the suite's folder as its working
directory, where the paths of its command line are relative to. No network namespace: the
bundled pi compactor reaches replaylab's summary endpoint on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from replaylab.children import Finished, minimal_environment, run_bounded

#: bytes of stdout read at most: a compact result is small, a runaway process is not
MAX_STDOUT_BYTES = 64 << 20
#: bytes of stderr read at most: a log is welcome, an endless stream is not
MAX_STDERR_BYTES = 16 << 20

__all__ = ["MAX_STDERR_BYTES", "MAX_STDOUT_BYTES", "Finished", "minimal_environment", "run_compactor"]


def run_compactor(
    argv: list[str],
    stdin: bytes,
    *,
    cwd: Path,
    home: Path,
    timeout_s: float,
    environment: Mapping[str, str] | None = None,
) -> Finished:
    """Run `argv` to its end, to `timeout_s` or to an output over its cap. OSError when it cannot
    start (not found, not executable): the caller names it."""
    return run_bounded(
        argv,
        stdin,
        env=minimal_environment(home, environment),
        cwd=cwd,
        timeout_s=timeout_s,
        max_stdout=MAX_STDOUT_BYTES,
        max_stderr=MAX_STDERR_BYTES,
    )
