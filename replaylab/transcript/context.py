"""Rebuild the model's window from a leaf path, exactly as pi's `buildSessionContext` does.

Nothing replaylab writes changes what is shown: the window is pi's. It only knows more about two
kinds of items, for the reports and checks: an entry that restates an earlier one byte for byte
(`transcript.restated`; `WindowMessage.restates` names its source), and the entries a safeguard
compaction protected (`details.replaylab.protectedEntryIds`, source ids; pi ignores the list),
which are marked `protected`. Reference: openclaw-internals.md §2.7.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from replaylab.transcript.javascript import date_time_ms, js_string, js_truthy, number_or_none
from replaylab.transcript.memo import identity
from replaylab.transcript.model import (
    AnyEntry,
    BashExecutionMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    CustomMessage,
    CustomMessageEntry,
    MessageEntry,
)
from replaylab.transcript.restated import restatements
from replaylab.upstream.pi_0_73_1 import (
    BASH_CANCELLED,
    BASH_EXECUTION_PREFIX,
    BASH_EXIT_CODE,
    BASH_NO_OUTPUT,
    BASH_OUTPUT_TRUNCATED,
)

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo


@dataclass(frozen=True)
class WindowMessage:
    """One message of a window, with the entry it came from (None for a synthesized one)."""

    entry_id: str | None
    message: Any
    protected: bool = False
    #: the earlier entry this item's entry restates byte for byte (`transcript.restated`), if any
    restates: str | None = None
    #: the restatement is a declared truncation of its source (a tool result, allowMutatingEventTruncate)
    truncated: bool = False

    @property
    def source_id(self) -> str | None:
        """The entry this message is, as recorded: the restated entry's source, else its own."""
        return self.restates or self.entry_id


@dataclass(frozen=True)
class WindowStep:
    """How the window at one end of a path follows from the window at the previous end
    (`AgentRules.window_steps`): that window followed by `messages`, or, when `replaced`,
    `messages` alone."""

    replaced: bool
    messages: list[WindowMessage]


def rebuilt_steps(
    window: Callable[[Sequence[AnyEntry]], list[WindowMessage]], path: Sequence[AnyEntry], ends: Iterable[int]
) -> Iterator[WindowStep]:
    """The steps of rules that rebuild every window whole: each one replaces the last."""
    for end in ends:
        yield WindowStep(True, window(path[:end]))


@dataclass(frozen=True)
class PathFacts:
    """What every window along one path can take from the whole path, made once (`path_facts`):
    each entry's index (`first_index_of`), and its restatements — a restatement is judged by the
    entries before it alone, so the whole path's answer holds for every prefix of it."""

    first_of: Mapping[str, int]
    sources: Mapping[str, str]
    truncated: frozenset[str]


def path_facts(path: Sequence[AnyEntry]) -> PathFacts | None:
    """The facts of a path whose ids are unique; None when an id occurs twice (a later duplicate
    changes what the earlier one resolves to: such a path's windows are built whole). Each entry
    is read once, at C speed (a long path's entries lie far apart in memory: every pass over them
    costs more than the work it does)."""
    ids, claims = zip(*map(_ID_AND_RESTATES, path)) if path else ((), ())
    return read_path_facts(path, ids, any(claims))


def read_path_facts(
    path: Sequence[AnyEntry], ids: Sequence[str], restating: bool, memo: ItemMemo | None = None
) -> PathFacts | None:
    """`path_facts(path)` from what its caller already read of each entry: the ids, in path order,
    and `restating`, False only when no entry names one it restates (`restates`); with an item's
    `memo`, each restatement judged once for the item."""
    first_of = dict(zip(ids, range(len(ids))))
    if len(first_of) != len(path):
        return None
    sources, truncated = restatements(path, memo) if restating else ({}, frozenset[str]())
    return PathFacts(first_of, sources, truncated)


def restatements_of(
    path: Sequence[AnyEntry], facts: PathFacts | None, memo: ItemMemo | None = None
) -> tuple[Mapping[str, str], frozenset[str]]:
    """`restatements(path)`, from the facts of the path it begins when the caller has them."""
    return (facts.sources, facts.truncated) if facts is not None else restatements(path, memo)


def latest_compaction(path: Sequence[AnyEntry]) -> tuple[int, CompactionEntry] | None:
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index, path[index]  # type: ignore[return-value]
    return None


