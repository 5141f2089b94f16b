"""For a blocked mutating call: the nearest recorded call, and how the attempted one differs.

A `SIDE_EFFECT_ESCAPED` defect is only actionable when it shows what the agent should have sent:
the recorded call of the same tool whose arguments differ least (by the leaf values that differ),
with a key-order-insensitive JSON diff of the arguments (deepdiff, imported only when a diff is
made). A pack tool's calls are not in the cassette as calls, only as the HTTP they made; then
the nearest recorded request with the same method stands in. Both are scrubbed here: the diff
moves values away from the keys that name them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from replaylab.cassette import RECORDED_TOOL_PATH, canonical_json
from replaylab.replay.playback import Playback
from replaylab.replay.request_keys import canonical_body
from replaylab.scrub import REDACTED, scrub_data


def nearest_call(
    name: str,
    args: dict[str, Any],
    miss: Any,
    cassette: Playback | None,
    recorded_calls: Sequence[tuple[str, dict[str, Any]]],
) -> tuple[Any, Any]:
    """(nearest recorded call, JSON diff recorded → attempted), or (None, None). `recorded_calls`:
    the recording's (tool, arguments) when known; else the cassette's recorded-tool requests of
    the tool; else, for `miss` (the attempted HTTP request), the recorded HTTP request with the
    same method nearest in path segments and body."""
    calls = recorded_calls_of(name, cassette, recorded_calls)
    if calls:
        attempted = _flat(args)
        best = min(calls, key=lambda recorded: len(_flat(recorded) ^ attempted))
        return scrub_data({"tool": name, "arguments": best}), json_diff(best, args)
    if (
        miss is not None and cassette is not None
    ):  # pack tools: compare HTTP requests (same method; path segments + body)

        def shape(request: Any) -> dict[str, Any]:
            return {
                "path": [s for s in (request.path or "/").split("/") if s],
                "body": _json_or_text(canonical_body(request.body)),
            }

        same = [shape(r) for r, _ in cassette.data if r.method.upper() == miss.method.upper()]
        if same:
            attempted = shape(miss)
            best = min(same, key=lambda recorded: _distance(recorded, attempted))
            return (
                scrub_data({"request": f"{miss.method.upper()} /{'/'.join(best['path'])}", "body": best["body"]}),
                json_diff(best, attempted),
            )
    return None, None


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


def json_diff(expected: Any, actual: Any) -> dict[str, Any]:
    """Key-order-insensitive JSON diff (deepdiff), as plain JSON data for reports, scrubbed.

    Both sides are scrubbed before they are compared: deepdiff files each change under its path
    (`root['client_secret']`) with `old_value` / `new_value` keys, so a secret in the diff no longer
    sits under the key that names it. A change only in secrets is shown by its paths, each with
    redacted values. The diff is scrubbed again after (paths are text too)."""
    if expected == actual:
        return {}
    from deepdiff import DeepDiff  # heavy: imported only when a diff is made

    scrubbed = scrub_data(expected), scrub_data(actual)
    diff = orjson.loads(DeepDiff(*scrubbed, verbose_level=2).to_json()) if scrubbed[0] != scrubbed[1] else {}
    raw = orjson.loads(DeepDiff(expected, actual, verbose_level=2).to_json())  # for its paths only
    for kind, changes in raw.items():
        if not isinstance(changes, dict):
            continue
        for path, change in changes.items():
            shown = diff.setdefault(kind, {})
            if path not in shown:  # changed only in what scrubbing redacts
                shown[path] = dict.fromkeys(change, REDACTED) if isinstance(change, dict) else REDACTED
    return scrub_data(diff)


def diff_paths(diff: Any) -> list[str]:
    """The first few paths a `json_diff` names (for a defect's one-line message)."""
    paths: list[str] = []
    if isinstance(diff, dict):
        for changes in diff.values():
            if isinstance(changes, dict):
                paths.extend(str(p) for p in changes)
    return paths[:5]


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
