"""Run an external compactor once: the params on stdin, its answer on stdout, its stderr kept.

The process gets a minimal environment (no API keys, tokens or other secrets of the run: a
compactor under test is somebody else's code), its own session (so a timeout ends it and every
process it started), and the suite's folder as its working directory, where the paths of its
command line are relative to.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: environment variables a compactor may see: what a program needs to start and read text
PASSED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
#: bytes of stdout read at most: a compact result is small, a runaway process is not
MAX_STDOUT_BYTES = 64 << 20


@dataclass(frozen=True)
class Finished:
    """How the process ended: its exit status (None: killed at the timeout) and its output."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def minimal_environment(home: Path, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH and the locale from this process; HOME and TMPDIR the item's scratch folder; `given`:
    what replaylab itself serves the compactor (a bundled one's summary endpoint)."""
    env = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = env["TMPDIR"] = str(home)
    env.update(given or {})
    return env


def run_compactor(
    argv: list[str],
    stdin: bytes,
    *,
    cwd: Path,
    home: Path,
    timeout_s: float,
    environment: Mapping[str, str] | None = None,
) -> Finished:
    """Run `argv` to its end or to `timeout_s`. OSError when it cannot start (not found, not
    executable): the caller names it."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=minimal_environment(home, environment),
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        return Finished(None, stdout[:MAX_STDOUT_BYTES], stderr, timed_out=True)
    finally:
        _kill_group(process)  # what it left running in its session ends with it
    return Finished(process.returncode, stdout[:MAX_STDOUT_BYTES], stderr)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
