"""What the first compaction of an item gives the pipeline, as a type: a compacted window to
replay on, a compaction that cannot succeed at this budget (a finding of its own,
`CANNOT_COMPACT`), or a failure of the compactor (an infrastructure error)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.memo import ItemMemo


def found_nothing_to_gain(result: Any) -> bool:
    """A compaction that failed only because the compacted window would not be smaller: nothing
    was worth compacting, which is not a fault of the compactor."""
    return not result.success and result.failure == "nothing_to_gain"


def refused_by_agent(result: Any) -> bool:
    """A compaction the item's agent itself would not make here (OpenClaw refuses an empty
    compaction): the scenario cannot happen under that agent, which is no fault of the compactor."""
    return not result.success and result.failure == "agent_refuses"


def refused_after_compaction(result: Any, history: Sequence[Any], memo: ItemMemo | None = None) -> str | None:
    """The id of the recording's compaction that `history` ends in, when the compaction failed
    because of it (pi 0.73.1's guard: no compaction of a history that ends in one, nothing new
    having reached the model since): the agent itself would not compact here. None otherwise —
    a compactor that says so of a history that does not end in a compaction is not taken at its word."""
    from replaylab.compaction.harness import just_compacted

    if result.success or result.failure != "already_compacted":
        return None
    return just_compacted(list(history), memo)


def refused_as_pi(result: Any, history: Sequence[Any], agent: str, memo: ItemMemo | None = None) -> Any:
    """`result`, a later compaction of a pi 0.73.1 item, made the agent's own refusal (`agent_refuses`)
    where it failed at the double-compaction guard and `history` does end in a compaction
    (`refused_after_compaction`): pi 0.73.1 would not compact there, as the items with agent rules
    are refused (`compaction.plan.agent_refusal`), and its run goes on, truncates or gives up."""
    after = refused_after_compaction(result, history, memo)
    if after is None:
        return result
    what = "the leaf already is a compaction"
    if history[-1].id != after:
        what += f" ({after}), followed only by the entries it restated"
    result.failure = "agent_refuses"
    result.error = f"nothing to compact: {agent} would not compact here: {what}"
    return result


#: failures that say the session cannot be compacted at this budget, not that the compactor broke
CANNOT_SUCCEED = ("nothing_to_gain", "protected_too_large", "no_budget")


def cannot_succeed(result: Any) -> bool:
    return not result.success and result.failure in CANNOT_SUCCEED


@dataclass(frozen=True)
class Compacted:
    result: Any  # the compactor's `CompactResult`
    window: list[WindowMessage]  # the compacted window, rebuilt from the working copy
    #: the working copy's leaf right after it: where the agent would rebuild its context from
    leaf: str | None = None


@dataclass(frozen=True)
class CannotCompact:
    result: Any


@dataclass(frozen=True)
class CompactionFailed:
    result: Any


CompactionOutcome = Compacted | CannotCompact | CompactionFailed
