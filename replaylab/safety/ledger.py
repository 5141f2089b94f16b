"""The replay-safety ledger: every mutating tool event of a session, in path order.

A ledger answers three questions the compaction checks and the reports ask (DESIGN §5):
which calls changed the outside world (`events`, `mutated_event_ids`), which entries belong to
them (`marks`, the per-entry `replayMark`), and whether the session may be replayed live
(`replay_safe`: no event at all, sub-agents included).

Event ids are tool call ids, not entry ids. DESIGN §5 names events by entry id, but an entry id
cannot name one of several parallel calls in one assistant entry (a `read` and a `write` in the
same message are two events with different safety), while the tool call id is unique per
session and is exactly what providers pair a result to, what the cassette and the replay traces
carry, and what survives compaction unchanged. The entry ids are kept on each event
(`entry_id`, `result_entry_id`) so a defect can still point at the lines.

Sub-agent sessions: a tool result whose `details.replaylab.childSession` names a transcript file
is followed (by default: a file next to the parent transcript). The child's events are folded
in right after the spawning call's event, with ids qualified `"<childSessionId>:<toolCallId>"`
(nested children: `"<child>:<grandchild>:<toolCallId>"`). The spawning call and its result are
marked unsafe when the child mutated. A child that is named but cannot be loaded is unknown,
and unknown is unsafe: the spawning call itself becomes an event of class `subagent-unresolved`.
So does a call that started a sub-agent and that no result answers (a log cut while its sub-agent
ran): no result names its transcript, and what the sub-agent did is unknown. What the call does
decides, not one class: a call of class `subagent`, or one the recording's header says started a
sub-agent (`spawn_links`: a Claude Code `Skill` whose skill runs forked).
A sub-agent no call names (`spawn_links.UNLINKED_CHILDREN`: a forked slash command the user typed)
is the session's all the same: its events are folded in after the calls' (each reason naming its
file and line), the entry its work shows at is marked unsafe and kept by a safeguard compaction as a
spawning call is, and one that cannot be loaded is an event of class `subagent-unresolved` there.

Which calls count: calls in assistant messages (actor `assistant`) and toolCall blocks in user
messages (τ²-bench telecom, where the simulated user runs tools on its own phone; actor `user`).
A call of an errored or aborted assistant message counts only if a result for it exists: pi drops
such messages before the next request, so without a result the call never ran.
User `!cmd` shell runs (`bashExecution` messages) are not tool calls: the agent never replays them.
A call recorded in a block type pi does not read (OpenClaw's legacy `toolUse`, `functionCall`)
counts as well. So does a call known only by its result: its message failed validation (an
unreadable entry) or is missing. Such a call has the result's tool name and no arguments, so it
mutates unless its tool only reads by name, and its event names the result's entry.

Restated entries (`transcript.restated`: a safeguard compaction writes the protected entries it
summarized past again after itself, byte for byte, each naming the entry it restates) are the
entries they restate: on a path that holds both, the restatement is left out, so a working copy's
ledger is its recording's; in a window, where only the restatement is shown, its event carries the
recorded entry's id. A copy whose claim does not hold (changed bytes) is an entry of its own.

Each event keeps the classification rule and reason that made it mutating (`classify.py`), and
the ledger lists the shell calls the read-only exemption kept out (`exempted`), so a report and
`replaylab inspect` can say why every call is, or is not, an event.
"""

from __future__ import annotations

import hashlib
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from replaylab.cassette import canonical_json
from replaylab.diagnostics import InputError
from replaylab.safety.classify import SHELL_EXEMPTIONS, Classification, ToolClassifier
from replaylab.safety.nested_calls import nested_records
from replaylab.safety.spawn_links import NO_LINKS, HeaderLinks, UnlinkedChild, header_links
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.load import Transcript, load_transcript
from replaylab.transcript.memo import ItemMemo, identity
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    ToolCallBlock,
    ToolResultMessage,
    UnreadableArguments,
    UserMessage,
    message_text,
)
from replaylab.transcript.pairing import PairedCall, pair_path
from replaylab.transcript.restated import without_restatements


