"""The recording's own tool results: how a replayed call of a tool pack's tool is answered.

Why from the transcript and not by running the tool: a tool's code can do anything — write a
file, open a raw socket, call libc through `ctypes`, start a process or a thread that fires
later — and no in-process guard sees all of that. So replay never runs it: each call is answered
with the result the recording holds for the same tool and canonical arguments, each recorded
result once, in recorded order among equal calls (play-once, as the recorded-tool cassettes of
imported sessions answer theirs). What the recording persisted is what it answers with: a result
the recorder capped at write time (OpenClaw's persist-time guard) is served capped, exactly as a
reloaded session would show it to the agent.

Which calls have a result: the agent's calls on the leaf path (errored or aborted assistant
messages never ran theirs, user-side calls are not the agent's; an entry a compaction restated is
the call or result it restates, not another one), each with the first tool result of its id that
follows it on the path. A call without one (a session cut off mid-call, or
compacted while the call was in flight) never ran in the recording: pi shows such a call to the
model with a synthetic error result, and a replay answers its repeat the same way, in its place
among equal calls (`RecordedResult.answered` False), never running it.

Which call the recording made at a position (`at_step`): a blocked call is reported against the
call the recorded agent made at the same turn and step, not against the recorded call that looks
most alike (that one is only a hint). The turns are split from the same path the results come
from, only when a report first asks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.cassette import canonical_json
from replaylab.replay.trace import turn_number
from replaylab.replay.turns import split_turns
from replaylab.safety.agent_tools import recorded_attribute
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, AssistantMessage, MessageEntry, ToolResultMessage, message_text
from replaylab.transcript.restated import without_restatements
from replaylab.upstream import pi_1_6_0 as PI16


def call_key(name: str, args: Any) -> str:
    """A call's identity for play-once matching: the tool and its canonical JSON arguments."""
    return name + "\x00" + canonical_json(args)


@dataclass(frozen=True)
class RecordedResult:
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    text: str
    is_error: bool
    #: False for a call that never got a result in the recording (its text is empty)
    answered: bool = True
    #: the recorded result's fields the judgement of its call reads (`kept_fields`), given to the
    #: replayed result it answers with, so a judgement of the replayed run reads what it read
    kept: dict[str, Any] | None = field(default=None, hash=False)  # a dict: hashed by the rest


def kept_fields(message: ToolResultMessage) -> dict[str, Any] | None:
    """What of a recorded result the judgement of its call reads (`safety.nested_calls`): pi's
    `nestedCalls`, and a `codemode` result's `details` (codemode's own rows of the script's calls,
    read when the result records no nested calls). None when it has neither: a replayed result
    stays its text alone, as before."""
    kept: dict[str, Any] = {}
    nested = recorded_attribute(message, PI16.NESTED_CALLS_KEY)
    if nested is not None:
        kept[PI16.NESTED_CALLS_KEY] = nested
    if message.tool_name == PI16.CODEMODE_TOOL_NAME and message.details is not None:
        kept["details"] = message.details
    return kept or None


#: (turn number, step) → the (tool, arguments) the recorded agent called at that step, in order
StepCalls = dict[tuple[int, int], list[tuple[str, dict[str, Any]]]]


