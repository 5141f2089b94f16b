"""One streaming pass over a transcript: every reading rule and diagnostic, without keeping models.

This is the *only* implementation of pi's reading rules in replaylab: `load_transcript` runs
the same pass with `keep_models=True`, so the eager and the lazy load cannot disagree on a
diagnostic. The rules (pi's, never silent; see load.py's docstring):

* a line that does not parse is reported; glued objects are recovered; bad UTF-8 is replaced
  (`jsonl`);
* line 1 should be the `session` header; v1/v2 files are migrated in memory (v1 ids `l<line>`;
  `migrate`); version 4 (OpenClaw 2026.9's) is read as version 3, as OpenClaw reads it;
* the tree of a file OpenClaw 2026.9 navigates (under its profile every file it does not migrate;
  with no agent named, its own version-4 files: the load's `navigation`) is built with its
  navigation (`leaf_controls`); else with pi's links, as pi reads any file;
* a message's content item no block model reads is kept in it as written, an opaque block,
  and reported (`opaque_content`);
* every entry is validated; an invalid one is reported and stays on the path as an entry with no
  message (`model.UnreadableEntry`), as both agents' paths run through it, unless even its link
  cannot be read (then it is skipped);
* duplicate ids: the later entry wins; dangling parents and parent cycles are reported (a
  cycle is cut at the entry where it closes; `graph`);
* an OpenClaw leaf control (`type: "leaf"`, a rewind's last record) links to its `targetId`, where
  OpenClaw resumes the session (`leaf_controls`; pi writes none);
* a compaction's `firstKeptEntryId` names an earlier entry on its own path (`first_kept`);
* on the leaf path every tool call has a result and every result answers an earlier call
  (`pairing`).

Diagnostics come in the same order as always: parse problems, header, entries (file order),
graph, compaction links, pairing.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replaylab.diagnostics import Diagnostic
from replaylab.input_files import open_regular
from replaylab.transcript.collector import collector_held_off
from replaylab.transcript.diagnose import diagnostic, validation_diagnostics
from replaylab.transcript.first_kept import check_first_kept
from replaylab.transcript.graph import check_graph
from replaylab.transcript.index import TranscriptIndex
from replaylab.transcript.jsonl import READ_BUFFER, Item, LineReader
from replaylab.transcript.leaf_controls import KEEP, LeafControls
from replaylab.transcript.migrate import migrate_v1, migrate_v2_obj
from replaylab.transcript.model import (
    ENTRY_ADAPTER,
    AnyEntry,
    CompactionEntry,
    MessageEntry,
    SessionHeader,
    unreadable_entry,
)
from replaylab.transcript.null_content import NULL_CONTENT_NOTE, null_content_patch
from replaylab.transcript.opaque_content import opaque_content_patch, opaque_diagnostics
from replaylab.transcript.pairing import ASSISTANT_CALLS, Pairing, check_pairing, pairing_record
from replaylab.transcript.skeleton import skeleton_validator
from replaylab.transcript.unestimable import argumentless_call, unestimable_diagnostics
from replaylab.transcript.unlinked_parent import unlinked_parent_note, unlinked_parent_patch
from replaylab.upstream.openclaw_2026_9_6 import CURRENT_SESSION_VERSION as OPENCLAW_SESSION_VERSION
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION
from replaylab.upstream.profiles import Navigation

#: what became of an entry that failed validation but whose link could be read
UNREADABLE_OUTCOME = (
    "the entry stays on the path (the agents' paths run through it) with no message: pi would send what "
    "it holds, which replaylab cannot read; OpenClaw keeps it aside when its own schema rejects it too"
)


def index_file(
    path: str | Path, *, recover_glued_lines: bool = False, navigation: Navigation | None = None
) -> TranscriptIndex:
    """Index a transcript file in one streaming pass (memory: the skeleton, not the entries).
    Raises OSError for a file that cannot be opened or is not a regular file (`NotAFileError`);
    `load_transcript` turns those into `InputError`s."""
    path = Path(path)
    with open_regular(path, buffering=READ_BUFFER) as handle:
        index, _ = build_index(
            handle, path, name=path, keep_models=False, recover_glued_lines=recover_glued_lines, navigation=navigation
        )
    return index


def index_bytes(
    data: bytes, *, path: Path | None = None, recover_glued_lines: bool = False, navigation: Navigation | None = None
) -> TranscriptIndex:
    """Index transcript bytes held in memory (`load_entries` reads from them)."""
    name = Path(path) if path else Path("<memory>")
    index, _ = build_index(
        io.BytesIO(data),
        path,
        name=name,
        keep_models=False,
        recover_glued_lines=recover_glued_lines,
        navigation=navigation,
    )
    index.data = data
    return index


def build_index(
    lines: Iterable[bytes],
    path: Path | None,
    *,
    name: Path,
    keep_models: bool,
    recover_glued_lines: bool = False,
    navigation: Navigation | None = None,
) -> tuple[TranscriptIndex, list[AnyEntry] | None]:
    """The pass over `lines` (raw lines with their newline, as iterating a binary file gives
    them; their byte offsets are what `load_entries` seeks to). With `keep_models` also returns
    every entry's model in file order (what `load_transcript` keeps); without, only the index.
    The cyclic GC is held off for the pass (`collector`): what it creates either lives to the
    end or dies by refcount, so collections would only rescan it.

    `navigation`: the tree as pi reads any file, or as OpenClaw 2026.9 reads a file it does not
    migrate (the item's profile says which); None: OpenClaw's for a version-4 file, else pi's."""
    with collector_held_off():
        return _Pass(path, name, keep_models, recover_glued_lines, navigation).run(lines)


class _Pass:
    def __init__(
        self,
        path: Path | None,
        name: Path,
        keep_models: bool,
        recover_glued_lines: bool = False,
        navigation: Navigation | None = None,
    ):
        self.path = path
        self.navigation = navigation
        self.name = name
        self.keep = keep_models
        self.reader = LineReader(name, recover_glued_lines=recover_glued_lines)
        self.header_diags: list[Diagnostic] = []
        self.entry_diags: list[Diagnostic] = []
        #: entry id → its pairing record, for the entries that have one
        self.pairing: dict[str, Pairing] = {}
        #: every parent link points back in file order (set by `_entries`)
        self.acyclic = False
        #: compaction entry id → its `firstKeptEntryId` (checked once the tree is known)
        self.first_kept: dict[str, str | None] = {}

    # ---------------------------------------------------------- driver

    def run(self, lines: Iterable[bytes]) -> tuple[TranscriptIndex, list[AnyEntry] | None]:
        reader = self.reader
        items = reader.read(lines)
        first = list(islice(items, 5))  # a header-less file's version is guessed from 5 objects
        if not first:
            reader.diagnostics.append(
                diagnostic(self.name, None, "empty-file", "holds no JSON object; expected a session header on line 1")
            )
            header = SessionHeader(id=self.name.stem, version=CURRENT_SESSION_VERSION)
            empty = TranscriptIndex(
                path=self.path,
                header=header,
                diagnostics=reader.diagnostics,
                newlines=reader.newlines,
                read_as=self.navigation,
            )
            return empty, ([] if self.keep else None)
        header, skip_first = self._header(first)
        written = first[0][1].get("version") if skip_first else None
        # pydantic reads "1.0" or "3" as a number: the version as written is what is reported
        version = self._version(written if header.version is not None and skip_first else header.version)
        if self.navigation is None:  # no agent named: OpenClaw's own files are read as it reads them
            openclaw = version == OPENCLAW_SESSION_VERSION
        elif self.navigation == "openclaw":
            openclaw = version == OPENCLAW_SESSION_VERSION or _navigated_by_openclaw(
                first[0][1] if skip_first else None
            )
        else:  # pi walks every file's links as written, whatever its version
            openclaw = False
        if version == OPENCLAW_SESSION_VERSION:  # OpenClaw 2026.9's: entries read as version 3's, as it reads them
            version = CURRENT_SESSION_VERSION
        elif version > CURRENT_SESSION_VERSION:
            self.header_diags.append(
                diagnostic(
                    self.name,
                    1,
                    "unknown-version",
                    f"session version {version} is newer than "
                    f"{OPENCLAW_SESSION_VERSION}, the newest replaylab knows; reading it as version 3",
                    field="version",
                )
            )
        stream: Iterator[Item] = chain(first[1:] if skip_first else first, items)
        index = TranscriptIndex(
            path=self.path, header=header, diagnostics=[], source_version=version, read_as=self.navigation
        )
        relinked: list[int] = []
        if version < 2:
            stream = migrate_v1(stream, relinked)
        models = self._entries(stream, index, migrate_v2=version < 3, openclaw=openclaw)
        if relinked:
            shown = ", ".join(map(str, relinked[:5])) + (f" and {len(relinked) - 5} more" if len(relinked) > 5 else "")
            self.header_diags.append(
                diagnostic(
                    self.name,
                    relinked[0],
                    "v1-relinked",
                    f"a version-1 session's entries follow each other in file order, as pi's migration links "
                    f"them whatever ids and parents the file wrote: {len(relinked)} entries (lines {shown}) "
                    "are read with another parentId than the file's",
                    field="parentId",
                )
            )
        index.newlines = reader.newlines
        index.diagnostics = reader.diagnostics + self.header_diags + self.entry_diags
        if not self.acyclic:
            check_graph(index, self.name)
        leaf_path = index.leaf_path_ids()
        index.diagnostics.extend(check_first_kept(index, self.first_kept, self.name, leaf_path))
        self.first_kept = {}
        index.diagnostics.extend(check_pairing(leaf_path, self.pairing, index.line_of, self.name))
        self.pairing = {}
        if models is None or len(models) == len(index.ids):  # no id replaced: already in `ids` order
            return index, models
        return index, [models[index.slot_of[i]] for i in index.ids]

    # ---------------------------------------------------------- header

    def _header(self, first: list[Item]) -> tuple[SessionHeader, bool]:
        """The header and whether the first object was it (then it is not an entry)."""
        lineno, obj = first[0][:2]
        if obj.get("type") == "session" and isinstance(obj.get("id"), str):
            try:
                header = SessionHeader.model_validate(obj)
            except ValidationError as exc:
                self.header_diags.extend(
                    validation_diagnostics(
                        exc,
                        self.name,
                        lineno,
                        None,
                        code="header-field-type",
                        outcome="the header was read as it is (pi checks none of its fields' types)",
                        tagged=False,
                    )
                )
                header = SessionHeader.model_construct(**obj)
            if lineno != 1:
                self.header_diags.append(
                    diagnostic(self.name, lineno, "header-not-first", "the session header is not on line 1")
                )
            return header, True
        if obj.get("type") == "session":
            self.header_diags.append(
                diagnostic(self.name, lineno, "bad-header", "session header has no string 'id'", field="id")
            )
            version = obj.get("version") if isinstance(obj.get("version"), int) else None
            return SessionHeader(id=self.name.stem, version=version), True
        self.header_diags.append(
            diagnostic(
                self.name,
                lineno,
                "missing-header",
                f"line {lineno} is a {obj.get('type')!r} entry; expected a 'session' header first "
                "(pi would discard this file); entries read without a header",
                field="type",
            )
        )
        version = CURRENT_SESSION_VERSION if all("id" in i[1] for i in first) else 1
        return SessionHeader(id=self.name.stem, version=version), False

    def _version(self, raw: object) -> int | float:
        """The version the file is read as: pi's `header.version ?? 1`, compared as JavaScript
        compares it — a number as it is (a boolean as 0 or 1), a numeric string as its number,
        anything else as no number, which pi never migrates (read as the current version).
        Anything but a positive integer is reported (a warning: the file is read all the same)."""
        if raw is None:
            return 1
        if type(raw) is int and raw >= 1:
            return raw
        number = _js_number(raw)
        version: int | float = (
            CURRENT_SESSION_VERSION if number is None or number >= CURRENT_SESSION_VERSION else number
        )
        if number is not None and number < 2:
            version = 1
        shown = repr(raw) if len(repr(raw)) <= 40 else repr(raw)[:39] + "…"
        self.header_diags.append(
            diagnostic(
                self.name,
                1,
                "bad-version",
                f"session version {shown} is not a version number; read as version {version:g}, as pi reads it",
                field="version",
            )
        )
        return version

    # ---------------------------------------------------------- entries

    def _entries(
        self, stream: Iterator[Item], index: TranscriptIndex, *, migrate_v2: bool, openclaw: bool = False
    ) -> list[AnyEntry] | None:
        """Validate each object; record the skeleton (and the model when keeping them).
        `openclaw`: a file OpenClaw 2026.9 navigates (version 4, or 3 under its profile), whose load
        attaches an entry with no `parentId` key to its leaf.

        Without models, entries are validated by `skeleton_validator()`: the same schema, but
        giving plain dicts (much cheaper than building models that are dropped at once). When
        it rejects an entry, the model validator decides and words the diagnostic, so the
        diagnostics are exactly the eager load's."""
        model_validate = ENTRY_ADAPTER.validator.validate_python  # the adapter's own method only checks its options
        validate = model_validate if self.keep else skeleton_validator()
        name, diags = self.name, self.entry_diags
        ids, line_of, slot_of, type_of = index.ids, index.line_of, index.slot_of, index.type_of
        parents: list[str | None] = []
        slot_ids: list[str] = []
        offsets, subs = index.offsets, index.subs
        dead: set[int] = set()
        models: list[AnyEntry] | None = [] if self.keep else None
        pairing: dict[str, Pairing] = {}
        first_kept = self.first_kept
        duplicates = forward = False
        controls = LeafControls(attach_parentless=openclaw)
        for lineno, obj, offset, _, sub, patch in stream:
            entry_id = obj.get("id")
            if not isinstance(entry_id, str):
                diags.append(
                    diagnostic(
                        name,
                        lineno,
                        "missing-id",
                        f"{obj.get('type', 'untyped')!r} entry has no string 'id'; it cannot be "
                        "placed in the session tree and was skipped",
                        field="id",
                    )
                )
                continue
            if obj.get("type") == "session":
                diags.append(
                    diagnostic(
                        name,
                        lineno,
                        "extra-header",
                        "a second session header inside the file was ignored",
                        entry_id=entry_id,
                    )
                )
                continue
            if migrate_v2:
                migrate_v2_obj(obj)
            relinked = controls.place(obj, slot_of)
            if relinked is not KEEP:  # re-applied on every later read
                patch = {**(patch or {}), "parentId": relinked}
                obj = {**obj, "parentId": relinked}
            elif (unlinked := unlinked_parent_patch(obj)) is not None:  # read as pi reads it; re-applied too
                diags.append(
                    diagnostic(
                        name,
                        lineno,
                        "parent-not-string",
                        unlinked_parent_note(obj["parentId"]),
                        entry_id=entry_id,
                        field="parentId",
                    )
                )
                patch, obj = {**(patch or {}), **unlinked}, {**obj, **unlinked}
            read_opaque = False
            failed: ValidationError | None = None
            try:
                entry = validate(obj)
            except ValidationError as exc:
                repair = null_content_patch(obj)
                if repair is not None:  # read as pi reads it; re-applied on every later read
                    obj = {**obj, **repair}
                    patch = {**(patch or {}), **repair}
                    diags.append(diagnostic(name, lineno, "null-content", NULL_CONTENT_NOTE, entry_id=entry_id))
                failed = exc if validate is model_validate and repair is None else None
                if failed is None:
                    try:
                        entry = model_validate(obj)
                    except ValidationError as again:
                        failed = again
                if failed is not None and (opaque := opaque_content_patch(obj)) is not None:
                    try:  # read as the agents read it; re-applied on every later read
                        entry = model_validate({**obj, **opaque[0]})
                    except ValidationError:
                        pass  # unreadable for another reason too: reported as a whole below
                    else:
                        diags.extend(opaque_diagnostics(name, lineno, entry_id, opaque[1]))
                        diags.extend(unestimable_diagnostics(name, lineno, entry_id, obj))
                        read_opaque = True
                        failed, obj, patch = None, {**obj, **opaque[0]}, {**(patch or {}), **opaque[0]}
                if failed is not None:
                    stand_in = unreadable_entry(obj)
                    outcome = UNREADABLE_OUTCOME if stand_in is not None else "entry skipped"
                    diags.extend(validation_diagnostics(failed, name, lineno, entry_id, outcome=outcome))
                    if stand_in is None:
                        continue
                    entry = stand_in if models is not None else {"parent_id": stand_in.parent_id, "type": stand_in.type}
            if failed is None and (note := _usage_note(obj)) is not None:
                diags.append(diagnostic(name, lineno, "usage-type", note, entry_id=entry_id, field="message.usage"))
            if type(entry) is dict:  # skeleton validation: field names, defaults applied
                parent, kind = entry["parent_id"], entry["type"]
                record = pairing_record(entry["message"]) if kind == "message" else None
                if kind == "compaction":
                    first_kept[entry_id] = entry.get("first_kept_entry_id")
            else:
                parent, kind = entry.parent_id, entry.type
                record = pairing_record(entry.message) if type(entry) is MessageEntry else None
                if type(entry) is CompactionEntry:
                    first_kept[entry_id] = entry.first_kept_entry_id
            if record is not None and record[0] == ASSISTANT_CALLS and not read_opaque and argumentless_call(obj):
                # a well-formed message whose call has no arguments: judged mutating, and pi's
                # estimate throws on it (an opaque entry was warned about above)
                diags.extend(unestimable_diagnostics(name, lineno, entry_id, obj))
            slot = len(slot_ids)
            previous = slot_of.get(entry_id)
            if previous is not None:
                diags.append(
                    diagnostic(
                        name,
                        lineno,
                        "duplicate-id",
                        f"id also used on line {line_of[entry_id]}; the later entry wins (as in pi)",
                        entry_id=entry_id,
                    )
                )
                dead.add(previous)
                controls.side.discard(entry_id)
                pairing.pop(entry_id, None)
                if kind != "compaction":
                    first_kept.pop(entry_id, None)
                duplicates = True
            if parent is not None and parent not in slot_of:
                forward = True  # a parent not seen yet: dangling, or a link that may close a cycle
            slot_of[entry_id] = slot
            line_of[entry_id] = lineno
            slot_ids.append(entry_id)
            parents.append(parent)
            type_of[entry_id] = kind
            controls.placed(entry_id, kind, parent, obj)
            offsets.append(offset)
            if sub >= 0:
                subs[slot] = sub
            if patch:
                index.patches[slot] = patch
            if models is not None:
                models.append(entry)
            if record is not None:
                pairing[entry_id] = record
        index.side_ids = controls.side
        if models is not None:
            index.navigation = controls
        if duplicates:
            ids.extend(i for slot, i in enumerate(slot_ids) if slot not in dead)
            index.parent_of = {entry_id: parents[slot_of[entry_id]] for entry_id in ids}
        else:
            ids.extend(slot_ids)
            index.parent_of = dict(zip(slot_ids, parents))
        # every parent named an entry read before it and no id was replaced: the links only point
        # back in file order, so there is no dangling parent and no cycle to look for
        self.acyclic = not (duplicates or forward)
        self.pairing = pairing
        return models


def _navigated_by_openclaw(header: dict[str, Any] | None) -> bool:
    """Whether OpenClaw 2026.9 reads this header's file as its own: one it does not migrate (a header
    its schema finds, `version ?? 1` at least 3 as JavaScript compares it), whose entries its
    schema sorts and its navigation places as a version-4 file's (`SessionManager.buildIndex`)."""
    if header is None or not isinstance(header.get("id"), str):
        return False  # no header OpenClaw finds: a version-1 file it migrates
    number = _js_number(header.get("version", 1))
    return number is not None and number >= CURRENT_SESSION_VERSION


def _usage_note(obj: dict[str, Any]) -> str | None:
    """The warning for an assistant message whose `usage` is neither an object nor null (None
    otherwise): no agent's schema checks it, so the message is read and sent as written."""
    message = obj.get("message") if obj.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    usage = message.get("usage")
    if usage is None or isinstance(usage, dict):
        return None
    from replaylab.differences import json_type  # its import brings the scrubber: only for the note

    return (
        f"usage is a JSON {json_type(usage)}, not an object: the message is read as written, as the "
        "agents hold it, and no rule counts it as usage (JavaScript reads its token counts as undefined, "
        "a NaN sum: pi 1.6.0 and OpenClaw skip it, pi 0.73.1 takes it as the last usage and its "
        "context estimate is NaN)"
    )


def _js_number(value: object) -> float | None:
    """`Number(value)` where JavaScript's comparisons use it; None for NaN."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if value == value else None
    if isinstance(value, str):
        try:
            number = float(value.strip() or "0")
        except ValueError:
            return None
        return number if number == number else None
    return None
