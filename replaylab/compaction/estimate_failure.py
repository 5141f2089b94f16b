"""Where the item's agent cannot compact because its own token estimate or summarizer fails on a
message of the path (its profile's `unestimable` rules), so the compaction replaylab would make
describes a run the agent never reaches.

A content item the agent's `estimateTokens` cannot count (`transcript.unestimable`) makes it throw
or give NaN. replaylab counts what it can read; the agent's `prepareCompaction` instead
* throws when such a message lies in the context after its last usage (`tokensBefore`), or when
  `findCutPoint`, walking back from the leaf, reaches it before the kept tail is full;
* with a NaN, walks on to the boundary (no sum reaches keepRecentTokens) and cuts at the first
  valid cut point there: nothing older is left to summarize;
and its default summarizer (not safeguard's, whose summary is its own) throws on an item it cannot
serialize among the messages it summarizes. Each is refused as the agent fails, naming the entry,
its line, the field and what the agent does.

An agent whose `prepareCompaction` also estimates the whole context (OpenClaw 2026.9.6, its own
estimate: `UnestimableRules.whole_context`) throws wherever in the context such a message lies, and
with a NaN there finds its cut with the NaN through its own cut rules (an unscaled tail budget, a
sum that never reaches it): refused when that cut leaves nothing to summarize.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from replaylab.compaction.job import Job
from replaylab.compaction.params import Failure
from replaylab.compaction.plan import Plan, agent_refusal
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.memo import identity
from replaylab.transcript.model import (
    AnyEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    OpaqueBlock,
    ToolCallBlock,
    dump_entry,
)
from replaylab.transcript.object_content import ObjectContent
from replaylab.transcript.tokens import estimate_context_tokens
from replaylab.transcript.unestimable import (
    estimate_throws,
    openclaw_unestimable_item,
    openclaw_unserializable_item,
    unestimable_item,
    unserializable_item,
)
from replaylab.upstream.profiles import UnestimableRules

#: where an entry was read: its file and line (entries a parse warned about)
Lines = Mapping[str, tuple[str, int]]


class _Throws(Exception):
    """The agent's estimate throws on this message."""

    def __init__(self, message: Any) -> None:
        super().__init__()
        self.message = message


#: by entry id, the items the agent's estimate and its summarizer fail on (`failing_items`)
Failing = tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]


def failing_items(job: Job, path: Sequence[AnyEntry]) -> Failing | None:
    """What the agent's estimate and summarizer fail on along `path` (None: its profile names no
    such rules), found once for a compaction's `agent_tokens` and `estimate_failure`."""
    rules = job.profile.unestimable
    return None if rules is None else _failing_items(path, rules)


def estimate_failure(
    job: Job,
    path: list[AnyEntry],
    before: list[WindowMessage],
    plan: Plan,
    lines: Lines,
    failing: Failing | None = None,
) -> Failure | None:
    """The failure of the agent's own compaction of `path` at `plan`'s cut, where a message it
    cannot estimate or serialize makes it fail (None: the agent compacts as replaylab does).
    `failing`: `failing_items` of the path, when already found."""
    rules = job.profile.unestimable
    if rules is None:
        return None
    estimate, serialize = failing if failing is not None else _failing_items(path, rules)
    if not estimate and not serialize:
        return None
    failed = (
        _whole_context_failure(job, path, before, plan, rules, estimate, lines)
        if rules.whole_context
        else _tail_failure(job, path, before, plan, rules, estimate, lines)
    )
    if failed is not None or rules.serializer_outcome is None or job.safeguard_like:
        return failed
    history_end = plan.cut.turn_start_index if plan.cut.is_split_turn else plan.cut.first_kept_index
    summarized = [path[i] for i in range(plan.cut.boundary_start, history_end)] + [
        path[i] for i in range(plan.cut.turn_start_index, plan.cut.first_kept_index) if plan.cut.is_split_turn
    ]
    shown = {w.entry_id for w in before} if rules.whole_context else None
    for entry in summarized:
        if entry.id in serialize and (shown is None or entry.id in shown):
            return _refusal(
                job.profile.label,
                entry.id,
                serialize[entry.id],
                lines,
                "the messages it summarizes",
                rules.serializer_outcome,
            )
    return None


