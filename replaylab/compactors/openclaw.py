"""OpenClaw 2026.9.6's own compaction as the compactor under test (`compactor: openclaw`): one
node worker per replaylab process serves every compaction of the run.

Loading OpenClaw's modules takes seconds (its bundle is one graph of ~7,000 chunks); a compaction
takes a fraction of one. So the pinned OpenClaw (`oracles/node/openclaw-2026.9.6/
openclaw_compact.mjs --serve`) is started once, on the first compaction, and answers one JSON
line per compaction: `{"params", "summaryBaseUrl"}` in, `{"result", "log"}` out. Each compaction
still works on its own working copy, in its own `SessionManager`, with entry ids seeded from its
own leaf: a warm worker gives the answer a fresh process gives (tests/oracles).

The worker is a compactor under test like any command: the minimal environment of
`compactors.process` (no keys; `HOME` and `TMPDIR` a scratch folder of its own), its own process
session (ending it ends everything it started), every answer bounded to `MAX_ANSWER_BYTES` and
its stderr to the last `STDERR_KEPT_BYTES`. A compaction still running at `timeout_s` ends the
worker; so does a broken answer, or a change of `REPLAYLAB_OPENCLAW_NODE`; the next compaction
starts a new one. It keeps no result from one compaction to the next, so it is no cache
(`replaylab.caches`): it ends with the process.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from replaylab.compactors.process import minimal_environment
from replaylab.oracles.openclaw import NODE_DIR, node_executable, oracle_unavailable

#: the variable that names the node to run OpenClaw with (`oracles.openclaw.node_executable`)
NODE_VARIABLE = "REPLAYLAB_OPENCLAW_NODE"

COMPACT_ENTRY = NODE_DIR / "openclaw_compact.mjs"
#: seconds OpenClaw's modules may take to load (seconds on a quiet machine, far more on a busy one)
LOAD_TIMEOUT_S = 300.0
#: bytes of one answer read at most: a compact result is small, a runaway process is not
MAX_ANSWER_BYTES = 64 << 20
#: bytes of the worker's stderr kept (the end: where an error is)
STDERR_KEPT_BYTES = 64 << 10
#: what a broken pipe leaves in the answer queue
_CLOSED = object()


@dataclass(frozen=True)
class WorkerAnswer:
    """One compaction's answer (the result JSON and the driver's log lines), or why there is none:
    `failure` is one of `compactors.external.FAILURE_KINDS` and `what` says it in words."""

    result: Any = None
    log: list[str] = field(default_factory=list)
    stderr: str = ""
    failure: str | None = None
    what: str = ""


class OpenClawWorker:
    """The node worker (started on the first `compact`); safe to share between threads."""

    def __init__(self, entry: Path = COMPACT_ENTRY, node: str | None = None):
        self.entry = entry
        self.node = node
        #: what the worker said when it started: the versions that answer, or its refusal
        self.header: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._answers: queue.Queue[Any] = queue.Queue()
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_reader: threading.Thread | None = None
        self._home: Path | None = None
        self._registered = False
        #: `REPLAYLAB_OPENCLAW_NODE` when the running worker was started
        self._named_node: str | None = None

    def compact(self, params: dict[str, Any], summary_base_url: str, timeout_s: float) -> WorkerAnswer:
        """OpenClaw's compaction of `params["sessionFile"]` (the contract's params JSON)."""
        with self._lock:
            if os.environ.get(NODE_VARIABLE) != self._named_node:
                self._stop()  # the node it was started with is no longer the one asked for
            if self._process is None or self._process.poll() is not None:
                started = self._start(max(timeout_s, LOAD_TIMEOUT_S))
                if started is not None:
                    return started
            process = self._process
            assert process is not None and process.stdin is not None
            line = json.dumps({"params": params, "summaryBaseUrl": summary_base_url}, ensure_ascii=True)
            try:
                process.stdin.write(line.encode("ascii") + b"\n")
                process.stdin.flush()
            except OSError:
                return self._ended("crashed", "exited before it took the compaction")
            answer = self._next(timeout_s)
            if answer is None:
                return self._ended("timed_out", f"was still running after {timeout_s:g} s")
            if answer is _CLOSED:
                return self._ended("crashed", f"exited ({self._status()}) during the compaction")
            if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
                return self._ended("invalid_json", f"answered no compaction result: {str(answer)[:200]!r}")
            log = [str(line) for line in answer.get("log") or []]
            return WorkerAnswer(answer["result"], log, self.stderr())

    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", errors="replace")

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ------------------------------------------------------------ the process

    def _start(self, timeout_s: float) -> WorkerAnswer | None:
        """Start the worker and read its header; a `WorkerAnswer` saying why when it cannot serve."""
        self._stop()
        self._named_node = os.environ.get(NODE_VARIABLE)
        node = self.node or node_executable()
        why = oracle_unavailable() if self.entry == COMPACT_ENTRY else None
        if node is None or why is not None:
            return WorkerAnswer(failure="not_found", what=f"cannot run: {why or 'no node >= 24.16 to run OpenClaw'}")
        self._home = Path(tempfile.mkdtemp(prefix="replaylab-openclaw-"))
        self._answers = queue.Queue()
        self._stderr.clear()
        self._stderr_size = 0
        try:
            self._process = subprocess.Popen(
                [node, str(self.entry), "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._home,
                env=minimal_environment(self._home, _log_level()),
                start_new_session=True,
            )
        except OSError as exc:
            return WorkerAnswer(failure="not_found", what=f"cannot be started: {exc.strerror or exc}")
        if not self._registered:
            atexit.register(self.close)
            self._registered = True
        assert self._process.stdout is not None and self._process.stderr is not None
        threading.Thread(target=self._read_answers, args=(self._process.stdout,), daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, args=(self._process.stderr,), daemon=True)
        self._stderr_reader.start()
        header = self._next(timeout_s)
        if header is None:
            return self._ended("timed_out", f"did not load OpenClaw within {timeout_s:g} s")
        if not isinstance(header, dict) or header is _CLOSED:
            return self._ended("crashed", f"exited ({self._status()}) while loading OpenClaw")
        self.header = header
        if not header.get("ready"):
            # the installed OpenClaw is not the build the driver binds to: its message names both
            return self._ended("refused", f"refused to run: {header.get('error')}")
        return None

    def _next(self, timeout_s: float) -> Any:
        """The next answer line, parsed (`_CLOSED` at the end of the stream; None after `timeout_s`)."""
        try:
            return self._answers.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def _read_answers(self, stream: IO[bytes]) -> None:
        answers = self._answers  # this process's own queue: a restart makes a new one
        while True:
            line = stream.readline(MAX_ANSWER_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_ANSWER_BYTES:
                answers.put(f"an answer over {MAX_ANSWER_BYTES} bytes")
                break
            try:
                answers.put(json.loads(line))
            except ValueError:
                answers.put(line[:200].decode("utf-8", errors="replace"))
        answers.put(_CLOSED)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read1(8192), b""):  # type: ignore[attr-defined]
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_KEPT_BYTES and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def _ended(self, failure: str, what: str) -> WorkerAnswer:
        process = self._process
        if process is not None and process.poll() is not None and self._stderr_reader is not None:
            self._stderr_reader.join(timeout=2)  # what it wrote before it ended
        stderr = self.stderr()
        self._stop()
        return WorkerAnswer(stderr=stderr, failure=failure, what=what)

    def _status(self) -> str:
        process = self._process
        try:
            code = process.wait(timeout=5) if process is not None else None
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return "still running, its output closed"
        return f"killed by signal {-code}" if code < 0 else f"status {code}"

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                try:
                    process.stdin.close()
                except OSError:
                    pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # the worker and everything it started
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        home, self._home = self._home, None
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)


def _log_level() -> dict[str, str]:
    """OpenClaw's own log level when the user asks for one (it stays silent otherwise)."""
    level = os.environ.get("REPLAYLAB_OPENCLAW_LOG_LEVEL")
    return {"REPLAYLAB_OPENCLAW_LOG_LEVEL": level} if level else {}


_SHARED = OpenClawWorker()


def shared_worker() -> OpenClawWorker:
    """The process's worker for the bundled `compactor: openclaw`."""
    return _SHARED
