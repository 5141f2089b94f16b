"""replaylab's side of the tool process (`tool_worker`): start it, ask it to run a call, and turn
every way a tool can misbehave into a `ToolFailure` that names the tool.

* exits (`sys.exit`, `os._exit`, a signal): the process ends or reports the exit;
* hangs: no answer within the call's time limit — the process group is killed;
* leaves threads running after it returned: reported by the process — which is then killed, so
  a thread set to fire later never does;
* answers something that is not a reply of the protocol.

After a failure the process is gone; the next call starts a new one. The process runs in a
session of its own (its own process group), so whatever it started is killed with it.

With `isolate_network`, the process is started inside a fresh network namespace
(`netns.namespace_commands`) and refuses to run anything unless its own report shows the
isolation took (`netns.isolated`). Where none can be made, every call fails with the reason:
opting in to live read tools means asking for isolation, and replaylab does not quietly run them
without it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from typing import Any

from replaylab.errors import ReplaylabError
from replaylab.replay.tools import netns
from replaylab.replay.tools.worker_protocol import MAX_LINE_BYTES, ProtocolError, decode, encode

#: a call of a tool that does not answer in this time is taken as hung
DEFAULT_CALL_TIMEOUT_S = 60.0
#: starting the process: an interpreter, replaylab, vcrpy and the tool pack to import
DEFAULT_START_TIMEOUT_S = 120.0
#: how much of the process's stderr a failure quotes
STDERR_TAIL_CHARS = 1500


class ToolFailure(ReplaylabError, RuntimeError):
    """A tool's code could not be run, or did not come back (see module docstring)."""

    def __init__(self, tool: str, kind: str, message: str):
        self.tool, self.kind, self.detail = tool, kind, message
        super().__init__(f"tool {tool!r} {message}")


class ToolProcess:
    """One tool process, started on the first call (see module docstring)."""

    def __init__(
        self,
        pack: str,
        *,
        mode: str,
        cassette: str | None = None,
        isolate_network: bool = False,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        sys_path: Sequence[str] | None = None,
    ):
        self.pack, self.mode, self.cassette = pack, mode, cassette
        self.isolate_network = isolate_network
        self.call_timeout_s, self.start_timeout_s = call_timeout_s, start_timeout_s
        self.sys_path = list(sys.path if sys_path is None else sys_path)
        self._proc: subprocess.Popen | None = None
        self._stderr: Any = None
        self._buffer = b""
        self._finalizer: weakref.finalize | None = None
        #: why no isolated process can be started (set once it was tried and failed)
        self.refused: str | None = None

    # -- calls

    def call(self, tool: str, args: dict[str, Any], ctx: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """Run one call; its reply (`text`/`is_error` or `error`, and what the mode adds). Raises
        `ToolFailure` for every way the tool can misbehave."""
        self._start(tool)
        assert self._proc is not None
        try:
            _send(self._proc, encode({"op": "call", "tool": tool, "args": args, "ctx": ctx, **extra}))
        except OSError:
            raise self._ended(tool) from None
        reply = self._reply(tool, time.monotonic() + self.call_timeout_s)
        if reply.get("exit"):
            self.close()
            raise ToolFailure(tool, "exit", f"tried to end its process ({reply['exit']}); the call never returned")
        if reply.get("threads"):
            self.close()
            names = ", ".join(str(name) for name in reply["threads"][:5])
            raise ToolFailure(
                tool,
                "threads",
                f"returned but left {len(reply['threads'])} thread(s) running ({names}); they were stopped "
                "with its process before they could act",
            )
        return reply

    def _reply(self, tool: str, deadline: float) -> dict[str, Any]:
        line = self._line(tool, deadline)
        try:
            return decode(line)
        except ProtocolError as exc:
            self.close()
            raise ToolFailure(tool, "protocol", f"answered with something that is not a reply ({exc})") from None

    def _line(self, tool: str, deadline: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                limit = self.call_timeout_s if self._ready_seen else self.start_timeout_s
                self.close()
                raise ToolFailure(
                    tool,
                    "hung",
                    f"did not answer within {limit:g} s; its process was killed (a hang or an endless loop?)",
                )
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._ended(tool)
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE_BYTES:
                self.close()
                raise ToolFailure(tool, "protocol", f"answered with a line over {MAX_LINE_BYTES} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ended(self, tool: str) -> ToolFailure:
        """The process is gone: how it ended, with the end of what it wrote to stderr."""
        proc = self._proc
        status = None
        if proc is not None:
            try:
                status = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
        tail = self._stderr_tail()
        self.close()
        how = (
            "was killed by signal " + signal.Signals(-status).name
            if isinstance(status, int) and status < 0
            else f"exit status {status}"
        )
        return ToolFailure(
            tool, "exit", f"ended its process ({how}) before answering" + (f"; its stderr ends: {tail}" if tail else "")
        )

    # -- the process

    @property
    def _ready_seen(self) -> bool:
        return self._proc is not None and getattr(self._proc, "_replaylab_ready", False)

    def _start(self, tool: str) -> None:
        if self._proc is not None:
            return
        if self.refused is not None:
            raise ToolFailure(tool, "isolation", self.refused)
        if not self.isolate_network:
            self._spawn(tool, [])
            return
        prefixes, why_none = netns.namespace_commands()
        reasons = [why_none] if why_none else []
        for prefix in prefixes:
            try:
                view = self._spawn(tool, prefix)
            except ToolFailure as failure:
                if failure.kind == "setup":
                    raise
                reasons.append(f"`unshare {' '.join(prefix[1:])}`: {failure.detail}")
                continue
            problem = netns.isolated(view)
            if problem is None:
                return
            self.close()
            reasons.append(problem)
        self.refused = (
            "could not be run: live read tools run only inside a network namespace of their own, and none "
            "could be made here (" + "; ".join(reasons) + ")"
        )
        raise ToolFailure(tool, "isolation", self.refused)

    def _spawn(self, tool: str, prefix: list[str]) -> dict[str, Any]:
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        self._proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "replaylab.replay.tools.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            bufsize=0,
            start_new_session=True,
            close_fds=True,
        )
        self._finalizer = weakref.finalize(self, _kill_group, self._proc)
        setup = {"pack": self.pack, "mode": self.mode, "cassette": self.cassette, "sys_path": self.sys_path}
        try:
            _send(self._proc, encode(setup))
        except OSError:
            raise self._ended(tool) from None
        ready = self._reply(tool, time.monotonic() + self.start_timeout_s)
        if not ready.get("ready"):
            self.close()
            raise ToolFailure(tool, "setup", f"could not be set up in its process: {ready.get('error')}")
        self._proc._replaylab_ready = True  # type: ignore[attr-defined]
        return ready

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL_CHARS))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """End the process and everything it started (its process group)."""
        proc, self._proc = self._proc, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if proc is not None:
            _kill_group(proc)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self._buffer = b""

    def __enter__(self) -> ToolProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _send(proc: subprocess.Popen, data: bytes) -> None:
    """All of `data` to the process (a raw pipe write may take only part of it)."""
    assert proc.stdin is not None
    view = memoryview(data)
    while view:
        written = proc.stdin.write(view)
        view = view[written or 0 :]


def _kill_group(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