def _tail_failure(
    job: Job,
    path: list[AnyEntry],
    before: list[WindowMessage],
    plan: Plan,
    rules: UnestimableRules,
    estimate: Mapping[str, tuple[str, str]],
    lines: Lines,
) -> Failure | None:
    """pi's: a throw in the context after its last usage or in the tail its cut walks, a NaN there
    that leaves nothing to summarize."""
    label = job.profile.label
    throwing = {k: v for k, v in estimate.items() if estimate_throws(v[1])}
    found = _context_throw(job, before, throwing)
    if found is not None:
        extra = f"; {rules.context_check_outcome}" if rules.context_check_outcome else ""
        return _refusal(
            label,
            found,
            throwing[found],
            lines,
            "the context after its last usage (tokensBefore)",
            rules.throw_outcome + extra,
        )
    walked = _cut_walk(job, path, plan, rules, estimate)
    if isinstance(walked, str):
        return _refusal(
            label,
            walked,
            estimate[walked],
            lines,
            "the tail findCutPoint walks back from the leaf",
            rules.throw_outcome,
        )
    if walked is not None and not _summarized_before_first_cut(path, plan.cut.boundary_start):
        entry_id, (field, _) = walked
        return Failure(
            rules.nan_failure,
            f"nothing to compact: {label}'s estimateTokens gives NaN on entry "
            f"{entry_id}{_at(lines, entry_id)} ({field}): {rules.nan_outcome}",
        )
    return None


def _whole_context_failure(
    job: Job,
    path: list[AnyEntry],
    before: list[WindowMessage],
    plan: Plan,
    rules: UnestimableRules,
    estimate: Mapping[str, tuple[str, str]],
    lines: Lines,
) -> Failure | None:
    """OpenClaw's: a throw anywhere in the context; a NaN there whose cut (`plan`'s, found with
    `agent_tokens`) leaves nothing to summarize where its count's would not. A message kept out of
    the context (kept aside as the session loads, or excluded) is never estimated, nor is any when
    the leaf alone refuses."""
    if job.rules is None or agent_refusal(job, path):
        return None
    shown = [w.entry_id for w in before if w.entry_id is not None and w.entry_id in estimate]
    for entry_id in shown:
        if estimate_throws(estimate[entry_id][1]):
            return _refusal(
                job.profile.label,
                entry_id,
                estimate[entry_id],
                lines,
                "the context its prepareCompaction estimates whole (totalEstimatedTokens)",
                rules.throw_outcome,
            )
    if not shown or not getattr(plan.cut, "refused", None) or getattr(job.cut(path, plan.keep_recent), "refused", None):
        return None  # the NaN did not make the cut refuse: its own refusal stands
    field, _ = estimate[shown[0]]
    return Failure(
        rules.nan_failure,
        f"nothing to compact: {job.profile.label}'s estimateTokens gives NaN on entry "
        f"{shown[0]}{_at(lines, shown[0])} ({field}): {rules.nan_outcome}",
    )


def agent_tokens(
    job: Job, path: list[AnyEntry], before: list[WindowMessage], failing: Failing | None = None
) -> Callable[[Any], float] | None:
    """The estimate the agent cuts with where its own estimate gives NaN on a message of the context
    and its `prepareCompaction` estimates the whole context (`UnestimableRules.whole_context`):
    NaN for those messages, `job.tokens` for the others; None when no such message is there (or
    the agent's cut is not found through its own rules), so replaylab's count stands. `failing`:
    `failing_items` of the path, when already found."""
    rules = job.profile.unestimable
    if rules is None or not rules.whole_context or job.rules is None:
        return None
    estimate, _ = failing if failing is not None else _failing_items(path, rules)
    shown = {w.entry_id for w in before if w.entry_id in estimate and not estimate_throws(estimate[w.entry_id][1])}
    if not shown:
        return None
    # the cut reads the messages its rules project from the entries, which hold the entries' contents
    contents = {identity(_content(entry)) for entry in path if entry.id in shown}

    def tokens(message: Any) -> float:
        return math.nan if identity(getattr(message, "content", None)) in contents else job.tokens(message)

    return tokens


def _content(entry: AnyEntry) -> Any:
    if isinstance(entry, MessageEntry):
        return getattr(entry.message, "content", None)
    return getattr(entry, "content", None)


