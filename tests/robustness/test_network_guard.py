"""Network: during replay nothing reaches a non-loopback address.

For every client a replayed tool or model might use — urllib, requests, httpx (sync and async),
aiohttp and raw sockets — and for every DNS entry point, a request inside `socket_guard()` to a
documentation address (192.0.2.1, 2001:db8::1, RFC 5737/3849) or to a name under `.invalid`
(RFC 6761) raises `NetworkBlockedError` (or a client's wrapper whose exception chain holds it),
and the guard's own record says *which* call it stopped: `socket.getaddrinfo` (the lookup never
ran) or `socket.connect` (the audit event fires before the system call). The same client to a
loopback HTTP server started here works inside the same guard.

Why a tripwire: if the guard ever regressed, these tests would send real packets. A second
audit hook, added *after* the guard's (CPython calls hooks in order and stops at the first that
raises), is armed only inside these tests and raises `TripwireError` for any non-loopback
target the guard let through — so a broken guard fails the test loudly and still sends nothing.

Which names count as loopback is the hosts file's say, not a list of usual names: a name the file
does not map to loopback (`ip6-localhost` where it lacks it, `localhost.`, `*.localhost`) would
reach the DNS server, so it is blocked.

The last tests prove the pipeline itself: a tool pack whose implementation reaches for a
non-loopback address (as a database driver would) is never run by a replay; with live read tools
opted in, its read tools run in a network namespace of their own, the guard there blocks the
attempt, and the item reports it — also when the tool swallows the exception.
"""

from __future__ import annotations

import asyncio
import errno
import http.server
import ipaddress
import shutil
import socket
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from builders.transcripts import message_chain_jsonl
from replaylab.replay import guard as guard_module
from replaylab.replay.guard import NetworkBlockedError, guard_active, socket_guard
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
HELPDESK = REPO / "recordings" / "helpdesk"

V4 = "192.0.2.1"  # TEST-NET-1: documentation only, never routed
V6 = "2001:db8::1"  # IPv6 documentation prefix
NAME = "replaylab-guard-test.example.invalid"  # .invalid never resolves
TARGETS = {
    "ipv4": (f"http://{V4}:8080/x", V4),
    "ipv6": (f"http://[{V6}]:8080/x", V6),
    "dns": (f"http://{NAME}/x", NAME),
}
TIMEOUT = 3.0  # only matters if something went wrong; a blocked call returns at once


# ---------------------------------------------------------------- tripwire (see module docstring)


class TripwireError(AssertionError):
    """The socket guard let a non-loopback connect or lookup through."""


_ARMED = False
_TRIP_LOCK = threading.Lock()
tripped: list[tuple[str, str]] = []


