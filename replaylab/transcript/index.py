"""One streaming pass over a transcript: every reading rule and diagnostic, without keeping models.

Why: real OpenClaw transcripts grow to hundreds of MB (openclaw#39953), and holding every entry
as a pydantic model (plus the file's bytes and the parsed dicts at the same time) costs about
5× the file size in memory. This module reads the file line by line and keeps, per entry, only
what the leaf path and the checks need: id, parent id, type, line, the byte span of its line,
and the tool-call / tool-result ids the pairing check uses. `TranscriptIndex.load_entries(ids)`
re-reads and validates just the entries asked for (the leaf path, the window).

This is also the *only* implementation of pi's reading rules in replaylab: `load_transcript`
runs the same pass with `keep_models=True`, so the eager and the lazy load cannot disagree on a
diagnostic. The rules (pi's, never silent; see load.py's docstring):

* a line that does not parse is reported; glued objects are recovered; bad UTF-8 is replaced;
* line 1 should be the `session` header; v1/v2 files are migrated in memory (v1 ids `l<line>`);
* every entry is validated (an invalid one is reported and skipped);
* duplicate ids: the later entry wins; dangling parents and parent cycles are reported (a
  cycle is cut at the entry where it closes);
* on the leaf path every tool call has a result and every result answers an earlier call.

Diagnostics come in the same order as always: parse problems, header, entries (file order),
graph, pairing.
"""

from __future__ import annotations

import gc
import io
import json
from array import array
from collections import deque
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Sequence

import orjson
from pydantic import ValidationError

from replaylab.constants import CURRENT_SESSION_VERSION
from replaylab.diagnostics import Diagnostic
from replaylab.transcript.model import (
    ENTRY_ADAPTER,
    AnyEntry,
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    SessionHeader,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)

#: read buffer for the streaming pass (lines are yielded one by one from it)
READ_BUFFER = 1 << 20

# pairing records: what an entry contributes to the tool-call pairing check, as a tuple
# (kind, call ids, errored) — one per tool-using message, so kept small and cheap to make
_ASSISTANT_CALLS, _USER_CALLS, _RESULT = 0, 1, 2
_Pairing = tuple[int, tuple[str, ...], bool]
_ERRORED = frozenset({"error", "aborted"})