def _failing_items(path: Sequence[AnyEntry], rules: UnestimableRules) -> Failing:
    """By entry id: the item the agent's estimate fails on, and the item its summarizer cannot
    serialize (only an entry with an item no block model reads, a tool result's object content or a
    call without arguments can hold one)."""
    estimate_item, serialize_item = _ITEMS[rules.items]
    estimate: dict[str, tuple[str, str]] = {}
    serialize: dict[str, tuple[str, str]] = {}
    for entry in path:
        if not _suspect(entry):
            continue
        obj = dump_entry(entry)
        if (found := estimate_item(obj)) is not None:
            estimate[entry.id] = found
        if (found := serialize_item(obj)) is not None:
            serialize[entry.id] = found
    return estimate, serialize


#: whose estimate and summarizer read an entry's items (`UnestimableRules.items`)
_ITEMS: dict[str, tuple[Callable[[dict[str, Any]], tuple[str, str] | None], ...]] = {
    "pi": (unestimable_item, unserializable_item),
    "openclaw": (openclaw_unestimable_item, openclaw_unserializable_item),
}


def _suspect(entry: AnyEntry) -> bool:
    if isinstance(entry, MessageEntry):
        content = getattr(entry.message, "content", None)
    elif isinstance(entry, CustomMessageEntry):
        content = entry.content
    else:
        return False
    if type(content) is ObjectContent:
        return True
    return isinstance(content, list) and any(
        isinstance(b, OpaqueBlock) or (isinstance(b, ToolCallBlock) and "arguments" not in b.model_fields_set)
        for b in content
    )


def _context_throw(job: Job, before: list[WindowMessage], throwing: Mapping[str, tuple[str, str]]) -> str | None:
    """The entry whose message the agent's `tokensBefore` throws on: one of the context after its
    last usage (every one without a usage), as the item's rules read the usage."""
    bad = {id(w.message): w.entry_id for w in before if w.entry_id in throwing}
    if not bad:
        return None

    def probe(message: Any) -> int:
        if id(message) in bad:
            raise _Throws(message)
        return job.tokens(message)

    context: Callable[[Sequence[Any], Callable[[Any], int]], Any] = (
        job.rules.context_tokens if job.rules is not None else estimate_context_tokens
    )
    try:
        context([w.message for w in before], probe)
    except _Throws as thrown:
        return bad[id(thrown.message)]
    return None


def _cut_walk(
    job: Job, path: list[AnyEntry], plan: Plan, rules: UnestimableRules, estimate: Mapping[str, tuple[str, str]]
) -> str | tuple[str, tuple[str, str]] | None:
    """`findCutPoint`'s walk back from the leaf until its sum reaches the tail: the id of the entry
    it throws on, or (the id, item) of the first one that made the sum NaN when it walked on to the
    boundary; None when it ends as replaylab's count does."""
    total = 0.0
    nan: tuple[str, tuple[str, str]] | None = None
    for index in range(len(path) - 1, plan.cut.boundary_start - 1, -1):
        entry = path[index]
        if entry.type not in rules.cut_walk_types:
            continue
        found = estimate.get(entry.id)
        if found is not None and estimate_throws(found[1]):
            return entry.id
        if found is not None:
            nan = nan or (entry.id, found)
            total = math.nan
        elif isinstance(entry, MessageEntry):
            total += job.entry_tokens(entry)
        elif (message := entry_to_message(entry)) is not None:
            total += job.tokens(message)
        if total >= plan.keep_recent:  # never with a NaN
            return None
    return nan


def _summarized_before_first_cut(path: list[AnyEntry], boundary_start: int) -> bool:
    """Whether a cut at the first valid cut point after the boundary leaves a message to summarize
    before it (a tool result first: pi never cuts at one)."""
    for entry in path[boundary_start:]:
        if isinstance(entry, CompactionEntry):
            continue
        message = entry_to_message(entry)
        if message is None:
            continue
        return getattr(message, "role", None) == "toolResult"
    return False


def _refusal(label: str, entry_id: str, item: tuple[str, str], lines: Lines, where: str, outcome: str) -> Failure:
    field, how = item
    return Failure(
        "agent_refuses",
        f"nothing to compact: {label} would not compact here: entry {entry_id}{_at(lines, entry_id)} ({field}) "
        f"is in {where}, and its {how}: {outcome}",
    )


def _at(lines: Lines, entry_id: str) -> str:
    found = lines.get(entry_id)
    return f" ({found[0]}, line {found[1]:,})" if found else ""
