"""The overflow recovery chain of an item's compacted run as lines every report shows: per turn
that met the context window, what the chain did (attempts, compactions, truncation, the give-up)
and each step with its trigger, the window's tokens before → after and the diagnostic id."""

from __future__ import annotations

from replaylab.replay.trace import RecoveryStepTrace, RecoveryTrace, RunTrace

#: steps shown per item in the short reports (the JSON holds them all)
MAX_STEPS = 24
DETAIL_CHARS = 160


def recovery_lines(run: RunTrace | None, max_steps: int = MAX_STEPS) -> list[str]:
    """One heading line per chain, then one indented line per step; capped at `max_steps` steps."""
    if run is None or not run.recovery:
        return []
    lines: list[str] = []
    shown = 0
    for chain in run.recovery:
        lines.append(chain_line(chain))
        for step in chain.steps:
            if shown >= max_steps:
                left = sum(len(c.steps) for c in run.recovery) - shown
                return [*lines, f"  … {left} more steps in replaylab.json"]
            lines.append(f"  {step_line(step)}")
            shown += 1
    return lines


def chain_line(chain: RecoveryTrace) -> str:
    done = (
        f"gave up: {chain.gave_up} ({chain.diag_id}) — {chain.user_text}"
        if chain.gave_up
        else "recovered"
        if any(s.kind != "guard" for s in chain.steps)
        else "the guard cut results for its calls"
    )
    return (
        f"turn {chain.turn} ({chain.rules}, window {chain.context_window:,} tokens): {chain.attempts} attempt(s), "
        f"{chain.overflow_compactions} compaction attempt(s){', truncation' if chain.truncated else ''}; {done}"
    )


def step_line(step: RecoveryStepTrace) -> str:
    parts = [f"call {step.step + 1}: {step.kind}"]
    if step.trigger:
        parts.append(f"(trigger {step.trigger})")
    if step.tokens_before is not None:
        after = f" → {step.tokens_after:,}" if step.tokens_after is not None else ""
        parts.append(f"{step.tokens_before:,}{after} tokens")
    if step.entry_ids:
        parts.append(f"entries {', '.join(step.entry_ids[:4])}{' …' if len(step.entry_ids) > 4 else ''}")
    if step.mutating_entry_ids:
        parts.append(f"MUTATING {', '.join(step.mutating_entry_ids)}")
    if step.diag_id:
        parts.append(step.diag_id)
    if step.detail:
        detail = step.detail if len(step.detail) <= DETAIL_CHARS else step.detail[: DETAIL_CHARS - 1] + "…"
        parts.append(f"— {detail}")
    return " ".join(parts)


__all__ = ["chain_line", "recovery_lines", "step_line"]
