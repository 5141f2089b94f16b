"""OpenClaw 2026.9.6's Tool Search dispatcher `tool_call {id, args}`: the catalog tool it calls and
the arguments it passes, read as OpenClaw reads them (`local-model-lean-*.mjs`:
`prepareToolSearchDispatcherArguments`, then agent-core's `validateToolArguments` against its
schema, then `readToolSearchCallArgs`, then `findEntry`) — or why they cannot be read for certain
from the call alone (OpenClaw's reader also consults the session's catalog, which a recorded call
does not carry), and then the call mutates."""

from __future__ import annotations

import json
import re
from typing import Any

from replaylab.safety.shell import js_trim, word
from replaylab.transcript.javascript import utf16_length
from replaylab.upstream import openclaw_2026_9_6 as OC96

_ARGS_PREFIX = "args."
#: `makeCatalogId`: `<source>:<sourceName>:<tool name>`; a name holding no `:` is evident
_CATALOG_ID = re.compile(rf"(?:{'|'.join(sorted(OC96.TOOL_SEARCH_CATALOG_SOURCES))}):[^:]+:(?P<name>[^:]+)", re.DOTALL)


def _record(value: Any) -> bool:
    return isinstance(value, dict)


def _nested(params: dict[str, Any]) -> Any:
    """`params.args ?? params.input`"""
    return params["args"] if params.get("args") is not None else params.get("input")


def _selector(params: dict[str, Any]) -> str | None:
    """`readToolSearchSelector`: `id ?? toolId ?? name`, when a string that is not blank."""
    value = next((params[k] for k in OC96.TOOL_SEARCH_SELECTOR_KEYS if params.get(k) is not None), None)
    return value if isinstance(value, str) and js_trim(value) else None


def prepare_dispatcher_arguments(args: Any) -> Any:
    """`prepareToolSearchDispatcherArguments`: `{args: {id, …}}` (no selector outside) lifts the
    wrapped selector and arguments to the top."""
    if not _record(args) or any(key in args for key in OC96.TOOL_SEARCH_SELECTOR_KEYS):
        return args
    nested = _nested(args)
    if not _record(nested):
        return args
    selector = _selector(nested)
    if selector is None:
        return args
    return {**{k: v for k, v in args.items() if k not in ("args", "input")}, **nested, "id": selector}


def coerce_to_schema(args: Any) -> Any:
    """`validateToolArguments` on the prepared arguments: `args` is a Record in `tool_call`'s
    schema, so a string holding a JSON object is that object (`coerceWithJsonSchema`)."""
    text = args.get("args") if _record(args) else None
    if not isinstance(text, str) or not js_trim(text) or utf16_length(text) > OC96.JSON_COERCE_MAX_LENGTH:
        return args
    try:
        parsed = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):  # `JSON.parse` refuses it (or too deep here): kept, so mutating
        return args
    return {**args, "args": parsed} if _record(parsed) else args


def _not_json(name: str) -> Any:
    """`NaN` / `Infinity`: Python's parser reads them, `JSON.parse` does not."""
    raise ValueError(f"{name} is not a JSON value")


def read_call_args(args: Any) -> tuple[str, Any] | str:
    """`readToolSearchCallArgs` on the prepared arguments: (the id or name asked for, the target's
    input), or why it depends on the catalog (or the call fails in every catalog)."""
    params = args if _record(args) else {}
    dotted = {k[len(_ARGS_PREFIX) :]: v for k, v in params.items() if k.startswith(_ARGS_PREFIX) and len(k) > 5}
    nested = _nested(params)
    if nested is not None and not (_record(nested) and not nested):
        selector = _selector(params)
        if selector is None:
            return "it names no tool (`id` must be a non-empty string)"
        return js_trim(selector), ({**dotted, **nested} if _record(nested) else nested)
    present = [k for k in OC96.TOOL_SEARCH_SELECTOR_KEYS if params.get(k) is not None]
    spelled = {params[k] for k in present if isinstance(params[k], str)}
    if len(present) > 1 and (len(spelled) != 1 or not all(isinstance(params[k], str) for k in present)):
        keys = ", ".join(f"`{k}`" for k in present)
        return f"its selectors {keys} differ: which names the tool, and which are its arguments, depends on the catalog"
    value = params[present[0]] if present else None
    if not isinstance(value, str) or not js_trim(value):
        return "it names no tool (`id` must be a non-empty string)"
    if len(present) > 1 and js_trim(value) != value:
        return "its selectors name a catalog tool only trimmed, so which are its arguments depends on the catalog"
    wrapper = {"args", "input", *present}
    rest = {k: v for k, v in params.items() if k not in wrapper and not (k.startswith(_ARGS_PREFIX) and len(k) > 5)}
    return js_trim(value), {**dotted, **rest}


def tool_call_target(args: Any) -> tuple[str, dict[str, Any]] | str:
    """(the catalog tool's name, its arguments) `tool_call` calls, else why that is not certain."""
    read = read_call_args(coerce_to_schema(prepare_dispatcher_arguments(args)))
    if isinstance(read, str):
        return read
    needle, target_args = read
    if ":" in needle:  # an id (ids always hold `:`): the name is its last part, when evident
        matched = _CATALOG_ID.fullmatch(needle)
        if matched is None:
            return f"`{word(needle)}` is no catalog id whose tool name is evident"
        name = matched.group("name")
    else:
        name = needle
    if name in OC96.TOOL_SEARCH_CONTROL_TOOL_NAMES:
        return f"`{name}` is never in the catalog"
    if not _record(target_args):
        return "its arguments for the tool are not an object"
    return name, target_args
