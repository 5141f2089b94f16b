"""Objects that live to the end of the run go to the garbage collector's permanent generation.

The results, pytest's reports and everything imported live to the end of the session anyway,
and every full collection during a long run would scan them again: a heap that grows with each
item. Freezing them after a young-generation collection (so no fresh garbage goes with them)
leaks nothing and leaves the collector only the young objects to scan.
"""

from __future__ import annotations

import gc


def freeze_survivors(generation: int = 1) -> None:
    """Collect `generation`, then freeze what is still alive: after each item, after a worker's
    result arrives, and (`generation=2`: a full collection first) before the items run."""
    gc.collect(generation)
    gc.freeze()
