"""What every model the agent loop runs shares: the `Model` protocol, the record of a value a
model's message lost (`LostRecord`) and the error a model call reports (`ModelError`).

Optional hooks the loop uses when a model has them: `begin_turn(turn)` (called after the turn's
inputs are in the window), `max_steps(turn)` (how many model calls the turn may take) and
`rewind()` (the last answer was discarded: the next call answers the same step again).
Every model has `defects` (findings of its own, e.g. an LLM cassette miss).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from replaylab.errors import ReplaylabError

if TYPE_CHECKING:
    from replaylab.defects import Defect
    from replaylab.transcript.model import AssistantMessage


class Model(Protocol):
    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage: ...


@dataclass(frozen=True)
class LostRecord:
    """One value a model's message lost (replaced by `marker`): what the item's legend is made of."""

    turn_index: int  # the recording's 0-based turn index of the step
    entry_id: str | None  # the recorded step whose replay lost it (None: a scripted step)
    value: str  # the recorded value (a scripted model: its `${ref}`)
    marker: str
    kind: str  # "arg", "arg-token" (in a tool call), "text" (in the text it wrote): `Candidate.kind`
    seen_entry_id: str | None = None  # the last recording entry before the step that holds the value


class ModelError(ReplaylabError):
    """A model call that failed in a way the run must report (carries the defect)."""

    def __init__(self, message: str, defect: Defect | None = None):
        super().__init__(message)
        self.defect = defect
