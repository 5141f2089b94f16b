"""Processes a test left behind, or not: found by a marker their command line holds."""

from __future__ import annotations

import os
import time
from pathlib import Path


def marked(marker: str) -> list[int]:
    """The live processes on this machine (zombies aside) whose command line holds `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != b"Z":
            found.append(int(pid))
    return found


def gone(marker: str, within: float = 10.0) -> bool:
    """Whether no process holds `marker` any more, waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not marked(marker):
            return True
        time.sleep(0.1)
    return False


def appears(marker: str, within: float = 120.0) -> bool:
    """Whether a process holding `marker` appears within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if marked(marker):
            return True
        time.sleep(0.1)
    return False
