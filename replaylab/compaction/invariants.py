"""replayCheck: the blocking invariants of DESIGN §9 on a compacted window.

Each check compares the window after a compaction with the recording it came from and returns
`Defect`s; none needs the compactor: the QA pipeline reuses them on any compactor's output (mutants too).

* MUTATION_DROPPED / MUTATION_ALTERED — every entry of a mutating event that the model saw
  before the compaction (the call's message and its result) is in the window afterwards, and
  byte-identical to the recording (compared as dumped JSON). An entry restated after the
  compaction (`transcript.restated`: it names the entry it restates, or any new entry carrying the
  same tool call) counts as kept only when its message is byte-identical; a changed copy is
  MUTATION_ALTERED — but for a restated tool result whose truncation is declared
  (`transcript.restated`) when the compaction allowed it (`allowMutatingEventTruncate`), and for a
  restated message written without the `excludeFromContext` mark only a reset honoured — when the
  window before showed it: a copy so written of an entry it did not show is MUTATION_ALTERED. Each is
  one finding per event (its tool call id), located at the call's entry and naming both entries,
  the tool and its arguments: a dropped call and its result are one lost side effect, not two.
* PAIR_BROKEN — every call (of a message pi would send) whose result exists in the recording is
  followed by it, with nothing in between that was not between them in the recording; no tool
  result without its call (but for a result of an errored / aborted message's call, which pi
  drops from every request: the recording's own window holds it without its call). A copy the
  compactor wrote holds the recorded calls: its results must follow it directly.
* THINKING_ALTERED — thinking blocks of every kept assistant message equal the recording's,
  signature included (providers reject altered signed thinking); a copy the compactor wrote
  (a new entry carrying the same tool calls) is held to the message it restates.
* REPLAY_FLAG_WRONG / MUTATED_IDS_WRONG — what the compactor reports vs the ledger.

Inputs are plain: the recording's root→leaf entries, windows as `WindowMessage`s (or the
`compactedWindow` JSON of a `CompactResult`), and ledger-ish data (a `Ledger`, or a classifier).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replaylab.cassette import canonical_json
from replaylab.defects import Code, Defect
from replaylab.differences import differences
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.nested_calls import nested_records
from replaylab.scrub import scrub_data
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import (
    MESSAGE_ADAPTER,
    AnyEntry,
    AssistantMessage,
    MessageEntry,
    ThinkingBlock,
    ToolResultMessage,
    dump_entry,
)
from replaylab.transcript.pairing import is_errored, message_calls
from replaylab.transcript.restated import EXCLUDE_FROM_CONTEXT

if TYPE_CHECKING:
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript.rules import AgentRules

#: characters of a mutating call's arguments a finding's message shows (all of them are in its detail)
ARGUMENTS_SHOWN = 160


def as_window(window: Iterable[Any]) -> list[WindowMessage]:
    """`WindowMessage`s, or `compactedWindow` dicts ({entryId, protected, message})."""
    out = []
    for item in window:
        if isinstance(item, WindowMessage):
            out.append(item)
        elif isinstance(item, Mapping):
            message = item.get("message")
            restates = item.get("restates")
            out.append(
                WindowMessage(
                    item.get("entryId"),
                    MESSAGE_ADAPTER.validate_python(message),
                    bool(item.get("protected")),
                    restates if isinstance(restates, str) else None,
                    item.get("truncated") is True,
                )
            )
        else:
            raise TypeError(f"not a window item: {type(item).__name__}")
    return out


def _dumped(message: Any) -> bytes:
    return canonical_json(dump_entry(message)).encode()


def _shown_without_mark(copy: Any, original: Any) -> bool:
    """`copy` is `original`, a message marked `excludeFromContext: true`, without that mark: how
    safeguard restates a message OpenClaw showed only because a reset kept it
    (`transcript.restated`), which the restatement's own check has already held to this."""
    recorded = dump_entry(original)
    if recorded.pop(EXCLUDE_FROM_CONTEXT, None) is not True:
        return False
    return canonical_json(recorded) == canonical_json(dump_entry(copy))


def recorded_messages(path: Sequence[AnyEntry]) -> dict[str, Any]:
    """Each message entry's message by entry id (`check_mutations_kept`'s `recorded`)."""
    return {e.id: e.message for e in path if isinstance(e, MessageEntry)}