def _strict_loopback(host: Any) -> bool:
    """Independent of the guard's own rule, and stricter: 127/8, ::1, `localhost`, AF_UNIX."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or host == "localhost":
        return True
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _tripwire(event: str, args: tuple) -> None:
    if not _ARMED or not event.startswith("socket."):
        return
    target: Any = None
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        address = args[1] if len(args) > 1 else None
        if address is None or isinstance(address, (str, bytes)):
            return  # connected send / AF_UNIX
        target = address[0] if isinstance(address, tuple) and address else address
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"):
        target = args[0] if args else None
    elif event == "socket.getnameinfo":
        sockaddr = args[0] if args else None
        target = sockaddr[0] if isinstance(sockaddr, tuple) and sockaddr else sockaddr
    else:
        return
    if not _strict_loopback(target):
        with _TRIP_LOCK:
            tripped.append((event, repr(target)))
        raise TripwireError(f"socket guard let {event} to {target!r} through")


with socket_guard():  # installs the guard's audit hook first ...
    pass
sys.addaudithook(_tripwire)  # ... so this one only sees what the guard let through


@contextmanager
def guarded() -> Iterator[None]:
    """`socket_guard()` with the tripwire armed; fails the test if anything got past the guard."""
    global _ARMED
    start = len(tripped)
    _ARMED = True
    try:
        with socket_guard():
            yield
    finally:
        _ARMED = False
    assert tripped[start:] == [], f"the socket guard let traffic through: {tripped[start:]}"


# ---------------------------------------------------------------- helpers


def chain(exc: BaseException | None) -> list[BaseException]:
    """Every exception reachable through __cause__, __context__ and exception groups."""
    out: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if current is None or any(current is seen for seen in out):
            continue
        out.append(current)
        todo.extend([current.__cause__, current.__context__])
        todo.extend(getattr(current, "exceptions", ()) or ())
    return out


def assert_blocked(call: Callable[[], Any], host: str) -> list[tuple[str, str]]:
    """`call()` raises with a NetworkBlockedError in its chain naming `host`; returns the guard's
    record of what it stopped (the events prove *where*: before the lookup or the connect)."""
    start = len(guard_module.blocked_attempts)
    with pytest.raises(BaseException) as info:
        call()
    blocked = [e for e in chain(info.value) if isinstance(e, NetworkBlockedError)]
    assert blocked, (
        f"no NetworkBlockedError in the chain of {info.value!r}: {[type(e).__name__ for e in chain(info.value)]}"
    )
    assert not any(isinstance(e, TripwireError) for e in chain(info.value))
    attempts = guard_module.blocked_attempts[start:]
    assert attempts and all(host in target for _, target in attempts), attempts
    assert {event for event, _ in attempts} <= {"socket.getaddrinfo", "socket.connect", "socket.gethostbyname"}
    assert host in str(blocked[0])
    return attempts


def _ipv6_loopback_available() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


IPV6_LOOPBACK = _ipv6_loopback_available()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # http.server's naming
        body = f"loopback ok {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class _V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


@contextmanager
def _serve(server: http.server.HTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (started outside any guard)."""
    with _serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)) as url:
        yield url


@pytest.fixture(scope="module")
def loopback_v6() -> Iterator[str]:
    if not IPV6_LOOPBACK:
        pytest.skip("no IPv6 loopback (::1) in this environment")
    with _serve(_V6Server(("::1", 0), _Handler)) as url:
        yield url


# ---------------------------------------------------------------- the clients


def _urllib_get(url: str) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy from the environment
    with opener.open(url, timeout=TIMEOUT) as response:
        return response.read().decode()


def _requests_get(url: str) -> str:
    import requests

    with requests.Session() as session:
        session.trust_env = False
        response = session.get(url, timeout=TIMEOUT)
        response.raise_for_status()
        return response.text


def _httpx_get(url: str) -> str:
    import httpx

    with httpx.Client(trust_env=False, timeout=TIMEOUT) as client:
        response = client.get(url)
        response.raise_for_status()
        return response.text


def _httpx_async_get(url: str) -> str:
    import httpx

    async def main() -> str:
        async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT) as client:
            response = await client.get(url)
            response.raise_for_status()
            return response.text

    return asyncio.run(main())


