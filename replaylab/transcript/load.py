"""Load a pi / OpenClaw JSONL transcript: parse, migrate in memory, index, diagnose.

pi drops a line that does not parse and carries on silently (two entries glued on one line are
both lost). replaylab follows pi's reading rules but never silently: each problem becomes a
`Diagnostic` with file, line, entry id and a plain sentence, and glued entries are recovered.
`strict=True` turns any diagnostic into an `InputError`. The file is only ever read.

The reading itself is `replaylab.transcript.parse` (one streaming pass, shared by the eager and
the lazy load, so both give the same diagnostics); this module wraps it in a `Transcript`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import NotAFileError, open_regular, phrase
from replaylab.transcript.diagnose import diagnostic
from replaylab.transcript.index import TranscriptIndex
from replaylab.transcript.jsonl import READ_BUFFER
from replaylab.transcript.memo import identity
from replaylab.transcript.model import AnyEntry, SessionHeader
from replaylab.transcript.parse import build_index, index_bytes
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION
from replaylab.upstream.profiles import Navigation

if TYPE_CHECKING:
    from replaylab.transcript.leaf_controls import LeafControls
    from replaylab.transcript.memo import ItemMemo


@dataclass
class Transcript:
    """A loaded session: header, entries in file order, and what was wrong with the file."""

    path: Path | None
    header: SessionHeader
    entries: list[AnyEntry]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: a number as pi compares it: a fractional version is kept as read
    source_version: int | float = CURRENT_SESSION_VERSION
    line_of: dict[str, int] = field(default_factory=dict)
    by_id: dict[str, AnyEntry] = field(default_factory=dict)
    #: newline bytes in the bytes it was parsed from (None: not known), for a working copy's
    #: writer, which numbers the lines it appends (`TranscriptWriter.working_copy`)
    newlines: int | None = None
    #: OpenClaw's side appends and the records its load keeps aside, which never become the leaf
    side_ids: set[str] = field(default_factory=set, repr=False)
    #: where OpenClaw's navigation stood after the last entry parsed (`TranscriptIndex.navigation`)
    navigation: LeafControls | None = field(default=None, repr=False, compare=False)
    #: the navigation its tree was built with (`load_transcript`'s `navigation`)
    read_as: Navigation | None = field(default=None, repr=False, compare=False)
    #: the leaf path's ids as the load found them, with the `by_id`, its size and the leaf they hold
    #: for: following them through `by_id` touches no entry, where a walk reads every entry's parent
    _loaded_leaf_path: tuple[dict[str, AnyEntry], int, str | None, list[str]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.header.id

    @property
    def leaf_id(self) -> str | None:
        """pi's rule: the leaf is the last entry in file order; OpenClaw's side appends are skipped
        (`TranscriptIndex.leaf_id`)."""
        if not self.side_ids:
            return self.entries[-1].id if self.entries else None
        return next((entry.id for entry in reversed(self.entries) if entry.id not in self.side_ids), None)

    def path_to(self, leaf_id: str | None = None, memo: ItemMemo | None = None) -> list[AnyEntry]:
        """Root → leaf list of entries along `parentId` (abandoned branches left out).

        With an item's `memo`, walked once per transcript object and leaf while its entries stay
        the ones it was walked over (an item asks many times: the ledger, the turns, both models,
        the re-check); each call gets its own list."""
        leaf_id = self.leaf_id if leaf_id is None else leaf_id
        if memo is None:
            return self._walk(leaf_id)
        key = (identity(self), leaf_id)
        hit = memo.paths.get(key)
        if hit is None or hit[0] is not self or hit[1] is not self.by_id or len(self.by_id) != hit[2]:
            hit = memo.paths[key] = (self, self.by_id, len(self.by_id), self._walk(leaf_id))
        return list(hit[3])

    def _walk(self, leaf_id: str | None) -> list[AnyEntry]:
        loaded = self._loaded_leaf_path
        if loaded is not None and loaded[0] is self.by_id and loaded[1] == len(self.by_id) and loaded[2] == leaf_id:
            by_id = self.by_id
            return [by_id[entry_id] for entry_id in loaded[3]]
        chain: list[AnyEntry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id) if leaf_id else None
        while current is not None and current.id not in seen:
            seen.add(current.id)
            chain.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    def leaf_path(self, memo: ItemMemo | None = None) -> list[AnyEntry]:
        return self.path_to(None, memo)

    def ids_of_type(self, entry_type: str) -> list[str]:
        """The ids of the entries of this type, in file order."""
        return [entry.id for entry in self.entries if entry.type == entry_type]

    def abandoned_entries(self) -> list[AnyEntry]:
        on_path = {e.id for e in self.leaf_path()}
        return [e for e in self.entries if e.id not in on_path]

    def problems(self) -> list[Diagnostic]:
        return list(self.diagnostics)


def load_transcript(
    path: str | Path,
    *,
    strict: bool = False,
    lazy: bool = False,
    recover_glued_lines: bool = False,
    navigation: Navigation | None = None,
) -> Transcript:
    """Read a transcript file. Raises `InputError` only when nothing usable can be read
    (missing file, a directory) or when `strict` and any problem was found.

    Both modes read the file in one streaming pass (never the whole file plus its parsed dicts
    at once) and give the same diagnostics, leaf path and API:

    * eager (default): every entry is kept as a model — best for code that walks the whole path
      (ledger, compaction). Peak memory is that of the models themselves, several times the file.
    * `lazy=True`: a `LazyTranscript` that keeps only the skeleton (`TranscriptIndex`, a fraction
      of the file); entries become models when read (`transcript.index.window_entries()`,
      `load_entries(ids)`, `leaf_path()`). Best for code that needs the structure, the
      diagnostics and the window of a big file. Materializing the whole path this way reads the
      path a second time (costlier than an eager load), so whole-path walkers should stay eager.

    `recover_glued_lines`: read each object of a line that holds several (pi drops the line, and
    by default so does replaylab: the window is then pi's).

    `navigation`: whose load the file's tree follows, the item's profile's (`AgentProfile.navigation`):
    pi's links as written, whatever the version, or OpenClaw 2026.9's navigation, for every file it
    does not migrate; None (no agent named): OpenClaw's for its own version-4 files, pi's links for
    the others. Every later walk (`path_to`, `leaf_path`) follows that tree.
    """
    path = Path(path)
    try:
        with open_regular(path, buffering=READ_BUFFER) as handle:
            index, models = build_index(
                handle,
                path,
                name=path,
                keep_models=not lazy,
                recover_glued_lines=recover_glued_lines,
                navigation=navigation,
            )
    except FileNotFoundError:
        raise InputError([diagnostic(path, None, "missing-file", "no such file")]) from None
    except NotAFileError as exc:  # a FIFO would hang the read, a device never end it: refused by stat
        raise InputError(
            [diagnostic(path, None, "not-a-file", f"{phrase(exc.kind)}; expected a .jsonl transcript file")]
        ) from None
    except OSError as exc:
        raise InputError([diagnostic(path, None, "unreadable", f"cannot be read: {exc.strerror}")]) from None
    transcript = LazyTranscript(index) if models is None else _eager(index, models)
    if strict and transcript.diagnostics:
        raise InputError(transcript.diagnostics)
    return transcript


def loads_transcript(
    data: bytes, *, path: Path | None = None, lazy: bool = False, navigation: Navigation | None = None
) -> Transcript:
    """Parse transcript bytes (see `load_transcript`); `lazy` keeps `data` and re-reads from it."""
    if lazy:
        return LazyTranscript(index_bytes(data, path=path, navigation=navigation))
    name = Path(path) if path else Path("<memory>")
    index, models = build_index(io.BytesIO(data), path, name=name, keep_models=True, navigation=navigation)
    assert models is not None
    return _eager(index, models)


def _eager(index: TranscriptIndex, models: list[AnyEntry]) -> Transcript:
    by_id = dict(zip(index.ids, models))
    for entry_id in index.cut_parents:  # the cycle check cut this link (the entries list keeps it)
        by_id[entry_id] = by_id[entry_id].model_copy(update={"parent_id": None})
    return Transcript(
        path=index.path,
        header=index.header,
        entries=models,
        diagnostics=index.diagnostics,
        source_version=index.source_version,
        line_of=index.line_of,
        by_id=by_id,
        newlines=index.newlines,
        side_ids=index.side_ids,
        navigation=index.navigation,
        read_as=index.read_as,
        _loaded_leaf_path=(by_id, len(by_id), index.leaf_id, index.leaf_path_ids()),
    )


class LazyTranscript(Transcript):
    """A `Transcript` over a `TranscriptIndex`: entries become models only when read.

    `entries` and `by_id` are read-only views (each access validates the entry again; iterate
    once, or use `leaf_path()` / `index.load_entries(ids)` for batches). Everything else —
    header, diagnostics, `line_of`, `leaf_id`, `path_to`, `leaf_path`, `abandoned_entries` —
    behaves exactly as on an eager `Transcript` of the same file."""

    def __init__(self, index: TranscriptIndex):
        super().__init__(
            path=index.path,
            header=index.header,
            # read-only views where the eager transcript holds a list and a dict: a lazy transcript
            # is never appended to (only a writer's eager mirror is)
            entries=_LazyEntries(index),  # type: ignore[arg-type]
            diagnostics=index.diagnostics,
            source_version=index.source_version,
            line_of=index.line_of,
            by_id=_LazyById(index),  # type: ignore[arg-type]
            read_as=index.read_as,
        )
        self.index = index

    @property
    def leaf_id(self) -> str | None:
        return self.index.leaf_id

    def path_to(self, leaf_id: str | None = None, memo: ItemMemo | None = None) -> list[AnyEntry]:
        """Validated on each call: a lazy transcript keeps no models, and `memo` keeps none for it."""
        return self.index.load_entries(self.index.leaf_path_ids(leaf_id))

    def abandoned_entries(self) -> list[AnyEntry]:
        return self.index.load_entries(self.index.abandoned_ids())

    def ids_of_type(self, entry_type: str) -> list[str]:
        """From the index's types: no entry is validated."""
        type_of = self.index.type_of
        return [entry_id for entry_id in self.index.ids if type_of.get(entry_id) == entry_type]


class _LazyEntries(Sequence[AnyEntry]):
    """Entries in file order, validated on access (as read: a parent link the cycle check cut is
    still there, exactly like the eager `entries` list)."""

    def __init__(self, index: TranscriptIndex):
        self._index = index

    def __len__(self) -> int:
        return len(self._index.ids)

    @overload
    def __getitem__(self, item: int) -> AnyEntry: ...
    @overload
    def __getitem__(self, item: slice) -> list[AnyEntry]: ...
    def __getitem__(self, item: int | slice) -> AnyEntry | list[AnyEntry]:
        if isinstance(item, slice):
            return self._index.load_entries(self._index.ids[item], cut_cycles=False)
        return self._index.load_entries([self._index.ids[item]], cut_cycles=False)[0]

    def __iter__(self) -> Iterator[AnyEntry]:
        return self._index.iter_entries(cut_cycles=False)


class _LazyById(Mapping[str, AnyEntry]):
    """id → entry, validated on access (parent links as cut by the cycle check, like `by_id`)."""

    def __init__(self, index: TranscriptIndex):
        self._index = index

    def __getitem__(self, entry_id: str) -> AnyEntry:
        if entry_id not in self._index:
            raise KeyError(entry_id)
        return self._index.load_entries([entry_id])[0]

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.ids)

    def __len__(self) -> int:
        return len(self._index.ids)
