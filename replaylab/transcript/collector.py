"""The cyclic garbage collector held off while a transcript's objects are made.

Why: a load makes hundreds of thousands of container objects (models, their field sets, content
lists) that live as long as the transcript and die by refcount, never in a cycle. A collection
during the load would rescan them each time, and the first young collection after it would still
scan every one of them to promote them. So the collector is off while they are made, and then
what it did not look at is promoted to the oldest generation without a scan (`gc.freeze()` then
`gc.unfreeze()`: two list splices), where the next full collection meets it like any old object.
Only when nothing else is frozen: unfreezing would also thaw what someone else froze (the pytest
plugin freezes each item's survivors), so then the young collection runs as it would. Whether
anything is frozen is asked until the answer is yes, then never again: the collector counts its
frozen objects by walking them all, which on a long run's frozen heap costs more than a load.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: something else was seen frozen in this process: from then on nothing is promoted here
_frozen_elsewhere = False


@contextmanager
def collector_held_off() -> Iterator[None]:
    """No cyclic collection inside; afterwards what was made is old (see the module's docstring)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote_unless_frozen_elsewhere()
            gc.enable()


def _promote_unless_frozen_elsewhere() -> None:
    global _frozen_elsewhere
    if _frozen_elsewhere:
        return
    if gc.get_freeze_count():
        _frozen_elsewhere = True
        return
    gc.freeze()
    gc.unfreeze()
