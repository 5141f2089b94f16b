"""The caches a process keeps across pipeline items, all in one registry: `clear()` empties them all.

A run is a value: what one item computes once travels with it (`replaylab.transcript.memo.ItemMemo`).
What is kept beyond an item is kept only where reading or building it again per item would cost
a noticeable share of the item (a parsed cassette, a tool pack, a folder listing, a compiled
validator, pure functions of a short string), and only in a cache registered here by name, so a
test or a long-lived process can drop them all at once and any result stays the same after it.

Each cache is either a `ProcessCache` (a dict that registers itself) or a function cache made by
`lru()` (`functools.lru_cache`, registered with its `cache_clear`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class Registered:
    """One named cache: how many values it holds, and how to empty it."""

    name: str
    size: Callable[[], int]
    clear: Callable[[], None]


#: every process cache, by name
_REGISTRY: dict[str, Registered] = {}


def register(name: str, size: Callable[[], int], clear: Callable[[], None]) -> None:
    """Add a cache to the registry; a name stands for one cache (registering it again, as a
    re-imported module does, replaces the old entry)."""
    _REGISTRY[name] = Registered(name, size, clear)


class ProcessCache(dict[K, V]):
    """A dict kept for the life of the process, registered under `name`."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        register(name, self.__len__, self.clear)


def lru(name: str, maxsize: int | None = 128) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)` registered under `name`: only for pure functions, whose
    results after `clear()` are the same."""

    def decorate(function: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        register(name, lambda: cached.cache_info().currsize, cached.cache_clear)
        return cached  # type: ignore[return-value]

    return decorate


def clear() -> None:
    """Empty every registered cache."""
    for cache in _REGISTRY.values():
        cache.clear()


def sizes() -> dict[str, int]:
    """How many values each registered cache holds, by name."""
    return {name: cache.size() for name, cache in sorted(_REGISTRY.items())}