@dataclass
class TranscriptIndex:
    """The skeleton of a transcript: ids, parents, lines and byte spans, plus all diagnostics.

    Build it with `TranscriptIndex.build(path)`; ask for models with `load_entries(ids)`."""

    path: Path | None
    header: SessionHeader
    diagnostics: list[Diagnostic]
    source_version: int = CURRENT_SESSION_VERSION
    #: ids of the entries in file order (a duplicate id keeps only its later entry)
    ids: list[str] = field(default_factory=list)
    line_of: dict[str, int] = field(default_factory=dict)
    #: id → parent id after the checks (a cycle is cut: that entry's parent becomes None)
    parent_of: dict[str, str | None] = field(default_factory=dict)
    #: id → entry type (`message`, `compaction`, ...)
    type_of: dict[str, str] = field(default_factory=dict)
    #: ids whose parent link was cut to break a cycle
    cut_parents: set[str] = field(default_factory=set)
    _slot_of: dict[str, int] = field(default_factory=dict, repr=False)
    _offsets: array = field(default_factory=lambda: array("q"), repr=False)
    #: slot → k for an entry that is the k-th object recovered from a glued / broken line
    _subs: dict[int, int] = field(default_factory=dict, repr=False)
    #: v1 files: what the in-memory migration added to an entry (id, parentId, firstKeptEntryId)
    _patches: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    _data: bytes | None = field(default=None, repr=False)
    _acyclic: bool = field(default=False, repr=False)
    _leaf_path: list[str] | None = field(default=None, repr=False)
    #: newline bytes in what the pass read (every line but an unterminated last one)
    newlines: int = 0

    # ------------------------------------------------------------ building

    @classmethod
    def build(cls, path: str | Path) -> "TranscriptIndex":
        """Index a transcript file in one streaming pass (memory: the skeleton, not the entries).
        Raises OSError for a file that cannot be opened; `load_transcript` turns those into
        `InputError`s."""
        path = Path(path)
        with open(path, "rb", buffering=READ_BUFFER) as handle:
            index, _ = build_index(handle, path, name=path, keep_models=False)
        return index

    @classmethod
    def build_bytes(cls, data: bytes, *, path: Path | None = None) -> "TranscriptIndex":
        """Index transcript bytes held in memory (`load_entries` reads from them)."""
        index, _ = build_index(io.BytesIO(data), path, name=path or Path("<memory>"), keep_models=False)
        index._data = data
        return index

    # ------------------------------------------------------------ the tree

    @property
    def leaf_id(self) -> str | None:
        """pi's rule: the leaf is the last entry in file order."""
        return self.ids[-1] if self.ids else None

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._slot_of

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
        """The path entries `build_window` reads for this leaf: the latest compaction on the path,
        the entries it protects, and everything from its `firstKeptEntryId` on — never the
        summarized history before it. Without a compaction: the whole path."""
        path = self.leaf_path_ids(leaf_id)
        last = next((i for i in range(len(path) - 1, -1, -1) if self.type_of[path[i]] == "compaction"), None)
        if last is None:
            return path
        (compaction,) = self.load_entries([path[last]])
        assert isinstance(compaction, CompactionEntry)
        from replaylab.transcript.context import protected_ids

        keep = set(protected_ids(compaction))
        kept_from = next((i for i in range(last) if path[i] == compaction.first_kept_entry_id), last)
        return [i for n, i in enumerate(path) if n >= kept_from or i in keep]

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
        slots = sorted({self._slot_of[i] for i in wanted})
        loaded: dict[str, AnyEntry] = {}
        gc_was_enabled = gc.isenabled()
        gc.disable()  # every model made here is kept: collections would only rescan them
        try:
            if self._data is not None:
                for slot in slots:
                    entry = self._load_slot(slot, self._data, cut_cycles)
                    loaded[entry.id] = entry
            elif slots:
                if self.path is None:
                    raise ValueError("this index was built from bytes that are no longer held")
                with open(self.path, "rb") as handle:
                    for slot in slots:
                        entry = self._load_slot(slot, handle, cut_cycles)
                        loaded[entry.id] = entry
        finally:
            if gc_was_enabled:
                gc.enable()
        return [loaded[i] for i in wanted]

    def iter_entries(self, ids: Sequence[str] | None = None, *, chunk: int = 256,
                     cut_cycles: bool = True) -> Iterator[AnyEntry]:
        """Models one by one (default: every entry in file order), holding at most `chunk` at once."""
        ids = self.ids if ids is None else ids
        for start in range(0, len(ids), chunk):
            yield from self.load_entries(ids[start:start + chunk], cut_cycles=cut_cycles)

    def _load_slot(self, slot: int, source: BinaryIO | bytes, cut_cycles: bool) -> AnyEntry:
        offset, sub = self._offsets[slot], self._subs.get(slot, -1)
        if isinstance(source, bytes):
            end = source.find(b"\n", offset)
            raw = source[offset:] if end < 0 else source[offset:end + 1]
        else:
            source.seek(offset)
            raw = source.readline()  # the line: the pass split on b"\n" exactly like this
        if sub < 0:
            obj = orjson.loads(raw)
        else:
            obj = _recovered_objects(_strip_line(raw))[sub]
        patch = self._patches.get(slot)
        if patch:
            obj = {**obj, **patch}
        if self.source_version < 3:
            _migrate_v2_obj(obj)
        entry = ENTRY_ADAPTER.validate_python(obj)
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


# ---------------------------------------------------------------- line sources


UTF8_BOM = b"\xef\xbb\xbf"


