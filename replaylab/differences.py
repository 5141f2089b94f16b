"""Where two JSON values differ: the differing leaves, each with a path a person reads.

A report that shows two long values cut to the same prefix hides the difference (an edit's
`old_string` that differs deep inside a long text is never shown). So each differing leaf is named
by a human path (`flights[0].flight_number`, `(root)` for the whole value) with its expected and
actual value, a missing key, an extra key or a type change said as such, and a long string shown
as a window around its first differing character, at the same offsets on both sides.

Both values are scrubbed before anything is compared or cut: a window must never show half a
secret the scrubber would no longer recognise once cut, and a value under a secret-named key is
redacted whatever it looks like. A difference only inside what scrubbing redacts is still named
by its path, with redacted values.

deepdiff finds the differing leaves (a well-kept library rather than a hand-written walk); this
module orders them as a reader meets them, names them and shows them from the scrubbed twins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from replaylab.scrub import REDACTED, scrub_data, scrub_text

#: the leaves kept per comparison; the rest are counted (`Differences.more`)
MAX_LEAVES = 5
#: characters shown either side of a long string's first difference
WINDOW_CHARS = 60
#: a string longer than this is windowed rather than shown whole
LONG_STRING_CHARS = 2 * WINDOW_CHARS + 20
#: a container shown as a leaf value (an extra key's dict) is cut to this many characters
VALUE_CHARS = 200
ROOT = "(root)"
TOO_DEEP = "(nested too deep to show)"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


@dataclass(frozen=True)
class Difference:
    """One differing leaf. `change`: `changed`, `missing` (in actual), `extra` (only in actual),
    or `type` (the JSON types differ); a missing side's value is None."""

    path: str
    expected: Any
    actual: Any
    change: str = "changed"

    def as_dict(self) -> dict[str, Any]:
        out = {"path": self.path, "expected": self.expected, "actual": self.actual}
        if self.change != "changed":
            out["change"] = self.change
        return out

    def line(self) -> str:
        """`old_string: expected "…" / actual "…"` (one line, for terminals and messages)."""
        if self.change == "missing":
            return f"{self.path}: expected {show(self.expected)} / actual (no such key)"
        if self.change == "extra":
            return f"{self.path}: expected (no such key) / actual {show(self.actual)}"
        note = f" (type {json_type(self.expected)} → {json_type(self.actual)})" if self.change == "type" else ""
        return f"{self.path}: expected {show(self.expected)} / actual {show(self.actual)}{note}"


@dataclass(frozen=True)
class Differences:
    """The first `MAX_LEAVES` differing leaves and how many more there are."""

    leaves: tuple[Difference, ...] = ()
    more: int = 0

    def __bool__(self) -> bool:
        return bool(self.leaves)

    def paths(self) -> str:
        """`flights[0].flight_number, old_string (+3 more)`: for a one-line message."""
        text = ", ".join(d.path for d in self.leaves)
        return text + (f" (+{self.more} more)" if self.more else "")

    def as_detail(self) -> dict[str, Any]:
        """A defect's `detail` keys: `differences` (plain JSON: a report serializes it) and, when
        leaves were left out, `differences_more`."""
        out: dict[str, Any] = {"differences": [d.as_dict() for d in self.leaves]}
        if self.more:
            out["differences_more"] = self.more
        return out


def differences(expected: Any, actual: Any, limit: int = MAX_LEAVES) -> Differences:
    """The differing leaves of `expected` vs `actual` (JSON-like values), scrubbed and windowed."""
    try:
        if _same_json(expected, actual):  # deepdiff is slow even on equal data
            return Differences()
        found = sorted(_reported(expected, actual), key=_order_by_document(expected, actual))
        shown_expected, shown_actual = _ScrubbedTwin(expected), _ScrubbedTwin(actual)
        kept = tuple(_difference(report, shown_expected, shown_actual) for report in found[:limit])
    except RecursionError:  # nested deeper than Python recurses (deepdiff takes several frames a level)
        return Differences((Difference(ROOT, TOO_DEEP, TOO_DEEP),))
    return Differences(kept, len(found) - len(kept))


def differences_of(detail: Any) -> Differences:
    """The `Differences` a defect's `detail` holds (as `as_detail` wrote it, or read back from a report)."""
    if not isinstance(detail, dict):
        return Differences()
    kept = tuple(
        Difference(
            str(leaf.get("path", ROOT)), leaf.get("expected"), leaf.get("actual"), str(leaf.get("change", "changed"))
        )
        for leaf in detail.get("differences") or ()
        if isinstance(leaf, dict)
    )
    more = detail.get("differences_more")
    return Differences(kept, more if isinstance(more, int) else 0)


