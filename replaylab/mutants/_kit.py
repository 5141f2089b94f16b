"""What the mutants share: run the real compactor, then change what it wrote.

`edited(edit)` builds a mutant compactor: it runs the selftest's base compactor (replaylab's own
`compact()`, or the user's under `selftest --compactor`) on a scratch copy of the working copy,
hands the compaction entry it wrote to `edit(ctx)`, appends the (edited) entry — and any entries
the edit wants before it — to the pipeline's working copy, and returns the result as the
compactor's own. `edit` returns a short note when it changed something (the
session then counts as *applied*), or None when the session has nothing for it to break.

A mutant can only break what pi shows, and pi shows entries as they are stored: the summary, the
entries from `firstKeptEntryId` up to the compaction, and the ones after it — for replaylab's
safeguard, which keeps nothing itself when it summarizes a protected entry, the entries it
restates after its entry (`Ctx.after`). So a bug is expressed by moving `firstKeptEntryId`
(`move_first_kept`), by writing entries that pi then shows in place of the shown ones (`restate`:
a restated entry rewritten or left out, or the kept span re-appended from some entry on, a branch
that pi follows to the leaf), or by adding entries pi shows (`show`). Editing `details.replaylab`
changes nothing pi shows.

What a compactor protected is read off what it shows (`Ctx.protected`): the shown writes and calls
still awaiting a decision, with their shown results — the same for replaylab's entry and another
compactor's, which carries none of replaylab's bookkeeping.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replaylab.compaction import CompactParams, CompactResult, compact
from replaylab.compaction.cutpoint import CutPoint, compute_cut_point
from replaylab.compaction.window import window_item_json
from replaylab.safety.classify import ToolClassifier
from replaylab.selftest import applied, base_compactor, foreign_base
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.model import (
    ENTRY_ADAPTER,
    AnyEntry,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    dump_entry,
)
from replaylab.transcript.pairing import message_calls
from replaylab.transcript.tokens import estimate_tokens

if TYPE_CHECKING:
    from replaylab.transcript.writer import TranscriptWriter

#: what a restated copy's entry id adds to the id of the entry it restates
RESTATED_SUFFIX = "-restated"


@dataclass
class Ctx:
    """What an edit sees and may change."""

    params: CompactParams
    classifier: ToolClassifier
    path: list[AnyEntry]  # the working copy up to the compacted leaf
    entry: dict[str, Any]  # the compaction entry compact() wrote (JSON)
    result: CompactResult
    #: entries to append before the compaction entry (models, or JSON a compactor wrote)
    before: list[AnyEntry | dict[str, Any]] = field(default_factory=list)
    #: entries appended after the compaction entry (JSON): what replaylab's safeguard restates there
    after: list[dict[str, Any]] = field(default_factory=list)
    #: the entry the `before` entries hang from (None: the leaf; `restate` branches off earlier)
    branch_from: str | None = None
    #: the entry is another compactor's: it carries none of replaylab's bookkeeping
    foreign: bool = False
    _derived: list[str] | None = field(default=None, init=False, repr=False)

    @property
    def ours(self) -> dict[str, Any]:
        ours: dict[str, Any] = self.entry.setdefault("details", {}).setdefault("replaylab", {})
        return ours

    @property
    def protected(self) -> list[str]:
        """The shown entries protection is for (`kept_protection`), the same for any compactor."""
        if self._derived is None:
            self._derived = self.kept_protection()
        return self._derived

    def kept_protection(self) -> list[str]:
        """Shown mutating calls and calls with no result yet, with their shown results, in order."""
        kept = self.kept()
        kept_ids = {e.id for e in kept}
        results = self.result_entries(kept)
        index = {e.id: i for i, e in enumerate(kept)}
        out: set[str] = set()
        for entry in kept:
            calls = message_calls(entry.message) if isinstance(entry, MessageEntry) else []
            if calls and (self.is_mutating_call_entry(entry) or any(c.id not in results for c in calls)):
                out.add(entry.id)
                out.update(results[c.id].id for c in calls if c.id in results and results[c.id].id in kept_ids)
        return sorted(out, key=index.__getitem__)

    def after_entries(self) -> list[AnyEntry]:
        """`after` as entry models."""
        return [ENTRY_ADAPTER.validate_python(data) for data in self.after]

    def by_id(self) -> dict[str, AnyEntry]:
        return {e.id: e for e in [*self.path, *self.after_entries()]}

    def index(self) -> dict[str, int]:
        return {e.id: i for i, e in enumerate(self.path)}

    def first_kept_index(self) -> int:
        """Path index of the compaction's first kept entry (len(path): its own id, nothing kept)."""
        first_kept = self.entry.get("firstKeptEntryId")
        return self.index().get(first_kept, len(self.path)) if isinstance(first_kept, str) else len(self.path)

    def kept(self) -> list[AnyEntry]:
        """The entries pi shows after the summary: from `firstKeptEntryId` to the compacted leaf,
        then what the compactor appended after its entry."""
        return self.path[self.first_kept_index() :] + self.after_entries()

    def show(self, entries: list[AnyEntry]) -> None:
        """Entries pi shows right after the kept ones: before the compaction entry when it keeps a
        range, else after what it appended after itself."""
        if self.first_kept_index() < len(self.path):
            self.before.extend(entries)
        else:
            self.after.extend(dump_entry(e) for e in entries)

    def pis_cut(self) -> CutPoint:
        """pi's own cut for the tail size compact() used, before safeguard moved it back."""
        keep = self.result.cut_point.keep_recent_tokens if self.result.cut_point else 1
        return compute_cut_point(self.path, keep, self.params.boundary_rule)

    def move_first_kept(self, index: int) -> None:
        """Point `firstKeptEntryId` at the path entry at `index` (len(path): the compaction's own id)."""
        self.entry["firstKeptEntryId"] = self.path[index].id if index < len(self.path) else self.entry["id"]

    def is_mutating_call_entry(self, entry: AnyEntry) -> bool:
        return isinstance(entry, MessageEntry) and any(
            self.classifier.is_mutating(c.name, c.arguments) for c in message_calls(entry.message)
        )

    def result_entries(self, entries: list[AnyEntry] | None = None) -> dict[str, MessageEntry]:
        """tool call id → its (first) result entry on the path (or among `entries`)."""
        out: dict[str, MessageEntry] = {}
        for e in self.path if entries is None else entries:
            if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage):
                out.setdefault(e.message.tool_call_id, e)
        return out

    def restate(self, replaced: Mapping[str, Any]) -> None:
        """Write shown entries again in place of the ones pi shows: each entry of `replaced` with
        its new message, or left out for None. An entry the compactor appended after its entry is
        rewritten there; for one of the kept span, the span is re-appended from the first of them
        to the leaf as new entries (ids + `RESTATED_SUFFIX`, each naming the entry it restates),
        hanging from the entry before it, so pi, following the leaf, shows the copies and no
        longer the recorded entries from there on; `firstKeptEntryId` follows onto its copy."""
        appended = {data["id"] for data in self.after}
        self._rewrite_after({k: v for k, v in replaced.items() if k in appended})
        replaced = {k: v for k, v in replaced.items() if k not in appended}
        if not replaced:
            return
        index = self.index()
        start = min(index[entry_id] for entry_id in replaced)
        first_kept = self.first_kept_index()
        if start < first_kept:
            raise ValueError(f"entry {self.path[start].id} is summarized, not kept: pi does not show it")
        self.branch_from = self.path[start - 1].id if start else None
        copies: list[AnyEntry] = []
        for entry in self.path[start:]:
            if entry.id in replaced and replaced[entry.id] is None:
                continue
            update: dict[str, Any] = {"id": entry.id + RESTATED_SUFFIX, "restates": entry.restates or entry.id}
            if entry.id in replaced:
                update["message"] = replaced[entry.id]
            copies.append(entry.model_copy(update=update))
        self.before = list(copies)
        if first_kept == start:
            self.entry["firstKeptEntryId"] = copies[0].id if copies else self.entry["id"]

    def _rewrite_after(self, replaced: Mapping[str, Any]) -> None:
        """The entries appended after the compaction entry with `replaced` applied, chained again."""
        if not replaced:
            return
        out = []
        for data in self.after:
            if data["id"] in replaced:
                if replaced[data["id"]] is None:
                    continue
                data = {**data, "message": dump_entry(replaced[data["id"]])}
            out.append(data)
        parent = self.entry["id"]
        for data in out:
            data["parentId"] = parent
            parent = data["id"]
        self.after = out


