"""The recording and its cassette as one pipeline item finds them: hashed before the replay, and
checked after it, because replay must never change the files it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from replaylab.cassette import cassette_path_for
from replaylab.defects import Code, Defect
from replaylab.transcript.writer import FileState, file_state, file_state_again


@dataclass(frozen=True)
class SourceFiles:
    recording: Path
    cassette: Path
    #: each file's state before the run (None: no such file); the recording's also starts its
    #: working copy, which then need not hash the same bytes again
    before: tuple[FileState | None, FileState | None]

    @classmethod
    def of(cls, recording: Path, known: Callable[[Path], FileState | None] | None = None) -> SourceFiles:
        """`known`: the state the run last hashed a file in (`RunFiles.state_of`), taken while the
        file's status still vouches for it: a pytest run hashes every session file as it starts."""
        cassette = cassette_path_for(recording)
        since = tuple(known(path.absolute()) if known is not None else None for path in (recording, cassette))
        recording_state, cassette_state = _file_states(recording, cassette, since=since, keep_hashers=True)
        return cls(recording, cassette, (recording_state, cassette_state))

    @property
    def sha256(self) -> tuple[str, str]:
        """(recording, cassette) sha256 before the run; "" for a missing file."""
        recording, cassette = (state.sha256 if state else "" for state in self.before)
        return recording, cassette

    def rewritten(self) -> list[Defect]:
        """TRANSCRIPT_REWRITTEN when either file changed during the run."""
        before = self.sha256
        after = tuple(
            state.sha256 if state else "" for state in _file_states(self.recording, self.cassette, since=self.before)
        )
        if after == before:
            return []
        return [
            Defect.of(
                Code.TRANSCRIPT_REWRITTEN,
                "the recording or its cassette changed during the run",
                expected=list(before),
                actual=list(after),
            )
        ]


def _file_states(
    *paths: Path, since: tuple[FileState | None, ...] = (), keep_hashers: bool = False
) -> tuple[FileState | None, ...]:
    """Each file's sha256 (None: no such file); with `since`, hashed again only where the earlier
    state cannot vouch that the file is unchanged (`file_state_again`); `keep_hashers`: see
    `file_state` (an earlier state without its sha256 object is hashed again for it)."""
    states: list[FileState | None] = []
    for index, path in enumerate(paths):
        earlier = since[index] if index < len(since) else None
        if not path.is_file():
            states.append(None)
        elif earlier is not None:
            states.append(file_state_again(earlier, path, keep_hasher=keep_hashers))
        else:
            states.append(file_state(path, keep_hasher=keep_hashers))
    return tuple(states)


def display_path(path: Path) -> str:
    """`path` relative to the working directory when it is under it, as the reports show it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