def human_path(parts: list[str | int]) -> str:
    """`flights[0].flight_number`; `["a key"]` for a key that is not a plain name; `(root)`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or ROOT


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def show(value: Any) -> str:
    """A leaf value on one line: strings quoted, anything else as compact JSON, cut when long."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_CHARS or isinstance(value, str) else text[: VALUE_CHARS - 1] + "…"


def window(expected: str, actual: str, chars: int = WINDOW_CHARS) -> tuple[str, str]:
    """Both strings cut to `chars` either side of their first differing character, at the same
    offsets, `…` where text was left out; short strings are returned whole."""
    if len(expected) <= LONG_STRING_CHARS and len(actual) <= LONG_STRING_CHARS:
        return expected, actual
    first = 0
    for first, (a, b) in enumerate(zip(expected, actual)):  # noqa: B007 - `first` is the result
        if a != b:
            break
    else:
        first = min(len(expected), len(actual))
    start = max(0, first - chars)
    return _cut(expected, start, first + chars), _cut(actual, start, first + chars)


def _cut(text: str, start: int, end: int) -> str:
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")


#: deepdiff's report types as this module names the change (any other is `changed`). JSON has no
#: sets, attributes or repetitions (those come from Python objects or `ignore_order`, which is off);
#: their kinds map like their dictionary and list namesakes so that nothing reported is lost.
_CHANGES = {
    "dictionary_item_removed": "missing",
    "iterable_item_removed": "missing",
    "set_item_removed": "missing",
    "attribute_removed": "missing",
    "dictionary_item_added": "extra",
    "iterable_item_added": "extra",
    "set_item_added": "extra",
    "attribute_added": "extra",
    "type_changes": "type",
}


class _Report(NamedTuple):
    """One leaf deepdiff reports: its kind, its path parts and its raw values (deepdiff's
    `notpresent` for a missing side)."""

    kind: str
    parts: list[Any]
    expected: Any
    actual: Any


class _AsJsonSpellsThem:
    """The deepdiff operator each level meets first. Equal subtrees are settled by the cheap check
    (deepdiff would walk every leaf of them). Two floats are compared by their spelling, as canonical
    JSON compares them: deepdiff's `==` calls 0.0 and -0.0 equal and NaN unequal to itself. Two
    differing strings are reported as they are: deepdiff would build a line diff of multi-line ones,
    which this module replaces by a window."""

    def match(self, level: Any) -> bool:
        return True

    def give_up_diffing(self, level: Any, diff_instance: Any) -> bool:
        left, right = level.t1, level.t2
        if type(left) is type(right) and type(left) in (float, str):
            if repr(left) != repr(right) if type(left) is float else left != right:
                diff_instance.custom_report_result("values_changed", level)
            return True
        return type(left) is type(right) and type(left) in (dict, list) and _same_json(left, right)


