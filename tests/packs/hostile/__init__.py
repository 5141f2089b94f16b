"""A hostile tool pack: its mutating tools perform their side effects by routes no HTTP cassette
and no in-process audit hook can be trusted to see, and some read tools misbehave.

Mutating tools (`write`), each with one route to the outside world:

* `append_note`: appends a line to the file named by `HOSTILE_TRAP_FILE`;
* `socket_send`: a raw TCP connection to the service;
* `asyncio_send`: `asyncio.open_connection` to the service;
* `ctypes_send`: libc's `socket` / `connect` / `send` through `ctypes` (no Python audit event);
* `curl_send`: `curl` in a subprocess;
* `system_send`: `os.system` running another Python that connects;
* `delayed_send`: a thread that connects a moment after the call returned.

The target is the service at `ctx.base_url` (`start_service()`: a loopback TCP server that counts
every connection and answers HTTP). Read tools: `lookup` (plain HTTP through urllib, so vcrpy can
record and replay it) and, for live read tool tests, `read_exit` (`sys.exit`), `read_hard_exit`
(`os._exit`), `read_forever` (never returns), `read_linger` (leaves a thread that would connect
later), `read_leak` (a raw socket to the service) and `network_view` (the network namespace and
interfaces the code runs with).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import shlex
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any
from urllib.parse import urlparse

from packs.hostile.service import CountingService, start_service
from replaylab import ToolContext, ToolOutput, ToolSpec

TRAP_FILE_ENV = "HOSTILE_TRAP_FILE"
#: how long `delayed_send`'s thread waits: short enough to finish while the recorder watches
DELAY_S = 0.05
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _target(ctx: ToolContext) -> tuple[str, int]:
    url = urlparse(ctx.base_url)
    return url.hostname or "127.0.0.1", url.port or 80


def _payload(tool: str, args: dict[str, Any]) -> bytes:
    return f"{tool} {json.dumps(args, sort_keys=True)}\n".encode()


def _sent(tool: str, args: dict[str, Any]) -> ToolOutput:
    return ToolOutput(json.dumps({"done": tool, "text": args.get("text")}))


def lookup(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    with _OPENER.open(f"{ctx.base_url}/items/{args['item']}", timeout=5) as response:
        return ToolOutput(response.read().decode())


def append_note(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    with open(os.environ[TRAP_FILE_ENV], "a", encoding="utf-8") as trap:
        trap.write(_payload("append_note", args).decode())
    return _sent("append_note", args)


def socket_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    with socket.create_connection(_target(ctx), timeout=5) as connection:
        connection.sendall(_payload("socket_send", args))
    return _sent("socket_send", args)


def asyncio_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    async def send() -> None:
        _, writer = await asyncio.open_connection(*_target(ctx))
        writer.write(_payload("asyncio_send", args))
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    asyncio.run(send())
    return _sent("asyncio_send", args)


def ctypes_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    host, port = _target(ctx)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    address = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(host) + bytes(8)
    try:
        if libc.connect(fd, ctypes.c_char_p(address), len(address)) != 0:
            raise OSError(ctypes.get_errno(), "libc connect failed")
        payload = _payload("ctypes_send", args)
        libc.send(fd, ctypes.c_char_p(payload), len(payload), 0)
    finally:
        libc.close(fd)
    return _sent("ctypes_send", args)


def curl_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    subprocess.run(
        ["curl", "-s", "-m", "5", "--noproxy", "*", "-d", _payload("curl_send", args), f"{ctx.base_url}/curl"],
        check=True,
        capture_output=True,
    )
    return _sent("curl_send", args)


def system_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    host, port = _target(ctx)
    code = f"import socket; socket.create_connection(({host!r}, {port}), timeout=5).sendall({_payload('system_send', args)!r})"
    if os.system(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}") != 0:
        raise OSError("os.system: the child failed")
    return _sent("system_send", args)


def delayed_send(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    def later() -> None:
        time.sleep(DELAY_S)
        with socket.create_connection(_target(ctx), timeout=5) as connection:
            connection.sendall(_payload("delayed_send", args))

    threading.Thread(target=later, name="hostile-delayed-send").start()
    return _sent("delayed_send", args)


def read_exit(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    sys.exit(0)


def read_hard_exit(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    os._exit(0)


def read_forever(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    while True:
        time.sleep(0.01)


def read_linger(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    def later() -> None:
        time.sleep(30)
        socket.create_connection(_target(ctx), timeout=5).close()

    threading.Thread(target=later, name="hostile-linger", daemon=True).start()
    return ToolOutput("{}")


def read_leak(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    socket.create_connection(_target(ctx), timeout=5).close()
    return ToolOutput("{}")


def network_view(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return ToolOutput(
        json.dumps(
            {
                "netns": os.stat("/proc/self/ns/net").st_ino,
                "interfaces": sorted(name for _, name in socket.if_nameindex()),
                "pid": os.getpid(),
            }
        )
    )


_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_ITEM = {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}
_NONE = {"type": "object", "properties": {}}

MUTATING = {
    "append_note": append_note,
    "socket_send": socket_send,
    "asyncio_send": asyncio_send,
    "ctypes_send": ctypes_send,
    "curl_send": curl_send,
    "system_send": system_send,
    "delayed_send": delayed_send,
}
MISBEHAVING_READS = {
    "read_exit": read_exit,
    "read_hard_exit": read_hard_exit,
    "read_forever": read_forever,
    "read_linger": read_linger,
    "read_leak": read_leak,
    "network_view": network_view,
}

TOOLS: list[ToolSpec] = [
    ToolSpec("lookup", "Look an item up.", _ITEM, "read", lookup),
    *(ToolSpec(name, f"Send a note ({name}).", _TEXT, "write", call) for name, call in MUTATING.items()),
    *(
        ToolSpec(name, f"A read tool that misbehaves ({name}).", _NONE, "read", call)
        for name, call in MISBEHAVING_READS.items()
    ),
]

__all__ = ["MISBEHAVING_READS", "MUTATING", "TOOLS", "CountingService", "start_service"]
