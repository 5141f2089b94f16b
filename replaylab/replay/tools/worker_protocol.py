"""The messages between replaylab and its tool process: one JSON object per line.

Why JSON and not pickle: the tool process runs a tool pack's code, which can write anything to
any file descriptor it finds. Whatever it writes is at worst an answer replaylab rejects, never
code replaylab would run. Bytes (a recorded body that is not UTF-8) travel as `{"$bytes": base64}`;
lone surrogates travel as JSON escapes (the stdlib encoder keeps them, orjson would refuse).
"""

from __future__ import annotations

import base64
import json
from typing import Any

BYTES_KEY = "$bytes"
#: the longest line either side reads: a tool result far over anything a context window holds
MAX_LINE_BYTES = 64 * 1024 * 1024


class ProtocolError(ValueError):
    """A line that is not a message of this protocol."""


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(_to_json(message), ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not a JSON line: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {type(value).__name__}")
    return _from_json(value)


def _to_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return {BYTES_KEY: base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(BYTES_KEY), str):
            try:
                return base64.b64decode(value[BYTES_KEY], validate=True)
            except ValueError:
                raise ProtocolError("a bytes value that is not base64") from None
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value
