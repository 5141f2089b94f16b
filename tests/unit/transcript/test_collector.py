"""The collector is held off while a transcript's objects are made, and what was made then is
promoted to the oldest generation without a scan, unless something else is frozen (which must
stay frozen: the pytest plugin freezes each item's survivors)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from replaylab.transcript import collector
from replaylab.transcript.collector import collector_held_off


@pytest.fixture
def nothing_frozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test process may have run the plugin in-process, which freezes: thawed first (the
    objects only move to the oldest generation), and the collector's memory of it forgotten."""
    gc.unfreeze()
    monkeypatch.setattr(collector, "_frozen_elsewhere", False)
    yield


def in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_no_collection_inside_and_the_collector_is_back_after(nothing_frozen: None) -> None:
    with collector_held_off():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(nothing_frozen: None) -> None:
    gc.disable()
    try:
        with collector_held_off():
            made = [[]]
        assert not gc.isenabled() and in_generation(made, 0)
    finally:
        gc.enable()


def test_what_was_made_inside_is_old_and_unscanned_afterwards(nothing_frozen: None) -> None:
    with collector_held_off():
        made = [[index] for index in range(1000)]
    assert in_generation(made, 2) and in_generation(made[-1], 2)
    assert not in_generation(made, 0) and gc.get_freeze_count() == 0


def test_what_someone_else_froze_stays_frozen(nothing_frozen: None) -> None:
    frozen = [[]]
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        with collector_held_off():
            pass
        assert gc.get_freeze_count() == count and gc.isenabled() and not in_generation(frozen, 2)
    finally:
        gc.unfreeze()


def test_once_something_else_was_frozen_nothing_is_promoted_again(nothing_frozen: None) -> None:
    """Counting the frozen objects walks them all: asked until the answer is yes, then never."""
    gc.freeze()
    with collector_held_off():  # sees something frozen
        pass
    gc.unfreeze()
    with collector_held_off():
        made = [[]]
    assert in_generation(made, 0) and not in_generation(made, 2)
