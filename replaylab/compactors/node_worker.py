"""A node worker per agent compaction program: one process serves every compaction of the run.

Loading an agent's modules takes far longer than one compaction (OpenClaw's bundle is one graph of
thousands of chunks; pi's modules take most of half a second), so the program
(`<program> --serve`) is started once, ahead of the run's first compaction (`start`, which does
not wait for the load) or on it, and answers one JSON line per
compaction: `{"params", "summaryBaseUrl", "cwd"?}` in, `{"result", "log"}` out, after a first line
naming the versions that answer (`{"ready": true, …}`, or `{"ready": false, "error": …}`). Each
compaction still works on its own working copy, in the agent's own session object, with entry ids
seeded from its own leaf: a warm worker gives the answer a fresh process gives (tests/oracles).

The worker is a compactor under test like any command, contained, bounded and ended as every
child of replaylab is (`replaylab.children`): a PID namespace of its own where the machine allows
(whatever it starts ends with it; replaylab's environment is not readable through /proc), the
minimal environment (no keys; `HOME` and `TMPDIR` a scratch folder of its own), registered so that
SIGTERM, SIGHUP and the interpreter's exit end it. Its output is read as it comes: an answer over
`MAX_ANSWER_BYTES`, or more than `MAX_STDERR_BYTES` of stderr, ends it (`too_much_output`); the
last `STDERR_KEPT_BYTES` of stderr are kept. Every wait on it is bounded: a request it does not
read, an answer it does not give by `timeout_s`, a broken answer, or a change of the variable
naming its node ends the worker; the next compaction starts a new one. No network namespace: it
reaches replaylab's summary endpoint on 127.0.0.1 (its driver refuses any other address). It keeps
no result from one compaction to the next, so it is no cache (`replaylab.caches`): it ends with
the process.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from replaylab import children
from replaylab.compactors.process import MAX_STDERR_BYTES, minimal_environment

#: seconds an agent's modules may take to load (seconds on a quiet machine, far more on a busy one)
LOAD_TIMEOUT_S = 300.0
#: bytes of one answer read at most: a compact result is small, a runaway process is not
MAX_ANSWER_BYTES = 64 << 20
#: bytes of the worker's stderr kept (the end: where an error is)
STDERR_KEPT_BYTES = 64 << 10
#: seconds to wait for an ended worker's exit status and the last of its stderr
ENDED_WAIT_S = 5.0
#: what a broken pipe leaves in the answer queue
_CLOSED = object()


@dataclass(frozen=True)
class _Overflow:
    """What a reader leaves in the answer queue when its stream went over its cap."""

    stream: str
    cap: int


@dataclass(frozen=True)
class WorkerAnswer:
    """One compaction's answer (the result JSON and the driver's log lines), or why there is none:
    `failure` is one of `compactors.external.FAILURE_KINDS` and `what` says it in words."""

    result: Any = None
    log: list[str] = field(default_factory=list)
    stderr: str = ""
    failure: str | None = None
    what: str = ""


@dataclass(frozen=True)
class WorkerProgram:
    """What a worker runs: the agent's compaction program and how to find the node to run it."""

    #: the agent as messages name it ("OpenClaw", "pi 0.73.1")
    name: str
    #: the program (`<program> --serve`: the protocol of the module docstring)
    entry: Path
    #: the node to run it with, None when there is none new enough
    node: Callable[[], str | None]
    #: None when the installed agent can run; else why not, with what to do
    unavailable: Callable[[], str | None]
    #: what to say when there is no node (and the agent is otherwise installed)
    no_node: str
    #: the variable naming the node: a change of it ends the worker (None: none)
    node_variable: str | None = None
    #: variables of the worker's environment beyond the minimal one
    environment: Callable[[], dict[str, str]] = dict