def _aiohttp_get(url: str) -> str:
    import aiohttp

    async def main() -> str:
        async with aiohttp.ClientSession(trust_env=False, timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as session:
            async with session.get(url) as response:
                response.raise_for_status()
                return await response.text()

    return asyncio.run(main())


CLIENTS = {
    "urllib": _urllib_get,
    "requests": _requests_get,
    "httpx": _httpx_get,
    "httpx-async": _httpx_async_get,
    "aiohttp": _aiohttp_get,
}


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("client", list(CLIENTS))
def test_http_client_is_blocked_off_machine_and_works_on_loopback(client: str, target: str, loopback: str):
    get = CLIENTS[client]
    url, host = TARGETS[target]
    with guarded():
        attempts = assert_blocked(lambda: get(url), host)
        if target == "dns":  # stopped at the lookup: no DNS query left the machine
            assert attempts[0][0] == "socket.getaddrinfo", attempts
        # the same client, same guard, to a loopback server: works
        assert get(loopback + f"/{client}") == f"loopback ok /{client}"
    assert not guard_active()


@pytest.mark.parametrize("client", list(CLIENTS))
def test_http_client_reaches_ipv6_loopback_and_localhost(client: str, loopback: str, loopback_v6: str):
    get = CLIENTS[client]
    port = loopback.rsplit(":", 1)[1]
    with guarded():
        assert get(loopback_v6 + "/v6") == "loopback ok /v6"
        assert get(f"http://localhost:{port}/name") == "loopback ok /name"


# ---------------------------------------------------------------- raw sockets and DNS


@pytest.mark.parametrize(
    "family,address", [(socket.AF_INET, (V4, 9)), (socket.AF_INET6, (V6, 9))], ids=["ipv4", "ipv6"]
)
@pytest.mark.parametrize("kind", [socket.SOCK_STREAM, socket.SOCK_DGRAM], ids=["tcp", "udp"])
def test_raw_socket_connect_and_sendto_are_blocked_before_the_system_call(family, address, kind):
    try:
        sock = socket.socket(family, kind)
    except OSError as exc:
        pytest.skip(f"address family not available: {exc}")
    with sock, guarded():
        sock.settimeout(TIMEOUT)
        assert_blocked(lambda: sock.connect(address), address[0])
        assert_blocked(lambda: sock.connect_ex(address), address[0])
        # the connect system call never ran: the socket has no peer (for UDP a real connect
        # would have succeeded at once, without a packet, and set one)
        with pytest.raises(OSError) as info:
            sock.getpeername()
        assert info.value.errno == errno.ENOTCONN
        if kind == socket.SOCK_DGRAM:
            start = len(guard_module.blocked_attempts)
            with pytest.raises(NetworkBlockedError):
                sock.sendto(b"replaylab", address)
            with pytest.raises(NetworkBlockedError):
                sock.sendmsg([b"replaylab"], [], 0, address)
            assert [e for e, _ in guard_module.blocked_attempts[start:]] == ["socket.sendto", "socket.sendmsg"]


def test_raw_sockets_on_loopback_still_work():
    with guarded():
        with (
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server,
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client,
        ):
            server.bind(("127.0.0.1", 0))
            server.settimeout(TIMEOUT)
            client.sendto(b"ping", server.getsockname())
            assert server.recvfrom(16)[0] == b"ping"
        with socket.create_server(("127.0.0.1", 0)) as listener:
            with socket.create_connection(listener.getsockname(), timeout=TIMEOUT) as conn:
                peer, _ = listener.accept()
                with peer:
                    conn.sendall(b"pong")
                    assert peer.recv(16) == b"pong"


def test_asyncio_low_level_connections_are_blocked():
    async def open_to(host: str, port: int) -> None:
        _, writer = await asyncio.open_connection(host, port)
        writer.close()

    async def datagram_to(host: str, port: int) -> None:
        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=(host, port)
        )
        transport.close()

    with guarded():
        for make in (open_to, datagram_to):
            for host in (V4, V6, NAME):
                assert_blocked(lambda make=make, host=host: asyncio.run(make(host, 9)), host)


DNS_CALLS = {
    "getaddrinfo": lambda host: socket.getaddrinfo(host, 443),
    "getaddrinfo-bytes": lambda host: socket.getaddrinfo(host.encode(), 443),
    "gethostbyname": socket.gethostbyname,
    "gethostbyname_ex": socket.gethostbyname_ex,
    "create_connection": lambda host: socket.create_connection((host, 443), timeout=TIMEOUT),
}