Edit = Callable[[Ctx], "str | None"]


def edited(edit: Edit) -> Callable[..., CompactResult]:
    """A compactor: the base one, with `edit` applied to the compaction entry it writes."""

    def compactor(
        params: CompactParams, *, classifier: ToolClassifier | None = None, writer: TranscriptWriter | None = None
    ) -> CompactResult:
        foreign = foreign_base()
        with tempfile.TemporaryDirectory(prefix="replaylab-mutant-") as scratch:
            copy = Path(scratch) / Path(params.session_file).name
            run = _foreign_on_copy if foreign else _own_on_copy
            result, appended = run(params, copy, classifier)
            if not result.success:
                return result
        path = load_transcript(Path(params.session_file)).path_to(params.leaf_id)
        entry = next((e for e in appended if e.get("id") == result.compaction_event_id), appended[-1])
        ctx = Ctx(params, classifier or ToolClassifier(), path, entry, result, foreign=foreign)
        at = appended.index(entry)
        ctx.before = list(appended[:at])  # what the compactor wrote before its entry
        ctx.after = list(appended[at + 1 :])  # ... and after it (replaylab's restated entries)
        note = edit(ctx)
        assert writer is not None, "a mutant appends to the pipeline's working copy through its writer"
        return finish(ctx, writer, note)

    return compactor


