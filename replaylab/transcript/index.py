"""The skeleton of a transcript, and its entries read back as models only when asked for.

Why: real OpenClaw transcripts grow very large, and holding every entry as a pydantic
model (plus the file's bytes and the parsed dicts at the same time) costs several times the file
size in memory. A `TranscriptIndex` keeps, per entry, only what the leaf path and the checks
need: id, parent id, type, line, and where its line starts. `load_entries(ids)` re-reads and
validates just the entries asked for (the leaf path, the window).

The streaming pass that builds it, and every reading rule, is `replaylab.transcript.parse`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson
from pydantic import ValidationError

from replaylab.diagnostics import Diagnostic
from replaylab.input_files import open_regular
from replaylab.transcript.collector import collector_held_off
from replaylab.transcript.jsonl import recovered_objects, strip_line
from replaylab.transcript.migrate import migrate_v2_obj
from replaylab.transcript.model import ENTRY_ADAPTER, AnyEntry, CompactionEntry, SessionHeader, unreadable_entry
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION
from replaylab.upstream.profiles import Navigation

if TYPE_CHECKING:
    from replaylab.transcript.leaf_controls import LeafControls


@dataclass
class TranscriptIndex:
    """The skeleton of a transcript: ids, parents, lines and byte spans, plus all diagnostics.

    Built by the streaming pass (`replaylab.transcript.parse`: `index_file(path)`,
    `index_bytes(data)`); ask it for models with `load_entries(ids)`."""

    path: Path | None
    header: SessionHeader
    diagnostics: list[Diagnostic]
    #: a number as pi compares it: a fractional version is kept as read
    source_version: int | float = CURRENT_SESSION_VERSION
    #: ids of the entries in file order (a duplicate id keeps only its later entry)
    ids: list[str] = field(default_factory=list)
    line_of: dict[str, int] = field(default_factory=dict)
    #: id → parent id after the checks (a cycle is cut: that entry's parent becomes None)
    parent_of: dict[str, str | None] = field(default_factory=dict)
    #: id → entry type (`message`, `compaction`, ...)
    type_of: dict[str, str] = field(default_factory=dict)
    #: ids whose parent link was cut to break a cycle
    cut_parents: set[str] = field(default_factory=set)
    #: where each entry is read back from, filled by the pass: id → slot (its position among the
    #: entries read, duplicates included), slot → byte offset of its line
    slot_of: dict[str, int] = field(default_factory=dict, repr=False)
    offsets: array[int] = field(default_factory=lambda: array("q"), repr=False)
    #: slot → k for an entry that is the k-th object recovered from a glued / broken line
    subs: dict[int, int] = field(default_factory=dict, repr=False)
    #: v1 files: what the in-memory migration added to an entry (id, parentId, firstKeptEntryId)
    patches: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    #: the bytes entries are re-read from when the index was built from memory (None: from `path`)
    data: bytes | None = field(default=None, repr=False)
    _leaf_path: list[str] | None = field(default=None, repr=False)
    #: newline bytes in what the pass read (every line but an unterminated last one)
    newlines: int = 0
    #: OpenClaw's side appends (`appendMode: "side"`) and the records its load keeps aside: they
    #: never become the leaf (`leaf_controls`)
    side_ids: set[str] = field(default_factory=set, repr=False)
    #: where OpenClaw's navigation stands after the last entry (an eager load's only: a working
    #: copy's writer reads its appends on from there)
    navigation: LeafControls | None = field(default=None, repr=False)
    #: the navigation its tree was built with (`load_transcript`'s): a re-read of the same
    #: file, as a working copy's writer makes, builds it alike
    read_as: Navigation | None = None

    # ------------------------------------------------------------ the tree

    @property
    def leaf_id(self) -> str | None:
        """pi's rule: the leaf is the last entry in file order; OpenClaw's side appends are skipped,
        as a side append never moves its load's leaf (`leaf_controls`)."""
        if not self.side_ids:
            return self.ids[-1] if self.ids else None
        return next((entry_id for entry_id in reversed(self.ids) if entry_id not in self.side_ids), None)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.slot_of

    def leaf_path_ids(self, leaf_id: str | None = None) -> list[str]:
        """Root → leaf ids along `parentId` (the leaf is the last entry unless given). A new list
        each call (the default leaf's path is computed once)."""
        if leaf_id is not None and leaf_id != self.leaf_id:
            return path_ids(self.parent_of, leaf_id)
        if self._leaf_path is None:
            self._leaf_path = path_ids(self.parent_of, self.leaf_id)
        return list(self._leaf_path)

    def abandoned_ids(self, leaf_id: str | None = None) -> list[str]:
        on_path = set(self.leaf_path_ids(leaf_id))
        return [i for i in self.ids if i not in on_path]

    def window_ids(self, leaf_id: str | None = None) -> list[str]:
        """The path entries `build_window` reads for this leaf: the latest compaction on the path
        and everything from its `firstKeptEntryId` on (pi's rule) — never the summarized history
        before it. Without a compaction: the whole path."""
        path = self.leaf_path_ids(leaf_id)
        last = next((i for i in range(len(path) - 1, -1, -1) if self.type_of[path[i]] == "compaction"), None)
        if last is None:
            return path
        (compaction,) = self.load_entries([path[last]])
        assert isinstance(compaction, CompactionEntry)
        kept_from = next((i for i in range(last) if path[i] == compaction.first_kept_entry_id), last)
        return path[kept_from:]

    def window_entries(self, leaf_id: str | None = None) -> list[AnyEntry]:
        """Models of `window_ids`, in path order: enough for `build_window` to give the same window
        as over the whole path."""
        return self.load_entries(self.window_ids(leaf_id))

    # ------------------------------------------------------------ models on demand

    def load_entries(self, ids: Iterable[str], *, cut_cycles: bool = True) -> list[AnyEntry]:
        """Validated models of the given entries, in the order asked (re-read from the file, in
        file order, so a path costs one forward sweep). Raises KeyError for an unknown id.
        `cut_cycles`: an entry whose parent link closed a cycle comes with `parent_id=None`, as in
        `Transcript.by_id` (False: as written, as in `Transcript.entries`)."""
        wanted = list(ids)
        slots = sorted({self.slot_of[i] for i in wanted})
        loaded: dict[str, AnyEntry] = {}
        with collector_held_off():  # every model made here is kept: collections would only rescan them
            if self.data is not None:
                for slot in slots:
                    entry = self._load_slot(slot, self.data, cut_cycles)
                    loaded[entry.id] = entry
            elif slots:
                if self.path is None:
                    raise ValueError("this index was built from bytes that are no longer held")
                with open_regular(self.path) as handle:
                    for slot in slots:
                        entry = self._load_slot(slot, handle, cut_cycles)
                        loaded[entry.id] = entry
        return [loaded[i] for i in wanted]

    def iter_entries(
        self, ids: Sequence[str] | None = None, *, chunk: int = 256, cut_cycles: bool = True
    ) -> Iterator[AnyEntry]:
        """Models one by one (default: every entry in file order), holding at most `chunk` at once."""
        ids = self.ids if ids is None else ids
        for start in range(0, len(ids), chunk):
            yield from self.load_entries(ids[start : start + chunk], cut_cycles=cut_cycles)

    def _load_slot(self, slot: int, source: BinaryIO | bytes, cut_cycles: bool) -> AnyEntry:
        offset, sub = self.offsets[slot], self.subs.get(slot, -1)
        if isinstance(source, bytes):
            end = source.find(b"\n", offset)
            raw = source[offset:] if end < 0 else source[offset : end + 1]
        else:
            source.seek(offset)
            raw = source.readline()  # the line: the pass split on b"\n" exactly like this
        if sub < 0:
            obj = orjson.loads(raw)
        else:
            obj = recovered_objects(strip_line(raw))[sub]
        patch = self.patches.get(slot)
        if patch:
            obj = {**obj, **patch}
        if self.source_version < 3:
            migrate_v2_obj(obj)
        try:
            entry = ENTRY_ADAPTER.validate_python(obj)
        except ValidationError:
            # the load kept it as a stand-in (its link could be read); anything else is a changed file
            stand_in = unreadable_entry(obj)
            if stand_in is None or self.type_of.get(stand_in.id) != stand_in.type:
                raise
            entry = stand_in
        if cut_cycles and entry.id in self.cut_parents:
            entry = entry.model_copy(update={"parent_id": None})
        return entry


def path_ids(parent_of: dict[str, str | None], leaf_id: str | None) -> list[str]:
    """Root → leaf ids following `parent_of` (stops at a missing parent or a repeat)."""
    chain_ids: list[str] = []
    seen: set[str] = set()
    current = leaf_id if leaf_id and leaf_id in parent_of else None
    while current is not None and current not in seen:
        seen.add(current)
        chain_ids.append(current)
        parent = parent_of[current]
        current = parent if parent and parent in parent_of else None
    chain_ids.reverse()
    return chain_ids