class LedgerEvent(BaseModel):
    event_id: str
    entry_id: str
    tool_call_id: str
    tool: str
    tool_class: str
    actor: str = "assistant"
    session: str = ""
    args_hash: str = ""
    result_entry_id: str | None = None
    result_hash: str | None = None
    #: the classification rule that made the call mutating, and why in words (docs/classification.md)
    rule: str = ""
    reason: str = ""


class ShellExemption(BaseModel):
    """A shell call that a read-only rule (OpenClaw's exemption, the suite's commands, replaylab's
    read-only shell grammar) kept out of the ledger."""

    tool_call_id: str
    entry_id: str
    tool: str
    reason: str
    session: str = ""


class LedgerView(BaseModel):
    replay_safe: bool
    mutated_event_ids: list[str] = Field(default_factory=list)
    events: list[LedgerEvent] = Field(default_factory=list)


#: class given to the spawning call of a sub-agent whose transcript cannot be loaded
UNRESOLVED_SUBAGENT_CLASS = "subagent-unresolved"
_UNRESOLVED = Classification(
    UNRESOLVED_SUBAGENT_CLASS,
    UNRESOLVED_SUBAGENT_CLASS,
    "its sub-agent's transcript cannot be loaded, so what the sub-agent did is unknown ⇒ mutating",
)

_UNANSWERED = Classification(
    UNRESOLVED_SUBAGENT_CLASS,
    UNRESOLVED_SUBAGENT_CLASS,
    "it spawns a sub-agent and no result answers it (the log ends while the sub-agent runs), so no "
    "transcript is named and what the sub-agent did is unknown ⇒ mutating",
)
#: the class of a call that spawns a sub-agent (`classify.SAFE_CLASSES`: its own calls are its
#: transcript's)
SUBAGENT_CLASS = "subagent"

ChildResolver = Callable[[str], "Transcript | None"]

#: roles of messages stored in `message` entries; synthesized summaries carry no replayMark
_MARKED = (UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage, CustomMessage)


@dataclass
class Ledger:
    """Ordered mutating events of a session plus the per-entry replay marks."""

    events: list[LedgerEvent] = field(default_factory=list)
    marks: dict[str, str] = field(default_factory=dict)
    #: every tool call that ran (safe ones too), sub-agents included: class → count
    class_counts: dict[str, int] = field(default_factory=dict)
    #: the same calls by the classification rule that decided each (docs/classification.md)
    rule_counts: dict[str, int] = field(default_factory=dict)
    #: qualified child session id → that child's own ledger (ids already qualified)
    children: dict[str, Ledger] = field(default_factory=dict)
    #: childSession names that could not be loaded (their spawning call is an event)
    unresolved_children: list[str] = field(default_factory=list)
    #: shell calls exempted as read-only commands, sub-agents included, in path order
    exempted: list[ShellExemption] = field(default_factory=list)
    #: entry ids of this session's calls that spawned a sub-agent with events of its own
    mutating_spawns: list[str] = field(default_factory=list)
    #: (tool call id, tool, call entry id, result entry id) of those calls: what a compaction must
    #: keep of a sub-agent that mutated (its own events are in its transcript, not in this window)
    spawn_calls: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)

    @property
    def replay_safe(self) -> bool:
        return not self.events

    @property
    def mutated_event_ids(self) -> list[str]:
        return [event.event_id for event in self.events]

    def counts_by_class(self) -> dict[str, int]:
        """Tool calls by class (safe classes included). For a mutating class the count equals
        the number of events of that class."""
        return dict(self.class_counts)

    def unsafe_entry_ids(self) -> list[str]:
        return [entry_id for entry_id, mark in self.marks.items() if mark == "unsafe"]

    def view(self) -> LedgerView:
        """The report model (`LedgerView`)."""
        return LedgerView(
            replay_safe=self.replay_safe, mutated_event_ids=self.mutated_event_ids, events=list(self.events)
        )


