"""OS-level network isolation for a tool process: a fresh Linux network namespace.

A process in a network namespace of its own has no interface but a loopback that is down: no
connect, DNS query, `curl` child or `ctypes` call to libc can reach anything, whatever the audit
hook sees. The tool process gets one together with a PID namespace of its own
(`replaylab.children`: `unshare --pid --fork --kill-child --mount-proc --net`, with
`--map-root-user` for users other than root, where the kernel allows unprivileged user
namespaces); where the PID namespace cannot be made, a network namespace alone. Loopback stays
down: the tool's HTTP is answered by vcrpy inside the process, before any socket exists.

Whether it worked is not taken on trust: the tool process reports the namespace it is in and the
interfaces it sees (`tool_worker`), and `isolated` checks both.
"""

from __future__ import annotations

import os
from typing import Any

from replaylab.children import namespace_prefixes


def namespace_commands() -> tuple[list[list[str]], str | None]:
    """The command prefixes that can start a process in new PID and network namespaces, most
    direct first; or none and why."""
    return namespace_prefixes(True)


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