def _strip_line(raw: bytes) -> bytes:
    """The line as `bytes.split(b"\\n")` gives it, with trailing CRs and a leading UTF-8
    byte-order mark removed (orjson rejects the mark, so such a line always comes through here)."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    return raw.rstrip(b"\r").removeprefix(UTF8_BOM)


# ---------------------------------------------------------------- the pass


#: One parsed object and where it came from: (line number, object, byte offset of the line, length
#: of the line, sub, patch). sub -1: the whole line; k: the k-th object recovered from the line.
#: patch (v1 only): what the migration added, re-applied when the line is read again. A plain
#: tuple: one is made per line, and a class instance costs measurably more at 100k lines.
_Item = tuple[int, dict[str, Any], int, int, int, "dict[str, Any] | None"]


def build_index(lines: Iterable[bytes], path: Path | None, *, name: Path,
                keep_models: bool) -> tuple[TranscriptIndex, list[AnyEntry] | None]:
    """The pass over `lines` (raw lines with their newline, as iterating a binary file gives
    them; their byte offsets are what `load_entries` seeks to). With `keep_models` also returns
    every entry's model in file order (what `load_transcript` keeps); without, only the index.
    The cyclic GC is off for the pass: what it creates either lives to the end or dies by
    refcount (deps.md §6: up to 3× otherwise)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Pass(path, name, keep_models).run(lines)
    finally:
        if gc_was_enabled:
            gc.enable()