def _same_json(expected: Any, actual: Any) -> bool:
    """Equal as JSON spells them: 1, 1.0 and True differ, and so do 0.0 and -0.0 (a call's
    canonical JSON, which decides whether two calls match, spells them apart). Python's `==` calls
    those equal, so values it calls equal are confirmed by their canonical text."""
    if expected is actual:
        return True
    if expected != actual:
        return False
    try:
        return orjson.dumps(expected, option=orjson.OPT_SORT_KEYS) == orjson.dumps(actual, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # keys that are not strings, huge integers, deep nesting: the slower spelling
        pass
    try:
        return _canonical(expected) == _canonical(actual)
    except (TypeError, ValueError):  # keys that do not sort, a cycle: deepdiff decides
        return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _reported(expected: Any, actual: Any) -> list[_Report]:
    from deepdiff import DeepDiff  # slow to import: only when two values differ

    tree = DeepDiff(
        expected,
        actual,
        view="tree",
        verbose_level=2,
        zip_ordered_iterables=True,  # item by item, as a reader pairs them, not realigned by difflib
        threshold_to_diff_deeper=0,  # each differing key named, never the whole object for many of them
        ignore_private_variables=False,  # `__x` is a key like any other in JSON
        custom_operators=[_AsJsonSpellsThem()],
    )
    return [
        _Report(kind, level.path(output_format="list"), level.t1, level.t2)
        for kind, levels in tree.items()
        for level in levels
    ]


def _order_by_document(expected: Any, actual: Any) -> Callable[[_Report], tuple[int, ...]]:
    """A sort key: where a leaf is met walking `expected`, then `actual`'s extra keys."""
    positions: dict[int, dict[Any, int]] = {}

    def position(container: dict[Any, Any], key: Any) -> int:
        if id(container) not in positions:
            positions[id(container)] = {k: n for n, k in enumerate(container)}
        return positions[id(container)][key]

    def key(report: _Report) -> tuple[int, ...]:
        order: list[int] = []
        left, right = expected, actual
        for part in report.parts:
            if isinstance(left, dict) and part in left:
                order.append(position(left, part))
            elif isinstance(right, dict) and part in right:  # an extra key: after every expected one
                order.append((len(left) if isinstance(left, dict) else 0) + position(right, part))
            else:
                order.append(part if isinstance(part, int) else 0)
            left, right = _step(left, part), _step(right, part)
        return tuple(order)

    return key


def _step(value: Any, part: Any) -> Any:
    """`value[part]` where it exists, else None (a side that has no such key or item)."""
    return value[part] if _holds(value, part) else None


def _labels(expected: Any, actual: Any, parts: list[Any]) -> list[str | int]:
    """The path parts as a person reads them: keys as scrubbed text, list indices as numbers."""
    out: list[str | int] = []
    for part in parts:
        keyed = isinstance(expected, dict) if isinstance(expected, (dict, list)) else isinstance(actual, dict)
        if keyed:
            out.append(scrub_text(part) if isinstance(part, str) else str(part))
        else:
            out.append(part)
        expected, actual = _step(expected, part), _step(actual, part)
    return out


class _ScrubbedTwin:
    """A value's scrubbed twin, scrubbed only where a kept leaf sits. Scrubbing treats each entry
    of a dict (in its key's context) or a list on its own, so the entry a leaf enters is scrubbed
    as the whole value's scrub has it, and the other entries of a large value are not scrubbed."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self._entries: dict[Any, Any] = {}

    def at(self, parts: list[Any]) -> Any:
        """The scrubbed value at `parts` (keys are scrubbed too); None where there is none."""
        if not parts:
            return scrub_data(self.raw)
        first, raw = parts[0], _step(self.raw, parts[0])
        if raw is None and not _holds(self.raw, first):
            return None
        if first not in self._entries:
            if isinstance(self.raw, dict):
                self._entries[first] = next(iter(scrub_data({first: raw}).values()))
            else:
                self._entries[first] = scrub_data(raw)
        return _follow(raw, self._entries[first], parts[1:])


def _holds(value: Any, part: Any) -> bool:
    if isinstance(value, dict):
        return part in value
    return isinstance(value, list) and type(part) is int and 0 <= part < len(value)


def _follow(raw: Any, shown: Any, parts: list[Any]) -> Any:
    """`shown` (the scrubbed twin of `raw`) followed in step with `raw` along `parts`, scrubbed
    afresh where the twins part ways; None where `raw` has no such value."""
    for part in parts:
        if not _holds(raw, part):
            return None
        child = raw[part]
        if isinstance(raw, dict):
            label = scrub_text(part) if isinstance(part, str) else part
            shown = shown[label] if isinstance(shown, dict) and label in shown else scrub_data(child)
        else:
            shown = shown[part] if isinstance(shown, list) and part < len(shown) else scrub_data(child)
        raw = child
    return shown


def _difference(report: _Report, expected: _ScrubbedTwin, actual: _ScrubbedTwin) -> Difference:
    """A reported leaf as it is kept: its human path, its values from the scrubbed twins."""
    path = human_path(_labels(expected.raw, actual.raw, report.parts))
    change = _CHANGES.get(report.kind, "changed")
    if change == "missing":
        return Difference(path, _value(expected.at(report.parts)), None, "missing")
    if change == "extra":
        return Difference(path, None, _value(actual.at(report.parts)), "extra")
    type_changed = change == "type" and json_type(report.expected) != json_type(report.actual)
    return _leaf(path, expected.at(report.parts), actual.at(report.parts), type_changed)


def _leaf(path: str, expected: Any, actual: Any, type_changed: bool = False) -> Difference:
    if isinstance(expected, str) and isinstance(actual, str):
        if expected == actual:  # differs only in what scrubbing redacted
            expected = actual = REDACTED
        expected, actual = window(expected, actual)
    return Difference(path, _value(expected), _value(actual), "type" if type_changed else "changed")


def _value(value: Any) -> Any:
    """A leaf as it is kept: long strings of a missing or extra side cut from their start."""
    if isinstance(value, str) and len(value) > LONG_STRING_CHARS:
        return value[: 2 * WINDOW_CHARS] + "…"
    return value
