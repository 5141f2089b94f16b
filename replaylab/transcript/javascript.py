"""Strings and JSON as JavaScript holds them, for pi's token estimate.

pi counts `String.length` — UTF-16 code units, so a character above U+FFFF counts 2 — and sizes a
tool call by `JSON.stringify(arguments).length`, where numbers are printed the JavaScript way
(`698.0` is `698`, `1e16` is `10000000000000000`, `-0.0` is `0`), integers beyond 2**53 were
already rounded to doubles by `JSON.parse`, and an object's array-index keys come first. pi
decides when and where to cut with these counts, so replaylab counts the same way (checked
against node in the tests).
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

import orjson

#: integers JavaScript holds exactly; larger ones `JSON.parse` rounds to the nearest double
MAX_SAFE_INTEGER = 2**53 - 1
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: the largest array index: JavaScript orders an object's keys that are array indexes first
MAX_ARRAY_INDEX = 2**32 - 2


def _array_index(key: str) -> int | None:
    """The integer a key stands for when JavaScript treats it as an array index (canonical
    decimal, 0 ≤ n ≤ 2**32 − 2), else None."""
    if key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
        number = int(key)
        return number if number <= MAX_ARRAY_INDEX else None
    return None


def javascript_key_order(keys: list[str]) -> list[str]:
    """An object's keys in the order JavaScript enumerates them: array indexes ascending, then
    the other keys in insertion order."""
    indexes = sorted((n, k) for k in keys if (n := _array_index(k)) is not None)
    if not indexes:
        return keys
    others = [k for k in keys if _array_index(k) is None]
    return [k for _, k in indexes] + others


def utf16_length(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_sort_key(text: str) -> bytes:
    """The key JavaScript's default sort orders strings by: their UTF-16 code units (big-endian
    bytes compare as the units do), not their code points."""
    return text.encode("utf-16-be", "surrogatepass")


def js_number(value: float) -> str:
    """ECMAScript `Number::toString` of a finite double (shortest round-trip digits, JavaScript's
    choice between plain and exponent notation)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # the decimal point sits after `n` digits of `digits` (n may be <= 0 or past the end)
    n = len(whole.lstrip("0")) if whole.strip("0") else -(len(fraction) - len(fraction.lstrip("0")))
    n += int(exponent or 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        power = n - 1
        text = (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + ("+" if power >= 0 else "-") + str(abs(power))
    return sign + text


def number_or_none(value: Any) -> int | float | None:
    """A JSON value when `typeof value === "number"` (not a boolean, as Python's int would take it), else None."""
    return value if type(value) in (int, float) else None


def js_truthy(value: Any) -> bool:
    """A JSON value as JavaScript's `if (value)` reads it: an empty array or object is true."""
    return isinstance(value, (list, dict)) or bool(value)


def js_string(value: Any) -> str:
    """`String(value)` (and a template literal's `${value}`) of a JSON value: numbers printed the
    JavaScript way, an array's elements joined by commas (null as nothing), an object
    `[object Object]`."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(float(value)) if abs(value) > MAX_SAFE_INTEGER or isinstance(value, float) else str(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


def _needs_javascript(value: Any) -> bool:
    """Whether `json.dumps` would print `value` differently from `JSON.stringify`: a float, an
    integer beyond what a double holds exactly, a lone surrogate in a string, or an object key
    that is an array index. Iterative: transcripts nest arguments deeper than Python recurses."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, float):
            return True
        if isinstance(item, int):
            if abs(item) > MAX_SAFE_INTEGER:
                return True
        elif isinstance(item, str):
            if not item.isascii() and _LONE_SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, dict):
            for key, child in item.items():
                if _array_index(str(key)) is not None:
                    return True
                stack.append(key)
                stack.append(child)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _string(text: str) -> str:
    dumped = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


#: orjson prints JSON data as `JSON.stringify` does once `_plain` holds, but for what these
#: options make it refuse: an integer past 2**53 - 1, a lone surrogate, nesting past its depth
_ORJSON_OPTIONS = (
    orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _plain(value: Any) -> bool:
    """Whether `value` holds only what orjson prints as JavaScript does: no float (JavaScript
    prints `1.0` as `1` and turns to exponents elsewhere), no key that is an array index (JavaScript
    prints those first), only the exact JSON types. Iterative, by exact type: it runs on every
    tool call's arguments, and the walk is most of the cost."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str or (key.isdigit() and _array_index(key) is not None):
                    return False
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        else:
            return False
    return True


def json_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for JSON data (what `JSON.parse` of the same file would give pi):
    orjson's print when it is JavaScript's (most arguments), else printed the JavaScript way."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=_ORJSON_OPTIONS).decode()
        except TypeError:  # what orjson refuses (`_ORJSON_OPTIONS`)
            pass
    if not _needs_javascript(value):
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except RecursionError:  # nested deeper than Python recurses: printed iteratively below
            pass
    return _stringify(value)


def _scalar(value: Any) -> str:
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, float):
        return js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, int):
        return js_number(float(value)) if abs(value) > MAX_SAFE_INTEGER else str(value)
    return _string(value if isinstance(value, str) else str(value))


def _stringify(value: Any) -> str:
    """`JSON.stringify`, iteratively (arguments nest deeper than Python recurses)."""
    out: list[str] = []
    # each item is a value to print, or a literal piece of punctuation (a `_Piece`)
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Piece):
            out.append(item.text)
        elif isinstance(item, dict):
            keys = javascript_key_order([str(k) for k in item])
            by_key = {str(k): v for k, v in item.items()}
            parts: list[Any] = [_Piece("{")]
            for n, key in enumerate(keys):
                parts += [_Piece(("," if n else "") + _string(key) + ":"), by_key[key]]
            parts.append(_Piece("}"))
            stack.extend(reversed(parts))
        elif isinstance(item, list | tuple):
            parts = [_Piece("[")]
            for n, child in enumerate(item):
                if n:
                    parts.append(_Piece(","))
                parts.append(child)
            parts.append(_Piece("]"))
            stack.extend(reversed(parts))
        else:
            out.append(_scalar(item))
    return "".join(out)


class _Piece:
    """Punctuation `_stringify` emits as is."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLISECOND = datetime.timedelta(milliseconds=1)
#: ECMAScript's time range: ±8.64e15 ms around the epoch (`TimeClip`)
_MAX_TIME_MS = 8.64e15


def date_time_ms(value: Any) -> int | None:
    """`new Date(value).getTime()` for a timestamp as a transcript holds it — an ISO 8601 string
    (without an offset read as UTC, the time zone the oracles run in) or epoch milliseconds —
    exactly, in integer milliseconds; None where JavaScript gives NaN (JSON `null`)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or abs(value) > _MAX_TIME_MS:
            return None
        return int(value)
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return (moment - _EPOCH) // _MILLISECOND
