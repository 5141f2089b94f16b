"""The processes replaylab starts for somebody else's code — a compactor under test (a command, or
the OpenClaw worker that serves a run's compactions), a tool pack's module and its read tools —
contained, bounded, ended with the item (the worker: with the run), never outliving the run.

* **Contained.** Where the machine allows, the child is the first process of a PID namespace of
  its own with `/proc` mounted for it (`unshare --pid --fork --kill-child --mount-proc`, plus
  `--map-root-user` for a user other than root; tool processes add `--net`). When it ends, the
  kernel ends every process it left behind, a double-forked daemon included; `unshare` dying ends
  it (`--kill-child`), and `unshare` dies with the thread that started it (`setpriv --pdeathsig
  KILL`, from the main thread only: a worker thread may end before the child should). Its
  `/proc` holds its own processes only, so it cannot read replaylab's environment
  (`/proc/$PPID/environ`) or any other process's.
* **The fallback** (not Linux, no `unshare`, a kernel or container that forbids namespaces): a
  session of its own; ending it kills its process group and every descendant `/proc` shows at that
  moment. A daemon that has already left both (double fork and `setsid`) escapes, and
  `/proc/$PPID/environ` stays readable to a child of the same user; `containment().why` says why
  no namespace could be made.
* **A minimal environment**: PATH and the locale; HOME and TMPDIR the item's scratch folder; what
  replaylab itself passes. No API key, token or other variable of the run.
* **Bounded output**: stdout and stderr are read as they come, each up to a cap; a child over a cap
  is killed. Every wait after a kill is bounded: a pipe some escaped process still holds is
  closed, not read to its end.
* **Nothing left behind**: every live child is registered here; SIGTERM and SIGHUP (a CI cancel)
  and the interpreter's exit end them all before replaylab goes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: environment variables a child may see: what a program needs to start and read text
PASSED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
#: how long ending a child may wait for it (and for its namespace to go) after SIGKILL
END_WAIT_S = 5.0
#: how long the probe of what the machine allows may take
PROBE_TIMEOUT_S = 10.0
#: how long output is still read after the child itself exited (what it started may hold its pipes)
EXIT_GRACE_S = 1.0


def minimal_environment(home: Path | str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH and the locale from this process; HOME and TMPDIR `home`; `given`: what replaylab
    itself passes the child (a bundled compactor's summary endpoint, a variable the user named)."""
    env = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = env["TMPDIR"] = str(home)
    env.update(given or {})
    return env


# ---------------------------------------------------------------- containment


@dataclass(frozen=True)
class Containment:
    """How children are started here: the command prefix, what it gives, and why not more."""

    prefix: tuple[str, ...]
    #: "pid-namespace" (every descendant ends with the child, /proc is its own) or "process-group"
    kind: str
    network: bool  # the prefix also gives a network namespace of its own
    why: str | None = None  # why no PID namespace could be made (the fallback only)

    @property
    def namespaced(self) -> bool:
        return self.kind == "pid-namespace"


_PROBED: dict[tuple[bool, str | None], Containment] = {}
_PROBE_LOCK = threading.Lock()


def containment(network: bool = False) -> Containment:
    """The strongest containment this machine allows (probed once per process and PATH)."""
    key = (network, os.environ.get("PATH"))
    with _PROBE_LOCK:
        if key not in _PROBED:
            _PROBED[key] = _probe(network)
        return _PROBED[key]


def namespace_prefixes(network: bool, *, pid: bool = True) -> tuple[list[list[str]], str | None]:
    """The `unshare` prefixes that may start a contained child, most direct first; or none and why."""
    if not sys.platform.startswith("linux"):
        return [], f"namespaces are a Linux feature (this is {sys.platform})"
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "the `unshare` command (util-linux) is not on PATH"
    tail = [*(["--pid", "--fork", "--kill-child", "--mount-proc"] if pid else []), *(["--net"] if network else [])]
    prefixes = [[unshare, "--map-root-user", *tail]]
    if os.geteuid() == 0:
        prefixes.insert(0, [unshare, *tail])
    return prefixes, None


#: what the probe prints in the child: its pid, how many processes its /proc shows, its interfaces
_PROBE = (
    "import os, socket; print(os.getpid(), len([p for p in os.listdir('/proc') if p.isdigit()]), "
    "','.join(sorted(n for _, n in socket.if_nameindex())) or '-')"
)


