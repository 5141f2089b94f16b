"""replaylab's side of the tool process (`tool_worker`): start it, ask it to run a call, and turn
every way a tool can misbehave into a `ToolFailure` that names the tool.

* exits (`sys.exit`, `os._exit`, a signal): the process ends or reports the exit;
* hangs: no answer within the call's time limit — the process is killed;
* leaves threads or processes running after it returned: reported by the process — which is then
  killed, so a thread or daemon set to fire later never does;
* answers something that is not a reply of the protocol, or writes more than replaylab reads.

After a failure the process is gone; the next call starts a new one. The process is contained as
every child of replaylab is (`replaylab.children`): a PID namespace of its own where the machine
allows, so whatever it started ends with it, else a session of its own; a minimal environment
(nothing of the run's: no key, no token; `pass_env` names what a recording's tools may read),
HOME and TMPDIR a scratch folder of its own; its stderr read as it comes, its tail kept.

With `isolate_network`, the process is started inside a fresh network namespace too and refuses
to run anything unless its own report shows the isolation took (`netns.isolated`). Where none can
be made, every call fails with the reason: opting in to live read tools means asking for
isolation, and replaylab does not quietly run them without it.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from replaylab import children
from replaylab.errors import ReplaylabError
from replaylab.replay.tools import netns
from replaylab.replay.tools.worker_protocol import MAX_LINE_BYTES, ProtocolError, decode, encode

#: a call of a tool that does not answer in this time is taken as hung
DEFAULT_CALL_TIMEOUT_S = 60.0
#: starting the process: an interpreter, replaylab, vcrpy and the tool pack to import
DEFAULT_START_TIMEOUT_S = 120.0
#: how much of the process's stderr a failure quotes
STDERR_TAIL_CHARS = 1500
#: how much of its stderr is kept (the end), and how much it may write in all before it is ended
STDERR_KEPT_BYTES = 64 << 10
MAX_STDERR_BYTES = 16 << 20


class ToolFailure(ReplaylabError, RuntimeError):
    """A tool's code could not be run, or did not come back (see module docstring)."""

    def __init__(self, tool: str, kind: str, message: str, *, said: str | None = None, code: str | None = None):
        self.tool, self.kind, self.detail = tool, kind, message
        #: a set-up failure: what the process said (it names the pack) and its diagnostic's code
        self.said, self.code = said, code
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
        pass_env: Mapping[str, str] | None = None,
    ):
        self.pack, self.mode, self.cassette = pack, mode, cassette
        self.isolate_network = isolate_network
        self.call_timeout_s, self.start_timeout_s = call_timeout_s, start_timeout_s
        # absolute: the process runs in a scratch folder of its own, where "" would be that folder
        self.sys_path = [os.path.abspath(entry or os.curdir) for entry in (sys.path if sys_path is None else sys_path)]
        self.pass_env = dict(pass_env or {})
        self._child: children.Child | None = None
        self._home: str | None = None
        #: ends the process and removes its scratch folder: on `close`, or when the interpreter exits
        self._cleanup: weakref.finalize | None = None
        self._buffer = b""
        self._stderr = bytearray()
        self._stderr_total = 0
        self._ready_seen = False
        #: the `ready` reply of the running process (what the process reported at its start)
        self.ready: dict[str, Any] = {}
        #: why no isolated process can be started (set once it was tried and failed)
        self.refused: str | None = None

    # -- calls

    def start(self, tool: str) -> dict[str, Any]:
        """Start the process now (if it is not running); its `ready` reply. `tool` names what a
        failure is about."""
        self._start(tool)
        return self.ready

    def call(self, tool: str, args: dict[str, Any], ctx: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """Run one call; its reply (`text`/`is_error` or `error`, and what the mode adds). Raises
        `ToolFailure` for every way the tool can misbehave."""
        return self.request(tool, {"op": "call", "tool": tool, "args": args, "ctx": ctx, **extra})

    def request(self, tool: str, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send one request and read its reply; `tool` names what a failure is about."""
        self._start(tool)
        assert self._child is not None
        deadline = time.monotonic() + (self.call_timeout_s if timeout_s is None else timeout_s)
        self._send(tool, encode(message), deadline)
        reply = self._reply(tool, deadline)
        if reply.get("exit"):
            self.close()
            raise ToolFailure(tool, "exit", f"tried to end its process ({reply['exit']}); the call never returned")
        for kind, what in (("threads", "thread(s)"), ("processes", "process(es)")):
            left = reply.get(kind)
            if left:
                self.close()
                names = ", ".join(str(name) for name in left[:5])
                raise ToolFailure(
                    tool,
                    kind,
                    f"returned but left {len(left)} {what} running ({names}); they were stopped with its "
                    "process before they could act",
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
        assert self._child is not None
        popen = self._child.popen
        assert popen.stdout is not None and popen.stderr is not None
        out, err = popen.stdout.fileno(), popen.stderr.fileno()
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
            ready, _, _ = select.select([out, err], [], [], min(left, 1.0))
            if err in ready:
                self._read_stderr(tool)
            if out not in ready:
                continue
            chunk = os.read(out, 1 << 16)
            if not chunk:
                raise self._ended(tool)
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE_BYTES:
                self.close()
                raise ToolFailure(tool, "protocol", f"answered with a line over {MAX_LINE_BYTES} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _send(self, tool: str, data: bytes, deadline: float) -> None:
        """All of `data` to the process by `deadline`, reading its stderr meanwhile (a process that
        neither reads nor lets replaylab write is as hung as one that does not answer)."""
        assert self._child is not None
        popen = self._child.popen
        assert popen.stdin is not None and popen.stderr is not None
        err = popen.stderr.fileno()

        def read_stderr() -> None:
            if select.select([err], [], [], 0)[0]:
                self._read_stderr(tool)

        said = children.write_by(popen.stdin.fileno(), data, deadline, read_stderr)
        if said == "timed_out":
            self.close()
            raise ToolFailure(tool, "hung", "did not read its request in time; its process was killed")
        if said == "closed":
            raise self._ended(tool)

    def _read_stderr(self, tool: str) -> bool:
        """Read what stderr holds now (its end kept); False at its end. Over the cap: ended."""
        assert self._child is not None and self._child.popen.stderr is not None
        chunk = os.read(self._child.popen.stderr.fileno(), 1 << 16)
        if not chunk:
            return False
        self._stderr_total += len(chunk)
        self._stderr += chunk
        del self._stderr[:-STDERR_KEPT_BYTES]
        if self._stderr_total > MAX_STDERR_BYTES:
            self.close()
            raise ToolFailure(
                tool, "output", f"wrote more than {MAX_STDERR_BYTES >> 20} MiB to stderr; its process was ended"
            )
        return True

    def _ended(self, tool: str) -> ToolFailure:
        """The process is gone: how it ended, with the end of what it wrote to stderr."""
        child = self._child
        status = None
        if child is not None:
            self._drain_stderr(tool)
            status = child.end()
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

    def _drain_stderr(self, tool: str) -> None:
        """What stderr still holds, for a bounded moment (something the tool started may hold it open)."""
        assert self._child is not None and self._child.popen.stderr is not None
        fd = self._child.popen.stderr.fileno()
        deadline = time.monotonic() + 0.5
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready or not self._read_stderr(tool):
                return

    # -- the process

    def _start(self, tool: str) -> None:
        if self._child is not None and self._child.inherited():
            self._forget()  # a fork's copy: the process is the parent's; this one starts its own
        if self._child is not None:
            return
        if self.refused is not None:
            raise ToolFailure(tool, "isolation", self.refused)
        contained = children.containment(self.isolate_network)
        if not self.isolate_network:
            self._spawn(tool, contained)
            return
        if not contained.network:
            self.refused = (
                "could not be run: live read tools run only inside a network namespace of their own, and none "
                f"could be made here ({contained.why})"
            )
            raise ToolFailure(tool, "isolation", self.refused)
        view = self._spawn(tool, contained)
        problem = netns.isolated(view)
        if problem is None:
            return
        self.close()
        self.refused = f"could not be run: it was to run in a network namespace of its own, but {problem}"
        raise ToolFailure(tool, "isolation", self.refused)

    def _spawn(self, tool: str, contained: children.Containment) -> dict[str, Any]:
        self._buffer, self._stderr, self._stderr_total = b"", bytearray(), 0
        self._home = tempfile.mkdtemp(prefix="replaylab-tool-")
        env = children.minimal_environment(self._home, {**self.pass_env, "PYTHONPATH": _REPLAYLAB_ROOT})
        try:
            self._child = children.start(
                [sys.executable, "-m", "replaylab.replay.tools.worker"], env=env, cwd=self._home, contained=contained
            )
        finally:
            self._cleanup = weakref.finalize(self, _cleanup, self._child, self._home)
        assert self._child.popen.stdin is not None
        os.set_blocking(self._child.popen.stdin.fileno(), False)
        setup = {"pack": self.pack, "mode": self.mode, "cassette": self.cassette, "sys_path": self.sys_path}
        deadline = time.monotonic() + self.start_timeout_s
        self._send(tool, encode(setup), deadline)
        ready = self._reply(tool, deadline)
        if not ready.get("ready"):
            self.close()
            said = str(ready.get("error"))
            code = ready.get("code") if isinstance(ready.get("code"), str) else None
            raise ToolFailure(tool, "setup", f"could not be set up in its process: {said}", said=said, code=code)
        self._ready_seen = True
        self.ready = ready
        return ready

    def _stderr_tail(self) -> str:
        return bytes(self._stderr[-4 * STDERR_TAIL_CHARS :]).decode("utf-8", "replace").strip()[-STDERR_TAIL_CHARS:]

    def stderr_tail(self) -> str:
        """The end of what the process wrote to stderr so far (its end kept)."""
        return self._stderr_tail()

    def _forget(self) -> None:
        """Let go of a process this one did not start (nothing of it ended or removed)."""
        if self._cleanup is not None:
            self._cleanup.detach()
            self._cleanup = None
        self._child, self._home, self._buffer, self._ready_seen, self.ready = None, None, b"", False, {}

    def close(self) -> None:
        """End the process and everything it started."""
        self._child, self._home = None, None
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None
        self._buffer = b""
        self._ready_seen = False
        self.ready = {}

    def __enter__(self) -> ToolProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _cleanup(child: children.Child | None, home: str) -> None:
    if child is not None:
        if child.inherited():
            return  # its owner's to end, and its scratch folder its owner's
        child.end()
    shutil.rmtree(home, ignore_errors=True)


#: the folder replaylab is imported from: the tool process imports the same replaylab
_REPLAYLAB_ROOT = str(Path(__file__).resolve().parents[3])