@pytest.mark.parametrize("call", list(DNS_CALLS))
@pytest.mark.parametrize("host", [NAME, "service.localhost"], ids=["invalid", "sub-localhost"])
def test_dns_lookups_of_names_are_blocked_before_resolving(call: str, host: str):
    """`*.localhost` too: it is not in /etc/hosts, so glibc would ask the DNS server."""
    with guarded():
        start = len(guard_module.blocked_attempts)
        with pytest.raises(NetworkBlockedError, match=host.replace(".", r"\.")):
            DNS_CALLS[call](host)
        [(event, _)] = guard_module.blocked_attempts[start:]
        assert event in ("socket.getaddrinfo", "socket.gethostbyname")


@pytest.mark.parametrize("address", [V4, V6])
def test_reverse_dns_lookups_are_blocked(address: str):
    """gethostbyaddr / getnameinfo / getfqdn ask the DNS server for a PTR record."""
    with guarded():
        start = len(guard_module.blocked_attempts)
        with pytest.raises(NetworkBlockedError):
            socket.gethostbyaddr(address)
        with pytest.raises(NetworkBlockedError):
            socket.getnameinfo((address, 80), 0)
        with pytest.raises(NetworkBlockedError):
            socket.getfqdn(address)
        assert [e for e, _ in guard_module.blocked_attempts[start:]] == [
            "socket.gethostbyaddr",
            "socket.getnameinfo",
            "socket.gethostbyaddr",
        ]


def test_loopback_names_are_the_hosts_files_and_nothing_else(tmp_path, monkeypatch):
    """Only names the hosts file maps to loopback addresses alone are loopback; usual names it
    lacks, names it also maps elsewhere, a trailing dot or brackets are not (each would reach the
    resolver). Reverse lookups only for the loopback addresses it lists."""
    hosts = tmp_path / "hosts"
    hosts.write_text(
        "127.0.0.1 localhost  # the usual\n127.0.1.1 box.lan box\n10.1.2.3 box\n"
        "::1 ip6-localhost\n# 127.0.0.1 commented\nnot-an-address foo\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(guard_module, "HOSTS_FILE", hosts)
    with socket_guard():
        loopback = guard_module.is_loopback_host
        assert loopback("localhost") and loopback("LOCALHOST") and loopback(b"localhost")
        assert loopback("box.lan") and loopback("ip6-localhost") and loopback("127.9.9.9") and loopback("::1")
        for name in ("box", "localhost.", "[::1]", "localhost.localdomain", "ip6-loopback", "commented", "foo"):
            assert not loopback(name), name
        assert guard_module._reverse_lookup_allowed("127.0.0.1") and guard_module._reverse_lookup_allowed("::1")
        assert not guard_module._reverse_lookup_allowed("127.0.0.2")  # loopback, but only the DNS server knows it
    monkeypatch.undo()
    with socket_guard():  # the real file again, read when it is seen to differ
        assert not guard_module.is_loopback_host("box.lan")


def test_usual_loopback_names_the_hosts_file_lacks_are_blocked():
    names = [n for n in ("ip6-localhost", "ip6-loopback", "localhost.localdomain") if not _hosts_lists(n)]
    if not names:
        pytest.skip("this machine's hosts file maps every usual loopback name")
    with guarded():
        for name in names:
            assert_blocked(lambda name=name: socket.getaddrinfo(name, 80), name)


def _hosts_lists(name: str) -> bool:
    try:
        text = Path("/etc/hosts").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(name in line.split("#", 1)[0].split()[1:] for line in text.splitlines())


def test_loopback_names_resolve_inside_the_guard():
    with guarded():
        assert {info[4][0] for info in socket.getaddrinfo("localhost", 80, socket.AF_INET)} == {"127.0.0.1"}
        assert socket.getaddrinfo(b"localhost", 80, socket.AF_INET)  # bytes hosts (anyio) too
        assert socket.gethostbyname("127.0.0.1") == "127.0.0.1"
        assert socket.getnameinfo(("127.0.0.1", 80), socket.NI_NUMERICHOST | socket.NI_NUMERICSERV) == (
            "127.0.0.1",
            "80",
        )


def test_worker_threads_are_guarded_too():
    """The guard is process-wide while active (litellm and asyncio resolvers use threads)."""
    seen: list[BaseException] = []

    def worker() -> None:
        try:
            socket.getaddrinfo(NAME, 80)
        except BaseException as exc:
            seen.append(exc)

    with guarded():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert len(seen) == 1 and isinstance(seen[0], NetworkBlockedError)


# ---------------------------------------------------------------- the pipeline replays under the guard

LEAKY_PACK = '''
"""The helpdesk tools, each first opening a connection to a non-loopback host — as a database
driver or a metrics client inside a tool implementation would. vcrpy cannot see that traffic;
only the socket guard can stop it."""
import dataclasses
import socket

from examples.helpdesk import TOOLS as _BASE

SWALLOW = {swallow}


def _leaky(spec):
    def call(args, ctx):
        try:
            socket.create_connection(("{host}", 5432), timeout=1).close()
        except Exception:
            if not SWALLOW:
                raise
        return spec.call(args, ctx)
    return call


TOOLS = [dataclasses.replace(spec, call=_leaky(spec)) for spec in _BASE]
'''

SUITE = """\
name: leaky-{name}
recordings: rec/*.jsonl
tools: {pack}
live_read_tools: {live}
model: replay
compaction: {{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500,
             maxHistoryShare: 0.5, identifierPolicy: strict, recentTurnsPreserve: 3}}
compact_at: auto
expect: {{defects: []}}
"""


def _run_leaky_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, swallow: bool, host: str, live: bool = True):
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite
    from replaylab.transcript import file_sha256

    name = f"leaky_pack_{'swallow' if swallow else 'raise'}_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(LEAKY_PACK.format(swallow=swallow, host=host), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "rec").mkdir()
    for src in HELPDESK.glob("cancel-two-orders.*"):
        shutil.copyfile(src, tmp_path / "rec" / src.name)
    suite_file = tmp_path / "leaky.yaml"
    suite_file.write_text(
        SUITE.format(name=name.replace("_", "-"), pack=name, live=str(live).lower()), encoding="utf-8"
    )
    suite = load_suite(suite_file)
    [recording] = suite.recordings
    hashes = {p.name: file_sha256(p) for p in (tmp_path / "rec").iterdir()}
    global _ARMED
    _ARMED = True  # the pipeline's own guard must stop everything: the tripwire watches it
    start = len(tripped)
    try:
        result = run_item(suite.scenarios[0], recording, RunOptions(work_dir=tmp_path))
    finally:
        _ARMED = False
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert tripped[start:] == []
    assert {p.name: file_sha256(p) for p in (tmp_path / "rec").iterdir()} == hashes
    return result


