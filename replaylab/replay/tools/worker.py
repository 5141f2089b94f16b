"""The tool process: runs a tool pack's code for replaylab, one call at a time, away from it.

Started by `tool_process.ToolProcess` as `python -m replaylab.replay.tools.worker`, for the two
cases where a tool's code runs at all: `replaylab record` (mode `record`: live against the pack's
loopback service, every HTTP interaction captured by a vcrpy recording cassette per call) and an
opted-in live read tool during replay (mode `replay`: inside a network namespace of its own, HTTP
served by vcrpy from the session's cassette). In both the socket guard is active for the whole
life of the process.

Why a process: a tool that calls `sys.exit` or `os._exit`, loops forever or leaves a thread
that fires later takes down or outlives whatever process runs it. Here that is this process;
replaylab sees the exit, the silence or the threads this process reports, names the tool and
goes on. `SystemExit` and the other exceptions that are not `Exception` are caught and reported
as an exit; threads the call started and left running are reported by name.

Protocol (`worker_protocol`): the first line in is the set-up, answered by a `ready` line
(the network namespace this process is in and the interfaces it sees, so replaylab can check the
isolation it asked for); then one `call` line in, one reply out, until `stop` or end of input.
The descriptors the protocol uses are moved away from 0 and 1 first: the tool's reads of stdin
see nothing, its prints go to stderr.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from contextlib import ExitStack
from typing import Any, BinaryIO

from replaylab.replay.tools.worker_protocol import decode, encode

#: how long the threads a call started may take to finish after it returned
THREAD_GRACE_S = 0.2


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return requests, replies


def _network_view() -> dict[str, Any]:
    try:
        namespace = os.stat("/proc/self/ns/net").st_ino
    except OSError:
        namespace = None
    try:
        interfaces = sorted(name for _, name in socket.if_nameindex())
    except OSError:
        interfaces = None
    return {"netns": namespace, "interfaces": interfaces}


class _Worker:
    """What both modes share: the pack, the guard, running one call and reporting how it ended."""

    def __init__(self, setup: dict[str, Any]):
        from replaylab.replay.guard import socket_guard
        from replaylab.replay.tools.pack import load_tool_pack

        self.pack = load_tool_pack(setup["pack"], source="tool process")
        # for the life of the process: nothing here may leave the machine (kept referenced: a
        # context manager dropped unexited is closed when it is collected)
        self._lifetime = ExitStack()
        self._lifetime.enter_context(socket_guard())

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        from replaylab.replay.guard import blocked_attempts
        from replaylab.replay.tools.pack import ToolContext, ToolOutput

        spec = self.pack.tools.get(request["tool"])
        if spec is None:
            return {"error": f"the tool pack {self.pack.name} has no tool {request['tool']!r}"}
        attempts = len(blocked_attempts)
        threads = set(threading.enumerate())
        reply: dict[str, Any] = {}
        with self.around_call(request, reply):
            try:
                output = spec.call(dict(request["args"]), ToolContext(**request["ctx"]))
            except Exception as exc:
                reply["error"] = f"{type(exc).__name__}: {exc}"
                reply["cassette_miss"] = self.is_cassette_miss(exc)
            except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit: the tool tried to stop
                reply["exit"] = f"{type(exc).__name__}({_exit_code(exc)})"
            else:
                if isinstance(output, ToolOutput) and isinstance(output.text, str):
                    reply["text"], reply["is_error"] = output.text, bool(output.is_error)
                else:
                    reply["error"] = f"returned {type(output).__name__}, expected ToolOutput(text: str)"
        reply["blocked"] = [list(attempt) for attempt in blocked_attempts[attempts:]]
        left = _left_running(threads)
        if left:
            reply["threads"] = left
        return reply

    def around_call(self, request: dict[str, Any], reply: dict[str, Any]) -> Any:
        raise NotImplementedError

    def is_cassette_miss(self, exc: BaseException) -> bool:
        return False


class _Recording(_Worker):
    """`replaylab record`: each call under a fresh vcrpy recording cassette (record mode all)."""

    def around_call(self, request: dict[str, Any], reply: dict[str, Any]) -> Any:
        from contextlib import contextmanager

        from replaylab.replay.cassettes.vcr_session import open_recording, patched, recorded_interactions

        @contextmanager
        def recording():
            cassette = open_recording(request["tool"])
            try:
                with patched(cassette):
                    yield
            finally:
                reply["interactions"] = recorded_interactions(cassette)

        return recording()


class _Replaying(_Worker):
    """A live read tool in replay: HTTP served from the session's cassette, at replaylab's play state."""

    def __init__(self, setup: dict[str, Any]):
        super().__init__(setup)
        from replaylab.replay.cassettes.playback import open_playback
        from replaylab.replay.cassettes.vcr_session import IndexedCassette, patched

        self.cassette = IndexedCassette.over(open_playback(setup["cassette"]))
        self._lifetime.enter_context(patched(self.cassette))  # for the life of the process, like the guard

    def around_call(self, request: dict[str, Any], reply: dict[str, Any]) -> Any:
        from contextlib import contextmanager

        cassette = self.cassette
        played = [int(i) for i in request.get("played", ())]
        cassette.restore((dict.fromkeys(played, 1), played))
        del cassette.misses[:]

        @contextmanager
        def serving():
            try:
                yield
            finally:
                reply["played"] = cassette.played[len(played) :]
                reply["misses"] = [
                    {"method": m.method, "uri": m.uri, "body": m.body, "headers": dict(m.headers)}
                    for m in cassette.misses
                ]

        return serving()

    def is_cassette_miss(self, exc: BaseException) -> bool:
        from replaylab.replay.cassettes.vcr_session import cassette_miss

        return cassette_miss(exc) is not None


def _exit_code(exc: BaseException) -> str:
    return repr(exc.code) if isinstance(exc, SystemExit) else ""


def _left_running(before: set[threading.Thread]) -> list[str]:
    """Names of the threads started since `before` still running after a short grace."""
    deadline = time.monotonic() + THREAD_GRACE_S
    new = [t for t in threading.enumerate() if t not in before]
    for thread in new:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t.name for t in new if t.is_alive()]


def main() -> int:
    requests, replies = _protocol_streams()
    setup = decode(requests.readline())
    sys.path[:] = [p for p in setup.get("sys_path", []) if isinstance(p, str)] + [
        p for p in sys.path if p not in setup.get("sys_path", [])
    ]
    try:
        worker: _Worker = (_Recording if setup.get("mode") == "record" else _Replaying)(setup)
    except BaseException as exc:  # a pack that cannot be imported here, a cassette that cannot be read
        replies.write(encode({"ready": False, "error": f"{type(exc).__name__}: {exc}", **_network_view()}))
        return 1
    replies.write(encode({"ready": True, **_network_view()}))
    for line in iter(requests.readline, b""):
        request = decode(line)
        if request.get("op") == "stop":
            break
        replies.write(encode(worker.call(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
