"""The evidence check: a tool the classifier calls non-mutating whose recorded HTTP is a write.

A write is POST / PUT / PATCH / DELETE (any case) to an endpoint that is neither a query endpoint
(`QUERY_ENDPOINT_RE`: search APIs, GraphQL, RPC-style getters answer queries to POSTs) nor the
recorded-tool endpoint `/tools/` (the recorded result of an imported call, not HTTP the tool made).
The requests come from the recording — the interactions the recorder tagged with the call
(`interaction_tags`) — and, for an opted-in live read tool, from what its code asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from replaylab.cassette import RECORDED_TOOL_PATH
from replaylab.defects import Code, Defect
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
QUERY_ENDPOINT_RE = re.compile(
    r"(?:^|/)(?:_?m?search|query|graphql|find|lookup|list|get|fetch|count|_count)(?:[/_.\-]|$)", re.I
)


def is_write_request(method: str, path: str) -> bool:
    """HTTP evidence of a side effect: a write method to a non-query, non-recorded-tool endpoint."""
    if method.upper() not in WRITE_METHODS:
        return False
    path = path or "/"
    if path.startswith(RECORDED_TOOL_PATH):
        return False
    return not QUERY_ENDPOINT_RE.search(path)


def mislabelled(
    call: ToolCallBlock, classifier: ToolClassifier, requests: Sequence[Any], *, turn: int
) -> Defect | None:
    """`MISLABELLED_TOOL` when any of `requests` (objects with `method` and `path`) is a write."""
    writes = [r for r in requests if is_write_request(r.method, r.path)]
    if not writes:
        return None
    return Defect.of(
        Code.MISLABELLED_TOOL,
        f"tool {call.name} is classified {classifier.classify(call.name, call.arguments)!r} "
        f"({classifier.source(call.name)}), but its recorded HTTP is a write: {writes[0].method} {writes[0].path}",
        expected="no write requests",
        actual=[f"{r.method} {r.path}" for r in writes],
        turn=turn,
        tool_call_id=call.id,
        tool=call.name,
    )
