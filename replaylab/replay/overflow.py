"""The overflow recovery chain in the agent loop: what the agent does when a request does not fit.

A turn is one run of the agent (OpenClaw's `runEmbeddedPiAgent` for one user prompt): its model
calls are made as attempts of `compaction.recovery.run_with_recovery` under the item's OpenClaw
runtime rules. Within an attempt, before each call:

* the request-time guard (`compaction.truncation.guard_context`) cuts over-long single tool
  results of that call's window only (2026.4.12 also replaces older results and raises its
  preemptive overflow over 90 % of the window);
* from 2026.9.6 on, where the agent's config enables it (`OverflowRecovery.mid_turn_precheck`;
  OpenClaw's default is off), a call after tool results of the turn (mid-turn) is prechecked: a
  request whose token pressure (OpenClaw's own estimate, `agents.openclaw_2026_9_6.pressure`)
  exceeds the window less the attempt's compaction reserve fails the attempt with OpenClaw's
  mid-turn precheck text, before any request (`RuntimeRules.guard.mid_turn_precheck`);
* the model answers; a provider's overflow error fails the attempt with its text. A silent
  overflow (a reply whose usage exceeds the window) is, where the rules say so
  (`RuntimeRules.silent_overflow`), pi's in-attempt case: pi compacts once (`overflow`, through
  the compactor under test) and retries the call; a second one (or a compaction that did not
  happen) ends the attempt with pi's "recovery failed" text, and the run loop then retries
  without compacting again when pi did compact, else compacts itself. Under 2026.9.6 such a reply
  is kept: neither its session nor its run loop reads a finished reply as an overflow.

After a failed attempt the chain compacts (up to the rules' maximum, through the compactor under
test with `trigger: overflow`), truncates oversized tool results once, or gives up with the kind,
the user text (2026.9.6: with its side-effect caution when a mutating call ran in the turn) and a
diagnostic id. The next attempt goes on from the failed call: what the turn did before it stays
done, as in OpenClaw's session.

The truncation is a rewrite of the session, as OpenClaw's `truncateOversizedToolResultsInSession`
makes it (`rewriteTranscriptEntriesInSessionManager`): with a working copy (`OverflowRecovery.
rewrite_session`, the pipeline's), the turn so far is written to it, the plan is made on the
window rebuilt from it, and the branch is taken again from the first rewritten entry's parent with
every entry after it appended once more — the cut results in place of theirs
(`compaction.session_truncation.rewrite_branch`) — so every later window rebuilt from the copy (a later compaction's,
the agent's own) shows the cut results. The recording is never written. Without a working copy
(the loop on its own) the cut results replace theirs in the working window only.

A compaction in the attempt may time out (`OverflowRecovery.compaction_timeout`: OpenClaw's wait
for pi's compaction-retry, `waitForCompactionRetryWithAggregateTimeout`, gave up): the attempt ends
timed out during compaction, and the run goes on from the snapshot OpenClaw's
`selectCompactionTimeoutSnapshot` picks — the one read before the compaction started (read only
while no compaction runs), not the state the compaction left half done; the working copy goes on
from there too (`OverflowRecovery.restore_session`). The run loop never compacts after such a
timeout, and the turn ends timed out (`gave_up: timeout`).

Under safeguard (`protect_mutating`) neither the guard nor the truncation cuts a mutating event's
result; each step's trace names the mutating entries it touched all the same, for the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from replaylab.agents.openclaw_2026_9_6.pressure import attempt_reserve_tokens, prompt_budget, prompt_pressure
from replaylab.compaction.recovery import (
    AttemptResult,
    RecoveryOutcome,
    StepOutcome,
    create_compaction_diag_id,
    pi_is_context_overflow,
    run_with_recovery,
    select_compaction_timeout_snapshot,
    take_pre_compaction_snapshot,
)
from replaylab.compaction.session_truncation import recovery_plan, session_likely_has_oversized_tool_results
from replaylab.compaction.truncation import ContextOverflowError, guard_context
from replaylab.errors import ReplaylabError
from replaylab.replay.agent.context_limit import ProviderRefusedRequest
from replaylab.replay.trace import RecoveryStepTrace, RecoveryTrace
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import (
    AssistantMessage,
    ToolResultMessage,
)
from replaylab.transcript.pairing import pair_path
from replaylab.upstream.pi_0_73_1 import PI_OVERFLOW_RECOVERY_FAILED_TEXT
from replaylab.upstream.runtime_rules import RuntimeRules

if TYPE_CHECKING:
    from replaylab.safety.ledger import Ledger

#: compact(trigger, window, info) -> the step's outcome, its `window` the compacted one
CompactHook = Callable[[str, list[WindowMessage], dict], StepOutcome]
#: plan(window) -> {entry id: the tool result that replaces its message} on the window given
TruncationPlan = Callable[[list[WindowMessage]], dict[str, ToolResultMessage]]
#: rewrite_session(window, plan) -> the window rebuilt from the working copy once the plan, made on
#: the window rebuilt from it first, was written to it (unchanged when the plan cut nothing)
SessionRewrite = Callable[[list[WindowMessage], TruncationPlan], list[WindowMessage]]


@dataclass
class OverflowRecovery:
    """What the loop needs to run the chain: the window, the rules and the compactor's hook."""

    context_tokens: int
    rules: RuntimeRules
    compact: CompactHook
    #: the agent profile's estimate of a whole window, in tokens
    estimate: Callable[[Sequence[WindowMessage]], int]
    #: the classifier's `is_mutating(tool, arguments)`
    is_mutating: Callable[[str, dict], bool]
    #: safeguard: no guard cut and no truncation of a mutating event's result
    protect_mutating: bool = True
    #: the entries of the calls whose sub-agent mutated or cannot be loaded (`mutating_result_ids`)
    spawns: frozenset[str] = frozenset()
    diag_id_factory: Callable[[], str] = create_compaction_diag_id
    #: seeded faults of the chain, for negative controls (`ContextWindow.faults`): it compacts once
    #: past the release's limit, compacts again after pi compacted in the attempt, never truncates,
    #: or compacts and asks again for a finished reply over the window where the release keeps it
    faults: frozenset[str] = frozenset()
    #: the truncation's rewrite of the working copy (None: the working window only)
    rewrite_session: SessionRewrite | None = None
    #: the agent's config enables the release's mid-turn precheck (`ContextWindow.mid_turn_precheck`)
    mid_turn_precheck: bool = False
    #: pi's compaction reserve setting (`reserveTokens`), which the mid-turn precheck's budget
    #: leaves free (None: pi's default, below OpenClaw's floor)
    reserve_tokens: int | None = None
    #: a compaction in the attempt times out (`ContextWindow.compaction_timeout`)
    compaction_timeout: bool = False
    #: restore_session(snapshot): the working copy goes on from where this window was written
    #: (after a compaction timeout, the one read before the compaction); None: no working copy
    restore_session: Callable[[list[WindowMessage]], None] | None = None


