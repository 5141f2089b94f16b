"""Cassettes: vcrpy's YAML format (version 1), canonical JSON bodies, the recorded-tool endpoint.

Why canonical JSON: vcrpy compares raw body bytes unless the request says JSON, so key order and
whitespace would turn a harmless re-serialisation into a cassette miss (vcrpy#309/#533). Every
body replaylab writes or matches is `canonical_json` (sorted keys, no spaces, UTF-8).

The recorded-tool endpoint (DESIGN §7): tools of imported sessions are replayed as
`POST http://127.0.0.1:9/tools/<name>` with the canonical JSON arguments; the response body is the
recorded result. Port 9 (discard) is never listened on: a miss fails closed, it cannot go live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import orjson
import yaml

RECORDED_TOOL_BASE_URL = "http://127.0.0.1:9/tools/"
CASSETTE_SUFFIX = ".cassette.yaml"


def canonical_json(value: Any) -> str:
    """Key-order and whitespace insensitive JSON text."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()


def cassette_path_for(transcript: str | Path) -> Path:
    """`recordings/x.jsonl` → `recordings/x.cassette.yaml`."""
    path = Path(transcript)
    return path.with_name(path.name.removesuffix(".jsonl") + CASSETTE_SUFFIX)


def recorded_tool_uri(tool: str) -> str:
    return RECORDED_TOOL_BASE_URL + tool


def interaction(method: str, uri: str, body: str | None, status: int, response_body: str,
                request_headers: dict[str, str] | None = None,
                response_headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One vcrpy interaction dict (the shape vcrpy's yaml serializer writes)."""
    return {
        "request": {
            "body": body,
            "headers": {k: [v] for k, v in (request_headers or {"Content-Type": "application/json"}).items()},
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": response_body},
            "headers": {k: [v] for k, v in (response_headers or {"Content-Type": "application/json"}).items()},
            "status": {"code": status, "message": "OK" if status < 400 else "Error"},
        },
    }


def recorded_tool_interaction(tool: str, arguments: Any, result: str, *, is_error: bool = False,
                              extra_headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Interaction for one recorded tool call of an imported session."""
    headers = {"Content-Type": "application/json"}
    headers.update(extra_headers or {})
    response_headers = {"Content-Type": "text/plain; charset=utf-8",
                        "X-Replaylab-Tool-Error": "true" if is_error else "false"}
    return interaction("POST", recorded_tool_uri(tool), canonical_json(arguments), 200, result,
                       request_headers=headers, response_headers=response_headers)


def write_cassette(path: str | Path, interactions: Iterable[dict[str, Any]]) -> Path:
    """Write a cassette vcrpy can load (refuses to overwrite: recordings are never rewritten)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"interactions": list(interactions), "version": 1}
    text = yaml.dump(data, Dumper=_dumper(), allow_unicode=True, sort_keys=False, width=1 << 30)
    with open(path, "x", encoding="utf-8") as handle:
        handle.write(text)
    return path


def load_cassette(path: str | Path) -> list[dict[str, Any]]:
    """The interactions of a cassette file (PyYAML's C loader when available)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, "rb") as handle:
        data = yaml.load(handle, Loader=loader)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ValueError(f"{path}: not a vcrpy cassette (expected a mapping with an 'interactions' list)")
    return data["interactions"]


def _dumper():
    return getattr(yaml, "CSafeDumper", yaml.SafeDumper)
