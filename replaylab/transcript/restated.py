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
same entry when that hash and that length are its source's, nothing but its content differs, and
that content is what OpenClaw's truncation makes of the source's (`is_cut_content`: each text a
head of the recorded text, with the middle marker a tail too, then a truncation notice; or the
aggregate elision marker; the images a subset, with OpenClaw's image notice) — a text replaced by
another is no truncation, whatever it declares; whether the truncation was allowed is for the
invariants to judge.

A second declared exception, for a message OpenClaw showed only because a `reset` kept it: OpenClaw
rebuilds a reset's kept user / assistant messages and their results even when one is marked
`excludeFromContext`, and shows such a message nowhere else, so a byte-for-byte copy after a
compaction would be invisible and its mutating call lost. The copy is written without the mark and
says so — `excludeFromContextDropped: true` — and is the same entry when its message is its
source's, whose mark was `true`, without that one key, and nothing else differs. pi reads the mark
only on a `bashExecution` message, which is never copied so.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any

from replaylab.cassette import canonical_json
from replaylab.transcript.javascript import utf16_length
from replaylab.transcript.model import (
    AnyEntry,
    MessageEntry,
    ToolResultMessage,
    dump_entry,
    message_text,
)
from replaylab.transcript.opaque_content import read_entry
from replaylab.upstream.openclaw_2026_4_12 import MIDDLE_OMISSION_MARKER
from replaylab.upstream.openclaw_2026_9_6 import AGGREGATE_ELISION_MARKER

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
#: the message mark OpenClaw leaves out of every context but a reset's kept range
EXCLUDE_FROM_CONTEXT = "excludeFromContext"
#: the entry-level field of a restated message written without that mark
EXCLUSION_DROPPED = "excludeFromContextDropped"


def restated_copy(
    entry: AnyEntry,
    *,
    entry_id: str,
    parent_id: str | None,
    source_id: str,
    truncated: Any = None,
    shown: bool = False,
) -> dict[str, Any]:
    """The JSON of `entry` restated as `entry_id` after `parent_id`; `source_id` is the entry it
    stands for (the first of a chain of restatements). `truncated`: a shortened tool result to
    write in place of its message (allowMutatingEventTruncate), declared as such. `shown`: the
    window before the compaction showed the entry; a message it showed although marked
    `excludeFromContext` is written without the mark, declared as such."""
    data = dump_entry(entry)
    data["id"], data["parentId"], data[RESTATES] = entry_id, parent_id, source_id
    dropped = shown and excluded_by_mark(entry)
    if dropped:
        del data["message"][EXCLUDE_FROM_CONTEXT]
        data[EXCLUSION_DROPPED] = True
    if truncated is not None:
        recorded = entry.message  # type: ignore[union-attr]
        # the truncation is declared of the message the copy stands for: without the mark when it drops it
        unmarked = data["message"] if dropped else dump_entry(recorded)
        data[TRUNCATED_FROM] = {"chars": len(message_text(recorded)), "sha256": _sha256_of(unmarked)}
        data["message"] = dump_entry(truncated)
        if dropped:
            data["message"].pop(EXCLUDE_FROM_CONTEXT, None)
    return data


def _sha256_of(dumped: Any) -> str:
    return hashlib.sha256(canonical_json(dumped).encode()).hexdigest()


def excluded_by_mark(entry: AnyEntry) -> bool:
    """A message entry whose message is `marked`."""
    return isinstance(entry, MessageEntry) and marked(entry.message)


def marked(message: Any) -> bool:
    """A user, assistant or tool-result message marked `excludeFromContext: true`, which OpenClaw
    shows only in a reset's kept range (a `bashExecution`'s mark is pi's too, and pi never shows it)."""
    if getattr(message, "role", None) not in _MARKABLE_ROLES:
        return False
    extras = getattr(message, "__pydantic_extra__", None)
    return extras is not None and extras.get(EXCLUDE_FROM_CONTEXT) is True


def without_mark(message: Any) -> Any:
    """A `marked` message as a copy written without the mark holds it (its estimate is the agent's
    of the message shown)."""
    data = dump_entry(message)
    del data[EXCLUDE_FROM_CONTEXT]
    return type(message).model_validate(data)


_MARKABLE_ROLES = frozenset({"user", "assistant", "toolResult"})


def message_sha256(message: Any) -> str:
    """sha256 of a message's canonical JSON (sorted keys), as a declared truncation names it."""
    return _sha256_of(dump_entry(message))


def _content(entry: AnyEntry, own: frozenset[str] = OWN_FIELDS) -> bytes:
    data = dump_entry(entry)
    return canonical_json({k: v for k, v in data.items() if k not in own}).encode()


#: OpenClaw's truncation notice that ends a cut text: `[... N more characters truncated]`, 2026.9.6's
#: `…; rerun with narrower args if needed`, the recovery's `[... N chars truncated; narrow args]`
_NOTICE = re.compile(r"\[\.\.\. [^\[\]]*truncated[^\[\]]*\]\s*\Z")
#: OpenClaw 2026.9.6's notice for the images its guard left out of a result
_IMAGE_NOTICE = re.compile(r"\A\[\d+ images? omitted from context[^\[\]]*\]\Z")


def is_cut_text(short: str, text: str) -> bool:
    """`short` is `text` as OpenClaw's tool-result truncation leaves it: unchanged; a head of it
    (with the middle marker, a head and a tail) followed by a truncation notice; or the aggregate
    elision marker cut to a budget. Nothing else: a text replaced by another is no truncation."""
    if short == text:
        return True
    if short and AGGREGATE_ELISION_MARKER.startswith(short):
        return True
    notice = _NOTICE.search(short)
    if notice is None:
        return False
    head, marker, tail = short[: notice.start()].partition(MIDDLE_OMISSION_MARKER)
    if text.isascii():
        return len(head) + len(tail) < len(text) and text.startswith(head) and (not marker or text.endswith(tail))
    # by UTF-16 units, as OpenClaw slices: 2026.4.12 may cut between the halves of a pair, a half
    # its file holds as a lone surrogate escape and replaylab reads as U+FFFD (`transcript.jsonl`)
    units = text.encode("utf-16-le", "surrogatepass")
    head_units, tail_units = 2 * utf16_length(head), 2 * utf16_length(tail)
    return (
        head_units + tail_units < len(units)
        and _as_read(units[:head_units]) == head
        and (not marker or _as_read(units[len(units) - tail_units :]) == tail)
    )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_read(units: bytes) -> str:
    """UTF-16 units as replaylab reads them from a file: each lone surrogate U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", units.decode("utf-16-le", "surrogatepass"))


def is_cut_content(mine: Any, recorded: Any) -> bool:
    """A tool result's `content` (`mine`) is the recorded one cut by OpenClaw's truncation: a
    string a cut of the recorded string; a list whose text blocks are cuts of the recorded text
    blocks, in order, every one of them, and whose other blocks are recorded blocks, in order (the
    guard may leave images out, saying so in a notice block of its own)."""
    if isinstance(mine, str) or isinstance(recorded, str):
        return isinstance(mine, str) and isinstance(recorded, str) and is_cut_text(mine, recorded)
    blocks = [dump_entry(b) if not isinstance(b, dict) else b for b in recorded or []]
    texts = iter([b for b in blocks if b.get("type") == "text"])
    others = iter([b for b in blocks if b.get("type") != "text"])
    omitted, noticed = 0, False
    for block in (dump_entry(b) if not isinstance(b, dict) else b for b in mine or []):
        if block.get("type") != "text":
            for other in others:  # a recorded block, in order
                if block == other:
                    break
                omitted += 1
            else:
                return False
            continue
        text = block.get("text")
        if isinstance(text, str) and _IMAGE_NOTICE.match(text):
            noticed = True
            continue
        source = next(texts, None)
        if (
            source is None
            or {k: v for k, v in block.items() if k != "text"} != {k: v for k, v in source.items() if k != "text"}
            or not isinstance(text, str)
            or not is_cut_text(text, str(source.get("text", "")))
        ):
            return False
    # OpenClaw cuts every text block and leaves none out; the blocks its guard leaves out, it says so
    omitted += sum(1 for _ in others)
    return next(texts, None) is None and (not omitted or noticed)


def _declared_truncation(entry: AnyEntry, source: AnyEntry) -> bool:
    """`entry` is `source`, a tool result, with its content cut as OpenClaw cuts a tool result
    (`is_cut_content`), and the truncation declared with the source's hash and text length."""
    declared = getattr(entry, "truncated_from", None)
    if not (isinstance(declared, dict) and isinstance(entry, MessageEntry) and isinstance(source, MessageEntry)):
        return False
    mine, recorded = entry.message, source.message
    if not (isinstance(mine, ToolResultMessage) and isinstance(recorded, ToolResultMessage)):
        return False
    mine_data, recorded_data = dump_entry(mine), dump_entry(recorded)
    return (
        declared.get("sha256") == message_sha256(recorded)
        and declared.get("chars") == len(message_text(recorded))
        and {k: v for k, v in mine_data.items() if k != "content"}
        == {k: v for k, v in recorded_data.items() if k != "content"}
        and is_cut_content(mine_data.get("content"), recorded_data.get("content"))
        and _content(entry, TRUNCATION_FIELDS) == _content(source, TRUNCATION_FIELDS)
    )


_RESTATES = operator.attrgetter("restates")

#: what `judged` finds of a claim: not its source's content, its source's content, a declared truncation
DIFFERENT, SAME, TRUNCATED = 0, 1, 2


def _unmarked(entry: AnyEntry, source: AnyEntry) -> AnyEntry | None:
    """When `entry` declares the mark dropped (`EXCLUSION_DROPPED`) and `source` is a message marked
    `excludeFromContext: true`: `source` as such a copy writes it — its message without the mark,
    the declaration at entry level — for `judged` to hold `entry` to, byte for byte (or as a declared
    truncation of it); else None."""
    if getattr(entry, "exclude_from_context_dropped", None) is not True or not isinstance(entry, MessageEntry):
        return None
    if not excluded_by_mark(source):
        return None
    data = dump_entry(source)
    del data["message"][EXCLUDE_FROM_CONTEXT]
    data[EXCLUSION_DROPPED] = True
    return read_entry(data)  # its content items as the load read them


def judged(entry: AnyEntry, source: AnyEntry) -> int:
    """Whether `entry` is `source` restated (`SAME`, also without a mark a reset alone honoured),
    shortened as declared (`TRUNCATED`, also without that mark), or not."""
    if _content(entry) == _content(source):
        return SAME
    unmarked = _unmarked(entry, source)
    if unmarked is not None:
        if _content(entry) == _content(unmarked):
            return SAME
        source = unmarked
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