def hash_arguments(arguments: Any) -> str:
    """First 16 hex of sha256 over the canonical JSON of the arguments (key order irrelevant)."""
    return hashlib.sha256(canonical_json(arguments).encode("utf-8")).hexdigest()[:16]


def hash_result_text(text: str) -> str:
    """First 16 hex of sha256 over the UTF-8 text a tool result shows the model."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _arguments_hash(block: ToolCallBlock) -> str:
    arguments = block.arguments
    # arguments that are no object are hashed as written: two such calls differ as they do
    return hash_arguments(arguments.written if type(arguments) is UnreadableArguments else arguments)


def _result_hash(result: ToolResultMessage) -> str:
    return hash_result_text(message_text(result))


Hashers = tuple[Callable[[ToolCallBlock], str], Callable[[ToolResultMessage], str]]


def _hashers(memo: ItemMemo | None) -> Hashers:
    """The argument hash of a call block and the text hash of a result message: with an item's
    memo, once per object (`memo.hashes`) and from the item's texts."""
    if memo is None:
        return _arguments_hash, _result_hash

    def result_text_hash(result: ToolResultMessage) -> str:
        return hash_result_text(memo.text(result))

    def arguments(block: ToolCallBlock) -> str:
        return memo.hashes.get(block, _arguments_hash)

    def result(message: ToolResultMessage) -> str:
        return memo.hashes.get(message, result_text_hash)

    return arguments, result


def folder_resolver(folder: Path | None) -> ChildResolver:
    """Child resolver reading sub-agent transcripts from `folder` (or below it).

    Absolute names and `..` are refused: a recording must not make replaylab read elsewhere."""

    def resolve(name: str) -> Transcript | None:
        if folder is None:
            return None
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts:
            return None
        candidate = folder / relative
        if not candidate.is_file():
            return None
        try:
            return load_transcript(candidate)
        except InputError:
            return None

    return resolve


def sibling_resolver(transcript: Transcript) -> ChildResolver:
    """Default child resolver: a file next to (or below) the parent transcript's file."""
    return folder_resolver(transcript.path.parent if transcript.path is not None else None)


def build_ledger(
    transcript: Transcript,
    classifier: ToolClassifier,
    *,
    path: list[AnyEntry] | None = None,
    resolve_child: ChildResolver | None = None,
    session_prefix: str = "",
    memo: ItemMemo | None = None,
) -> Ledger:
    """Ledger of one transcript along `path` (default: its leaf path).

    `session_prefix` is prepended to every event id (`"child:"` for a sub-agent); the default
    resolver loads sub-agent files next to the transcript.

    With an item's `memo` a ledger is built once per path: the same entry objects, classifier and
    prefix give the ledger built before (callers only read a ledger) — when that ledger looked up
    sub-agents, only for the same place to look them up (the recording's folder and the working
    copy's hold copies, but a compactor under test could change one)."""
    if memo is None:
        return _build(transcript, classifier, path, resolve_child, session_prefix, frozenset(), None)
    shared = memo.ledgers
    entries = transcript.leaf_path(memo) if path is None else list(path)
    key = (identity(classifier), session_prefix, transcript.header.id, *map(identity, entries))
    hit = shared.get(key)
    if hit is not None and _built_from(hit, entries, classifier) and not _looked_up_children(hit[1]):
        built: Ledger = hit[1]
        return built
    children_at = (
        resolve_child
        if resolve_child is not None
        else (transcript.path.parent if transcript.path is not None else None)
    )
    where = (identity(children_at) if resolve_child is not None else children_at, *key)
    found = shared.get(where)
    if found is None or not _built_from(found, entries, classifier) or found[0][2] is not resolve_child:
        found = shared[where] = (
            (entries, classifier, resolve_child),
            _build(transcript, classifier, entries, resolve_child, session_prefix, frozenset(), memo),
        )
        shared.setdefault(key, found)
    return found[1]


