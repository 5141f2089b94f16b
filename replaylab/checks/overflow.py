"""Findings of the overflow recovery chain of the compacted run (`replay.overflow`), each chain
judged against the OpenClaw runtime rules it ran under, from its trace alone:

* MUTATION_ALTERED — under safeguard (mutating events not allowed to be cut), a guard cut or a
  truncation touched a mutating event's result (a compaction's own losses are judged with every
  other compaction by `checks.compactions`);
* RECOVERY_CHAIN_WRONG — more overflow compaction attempts than the rules allow; a compaction in
  an attempt that had already compacted (pi's in-attempt compaction: the run loop retries without
  compacting again); truncation before compaction was tried, or more than once in a run; a give-up
  with no compaction tried (unless the error was a compaction failure) or with oversized tool
  results never truncated, with a kind that is not
  an overflow kind, or with a text that is not the release's (with its side-effect caution exactly
  when a mutating call ran in the turn); after a timeout during a compaction, the run went on from
  a snapshot taken mid-compaction (OpenClaw's `selectCompactionTimeoutSnapshot` takes the one read
  before the compaction: the window the run goes on with must be the one before it);
* OVERFLOW_GAVE_UP — the agent gave up on a turn: its kind, user text and diagnostic id; or the
  release did not take the provider's answer for an overflow at all (kind `other`: no recovery);
  or the turn timed out during a compaction (kind `timeout`).
"""

from __future__ import annotations

from replaylab.checks.after_runs import AfterRuns
from replaylab.compaction.recovery import is_compaction_failure_error
from replaylab.defects import Code, Defect
from replaylab.replay.trace import RecoveryStepTrace, RecoveryTrace, TurnTrace
from replaylab.upstream.runtime_rules import RuntimeRules, runtime_rules_named

#: the steps that count one of the run loop's overflow compaction attempts
COUNTED = ("overflow_compaction", "compaction_failed", "retry_after_in_attempt_compaction")
COMPACTIONS = ("overflow_compaction", "compaction_failed")
TRUNCATIONS = ("truncate_tool_results", "truncation_failed")
FAILED_ATTEMPTS = ("overflow", "precheck")
GIVE_UP_KINDS = ("context_overflow", "compaction_failure")


def overflow_findings(item: AfterRuns) -> list[Defect]:
    settings = item.scenario.compaction
    protected = settings.mode == "safeguard" and not settings.allow_mutating_event_truncate
    turns = {t.turn: t for t in item.compacted.turns}
    defects: list[Defect] = []
    for chain in item.compacted.recovery:
        rules = runtime_rules_named(chain.rules)
        if protected:
            defects.extend(_mutating_cut(chain))
        defects.extend(chain_violations(chain, rules, turns.get(chain.turn)))
        if chain.gave_up is not None:
            defects.append(_gave_up(chain, rules))
    return defects


def _gave_up(chain: RecoveryTrace, rules: RuntimeRules) -> Defect:
    """OVERFLOW_GAVE_UP for a turn the chain ended without an answer."""
    detail: dict[str, str | None] = {"user_text": chain.user_text}
    if chain.gave_up == "other":  # not the release's overflow: no recovery was tried
        message = (
            f"{rules.name} does not take the provider's answer for a context overflow, so nothing "
            f"recovered it: {chain.user_text}"
        )
    elif chain.gave_up == "timeout":
        message = (
            f"the attempt timed out during a compaction after {chain.attempts} attempt(s); the run "
            f"went on from the {_timeout_source(chain)} snapshot"
        )
    else:
        detail = {"diag_id": chain.diag_id, **detail}
        message = (
            f"the agent gave up on a context overflow ({chain.gave_up}, {chain.diag_id}) after "
            f"{chain.attempts} attempt(s), {chain.overflow_compactions} compaction attempt(s)"
            f"{', truncation' if chain.truncated else ''}: {chain.user_text}"
        )
    return Defect.of(
        Code.OVERFLOW_GAVE_UP, f"turn {chain.turn}: {message}", turn=chain.turn, actual=chain.gave_up, detail=detail
    )


def _mutating_cut(chain: RecoveryTrace) -> list[Defect]:
    return [
        Defect.of(
            Code.MUTATION_ALTERED,
            f"turn {chain.turn}: the recovery step {step.kind} cut the result of a mutating event "
            f"({entry_id}), which safeguard never does",
            entry_id=entry_id,
            turn=chain.turn,
            detail={"recovery_step": step.kind, "model_call": step.step},
        )
        for step in chain.steps
        for entry_id in step.mutating_entry_ids
    ]


