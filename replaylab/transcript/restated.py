"""Restated entries: an earlier entry written again, byte for byte, after a compaction.

Why: a safeguard compaction must leave every protected entry (a mutating call, its results, a
pending approval) in the context the agent rebuilds, verbatim and in order, while summarizing
everything else older than the kept tail. pi's rebuild shows the summary, the contiguous range
from `firstKeptEntryId` up to the compaction, and every entry after it; the protected entries are
not contiguous, so the compaction keeps nothing itself (`firstKeptEntryId` = its own id) and the
entries appended after it restate, in order, the protected entries it summarized past and then
the kept tail (`compaction.restate`).

A restated entry is the recorded entry with a new `id` and `parentId` and one field added,
`restates`: the id of the entry it restates (of the very first one, when it restates a restated
entry). Everything else — the message, the timestamps, extra fields — is the recorded JSON.

`restates` is a claim, and replaylab does not take a compactor's word: an entry counts as the
same entry as its source only when the source is earlier on the same path and every field but
`id`, `parentId` and `restates` is equal (`restated_sources`). Then the ledger, the turns, the
replay and every report know it as that entry: the same event, never a second side effect. An
entry whose claim does not hold is an entry of its own (and the invariants judge it so).

One declared exception, for `allowMutatingEventTruncate`: a restated tool result may be shortened
(OpenClaw's tool-result truncation) when it says so — `truncatedFrom: {chars, sha256}`, the
length of the recorded text and the sha256 of the recorded message's canonical JSON. It is the
same entry when that hash is its source's and nothing but its text differs (`truncated_restatements`);
whether the truncation was allowed is for the invariants to judge.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any

from replaylab.cassette import canonical_json
from replaylab.transcript.model import AnyEntry, MessageEntry, ToolResultMessage, dump_entry, message_text

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

#: the entry-level field naming the entry a copy restates (pi and OpenClaw ignore unknown fields)
RESTATES = "restates"
#: the entry-level field of a restated tool result shortened under allowMutatingEventTruncate
TRUNCATED_FROM = "truncatedFrom"
#: fields of a restated entry that are its own; every other field is the source's
OWN_FIELDS = frozenset({"id", "parentId", RESTATES})
#: ... and of a declared truncation, whose message is checked on its own
TRUNCATION_FIELDS = OWN_FIELDS | {TRUNCATED_FROM, "message"}


def restated_copy(
    entry: AnyEntry, *, entry_id: str, parent_id: str | None, source_id: str, truncated: Any = None
) -> dict[str, Any]:
    """The JSON of `entry` restated as `entry_id` after `parent_id`; `source_id` is the entry it
    stands for (the first of a chain of restatements). `truncated`: a shortened tool result to
    write in place of its message (allowMutatingEventTruncate), declared as such."""
    data = dump_entry(entry)
    data["id"], data["parentId"], data[RESTATES] = entry_id, parent_id, source_id
    if truncated is not None:
        recorded = entry.message  # type: ignore[union-attr]
        data[TRUNCATED_FROM] = {"chars": len(message_text(recorded)), "sha256": message_sha256(recorded)}
        data["message"] = dump_entry(truncated)
    return data


def message_sha256(message: Any) -> str:
    """sha256 of a message's canonical JSON (sorted keys), as a declared truncation names it."""
    return hashlib.sha256(canonical_json(dump_entry(message)).encode()).hexdigest()


def _content(entry: AnyEntry, own: frozenset[str] = OWN_FIELDS) -> bytes:
    data = dump_entry(entry)
    return canonical_json({k: v for k, v in data.items() if k not in own}).encode()


def _declared_truncation(entry: AnyEntry, source: AnyEntry) -> bool:
    """`entry` is `source`, a tool result, with its text shortened and the truncation declared."""
    declared = getattr(entry, "truncated_from", None)
    if not (isinstance(declared, dict) and isinstance(entry, MessageEntry) and isinstance(source, MessageEntry)):
        return False
    mine, recorded = entry.message, source.message
    return (
        isinstance(mine, ToolResultMessage)
        and isinstance(recorded, ToolResultMessage)
        and (mine.tool_call_id, mine.tool_name, mine.is_error)
        == (recorded.tool_call_id, recorded.tool_name, recorded.is_error)
        and declared.get("sha256") == message_sha256(recorded)
        and _content(entry, TRUNCATION_FIELDS) == _content(source, TRUNCATION_FIELDS)
    )


_RESTATES = operator.attrgetter("restates")

#: what `judged` finds of a claim: not its source's content, its source's content, a declared truncation
DIFFERENT, SAME, TRUNCATED = 0, 1, 2


def judged(entry: AnyEntry, source: AnyEntry) -> int:
    """Whether `entry` is `source` restated (`SAME`), shortened as declared (`TRUNCATED`), or not."""
    if _content(entry) == _content(source):
        return SAME
    return TRUNCATED if _declared_truncation(entry, source) else DIFFERENT


def restates_any(path: Sequence[AnyEntry]) -> bool:
    """Whether an entry of `path` claims to restate another (read at C speed)."""
    return any(map(_RESTATES, path))


def restatements(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> tuple[dict[str, str], frozenset[str]]:
    """(entry id → the id of the entry it restates, followed to the first of a chain — for every
    entry of `path` whose `restates` names an earlier entry of the path with the same content;
    the ids among them that are declared truncations of their source). Empty for a path with no
    restated entry (the usual recording: nothing is dumped). With an item's `memo`, each pair of
    entry objects is judged once (`ItemMemo.claim`), and the same path answered once
    (`ItemMemo.path_restatements`)."""
    if memo is None:
        return _restatements(path, None)
    sources, truncated = memo.path_restatements(path, lambda same: _restatements(same, memo))
    return dict(sources), truncated  # the caller's own: the next ask gets the kept answer


def _restatements(path: Sequence[AnyEntry], memo: ItemMemo | None) -> tuple[dict[str, str], frozenset[str]]:
    # at C speed (`compress`): every window of a long session's every compaction asks, over its whole path
    claims = list(compress(range(len(path)), map(_RESTATES, path)))
    if not claims:
        return {}, frozenset()
    position: dict[str, int] = {}
    for index, entry in enumerate(path[: claims[-1]]):
        position.setdefault(entry.id, index)
    sources: dict[str, str] = {}
    truncated: set[str] = set()
    for index in claims:
        entry = path[index]
        at = position.get(entry.restates or "")
        if at is None or at >= index:
            continue
        source = path[at]
        if source.id in truncated:
            continue  # a copy of a shortened copy: its source's bytes are gone
        verdict = judged(entry, source) if memo is None else memo.claim(entry, source, judged)
        if verdict != DIFFERENT:
            sources[entry.id] = sources.get(source.id, source.id)
        if verdict == TRUNCATED:
            truncated.add(entry.id)
    return sources, frozenset(truncated)


def restated_sources(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> dict[str, str]:
    """The first part of `restatements`: entry id → the recorded entry it restates."""
    return restatements(path, memo)[0]


def without_restatements(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[AnyEntry]:
    """`path` without the entries that restate an earlier entry of it: the session as it happened,
    each entry once (turns, the calls that ran, the ledger)."""
    sources = restated_sources(path, memo)
    return [entry for entry in path if entry.id not in sources] if sources else list(path)