def protected_ids(compaction: CompactionEntry) -> list[str]:
    details = compaction.details or {}
    ours = details.get("replaylab") if isinstance(details, dict) else None
    ids = ours.get("protectedEntryIds") if isinstance(ours, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def entry_to_message(entry: AnyEntry) -> Any | None:
    """The context message an entry contributes, or None (pi: only message, custom_message and
    non-empty branch_summary entries produce messages)."""
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return custom_message(entry)
    if isinstance(entry, BranchSummaryEntry) and entry.summary:
        # pi makes it with `new Date(entry.timestamp).getTime()`: epoch milliseconds
        return BranchSummaryMessage(
            summary=entry.summary, from_id=entry.from_id, timestamp=date_time_ms(entry.timestamp)
        )
    return None


def custom_message(entry: CustomMessageEntry) -> CustomMessage:
    """pi's `createCustomMessage(customType, content, display, details, timestamp)`: the entry's
    fields as stored (one it lacks is left out, as JSON leaves out `undefined`; pi 0.73.1 passes
    a missing content on as missing) and its time in epoch milliseconds."""
    fields = entry.model_fields_set
    made = {name: getattr(entry, name) for name in ("custom_type", "content", "display", "details") if name in fields}
    return CustomMessage(**made, timestamp=date_time_ms(entry.timestamp))


def build_window(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
    """Window for a root→leaf path, exactly as pi's `buildSessionContext` makes it — the context the
    agent sees: the latest compaction's summary, then the kept entries from its `firstKeptEntryId`
    up to the compaction, then everything after it (checked against pi itself, `replaylab.oracles.pi`).
    With a memo carrying another agent's rules (`ItemMemo.rules`), that agent's rebuild instead.

    With an item's `memo`, the same entry objects give the same window items (in a new list), so
    the messages it makes (the summary's) are the same objects for every memo keyed by them."""
    if memo is None:
        return _build_window(path)
    key = tuple(map(identity, path))
    hit = memo.windows.get(key)
    if hit is None or len(hit[0]) != len(path) or not all(map(operator.is_, hit[0], path)):
        window = _build_window(path, memo=memo) if memo.rules is None else memo.rules.window(path, memo)
        hit = memo.windows[key] = (list(path), window)
    return list(hit[1])


def rebuild_window(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
    """pi 0.73.1's window of `path`, built anew (`build_window` keeps windows per item); with an
    item's `memo`, each restatement on it is judged once for the item."""
    return _build_window(path, memo=memo)


def _build_window(
    path: Sequence[AnyEntry], facts: PathFacts | None = None, memo: ItemMemo | None = None
) -> list[WindowMessage]:
    found = latest_compaction(path)
    sources, truncated = restatements_of(path, facts, memo)
    if found is None:
        return [
            WindowMessage(e.id, m, False, sources.get(e.id), e.id in truncated)
            for e in path
            if (m := entry_to_message(e)) is not None
        ]
    index, compaction = found
    window = [
        WindowMessage(
            compaction.id,
            CompactionSummaryMessage(
                summary=compaction.summary,
                tokens_before=compaction.tokens_before,  # as pi's message holds it, a number or not
                timestamp=compaction.timestamp,
            ),
        )
    ]
    # pi's rule: the entries from `firstKeptEntryId` up to the compaction, then the ones after it;
    # an id naming no earlier entry keeps nothing before the compaction. A safeguard compaction
    # restates the protected entries it summarized past after itself; they are marked (so is a
    # protected entry kept before it, as earlier safeguard compactions kept them).
    keep = set(protected_ids(compaction))
    kept_from = first_index_of(path, compaction.first_kept_entry_id, index, facts)
    for entry in path[kept_from if kept_from is not None else index : index]:
        message = entry_to_message(entry)
        if message is not None:
            source = sources.get(entry.id)
            window.append(WindowMessage(entry.id, message, (source or entry.id) in keep, source, entry.id in truncated))
    for entry in path[index + 1 :]:
        message = entry_to_message(entry)
        if message is not None:
            source = sources.get(entry.id)
            protected = source is not None and source in keep
            window.append(WindowMessage(entry.id, message, protected, source, entry.id in truncated))
    return window


def grown_steps(
    path: Sequence[AnyEntry],
    ends: Iterable[int],
    facts: PathFacts,
    *,
    starts_anew: Callable[[AnyEntry], bool],
    rebuilt: Callable[[Sequence[AnyEntry]], tuple[list[WindowMessage], set[str], Any]],
    messages: Callable[[AnyEntry, Any], Iterable[Any]],
) -> Iterator[WindowStep]:
    """The steps of an agent's windows at the ascending `ends` (`AgentRules.window_steps`): the
    first end, and any after a stretch holding an entry that `starts_anew` (a boundary), are built
    whole — `rebuilt(prefix)` gives the window, the ids its boundary protected and whatever else
    the entries after it need; otherwise the last window grows by the `messages` each entry of the
    stretch yields, each naming the entry it restates (`facts`) and protected when that is one the
    boundary protected."""
    keep: set[str] = set()
    context: Any = None
    done = 0
    for end in ends:
        stretch = path[done:end]
        if done == 0 or any(map(starts_anew, stretch)):
            window, keep, context = rebuilt(path[:end])
            yield WindowStep(True, window)
        else:
            added = []
            for entry in stretch:
                source = facts.sources.get(entry.id)
                protected = source is not None and source in keep
                truncated = entry.id in facts.truncated
                added += [WindowMessage(entry.id, m, protected, source, truncated) for m in messages(entry, context)]
            yield WindowStep(False, added)
        done = end


def window_steps(path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
    """`build_window(path[:end])` for each of the ascending `ends`, as steps (pi 0.73.1's
    `AgentRules.window_steps`): a stretch without a compaction adds each of its entries' message."""
    facts = path_facts(path)
    if facts is None:
        yield from rebuilt_steps(_build_window, path, ends)
        return

    def rebuilt(prefix: Sequence[AnyEntry]) -> tuple[list[WindowMessage], set[str], None]:
        found = latest_compaction(prefix)
        return _build_window(prefix, facts), set(protected_ids(found[1])) if found is not None else set(), None

    def messages(entry: AnyEntry, _: None) -> list[Any]:
        message = entry_to_message(entry)
        return [] if message is None else [message]

    yield from grown_steps(
        path, ends, facts, starts_anew=lambda e: isinstance(e, CompactionEntry), rebuilt=rebuilt, messages=messages
    )


def windows_at(
    path: Sequence[AnyEntry], ends: Iterable[int], memo: ItemMemo | None = None
) -> dict[int, list[WindowMessage]]:
    """The window at `path[:end]` for each of `ends` (any order, repeats allowed), by the memo's
    agent rules (pi 0.73.1's without), built as steps along the path rather than each from its
    root: an audit of a long session's every compaction reads the path once."""
    wanted = sorted(set(ends))
    steps = window_steps(path, wanted) if memo is None or memo.rules is None else memo.rules.window_steps(path, wanted)
    found: dict[int, list[WindowMessage]] = {}
    current: list[WindowMessage] = []
    for end, step in zip(wanted, steps):
        current = list(step.messages) if step.replaced else [*current, *step.messages]
        found[end] = current
    return found


_ID = operator.attrgetter("id")
_ID_AND_RESTATES = operator.attrgetter("id", "restates")


def first_index_of(path: Sequence[AnyEntry], entry_id: Any, before: int, facts: PathFacts | None = None) -> int | None:
    """The index of the first entry of `path[:before]` whose id is `entry_id` (None: none is):
    from the facts of the path it begins, when the caller made them once for many lookups; else
    a search at C speed (still a pass over the path, per lookup)."""
    if facts is not None:
        found = facts.first_of.get(entry_id) if isinstance(entry_id, str) else None
        return found if found is not None and found < before else None
    try:
        return operator.indexOf(map(_ID, islice(path, before)), entry_id)
    except ValueError:
        return None


def bash_execution_text(message: BashExecutionMessage) -> str:
    """A `bashExecution` message as the user text the agent sends for it (pi's
    `bashExecutionToText`, messages.ts; OpenClaw weighs the same text)."""
    text = BASH_EXECUTION_PREFIX.format(command=message.command) + "\n"
    text += f"```\n{message.output}\n```" if message.output else BASH_NO_OUTPUT
    exit_code = message.exit_code
    if js_truthy(message.cancelled):
        text += "\n\n" + BASH_CANCELLED
    elif exit_code is not None and number_or_none(exit_code) != 0:  # `!== 0`: false or "0" is no 0
        text += "\n\n" + BASH_EXIT_CODE.format(code=js_string(exit_code))
    if js_truthy(message.truncated) and js_truthy(message.full_output_path):
        text += "\n\n" + BASH_OUTPUT_TRUNCATED.format(path=js_string(message.full_output_path))
    return text