class _Pass:
    def __init__(self, path: Path | None, name: Path, keep_models: bool):
        self.path = path
        self.name = name
        self.keep = keep_models
        self.parse_diags: list[Diagnostic] = []
        self.header_diags: list[Diagnostic] = []
        self.entry_diags: list[Diagnostic] = []
        self._pairing: dict[int, _Pairing] = {}
        self.newlines = 0  # set when `_parse` has read every line

    # ---------------------------------------------------------- driver

    def run(self, lines: Iterable[bytes]) -> tuple[TranscriptIndex, list[AnyEntry] | None]:
        items = self._parse(lines)
        first = list(islice(items, 5))  # a header-less file's version is guessed from 5 objects
        if not first:
            self.parse_diags.append(_diag(self.name, None, "empty-file",
                                          "holds no JSON object; expected a session header on line 1"))
            header = SessionHeader(id=self.name.stem, version=CURRENT_SESSION_VERSION)
            empty = TranscriptIndex(path=self.path, header=header, diagnostics=self.parse_diags, newlines=self.newlines)
            return empty, ([] if self.keep else None)
        header, skip_first = self._header(first)
        version = header.version or 1
        if version > CURRENT_SESSION_VERSION:
            self.header_diags.append(_diag(
                self.name, 1, "unknown-version", f"session version {version} is newer than "
                f"{CURRENT_SESSION_VERSION}, the newest replaylab knows; reading it as version 3", field="version"))
        stream: Iterator[_Item] = chain(first[1:] if skip_first else first, items)
        index = TranscriptIndex(path=self.path, header=header, diagnostics=[], source_version=version)
        if version < 2:
            stream = _migrate_v1(stream)
        models = self._entries(stream, index, migrate_v2=version < 3)
        index.newlines = self.newlines
        diags = self.parse_diags + self.header_diags + self.entry_diags
        index.diagnostics = diags
        _check_graph(index, self.name)
        _check_pairing(index, self.name, self._pairing)
        self._pairing = {}
        if models is None:
            return index, None
        return index, [models[index._slot_of[i]] for i in index.ids]

    # ---------------------------------------------------------- parsing

    def _parse(self, lines: Iterable[bytes]) -> Iterator[_Item]:
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        pending_last: tuple[int, int, bytes] | None = None
        lineno = offset = 0
        raw = b"\n"
        for raw in lines:
            lineno += 1
            offset += len(raw)
            if pending_last is not None:  # the previous line failed and was not the last one
                yield from self._recover(*pending_last, is_last=False)
                pending_last = None
            try:
                obj = loads(raw)  # JSON whitespace covers the trailing "\r\n" the split would strip
            except decode_error:
                if not raw.strip():
                    continue
                pending_last = (lineno, offset - len(raw), raw)
                continue
            if type(obj) is not dict:
                self.parse_diags.append(_diag(self.name, lineno, "not-an-object",
                                              f"holds a JSON {type(obj).__name__}, expected an object"))
                continue
            yield lineno, obj, offset - len(raw), len(raw), -1, None
        if pending_last is not None:
            yield from self._recover(*pending_last, is_last=True)
        self.newlines = lineno - (not raw.endswith(b"\n"))  # the last line may lack its newline

    def _recover(self, lineno: int, offset: int, raw: bytes, *, is_last: bool) -> Iterator[_Item]:
        """A line orjson rejects: bad UTF-8, glued entries, or a truncated / broken object.
        `is_last`: no non-blank line follows (the split-based rule: the final line, or the one
        before a final empty remainder)."""
        line = _strip_line(raw)
        if not line.strip():
            return
        if lineno == 1 and raw.startswith(UTF8_BOM):  # invisible in an editor; pi's JSON.parse fails on it
            self.parse_diags.append(_diag(
                self.name, 1, "utf8-bom", "starts with a UTF-8 byte-order mark (bytes EF BB BF), which pi's "
                "JSON.parse rejects; replaylab read the line without it (save the file as UTF-8 without BOM)"))
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.parse_diags.append(_diag(
                self.name, lineno, "invalid-utf8",
                f"is not valid UTF-8 (byte {exc.start}); undecodable bytes were replaced with U+FFFD"))
            text = line.decode("utf-8", errors="replace")
        objects, error, cut_short = _decode_concatenated(text)
        if error is None and len(objects) == 1:
            if isinstance(objects[0], dict):
                yield lineno, objects[0], offset, len(raw), 0, None
            else:
                self.parse_diags.append(_diag(self.name, lineno, "not-an-object",
                                              f"holds a JSON {type(objects[0]).__name__}, expected an object"))
            return
        if error is None and len(objects) > 1:
            kinds = ", ".join(str(o.get("type", "?")) if isinstance(o, dict) else type(o).__name__ for o in objects)
            self.parse_diags.append(_diag(
                self.name, lineno, "glued-lines",
                f"holds {len(objects)} JSON objects glued together without a newline ({kinds}); "
                "pi drops the whole line, replaylab recovered each object"))
            for sub, obj in enumerate(o for o in objects if isinstance(o, dict)):
                yield lineno, obj, offset, len(raw), sub, None
            return
        where = "last line is truncated" if is_last and cut_short else "line does not parse as JSON"
        self.parse_diags.append(_diag(self.name, lineno, "invalid-json",
                                      f"{where}: {error}; the line was skipped (pi skips it too)"))

    # ---------------------------------------------------------- header

    def _header(self, first: list[_Item]) -> tuple[SessionHeader, bool]:
        """The header and whether the first object was it (then it is not an entry)."""
        lineno, obj = first[0][:2]
        if obj.get("type") == "session" and isinstance(obj.get("id"), str):
            try:
                header = SessionHeader.model_validate(obj)
            except ValidationError as exc:
                self.header_diags.extend(_validation_diags(exc, self.name, lineno, None))
                header = SessionHeader.model_construct(**obj)
            if lineno != 1:
                self.header_diags.append(_diag(self.name, lineno, "header-not-first",
                                               "the session header is not on line 1"))
            return header, True
        if obj.get("type") == "session":
            self.header_diags.append(_diag(self.name, lineno, "bad-header", "session header has no string 'id'",
                                           field="id"))
            version = obj.get("version") if isinstance(obj.get("version"), int) else None
            return SessionHeader(id=self.name.stem, version=version), True
        self.header_diags.append(_diag(
            self.name, lineno, "missing-header",
            f"line {lineno} is a {obj.get('type')!r} entry; expected a 'session' header first "
            "(pi would discard this file); entries read without a header", field="type"))
        version = CURRENT_SESSION_VERSION if all("id" in i[1] for i in first) else 1
        return SessionHeader(id=self.name.stem, version=version), False

    # ---------------------------------------------------------- entries

    def _entries(self, stream: Iterator[_Item], index: TranscriptIndex, *, migrate_v2: bool) -> list[AnyEntry] | None:
        """Validate each object; record the skeleton (and the model when keeping them).

        Without models, entries are validated by `_skeleton_validator()`: the same schema, but
        giving plain dicts (≈2.4× cheaper than building models that are dropped at once). When
        it rejects an entry, the model validator decides and words the diagnostic, so the
        diagnostics are exactly the eager load's."""
        model_validate = ENTRY_ADAPTER.validate_python
        validate = model_validate if self.keep else _skeleton_validator()
        name, diags = self.name, self.entry_diags
        ids, line_of, slot_of, type_of = index.ids, index.line_of, index._slot_of, index.type_of
        parents: list[str | None] = []
        slot_ids: list[str] = []
        offsets, subs = index._offsets, index._subs
        dead: set[int] = set()
        models: list[AnyEntry] | None = [] if self.keep else None
        pairing: dict[int, _Pairing] = {}
        duplicates = forward = False
        for lineno, obj, offset, length, sub, patch in stream:
            entry_id = obj.get("id")
            if not isinstance(entry_id, str):
                diags.append(_diag(name, lineno, "missing-id",
                                   f"{obj.get('type', 'untyped')!r} entry has no string 'id'; it cannot be "
                                   "placed in the session tree and was skipped", field="id"))
                continue
            if obj.get("type") == "session":
                diags.append(_diag(name, lineno, "extra-header",
                                   "a second session header inside the file was ignored", entry_id=entry_id))
                continue
            if migrate_v2:
                _migrate_v2_obj(obj)
            try:
                entry = validate(obj)
            except ValidationError as exc:
                if validate is model_validate:
                    diags.extend(_validation_diags(exc, name, lineno, entry_id))
                    continue
                try:
                    entry = model_validate(obj)
                except ValidationError as exc:
                    diags.extend(_validation_diags(exc, name, lineno, entry_id))
                    continue
            if type(entry) is dict:  # skeleton validation: field names, defaults applied
                parent, kind = entry["parent_id"], entry["type"]
                record = _pairing_of_dict(entry["message"]) if kind == "message" else None
            else:
                parent, kind = entry.parent_id, entry.type
                record = _pairing_of(entry.message) if type(entry) is MessageEntry else None
            slot = len(slot_ids)
            previous = slot_of.get(entry_id)
            if previous is not None:
                diags.append(_diag(name, lineno, "duplicate-id",
                                   f"id also used on line {line_of[entry_id]}; the later entry wins (as in pi)",
                                   entry_id=entry_id))
                dead.add(previous)
                pairing.pop(previous, None)
                duplicates = True
            if parent is not None and parent not in slot_of:
                forward = True  # a parent not seen yet: dangling, or a link that may close a cycle
            slot_of[entry_id] = slot
            line_of[entry_id] = lineno
            slot_ids.append(entry_id)
            parents.append(parent)
            type_of[entry_id] = kind
            offsets.append(offset)
            if sub >= 0:
                subs[slot] = sub
            if patch:
                index._patches[slot] = patch
            if models is not None:
                models.append(entry)
            if record is not None:
                pairing[slot] = record
        if duplicates:
            ids.extend(i for slot, i in enumerate(slot_ids) if slot not in dead)
        else:
            ids.extend(slot_ids)
        index.parent_of = {entry_id: parents[slot_of[entry_id]] for entry_id in ids}
        # every parent named an entry read before it and no id was replaced: the links only point
        # back in file order, so there is no dangling parent and no cycle to look for
        index._acyclic = not (duplicates or forward)
        self._pairing = pairing
        return models


