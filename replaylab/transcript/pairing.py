"""Tool-call pairing: which tool calls a message makes, which of them count, and the leaf-path check.

The rules, pi's: an assistant message's calls, and a user message's own calls (τ²-bench telecom:
the simulated user runs tools on its own phone), each want a result later on the path; an
assistant message that stopped with `error` / `aborted` is dropped by pi before the next request,
so its calls want no result (but a result for one of them is not an orphan either).

Everything here reads a message by its fields, so the same code serves a validated model and
the plain dict the lazy load's skeleton validator gives for it (`replaylab.transcript.skeleton`):
the eager and the lazy load cannot pair a message differently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from replaylab.cassette import canonical_json
from replaylab.diagnostics import Diagnostic
from replaylab.transcript.diagnose import diagnostic
from replaylab.transcript.model import (
    MessageEntry,
    OpaqueBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    dump_entry,
)
from replaylab.transcript.opaque_content import opaque_call_block
from replaylab.upstream.openclaw_2026_9_6 import TOOL_CALL_BLOCK_TYPES

K = TypeVar("K")

ERRORED_STOP_REASONS = frozenset({"error", "aborted"})

#: what a message contributes to the pairing check, as a tuple (kind, call ids, errored): one is
#: made per tool-using message, so kept small and cheap to make
ASSISTANT_CALLS, USER_CALLS, RESULT = 0, 1, 2
Pairing = tuple[int, tuple[str, ...], bool]


def _fields(obj: Any) -> dict[str, Any]:
    """A validated object's fields by name: the skeleton validator's dict, or a model's `__dict__`
    (pydantic keeps the fields there, by name, defaults included)."""
    return obj if type(obj) is dict else obj.__dict__


def _call_blocks(fields: dict[str, Any]) -> list[Any]:
    role = fields["role"]
    if role == "assistant" or (role == "user" and type(fields["content"]) is list):
        # an opaque item (`model.OpaqueBlock`) has no `type` field: one with a call's id records
        # that call, as the agents pair it (`opaque_call_block`)
        calls = []
        for block in fields["content"]:
            kind = type(block)
            # `_fields(block)` inline: every pairing walk reads every block of every message
            if (block if kind is dict else block.__dict__).get("type") == "toolCall":
                calls.append(block)
            elif kind is OpaqueBlock and (call := opaque_call_block(block)) is not None:
                calls.append(call)
        return calls
    return []


def message_calls(message: Any) -> list[ToolCallBlock]:
    """The tool calls a message makes: an assistant's, or a user's own (errored or not)."""
    return _call_blocks(_fields(message))


#: the block types besides pi's own `toolCall` that record a call (OpenClaw's legacy `toolUse`,
#: `functionCall`): OpenClaw pairs results to them, pi reads none of them
FOREIGN_CALL_BLOCK_TYPES = frozenset(TOOL_CALL_BLOCK_TYPES) - {"toolCall"}
#: where such a block keeps its arguments, in the order they are looked for
_FOREIGN_ARGUMENT_FIELDS = ("arguments", "input", "args")


def recorded_calls(message: Any) -> list[ToolCallBlock]:
    """Every call a message records that ran or may have run: `message_calls`, and an assistant's
    calls in a block type pi does not read (`FOREIGN_CALL_BLOCK_TYPES`). What the safety ledger and
    safeguard count: a call the model never saw still changed the outside world."""
    fields = _fields(message)
    if fields["role"] != "assistant":
        return _call_blocks(fields)
    # `_call_blocks`' walk and the foreign calls' in one pass over the content (the foreign calls
    # after the others, as listed): the ledger, safeguard and the turn starts read every message
    calls: list[Any] = []
    foreign: list[ToolCallBlock] = []
    for block in fields["content"]:
        kind = type(block)
        if (block if kind is dict else block.__dict__).get("type") == "toolCall":
            calls.append(block)
        elif kind is OpaqueBlock:
            if (call := opaque_call_block(block)) is not None:
                calls.append(call)
        # only a plain or unknown block may be one (`_foreign_call`): the others are not asked
        elif (kind is dict or isinstance(block, UnknownBlock)) and (call := _foreign_call(block)) is not None:
            foreign.append(call)
    return calls + foreign if foreign else calls


def _foreign_call(block: Any) -> ToolCallBlock | None:
    if type(block) is dict:
        data = block
    elif isinstance(block, UnknownBlock):
        data = {"type": block.type, **(block.__pydantic_extra__ or {})}
    else:
        return None
    call_id, name = data.get("id"), data.get("name")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in FOREIGN_CALL_BLOCK_TYPES or not isinstance(call_id, str) or not call_id:
        return None
    arguments = next((data[key] for key in _FOREIGN_ARGUMENT_FIELDS if key in data), None)
    # arguments that cannot be read are none: the tool is judged by its name, which is the cautious reading
    return ToolCallBlock(
        id=call_id,
        name=name if isinstance(name, str) else "",
        arguments=arguments if isinstance(arguments, dict) else {},
    )


@dataclass(slots=True)
class PairedCall(Generic[K]):
    """A call on a path and the result that answers it, if any. `entry` / `result_entry`: the keys
    the caller gave the call's message and the result's (entry ids, or None). `unread`: the call is
    known only by its result (`pair_path`); it has the result's tool name, no arguments, no entry."""

    entry: K | None
    block: ToolCallBlock
    actor: str
    errored: bool
    result_entry: K | None = None
    result: ToolResultMessage | None = None
    unread: bool = False


