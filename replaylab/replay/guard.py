"""Socket guard: during replay nothing may reach a non-loopback address.

Why an audit hook (PEP 578) and not a patched `socket.socket`: CPython raises the
`socket.connect` / `socket.getaddrinfo` / `socket.sendto` audit events *before* the system call,
for every socket, whatever library created it (urllib, httpx/httpx2, aiohttp, asyncio's
`sock_connect`, C extensions going through the `socket` module). Raising from the hook aborts the
call, so a blocked connect never sends a packet and a blocked DNS lookup never leaves the
machine. A patched class would miss sockets created before the patch and clients that keep a
reference to the original (vcrpy#990: httpx2 silently bypassing a cassette).

Audit hooks cannot be removed, so one hook is installed on first use and is inert unless a
`socket_guard()` is active (a process-wide depth counter: worker threads are guarded too —
litellm's background threads included). Loopback (127.0.0.0/8, ::1, `localhost`) and Unix
sockets stay allowed, so vcrpy playback, loopback test servers and the recorder's live loopback
service keep working. `network_allowed()` lifts the guard for the current thread only, for the one
case where going live is the point: a litellm call that records an LLM cassette.

Which names count as loopback: only those the hosts file maps to loopback addresses and nothing
else, exactly as written there (no trailing dot, no brackets). Any other name — `ip6-localhost`
or `localhost.localdomain` where the file lacks them, `*.localhost`, `localhost.` — would make the
C library ask the DNS server, so it is refused like any name. Reverse lookups are allowed only
for addresses the hosts file lists: for any other address, loopback or not, the C library asks
the DNS server for its PTR record. The file is read again (when it changed) each time a guard
is entered, never inside the hook.

What an audit hook cannot see — system calls made from C (`ctypes`, extension modules that do not
go through `socket`) and child processes — it cannot stop: replay therefore never runs a
mutating tool's code at all, and runs an opted-in read tool's code only in a child process inside
a network namespace of its own (`isolation`), with this guard as the second line.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.errors import ReplaylabError

HOSTS_FILE = Path("/etc/hosts")


@dataclass(frozen=True)
class HostsLoopback:
    """What the hosts file says about loopback: the names it maps to loopback addresses only, and
    the loopback addresses it lists (a reverse lookup of those never leaves the machine)."""

    names: frozenset[str] = frozenset()
    addresses: frozenset[str] = frozenset()


def read_hosts_loopback(path: Path = HOSTS_FILE) -> HostsLoopback:
    """Parse a hosts file: `address name [aliases…]` per line, `#` starts a comment. A name that
    the file also maps to a non-loopback address is not loopback."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return HostsLoopback()
    loopback: set[str] = set()
    elsewhere: set[str] = set()
    addresses: set[str] = set()
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        address = _ip(fields[0])
        if address is None:
            continue
        names = {name.lower() for name in fields[1:]}
        if address.is_loopback:
            loopback |= names
            addresses.add(address.compressed)
        else:
            elsewhere |= names
    return HostsLoopback(frozenset(loopback - elsewhere), frozenset(addresses))


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


#: the hosts file as last read, and its (mtime, size) then
_hosts = HostsLoopback()
_hosts_stamp: tuple[int, int] | None = None


def _refresh_hosts() -> None:
    global _hosts, _hosts_stamp
    try:
        stat = os.stat(HOSTS_FILE)
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = (0, -1)
    if stamp != _hosts_stamp:
        _hosts, _hosts_stamp = read_hosts_loopback(HOSTS_FILE), stamp


class NetworkBlockedError(ReplaylabError, RuntimeError):
    """A replay tried to reach a non-loopback address. Deliberately not an `OSError`: HTTP
    clients catch and retry `OSError`s, which would hide the attempt."""


_lock = threading.Lock()
_depth = 0
_installed = False
#: every blocked attempt since the process started, as (event, target) — kept so a caller can
#: report an attempt even when a library swallowed the exception
blocked_attempts: list[tuple[str, str]] = []


def _host_text(host: Any) -> str | None:
    if isinstance(host, bytes):
        return host.decode("ascii", "replace")  # the "idna" codec has no "replace": it raised inside the hook
    return host if isinstance(host, str) else None


def is_loopback_host(host: Any) -> bool:
    """A numeric loopback address, or a name the hosts file maps to loopback only (see module docstring)."""
    if host is None:
        return True  # getaddrinfo(None, port) resolves the local wildcard, no lookup
    text = _host_text(host)
    if text is None:
        return False
    address = _ip(text)
    if address is not None:
        return address.is_loopback
    return text.lower() in _hosts.names


def _reverse_lookup_allowed(host: Any) -> bool:
    """A reverse lookup stays on the machine only for an address the hosts file lists (a name is
    first looked up forward: the rule for names applies)."""
    text = _host_text(host)
    if text is None:
        return False
    address = _ip(text)
    if address is None:
        return text.lower() in _hosts.names
    return address.is_loopback and address.compressed in _hosts.addresses


def _target_allowed(address: Any) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX path
    if isinstance(address, tuple) and address:
        return is_loopback_host(address[0])
    return False


_local = threading.local()
_CONNECT_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_LOOKUP_EVENTS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"})
#: reverse DNS lookups (getfqdn calls gethostbyaddr)
_REVERSE_EVENTS = frozenset({"socket.gethostbyaddr", "socket.getnameinfo"})
#: the only events the hook acts on
_WATCHED = _CONNECT_EVENTS | _LOOKUP_EVENTS | _REVERSE_EVENTS


def _hook(event: str, args: tuple) -> None:
    # CPython calls this for every audit event of the process — `id()` included, hundreds of
    # times per replayed session — so everything else is dismissed by one set lookup, first
    if event not in _WATCHED or not _depth or getattr(_local, "suspended", False):
        return
    if event in _CONNECT_EVENTS:
        address = args[1] if len(args) > 1 else None
        if event == "socket.sendto" and address is None:
            return
        if not _target_allowed(address):
            _block(event, repr(address))
    elif event in _LOOKUP_EVENTS:
        host = args[0] if args else None
        if not is_loopback_host(host):
            _block(event, repr(host))
    elif event == "socket.gethostbyaddr":
        host = args[0] if args else None
        if not _reverse_lookup_allowed(host):
            _block(event, repr(host))
    else:  # socket.getnameinfo, args: (sockaddr,); its flags are not in the event, so assume a lookup
        sockaddr = args[0] if args else None
        if not (isinstance(sockaddr, tuple) and sockaddr and _reverse_lookup_allowed(sockaddr[0])):
            _block(event, repr(sockaddr))


def _block(event: str, target: str) -> None:
    blocked_attempts.append((event, target))
    raise NetworkBlockedError(
        f"replaylab socket guard: {event} to {target} blocked — replay may only reach loopback "
        "addresses (127.0.0.1, ::1). A tool or model client tried to go live; record it into the "
        "cassette instead."
    )


def _install() -> None:
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextmanager
def socket_guard() -> Iterator[None]:
    """Block every non-loopback connect / DNS lookup in this process while active (re-entrant)."""
    global _depth
    _install()
    with _lock:
        _refresh_hosts()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1


def guard_active() -> bool:
    return _depth > 0


@contextmanager
def network_allowed(reason: str) -> Iterator[None]:
    """Let *this thread* reach the network for one block inside an active guard — only for
    recording an LLM cassette against a real provider (`record_mode` other than none), where
    going live is the point. Tools are never run inside such a block."""
    _local.suspended = getattr(_local, "suspended", 0) + 1
    try:
        yield
    finally:
        _local.suspended -= 1