@dataclass(frozen=True)
class MutatingEvent:
    """One mutating tool call and its result: the unit a QA engineer acts on, so each finding about
    a kept or lost event is made once for it, not once for each of its entries."""

    tool_call_id: str
    tool: str
    call_entry_id: str | None
    result_entry_id: str | None = None
    #: a spawn whose sub-agent mutated or cannot be loaded: no classification of the call says so
    spawn: bool = False

    @functools.cached_property
    def entry_ids(self) -> tuple[str, ...]:
        # cached: a check of each compaction of a long session reads every event's ids again
        # one entry when the call is known only by its result (the ledger's event names it for both)
        return tuple(dict.fromkeys(i for i in (self.call_entry_id, self.result_entry_id) if i))


def mutating_events(items: Iterable[tuple[str | None, Any]], classifier: ToolClassifier) -> list[MutatingEvent]:
    """Every mutating event among `items` ((entry id, message) pairs in order), in call order, each call
    judged as the ledger judges it (`nested_calls`); parallel calls of one message are separate events."""
    # [call id, tool, call entry, errored, mutating, result entry] per call; a result answers its id's latest call
    calls: list[list[Any]] = []
    latest: dict[str, int] = {}
    nested = nested_records(items := list(items))
    for entry_id, message in items:
        for call in message_calls(message):
            latest[call.id] = len(calls)
            mutating = nested.mutating(call, classifier)
            calls.append([call.id, call.name, entry_id, is_errored(message), mutating, None])
        if isinstance(message, ToolResultMessage) and message.tool_call_id in latest:
            answered = calls[latest[message.tool_call_id]]
            if answered[5] is None:
                answered[5] = entry_id
    return [
        MutatingEvent(call_id, tool, entry_id, result)
        for call_id, tool, entry_id, errored, mutating, result in calls
        if mutating and not (errored and result is None)
    ]


def ledger_events(ledger: Ledger) -> list[MutatingEvent]:
    """The same events from a `Ledger` (main-session events only: child entry ids are elsewhere),
    and each call of this session that spawned a sub-agent that mutated: its call and result are all
    this window shows of what the sub-agent did (safeguard protects them)."""
    events = [
        MutatingEvent(event.tool_call_id, event.tool, event.entry_id, event.result_entry_id)
        for event in getattr(ledger, "events", [])
        if not getattr(event, "session", "")
    ]
    events += [MutatingEvent(*spawn, spawn=True) for spawn in ledger.spawn_calls]
    return events