class AttemptOverflow(ReplaylabError):
    """A call of the turn did not fit: ends the attempt (caught by `TurnChain.attempt`)."""

    def __init__(self, result: AttemptResult, step: int):
        super().__init__(result.prompt_error or result.assistant_error or "overflow")
        self.result = result
        self.step = step


def mutating_result_ids(
    window: Sequence[WindowMessage], is_mutating: Callable[[str, dict], bool], spawns: frozenset[str] = frozenset()
) -> set[str]:
    """Entry ids of the window's tool results whose call is a mutating one, the calls paired to
    results as the safety ledger pairs them (`pair_path`: in any block type the agents pair results
    to, a waiting call of its id, the result's tool first); a result whose call the window does not
    show (a compaction or reset kept it alone, or its message cannot be read) judged by its tool's
    name, as safeguard protects it. `spawns`: the entries of calls whose sub-agent mutated or cannot be
    loaded (a spawn known only by its result: that result's entry), whose results safeguard protects
    although no classification of the call says so."""
    pairing = pair_path((item.entry_id, item.message) for item in window)
    source = {item.entry_id: item.source_id or item.entry_id for item in window} if spawns else {}
    judged: dict[int, bool] = {}  # a call answered more than once is judged once
    found: set[str] = set()
    for entry_id, call in pairing.answers:
        if entry_id is None:
            continue
        key = id(call)
        if key not in judged:
            judged[key] = (
                source.get(call.entry) in spawns
                or (call.unread and source.get(entry_id) in spawns)
                or is_mutating(call.block.name, dict(call.block.arguments or {}))
            )
        if judged[key]:
            found.add(entry_id)
    return found