def _built_from(held: tuple[Any, Ledger], entries: list[AnyEntry], classifier: ToolClassifier) -> bool:
    """Whether a memo's ledger was built from these very objects (its key is their identities)."""
    built_entries, built_classifier, _ = held[0]
    return (
        built_classifier is classifier
        and len(built_entries) == len(entries)
        and all(map(operator.is_, built_entries, entries))
    )


def _looked_up_children(ledger: Ledger) -> bool:
    """Whether building `ledger` asked its resolver for a sub-agent (found or not)."""
    return bool(ledger.children or ledger.unresolved_children)


def ledger_for_window(
    window: Sequence[WindowMessage],
    classifier: ToolClassifier,
    *,
    resolve_child: ChildResolver | None = None,
    memo: ItemMemo | None = None,
    links: HeaderLinks = NO_LINKS,
) -> Ledger:
    """The ledger as visible in a window: only the calls and results the model would see.

    A window has no file, so sub-agents are followed only when `resolve_child` is given
    (pass `sibling_resolver(transcript)` to compare with `build_ledger(transcript, ...)`), and
    `links` (`header_links(transcript.header)`) name those no call names: each whose entry the
    window shows is folded in."""
    items = [(wm.source_id, wm.message) for wm in window]
    if memo is None or resolve_child is not None:
        shown = {entry_id for entry_id, _ in items}
        links = replace(links, unlinked=tuple(link for link in links.unlinked if link.at in shown))
        return _window_ledger(items, classifier, resolve_child, memo, links)
    # with an item's memo, once per window: the re-check and the report both read the ledger of
    # the window after the compaction (keyed like `build_ledger`'s: by what it is built from)
    messages = [message for _, message in items]
    key = ("window", identity(classifier), *(entry_id for entry_id, _ in items), *map(identity, messages))
    hit = memo.ledgers.get(key)
    if hit is None or not _built_from(hit, messages, classifier):
        hit = memo.ledgers[key] = ((messages, classifier, None), _window_ledger(items, classifier, None, memo))
    return hit[1]


def _window_ledger(
    items: list[tuple[str | None, Any]],
    classifier: ToolClassifier,
    resolve_child: ChildResolver | None,
    memo: ItemMemo | None,
    links: HeaderLinks = NO_LINKS,
) -> Ledger:
    return _ledger_of(
        items,
        classifier,
        resolve_child,
        "",
        frozenset(),
        _hashers(memo),
        follow_children=resolve_child is not None,
        explicit_resolver=resolve_child,
        memo=memo,
        links=links,
    )


# ---------------------------------------------------------------- internals


def _build(
    transcript: Transcript,
    classifier: ToolClassifier,
    path: list[AnyEntry] | None,
    resolve_child: ChildResolver | None,
    prefix: str,
    seen: frozenset[str],
    memo: ItemMemo | None,
) -> Ledger:
    entries = transcript.leaf_path(memo) if path is None else path
    items = [(e.id, m) for e in without_restatements(entries, memo) if (m := entry_to_message(e)) is not None]
    resolver = resolve_child or sibling_resolver(transcript)
    # a sub-agent no call names is the session's where its entry is on the path, as a call is: one
    # whose entry a rewind left on an abandoned branch (or a path that ends before it) is not
    links = header_links(transcript.header)
    if links.unlinked:
        on_path = {e.id for e in entries}
        links = replace(links, unlinked=tuple(link for link in links.unlinked if link.at is None or link.at in on_path))
    return _ledger_of(
        items,
        classifier,
        resolver,
        prefix,
        seen | {transcript.header.id},
        _hashers(memo),
        follow_children=True,
        explicit_resolver=resolve_child,
        memo=memo,
        links=links,
    )