def chain_violations(chain: RecoveryTrace, rules: RuntimeRules, turn: TurnTrace | None) -> list[Defect]:
    """Where the chain of one turn broke the release's rules (RECOVERY_CHAIN_WRONG)."""
    problems: list[str] = []
    steps = chain.steps
    counted = sum(1 for s in steps if s.kind in COUNTED)
    maximum = rules.give_up.max_overflow_compaction_attempts
    if counted > maximum:
        problems.append(f"{counted} overflow compaction attempts, {rules.name} allows {maximum}")
    if rules.silent_overflow == "kept" and any(s.kind == "in_attempt_compaction" for s in steps):
        problems.append(f"compacted and asked again for a finished reply over the window, which {rules.name} keeps")
    for attempt in _attempts(steps):
        compacted_in_attempt = any(s.kind == "in_attempt_compaction" and s.detail == "compacted" for s in attempt)
        if compacted_in_attempt and any(s.kind in COMPACTIONS for s in attempt):
            problems.append("compacted again in an attempt that had already compacted (in-attempt)")
    truncations = [i for i, s in enumerate(steps) if s.kind in TRUNCATIONS]
    if len(truncations) > 1:
        problems.append(f"tool results truncated {len(truncations)} times in one run, at most once")
    if truncations and _before_compaction(steps, truncations[0], rules):
        problems.append("tool results truncated before compaction was tried")
    for step in steps:
        if (
            step.kind == "compaction_timeout"
            and step.detail == "pre-compaction"
            and step.tokens_after is not None
            and step.tokens_before is not None
            and step.tokens_after != step.tokens_before
        ):
            problems.append(
                f"after a timeout during compaction the run went on from a snapshot taken mid-compaction "
                f"({step.tokens_after:,} tokens; the window before the compaction held {step.tokens_before:,})"
            )
    if chain.gave_up in GIVE_UP_KINDS:
        problems.extend(_give_up_problems(chain, rules, turn))
    elif chain.gave_up not in (None, "other", "timeout"):
        problems.append(f"gave up as {chain.gave_up!r}, expected one of {', '.join(GIVE_UP_KINDS)}")
    return [
        Defect.of(
            Code.RECOVERY_CHAIN_WRONG,
            f"turn {chain.turn}: the overflow recovery broke {rules.name}'s rules: {problem}",
            turn=chain.turn,
            detail={"steps": [s.kind for s in steps], "rules": rules.name},
        )
        for problem in problems
    ]


def _timeout_source(chain: RecoveryTrace) -> str:
    sources = [s.detail for s in chain.steps if s.kind == "compaction_timeout"]
    return sources[-1] if sources else "current"


def _attempts(steps: list[RecoveryStepTrace]) -> list[list[RecoveryStepTrace]]:
    """The steps split at each failed attempt (an attempt's own steps, then the chain's answer)."""
    out: list[list[RecoveryStepTrace]] = [[]]
    for step in steps:
        out[-1].append(step)
        if step.kind in ("overflow_compaction", "retry_after_in_attempt_compaction", *TRUNCATIONS):
            out.append([])
    return out


def _before_compaction(steps: list[RecoveryStepTrace], truncation: int, rules: RuntimeRules) -> bool:
    """The run loop truncates only when compaction did not go on: it failed, its attempts are
    used up, or the error was a compaction failure (never compacted again)."""
    before = steps[:truncation]
    if before and before[-1].kind == "compaction_failed":
        return False
    if sum(1 for s in before if s.kind in COUNTED) >= rules.give_up.max_overflow_compaction_attempts:
        return False
    failed = [s for s in before if s.kind in FAILED_ATTEMPTS]
    return not (failed and is_compaction_failure_error(failed[-1].detail, rules))


def _give_up_problems(chain: RecoveryTrace, rules: RuntimeRules, turn: TurnTrace | None) -> list[str]:
    problems = []
    kinds = [s.kind for s in chain.steps]
    if chain.gave_up == "context_overflow" and not any(k in COUNTED for k in kinds):
        problems.append("gave up on an overflow without trying compaction")
    if chain.oversized_results and not any(k in TRUNCATIONS for k in kinds):
        problems.append("gave up with oversized tool results it never tried to truncate")
    side_effects = turn is not None and any(call.mutating for call in turn.tool_calls)
    expected = rules.give_up.overflow_user_text + (rules.give_up.side_effect_caution if side_effects else "")
    if chain.user_text != expected:
        problems.append(f"gave up saying {chain.user_text!r}, {rules.name} says {expected!r}")
    if not chain.diag_id:
        problems.append("gave up without a diagnostic id")
    return problems


__all__ = ["chain_violations", "overflow_findings"]
