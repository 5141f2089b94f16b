"""The pi oracle: what the real pi makes of a transcript, asked of pi itself.

replaylab's verdicts are about the context an agent sees, and a pi / OpenClaw agent rebuilds that
context with pi's own code. So the window replaylab tests is checked against pi: the pinned
`@mariozechner/pi-coding-agent` (``node/package-lock.json``) runs under node, and
``node/pi_oracle.mjs`` answers, per transcript, with pi's rebuilt context (`buildSessionContext`),
its per-message token estimates (`estimateTokens`) and the cut of a compaction
(`prepareCompaction`). pi opens a scratch copy (it rewrites a file it migrates), never the file.

``node/pi_compact.mjs`` is pi's own compaction as a compactor under test (suite key `compactor:
pi`): it compacts the working copy it is given with pi's `prepareCompaction`, `compact` and
`appendCompaction`, its sockets held to loopback (``node/loopback_only.mjs``, shared by the bundled compactors).

Installing it: ``npm ci --prefix <this folder>/node`` (node >= 20.6 and the npm registry);
`replaylab oracle` prints the command and whether the oracle is ready. Without it everything else
works; checks that need it say so (`oracle_unavailable()` gives the reason).
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.errors import ReplaylabError

NODE_DIR = Path(__file__).resolve().parent / "node" / "pi-0.73.1"
ENTRY = NODE_DIR / "pi_oracle.mjs"
#: pi's own compaction as a compactor under test (the seed contract on stdin / stdout)
COMPACT_ENTRY = NODE_DIR / "pi_compact.mjs"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
#: seconds pi may take for one transcript (the largest real sessions take well under a second)
REQUEST_TIMEOUT_S = 120.0


def pinned_version() -> str:
    """The pi version the oracle pins (its package.json; the lockfile holds the exact tree)."""
    manifest = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"][PI_PACKAGE])


def install_command() -> str:
    return f"npm ci --prefix {NODE_DIR}"


def node_executable() -> str | None:
    return os.environ.get("REPLAYLAB_NODE") or shutil.which("node")


def oracle_unavailable() -> str | None:
    """None when the oracle can run; else why not, with what to do."""
    node = node_executable()
    if node is None:
        return "node is not on PATH (set REPLAYLAB_NODE to a node >= 20.6)"
    if not (os.path.isfile(node) and os.access(node, os.X_OK)):
        return f"REPLAYLAB_NODE={node} is not an executable file"
    installed = NODE_DIR / "node_modules" / PI_PACKAGE / "package.json"
    if not installed.is_file():
        return f"pi is not installed for the oracle: run `{install_command()}`"
    version = json.loads(installed.read_text(encoding="utf-8")).get("version")
    if version != pinned_version():
        return f"the oracle's pi is {version}, not the pinned {pinned_version()}: run `{install_command()}`"
    return None


class OracleError(ReplaylabError, RuntimeError):
    """pi could not answer (not installed, crashed, timed out, or threw on the transcript)."""


@dataclass(frozen=True)
class PiMessage:
    """One message of pi's context: the entry it came from, pi's estimate, the message as pi holds it."""

    entry_id: str | None
    role: str
    tokens: int | None  # None when pi's estimateTokens throws on it
    tokens_error: str | None
    message: dict[str, Any]


@dataclass(frozen=True)
class PiCut:
    """`prepareCompaction` of the leaf: where pi cuts and what it summarizes."""

    first_kept_entry_id: str
    is_split_turn: bool
    tokens_before: int
    summarize: tuple[str | None, ...]
    turn_prefix: tuple[str | None, ...]
    previous_summary: bool


@dataclass(frozen=True)
class PiView:
    """What pi made of one transcript."""

    pi_version: str
    file_version: int | None  # the header's version before pi migrated it
    migrated: bool  # pi rewrote (its scratch copy of) the file
    leaf_id: str | None
    entry_ids: tuple[str, ...]  # every entry pi kept, file order (a dropped line is absent)
    context: tuple[PiMessage, ...]
    cut: PiCut | None  # only when asked with keep_recent_tokens; None: pi would not compact

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> PiView:
        context = tuple(
            PiMessage(
                entry_id=m.get("entryId"),
                role=str(m.get("role")),
                tokens=m["tokens"] if isinstance(m.get("tokens"), int) else None,
                tokens_error=m["tokens"].get("error") if isinstance(m.get("tokens"), dict) else None,
                message=m.get("message") or {},
            )
            for m in answer.get("context", [])
        )
        prepared = answer.get("prepare")
        cut = None
        if prepared:
            cut = PiCut(
                first_kept_entry_id=prepared["firstKeptEntryId"],
                is_split_turn=bool(prepared["isSplitTurn"]),
                tokens_before=int(prepared["tokensBefore"]),
                summarize=tuple(prepared.get("summarize") or ()),
                turn_prefix=tuple(prepared.get("turnPrefix") or ()),
                previous_summary=bool(prepared.get("previousSummary")),
            )
        return cls(
            pi_version=str(answer.get("pi")),
            file_version=answer.get("version"),
            migrated=bool(answer.get("migrated")),
            leaf_id=answer.get("leafId"),
            entry_ids=tuple(e["id"] for e in answer.get("entries", [])),
            context=context,
            cut=cut,
        )


class PiOracle:
    """One node process answering many transcripts, in order (`view`). Use as a context manager,
    or call `close()`; it is safe to share between threads (requests are serialized)."""

    def __init__(self) -> None:
        reason = oracle_unavailable()
        if reason is not None:
            raise OracleError(reason)
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> PiOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin:
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            node = node_executable()
            assert node is not None
            self._process = subprocess.Popen(
                [node, str(ENTRY)],
                cwd=NODE_DIR,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        return self._process

    def view(
        self, file: Path | str, *, keep_recent_tokens: int | None = None, reserve_tokens: int | None = None
    ) -> PiView:
        """pi's context (and, with `keep_recent_tokens`, its compaction cut) for `file`."""
        request: dict[str, Any] = {"file": str(Path(file).resolve())}
        if keep_recent_tokens is not None:
            request["keepRecentTokens"] = keep_recent_tokens
            if reserve_tokens is not None:
                request["reserveTokens"] = reserve_tokens
        answer = self._ask(request)
        if not answer.get("ok"):
            raise OracleError(f"pi failed on {file}: {str(answer.get('error'))[:2000]}")
        return PiView.from_answer(answer)

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps(request).encode() + b"\n")
                process.stdin.flush()
            except BrokenPipeError:
                raise OracleError(f"the pi oracle exited: {self._stderr_tail()}") from None
            line = _read_line(process.stdout, REQUEST_TIMEOUT_S)
            if line is None:
                process.kill()
                self._process = None
                raise OracleError(f"the pi oracle did not answer within {REQUEST_TIMEOUT_S:.0f} s")
            if not line:
                raise OracleError(f"the pi oracle exited: {self._stderr_tail()}")
            return json.loads(line)

    def _stderr_tail(self) -> str:
        process, self._process = self._process, None
        if process is None or process.stderr is None:
            return "no output"
        process.wait(timeout=5)
        return process.stderr.read().decode("utf-8", "replace")[-2000:] or f"exit status {process.returncode}"


def _read_line(stream: Any, timeout: float) -> bytes | None:
    """One line from `stream`, or None after `timeout` seconds without one (b"" at its end)."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return None
    return stream.readline()
