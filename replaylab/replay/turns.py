"""Split a recording's path into user turns: what the world said, then what the agent did.

A turn starts at the first "input" entry after the agent's last step: a user message, a
user-side tool call and its result (τ²-bench telecom: the simulated user runs tools on its own
phone), a `custom_message`, a `branch_summary`, a `bashExecution`. It holds every assistant
message up to the next input (`steps`, in order) and the results of the agent's own tool calls
(`results`, by tool-call id). Assistant messages before any input (τ²-bench's opening greeting)
form turn 0 with no inputs. Entries that never reach the model (`custom`, `label`,
`model_change`, ...) are skipped, and so is a message the item's agent never shows the model
(`AgentProfile.never_shown_when_excluded`: pi's `!!` command, OpenClaw's nested tool record;
`drops_every_excluded_message`: OpenClaw's context-free command and its injected reply), but for an
excluded assistant message that called tools: that is a step all the same, its calls ran and their
results are its turn's;
`compaction` entries belong to the compaction engine, not to a turn, and are skipped too, and so
are the entries a compaction restated after itself (`transcript.restated`): they are entries of
the path already, not a new turn or a new call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import TYPE_CHECKING, Any

from replaylab.cassette import canonical_json
from replaylab.transcript.context import entry_to_message
from replaylab.transcript.javascript import js_truthy, number_or_none
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    MessageEntry,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    message_text,
)
from replaylab.transcript.pairing import answered_calls, ran_calls
from replaylab.transcript.restated import without_restatements

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo
    from replaylab.upstream.profiles import AgentProfile


@dataclass
class Turn:
    """One recorded user turn."""

    index: int
    inputs: list[AnyEntry] = field(default_factory=list)
    steps: list[MessageEntry] = field(default_factory=list)  # each holds an AssistantMessage (`step_message`)
    results: dict[str, MessageEntry] = field(default_factory=dict)
    #: its input was typed while the turn before's tools ran (`continues_run`): no agent compacts
    #: before it, so it is no compaction point
    steered: bool = False
    #: the step of the recorded turn its first step is (`rest_of_run`: after a compaction within
    #: the run), so that a replayed call is compared with the recorded call at the same step
    first_step: int = 0

    def user_text(self) -> str:
        """The user-visible text of this turn's inputs (tool calls of the user not included)."""
        parts = []
        for entry in self.inputs:
            message = entry_to_message(entry)
            if isinstance(message, UserMessage):
                if isinstance(message.content, str):
                    parts.append(message.content)
                else:
                    parts.extend(b.text for b in message.content if isinstance(b, TextBlock))
            elif message is not None and not isinstance(message, ToolResultMessage):
                parts.append(message_text(message))
        return "\n".join(p for p in parts if p)

    @property
    def first_entry(self) -> AnyEntry:
        """Where the turn starts on the path: its first input, or its first step when it has none
        (τ²-bench's greeting, the rest of a run after a compaction within it: `rest_of_run`)."""
        return self.inputs[0] if self.inputs else self.steps[0]

    def answer(self) -> str:
        """The recorded final answer: text of the first step without tool calls — where an agent
        loop ends the turn, and so does the replay; a recording may hold another reply after it
        with no input in between, which no replay can reach. An errored or aborted step is never
        the answer: the agent loop does not take one as the answer either (pi drops such
        messages), so the recording and a replay of it agree."""
        for entry in self.steps:
            message = entry.message
            if isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted"):
                continue
            if isinstance(message, AssistantMessage) and not message.tool_calls():
                return message.text()
        return ""


def continues_run(previous: Turn, following: Turn) -> bool:
    """Whether `following` starts while the agent's run is still going: `previous` ended with tool
    calls whose results all came, and the input that starts `following` was written before the
    last of those results (its message's timestamp is earlier): the user typed it while the tools
    ran, and the agent's steering queue delivered it after them (pi, OpenClaw). Both check for
    compaction only when a run ends and before a prompt (`checkCompaction`), never at such an
    input. A prompt after a run the user stopped comes after its last result; so does every input
    of a session without numeric message timestamps, which this never takes for one typed mid-run."""
    if not previous.steps or not following.inputs:
        return False
    last = previous.steps[-1].message
    if not isinstance(last, AssistantMessage) or last.stop_reason in ("error", "aborted"):
        return False
    calls = last.tool_calls()
    results = [previous.results.get(call.id) for call in calls]
    if not calls or any(result is None for result in results):
        return False
    typed = _message_time(following.inputs[0])
    answered = [t for result in results if result is not None and (t := _message_time(result)) is not None]
    return typed is not None and len(answered) == len(results) and typed < max(answered)