def spawning_entries(ledger: Ledger) -> frozenset[str]:
    """The entries of a ledger's calls whose sub-agent mutated or cannot be loaded (as the compaction
    harness gives safeguard them): a spawn known only by its result is that result's entry."""
    from replaylab.safety.ledger import UNRESOLVED_SUBAGENT_CLASS

    unresolved = {e.entry_id for e in ledger.events if not e.session and e.tool_class == UNRESOLVED_SUBAGENT_CLASS}
    return frozenset(unresolved | set(ledger.mutating_spawns))


def retries_silent_overflow(
    message: AssistantMessage, context_tokens: int, rules: RuntimeRules, faults: frozenset[str] = frozenset()
) -> bool:
    """Whether the agent drops a finished reply whose usage exceeds the window, compacts and asks
    again (pi's in-attempt case): where the rules say so (`RuntimeRules.silent_overflow`; 2026.9.6
    keeps the reply), or where the seeded `retry_silent_overflow` fault makes the chain do it."""
    return (
        message.stop_reason == "stop"
        and (rules.silent_overflow == "compact-and-retry" or "retry_silent_overflow" in faults)
        and pi_is_context_overflow(message, context_tokens, rules)
    )


def truncation_replacements(
    window: Sequence[WindowMessage], context_tokens: int, rules: RuntimeRules, skip: set[str]
) -> dict[str, ToolResultMessage]:
    """`truncateOversizedToolResultsInSession`'s plan on a window (`compaction.session_truncation.
    recovery_plan`): each result over the per-result cap cut (head, or head + tail), then the
    results together trimmed to the aggregate budget — under 2026.4.12 the per-result cap, newest
    first; under 2026.9.6 max(4 x the cap, half the window), in order, cut then cleared. `skip`
    (safeguard's mutating results) are never cut."""
    results = [(item.entry_id, item.message) for item in window if isinstance(item.message, ToolResultMessage)]
    return recovery_plan(results, context_tokens, rules, keep=skip).replacements


def truncate_window(
    window: Sequence[WindowMessage], context_tokens: int, rules: RuntimeRules, skip: set[str]
) -> tuple[list[WindowMessage], list[str]]:
    """The plan (`truncation_replacements`) applied to the window itself: the cut window and the
    ids of the entries cut."""
    return _replaced(window, truncation_replacements(window, context_tokens, rules, skip))


def _replaced(
    window: Sequence[WindowMessage], replacements: dict[str, ToolResultMessage]
) -> tuple[list[WindowMessage], list[str]]:
    out = [
        WindowMessage(item.entry_id, replacements[item.entry_id], item.protected)
        if item.entry_id in replacements
        else item
        for item in window
    ]
    return out, [entry_id for entry_id in (i.entry_id for i in window) if entry_id in replacements]


