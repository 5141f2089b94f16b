"""YAML read only once its shape is known to be bounded: suites and cassettes.

Why: YAML aliases let a few lines stand for an exponential number of values (an alias bomb), or
for a value that holds itself (a recursive alias); a plain integer may have thousands of digits,
which Python refuses to convert; deep nesting exhausts the composer's stack. Before composing
anything, one pass over the parser's events (iterative, no recursion) measures the document as
the constructor would expand it — every alias counted at the size of what it names — and refuses
each of these with the line and the key path where it happens. Only then is the document built.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import yaml

#: digits of an integer: far more than any count or status code, far fewer than Python's
#: conversion limit
MAX_INT_DIGITS = 30
_DECIMAL_INT = re.compile(r"[-+]?[0-9][0-9_]*")
_INT_TAG = "tag:yaml.org,2002:int"

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Limits(NamedTuple):
    """How big a document may be: values (scalars, sequences, mappings, aliases counted at the
    size of what they name) and nesting levels."""

    values: int
    depth: int
    #: what the refusal says the document is ("a suite is a shallow mapping")
    kind: str


class ShapeProblem(Exception):
    """Why the document is refused, the 1-based line where it happens and the key path it is under."""

    def __init__(self, line: int, message: str, field: str | None = None):
        super().__init__(message)
        self.line = line
        self.message = message
        self.field = field


def load_bounded(text: str | bytes, limits: Limits) -> tuple[Any, yaml.Node | None]:
    """The document's data and its node tree (for key lines). Raises `ShapeProblem` for an
    alias bomb, a recursive alias, deep nesting or a huge integer, `yaml.YAMLError` for YAML
    that does not parse or build."""
    check_shape(text, limits)
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, node


def check_shape(text: str | bytes, limits: Limits) -> None:
    """One pass over the parser's events: the expanded size, the depth, the integers. Each
    refusal names the line and the key path it is under (`ShapeProblem.field`)."""
    sizes: dict[str, int] = {}  # anchor → expanded size of the value it names (once that value ends)
    frames: list[_Frame] = []  # the open sequences and mappings, outermost first
    total = 0
    for event in yaml.parse(text, Loader=LOADER):
        line = event.start_mark.line + 1 if event.start_mark else 1
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(frames) >= limits.depth:
                raise ShapeProblem(
                    line, f"nested more than {limits.depth:,} levels deep; {limits.kind}", _field(frames)
                )
            frames.append(_Frame(event.anchor, isinstance(event, yaml.MappingStartEvent)))
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            frame = frames.pop()
            if frame.anchor is not None:
                sizes[frame.anchor] = frame.size
            added = frame.size
        elif isinstance(event, yaml.ScalarEvent):
            _check_integer(event, line, frames)
            if event.anchor is not None:
                sizes[event.anchor] = 1
            added = 1
        elif isinstance(event, yaml.AliasEvent):
            if any(frame.anchor == event.anchor for frame in frames):
                raise ShapeProblem(
                    line,
                    f"alias *{event.anchor} is used inside the value it names: the value would hold itself",
                    _field(frames),
                )
            added = sizes.get(event.anchor, 1)  # an undefined alias: the composer names it
        else:
            continue
        if frames:
            frames[-1].took(event, added)
        else:
            total += added
        if total + sum(frame.size for frame in frames) > limits.values:
            where = f" at alias *{event.anchor}" if isinstance(event, yaml.AliasEvent) else ""
            raise ShapeProblem(
                line,
                f"expands to more than {limits.values:,} values{where} (an alias repeats all it names); {limits.kind}",
                _field(frames),
            )


class _Frame:
    """An open sequence or mapping: its anchor, its expanded size so far, and where in it the
    parser is (the key of the value being read, or the index in a sequence)."""

    def __init__(self, anchor: str | None, mapping: bool):
        self.anchor = anchor
        self.mapping = mapping
        self.size = 1
        self.items = 0  # values read (a mapping counts keys and values)
        self.key: str | None = None

    def took(self, event: yaml.Event, size: int) -> None:
        self.size += size
        if self.mapping and self.items % 2 == 0:
            self.key = event.value if isinstance(event, yaml.ScalarEvent) else "?"
        self.items += 1

    def part(self) -> str | None:
        if self.mapping:
            return self.key if self.items % 2 == 1 else None
        return str(self.items)


def _field(frames: list[_Frame]) -> str | None:
    parts = [frame.part() for frame in frames]
    return ".".join(p for p in parts if p is not None) or None


def _check_integer(event: yaml.ScalarEvent, line: int, frames: list[_Frame]) -> None:
    value = event.value
    if len(value) <= MAX_INT_DIGITS:
        return
    plain = event.style is None or event.style == ""
    tagged = event.tag == _INT_TAG
    if (plain and event.implicit[0] or tagged) and _DECIMAL_INT.fullmatch(value):
        digits = sum(c.isdigit() for c in value)
        raise ShapeProblem(
            line,
            f"an integer of {digits:,} digits; expected a count of at most {MAX_INT_DIGITS} digits",
            _field(frames),
        )