def calls_that_ran(messages: Iterable[Any]) -> list[ToolCallBlock]:
    """The tool calls of a path's messages that the ledger counts, in order: every call, less
    those of an errored or aborted reply that no result answers (they never ran)."""
    return [c.block for c in pair_path((None, m) for m in messages).calls if not (c.errored and c.result is None)]


def _child_name(result: ToolResultMessage | None) -> str | None:
    details = result.details if result is not None else None
    ours = details.get("replaylab") if isinstance(details, dict) else None
    name = ours.get("childSession") if isinstance(ours, dict) else None
    return name if isinstance(name, str) and name else None


def _ledger_of(
    items: Sequence[tuple[str | None, Any]],
    classifier: ToolClassifier,
    resolver: ChildResolver | None,
    prefix: str,
    seen: frozenset[str],
    hashers: Hashers,
    *,
    follow_children: bool,
    explicit_resolver: ChildResolver | None = None,
    memo: ItemMemo | None = None,
    links: HeaderLinks = NO_LINKS,
) -> Ledger:
    """`resolver` loads this session's children; `explicit_resolver` (the caller's, if any) is
    handed down to grandchildren, else each child resolves relative to its own file. `memo`: the
    item's, for the children's ledgers; `links`: what the session's header says of its
    sub-agents (`spawn_links`)."""
    ledger = Ledger()
    arguments_hash, result_hash = hashers
    for entry_id, message in items:
        if entry_id is not None and isinstance(message, _MARKED):
            ledger.marks[entry_id] = "safe"
    counts: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    used_ids: set[str] = set()
    session = prefix.rstrip(":")

    def add_event(call: PairedCall[str | None], classified: Classification) -> None:
        event_id = prefix + call.block.id
        if event_id in used_ids:  # a provider reused a call id: keep ids unique, in order
            n = 2
            while f"{event_id}#{n}" in used_ids:
                n += 1
            event_id = f"{event_id}#{n}"
        used_ids.add(event_id)
        ledger.events.append(
            LedgerEvent(
                event_id=event_id,
                entry_id=call.entry or call.result_entry or "",
                tool_call_id=call.block.id,
                tool=call.block.name,
                tool_class=classified.tool_class,
                actor=call.actor,
                session=session,
                args_hash=arguments_hash(call.block),
                result_entry_id=call.result_entry,
                result_hash=result_hash(call.result) if call.result is not None else None,
                rule=classified.rule,
                reason=classified.reason,
            )
        )
        mark_unsafe(call)

    def mark_unsafe(call: PairedCall[str | None]) -> None:
        for entry_id in (call.entry, call.result_entry):
            if entry_id is not None:
                ledger.marks[entry_id] = "unsafe"

    pairing = pair_path(items)
    nested = nested_records(items, pairing)  # the calls other calls made, as the path records them
    for call in pairing.calls:
        if call.errored and call.result is None:
            continue  # never ran
        classified = classifier.explain(call.block.name, call.block.arguments)
        if nested.covers(call.block.id):
            classified = nested.judge(call.block.name, call.block.id, classified, classifier)
        if call.unread:
            classified = replace(classified, reason=f"its call cannot be read, only its result: {classified.reason}")
        counts[classified.tool_class] += 1
        rules[classified.rule] += 1
        mutating = classified.mutating
        if mutating:
            add_event(call, classified)
        elif classified.rule in SHELL_EXEMPTIONS:
            ledger.exempted.append(
                ShellExemption(
                    tool_call_id=call.block.id,
                    entry_id=call.entry or call.result_entry or "",
                    tool=call.block.name,
                    reason=classified.reason,
                    session=session,
                )
            )
        name = _child_name(call.result) if follow_children else None
        if name is None:
            spawned = classified.tool_class == SUBAGENT_CLASS or call.block.id in links.spawns
            if follow_children and call.result is None and spawned and not mutating:
                add_event(call, _UNANSWERED)
            continue
        child = resolver(name) if resolver is not None else None
        if child is None or child.header.id in seen:
            ledger.unresolved_children.append(name)
            if not mutating:
                add_event(call, _UNRESOLVED)
            continue
        child_prefix = f"{prefix}{child.header.id}:"
        sub = _build(child, classifier, None, explicit_resolver, child_prefix, seen, memo)
        ledger.children[child_prefix.rstrip(":")] = sub
        ledger.events.extend(sub.events)
        ledger.unresolved_children.extend(sub.unresolved_children)
        ledger.exempted.extend(sub.exempted)
        counts.update(sub.class_counts)
        rules.update(sub.rule_counts)
        if sub.events:
            mark_unsafe(call)
            # a spawn known only by its result (its call cannot be read) is that result's entry
            spawn_entry = call.entry or call.result_entry
            if spawn_entry is not None:
                ledger.mutating_spawns.append(spawn_entry)
            if not mutating:  # a spawning call that mutates by itself is an event already
                ledger.spawn_calls.append((call.block.id, call.block.name, call.entry, call.result_entry))
    for link in links.unlinked if follow_children else ():
        unlinked = _unlinked_child(ledger, link, resolver, explicit_resolver, classifier, prefix, seen, memo)
        if unlinked is not None:
            counts.update(unlinked.class_counts)
            rules.update(unlinked.rule_counts)
    ledger.class_counts = dict(counts)
    ledger.rule_counts = dict(rules.most_common())
    return ledger