@dataclass(slots=True)
class PathPairing(Generic[K]):
    """`calls`: every call a path records, in path order, each with the first result that answers
    it (a call known only by its result sits where that result is); `answers`: each tool result's
    key with the call it answers, in path order."""

    calls: list[PairedCall[K]] = field(default_factory=list)
    answers: list[tuple[K, PairedCall[K]]] = field(default_factory=list)

    def unread_results(self) -> list[K]:
        """The keys of the results whose call cannot be read: all that shows the call ran."""
        return [key for key, call in self.answers if call.unread]


def pair_path(items: Iterable[tuple[K, Any]]) -> PathPairing[K]:
    """The one pairing walk every reader of a path's calls shares (the safety ledger, safeguard,
    overflow recovery, init), on (key, validated message) pairs in path order.

    A call is any `recorded_calls` block: an assistant's (errored or not, in every block type the
    agents pair results to) or a user's own. A result pairs with a call of its id that waits for
    one: of those with the result's tool name (any, when none has it), the latest message's, the
    first in that message (pi answers a message's calls in order, so two calls of one id in one
    message are answered in turn). An errored / aborted reply's call stops waiting once a later
    message uses its id (pi dropped the reply; the id is another call's now). A result that answers
    no call waiting for one stands for a call that ran (its message failed validation or is not in
    the file), also when a call that can be read used the id before and has its result (a provider
    may number its calls afresh in every message) — unless it is an earlier result of its id written
    again byte for byte, which answers the call that one answered, or a further result, with the
    same tool name, of a call known only by its result."""
    pairing: PathPairing[K] = PathPairing()
    waiting: dict[str, list[tuple[int, PairedCall[K]]]] = {}  # each id's calls no result answered yet, by message
    latest: dict[str, PairedCall[K]] = {}  # the latest call of each id
    results: dict[str, list[Any]] = {}
    index = 0  # of the message making calls, to find the latest
    for key, message in items:
        if isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            earlier = results.setdefault(call_id, [])
            answered = _take(waiting.get(call_id), message.tool_name)
            if answered is not None:
                call = answered
            elif call_id in latest and (
                (latest[call_id].unread and latest[call_id].block.name == (message.tool_name or ""))
                or written_again(message, earlier)
            ):
                call = latest[call_id]  # written again, or a further result of a call known only by its result
            else:
                call = PairedCall(
                    None,
                    ToolCallBlock(id=call_id, name=message.tool_name or "", arguments={}),
                    "assistant",
                    False,
                    unread=True,
                )
                latest[call_id] = call
                pairing.calls.append(call)
                answered = call
            if answered is not None:
                answered.result_entry, answered.result = key, message
            pairing.answers.append((key, call))
            earlier.append(message)
            continue
        made = recorded_calls(message)
        if not made:
            continue
        index += 1
        role = _fields(message)["role"]
        errored = role == "assistant" and errored_stop(_fields(message)["stop_reason"])
        for block in made:
            queue = waiting.get(block.id)
            if queue:  # an errored reply's call no longer waits once its id is used again
                queue[:] = [(at, call) for at, call in queue if not call.errored]
        for block in made:
            call = PairedCall(key, block, "user" if role == "user" else "assistant", errored)
            pairing.calls.append(call)
            waiting.setdefault(block.id, []).append((index, call))
            latest[block.id] = call
    return pairing


def _take(queue: list[tuple[int, PairedCall[K]]] | None, tool_name: str | None) -> PairedCall[K] | None:
    """The waiting call a result of tool `tool_name` answers, taken off `queue` (`pair_path`)."""
    if not queue:
        return None
    if len(queue) == 1:  # nearly always: one call of the id waits
        return queue.pop()[1]
    named = [item for item in queue if tool_name and item[1].block.name == tool_name] or queue
    newest = max(at for at, _ in named)
    item = next(item for item in named if item[0] == newest)
    queue.remove(item)
    return item[1]


