"""OS-level network isolation for a tool process: a fresh Linux network namespace.

A process in a network namespace of its own has no interface but a loopback that is down: no
connect, DNS query, `curl` child or `ctypes` call to libc can reach anything, whatever the audit
hook sees. `unshare --net` makes one for root; any other user needs a user namespace too
(`unshare --map-root-user --net`, where the kernel allows unprivileged user namespaces). Loopback
stays down: the tool's HTTP is answered by vcrpy inside the process, before any socket exists.

Whether it worked is not taken on trust: the tool process reports the namespace it is in and the
interfaces it sees (`tool_worker`), and `isolated` checks both.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any


def namespace_commands() -> tuple[list[list[str]], str | None]:
    """The command prefixes that can start a process in a new network namespace, most direct
    first; or none and why."""
    if not sys.platform.startswith("linux"):
        return [], f"network namespaces are a Linux feature (this is {sys.platform})"
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "the `unshare` command (util-linux) is not on PATH"
    prefixes = [[unshare, "--map-root-user", "--net"]]
    if os.geteuid() == 0:
        prefixes.insert(0, [unshare, "--net"])
    return prefixes, None


def own_namespace() -> int | None:
    try:
        return os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return None


def isolated(view: dict[str, Any]) -> str | None:
    """None when the tool process's network view (`netns`, `interfaces`) is a namespace of its
    own with loopback only; else why not."""
    namespace, interfaces = view.get("netns"), view.get("interfaces")
    if namespace is None or namespace == own_namespace():
        return "the tool process is in replaylab's own network namespace"
    if not isinstance(interfaces, list) or any(name != "lo" for name in interfaces):
        return f"the tool process sees network interfaces {interfaces!r}"
    return None
