"""What the checks of the recording as it is read: every item has it, exercised or not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.memo import ItemMemo


@dataclass(frozen=True)
class BeforeRuns:
    """One item's recording, classified: judged before any run, whatever the runs then do."""

    transcript: Transcript
    classifier: ToolClassifier
    ledger: Ledger
    memo: ItemMemo
    #: what a check computes once for its findings and for the report's view of them, by name
    #: (`checks.recorded.recorded_compactions`)
    made: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: told (done, of how many) as a long check works through the recording's compactions
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)
