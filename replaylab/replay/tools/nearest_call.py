"""For a blocked mutating call: the recorded call that looks most alike, as a hint.

What a blocked call is reported against is the call the recording made at the same step
(`RecordedResults.at_step`); the recorded call nearest to it in arguments is a separate hint,
since it can be any other call (an agent that ran `mkdir` where it had run `git checkout`). The
hint says what differs: the method (the tool, or the HTTP method), the arguments (differing
leaves, `replaylab.differences`) and, filled in by the executor, whether a result is recorded.
Calls of the same tool come first; a recorded call of another tool stands in only when there is
none. A pack tool's calls are not in the cassette as calls, only as the HTTP they made; then the
nearest recorded request stands in, the same HTTP method first. Scrubbed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from replaylab.cassette import RECORDED_TOOL_PATH, canonical_json
from replaylab.differences import Differences, differences, differences_of
from replaylab.replay.cassettes.playback import Playback
from replaylab.replay.cassettes.request_keys import canonical_body
from replaylab.scrub import scrub_data

NEAREST_LABEL = "nearest recorded call (hint)"


@dataclass(frozen=True)
class Nearest:
    """The nearest recorded call: `shown` (scrubbed, for reports), its raw `tool` and `arguments`
    (None for an HTTP request), the recorded `method` and whether it is the attempted one, and
    the differing leaves of its arguments (recorded → attempted)."""

    shown: dict[str, Any]
    tool: str | None
    arguments: dict[str, Any] | None
    method: str
    same_method: bool
    differences: Differences

    def detail(self, result: str | None = None) -> dict[str, Any]:
        """`detail["nearest"]` of a defect: what it is, the call, and what differs."""
        out: dict[str, Any] = {
            "label": NEAREST_LABEL,
            "call": self.shown,
            "method": "same" if self.same_method else f"differs: recorded {self.method}",
            **self.differences.as_detail(),
        }
        out["arguments"] = "differ" if self.differences else "identical"
        if result is not None:
            out["result"] = result
        return out


def nearest_call(
    name: str,
    args: dict[str, Any],
    miss: Any,
    cassette: Playback | None,
    recorded_calls: Sequence[tuple[str, dict[str, Any]]],
) -> Nearest | None:
    """The nearest recorded call to `name(args)`, or None. `recorded_calls`: the recording's
    (tool, arguments) when known; else the cassette's recorded-tool requests of the tool; else,
    for `miss` (the attempted HTTP request), the recorded HTTP request nearest in method, path
    segments and body."""
    same_tool = recorded_calls_of(name, cassette, recorded_calls)
    calls = [(name, c) for c in same_tool] or [(tool, dict(a)) for tool, a in recorded_calls]
    if calls:
        attempted = _flat(args)
        tool, best = min(calls, key=lambda recorded: len(_flat(recorded[1]) ^ attempted))
        return Nearest(
            scrub_data({"tool": tool, "arguments": best}), tool, best, tool, tool == name, differences(best, args)
        )
    if miss is not None and cassette is not None and cassette.data:

        def shape(request: Any) -> dict[str, Any]:
            return {
                "path": [s for s in (request.path or "/").split("/") if s],
                "body": _json_or_text(canonical_body(request.body)),
            }

        method = miss.method.upper()
        attempted_request = shape(miss)
        recorded = [(r.method.upper(), shape(r)) for r, _ in cassette.data]
        best_method, best = min(recorded, key=lambda r: (r[0] != method, _distance(r[1], attempted_request)))
        return Nearest(
            scrub_data({"request": f"{best_method} /{'/'.join(best['path'])}", "body": best["body"]}),
            None,
            None,
            best_method,
            best_method == method,
            differences(best, attempted_request),
        )
    return None


def recorded_calls_of(
    name: str, cassette: Playback | None, recorded_calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The recorded arguments of tool `name`: from `recorded_calls`, else from the cassette's
    recorded-tool requests (their canonical JSON bodies)."""
    calls = [dict(args) for tool, args in recorded_calls if tool == name]
    if calls or cassette is None:
        return calls
    path = RECORDED_TOOL_PATH + name
    # by the index keys when the playback has them: a vcrpy `Request` is built only for the
    # tool's own interactions (none when the recording never called it), not for every one
    keys = getattr(cassette.data, "keys", None)
    indices = (
        range(len(cassette.data))
        if keys is None
        else [i for i, key in enumerate(keys) if key[0] == "POST" and key[1] == path]
    )
    for request, _ in (cassette.data[i] for i in indices):
        if request.method.upper() == "POST" and request.path == path:
            try:
                value = orjson.loads(request.body or b"{}")
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                calls.append(value)
    return calls


def _json_or_text(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _flat(value: Any, prefix: str = "") -> set[tuple[str, str]]:
    if isinstance(value, dict):
        return {item for key, v in value.items() for item in _flat(v, f"{prefix}.{key}")}
    if isinstance(value, list):
        return {item for i, v in enumerate(value) for item in _flat(v, f"{prefix}[{i}]")}
    return {(prefix, canonical_json(value))}


def _distance(a: Any, b: Any) -> int:
    return len(_flat(a) ^ _flat(b))


def hint_summary(hint: dict[str, Any], here: Any) -> str:
    """`method same, arguments differ at command, result recorded`: what differs, in words."""
    if isinstance(here, dict) and hint.get("call") == scrub_data(here):
        return "the recorded call at this step"
    leaves = differences_of(hint)
    parts = [f"method {hint['method']}", f"arguments differ at {leaves.paths()}" if leaves else "arguments identical"]
    if hint.get("result"):
        parts.append(f"result {hint['result']}")
    return ", ".join(parts)