def _probe(network: bool) -> Containment:
    """The first prefix that works: a PID namespace (with a network namespace when asked for);
    for `network`, a network namespace alone after that."""
    reasons: list[str] = []
    attempts = [(True, network)] + ([(False, True)] if network else [])
    for with_pid, with_net in attempts:
        prefixes, why = namespace_prefixes(with_net, pid=with_pid)
        if why:
            return Containment((), "process-group", False, why)
        for prefix in prefixes:
            said = _try(prefix)
            if isinstance(said, str):
                reasons.append(f"`{' '.join(prefix[1:])}`: {said}")
                continue
            pid, processes, interfaces = said
            pid_ok = not with_pid or (pid == "1" and processes == "1")
            net_ok = not with_net or interfaces == "lo"
            if pid_ok and net_ok:
                kind = "pid-namespace" if with_pid else "process-group"
                return Containment(tuple(prefix), kind, with_net, None if with_pid else "; ".join(reasons))
            reasons.append(f"`{' '.join(prefix[1:])}`: the child is not contained (pid {pid}, interfaces {interfaces})")
    return Containment((), "process-group", False, "; ".join(reasons) or "no namespace could be made")


def _try(prefix: list[str]) -> tuple[str, str, str] | str:
    """What the probe printed under `prefix`, or why it did not run."""
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", _PROBE],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            env=minimal_environment("/"),
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    words = done.stdout.decode("ascii", "replace").split()
    if done.returncode == 0 and len(words) == 3:
        return words[0], words[1], words[2]
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit status {done.returncode}"


def _parent_death_prefix() -> list[str]:
    """`setpriv --pdeathsig KILL`, so the child's `unshare` dies with replaylab even when replaylab
    itself is killed outright; only from the main thread (the signal follows the starting thread)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or threading.current_thread() is not threading.main_thread():
        return []
    return [setpriv, "--pdeathsig", "KILL", "--"]


# ---------------------------------------------------------------- the children


#: how many children this process has started: two readings that differ say that somebody
#: else's code ran in between (`started`)
_started = 0


def started() -> int:
    """How many children this process has started so far (`checks.run_files` compares readings)."""
    return _started


class Child:
    """One started child (a `subprocess.Popen` and how it is contained), registered until ended."""

    def __init__(self, popen: subprocess.Popen[bytes], contained: Containment):
        self.popen = popen
        self.contained = contained
        self.pid = popen.pid
        #: the process that started it: a process forked from that one holds it, but must neither
        #: talk to it (two processes on one pipe mix their requests) nor end it
        self.owner = os.getpid()
        global _started
        _started += 1
        _LIVE.add(self)
        self._finalizer = weakref.finalize(self, _end_popen, popen, contained.namespaced)

    def inherited(self) -> bool:
        """Whether this process got the child by a fork (it is its parent's, not its own)."""
        return self.owner != os.getpid()

    def end(self) -> int | None:
        """Kill the child and everything it started; its exit status (None: not seen in time).
        A child inherited by a fork is left to its owner."""
        self._finalizer.detach()
        _LIVE.discard(self)
        if self.inherited():
            return None
        return _end_popen(self.popen, self.contained.namespaced)

    def poll(self) -> int | None:
        return self.popen.poll()


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    network_isolated: bool = False,
    stdin: Any = subprocess.PIPE,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
    contained: Containment | None = None,
) -> Child:
    """Start `argv` contained (`containment`; with `network_isolated`, the caller has checked that
    a network namespace is possible and passes that containment). OSError when it cannot start."""
    _install_signal_handlers()
    _check_executable(argv[0], env, cwd)
    contained = contained or containment(network_isolated)
    prefix = [*_parent_death_prefix(), *contained.prefix] if contained.prefix else []
    popen = subprocess.Popen(
        [*prefix, *argv],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        close_fds=True,
        bufsize=0,
    )
    return Child(popen, contained)