def _own_on_copy(params: CompactParams, copy: Path, classifier: Any) -> tuple[CompactResult, list[dict[str, Any]]]:
    """replaylab's `compact()` writing its working copy at `copy`: what it appended (its entry and
    the entries it restates after it)."""
    result = compact(
        params.model_copy(
            update={"working_copy": str(copy), "child_sessions_dir": str(Path(params.session_file).parent)}
        ),
        classifier=classifier,
    )
    if not result.success:
        return result, []
    lines = [orjson.loads(line) for line in copy.read_bytes().splitlines() if line.strip()]
    start = next(i for i, data in enumerate(lines) if data.get("id") == result.compaction_event_id)
    return result, lines[start:]


def _foreign_on_copy(
    params: CompactParams, copy: Path, classifier: ToolClassifier | None
) -> tuple[CompactResult, list[dict[str, Any]]]:
    """The user's compactor appending to a copy of the working copy at `copy`: what it appended."""
    shutil.copyfile(params.session_file, copy)
    size = copy.stat().st_size
    update = {"session_file": str(copy), "child_sessions_dir": str(Path(params.session_file).parent)}
    result = base_compactor()(params.model_copy(update=update), classifier=classifier, writer=None)
    if not result.success:
        return result, []
    appended = copy.read_bytes()[size:].splitlines()
    return result, [orjson.loads(line) for line in appended if line.strip()]


def finish(ctx: Ctx, writer: TranscriptWriter, note: str | None) -> CompactResult:
    """Append the entries to the pipeline's working copy; the result describes what was written."""
    parent = ctx.branch_from if ctx.branch_from is not None else (ctx.path[-1].id if ctx.path else None)
    for extra in ctx.before:
        data = dump_entry(extra) if not isinstance(extra, dict) else extra
        data["parentId"] = parent
        writer.append(data)
        parent = data["id"]
    ctx.entry["parentId"] = parent
    writer.append(ctx.entry)
    leaf = ctx.entry["id"]
    for data in ctx.after:
        data["parentId"] = leaf
        writer.append(data)
        leaf = data["id"]
    return describe(ctx.result, writer.path, ctx.entry, note, leaf=leaf)


def describe(
    result: CompactResult, working_copy: Path, entry: dict[str, Any], note: str | None, *, leaf: str | None = None
) -> CompactResult:
    """`result` as the compaction `entry` that was written (`leaf`: the last entry written after it)."""
    leaf = leaf or entry["id"]
    after = build_window(load_transcript(Path(working_copy)).path_to(leaf))
    out = result.model_copy(deep=True)
    out.working_copy = str(working_copy)
    out.compaction_event_id = entry["id"]
    out.leaf_id = leaf
    out.first_kept_entry_id = entry.get("firstKeptEntryId")
    out.summary_text = entry.get("summary", "")
    out.protected_entry_ids = list((entry.get("details") or {}).get("replaylab", {}).get("protectedEntryIds", []))
    out.compacted_window = [window_item_json(w) for w in after]
    out.compacted_token_count = sum(estimate_tokens(w.message) for w in after)
    out.token_saved = out.original_token_count - out.compacted_token_count
    out.findings = []
    return applied(out, note) if note else out


def latest_compaction_in(path: list[AnyEntry]) -> CompactionEntry | None:
    return next((e for e in reversed(path) if isinstance(e, CompactionEntry)), None)


def orphan_cut(ctx: Ctx, *, after_index: int = -1) -> str | None:
    """Move `firstKeptEntryId` back onto a tool result whose call the summary swallowed: the window
    then starts that tail with an orphan result. Prefers a result of an aborted / errored call
    (openclaw#7527's shape). Returns the note, or None."""
    cut = ctx.first_kept_index()
    calls_at = {
        c.id: i for i, e in enumerate(ctx.path) if isinstance(e, MessageEntry) for c in message_calls(e.message)
    }
    candidates: list[tuple[bool, int, MessageEntry, ToolResultMessage]] = []
    for i in range(cut - 1, max(after_index, -1), -1):
        e = ctx.path[i]
        if not (isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)):
            continue
        call_at = calls_at.get(e.message.tool_call_id)
        if call_at is None or call_at >= i:
            continue
        call_message = getattr(ctx.path[call_at], "message", None)  # the entry of a call: a message entry
        aborted = getattr(call_message, "stop_reason", None) in ("aborted", "error")
        candidates.append((not aborted, -i, e, e.message))
    if not candidates:
        return None
    _, _, chosen, result = min(candidates, key=lambda c: (c[0], c[1]))
    ctx.entry["firstKeptEntryId"] = chosen.id
    return f"firstKeptEntryId moved onto tool result {chosen.id} ({result.tool_name}); its call is summarized"
