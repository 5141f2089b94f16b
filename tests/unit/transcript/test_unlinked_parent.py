"""An entry whose `parentId` is neither a string nor null (`transcript.unlinked_parent`): read as a
root, as pi's `getBranch` ends its walk there, kept aside by OpenClaw's entry schema, and written
back as written. Before: the entry was skipped (`invalid-entry`), so pi's window lacked it."""

from __future__ import annotations

import orjson
import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.transcript import loads_transcript
from replaylab.transcript.model import dump_entry

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}


@pytest.mark.parametrize("written", [5, False, {"id": "e1"}])
def test_an_entry_whose_parent_id_is_of_another_type_is_a_root(written) -> None:
    data = linear_jsonl(HEADER, message("user", "hi"), message("user", "cut off"), message("user", "after"))
    lines = [orjson.loads(line) for line in data.splitlines()]
    lines[2]["parentId"] = written
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        found = [(d.code, d.severity, d.entry_id, d.field) for d in transcript.diagnostics]
        assert found == [("parent-not-string", "warning", "e2", "parentId")], (written, lazy)
        path = transcript.leaf_path()
        assert [e.id for e in path] == ["e2", "e3"]
        assert dump_entry(path[0]) == lines[2]  # written back as written
        for name in ("pi@0.73.1", "pi@1.6.0"):
            assert [w.entry_id for w in rules_of(name).window(path)] == ["e2", "e3"], name
        openclaw = rules_of("openclaw@2026.9.6")
        assert [w.entry_id for w in openclaw.window(path)] == ["e3"]
        assert [e.id for e, _ in openclaw.kept_aside(path)] == ["e2"]
