"""A live read tool's reply from its process, in replay: the HTTP its call played, missed and had
blocked. The process runs the tool's code, so its answer is checked against the cassette, not
trusted."""

from __future__ import annotations

from typing import Any

from replaylab.replay.tools.process import ToolFailure
from replaylab.replay.tools.recorded_tool import ToolRequest


def reply_traffic(
    tool: str, reply: dict[str, Any], count: int
) -> tuple[list[int], list[ToolRequest], list[tuple[str, str]]]:
    """The HTTP a live read tool's call played, missed and had blocked, from its process's reply;
    a reply of another shape is a `ToolFailure` (the process runs the tool's code: its answer is
    checked, not trusted)."""
    try:
        played = [int(i) for i in reply.get("played", ())]
        misses = [
            ToolRequest(
                str(m["method"]),
                str(m["uri"]),
                m["body"] if isinstance(m["body"], bytes) else str(m["body"] or "").encode("utf-8", "replace"),
                {str(k): str(v) for k, v in (m.get("headers") or {}).items()},
            )
            for m in reply.get("misses", ())
        ]
        blocked = [(str(event), str(target)) for event, target in reply.get("blocked", ())]
        if "error" in reply:
            reply["error"] = str(reply["error"])
        elif not isinstance(reply.get("text"), str) or not isinstance(reply.get("is_error"), bool):
            raise ValueError("no text and is_error")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ToolFailure(tool, "protocol", f"answered with a reply replaylab cannot read ({exc})") from None
    if any(not 0 <= i < count for i in played):
        raise ToolFailure(tool, "protocol", "answered with interactions the cassette does not hold")
    return played, misses, blocked