def test_pipeline_never_runs_a_leaky_tool_by_default(tmp_path, monkeypatch):
    """Without the opt-in, no tool code runs: the item passes as the plain helpdesk pack does."""
    result = _run_leaky_item(tmp_path, monkeypatch, swallow=False, host=V4, live=False)
    assert result.outcome == "passed", (result.outcome, result.reason, [d.message for d in result.defects])
    calls = [c for run in (result.baseline, result.compacted) for t in run.turns for c in t.tool_calls]
    assert calls and {c.source for c in calls} == {"cassette"}


@pytest.mark.parametrize("swallow", [False, True], ids=["tool-raises", "tool-swallows-the-error"])
def test_pipeline_blocks_a_live_read_tool_that_goes_off_machine_and_reports_it(tmp_path, monkeypatch, swallow):
    result = _run_leaky_item(tmp_path, monkeypatch, swallow=swallow, host=V4)
    assert result.outcome == "error", (result.outcome, result.reason)
    assert "socket guard blocked it" in result.reason and V4 in result.reason
    guard_defects = [d for d in result.defects if "socket guard" in d.message]
    assert guard_defects and guard_defects[0].code.value == "CASSETTE_MISSING"
    assert guard_defects[0].where.tool and guard_defects[0].where.tool_call_id
    calls = [c for t in result.baseline.turns for c in t.tool_calls]
    blocked_calls = [c for c in calls if c.source == "blocked"]
    assert blocked_calls, "the baseline's read calls should be marked blocked"
    assert all("tried to reach" in (c.result or "") and c.is_error and not c.mutating for c in blocked_calls)
    # the mutating calls were answered from the recording: their (leaky) code never ran
    assert all(c.source == "cassette" for c in calls if c.mutating)