def _message_time(entry: AnyEntry) -> int | float | None:
    message = entry.message if isinstance(entry, MessageEntry) else None
    return number_or_none(getattr(message, "timestamp", None))


def turn_profile(agent: AgentProfile | None, memo: ItemMemo | None) -> AgentProfile:
    """`agent`, else the item's (by its memo's rules), else the fallback (pi 0.73.1)."""
    from replaylab.upstream.profiles import default_profile, profile_named

    if agent is None:
        rules = memo.rules if memo is not None else None
        agent = profile_named(rules.name) if rules is not None else default_profile()
    return agent


def _hidden(message: Any, roles: frozenset[str], every_role: bool) -> bool:
    """Whether the agent drops `message` from every context: its role is one of `roles` and its
    `excludeFromContext` is truthy (both agents test it as JavaScript does), or, where the agent
    drops excluded messages of `every_role`, that flag is exactly `true`."""
    in_roles = getattr(message, "role", None) in roles
    if not in_roles and not every_role:
        return False
    flag = getattr(message, "exclude_from_context", None)
    if flag is None:
        extras = getattr(message, "__pydantic_extra__", None)
        flag = extras.get("excludeFromContext") if extras else None
    return flag is True or (in_roles and js_truthy(flag))


def excluded_reply(message: Any) -> bool:
    """An assistant message whose `excludeFromContext` is exactly `true`: the reply an agent that
    drops every such message (`AgentProfile.drops_every_excluded_message`) shows in no context it
    rebuilds from the session."""
    if type(message) is not AssistantMessage:
        return False
    extras = message.__pydantic_extra__
    return extras is not None and extras.get("excludeFromContext") is True


def _called_tools(message: Any) -> bool:
    """An assistant message with tool calls: the model's step, whose calls ran, even where the agent
    shows it in no context rebuilt later. OpenClaw's history activity (`projectAgentHistoryActivity`)
    pairs such a call with its result in the turn of the prompt before it, and its results stay in
    the context (`buildSessionContext`): neither starts a turn of its own."""
    return isinstance(message, AssistantMessage) and bool(message.tool_calls())


def split_turns(
    path: Sequence[AnyEntry], memo: ItemMemo | None = None, *, agent: AgentProfile | None = None
) -> list[Turn]:
    """Turns of a root→leaf path (or of any slice of one, e.g. the entries after a cut point),
    under `agent`'s rules (else the item's, by `memo`)."""
    profile = turn_profile(agent, memo)
    hidden, every_role = profile.never_shown_when_excluded, profile.drops_every_excluded_message
    if memo is None:
        return _split(path, memo, hidden, every_role)
    # an item splits its path again in several phases (the start point, its audits, its replayed
    # results): the turns are a function of the entry objects, the profile's two rules and the
    # memo, so they are made once per item and handed out as copies a caller may change
    kept: list[tuple[list[AnyEntry], frozenset[str], bool, list[Turn]]] = memo.kept(_split, list)
    path = list(path)
    for seen, seen_hidden, seen_every, turns in kept:
        if seen_hidden == hidden and seen_every == every_role and len(seen) == len(path) and all(map(is_, seen, path)):
            return [_copy(turn) for turn in turns]
    turns = _split(path, memo, hidden, every_role)
    kept.append((path, hidden, every_role, turns))
    return [_copy(turn) for turn in turns]


def _copy(turn: Turn) -> Turn:
    return Turn(
        index=turn.index,
        inputs=list(turn.inputs),
        steps=list(turn.steps),
        results=dict(turn.results),
        steered=turn.steered,
        first_step=turn.first_step,
    )


