"""The agent loop: per recorded user turn, window → model → tool calls → results → window.

For each turn the recorded inputs (user message, the user's own tool calls and their results,
custom messages) are appended to the window; then the model is asked for the next assistant
message until it answers without tool calls or the step budget of the turn is used up. Tool calls
of one message run in order (parallel calls keep their recorded order) and each result is
appended right after, as pi does. Errored / aborted assistant messages are appended but their
tool calls are not run (pi drops them before the next request).

Hooks for the compaction engine:
* `context_guard(window) -> window`: shrinks the window for one model call only (OpenClaw's
  request-time guard); the loop's own window is not changed by it.
* `on_overflow(window, error) -> window | None`: the overflow recovery chain. When the model raises
  (e.g. a context-overflow error of a real model), the hook may return a replacement window (a
  compaction / truncation result); the call is retried on it, at most
  `MAX_OVERFLOW_COMPACTION_ATTEMPTS` times per call. `None` gives up: the run records the error.

The run is a value: model or tool failures end it with `RunTrace.error` set instead of raising.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from replaylab.diagnostics import InputError
from replaylab.replay.agent.recording_text import RecordingText
from replaylab.replay.tools.pack_data import PackFailure
from replaylab.replay.trace import RecoveryTrace, RunTrace, TurnTrace, turn_number
from replaylab.replay.turns import Turn, excluded_reply, step_message, turn_profile
from replaylab.transcript.context import WindowMessage, entry_to_message
from replaylab.transcript.memo import IdentityMemo, ItemMemo, identity
from replaylab.transcript.model import AssistantMessage
from replaylab.transcript.restated import EXCLUDE_FROM_CONTEXT
from replaylab.transcript.tokens import estimate_tokens
from replaylab.upstream.openclaw_2026_4_12 import MAX_OVERFLOW_COMPACTION_ATTEMPTS

if TYPE_CHECKING:
    from replaylab.replay.agent.model_protocol import Model
    from replaylab.replay.overflow import OverflowRecovery
    from replaylab.replay.trace import ToolCallTrace
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.model import ToolCallBlock, ToolResultMessage
    from replaylab.upstream.profiles import AgentProfile

#: steps a model that does not follow the recording may take beyond the recorded ones
DEFAULT_EXTRA_STEPS = 2

ContextGuard = Callable[[list[WindowMessage]], list[WindowMessage]]
OverflowHook = Callable[[list[WindowMessage], BaseException], "list[WindowMessage] | None"]
#: asked with the run's window before a reply after tool results: the window the agent goes on
#: with when it compacted there, else None
BeforeReply = Callable[[list[WindowMessage]], "list[WindowMessage] | None"]


def window_tokens(window: Sequence[WindowMessage], memo: ItemMemo | None = None) -> int:
    """pi's chars/4 estimate of a whole window (what one model call would send); with an item's
    `memo`, each message is estimated once for the item."""
    if memo is None:
        return sum(estimate_tokens(w.message) for w in window)
    return _estimated(window, memo.estimates, memo.estimate)


def _estimated(
    window: Sequence[WindowMessage], estimates: IdentityMemo, estimate: Callable[[Any], int] = estimate_tokens
) -> int:
    """`estimate` (the item's agent's) of each message, once per message object."""
    return sum(estimates.get(w.message, estimate) for w in window)


class WindowTokenCount:
    """`window_tokens` of the loop's own window as a running total. Contract: `grown(window)` is
    only given lists that are never changed except by appending (run_turns' window: the loop
    appends, hooks get copies), so a call on the list seen last counts only the messages added
    since; a new list (an overflow replacement) is counted from the start. Other windows (a
    context guard's result) go through `whole(window)`: summed in full, per-message cached —
    in the item's `memo` when there is one, else in this count's own (for the calls of a run)."""

    def __init__(self, memo: ItemMemo | None = None) -> None:
        self.estimates = memo.estimates if memo is not None else IdentityMemo()
        self.estimate = memo.estimate if memo is not None else estimate_tokens
        self._window: list[WindowMessage] | None = None
        self._counted = 0
        self._total = 0

    def grown(self, window: list[WindowMessage]) -> int:
        if window is not self._window or len(window) < self._counted:
            self._window, self._counted, self._total = window, 0, 0
        self._total += _estimated(window[self._counted :], self.estimates, self.estimate)
        self._counted = len(window)
        return self._total

    def whole(self, window: Sequence[WindowMessage]) -> int:
        return _estimated(window, self.estimates, self.estimate)

    def copied(self, source: Sequence[WindowMessage], copy: list[WindowMessage]) -> None:
        """`copy` is `list(source)`: when `source` is the list counted last, go on counting on the
        copy. (`run_turns` copies the window it is given, so a run continued turn by turn with one
        count would otherwise sum each turn's whole window again.)"""
        if source is self._window and len(copy) == len(source):
            self._window = copy


def message_dump(message: Any, memo: ItemMemo | None = None) -> dict[str, Any]:
    """An assistant message in a trace's shape (pi JSON). With an item's `memo`, a recording's own
    message object — the replay model returns it unchanged on a window that lost nothing, and the
    recorded trace holds it — is dumped once per recording: the pipeline traces it up to three
    times (recorded, baseline, compacted run), and the dump is the same value each time. Traces
    never change these dicts (they are report data)."""
    if memo is None:
        return _dump(message)
    key = identity(message)
    history = RecordingText.holding(message, memo, key)
    if history is None:
        return _dump(message)
    dump = history.dumps.get(key)
    if dump is None:
        dump = history.dumps[key] = _dump(message)
    return dump


def _dump(message: Any) -> dict[str, Any]:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


class Executor(Protocol):
    """What answers the agent's tool calls in a run, held open for the run (`replay.tools`: the
    fail-closed `ToolExecutor`, the `LiveToolExecutor` of a tool pack); its `defects`, when it has
    them, go into the run's trace."""

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: Any) -> None: ...

    def execute(self, call: ToolCallBlock, *, turn: int, step: int) -> tuple[ToolResultMessage, ToolCallTrace]: ...


def step_limit(model: Model, turn: Turn, extra_steps: int) -> int:
    limit = getattr(model, "max_steps", None)
    if callable(limit):
        return int(limit(turn))
    return len(turn.steps) + extra_steps


def run_turns(
    window: Sequence[WindowMessage],
    turns: Sequence[Turn],
    model: Model,
    executor: Executor,
    *,
    label: Literal["baseline", "compacted"],
    tools: Sequence[dict] = (),
    context_guard: ContextGuard | None = None,
    on_overflow: OverflowHook | None = None,
    on_message: Callable[[WindowMessage], None] | None = None,
    extra_steps: int = DEFAULT_EXTRA_STEPS,
    return_window: bool = False,
    token_count: WindowTokenCount | None = None,
    memo: ItemMemo | None = None,
    on_turn: Callable[[int], None] | None = None,
    copy_window: bool = True,
    recovery: OverflowRecovery | None = None,
    before_reply: BeforeReply | None = None,
):
    """Re-run `turns` starting from `window`. Returns the `RunTrace` (and the final window when
    `return_window`). `on_message` sees every message appended, in order (the recorder writes
    them as transcript entries). `token_count`: pass one `WindowTokenCount` to the calls that
    continue one run turn by turn (each gets the window the last returned), so the per-message
    estimates are not made again per call. `memo`: the pipeline item's (the estimates, the dumps
    of recorded messages). `on_turn(done)`: after each turn, how many are done (progress).
    `copy_window=False`: append to the caller's own list `window` (a list the caller gives up,
    as a run continued turn by turn does: copying a long window at every turn is quadratic).
    `recovery`: the model has a context window and each turn runs through the overflow recovery
    chain (`replay.overflow`); the chain of each turn that met the window is in `trace.recovery`,
    and a turn the chain gave up on answers with its user text. `before_reply(window)`: asked before
    each reply after the agent's tool results, where an agent that checks there may compact; the
    window it returns (None: it did not compact) is the run's from then on."""
    given, window = window, (list(window) if copy_window or not isinstance(window, list) else window)
    if token_count is not None:
        token_count.copied(given, window)
    trace = RunTrace(label=label)
    tools = list(tools or [])
    executor_defects = len(getattr(executor, "defects", []))
    model_defects = len(getattr(model, "defects", []))
    current = [window]  # the run's window: a recovery step may replace the list

    def append(item: WindowMessage) -> None:
        current[0].append(item)
        if on_message is not None:
            on_message(item)

    begin = getattr(model, "begin_turn", None)
    count_tokens = token_count if token_count is not None else WindowTokenCount(memo)
    agent = turn_profile(None, memo)
    after_tools = [False]  # the next call is a reply after the results of the agent's tool calls
    #: a reply this call produced is marked `excludeFromContext`: the next prompt's window drops it
    #: (`prompt_window`); asked only then, as nearly no session marks a reply
    excluded_since_prompt = [False]

    def run_steps(turn: Turn, turn_trace: TurnTrace, first: int, call: Callable[[int], AssistantMessage]) -> None:
        """The turn's model calls from step `first` on, each answer's tool calls run in order."""
        after_tools[0] = False
        for step in range(first, step_limit(model, turn, extra_steps)):
            message = call(step)
            after_tools[0] = False
            recorded = turn.steps[step].id if step < len(turn.steps) else None
            produced = _produced_id(label, turn, step, recorded)
            if agent.drops_every_excluded_message and recorded is not None:
                message = _excluded_as_recorded(message, turn.steps[step].message)
            append(WindowMessage(produced, message))
            excluded_since_prompt[0] = excluded_since_prompt[0] or excluded_reply(message)
            turn_trace.assistant_messages.append(message_dump(message, memo))
            if message.stop_reason in ("error", "aborted"):
                continue
            calls = message.tool_calls()
            if not calls:
                turn_trace.answer = message.text()
                return
            for call_block in calls:
                # the recorded turn's step: a rest of run starts within it (`Turn.first_step`)
                result, call_trace = executor.execute(call_block, turn=turn_trace.turn, step=turn.first_step + step)
                turn_trace.tool_calls.append(call_trace)
                append(WindowMessage(f"{produced}:{call_block.id}", result))
            after_tools[0] = True

    def plain_call(turn_trace: TurnTrace) -> Callable[[int], AssistantMessage]:
        def call(step: int) -> AssistantMessage:
            if after_tools[0] and before_reply is not None:
                replaced = before_reply(current[0])
                if replaced is not None:
                    current[0] = replaced
            message, current[0] = _call_model(
                model, current[0], tools, context_guard, on_overflow, turn_trace, count_tokens
            )
            return message

        return call

    try:
        with executor:
            for done, turn in enumerate(turns, start=1):
                turn_trace = TurnTrace(turn=turn_number(turn.index), user_text=turn.user_text())
                trace.turns.append(turn_trace)
                if excluded_since_prompt[0] and not turn.steered and turn.inputs:
                    current[0] = prompt_window(current[0], turn, agent, label)
                    excluded_since_prompt[0] = False
                for entry in turn.inputs:
                    message = entry_to_message(entry)
                    if message is not None:
                        append(WindowMessage(entry.id, message))
                if begin is not None:
                    begin(turn)
                if recovery is None:
                    run_steps(turn, turn_trace, 0, plain_call(turn_trace))
                else:
                    reply_hook = (
                        None if before_reply is None else (lambda w: before_reply(w) if after_tools[0] else None)
                    )
                    chained = _recovered_turn(
                        recovery, turn, turn_trace, current, model, tools, count_tokens, run_steps, reply_hook
                    )
                    if chained is not None:
                        trace.recovery.append(chained)
                if on_turn is not None:
                    on_turn(done)
    except (InputError, PackFailure):
        # bad user input (a script reference, a model spec): a usage error, not a run result; a
        # tool pack whose code misbehaved in its process: the item's error, naming the pack
        raise
    except Exception as exc:
        trace.error = _describe(exc)
    window = current[0]
    trace.defects.extend(getattr(executor, "defects", [])[executor_defects:])
    trace.defects.extend(getattr(model, "defects", [])[model_defects:])
    return (trace, window) if return_window else trace


def _recovered_turn(
    recovery: OverflowRecovery,
    turn: Turn,
    turn_trace: TurnTrace,
    current: list[list[WindowMessage]],
    model: Any,
    tools: list[dict],
    count_tokens: WindowTokenCount,
    run_steps: Callable[..., None],
    before_reply: BeforeReply | None = None,
) -> RecoveryTrace | None:
    """One turn as attempts of the recovery chain; `current[0]` follows the window it leaves.
    `before_reply`: `run_turns`' (None where the next call is no reply after tool results)."""
    from replaylab.replay.overflow import TurnChain

    def steps(chain: TurnChain, first: int) -> None:
        def call(step: int) -> AssistantMessage:
            replaced = before_reply(chain.window) if before_reply is not None else None
            if replaced is not None:
                chain.window = replaced
            current[0] = chain.window
            message = chain.call(model, tools, step)
            current[0] = chain.window  # an in-attempt compaction replaced it
            turn_trace.context_tokens.append(count_tokens.grown(chain.window))
            return message

        run_steps(turn, turn_trace, first, call)

    chain = TurnChain(recovery, turn_trace.turn, current[0], steps)
    outcome, current[0] = chain.run()
    side_effects = any(c.mutating for c in turn_trace.tool_calls)
    chained = chain.trace(outcome, side_effects)
    if chained is not None and chained.user_text is not None:
        turn_trace.answer = chained.user_text
    return chained


def _call_model(
    model: Model,
    window: list[WindowMessage],
    tools: list[dict],
    context_guard: ContextGuard | None,
    on_overflow: OverflowHook | None,
    turn_trace: TurnTrace,
    count_tokens: WindowTokenCount,
) -> tuple[AssistantMessage, list[WindowMessage]]:
    attempts = 0
    while True:
        try:
            # the guard may itself raise the preemptive overflow (OpenClaw's tool-loop guard does):
            # that goes to the recovery chain like a provider's overflow error
            call_window = context_guard(list(window)) if context_guard is not None else window
            turn_trace.context_tokens.append(
                count_tokens.grown(window) if call_window is window else count_tokens.whole(call_window)
            )
            return model.complete(call_window, tools), window
        except Exception as exc:
            if on_overflow is None or attempts >= MAX_OVERFLOW_COMPACTION_ATTEMPTS:
                raise
            replacement = on_overflow(list(window), exc)
            if replacement is None:
                raise
            window = list(replacement)
            attempts += 1


def produced_excluded_reply(trace: RunTrace) -> bool:
    """Whether a reply of this run's trace is marked `excludeFromContext` (`prompt_window` is then
    asked at the next prompt)."""
    return any(dump.get(EXCLUDE_FROM_CONTEXT) is True for turn in trace.turns for dump in turn.assistant_messages)


def prompt_window(
    window: list[WindowMessage], turn: Turn, agent: AgentProfile, label: Literal["baseline", "compacted"]
) -> list[WindowMessage]:
    """The run's window as the agent holds it when `turn`'s prompt starts: an agent that rebuilds
    its context from the session for each prompt and drops every message marked
    `excludeFromContext` (`AgentProfile.drops_every_excluded_message`) no longer holds a reply the
    replay produced so marked; its tool results stay, as they do in the rebuild. A turn typed while
    the run went on (`Turn.steered`) is no new prompt: the run's messages are as they were. The
    same list when nothing goes, else a new one (a token count starts it anew)."""
    if not agent.drops_every_excluded_message or turn.steered or not turn.inputs:
        return window
    prefix = f"{label}:"  # `_produced_id`: a rebuilt window's messages are the agent's own choice already
    if not any(excluded_reply(w.message) and (w.entry_id or "").startswith(prefix) for w in window):
        return window  # nearly always: asked at every turn, so no list is made for nothing
    return [w for w in window if not excluded_reply(w.message) or not (w.entry_id or "").startswith(prefix)]


def _excluded_as_recorded(message: AssistantMessage, recorded: Any) -> AssistantMessage:
    """The replayed reply marked `excludeFromContext` as the recorded reply of its step was (the
    agent marks the reply of such a turn whatever it says), so that the working copy holds it
    as the agent's session would."""
    if not excluded_reply(recorded) or excluded_reply(message):
        return message
    marked = message.model_copy()
    marked.__pydantic_extra__ = {**(message.__pydantic_extra__ or {}), EXCLUDE_FROM_CONTEXT: True}
    return marked


def _produced_id(label: str, turn: Turn, step: int, recorded: str | None) -> str:
    """Window id of a message the replay produced: never a recording's entry id (the message may
    differ from the recorded one), but traceable to it."""
    return f"{label}:{recorded}" if recorded else f"{label}:t{turn.index}s{step}"


def _describe(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" (at {where[0].filename.rsplit('/', 1)[-1]}:{where[0].lineno})" if where else ""
    return f"{type(exc).__name__}: {exc}{at}"


def recorded_run_trace(
    turns: Sequence[Turn],
    classifier: ToolClassifier,
    *,
    label: Literal["baseline", "compacted"] = "baseline",
    memo: ItemMemo | None = None,
) -> RunTrace:
    """The recording itself as a trace (what a zero-drift baseline must reproduce)."""
    from replaylab.replay.trace import ToolCallTrace
    from replaylab.transcript.model import message_text

    text_of = message_text if memo is None else memo.text
    trace = RunTrace(label=label)
    for turn in turns:
        turn_trace = TurnTrace(turn=turn_number(turn.index), user_text=turn.user_text(), answer=turn.answer())
        for step, entry in enumerate(turn.steps):
            message = step_message(entry)
            turn_trace.assistant_messages.append(message_dump(message, memo))
            if message.stop_reason in ("error", "aborted"):
                continue
            for call in message.tool_calls():
                result = turn.results.get(call.id)
                result_message = result.message if result is not None else None
                turn_trace.tool_calls.append(
                    ToolCallTrace(
                        turn=turn_trace.turn,
                        step=turn.first_step + step,
                        tool_call_id=call.id,
                        tool=call.name,
                        arguments=dict(call.arguments or {}),
                        result=text_of(result_message) if result_message is not None else None,
                        is_error=bool(getattr(result_message, "is_error", False)),
                        mutating=classifier.is_mutating(call.name, call.arguments),
                        source="cassette" if result_message is not None else "missing",
                    )
                )
        trace.turns.append(turn_trace)
    return trace


__all__ = [
    "run_turns",
    "recorded_run_trace",
    "window_tokens",
    "WindowTokenCount",
    "prompt_window",
    "produced_excluded_reply",
]
