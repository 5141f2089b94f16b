"""Calls a session records as made by another call, and how they judge that call: the one answer
the ledger (`ledger._ledger_of`), safeguard (`compaction.safeguard.PathCalls`) and the report's
window rows (`qa.views.window_view`) read.

Two agents record them, each its own way:

* OpenClaw 2026.9.6 writes `openclaw.nested-tool.v1` custom messages naming their parent call
  (`agent_tools.nested_call_parents`): each parent ran Code Mode JavaScript that called catalog
  tools, and the records do not say which with what, so it mutates whatever its arguments read as.
* pi 1.6.0 persists no message for a call a tool made through `ctx.executeTool()` (a `codemode`
  script's `tools.<name>(args)`): it records them on the model-issued call's toolResult as
  `nestedCalls: {calls: [{id, name, status, arguments? | argumentsBytes, ...}], complete}`
  (core/agent-session.js `_handleAgentEvent`, on the result's message_start; core/nested-tool-calls.js
  `NestedCallRecorder`, calls of nested calls in the same record). Past `NESTED_CALL_LIMITS` a call
  is dropped or its arguments omitted, and `complete` is false; so is it while a call is unfinished.

A call whose paired result carries `nestedCalls` is judged by those calls, each classified by the
item's classifier (name + arguments): mutating when one mutates (a sub-agent one starts too: no
result links its transcript), when the record is incomplete (`complete` not true, a call without
`arguments`) or cannot be read. A complete record of reads makes a `codemode` call a read: the
QuickJS sandbox has no file system, network or timers, its scripts reach the outside world only
through tools and `models.*` (docs/codemode.md). Any other tool keeps its own class when it
mutates: its own code may write whatever it called, so its nested calls only add a change.

A `codemode` result without `nestedCalls`: pi writes none when the script called no tool
(`NestedCallRecorder.snapshot`), and records every call as it starts, before it runs. Such a script
only computed, kept values with `store()` (`codemode-store` custom entries of the session itself,
which no compaction removes) or ran non-LLM models (`models.*`: classifiers, image generation, which
answer the script and change nothing outside) ⇒ a read. Unless codemode's own rows of the script's
calls (`details.calls`, extensions/codemode/execute.js `executeCodemode`) are missing or name a
tool: then the record was lost (a `message_end` handler may replace the message whole) ⇒ mutating.
A `codemode` call with no result is judged by the classifier: `agent_tools.code_mode_cell`, class
`exec`; so is, in replay, one of a script the recording never ran (`replay.tools.recorded_judgement`:
a repeat of a recorded call is judged as the recorded calls were).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.safety.agent_tools import RAN_NESTED_CALLS, nested_call_parents, recorded_attribute
from replaylab.safety.classify import AGENT_BUILTIN, Classification, ToolClassifier
from replaylab.transcript.context import entry_to_message
from replaylab.transcript.model import MessageEntry, ToolCallBlock, ToolResultMessage
from replaylab.transcript.pairing import PathPairing, pair_path
from replaylab.upstream import pi_1_6_0 as PI16

#: the class of a nested call the ledger would follow to a sub-agent's transcript, which no nested
#: call's result links (pi persists no nested result)
_SUBAGENT_CLASS = "subagent"
_CODEMODE = f"pi's `{PI16.CODEMODE_TOOL_NAME}`"


@dataclass(frozen=True)
class NestedRecords:
    """A path's records of calls made by other calls (`nested_records`)."""

    #: the calls OpenClaw's nested-tool records name as their parent
    parents: frozenset[str] = frozenset()
    #: call id → the result of each call of that id (None: that call has none), for the ids with a
    #: result carrying pi's `nestedCalls` or answering a `codemode` call
    results: Mapping[str, tuple[ToolResultMessage | None, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.parents or self.results)

    def covers(self, call_id: str) -> bool:
        """Whether a record says something of the call of this id."""
        return call_id in self.parents or call_id in self.results

    def judge(self, name: str, call_id: str, classified: Classification, classifier: ToolClassifier) -> Classification:
        """The call's classification, given `classified` (the classifier's, by name and arguments)
        and what the records say of it (module rules)."""
        if call_id in self.parents:
            return classified if classified.mutating else Classification("exec", AGENT_BUILTIN, RAN_NESTED_CALLS)
        results = self.results.get(call_id)
        if results is None:
            return classified
        codemode = name == PI16.CODEMODE_TOOL_NAME
        verdict = _verdict(results, codemode, classifier)
        if verdict is None:
            return classified
        mutates, reason = verdict
        if codemode:
            return Classification("exec" if mutates else "read", AGENT_BUILTIN, reason)
        return Classification("exec", AGENT_BUILTIN, reason) if mutates and not classified.mutating else classified

    def mutating(self, call: ToolCallBlock, classifier: ToolClassifier) -> bool:
        """Whether the call mutates, by its records where they say something of it."""
        if not self.covers(call.id):
            return classifier.is_mutating(call.name, call.arguments)
        return self.judge(call.name, call.id, classifier.explain(call.name, call.arguments), classifier).mutating


#: a path with no record of nested calls
NO_RECORDS = NestedRecords()


def nested_records(
    items: Iterable[tuple[Any, Any]], pairing: PathPairing[Any] | Callable[[], PathPairing[Any]] | None = None
) -> NestedRecords:
    """The records of a path's (entry id, message) items. `pairing`: `pair_path` of the same
    path's messages (results answer the calls it pairs them with), or what makes it when a record
    needs it; None: made from `items`."""
    if pairing is None and not isinstance(items, Sequence):
        items = list(items)
    found = False

    def messages() -> Iterator[Any]:
        nonlocal found
        for _, message in items:
            found = found or _records_calls(message)
            yield message

    parents = nested_call_parents(messages())  # one pass: every message of a long path is read
    if not found:
        return NestedRecords(parents) if parents else NO_RECORDS
    if pairing is None:
        pairing = pair_path(items)
    elif callable(pairing):
        pairing = pairing()
    results: dict[str, tuple[ToolResultMessage | None, ...]] = {}
    for call in pairing.calls:
        results[call.block.id] = (*results.get(call.block.id, ()), call.result)
    kept = {key: made for key, made in results.items() if any(r is not None and _records_calls(r) for r in made)}
    return NestedRecords(parents, kept)


def path_records(path: Sequence[Any]) -> NestedRecords:
    """The records of a root → leaf path of entries (OpenClaw's are custom entries, no messages),
    its messages paired only when one records calls."""
    messages = ((entry.id, entry.message) for entry in path if isinstance(entry, MessageEntry))
    return nested_records(((entry.id, entry_to_message(entry)) for entry in path), lambda: pair_path(messages))


def recorded_nested_calls(result: Any) -> Iterator[tuple[str, Any]]:
    """(name, arguments) of each call pi's `nestedCalls` on a tool result records (arguments None
    when the record omits them), as pi 1.6.0's `extractFileOpsFromMessage` reads them."""
    record = recorded_attribute(result, PI16.NESTED_CALLS_KEY)
    calls = record.get("calls") if isinstance(record, dict) else None
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            yield call["name"], call.get("arguments")


def _records_calls(message: Any) -> bool:
    """Whether a message is a tool result carrying `nestedCalls` or answering a codemode call (read
    without pydantic's attribute lookup: every message of a long path is asked)."""
    if type(message) is not ToolResultMessage:
        return False
    extra = message.__pydantic_extra__
    return message.tool_name == PI16.CODEMODE_TOOL_NAME or bool(extra and extra.get(PI16.NESTED_CALLS_KEY) is not None)


def _verdict(
    results: Sequence[ToolResultMessage | None], codemode: bool, classifier: ToolClassifier
) -> tuple[bool, str] | None:
    """(mutates, why) of the calls of one id by their results' records; None: none says anything."""
    reads: list[str] = []
    for result in results:
        if result is None:
            if codemode:  # reused ids: another call of this id, unanswered, may have called anything
                return True, f"a {_CODEMODE} call of this id has no result that says what its script called ⇒ mutating"
            continue
        found = _record_verdict(result, classifier)
        if found is None:
            found = _unrecorded(result) if codemode else None
        if found is None:
            continue
        mutates, why = found
        if mutates:
            return True, why
        reads.append(why)
    return (False, reads[0]) if reads else None


def _record_verdict(result: ToolResultMessage, classifier: ToolClassifier) -> tuple[bool, str] | None:
    record = recorded_attribute(result, PI16.NESTED_CALLS_KEY)
    if record is None:
        return None
    calls = record.get("calls") if isinstance(record, dict) else None
    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls):
        return True, "pi recorded nested calls on this call's result (`nestedCalls`) that cannot be read ⇒ mutating"
    if record.get("complete") is not True or any(not isinstance(c.get("arguments"), dict) for c in calls):
        return True, (
            "pi's record of the calls this call made (`nestedCalls`) is incomplete: calls dropped or their arguments"
            " left out past its limits, or a call unfinished ⇒ mutating"
        )
    for call in calls:
        name, args = call["name"], call["arguments"]
        nested = classifier.explain(name, args)
        if nested.mutating or nested.tool_class == _SUBAGENT_CLASS:
            why = nested.reason if nested.mutating else "it starts a sub-agent whose transcript no result links"
            why = why.removesuffix(" ⇒ mutating")
            return True, f"pi recorded a call this call made (`nestedCalls`) that mutates: `{name}` ({why}) ⇒ mutating"
    names = ", ".join(dict.fromkeys(f"`{c['name']}`" for c in calls))
    return False, f"every call pi recorded this call making (`nestedCalls`) only reads: {names}"


def _unrecorded(result: ToolResultMessage) -> tuple[bool, str]:
    """A codemode result without `nestedCalls` (module rules)."""
    details = result.details if isinstance(result.details, dict) else {}
    rows = details.get("calls")
    if isinstance(rows, list) and all(
        isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"].startswith(PI16.CODEMODE_MODEL_ROW_PREFIX)
        for r in rows
    ):
        return False, (
            f"{_CODEMODE} script called no tool (pi records none on its result): it only computed, stored values"
            " in the session (`store()`) or ran non-LLM models (`models.*`)"
        )
    return True, (
        f"{_CODEMODE} result records no nested calls, yet its own rows of the script's calls (`details.calls`)"
        " are missing or name a tool: the record was lost ⇒ mutating"
    )