class RecordedResults:
    """The recorded results of a session's calls and one replay's play state over them."""

    def __init__(
        self,
        results: Iterable[RecordedResult],
        path: Sequence[AnyEntry] | None = None,
        memo: ItemMemo | None = None,
    ):
        """`path`: the root → leaf entries the results come from, when known (`at_step`); `memo`:
        the item's, whose agent decides where its turns start (`split_turns`)."""
        self.results: tuple[RecordedResult, ...] = tuple(results)
        self._index: dict[str, list[int]] = {}
        for position, result in enumerate(self.results):
            self._index.setdefault(call_key(result.tool, result.arguments), []).append(position)
        self._played: set[int] = set()
        #: per call key, how many of its leading positions are played: a play state only gains
        #: plays, so they are skipped once, not on every look-up of a call the agent repeats
        self._skip: dict[str, int] = {}
        # shared by every play state over these results; filled on first use
        self._steps: list[Any] = [path, None, memo]

    @classmethod
    def of(cls, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> RecordedResults:
        """The agent's calls on a root → leaf path, each with its recorded result (module docstring)."""
        text_of = message_text if memo is None else memo.text
        pending: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}
        found: list[tuple[int, RecordedResult]] = []
        order = 0
        for entry in without_restatements(path):
            if not isinstance(entry, MessageEntry):
                continue
            message = entry.message
            if isinstance(message, AssistantMessage):
                if message.stop_reason in ("error", "aborted"):
                    continue
                for call in message.tool_calls():
                    pending.setdefault(call.id, []).append((order, call.name, dict(call.arguments or {})))
                    order += 1
            elif isinstance(message, ToolResultMessage) and pending.get(message.tool_call_id):
                position, name, args = pending[message.tool_call_id].pop(0)
                result = RecordedResult(
                    message.tool_call_id,
                    name,
                    args,
                    text_of(message),
                    bool(message.is_error),
                    kept=kept_fields(message),
                )
                found.append((position, result))
        found += [
            (position, RecordedResult(call_id, name, args, "", False, answered=False))
            for call_id, calls in pending.items()
            for position, name, args in calls
        ]
        found.sort(key=lambda item: item[0])  # in call order, whatever order the results came in
        return cls((result for _, result in found), path, memo)

    def upcoming(self, name: str, args: Any, key: str | None = None) -> RecordedResult | None:
        """What `play` would return, without playing it."""
        position = self._first_unplayed(call_key(name, args) if key is None else key)
        return None if position is None else self.results[position]

    def play(self, name: str, args: Any, key: str | None = None) -> RecordedResult | None:
        """The first unplayed recorded call of this tool and canonical arguments with its result
        (`answered` False: it never got one), now played; None when every such call was played
        already or the recording never made the call. `key`: `call_key(name, args)`, when the
        caller has it already (an executed call asks for it up to three times)."""
        position = self._first_unplayed(call_key(name, args) if key is None else key)
        if position is None:
            return None
        self._played.add(position)
        return self.results[position]

    def _first_unplayed(self, key: str) -> int | None:
        """The first position of `key`'s recorded calls not played yet, if any."""
        positions = self._index.get(key, ())
        played, k = self._played, self._skip.get(key, 0)
        while k < len(positions) and positions[k] in played:
            k += 1
        if k:
            self._skip[key] = k
        return positions[k] if k < len(positions) else None

    @property
    def path(self) -> Sequence[AnyEntry] | None:
        """The root → leaf entries the results come from, when known."""
        path: Sequence[AnyEntry] | None = self._steps[0]
        return path

    def at_step(self, turn: int, step: int) -> list[tuple[str, dict[str, Any]]] | None:
        """The calls the recorded agent made at `step` of turn number `turn` (`turn_number`), in
        order; [] when it made none there; None when the path is not known."""
        path, steps, memo = self._steps
        if path is None:
            return None
        if steps is None:
            steps = self._steps[1] = _step_calls(path, memo)
        return steps.get((turn, step), [])

    def result_of(self, name: str, args: Any) -> str:
        """What the recording holds as the result of this call, for a report: `recorded`,
        `already used by an earlier call of this replay`, or `none recorded`."""
        positions = self._index.get(call_key(name, args), ())
        answered = [p for p in positions if self.results[p].answered]
        if not answered:
            return "none recorded"
        if all(p in self._played for p in answered):
            return "already used by an earlier call of this replay"
        return "recorded"

    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """(tool, arguments) of every recorded call that got a result, in order (for the nearest
        recorded call)."""
        return [(result.tool, result.arguments) for result in self.results if result.answered]

    def state(self) -> frozenset[int]:
        return frozenset(self._played)

    def restored(self, state: frozenset[int] = frozenset()) -> RecordedResults:
        """A play state over the same results (shared, never changed), at `state`."""
        copy = RecordedResults.__new__(RecordedResults)
        copy.results, copy._index, copy._played = self.results, self._index, set(state)
        copy._skip = {}
        copy._steps = self._steps
        return copy


def _step_calls(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> StepCalls:
    """Every agent call on `path` by (turn number, step), turns and steps counted as the replay
    loop counts them (every assistant message of the turn, an errored one included, whose calls
    never ran; turns by the item's agent, `memo`)."""
    out: StepCalls = {}
    for turn in split_turns(path, memo):
        for step, entry in enumerate(turn.steps):
            message = entry.message
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
                calls = [(call.name, dict(call.arguments or {})) for call in message.tool_calls()]
                if calls:
                    out[(turn_number(turn.index), step)] = calls
    return out