def _pairing_of(message: Any) -> _Pairing | None:
    """What the pairing check needs from one validated message. Validation gives instances of
    exactly these classes, so a class identity test is the cheap equivalent of isinstance."""
    cls = message.__class__
    if cls is ToolResultMessage:
        return _RESULT, (message.tool_call_id,), False
    if cls is AssistantMessage:
        calls = tuple([b.id for b in message.content if b.__class__ is ToolCallBlock])
        return (_ASSISTANT_CALLS, calls, message.stop_reason in _ERRORED) if calls else None
    if cls is UserMessage and isinstance(message.content, list):
        calls = tuple([b.id for b in message.content if b.__class__ is ToolCallBlock])
        return (_USER_CALLS, calls, False) if calls else None
    return None


def _pairing_of_dict(message: dict[str, Any]) -> _Pairing | None:
    """`_pairing_of` for a message validated into a plain dict (same schema, same tags: the role
    and block `type` literals are what selected the model classes)."""
    role = message["role"]
    if role == "toolResult":
        return _RESULT, (message["tool_call_id"],), False
    if role == "assistant":
        calls = tuple([b["id"] for b in message["content"] if b["type"] == "toolCall"])
        return (_ASSISTANT_CALLS, calls, message["stop_reason"] in _ERRORED) if calls else None
    if role == "user" and type(message["content"]) is list:
        calls = tuple([b["id"] for b in message["content"] if b["type"] == "toolCall"])
        return (_USER_CALLS, calls, False) if calls else None
    return None


