"""The generic recorded-tool client: how a tool replay has no implementation for is called.

Every tool of an imported session, and a sub-agent spawn of a recorded one, is answered from its
recorded result: the cassette holds, per call, `POST <REPLAY_BASE_URL>/tools/<name>` with the
canonical JSON arguments, and the result as the response (`cassette.recorded_tool_interaction`).
The replay executor serves that request by its key alone, without HTTP or vcrpy
(`recorded_tool_key`); `recorded_tool` sends the same request over real HTTP.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlparse

from replaylab import caches
from replaylab.cassette import RECORDED_TOOL_PATH, TOOL_ERROR_HEADER, canonical_json, recorded_tool_uri
from replaylab.replay.cassettes.request_keys import RequestKey, text_body_key
from replaylab.replay.tools.pack import ToolContext, ToolOutput


@dataclass(eq=False)
class ToolRequest:
    """The request the recorded-tool client sends, as vcrpy's `Request` holds it: a miss's record
    (`Playback.misses`) without importing vcrpy. `path` and `query` parse the URI as vcrpy does
    (`urlparse`, sorted `parse_qsl`)."""

    method: str
    uri: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    _replaylab_body_key: str | None = field(default=None, repr=False)

    @property
    def path(self) -> str:
        return urlparse(self.uri).path

    @property
    def query(self) -> list[tuple[str, str]]:
        return sorted(parse_qsl(urlparse(self.uri).query))


def recorded_tool(name: str, args: dict[str, Any], ctx: ToolContext | None = None) -> ToolOutput:
    """The generic recorded-tool implementation: POST canonical JSON args to the recorded-tool
    endpoint (port 9: if anything ever let it through, nothing listens there). No proxies: a
    proxy from the environment would change the request the cassette matches on."""
    request = urllib.request.Request(
        recorded_tool_uri(name),
        data=canonical_json(args).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            body = response.read().decode("utf-8", "replace")
            is_error = (response.headers.get(TOOL_ERROR_HEADER) or "").lower() == "true"
    except urllib.error.HTTPError as exc:  # a recorded non-2xx answer
        body = exc.read().decode("utf-8", "replace")
        is_error = True
    return ToolOutput(body, is_error)


def recorded_tool_request(name: str, args: dict[str, Any]) -> ToolRequest:
    """The request `recorded_tool` sends for a call, as vcrpy's `Request` would hold it."""
    return ToolRequest(
        "POST", recorded_tool_uri(name), canonical_json(args).encode("utf-8"), {"Content-Type": "application/json"}
    )


@caches.lru("replay.recorded_tool_path", maxsize=1024)
def _recorded_tool_path(name: str) -> tuple[str, tuple]:
    """Path and sorted query vcrpy parses from the recorded tool's URI (a name may hold a `?`)."""
    request = recorded_tool_request(name, {})
    return request.path or "/", tuple(sorted(request.query))


def recorded_tool_key(name: str, args: dict[str, Any], canonical: str | None = None) -> RequestKey:
    """`request_key(recorded_tool_request(name, args))` without building the vcrpy request: the
    same method, the path vcrpy parses from the same URI, the same canonical body of the same bytes.
    `canonical`: `canonical_json(args)`, when the caller has it already."""
    return "POST", *_recorded_tool_path(name), text_body_key(canonical_json(args) if canonical is None else canonical)


def is_recorded_tool_key(key: tuple) -> bool:
    """Whether an index key is a recorded-tool interaction (the call itself, not HTTP a tool made)."""
    return str(key[1]).startswith(RECORDED_TOOL_PATH)


def recorded_tool_output(text: str, response: dict[str, Any]) -> ToolOutput:
    """What `recorded_tool` returns for a recorded response (its body text and the response dict):
    an error when the recorded result was one (`TOOL_ERROR_HEADER`) or the status is 400 or more."""
    status = int((response.get("status") or {}).get("code") or 200)
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    flag = headers.get(TOOL_ERROR_HEADER.lower()) or ["false"]
    flag = flag[0] if isinstance(flag, list) else flag
    return ToolOutput(text, str(flag).lower() == "true" or status >= 400)


#: how an imported cassette names an image of a result (`importers.common.text_of_blocks`),
#: which the recording's text (`message_text`) leaves out
IMAGE_NAMED = re.compile(r"\[image(?: [^\]\s]*)?\]")


def same_recorded_text(recorded: str, served: str) -> bool:
    """Whether the cassette's answer is the recording's result: whitespace aside, and the images
    an imported cassette names aside (an importer joins a result's blocks its own way)."""
    if recorded == served:
        return True
    return " ".join(recorded.split()) == " ".join(IMAGE_NAMED.sub(" ", served).split())