def test_pipeline_blocks_a_dns_lookup_in_a_tool(tmp_path, monkeypatch):
    result = _run_leaky_item(tmp_path, monkeypatch, swallow=False, host=NAME)
    assert result.outcome == "error" and "socket.getaddrinfo" in result.reason and NAME in result.reason


def test_agent_loop_runs_the_model_under_the_guard():
    """A model client that tries to go live during a replay (outside `network_allowed`) is stopped
    too: the run ends with the guard's error, nothing left the machine."""
    from replaylab.replay import ToolExecutor, run_turns, split_turns
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript import load_transcript

    recording = HELPDESK / "cancel-two-orders.jsonl"
    turns = split_turns(load_transcript(recording).leaf_path())

    class LiveModel:
        def complete(self, window, tools):
            socket.create_connection((NAME, 443), timeout=TIMEOUT)
            raise AssertionError("unreachable: the guard must raise first")

    executor = ToolExecutor(recording.with_name("cancel-two-orders.cassette.yaml"), ToolClassifier())
    global _ARMED
    _ARMED = True
    start = len(tripped)
    try:
        trace = run_turns([], turns[:1], LiveModel(), executor, label="baseline")
    finally:
        _ARMED = False
    assert tripped[start:] == []
    assert trace.error and trace.error.startswith("NetworkBlockedError") and NAME in trace.error
    assert not guard_active()


_COUNT_ID_CALLS = r"""
import sys
from replaylab.replay import ToolExecutor, make_model, run_turns, split_turns
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import load_transcript

recording = load_transcript(sys.argv[1])
turns = split_turns(recording.leaf_path())
model, executor = make_model("replay", recording=recording), ToolExecutor(sys.argv[2], ToolClassifier())
callers = []  # the file of each caller of id() while replaying
replaying = False


def hook(event, args):
    if event == "builtins.id" and replaying:
        callers.append(sys._getframe(1).f_code.co_filename)


sys.addaudithook(hook)
replaying = True
trace = run_turns([], turns, model, executor, label="baseline")
replaying = False
assert trace.error is None and [c.source for t in trace.turns for c in t.tool_calls] == ["cassette"], trace
print(sum("/replaylab/replay/" in f for f in callers))
"""


def test_replay_code_never_calls_id_under_the_guards_audit_hook(tmp_path):
    """The socket guard's audit hook runs on every `id()` call in the process once a replay has
    installed it; replay keys its per-object memos by `identity` instead, so a replay raises no
    `builtins.id` event of its own. In a process of its own: an audit hook cannot be removed."""
    import subprocess

    from replaylab.cassette import recorded_tool_interaction, write_cassette

    messages = [
        {"role": "user", "content": "Where is ORD-55210?"},
        {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "lookup_order", "arguments": {"order_id": "ORD-55210"}}
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "lookup_order",
            "isError": False,
            "content": [{"type": "text", "text": '{"status": "shipped"}'}],
        },
        {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "ORD-55210 shipped."}]},
    ]
    data = message_chain_jsonl(messages, "lookup")
    recording = tmp_path / "lookup.jsonl"
    recording.write_bytes(data)
    cassette = write_cassette(
        tmp_path / "lookup.cassette.yaml",
        [recorded_tool_interaction("lookup_order", {"order_id": "ORD-55210"}, '{"status": "shipped"}')],
    )
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_ID_CALLS, str(recording), str(cassette)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) == 0
