"""The tool process: runs a tool pack's code for replaylab, one call at a time, away from it.

Started by `tool_process.ToolProcess` as `python -m replaylab.replay.tools.worker`, for every
case where a pack's code runs at all: `replaylab record` (mode `record`: live against the pack's
loopback service, every HTTP interaction captured by a vcrpy recording cassette per call), an
opted-in live read tool during replay (mode `replay`: inside a network namespace of its own, HTTP
served by vcrpy from the session's cassette), and the pack as data for the runner (mode
`describe`: its schemas and declared classes at start, then the `class_for(args)` answers,
inside a network namespace of its own; `pack_data`). In all of them the socket guard is active
for the whole life of the process, the pack's import included.

Why a process: a tool that calls `sys.exit` or `os._exit`, loops forever or leaves a thread
that fires later takes down or outlives whatever process runs it. Here that is this process;
replaylab sees the exit, the silence or the threads this process reports, names the tool and
goes on. `SystemExit` and the other exceptions that are not `Exception` are caught and reported
as an exit; threads the call started and left running are reported by name, and so are the
processes it left (in a PID namespace of its own, where this process is pid 1 and /proc shows
every process it started).

The import is watched the same way: a module that leaves a thread or a process running, registers
an exit hook or keeps an object with a `__del__` of its own — code set to run later, outside any
call — is refused (`ready: false`, with what it left). Such code could never act anyway (the
process is killed, never exited, and has no network), but a pack that does this is not one whose
answers replaylab takes.

Protocol (`worker_protocol`): the first line in is the set-up, answered by a `ready` line
(the network namespace this process is in and the interfaces it sees, so replaylab can check the
isolation it asked for); then one `call` line in, one reply out, until `stop` or end of input.
The descriptors the protocol uses are moved away from 0 and 1 first: the tool's reads of stdin
see nothing, its prints go to stderr.
"""

from __future__ import annotations

import atexit
import gc
import os
import socket
import sys
import sysconfig
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from replaylab.errors import ReplaylabError
from replaylab.replay.tools.worker_protocol import decode, encode

#: how long the threads a call started may take to finish after it returned
THREAD_GRACE_S = 0.2
#: readings of /proc at most while exited children keep turning up (a pack forking without end)
SCAN_PASSES = 16


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
    return {"netns": namespace, "interfaces": interfaces, "pid": os.getpid()}


class _Worker:
    """What every mode shares: the pack, the guard, running one call and reporting how it ended."""

    def __init__(self, setup: dict[str, Any]):
        from replaylab.replay.guard import socket_guard
        from replaylab.replay.tools.pack import load_tool_pack

        # for the life of the process, the pack's import first: nothing here may leave the
        # machine (kept referenced: a context manager dropped unexited is closed when collected)
        self._lifetime = ExitStack()
        self._lifetime.enter_context(socket_guard())
        threads = set(threading.enumerate())
        with _watched_exit_hooks() as hooks:
            self.pack = load_tool_pack(setup["pack"], source="tool process")
        left = [f"a thread ({name})" for name in _left_running(threads)]
        left += [f"a process ({name})" for name in _processes_left()]
        left += [f"an exit hook ({name})" for name in hooks]
        left += [f"an object with a __del__ of its own ({name})" for name in _finalized_objects()]
        if left:
            what = ", ".join(left[:5])
            raise PackLeftCode(f"the tool pack {setup['pack']!r} left code to run later at import: {what}")

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
        _left_behind(reply, threads)
        return reply

    def around_call(self, request: dict[str, Any], reply: dict[str, Any]) -> Any:
        raise NotImplementedError

    def is_cassette_miss(self, exc: BaseException) -> bool:
        return False


class _Recording(_Worker):
    """`replaylab record`: each call under a fresh vcrpy recording cassette (record mode all)."""

    def __init__(self, setup: dict[str, Any]):
        super().__init__(setup)
        import replaylab.replay.cassettes.vcr_session  # noqa: F401 (vcrpy now, at the start: a call's time limit is the tool's, not vcrpy's import)

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


class _Describing(_Worker):
    """The pack as data for the runner: its tools at start, then `class_for(args)` per request."""

    def description(self) -> dict[str, Any]:
        from replaylab.replay.tools.worker_protocol import encode

        tools = [
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
                "tool_class": spec.tool_class,
                "has_class_for": spec.class_for is not None,
            }
            for spec in self.pack.tools.values()
        ]
        for tool in tools:
            if not isinstance(tool["name"], str) or not isinstance(tool["tool_class"], str):
                raise PackLeftCode(f"tool {tool['name']!r} has no name or class as text")
            try:
                encode(tool)
            except (TypeError, ValueError) as exc:
                raise PackLeftCode(f"tool {tool['name']!r}: its schema is not JSON ({exc})") from None
        return {"tools": tools}

    def class_for(self, request: dict[str, Any]) -> dict[str, Any]:
        spec = self.pack.tools.get(request.get("tool"))  # type: ignore[arg-type]
        if spec is None or spec.class_for is None:
            return {"error": f"the tool pack {self.pack.name} has no class_for for tool {request.get('tool')!r}"}
        threads = set(threading.enumerate())
        reply: dict[str, Any] = {}
        try:
            value = spec.class_for(dict(request.get("args") or {}))
        except Exception as exc:
            reply["error"] = f"class_for raised {type(exc).__name__}: {exc}"
        except BaseException as exc:  # the pack's code tried to stop the process
            reply["exit"] = f"{type(exc).__name__}({_exit_code(exc)})"
        else:
            if isinstance(value, str) and value.strip():
                reply["class"] = value
            else:
                reply["error"] = f"class_for returned {value!r}; expected a class name such as 'read' or 'write'"
        _left_behind(reply, threads)
        return reply

    def around_call(self, request: dict[str, Any], reply: dict[str, Any]) -> Any:
        raise NotImplementedError  # describing runs no tool