_SKELETON: Any = None


def _skeleton_validator() -> Any:
    """`ENTRY_ADAPTER`'s schema with every model turned into a typed dict (same fields, aliases,
    defaults, union tags and config), as a `validate_python` callable that returns plain dicts.

    Why: the first pass of a lazy load must validate every entry (an invalid one changes the
    tree and the diagnostics) but keeps none of them; building and freeing a model per entry was
    about half the pass. If pydantic's core-schema shape ever changes so that the conversion
    fails, this falls back to the model validator (slower, same result)."""
    global _SKELETON
    if _SKELETON is None:
        try:
            from pydantic_core import SchemaValidator

            _SKELETON = SchemaValidator(_as_typed_dicts(ENTRY_ADAPTER.core_schema, _tag_keys())).validate_python
        except Exception:  # noqa: BLE001 — any schema surprise: use the models
            _SKELETON = ENTRY_ADAPTER.validate_python
    return _SKELETON


def _tag_keys() -> dict[Any, str]:
    """The model's union discriminators (Python functions, one call per union per entry) → the
    key each reads. In the skeleton schema pydantic-core reads the key itself; a tag the
    function would map to `unknown` (an unknown or non-string value) then fails the skeleton
    validation, and the model validator decides — same result, only slower for such entries."""
    from replaylab.transcript import model

    return {model._entry_tag: "type", model._block_tag: "type", model._role_tag: "role"}


