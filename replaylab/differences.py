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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

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
    found: list[Difference] = []
    count = [0]
    try:
        _walk(expected, actual, scrub_data(expected), scrub_data(actual), [], found, count, limit)
    except RecursionError:  # nested deeper than Python recurses (scrubbing too): the whole value differs
        found[:] = [Difference(ROOT, TOO_DEEP, TOO_DEEP)]
        count[0] = 1
    return Differences(tuple(found), count[0] - len(found))


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


def _same(left: Any, right: Any) -> bool:
    """Equal as JSON spells them: 1, 1.0 and True differ, and so do 0.0 and -0.0 (a call's
    canonical JSON, which decides whether two calls match, spells them apart)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return repr(left) == repr(right)
    return left == right


def _walk(
    expected: Any,
    actual: Any,
    shown_expected: Any,
    shown_actual: Any,
    parts: list[str | int],
    found: list[Difference],
    count: list[int],
    limit: int,
) -> None:
    """Collect differing leaves of the raw values (`expected`, `actual`), shown from their scrubbed
    twins (`shown_*`, walked in step); only the first `limit` are built, the rest counted."""
    if expected is actual:
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in [*expected, *(k for k in actual if k not in expected)]:
            label = scrub_text(key) if isinstance(key, str) else str(key)
            sub_e, sub_a = _child(shown_expected, key, expected), _child(shown_actual, key, actual)
            if key not in actual:
                _add(found, count, limit, Difference(human_path([*parts, label]), _value(sub_e), None, "missing"))
            elif key not in expected:
                _add(found, count, limit, Difference(human_path([*parts, label]), None, _value(sub_a), "extra"))
            else:
                _walk(expected[key], actual[key], sub_e, sub_a, [*parts, label], found, count, limit)
        return
    if isinstance(expected, list) and isinstance(actual, list):
        for index in range(max(len(expected), len(actual))):
            sub_e = _item(shown_expected, index)
            sub_a = _item(shown_actual, index)
            if index >= len(actual):
                _add(found, count, limit, Difference(human_path([*parts, index]), _value(sub_e), None, "missing"))
            elif index >= len(expected):
                _add(found, count, limit, Difference(human_path([*parts, index]), None, _value(sub_a), "extra"))
            else:
                _walk(expected[index], actual[index], sub_e, sub_a, [*parts, index], found, count, limit)
        return
    if not _same(expected, actual):
        _add(found, count, limit, _leaf(parts, shown_expected, shown_actual, json_type(expected) != json_type(actual)))


def _leaf(parts: list[str | int], expected: Any, actual: Any, type_changed: bool = False) -> Difference:
    if isinstance(expected, str) and isinstance(actual, str):
        if expected == actual:  # differs only in what scrubbing redacted
            expected = actual = REDACTED
        expected, actual = window(expected, actual)
    return Difference(human_path(parts), _value(expected), _value(actual), "type" if type_changed else "changed")


def _add(found: list[Difference], count: list[int], limit: int, difference: Difference) -> None:
    count[0] += 1
    if len(found) < limit:
        found.append(difference)


def _child(shown: Any, key: Any, raw: dict) -> Any:
    """The scrubbed twin of `raw[key]` (keys are scrubbed too); scrubbed afresh if not found."""
    if key not in raw:
        return None
    if isinstance(shown, dict):
        label = scrub_text(key) if isinstance(key, str) else key
        if label in shown:
            return shown[label]
    return scrub_data(raw[key])


def _item(shown: Any, index: int) -> Any:
    return shown[index] if isinstance(shown, list) and index < len(shown) else None


def _value(value: Any) -> Any:
    """A leaf as it is kept: long strings of a missing or extra side cut from their start."""
    if isinstance(value, str) and len(value) > LONG_STRING_CHARS:
        return value[: 2 * WINDOW_CHARS] + "…"
    return value
