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
"""

from __future__ import annotations

import ipaddress
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


class NetworkBlockedError(RuntimeError):
    """A replay tried to reach a non-loopback address. Deliberately not an `OSError`: HTTP
    clients catch and retry `OSError`s, which would hide the attempt."""


_lock = threading.Lock()
_depth = 0
_installed = False
#: every blocked attempt since the process started, as (event, target) — kept so a caller can
#: report an attempt even when a library swallowed the exception
blocked_attempts: list[tuple[str, str]] = []


def is_loopback_host(host: Any) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port) resolves the local wildcard, no lookup
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")  # the "idna" codec has no "replace": it raised inside the hook
    if not isinstance(host, str):
        return False
    name = host.strip("[]").lower().rstrip(".")
    if name in _LOOPBACK_NAMES:  # not "*.localhost": /etc/hosts lacks them, so glibc asks the DNS server
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _target_allowed(address: Any) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX path
    if isinstance(address, tuple) and address:
        return is_loopback_host(address[0])
    return False


_local = threading.local()
_CONNECT_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_LOOKUP_EVENTS = frozenset(
    {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"}
)  # gethostbyaddr (and getfqdn) is a reverse DNS lookup
#: the only events the hook acts on
_WATCHED = _CONNECT_EVENTS | _LOOKUP_EVENTS | {"socket.getnameinfo"}


def _hook(event: str, args: tuple) -> None:
    # CPython calls this for every audit event of the process — `id()` included, hundreds of
    # times per replayed session — so everything else is dismissed by one set lookup, first
    if event not in _WATCHED or not _depth or getattr(_local, "suspended", 0):
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
    elif event == "socket.getnameinfo":  # args: (sockaddr,) — may do a reverse DNS lookup
        sockaddr = args[0] if args else None
        if not _target_allowed(sockaddr):
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
