"""Safeguard mode's promise: mutating events and pending approvals survive compaction verbatim.

What is protected (DESIGN §6 step 4): in the part of the path a compaction would summarize, every
message that carries a mutating tool call — the whole message, so parallel calls and thinking
blocks stay intact — together with every tool result answering any call of that message (a
result answers the latest call of its id before it: some providers reuse ids), and
every message with a call that has no result yet (a pending approval). A call is one in a block
type pi does not read too (OpenClaw's legacy `toolUse`, `functionCall`: OpenClaw pairs results to
them). A result whose call no message shows (that message failed validation, or is missing) is
protected on its own when its tool mutates by name: it is all that shows the call ran. So is a
result that answers no call waiting for one, though a call of its id came before (a provider may
number its calls afresh). A call that spawned a sub-agent which mutated, or whose transcript
cannot be loaded, is protected as a mutating call is, its restated copies too. Safeguard restates them
after its compaction entry, byte for byte and in order (`replaylab.compaction.plan`), so every
agent's own rebuild shows them verbatim, pairs intact. The compaction entry lists them in
`details.replaylab.protectedEntryIds` for the reports; pi ignores the list.

`allowMutatingEventTruncate` (the seed contract's flag): when the protected entries and the
smallest summary do not fit the budget, their tool results — never the calls — may be shortened
as OpenClaw shortens any oversized tool result (`shrink_protected_results`), the restated copies
declaring it; without it, safeguard fails with the numbers.

Also here, because they only shape the summarizer's input (never the kept entries): OpenClaw's
history-share pruning (`pruneHistoryForContextShare` with tool-pair repair).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.cassette import canonical_json
from replaylab.compaction.session_truncation import plan_tool_result_replacements
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.nested_calls import NO_RECORDS, NestedRecords, nested_records
from replaylab.transcript.context import entry_to_message
from replaylab.transcript.model import (
    AnyEntry,
    MessageEntry,
    ToolCallBlock,
    ToolResultMessage,
    dump_entry,
)
from replaylab.transcript.pairing import is_errored, message_calls, pair_path, recorded_calls
from replaylab.transcript.tokens import estimate_tokens
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_PARTS
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN


def message_sha256(message: Any) -> str:
    """sha256 of the canonical JSON of a message as stored (key order irrelevant)."""
    return hashlib.sha256(canonical_json(dump_entry(message)).encode("utf-8")).hexdigest()


#: how many times the protected results are shortened again when the first cut left them over the room
SHRINK_ATTEMPTS = 3


@dataclass
class Protection:
    """Protected entry ids in path order, and why each one is protected."""

    entry_ids: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PathCalls:
    """What safeguard needs to know of a whole path's calls, wherever a compaction cuts it:
    `answered` — every call id with a result anywhere on the path; `unread_results` — the entry ids
    of the results whose call cannot be read (`pair_path`)."""

    answered: frozenset[str]
    unread_results: frozenset[str] = frozenset()
    #: result entry id → the entry id of the message making the call `pair_path` pairs it with (None:
    #: the call cannot be read), and that call: a result answers the call the ledger says it answers
    call_of: Mapping[str, tuple[str | None, ToolCallBlock]] = field(default_factory=dict)
    #: what the path records of the calls other calls made (`nested_calls`): OpenClaw's Code Mode
    #: cells, pi's `nestedCalls`; a call they judge mutates as the ledger counts it
    code_cells: NestedRecords = NO_RECORDS

    def mutating(self, call: ToolCallBlock, classifier: ToolClassifier) -> bool:
        return self.code_cells.mutating(call, classifier)


def path_calls(entries: Sequence[AnyEntry]) -> PathCalls:
    pairing = pair_path((e.id, e.message) for e in entries if isinstance(e, MessageEntry))
    # OpenClaw's records are custom entries, which are no message entries
    records = nested_records(((e.id, entry_to_message(e)) for e in entries), pairing)
    return PathCalls(
        frozenset(call.block.id for _, call in pairing.answers),
        frozenset(pairing.unread_results()),
        {key: (call.entry, call.block) for key, call in pairing.answers if key is not None},
        records,
    )


#: why a result is protected whose mutating call lies before the span a compaction judges
EARLIER_CALL_RESULT = "result of a mutating call the window no longer shows (a compaction kept the result alone)"

#: why a result whose call cannot be read is protected
UNREAD_CALL_RESULT = "result of a call that cannot be read, its tool mutating by name"


def select_protected(
    dropped: Sequence[AnyEntry],
    classifier: ToolClassifier,
    *,
    calls: PathCalls,
    previously_protected: Iterable[str] = (),
    unresolved_spawns: frozenset[str] = frozenset(),
    earlier: Sequence[AnyEntry] = (),
    shown: frozenset[str] | None = None,
) -> Protection:
    """Protected entries among `dropped` (the entries a compaction removes from the window, in
    path order). `calls`: the whole path's (`path_calls`); `unresolved_spawns` the entries of
    calls that spawned a sub-agent whose transcript cannot be loaded: the ledger counts each as a
    mutating event, which no classification of the call says (or the message where a sub-agent no
    call names shows, `spawn_links`). A result whose call cannot be read
    (`PathCalls.unread_results`) is protected when its tool mutates by name alone: nothing else shows
    that the call ran."""
    answered = calls.answered
    previous = set(previously_protected)
    keep: dict[str, str] = {}
    # call id → whether the latest message making it is protected: a result answers the latest
    # call of its id before it (a provider may number its calls afresh in every message)
    protected_call: dict[str, bool] = {}
    # `earlier`: the path before `dropped`, which the window no longer shows (a recorded compaction
    # kept from a later entry): a result among `dropped` that the window shows (`shown`: the
    # window's entry ids, None when every entry of `dropped` is shown) may answer a mutating call
    # there, and it is then all the window shows of that call
    earlier_mutating: set[str] = set()
    earlier_ids = {entry.id for entry in earlier}
    for entry in earlier:
        if isinstance(entry, MessageEntry) and not isinstance(entry.message, ToolResultMessage):
            errored = is_errored(entry.message)
            for call in recorded_calls(entry.message):
                earlier_mutating.discard(call.id)  # the latest call of an id decides
                if (not errored or call.id in answered) and calls.mutating(call, classifier):
                    earlier_mutating.add(call.id)
    for entry in dropped:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, ToolResultMessage):
            # the call the ledger pairs it with (`pair_path`: the result's tool name first), when known
            call_entry, paired = calls.call_of.get(entry.id, (None, None))
            if entry.id in previous:
                keep[entry.id] = "previously protected"
            elif protected_call.get(message.tool_call_id, False) or (call_entry is not None and call_entry in keep):
                keep[entry.id] = "result of a protected call"
            elif (shown is None or entry.id in shown) and (
                (message.tool_call_id not in protected_call and message.tool_call_id in earlier_mutating)
                or (paired is not None and call_entry in earlier_ids and calls.mutating(paired, classifier))
            ):
                keep[entry.id] = EARLIER_CALL_RESULT
            elif entry.id in calls.unread_results and unread_call_mutates(message, classifier):
                keep[entry.id] = UNREAD_CALL_RESULT
            elif entry.id in calls.unread_results and entry.id in unresolved_spawns:
                # a spawn known only by its result: the ledger names that result for the event
                keep[entry.id] = "result of a call that cannot be read, its sub-agent mutated or cannot be loaded"
            continue
        made = recorded_calls(message)
        if entry.id in previous:
            keep[entry.id] = "previously protected"
        elif made:
            errored = is_errored(message)
            ran = [c for c in made if not errored or c.id in answered]  # errored calls without result never ran
            if any(calls.mutating(c, classifier) for c in ran):
                keep[entry.id] = "mutating tool call"
            elif entry.id in unresolved_spawns:
                keep[entry.id] = "a sub-agent that mutated or whose transcript cannot be loaded"
            elif not errored and any(c.id not in answered for c in made):
                keep[entry.id] = "pending approval (no result yet)"
        elif entry.id in unresolved_spawns:
            # no call of this session names the sub-agent: this message is where its work shows
            keep[entry.id] = "where a sub-agent no call names shows, which mutated or cannot be loaded"
        for call in made:
            protected_call[call.id] = entry.id in keep
    ids = [e.id for e in dropped if e.id in keep]
    return Protection(ids, {i: keep[i] for i in ids})


def unread_call_mutates(result: ToolResultMessage, classifier: ToolClassifier) -> bool:
    """Whether the call a result answers, which cannot be read, mutates: by its tool's name, with
    no arguments (what the call did is not known, so a tool whose arguments decide is mutating)."""
    return classifier.is_mutating(result.tool_name or "", {})


def protected_tokens(entries: Iterable[AnyEntry]) -> int:
    return sum(estimate_tokens(e.message) for e in entries if isinstance(e, MessageEntry))


def shrink_protected_results(
    protected: Sequence[AnyEntry], room_tokens: int, tokens_of: Callable[[Any], int] = estimate_tokens
) -> dict[str, ToolResultMessage]:
    """entry id → the protected tool result shortened so that the protected entries fit
    `room_tokens`: OpenClaw's recovery truncation (`plan_tool_result_replacements`: every result
    over the cap, then the newest first until their total fits) with the characters left after the
    protected calls. Only results are shortened; a call is the side effect itself."""
    results = [e for e in protected if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)]
    result_ids = {e.id for e in results}
    calls = sum(tokens_of(e.message) for e in protected if isinstance(e, MessageEntry) and e.id not in result_ids)
    room = room_tokens - calls
    shrunk: dict[str, ToolResultMessage] = {}
    for _ in range(SHRINK_ATTEMPTS):  # a message's estimate is more than its text: aim lower by the overshoot
        shrunk = plan_tool_result_replacements(results, 0, max_chars=max(1, room) * CHARS_PER_TOKEN)
        over = sum(tokens_of(shrunk.get(e.id, e.message)) for e in results) - (room_tokens - calls)
        if over <= 0:
            break
        room -= over
    return shrunk


def repair_tool_pairing(messages: Sequence[Any]) -> tuple[list[Any], int]:
    """Drop tool results whose call is not earlier in the list (`repairToolUseResultPairing`,
    reduced to what the summarizer input needs); returns (messages, dropped orphans)."""
    seen: set[str] = set()
    out: list[Any] = []
    dropped = 0
    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.tool_call_id not in seen:
                dropped += 1
                continue
        else:
            seen.update(c.id for c in message_calls(message))
        out.append(message)
    return out, dropped


def split_messages_by_token_share(
    messages: Sequence[Any], parts: int = DEFAULT_PARTS, tokens_of: Callable[[Any], int] = estimate_tokens
) -> list[list[Any]]:
    """Greedy chunks of ≈ total/parts tokens that never close while a call awaits its result."""
    if not messages:
        return []
    parts = max(1, min(parts, len(messages)))
    if parts <= 1:
        return [list(messages)]
    target = sum(map(tokens_of, messages)) / parts
    chunks: list[list[Any]] = []
    current: list[Any] = []
    current_tokens = 0
    pending: set[str] = set()
    for message in messages:
        tokens = tokens_of(message)
        if len(chunks) < parts - 1 and current and current_tokens + tokens > target and not pending:
            chunks.append(current)
            current, current_tokens = [], 0
        current.append(message)
        current_tokens += tokens
        if isinstance(message, ToolResultMessage):
            pending.discard(message.tool_call_id)
        elif not is_errored(message):
            pending.update(c.id for c in message_calls(message))
    if current:
        chunks.append(current)
    return chunks


@dataclass
class PrunedHistory:
    kept: list[Any]
    dropped: list[Any]
    dropped_chunks: int = 0
    dropped_orphans: int = 0


def prune_history_for_context_share(
    messages: Sequence[Any],
    max_context_tokens: int,
    max_history_share: float,
    parts: int = DEFAULT_PARTS,
    tokens_of: Callable[[Any], int] = estimate_tokens,
) -> PrunedHistory:
    """`pruneHistoryForContextShare`: drop the oldest token-share chunk (repairing pairs) until
    the history fits `max_context_tokens × max_history_share`. O(n log n): each round halves it.
    `tokens_of`: a message's estimate (the job's, which a QA pipeline item's memo keeps)."""
    budget = max(1, math.floor(max_context_tokens * max_history_share))
    kept = list(messages)
    result = PrunedHistory(kept=kept, dropped=[])
    total = sum(map(tokens_of, kept))
    while kept and total > budget:
        chunks = split_messages_by_token_share(kept, parts, tokens_of)
        if len(chunks) <= 1:
            break
        dropped, rest = chunks[0], [m for chunk in chunks[1:] for m in chunk]
        repaired, orphans = repair_tool_pairing(rest)
        result.dropped.extend(dropped)
        result.dropped_chunks += 1
        result.dropped_orphans += orphans
        kept = repaired
        total = sum(map(tokens_of, kept))
    result.kept = kept
    return result