def _by_entry(events: Iterable[MutatingEvent]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for event in events:
        for entry_id in event.entry_ids:
            out.setdefault(entry_id, (event.tool_call_id, event.tool))
    return out


def mutating_entries(items: Iterable[tuple[str | None, Any]], classifier: ToolClassifier) -> dict[str, tuple[str, str]]:
    """entry id → (tool call id, tool) for every entry of a mutating event among `items`: the
    message holding the call and the result."""
    return _by_entry(mutating_events(items, classifier))


def ledger_entries(ledger: Ledger) -> dict[str, tuple[str, str]]:
    """Same mapping from a `Ledger`."""
    return _by_entry(ledger_events(ledger))


def _answers(message: Any) -> bool:
    """Whether a message is a tool result (it answers a call) rather than the call's message."""
    return isinstance(message, ToolResultMessage)


def _by_call(window: Sequence[WindowMessage]) -> dict[tuple[str, bool], list[WindowMessage]]:
    """(tool call id, is a result) → the window messages carrying that call or answering it, in
    order (a provider may number its calls afresh in every message: one id, several calls)."""
    out: dict[tuple[str, bool], list[WindowMessage]] = {}
    for item in window:
        message = item.message
        if isinstance(message, ToolResultMessage):
            out.setdefault((message.tool_call_id, True), []).append(item)
        else:
            for call in message_calls(message):
                out.setdefault((call.id, False), []).append(item)
    return out


def _copy_of(candidates: Sequence[WindowMessage], original: Any) -> WindowMessage | None:
    """The window message that stands for a recorded one no entry id names: the one of its call
    that is the same bytes, else the first of its call (an altered copy)."""
    dumped = _dumped(original)
    return next((c for c in candidates if _dumped(c.message) == dumped), candidates[0] if candidates else None)


def _arguments(recorded: Mapping[str, Any], entry_id: str | None, call_id: str) -> Any:
    """The recorded arguments of call `call_id`, scrubbed: findings are shown and stored as they are."""
    message = recorded.get(entry_id or "")
    for call in message_calls(message) if message is not None else ():
        if call.id == call_id:
            return scrub_data(call.arguments)
    return None


def _shown(tool: str, arguments: Any) -> str:
    if arguments is None:
        return tool
    text = canonical_json(arguments)
    return f"{tool} {text[:ARGUMENTS_SHOWN]}{'…' if len(text) > ARGUMENTS_SHOWN else ''}"


def _entries(event: MutatingEvent, entry_ids: Sequence[str]) -> str:
    """'call entry X and result entry Y': which of `event`'s entries `entry_ids` are."""
    # a call known only by its result names that result for both
    names = [f"{'result' if entry_id == event.result_entry_id else 'call'} entry {entry_id}" for entry_id in entry_ids]
    return " and ".join(names)


#: why a spawning call is an event (`MutatingEvent.spawn`), as a finding's classification says it
SPAWN_CLASSIFICATION = {"class": "subagent", "rule": "sub-agent", "reason": "its sub-agent mutated or cannot be loaded"}


def event_detail(event: MutatingEvent, arguments: Any) -> dict[str, Any]:
    """What a finding about `event` names besides its `where`: its entry ids, arguments (a spawn's why)."""
    detail = {"call_entry_id": event.call_entry_id, "result_entry_id": event.result_entry_id, "arguments": arguments}
    if event.spawn:
        detail["classification"] = SPAWN_CLASSIFICATION
    return detail


def _turn(event: MutatingEvent, turns: Mapping[str, int] | None) -> int | None:
    if not turns:
        return None
    return next((turns[i] for i in event.entry_ids if i in turns), None)


def check_mutations_kept(
    recording_path: Sequence[AnyEntry],
    before: Sequence[WindowMessage],
    after: Sequence[WindowMessage],
    events: Iterable[MutatingEvent],
    turns: Mapping[str, int] | None = None,
    *,
    truncation_allowed: bool = False,
    recorded: Mapping[str, Any] | None = None,
) -> list[Defect]:
    """MUTATION_DROPPED / MUTATION_ALTERED, each at most once per mutating event whose entries the
    model saw before compaction; `turns`: entry id → turn number (1-based), to say where the event
    happened; `truncation_allowed`: a declared truncation of a restated result is no alteration.
    `recorded`: `recorded_messages(recording_path)` when the caller has it (an audit of many
    compactions on one path makes it once, not once per compaction)."""
    if recorded is None:
        recorded = recorded_messages(recording_path)
    visible = {item.source_id: item for item in before if item.source_id}
    after_by_id = {item.source_id: item for item in after if item.source_id}
    restated = _by_call(after)
    defects = []
    for event in events:
        shown = [visible[i] for i in event.entry_ids if i in visible]
        # a copy without the exclusion mark of an entry the model did not see: shown only now
        unhidden = [
            i
            for i in event.entry_ids
            if i not in visible
            and i in after_by_id
            and i in recorded
            and _shown_without_mark(after_by_id[i].message, recorded[i])
        ]
        if not shown and not unhidden:
            continue
        dropped: list[str] = []
        altered: dict[str, tuple[Any, Any]] = {
            i: (dump_entry(recorded[i]), dump_entry(after_by_id[i].message)) for i in unhidden
        }
        for item in shown:
            entry_id = item.entry_id or ""
            original = recorded.get(entry_id, item.message)
            kept = (
                after_by_id.get(item.source_id or "")
                or after_by_id.get(entry_id)
                or _copy_of(restated.get((event.tool_call_id, _answers(item.message)), ()), original)
            )
            if kept is None:
                dropped.append(entry_id)
                continue
            # `item` may itself be a copy an earlier compaction restated: its source is the recorded entry
            if truncation_allowed and kept.truncated and kept.source_id in (entry_id, item.source_id):
                continue  # a result shortened as the compaction was allowed to, and declared so
            # the very object is the same bytes: a working copy's parse may share the recording's messages
            if kept.message is not original and _dumped(kept.message) != _dumped(original):
                if kept.source_id == entry_id and _shown_without_mark(kept.message, original):
                    continue  # a copy of a message a reset alone showed, restated without its mark
                altered[entry_id] = (dump_entry(original), dump_entry(kept.message))
        arguments = _arguments(recorded, event.call_entry_id, event.tool_call_id)
        where = {
            "entry_id": event.call_entry_id or (shown[0].entry_id if shown else unhidden[0]),
            "tool_call_id": event.tool_call_id,
            "tool": event.tool,
            "turn": _turn(event, turns),
        }
        what = f"mutating event {_shown(event.tool, arguments)} ({event.tool_call_id})"
        if event.spawn:
            what += ", a spawn whose sub-agent mutated or cannot be loaded"
        if dropped:
            defects.append(
                Defect.of(
                    Code.MUTATION_DROPPED,
                    f"{what}: {_entries(event, dropped)} {'is' if len(dropped) == 1 else 'are'} "
                    "missing from the compacted window",
                    expected="kept verbatim",
                    actual="dropped",
                    detail={**event_detail(event, arguments), "dropped": dropped},
                    **where,
                )
            )
        if altered:
            one = len(altered) == 1
            first = next(iter(altered.values()))
            expected = first[0] if one else {i: pair[0] for i, pair in altered.items()}
            actual = first[1] if one else {i: pair[1] for i, pair in altered.items()}
            diffs = differences(expected, actual)
            defects.append(
                Defect.of(
                    Code.MUTATION_ALTERED,
                    f"{what}: {_entries(event, list(altered))} differ{'s' if one else ''} from the recording"
                    + (f" at {diffs.paths()}" if diffs else ""),
                    expected=expected,
                    actual=actual,
                    detail={**event_detail(event, arguments), "altered": list(altered), **diffs.as_detail()},
                    **where,
                )
            )
    return defects


def check_pairs(
    recording_path: Sequence[AnyEntry],
    after: Sequence[WindowMessage],
    turns: Mapping[str, int] | None = None,
    rules: AgentRules | None = None,
    before: Sequence[WindowMessage] | None = None,
) -> list[Defect]:
    """PAIR_BROKEN: call without its result, orphan result, or something in between — once per tool
    call, located at the call's entry with its result's entry, the tool and its arguments.

    The pairs judged are those of the path as the item's agent (`rules`) reads it: an entry it
    keeps aside as it loads the session (`AgentRules.kept_aside`) is in none of its contexts, so
    a call whose result it keeps aside had no result before the compaction either, and the
    compaction did not part them. Likewise a pair the recording's own window (`before`) already
    holds broken — a result written twice, or after the next user message — was not parted by the
    compaction: the finding is the compaction's only where `before` holds the pair whole."""
    if rules is not None:
        aside = {entry.id for entry, _ in rules.kept_aside(recording_path)}
        if aside:
            recording_path = [entry for entry in recording_path if entry.id not in aside]
    pairs = _RecordedPairs(recording_path)
    found = pairs.breaks(after)
    # the window before is read only when the one after breaks a pair: most break none
    already = {call_id for call_id, *_ in pairs.breaks(before)} if found and before is not None else set()
    defects: list[Defect] = []
    for call_id, message, entry_id, extra in found:
        if call_id in already:
            continue
        call_entry = pairs.recorded_calls.get(call_id)
        event = MutatingEvent(call_id, pairs.tools.get(call_id, ""), call_entry, pairs.results_of.get(call_id))
        detail = {**event_detail(event, _arguments(pairs.recorded, call_entry, call_id)), "seen_at": entry_id}
        defects.append(
            Defect.of(
                Code.PAIR_BROKEN,
                message,
                entry_id=call_entry or entry_id,
                tool_call_id=call_id,
                tool=event.tool or None,
                turn=_turn(event, turns),
                detail=detail,
                **extra,
            )
        )
    return defects


class _RecordedPairs:
    """The recording's calls and the result that answers each (keyed by occurrence: a provider
    may reuse a call id later in a session), read once for judging windows against them."""

    def __init__(self, recording_path: Sequence[AnyEntry]):
        self.index = {e.id: i for i, e in enumerate(recording_path)}
        self.recorded = recorded_messages(recording_path)
        self.recorded_calls: dict[str, str] = {}
        self.tools: dict[str, str] = {}
        #: (call entry id, call id) → index of the first result after that call
        self.result_at: dict[tuple[str, str], int] = {}
        pending: dict[str, str] = {}
        self.sent_calls: set[str] = set()  # of messages pi sends: an errored / aborted one it drops
        self.errored_calls: set[str] = set()
        for i, entry in enumerate(recording_path):
            if not isinstance(entry, MessageEntry):
                continue
            calls = message_calls(entry.message)
            (self.errored_calls if is_errored(entry.message) else self.sent_calls).update(call.id for call in calls)
            for call in calls:
                self.recorded_calls[call.id] = entry.id
                self.tools[call.id] = call.name
                pending[call.id] = entry.id
            if isinstance(entry.message, ToolResultMessage) and entry.message.tool_call_id in pending:
                self.result_at[(pending.pop(entry.message.tool_call_id), entry.message.tool_call_id)] = i
        self.answered = {call_id for _, call_id in self.result_at}
        self.results_of = {call_id: recording_path[i].id for (_, call_id), i in self.result_at.items()}

    def breaks(self, window: Sequence[WindowMessage]) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """(call id, what is wrong, the entry where it shows, expected / actual) of each pair the
        window breaks, the first break of each call, in window order."""
        found: list[tuple[str, str, str | None, dict[str, Any]]] = []
        reported: set[str] = set()

        def broken(call_id: str, message: str, entry_id: str | None, expected: str, actual: str) -> None:
            if call_id not in reported:
                reported.add(call_id)
                found.append((call_id, message, entry_id, {"expected": expected, "actual": actual}))

        # call id → the entries of its calls still waiting for a result (a provider that gives no
        # ids makes parallel calls of one message share one: they are answered in order)
        open_calls: dict[str, list[str | None]] = {}
        seen_calls: set[str] = set()
        for item in window:
            message = item.message
            if isinstance(message, ToolResultMessage):
                call_id = message.tool_call_id
                if call_id in open_calls:
                    waiting = open_calls[call_id]
                    del waiting[0]
                    if not waiting:
                        del open_calls[call_id]
                elif call_id in seen_calls:
                    broken(
                        call_id,
                        f"tool result {item.entry_id} is separated from its call {call_id}",
                        item.entry_id,
                        "directly after its call",
                        "separated",
                    )
                elif call_id in self.recorded_calls and not (
                    call_id in self.errored_calls and call_id not in self.sent_calls
                ):
                    # a result of an errored message's call has no call in any window, the
                    # recording's own included: no compaction parted them
                    broken(
                        call_id,
                        f"orphan tool result {item.entry_id}: its call {call_id} "
                        f"(entry {self.recorded_calls[call_id]}) is not in the window",
                        item.entry_id,
                        f"call in entry {self.recorded_calls[call_id]}",
                        "missing",
                    )
                continue
            if open_calls:
                position = self.index.get(item.source_id or "", -1)
                for call_id, waiting in list(open_calls.items()):
                    call_entry = waiting[0]
                    start = self.index.get(call_entry or "", -1)
                    if not (start < position < self.result_at.get((call_entry or "", call_id), -1)):
                        broken(
                            call_id,
                            f"entry {item.entry_id or '(summary)'} sits between call {call_id} and its result",
                            item.entry_id,
                            "results directly after the call",
                            "interleaved",
                        )
                        del open_calls[call_id]
            if is_errored(message):
                continue
            # a copy the compactor wrote (restated, or a new entry): its calls are the recorded calls
            copy = item.restates is not None or item.entry_id not in self.index
            for call in message_calls(message):
                seen_calls.add(call.id)
                if (item.source_id or "", call.id) in self.result_at or (copy and call.id in self.answered):
                    open_calls.setdefault(call.id, []).append(item.source_id)
        for call_id, waiting in open_calls.items():
            entry_id = waiting[0]
            broken(
                call_id,
                f"tool call {call_id} (entry {entry_id}) has no result in the window although the recording has one",
                entry_id,
                "its result",
                "missing",
            )
        return found


def _thinking(message: Any) -> list[bytes]:
    if not isinstance(message, AssistantMessage):
        return []
    return [_dumped(b) for b in message.content if isinstance(b, ThinkingBlock)]


def check_thinking(recording_path: Sequence[AnyEntry], after: Sequence[WindowMessage]) -> list[Defect]:
    recorded = recorded_messages(recording_path)
    restates: dict[str, Any] = {}  # tool call id → the recorded assistant message that made the call
    for message in recorded.values():
        for call in message_calls(message) if isinstance(message, AssistantMessage) else ():
            restates.setdefault(call.id, message)
    defects = []
    for item in after:
        original = recorded.get(item.source_id or "")
        if original is None and isinstance(item.message, AssistantMessage):
            # a copy the compactor wrote in place of a recorded message carries its tool calls
            original = next((restates[c.id] for c in message_calls(item.message) if c.id in restates), None)
        if not isinstance(original, AssistantMessage) or item.message is original:
            continue  # the very object has the very thinking blocks
        before, now = _thinking(original), _thinking(item.message)
        if before != now:
            defects.append(
                Defect.of(
                    Code.THINKING_ALTERED,
                    f"thinking blocks of entry {item.entry_id} differ from the recording "
                    f"({len(before)} recorded, {len(now)} in the window)",
                    expected=len(before),
                    actual=len(now),
                    entry_id=item.entry_id,
                )
            )
    return defects


def check_flags(
    replay_safe: bool | None, mutated_event_ids: Sequence[str] | None, ledger_ids: Sequence[str]
) -> list[Defect]:
    defects = []
    expected_safe = not ledger_ids
    if replay_safe is not None and replay_safe != expected_safe:
        defects.append(
            Defect.of(
                Code.REPLAY_FLAG_WRONG,
                "replaySafe disagrees with the ledger",
                expected=expected_safe,
                actual=replay_safe,
            )
        )
    if mutated_event_ids is not None and list(mutated_event_ids) != list(ledger_ids):
        missing = [i for i in ledger_ids if i not in mutated_event_ids]
        extra = [i for i in mutated_event_ids if i not in ledger_ids]
        what = f"{len(missing)} missing, {len(extra)} extra" if missing or extra else "same ids in a different order"
        defects.append(
            Defect.of(
                Code.MUTATED_IDS_WRONG,
                f"mutatedEventIds: {what}",
                expected=list(ledger_ids),
                actual=list(mutated_event_ids),
                detail={"missing": missing, "extra": extra},
            )
        )
    return defects


def replay_check(
    recording_path: Sequence[AnyEntry],
    before: Iterable[Any],
    after: Iterable[Any],
    *,
    classifier: ToolClassifier | None = None,
    ledger: Ledger | None = None,
    replay_safe: bool | None = None,
    mutated_event_ids: Sequence[str] | None = None,
    turns: Mapping[str, int] | None = None,
    truncation_allowed: bool = False,
    rules: AgentRules | None = None,
) -> list[Defect]:
    """All blocking invariants of one compaction. Mutating events come from `ledger` when given,
    else from `classifier` (default rules: OpenClaw's, unknown ⇒ mutating); `turns` (entry id →
    turn number, 1-based) locates the findings in the conversation when the caller knows its turns;
    `truncation_allowed`: the compaction's allowMutatingEventTruncate; `rules`: the item's agent's
    (None: pi 0.73.1's)."""
    before_w, after_w = as_window(before), as_window(after)
    if ledger is not None:
        events = ledger_events(ledger)
        ledger_ids = list(ledger.mutated_event_ids)
    else:
        events = mutating_events(
            ((e.id, e.message) for e in recording_path if isinstance(e, MessageEntry)), classifier or ToolClassifier()
        )
        ledger_ids = None
    defects = check_mutations_kept(
        recording_path, before_w, after_w, events, turns, truncation_allowed=truncation_allowed
    )
    defects += check_pairs(recording_path, after_w, turns, rules, before_w)
    defects += check_thinking(recording_path, after_w)
    if ledger_ids is not None:
        defects += check_flags(replay_safe, mutated_event_ids, ledger_ids)
    return defects