class NodeWorker:
    """The node worker of one program (started by `start` or the first `compact`); safe to share
    between threads. `entry` / `node`: another program / node than the program's own (tests)."""

    def __init__(self, program: WorkerProgram, entry: Path | None = None, node: str | None = None):
        self.program = program
        self.entry = entry or program.entry
        self.node = node
        #: what the worker said when it started: the versions that answer, or its refusal
        self.header: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._child: children.Child | None = None
        self._answers: queue.Queue[Any] = queue.Queue()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_reader: threading.Thread | None = None
        self._home: Path | None = None
        self._registered = False
        #: the program's node variable when the running worker was started
        self._named_node: str | None = None
        #: whether the running worker's header was read (`start` leaves it to the first compaction)
        self._loaded = False

    def compact(
        self, params: dict[str, Any], summary_base_url: str, timeout_s: float, cwd: str | None = None
    ) -> WorkerAnswer:
        """The agent's compaction of `params["sessionFile"]` (the contract's params JSON); `cwd`:
        the working directory the agent is told it runs in (None: the worker's own)."""
        with self._lock:
            if not self._running():
                launched = self._launch()
                if launched is not None:
                    return launched
            if not self._loaded:
                loaded = self._load(max(timeout_s, LOAD_TIMEOUT_S))
                if loaded is not None:
                    return loaded
            request = {"params": params, "summaryBaseUrl": summary_base_url, **({"cwd": cwd} if cwd else {})}
            line = json.dumps(request, ensure_ascii=True)
            deadline = time.monotonic() + timeout_s
            if not self._send(line.encode("ascii") + b"\n", deadline):
                if children.exited(self._child.popen):  # type: ignore[union-attr]
                    return self._ended("crashed", "exited ({status}) before it took the compaction")
                return self._ended("timed_out", f"did not read the compaction within {timeout_s:g} s")
            answer = self._next(max(0.0, deadline - time.monotonic()))
            if answer is None:
                return self._ended("timed_out", f"was still running after {timeout_s:g} s")
            return self._answered(answer)

    def _answered(self, answer: Any, during: str = "during the compaction") -> WorkerAnswer:
        """The answer's result, or the worker ended saying why there is none."""
        if answer is _CLOSED:
            return self._ended("crashed", f"exited ({{status}}) {during}")
        if isinstance(answer, _Overflow):
            return self._ended(
                "too_much_output", f"wrote more than {answer.cap >> 20} MiB to {answer.stream}; it was ended there"
            )
        if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
            return self._ended("invalid_json", f"answered no compaction result: {str(answer)[:200]!r}")
        log = [str(line) for line in answer.get("log") or []]
        return WorkerAnswer(answer["result"], log, self.stderr())

    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", errors="replace")

    def start(self) -> None:
        """Starts the worker now when none runs, without waiting for it to load the agent: the
        load (seconds for OpenClaw) then overlaps what the caller does before its first
        compaction, which reads the worker's header. A worker that cannot start is left for that
        compaction to report."""
        with self._lock:
            if not self._running():
                self._launch()

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ------------------------------------------------------------ the process

    def _running(self) -> bool:
        """Whether a worker of this process runs with the node asked for (else none is left)."""
        if self._child is not None and self._child.inherited():
            self._child, self._home = None, None  # a fork's copy: the worker is the parent's
        if self._node_variable() != self._named_node:
            self._stop()  # the node it was started with is no longer the one asked for
        return self._child is not None and not children.exited(self._child.popen)

    def _launch(self) -> WorkerAnswer | None:
        """Start the worker (its header is read by `_load`); a `WorkerAnswer` saying why when it
        cannot be started."""
        self._stop()
        self._loaded = False
        program = self.program
        self._named_node = self._node_variable()
        # the installed agent is checked only for its own program (a test's stand-in needs none)
        why = program.unavailable() if self.entry == program.entry else None
        node = self.node or program.node()
        if node is None or why is not None:
            return WorkerAnswer(failure="not_found", what=f"cannot run: {why or program.no_node}")
        self._home = Path(tempfile.mkdtemp(prefix="replaylab-worker-"))
        answers: queue.Queue[Any] = queue.Queue()
        self._answers = answers
        self._stderr.clear()
        self._stderr_size = 0
        try:
            self._child = children.start(
                [str(node), str(self.entry), "--serve"],
                env=minimal_environment(self._home, program.environment()),
                cwd=self._home,
            )
        except OSError as exc:
            self._stop()
            return WorkerAnswer(failure="not_found", what=f"cannot be started: {exc.strerror or exc}")
        if not self._registered:
            atexit.register(self.close)
            self._registered = True
        popen = self._child.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        os.set_blocking(popen.stdin.fileno(), False)
        threading.Thread(target=_read_answers, args=(popen.stdout, answers), daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(popen.stderr, answers), daemon=True)
        self._stderr_reader.start()
        return None

    def _load(self, timeout_s: float) -> WorkerAnswer | None:
        """The started worker's header; a `WorkerAnswer` saying why when it cannot serve."""
        program = self.program
        header = self._next(timeout_s)
        if header is None:
            return self._ended("timed_out", f"did not load {program.name} within {timeout_s:g} s")
        if not isinstance(header, dict):
            return self._answered(header, f"while loading {program.name}")
        self.header = header
        if not header.get("ready"):
            # the installed agent is not the build the program binds to: its message names both
            return self._ended("refused", f"refused to run: {header.get('error')}")
        self._loaded = True
        return None

    def _node_variable(self) -> str | None:
        variable = self.program.node_variable
        return os.environ.get(variable) if variable else None

    def _send(self, data: bytes, deadline: float) -> bool:
        """All of `data` to the worker by `deadline`; False when it did not take it (ended, or not reading)."""
        assert self._child is not None and self._child.popen.stdin is not None
        return children.write_by(self._child.popen.stdin.fileno(), data, deadline) == "written"

    def _next(self, timeout_s: float) -> Any:
        """The next answer line, parsed (`_CLOSED` at the end of the stream, an `_Overflow` over a
        cap; None after `timeout_s`)."""
        try:
            return self._answers.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def _read_stderr(self, stream: IO[bytes], answers: queue.Queue[Any]) -> None:
        total = 0
        for chunk in _chunks(stream):
            total += len(chunk)
            if total > MAX_STDERR_BYTES:
                answers.put(_Overflow("stderr", MAX_STDERR_BYTES))
                return
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEPT_BYTES and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def _ended(self, failure: str, what: str) -> WorkerAnswer:
        """End the worker and say why: `what` with `{status}` filled in by how it ended (a worker
        that crashed is given a moment to exit by itself and finish its stderr)."""
        status = self._stop(ENDED_WAIT_S if failure == "crashed" else 0.0)
        return WorkerAnswer(stderr=self.stderr(), failure=failure, what=what.replace("{status}", status))

    def _stop(self, wait_s: float = 0.0) -> str:
        """End the worker and everything it started, after up to `wait_s` for it to exit by itself
        (every wait bounded); how it ended, in words."""
        child, self._child = self._child, None
        status = "never started"
        if child is not None and child.inherited():
            self._home = None  # a fork's copy: the worker and its scratch folder are the parent's
            return "left to the process that started it"
        if child is not None:
            deadline = time.monotonic() + wait_s
            while not children.exited(child.popen) and time.monotonic() < deadline:
                time.sleep(0.02)
            gone_by_itself = children.exited(child.popen)
            if gone_by_itself and self._stderr_reader is not None:
                self._stderr_reader.join(timeout=max(0.0, deadline - time.monotonic()))  # what it wrote last
            code = child.end()
            if not gone_by_itself or code is None:
                status = "still running, its output closed"
            else:
                status = f"killed by signal {-code}" if code < 0 else f"status {code}"
        home, self._home = self._home, None
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)
        return status


def _chunks(stream: IO[bytes]) -> Any:
    """What `stream` holds, as it comes, until its end (or until it is closed under the reader)."""
    while True:
        try:
            chunk = stream.read(1 << 16)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        yield chunk


def _read_answers(stream: IO[bytes], answers: queue.Queue[Any]) -> None:
    """Every answer line into `answers` (its own queue: a restarted worker has a new one), parsed;
    a line over `MAX_ANSWER_BYTES` ends the reading."""
    pending = bytearray()
    for chunk in _chunks(stream):
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[:end])
            del pending[: end + 1]
            try:
                answers.put(json.loads(line))
            except ValueError:
                answers.put(line[:200].decode("utf-8", errors="replace"))
        if len(pending) > MAX_ANSWER_BYTES:
            answers.put(_Overflow("stdout", MAX_ANSWER_BYTES))
            return
    answers.put(_CLOSED)