def written_again(result: Any, earlier: Sequence[Any]) -> bool:
    """Whether tool result `result` is one of the `earlier` results of its id written again, byte for
    byte (a restated copy, a duplicated line), rather than the result of another call."""
    if not earlier:
        return False
    dumped = canonical_json(dump_entry(result))
    return any(canonical_json(dump_entry(e)) == dumped for e in earlier)


def errored_stop(stop_reason: Any) -> bool:
    """`stopReason` is `error` or `aborted` (a value of another JSON type, a list among them, is neither)."""
    return type(stop_reason) is str and stop_reason in ERRORED_STOP_REASONS


def is_errored(message: Any) -> bool:
    """An assistant message pi drops before the next request (`error` / `aborted`)."""
    fields = _fields(message)
    return fields.get("role") == "assistant" and errored_stop(fields["stop_reason"])


def answered_calls(
    entries: Sequence[Any], wanted: Callable[[ToolCallBlock], bool] | None = None
) -> Iterator[tuple[MessageEntry, ToolCallBlock, int]]:
    """(entry, call, k) for every call of the file that a result answers, in file order, the call
    being the k-th of its id: the calls an imported session's cassette holds an interaction for,
    one each, in this order (`importers.pi`). A result answers the first call of its id that has
    none yet (a source that reuses an id answers each use in turn), so the k-th call of an id is
    answered when the file holds more than k results of it; an errored / aborted message's calls
    never ran. `wanted`: only those calls are given (all are counted)."""
    results = Counter(
        entry.message.tool_call_id
        for entry in entries
        if isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)
    )
    seen: Counter[str] = Counter()
    for entry in entries:
        for call in ran_calls(entry):
            k = seen[call.id]
            seen[call.id] += 1
            if k < results[call.id] and (wanted is None or wanted(call)):
                yield entry, call, k


def ran_calls(entry: Any) -> list[ToolCallBlock]:
    """The calls of a message entry that is no tool result, unless pi dropped it (errored)."""
    if not isinstance(entry, MessageEntry) or isinstance(entry.message, ToolResultMessage):
        return []
    return [] if is_errored(entry.message) else message_calls(entry.message)


def pairing_record(message: Any) -> Pairing | None:
    """What the pairing check needs from one validated message (model or skeleton dict); None
    for a message that neither calls a tool nor answers one. `message_calls` and `is_errored`
    written out: the load asks it of every message."""
    fields = message if type(message) is dict else message.__dict__
    role = fields["role"]
    if role == "toolResult":
        return RESULT, (fields["tool_call_id"],), False
    if role == "assistant":
        kind = ASSISTANT_CALLS
    elif role == "user" and type(fields["content"]) is list:
        kind = USER_CALLS
    else:
        return None
    calls = []
    for block in fields["content"]:
        block_fields = block if type(block) is dict else block.__dict__
        if block_fields.get("type") == "toolCall":
            calls.append(block_fields["id"])
        elif type(block) is OpaqueBlock and (call := opaque_call_block(block)) is not None:  # no `type` field
            calls.append(call.id)
    if not calls:
        return None
    return kind, tuple(calls), kind == ASSISTANT_CALLS and errored_stop(fields["stop_reason"])


def check_pairing(
    path_ids: Sequence[str], records: Mapping[str, Pairing], line_of: Mapping[str, int], name: Path
) -> list[Diagnostic]:
    """On the leaf path (`path_ids`, root first): every tool result answers an earlier call,
    every call gets a result. `records`: entry id → its `pairing_record`, for the entries that have one."""
    pending: dict[str, str] = {}
    called: set[str] = set()
    diags: list[Diagnostic] = []
    for entry_id in path_ids:
        record = records.get(entry_id)
        if record is None:
            continue
        kind, call_ids, errored = record
        if kind == ASSISTANT_CALLS:
            for call_id in call_ids:
                called.add(call_id)  # a result for it is never an orphan
                if not errored:
                    pending[call_id] = entry_id
        elif kind == USER_CALLS:
            for call_id in call_ids:
                pending[call_id] = entry_id
                called.add(call_id)
        else:
            (call_id,) = call_ids
            if call_id not in called:
                diags.append(
                    diagnostic(
                        name,
                        line_of.get(entry_id),
                        "orphan-tool-result",
                        f"tool result for call {call_id!r} has no matching tool call earlier on the path",
                        entry_id=entry_id,
                        field="message.toolCallId",
                    )
                )
            pending.pop(call_id, None)
    for call_id, entry_id in pending.items():
        diags.append(
            diagnostic(
                name,
                line_of.get(entry_id),
                "missing-tool-result",
                f"tool call {call_id!r} has no tool result later on the path",
                entry_id=entry_id,
                field="message.content",
            )
        )
    return diags
