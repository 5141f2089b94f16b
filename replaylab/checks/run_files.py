"""Every recording and cassette of a run, hashed when the run collects its items and checked after
each item and at the end (TRANSCRIPT_REWRITTEN).

Why not only each item's own files: an item's compactor (somebody else's code) can edit *another*
item's recording before that item runs, and the other item would then hash the edited file as its
input and judge it. So the run hashes every session file of every item at the start — each
recording, its cassette, and its sub-agents' transcripts and cassettes (`<name>.sub-*`) — and after
each item compares them all: a file changed while that item ran is that item's TRANSCRIPT_REWRITTEN,
and an item whose own files no longer hold what they held at the start ran on changed input, which
is its TRANSCRIPT_REWRITTEN too. The end of the run compares once more (`at_end`).

Only somebody else's code can do that: replaylab itself never writes a session file, and every
process it starts for a compactor, a tool pack or a read tool goes through `replaylab.children`.
So the check after an item compares every file of the run when such a process was started during
the item or still runs (the OpenClaw worker serves a whole run), and the item's own files
otherwise — a run of replaylab's own compactor over a thousand sessions would else `stat` every
file of the run after every item. A process that escaped its containment (only possible where no
PID namespace could be made: `children.containment().why`) and edits a file between such items is
seen at the next full check or at the end of the run.

A file's state is re-hashed only when its status (size, mtime, ctime) moved (`file_state_again`),
so a check costs a `stat` per file it compares.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab import children
from replaylab.cassette import cassette_path_for
from replaylab.defects import Code, Defect
from replaylab.transcript.writer import FileState, file_state, file_state_again


def session_files(recording: Path, folder_names: list[str] | None = None) -> list[Path]:
    """A recording's files: itself, its cassette, and its sub-agents' transcripts and cassettes.
    `folder_names`: the sorted names in the recording's folder, when the caller listed it already
    (a suite's recordings share a folder: listing it once per recording is quadratic)."""
    recording = Path(recording)
    files = [recording, cassette_path_for(recording)]
    prefix = recording.name.removesuffix(".jsonl") + ".sub-"
    names = _folder_names(recording.parent) if folder_names is None else folder_names
    # a sub-agent's LLM cassettes are written when a real model records: not session files
    files += [recording.parent / name for name in _starting_with(names, prefix) if ".llm." not in name]
    return files


def _folder_names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _starting_with(names: list[str], prefix: str) -> list[str]:
    """The names of the sorted `names` that start with `prefix`: a run of them, found by bisection."""
    first = bisect.bisect_left(names, prefix)
    last = first
    while last < len(names) and names[last].startswith(prefix):
        last += 1
    return names[first:last]


def _state(path: Path) -> FileState | None:
    """The file's state with its sha256 object: an item's own start takes it (`state_of`)
    instead of reading the file again to continue the hash into its working copy."""
    try:
        return file_state(path, keep_hasher=True) if path.is_file() else None
    except OSError:
        return None


#: a `FileState` as plain data: [sha256, status or None], or None for a file that was not there
PlainState = list[Any] | None


def _from_plain(plain: PlainState) -> FileState | None:
    if not plain:
        return None
    sha256, status = plain
    return FileState(str(sha256), tuple(int(n) for n in status) if status else None)  # type: ignore[arg-type]


def _again(before: FileState | None, path: Path) -> FileState | None:
    if before is None:
        return _state(path)
    try:
        return file_state_again(before, path)
    except OSError:
        return None


def _status_now(path: Path) -> tuple[int, int, int, int, int] | None:
    """The status `FileState.status` holds, now (None when the file cannot be read): what vouches
    that a hashed file still holds its bytes (`file_state_again`), read in one call."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def _digest(state: FileState | None) -> str:
    return state.sha256 if state is not None else ""


@dataclass
class RunFiles:
    """The session files of a run with their state at the start and at the last check."""

    start: dict[Path, FileState | None] = field(default_factory=dict)
    last: dict[Path, FileState | None] = field(default_factory=dict)
    #: recording → its session files
    owned: dict[Path, list[Path]] = field(default_factory=dict)
    #: `children.started()` at the last check: another reading says whether foreign code ran since
    children_started: int = field(default_factory=children.started)

    @classmethod
    def of(cls, recordings: Iterable[Path], started: Mapping[str, PlainState] | None = None) -> RunFiles:
        """The run's files hashed now; with `started`, the states the run's start already hashed
        (an xdist controller's, `plain_start`), each taken as the file's start and hashed again
        only where its status no longer vouches for it."""
        run = cls()
        started = started or {}
        listed: dict[Path, list[str]] = {}
        for recording in recordings:
            recording = Path(recording).absolute()
            if recording in run.owned:
                continue
            names = listed.get(recording.parent)
            if names is None:
                names = listed[recording.parent] = _folder_names(recording.parent)
            run.owned[recording] = files = session_files(recording, names)
            for path in files:
                if path not in run.start:
                    before = _from_plain(started.get(str(path)))
                    run.start[path] = before if before is not None else _state(path)
                    run.last[path] = _again(before, path) if before is not None else run.start[path]
        return run

    def state_of(self, path: Path) -> FileState | None:
        """The state the run last found `path` in (None: not a session file of the run, or
        missing); an item starting takes it while the file's status still vouches for it."""
        return self.last.get(Path(path).absolute())

    def plain_start(self) -> dict[str, PlainState]:
        """The states at the start as plain data (what an xdist controller hands its workers, so
        that a worker takes the run's start as the controller hashed it, without hashing again)."""
        return {
            str(path): None if state is None else [state.sha256, list(state.status) if state.status else None]
            for path, state in self.start.items()
        }

    def after_item(self, recording: Path) -> list[Defect]:
        """TRANSCRIPT_REWRITTEN for what changed while the item of `recording` ran (any file of
        the run), and for its own files when they are not what they were at the start."""
        own = [p for p in self.owned.get(Path(recording).absolute(), []) if p in self.start]
        foreign = children.started() != self.children_started or bool(children.live_children())
        self.children_started = children.started()
        moved: list[Path] = []
        for path in self.last if foreign else own:
            before = self.last[path]
            if before is not None and before.status is not None and _status_now(path) == before.status:
                continue  # the common case, a `stat` per file of the run: nothing moved
            now = _again(before, path)
            if _digest(now) != _digest(before):
                moved.append(path)
            self.last[path] = now
        # without foreign code nothing in the item could change a file: what moved, moved before it
        during = moved if foreign else []
        stale = [p for p in own if p not in during and _digest(self.last[p]) != _digest(self.start[p])]
        defects = []
        if during:
            defects.append(_rewritten(during, "changed while this item ran (replay never writes a session file)"))
        if stale:
            defects.append(
                _rewritten(
                    stale, "changed after the run started and before this item ran: the item ran on edited input"
                )
            )
        return defects

    def at_end(self) -> tuple[list[Path], list[Path]]:
        """The session files that do not hold what they held when the run started, and of those
        the ones no item's check saw change (they changed after the last check)."""
        changed, unseen = [], []
        for path, before in self.start.items():
            checked = self.last.get(path, before)
            now = _again(checked, path)
            self.last[path] = now
            if _digest(now) != _digest(before):
                changed.append(path)
                if _digest(checked) == _digest(before):
                    unseen.append(path)
        return changed, unseen

    def recordings_of(self, paths: Iterable[Path]) -> list[Path]:
        """The recordings these session files belong to."""
        wanted = set(paths)
        return [recording for recording, files in self.owned.items() if wanted & set(files)]


def file_names(paths: list[Path], shown: int = 5) -> str:
    """`a.jsonl, b.cassette.yaml and 3 more`."""
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(p.name for p in paths[:shown]) + more


def _rewritten(paths: list[Path], why: str) -> Defect:
    return Defect.of(
        Code.TRANSCRIPT_REWRITTEN,
        f"session file(s) of the run {why}: {file_names(paths)}",
        expected="every recording and cassette of the run byte-identical to the start",
        actual=[str(p) for p in paths[:20]],
    )
