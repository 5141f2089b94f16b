"""JSON text of any value a transcript holds, at any depth.

orjson prints 254 levels and reads 1024; the stdlib's encoder recurses about a thousand deep; a
transcript line may nest as deep as orjson reads (pi reads it too). What orjson refuses is printed
here with a stack of its own, each scalar as orjson prints it, so the text is the one orjson would
give and no item fails on a value it could read."""

from __future__ import annotations

import json
from typing import Any

import orjson


def compact_json(value: Any, *, sort_keys: bool = False) -> str:
    """`value` as compact JSON text, as orjson prints it.

    orjson refuses values nested deeper than 254 levels, and the stdlib's encoder recurses, but
    a transcript may hold deeper ones (orjson *reads* up to 1024): those are printed with a stack
    of the encoder's own, each scalar as orjson prints it, instead of crashing the item."""
    try:
        option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS if sort_keys else orjson.OPT_NON_STR_KEYS
        return orjson.dumps(value, option=option).decode()
    except orjson.JSONEncodeError:
        return _deep_json(value, sort_keys)


def _deep_json(value: Any, sort_keys: bool) -> str:
    out: list[str] = []
    stack: list[Any] = [value]  # a value to print, or a str of punctuation to print as is
    while stack:
        item = stack.pop()
        if isinstance(item, _Punctuation):
            out.append(item)
        elif isinstance(item, dict):
            pairs = (
                sorted(((str(k), v) for k, v in item.items()), key=lambda kv: kv[0])
                if sort_keys
                else [(str(k), v) for k, v in item.items()]
            )
            parts: list[Any] = [_Punctuation("{")]
            for n, (key, child) in enumerate(pairs):
                parts += [_Punctuation(("," if n else "") + _scalar_json(key) + ":"), child]
            stack.extend(reversed([*parts, _Punctuation("}")]))
        elif isinstance(item, (list, tuple)):
            parts = [_Punctuation("[")]
            for n, child in enumerate(item):
                parts += [_Punctuation(","), child] if n else [child]
            stack.extend(reversed([*parts, _Punctuation("]")]))
        else:
            out.append(_scalar_json(item))
    return "".join(out)


def _scalar_json(value: Any) -> str:
    """One scalar as orjson prints it (`inf` as `null`); what orjson cannot print, as `str` of it."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, default=str)


class _Punctuation(str):
    """What `_deep_json` prints as is (a plain str on its stack is a value)."""