def _as_typed_dicts(schema: Any, tag_keys: dict[Any, str]) -> Any:
    if isinstance(schema, list):
        return [_as_typed_dicts(s, tag_keys) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "tagged-union" and schema.get("discriminator") in tag_keys:
        return {**_as_typed_dicts({k: v for k, v in schema.items() if k != "discriminator"}, tag_keys),
                "discriminator": tag_keys[schema["discriminator"]]}
    if schema.get("type") != "model":
        return {k: _as_typed_dicts(v, tag_keys) for k, v in schema.items()}
    fields_schema = schema["schema"]
    if fields_schema.get("type") != "model-fields" or fields_schema.get("computed_fields"):
        raise ValueError(f"unexpected model schema {fields_schema.get('type')!r}")
    fields = {}
    for name, spec in fields_schema["fields"].items():
        field_schema: dict[str, Any] = {"type": "typed-dict-field", "schema": _as_typed_dicts(spec["schema"], tag_keys),
                                        "required": spec["schema"].get("type") != "default"}
        if "validation_alias" in spec:
            field_schema["validation_alias"] = spec["validation_alias"]
        fields[name] = field_schema
    out: dict[str, Any] = {"type": "typed-dict", "fields": fields, "extra_behavior": "allow"}
    for key in ("config", "ref"):
        if key in schema:
            out[key] = schema[key]
    return out


# ---------------------------------------------------------------- migration (in memory only)


def _migrate_v1(stream: Iterator[_Item]) -> Iterator[_Item]:
    """v1 → v2: give each entry a stable id (from its line) and chain parentId in file order.

    pi assigns random ids; we derive them from the line so a diagnostic or defect can be traced
    back to the file. `firstKeptEntryIndex` indexes the whole entry array with the header at 0,
    so it may name an entry further down: such a compaction waits (with what follows it) until
    that entry's id is known. Each item's `patch` records what was added, so `load_entries` can
    re-apply it to the re-read line."""
    ids: list[str] = []
    per_line: dict[int, int] = {}
    previous: str | None = None
    held: deque[_Item] = deque()

    def ready(item: _Item) -> bool:
        index = _first_kept_index(item[1])
        return index is None or index <= len(ids)

    def release(item: _Item) -> _Item:
        index = _first_kept_index(item[1])
        if index is not None and 1 <= index <= len(ids):
            lineno, obj, offset, length, sub, patch = item
            obj["firstKeptEntryId"] = ids[index - 1]
            return lineno, obj, offset, length, sub, {**(patch or {}), "firstKeptEntryId": ids[index - 1]}
        return item

    for lineno, original, offset, length, sub, _ in stream:
        obj = dict(original)
        patch = None
        if "id" not in obj:
            k = per_line.get(lineno, 0)
            per_line[lineno] = k + 1
            obj["id"] = f"l{lineno}" if k == 0 else f"l{lineno}-{k + 1}"
            obj["parentId"] = previous
            patch = {"id": obj["id"], "parentId": previous}
        previous = obj["id"]
        ids.append(obj["id"])
        held.append((lineno, obj, offset, length, sub, patch))
        while held and ready(held[0]):
            yield release(held.popleft())
    while held:
        yield release(held.popleft())


def _first_kept_index(obj: dict[str, Any]) -> int | None:
    """The `firstKeptEntryIndex` a v1 compaction needs mapped, else None."""
    if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj and "firstKeptEntryId" not in obj:
        index = obj["firstKeptEntryIndex"]
        if isinstance(index, int):
            return index
    return None


def _migrate_v2_obj(obj: dict[str, Any]) -> None:
    """v2 → v3: message role `hookMessage` was renamed `custom`."""
    message = obj.get("message")
    if type(message) is dict and message.get("role") == "hookMessage":
        obj["message"] = {**message, "role": "custom"}


# ---------------------------------------------------------------- graph and pairing checks


def _check_graph(index: TranscriptIndex, name: Path) -> None:
    if index._acyclic:
        return
    parent_of, line_of, diags = index.parent_of, index.line_of, index.diagnostics
    for entry_id in index.ids:
        parent = parent_of[entry_id]
        if parent is not None and parent not in parent_of:
            diags.append(_diag(name, line_of[entry_id], "dangling-parent",
                               f"parentId {parent!r} names no entry in the file; the path stops here",
                               entry_id=entry_id, field="parentId"))
    # cycle detection: colour walk over parent links
    state: dict[str, int] = {}
    for entry_id in index.ids:
        trail: list[str] = []
        current: str | None = entry_id
        while current is not None and current in parent_of and state.get(current) is None:
            state[current] = 1
            trail.append(current)
            current = parent_of[current]
        if current is not None and state.get(current) == 1:
            loop = trail[trail.index(current):] if current in trail else [current]
            diags.append(_diag(name, line_of[current], "cycle",
                               f"parentId links form a cycle ({' → '.join(loop)} → {current}); the path is cut there",
                               entry_id=current, field="parentId"))
            parent_of[current] = None
            index.cut_parents.add(current)
        for node in trail:
            state[node] = 2


def _check_pairing(index: TranscriptIndex, name: Path, pairing: dict[int, _Pairing]) -> None:
    """On the leaf path: every tool result answers an earlier call, every call gets a result."""
    pending: dict[str, str] = {}
    called: set[str] = set()
    diags, slot_of, line_of = index.diagnostics, index._slot_of, index.line_of
    for entry_id in index.leaf_path_ids():
        record = pairing.get(slot_of[entry_id])
        if record is None:
            continue
        kind, call_ids, errored = record
        if kind == _ASSISTANT_CALLS:
            for call_id in call_ids:
                called.add(call_id)  # a result for it is never an orphan
                if not errored:  # pi drops errored/aborted messages before a request
                    pending[call_id] = entry_id
        elif kind == _USER_CALLS:
            # τ²-bench telecom: the simulated user runs tools on its own phone (actor = user)
            for call_id in call_ids:
                pending[call_id] = entry_id
                called.add(call_id)
        else:
            (call_id,) = call_ids
            if call_id not in called:
                diags.append(_diag(
                    name, line_of.get(entry_id), "orphan-tool-result",
                    f"tool result for call {call_id!r} has no matching tool call earlier on the path",
                    entry_id=entry_id, field="message.toolCallId"))
            pending.pop(call_id, None)
    for call_id, entry_id in pending.items():
        diags.append(_diag(name, line_of.get(entry_id), "missing-tool-result",
                           f"tool call {call_id!r} has no tool result later on the path", entry_id=entry_id,
                           field="message.content"))


# ---------------------------------------------------------------- helpers


def _reject_constant(name: str) -> Any:
    """`NaN` / `Infinity` are not JSON: orjson and pi's JSON.parse reject them, so must the fallback."""
    raise ValueError(f"{name} is not a JSON value")


def _decode_concatenated(text: str) -> tuple[list[Any], str | None, bool]:
    """The JSON values on one line, the error that stopped decoding (None: all decoded), and
    whether that error is the line ending early (a truncated write, not a malformed value)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    objects: list[Any] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            cut_short = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
            return objects, f"{exc.msg.removesuffix(' at')} at column {exc.colno}", cut_short
        except ValueError as exc:  # a NaN / Infinity literal
            return objects, str(exc), False
        except RecursionError:  # deeper than the stdlib decoder's stack (orjson stops at 1024 levels)
            return objects, "nested too deeply for a JSON parser (about 1000 levels of arrays / objects or more)", False
        objects.append(obj)
    return objects, None, False


def _recovered_objects(line: bytes) -> list[dict[str, Any]]:
    """The dict objects `_recover` yields for a line (for re-reading one of them)."""
    text = line.decode("utf-8", errors="replace")
    objects, _, _ = _decode_concatenated(text)
    return [o for o in objects if isinstance(o, dict)]


def _validation_diags(exc: ValidationError, name: Path, lineno: int, entry_id: str | None) -> list[Diagnostic]:
    errors = exc.errors()
    # `content: str | list[...]` reports one error per union member; the `str` one is noise
    # when the other member got further
    real = [e for e in errors if "str" not in e["loc"]] or errors
    out = []
    for err in real[:3]:
        out.append(_diag(name, lineno, "invalid-entry", f"{err['msg']} (got {_short(err.get('input'))}); entry skipped",
                         entry_id=entry_id, field=_json_path(err["loc"]) or None))
    return out


def _json_path(loc: tuple[Any, ...]) -> str:
    """pydantic's error location as the JSON path a user can find in the line: drop the union
    tags pydantic inserts (entry type at [0], role after `message`, block type after a list
    index) and union member labels (`str`, `list[...]`)."""
    parts: list[str] = []
    skip_next = True  # loc[0] is the entry-type tag
    for part in loc:
        if skip_next:
            skip_next = False
            continue
        if isinstance(part, str) and (part == "str" or "[" in part):
            continue
        parts.append(str(part))
        skip_next = (part == "message" and len(parts) == 1) or isinstance(part, int)
    return ".".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _diag(name: Path, line: int | None, code: str, message: str, *, entry_id: str | None = None,
          field: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, file=str(name), line=line, entry_id=entry_id, field=field, message=message,
                      severity="warning" if code in {"glued-lines", "unknown-version"} else "error")