@dataclass
class TurnChain:
    """One turn's chain: the attempts the loop makes and the trace of every step."""

    recovery: OverflowRecovery
    turn: int
    window: list[WindowMessage]
    #: runs the turn's model calls from a step on, on `self.window`; returns when the turn ended
    run_steps: Callable[[TurnChain, int], None]
    step: int = 0
    _attempt_steps: list[list[RecoveryStepTrace]] = field(default_factory=list)
    _compactions: list[RecoveryStepTrace] = field(default_factory=list)
    _truncations: list[RecoveryStepTrace] = field(default_factory=list)
    _guarded: set[str] = field(default_factory=set)
    #: pi's in-attempt compactions that compacted (what OpenClaw's run loop counts), and whether
    #: pi already tried its one compact-and-retry in this attempt
    in_attempt_compactions: int = 0
    in_attempt_tried: bool = False

    # ------------------------------------------------------------ inside an attempt

    def call(self, model: Any, tools: list[dict], step: int) -> AssistantMessage:
        """One model call of the attempt: guard, precheck, the model, silent-overflow handling."""
        recovery = self.recovery
        while True:
            call_window = self._guarded_window(step)
            if recovery.mid_turn_precheck and recovery.rules.guard.mid_turn_precheck and step > 0:
                pressure = prompt_pressure([item.message for item in call_window])
                if pressure > prompt_budget(recovery.context_tokens, attempt_reserve_tokens(recovery.reserve_tokens)):
                    self._fail(
                        step, pressure, prompt_error=recovery.rules.guard.preemptive_overflow_text, kind="precheck"
                    )
            try:
                message = model.complete(call_window, tools)
            except ProviderRefusedRequest as error:
                self._fail(step, error.tokens, prompt_error=error.text)
            if not retries_silent_overflow(message, recovery.context_tokens, recovery.rules, recovery.faults):
                return message
            usage = message.usage.get("input") if isinstance(message.usage, dict) else None
            # the agent discards the answer and asks again: a model stepping through a recording
            # must answer the same step then
            rewind = getattr(model, "rewind", None)
            if rewind is not None:
                rewind()
            if self.in_attempt_tried:
                self._fail(step, usage, assistant_error=PI_OVERFLOW_RECOVERY_FAILED_TEXT)
            self.in_attempt_tried = True
            before = recovery.estimate(self.window)
            # read while no compaction runs: the state a compaction timeout goes back to
            pre_compaction = take_pre_compaction_snapshot(False, self.window, False)
            outcome = recovery.compact("overflow", list(self.window), {"source": "usage", "observed_tokens": usage})
            trace = RecoveryStepTrace(
                kind="in_attempt_compaction",
                step=step,
                trigger="overflow",
                detail="compacted" if outcome.changed else (outcome.reason or "nothing to compact"),
                tokens_before=before,
            )
            if outcome.changed:
                self.in_attempt_compactions += 1
                self.window = list(outcome.window) if outcome.window is not None else self.window
            trace.tokens_after = recovery.estimate(self.window)
            self._attempt_steps[-1].append(trace)
            if recovery.compaction_timeout:
                self._compaction_timed_out(step, usage, pre_compaction)
            if not outcome.changed:
                self._fail(step, usage, assistant_error=PI_OVERFLOW_RECOVERY_FAILED_TEXT)

    def _compaction_timed_out(self, step: int, tokens: int | None, pre_compaction: list[WindowMessage] | None) -> Any:
        """The wait for the compaction timed out: the attempt ends timed out during compaction,
        going on from `selectCompactionTimeoutSnapshot`'s choice (the step's detail names it;
        its tokens before → after: the window before the compaction → the one the run goes on
        with, the same when the snapshot is the pre-compaction one)."""
        recovery = self.recovery
        # the seeded fault: the snapshot is read while the compaction runs, and taken for the
        # pre-compaction one
        mid = "mid_compaction_snapshot" in recovery.faults
        choice = select_compaction_timeout_snapshot(
            timed_out_during_compaction=True,
            pre_compaction_snapshot=list(self.window) if mid else pre_compaction,
            pre_compaction_session_id=None,
            current_messages=self.window,
            current_session_id=None,
        )
        self.window = choice.messages
        if recovery.restore_session is not None and choice.messages == pre_compaction:
            recovery.restore_session(self.window)
        self._attempt_steps[-1].append(
            RecoveryStepTrace(
                kind="compaction_timeout",
                step=step,
                detail=choice.source,
                tokens_before=recovery.estimate(pre_compaction or []),
                tokens_after=recovery.estimate(self.window),
            )
        )
        raise AttemptOverflow(
            AttemptResult(
                timed_out=True,
                timed_out_during_compaction=True,
                in_attempt_compactions=self.in_attempt_compactions,
                prompt_tokens=tokens,
                messages=[item.message for item in self.window],
            ),
            step,
        )

    def _guarded_window(self, step: int) -> list[WindowMessage]:
        recovery = self.recovery
        skip = (
            mutating_result_ids(self.window, recovery.is_mutating, recovery.spawns)
            if recovery.protect_mutating
            else set()
        )
        try:
            guarded, report = guard_context(
                self.window, recovery.context_tokens, skip_entry_ids=skip, rules=recovery.rules
            )
        except ContextOverflowError as error:
            self._fail(step, recovery.estimate(self.window), prompt_error=str(error))
        cut = list(dict.fromkeys(e for e in (*report.truncated_entry_ids, *report.compacted_entry_ids) if e))
        new = [e for e in cut if e not in self._guarded]
        if new:
            self._guarded.update(new)
            mutating = mutating_result_ids(self.window, recovery.is_mutating, recovery.spawns)
            self._attempt_steps[-1].append(
                RecoveryStepTrace(
                    kind="guard",
                    step=step,
                    detail=f"{len(new)} tool result(s) cut for this call only",
                    tokens_before=recovery.estimate(self.window),
                    tokens_after=recovery.estimate(guarded),
                    entry_ids=new,
                    mutating_entry_ids=[e for e in new if e in mutating],
                )
            )
        return guarded

    def _fail(
        self,
        step: int,
        tokens: int | None,
        *,
        prompt_error: str | None = None,
        assistant_error: str | None = None,
        kind: str = "overflow",
    ) -> Any:
        self._attempt_steps[-1].append(
            RecoveryStepTrace(kind=kind, step=step, detail=prompt_error or assistant_error or "", tokens_before=tokens)
        )
        raise AttemptOverflow(
            AttemptResult(
                prompt_error=prompt_error,
                assistant_error=assistant_error,
                # a chain that forgets pi compacted in the attempt compacts again (a seeded fault)
                in_attempt_compactions=0 if "compact_twice" in self.recovery.faults else self.in_attempt_compactions,
                prompt_tokens=tokens,
                messages=[item.message for item in self.window],
            ),
            step,
        )

    # ------------------------------------------------------------ the chain's callbacks

    def attempt(self, window: Any) -> AttemptResult:
        # the same list when nothing replaced it: the loop goes on appending to it
        self.window = window if isinstance(window, list) else self.window
        self.in_attempt_compactions, self.in_attempt_tried = 0, False
        self._attempt_steps.append([])
        try:
            self.run_steps(self, self.step)
        except AttemptOverflow as overflow:
            self.step = overflow.step
            return overflow.result
        return AttemptResult(ok=True, in_attempt_compactions=self.in_attempt_compactions)

    def compact_fn(self, trigger: str, info: dict) -> StepOutcome:
        before = self.recovery.estimate(self.window)
        outcome = self.recovery.compact(trigger, list(self.window), info)
        after = self.recovery.estimate(outcome.window) if outcome.changed and outcome.window is not None else before
        self._compactions.append(
            RecoveryStepTrace(
                kind="overflow_compaction", step=self.step, trigger=trigger, tokens_before=before, tokens_after=after
            )
        )
        return outcome

    def truncate_fn(self, info: dict) -> StepOutcome:
        recovery = self.recovery
        before = recovery.estimate(self.window)
        # the window the plan was made on (the one rebuilt from the working copy, whose entry ids
        # the rewrite names) and what it cut there
        planned: list[tuple[list[WindowMessage], dict[str, ToolResultMessage], set[str]]] = []

        def plan(window: list[WindowMessage]) -> dict[str, ToolResultMessage]:
            mutating = mutating_result_ids(window, recovery.is_mutating, recovery.spawns)
            skip = mutating if recovery.protect_mutating else set()
            replacements = truncation_replacements(window, recovery.context_tokens, recovery.rules, skip)
            planned.append((window, replacements, mutating))
            return replacements

        if recovery.rewrite_session is None:
            window, _ = _replaced(self.window, plan(self.window))
        else:
            window = recovery.rewrite_session(self.window, plan)
        seen, replacements, mutating = planned[-1] if planned else (self.window, {}, set())
        cut = [item.entry_id for item in seen if item.entry_id is not None and item.entry_id in replacements]
        self._truncations.append(
            RecoveryStepTrace(
                kind="truncate_tool_results",
                step=self.step,
                tokens_before=before,
                tokens_after=recovery.estimate(window),
                entry_ids=cut,
                mutating_entry_ids=[e for e in cut if e in mutating],
            )
        )
        if not cut:
            return StepOutcome(False, reason="no oversized tool result it may cut")
        return StepOutcome(True, window=window)

    # ------------------------------------------------------------ the trace

    def trace(self, outcome: RecoveryOutcome, side_effects: bool) -> RecoveryTrace | None:
        """The chain's steps in order; None when the turn never met the window."""
        attempts = iter(self._attempt_steps)
        compactions = iter(self._compactions)
        truncations = iter(self._truncations)
        steps: list[RecoveryStepTrace] = []
        for step in outcome.steps:
            if step.kind == "attempt":
                steps.extend(next(attempts, []))
            elif step.kind in ("overflow_compaction", "compaction_failed", "timeout_compaction"):
                update = {"kind": step.kind, "diag_id": step.diag_id}
                if step.kind == "compaction_failed":
                    update["detail"] = step.detail
                steps.append(next(compactions).model_copy(update=update))
            elif step.kind in ("truncate_tool_results", "truncation_failed"):
                steps.append(
                    next(truncations).model_copy(
                        update={"kind": step.kind, "diag_id": step.diag_id, "detail": step.detail}
                    )
                )
            else:
                steps.append(
                    RecoveryStepTrace(kind=step.kind, step=self.step, detail=step.detail, diag_id=step.diag_id)
                )
        if not steps:
            return None
        recovery = self.recovery
        user_text = None
        gave_up = None if outcome.ok else outcome.error_kind
        if not outcome.ok and outcome.result is not None and outcome.result.timed_out:
            gave_up = "timeout"  # the run ends timed out: no overflow recovery follows a timeout
        if not outcome.ok and outcome.user_text is not None:
            caution = recovery.rules.give_up.side_effect_caution if side_effects else ""
            user_text = outcome.user_text + caution
        elif not outcome.ok:  # an error the release does not take for an overflow reaches the user as it is
            user_text = outcome.error_message
        return RecoveryTrace(
            turn=self.turn,
            context_window=recovery.context_tokens,
            rules=recovery.rules.name,
            steps=steps,
            attempts=outcome.attempts,
            overflow_compactions=outcome.overflow_compaction_attempts,
            truncated=outcome.tool_result_truncation_attempted,
            gave_up=gave_up,
            user_text=user_text,
            diag_id=outcome.diag_id,
            oversized_results=not outcome.ok
            and session_likely_has_oversized_tool_results(
                [w.message for w in self.window], recovery.context_tokens, recovery.rules
            ),
        )

    def run(self) -> tuple[RecoveryOutcome, list[WindowMessage]]:
        rules, faults = self.recovery.rules, self.recovery.faults
        if "compact_past_limit" in faults:  # the trace still names the release: the checks judge by it
            limit = rules.give_up.max_overflow_compaction_attempts + 1
            rules = replace(rules, give_up=replace(rules.give_up, max_overflow_compaction_attempts=limit))
        outcome = run_with_recovery(
            self.attempt,
            self.compact_fn,
            self.truncate_fn,
            context_tokens=self.recovery.context_tokens,
            window=self.window,
            has_oversized_tool_results=(lambda result: False) if "skip_truncation" in faults else None,
            diag_id_factory=self.recovery.diag_id_factory,
            rules=rules,
        )
        return outcome, self.window


__all__ = [
    "AttemptOverflow",
    "OverflowRecovery",
    "TurnChain",
    "mutating_result_ids",
    "truncate_window",
    "truncation_replacements",
]