class PackLeftCode(ReplaylabError, RuntimeError):
    """The pack's import left code to run later, or gave what is not data (see module docstring)."""


def _left_behind(reply: dict[str, Any], threads: set[threading.Thread]) -> None:
    """The threads and processes a call left running, on its reply."""
    left = _left_running(threads)
    if left:
        reply["threads"] = left
    processes = _processes_left()
    if processes:
        reply["processes"] = processes


def _processes_left() -> list[str]:
    """The processes running beside this one, when this one is the first of a PID namespace of
    its own (its /proc shows exactly what it started); else none can be told apart.

    A child that exited while /proc was read may have started one of its own after the listing
    was taken (a daemon's double fork): the reading is taken again until one sees no exited
    child, so whatever a vanished process left behind is listed too."""
    if os.getpid() != 1:
        return []
    for _ in range(SCAN_PASSES):
        found, reaped = _scan_processes()
        if not reaped:
            break
    return found


def _scan_processes() -> tuple[list[str], bool]:
    """One reading of /proc: the processes running, and whether an exited child was reaped."""
    found, reaped = [], False
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            command = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").strip()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
        if state == b"Z":
            reaped = True
            try:
                os.waitpid(int(name), os.WNOHANG)  # an exited child of this one: reaped, not running
            except ChildProcessError:
                pass
            continue
        found.append(f"pid {name}: {command.decode('utf-8', 'replace')[:80]}")
    return found, reaped


def _outside_code() -> tuple[str, ...]:
    """Where the Python installation's modules, installed packages and replaylab live: code from
    anywhere else is the pack's."""
    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.add(str(Path(__file__).resolve().parents[2]))
    return tuple(str(Path(path).resolve()) + os.sep for path in paths if path)


class _watched_exit_hooks:
    """While the pack imports: who registers an exit hook (`atexit.register`), by the file of the
    code that called it; the hooks registered by the pack's own code are kept (by name)."""

    def __enter__(self) -> list[str]:
        self.found: list[str] = []
        self.original = atexit.register
        outside = _outside_code()

        def register(function: Any, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if not str(Path(caller).resolve()).startswith(outside):
                self.found.append(f"{getattr(function, '__qualname__', repr(function))} from {Path(caller).name}")
            return self.original(function, *args, **kwargs)

        atexit.register = register  # type: ignore[assignment]
        return self.found

    def __exit__(self, *exc: Any) -> None:
        atexit.register = self.original


def _finalized_objects() -> list[str]:
    """Objects alive after the import whose class has a `__del__` defined outside the Python
    installation, installed packages and replaylab (the pack's own)."""
    outside = _outside_code()
    classes: dict[type, bool] = {}
    found = []
    for item in gc.get_objects():
        cls = type(item)
        if cls not in classes:
            finalizer = getattr(cls, "__del__", None)
            code = getattr(finalizer, "__code__", None)
            classes[cls] = code is not None and not str(Path(code.co_filename).resolve()).startswith(outside)
        if classes[cls]:
            found.append(cls.__qualname__)
    return sorted(set(found))


def _setup_error(exc: BaseException) -> dict[str, Any]:
    """Why the set-up failed, as said to replaylab: a diagnostic's message and code as they are
    (they name the pack), anything else by its type."""
    from replaylab.diagnostics import InputError

    if isinstance(exc, InputError) and exc.diagnostics:
        return {"error": exc.diagnostics[0].message, "code": exc.diagnostics[0].code}
    if isinstance(exc, PackLeftCode):
        return {"error": str(exc), "code": "toolpack-left-code"}
    return {"error": f"{type(exc).__name__}: {exc}"}


def _exit_code(exc: BaseException) -> str:
    return repr(exc.code) if isinstance(exc, SystemExit) else ""


def _left_running(before: set[threading.Thread]) -> list[str]:
    """Names of the threads started since `before` still running after a short grace. The grace
    waits for the threads started meanwhile too, and what is running at its end is the answer: a
    thread may hand its work to one it starts, and end."""
    deadline = time.monotonic() + THREAD_GRACE_S
    waited: set[threading.Thread] = set()
    while time.monotonic() < deadline:
        new = [t for t in threading.enumerate() if t not in before and t not in waited]
        if not new:
            break
        for thread in new:
            thread.join(max(0.0, deadline - time.monotonic()))
            waited.add(thread)
    return [t.name for t in threading.enumerate() if t not in before]


def main() -> int:
    requests, replies = _protocol_streams()
    setup = decode(requests.readline())
    sys.path[:] = [p for p in setup.get("sys_path", []) if isinstance(p, str)] + [
        p for p in sys.path if p not in setup.get("sys_path", [])
    ]
    modes: dict[Any, type[_Worker]] = {"record": _Recording, "describe": _Describing}
    try:
        worker = modes.get(setup.get("mode"), _Replaying)(setup)
        described = worker.description() if isinstance(worker, _Describing) else {}
    except BaseException as exc:  # a pack that cannot be imported here, a cassette that cannot be read
        replies.write(encode({"ready": False, **_setup_error(exc), **_network_view()}))
        return 1
    replies.write(encode({"ready": True, **described, **_network_view()}))
    for line in iter(requests.readline, b""):
        request = decode(line)
        if request.get("op") == "stop":
            break
        if request.get("op") == "class_for" and isinstance(worker, _Describing):
            replies.write(encode(worker.class_for(request)))
        else:
            replies.write(encode(worker.call(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