def _unlinked_child(
    ledger: Ledger,
    link: UnlinkedChild,
    resolver: ChildResolver | None,
    explicit_resolver: ChildResolver | None,
    classifier: ToolClassifier,
    prefix: str,
    seen: frozenset[str],
    memo: ItemMemo | None,
) -> Ledger | None:
    """Fold a sub-agent no call names into `ledger` (module rules); its ledger, when it loads."""
    name, at = link.child_session, link.at
    child = resolver(name) if resolver is not None else None
    where = f" ({link.source})" if link.source else ""
    session = prefix.rstrip(":")
    if child is None or child.header.id in seen:
        ledger.unresolved_children.append(name)
        ledger.events.append(
            LedgerEvent(
                event_id=f"{prefix}unlinked:{name}",
                entry_id=at or "",
                tool_call_id=f"unlinked:{name}",
                tool="sub-agent",
                tool_class=UNRESOLVED_SUBAGENT_CLASS,
                session=session,
                rule=UNRESOLVED_SUBAGENT_CLASS,
                reason=f"sub-agent {name}{where}, which no call of this session names, cannot be loaded, "
                "so what it did is unknown ⇒ mutating",
            )
        )
        if at is not None:
            ledger.marks[at] = "unsafe"
        return None
    child_prefix = f"{prefix}{child.header.id}:"
    sub = _build(child, classifier, None, explicit_resolver, child_prefix, seen, memo)
    ledger.children[child_prefix.rstrip(":")] = sub
    file = child.path.name if child.path is not None else name
    for event in sub.events:
        line = child.line_of.get(event.entry_id) if event.session == child_prefix.rstrip(":") else None
        place = f"{file}:{line}" if line is not None else file
        ledger.events.append(
            event.model_copy(
                update={
                    "reason": f"{event.reason} (at {place}: sub-agent {name}{where}, which no call of this "
                    "session names, ran in it)"
                }
            )
        )
    ledger.unresolved_children.extend(sub.unresolved_children)
    ledger.exempted.extend(sub.exempted)
    if sub.events and at is not None:
        ledger.marks[at] = "unsafe"
        ledger.mutating_spawns.append(at)
        ledger.spawn_calls.append((f"unlinked:{name}", "sub-agent", at, None))
    return sub