def _check_executable(program: str, env: Mapping[str, str], cwd: Path | str | None) -> None:
    """FileNotFoundError / PermissionError for a program that cannot be started, as a direct
    `Popen` would raise them: inside `unshare` the failed exec would be an exit status instead."""
    import errno

    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program) if Path(program).is_absolute() else Path(cwd or os.curdir) / program
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def exited(popen: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it: until it is reaped its pid (and so its
    process group's id) cannot be taken by another process, so ending its group stays safe."""
    if popen.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, ChildProcessError, OSError):  # no waitid here: the poll reaps it
        return popen.poll() is not None


def _end_popen(popen: subprocess.Popen[bytes], namespaced: bool) -> int | None:
    """SIGKILL to the child's process group — whether the child itself is still running or not:
    what it started may be — and, without a namespace to take them along, to every descendant
    /proc shows first; then a bounded wait. The pipes are closed, not drained. A child already
    reaped is left alone (its pid, and so its group's id, may be another's by now)."""
    if popen.returncode is None:
        victims = [] if namespaced else _descendants(popen.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        with contextlib.suppress(OSError, ValueError):
            if stream is not None:
                stream.close()
    try:
        return popen.wait(timeout=END_WAIT_S)
    except subprocess.TimeoutExpired:
        return None


def _descendants(pid: int) -> list[int]:
    """Every process /proc shows below `pid` (the fallback's reach: orphans are no longer below it)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def write_by(fd: int, data: bytes, deadline: float, meanwhile: Callable[[], None] | None = None) -> str:
    """All of `data` to the non-blocking `fd` by `deadline` (`time.monotonic`), calling `meanwhile`
    while it waits (a child that neither reads nor lets its stderr be read is as hung as one that
    does not answer): "written", "timed_out", or "closed" (the child's end of the pipe is gone)."""
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timed_out"
        _, writable, _ = select.select([], [fd], [], min(left, 0.5))
        if meanwhile is not None:
            meanwhile()
        if not writable:
            continue
        try:
            view = view[os.write(fd, view[: 1 << 16]) :]
        except BlockingIOError:
            continue
        except OSError:
            return "closed"
    return "written"


# ---------------------------------------------------------------- nothing left behind

_LIVE: weakref.WeakSet[Child] = weakref.WeakSet()
_HANDLED = (signal.SIGTERM, signal.SIGHUP) if hasattr(signal, "SIGHUP") else (signal.SIGTERM,)
_installed = False


def _forget_inherited() -> None:
    """In a process just forked: the children registered are the parent's, to be left alone."""
    for child in list(_LIVE):
        child._finalizer.detach()
    _LIVE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)


def live_children() -> list[Child]:
    return list(_LIVE)


def end_all() -> None:
    """End every registered child (the run is ending, or being ended)."""
    for child in list(_LIVE):
        with contextlib.suppress(Exception):
            child.end()


def _install_signal_handlers() -> None:
    """Once, from the main thread: SIGTERM and SIGHUP end every child first, then do what they
    did before (pytest's handler, or the default: the process ends by that signal)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    atexit.register(end_all)
    for number in _HANDLED:
        previous = signal.getsignal(number)

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            end_all()
            if callable(previous):
                previous(signum, frame)
                return
            if previous == signal.SIG_IGN:
                return
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

        with contextlib.suppress(ValueError, OSError):
            signal.signal(number, handler)


# ---------------------------------------------------------------- one run, bounded


@dataclass(frozen=True)
class Finished:
    """How a bounded run ended: its exit status (None: killed), what it wrote, and why it was
    killed when it was (`timed_out`, or `overflow` naming the stream over its cap)."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    overflow: str | None = None
    contained: Containment | None = None


def run_bounded(
    argv: Sequence[str],
    stdin: bytes,
    *,
    env: Mapping[str, str],
    cwd: Path | str | None,
    timeout_s: float,
    max_stdout: int,
    max_stderr: int,
    network_isolated: bool = False,
) -> Finished:
    """Run `argv` contained, `stdin` written and both outputs read as they come, to its end, to
    `timeout_s`, or to a stream over its cap; the child and all it started are ended either way.
    OSError when it cannot start (not found, not executable)."""
    child = start(argv, env=env, cwd=cwd, network_isolated=network_isolated)
    popen = child.popen
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    out, err = bytearray(), bytearray()
    caps = {popen.stdout.fileno(): (out, max_stdout, "stdout"), popen.stderr.fileno(): (err, max_stderr, "stderr")}
    open_fds = set(caps)
    pending = memoryview(stdin)
    stdin_fd: int | None = popen.stdin.fileno()
    if not pending:
        popen.stdin.close()
        stdin_fd = None
    else:
        os.set_blocking(popen.stdin.fileno(), False)
    deadline = time.monotonic() + timeout_s
    timed_out, overflow, exited_by = False, None, None
    try:
        while open_fds:
            now = time.monotonic()
            if exited_by is None and exited(popen):
                exited_by = now + EXIT_GRACE_S
            if exited_by is not None and now >= exited_by:
                break  # it exited; what it left holding the pipes is ended below
            left = deadline - now
            if left <= 0:
                timed_out = True
                break
            writers = [stdin_fd] if stdin_fd is not None else []
            wait = min(left, 0.2 if exited_by is None else max(0.0, exited_by - now))
            readable, writable, _ = select.select(list(open_fds), writers, [], wait)
            if writable:
                try:
                    written = os.write(stdin_fd, pending[: 1 << 16])  # type: ignore[arg-type]
                    pending = pending[written:]
                except (BrokenPipeError, BlockingIOError, OSError):
                    pending = pending[:0]
                if not pending:
                    popen.stdin.close()
                    stdin_fd = None
            for fd in readable:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                buffer, cap, name = caps[fd]
                buffer += chunk
                if len(buffer) > cap:
                    del buffer[cap:]
                    overflow = name
                    break
            if overflow:
                break
        if not timed_out and not overflow:
            # the outputs are closed: the child is ending (or something it started keeps running
            # without them, which ending the child below stops)
            while not exited(popen) and time.monotonic() < deadline:
                time.sleep(0.02)
            timed_out = not exited(popen)
    finally:
        status = child.end()
    returncode = None if timed_out or overflow else status
    return Finished(returncode, bytes(out), bytes(err), timed_out, overflow, child.contained)
