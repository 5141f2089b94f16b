"""Compactors under test written in Python, each `compactor(params, working_copy)` as the suite
key `compactor: {python: compactors.python_compactors:<name>}` imports it (`tests/` is on
sys.path under pytest).

`delegating` is honest: replaylab's own compact() on a scratch copy, what it appended there (its
compaction entry and the entries it restates after it) then appended to the working copy. The others fail in one way each, for the failure-kind tests."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from replaylab.compaction import CompactParams, CompactResult, compact
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.safety.classify import ToolClassifier

HELPDESK = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))


def delegating(params: CompactParams, working_copy: Path) -> CompactResult:
    scratch = Path(tempfile.mkdtemp(dir=working_copy.parent)) / working_copy.name
    result = compact(params.model_copy(update={"working_copy": str(scratch)}), classifier=HELPDESK)
    if result.success:
        appended = scratch.read_bytes()[working_copy.stat().st_size :]
        with open(working_copy, "ab") as handle:
            handle.write(appended)
    return result


def as_dict(params: CompactParams, working_copy: Path) -> dict[str, Any]:
    """The same, answering the contract's JSON shape instead of a model."""
    return delegating(params, working_copy).model_dump(by_alias=True, mode="json")


def crashing(params: CompactParams, working_copy: Path) -> CompactResult:
    print("python-compactor: the summary service said 503", file=sys.stderr)
    raise RuntimeError("summary service unavailable")


def wrong_fields(params: CompactParams, working_copy: Path) -> dict[str, Any]:
    print("python-compactor: answering a list as a string", file=sys.stderr)
    return {"success": True, "mutatedEventIds": "call_t4s0c0", "compactionEventId": "x"}


def refusing(params: CompactParams, working_copy: Path) -> dict[str, Any]:
    print("python-compactor: budget below my minimum", file=sys.stderr)
    return {"success": False, "error": "contextTokens below 4096 is not supported"}


def appending_nothing(params: CompactParams, working_copy: Path) -> dict[str, Any]:
    print("python-compactor: claiming a compaction it did not write", file=sys.stderr)
    return {"success": True, "replaySafe": False, "compactionEventId": "nowhere1"}


NOT_CALLABLE = 42