def _split(path: Sequence[AnyEntry], memo: ItemMemo | None, hidden: frozenset[str], every_role: bool) -> list[Turn]:
    """`split_turns` under the agent's rules `hidden` and `every_role` (`_hidden`)."""
    turns: list[Turn] = []
    agent_calls: set[str] = set()
    current: Turn | None = None
    path = without_restatements(path, memo)

    def open_turn() -> Turn:
        turn = Turn(index=len(turns))
        turns.append(turn)
        return turn

    for entry in path:
        if isinstance(entry, MessageEntry):
            message = entry.message
            if _hidden(message, hidden, every_role) and not _called_tools(message):
                continue  # a message the agent never shows the model: nobody spoke, no step
            if isinstance(message, AssistantMessage):
                if current is None:
                    current = open_turn()
                current.steps.append(entry)
                agent_calls.update(call.id for call in message.tool_calls())
                continue
            if isinstance(message, ToolResultMessage) and message.tool_call_id in agent_calls:
                if current is None:
                    current = open_turn()
                current.results[message.tool_call_id] = entry
                continue
        elif entry_to_message(entry) is None:
            continue  # custom state, labels, model changes, compactions: not model input
        # an input: a new turn starts unless this turn has no agent step yet
        if current is None or current.steps:
            previous, current = current, open_turn()
            current.inputs.append(entry)
            current.steered = previous is not None and continues_run(previous, current)
            continue
        current.inputs.append(entry)
    return turns


def replies_after_tools(turns: Sequence[Turn]) -> list[tuple[int, int]]:
    """(turn index, step index) of every reply within a run that follows the results of the
    agent's own tool calls: where pi 1.6.0 checks for compaction before the reply
    (`AgentSession._compactBeforeNextAssistantResponse`), and where every agent compacts when that
    reply's request overflows the model's window. An errored or aborted step ran no tool."""
    found: list[tuple[int, int]] = []
    for index, turn in enumerate(turns):
        for step in range(1, len(turn.steps)):
            before = turn.steps[step - 1].message
            if (
                isinstance(before, AssistantMessage)
                and before.stop_reason not in ("error", "aborted")
                and before.tool_calls()
            ):
                found.append((index, step))
    return found


def rest_of_run(turn: Turn, step: int) -> Turn:
    """The turn from its reply `step` on, without its inputs: what the agent does after a
    compaction within its run (the results of the calls before it are history)."""
    steps = turn.steps[step:]
    calls = {
        call.id for entry in steps if isinstance(entry.message, AssistantMessage) for call in entry.message.tool_calls()
    }
    return Turn(
        index=turn.index,
        steps=list(steps),
        results={call_id: entry for call_id, entry in turn.results.items() if call_id in calls},
        first_step=turn.first_step + step,
    )


def calls_before(path: Sequence[AnyEntry]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of every tool call the agent made on `path`, in order — what a replay
    that starts after `path` must count as already executed (`ToolExecutor(executed_before=)`).
    Errored / aborted assistant messages are skipped: pi never ran their calls. User-side calls
    (τ² telecom) are not the agent's and are left out; so are restated entries (the same calls)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in without_restatements(path):
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            if entry.message.stop_reason in ("error", "aborted"):
                continue
            out.extend((call.name, call.arguments) for call in entry.message.tool_calls())
    return out


def calls_off_path(entries: Sequence[AnyEntry], path: Sequence[AnyEntry]) -> list[tuple[str, dict[str, Any], bool]]:
    """(tool, arguments, on `path`) of the answered calls of the file (`answered_calls`: the calls
    an imported cassette holds an interaction for, in its order) of every request a call off
    `path` made (`ToolExecutor(file_calls=)`); nothing when every entry of the file is on `path`.
    Only those requests are kept: a long session's other calls would be thousands of tuples for
    nothing."""
    if len(entries) == len(path):
        return []
    on_path = {entry.id for entry in path}
    off_requests = {
        (call.name, canonical_json(call.arguments))
        for entry in entries
        if entry.id not in on_path
        for call in ran_calls(entry)
    }
    if not off_requests:
        return []
    names = {name for name, _ in off_requests}

    def off_request(call: ToolCallBlock) -> bool:
        return call.name in names and (call.name, canonical_json(call.arguments)) in off_requests

    return [(call.name, call.arguments, entry.id in on_path) for entry, call, _ in answered_calls(entries, off_request)]


def user_tool_calls(message: Any) -> list[ToolCallBlock]:
    """Tool calls inside a user message (τ² telecom: the simulated user's own actions)."""
    if isinstance(message, UserMessage) and isinstance(message.content, list):
        return [b for b in message.content if isinstance(b, ToolCallBlock)]
    return []


def step_message(entry: MessageEntry) -> AssistantMessage:
    """The agent's message of a turn's step (`split_turns` makes a step of an assistant message only)."""
    message = entry.message
    assert isinstance(message, AssistantMessage), f"entry {entry.id} is no agent step"
    return message
