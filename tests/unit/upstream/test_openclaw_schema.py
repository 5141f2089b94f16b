"""OpenClaw 2026.9.6's entry schema is read twice: on the JSON as written, while the load follows
OpenClaw's navigation (`upstream.openclaw_2026_9_6_schema.indexes`, before any model exists), and
on the entries read, while its rules walk a path (`agents.openclaw_2026_9_6.context.indexed`). The
two must give the same answer for every entry, damaged ones above all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.damage import damaged_session
from builders.fuzzing import fuzz_seeds
from replaylab.agents.openclaw_2026_9_6.context import indexed
from replaylab.transcript import load_transcript
from replaylab.upstream.openclaw_2026_9_6_schema import indexes


@pytest.mark.parametrize("seed", fuzz_seeds(40))
def test_the_schema_on_the_written_json_and_on_the_entry_read_agree(seed: int, tmp_path: Path) -> None:
    path, damage = damaged_session(tmp_path, seed)
    first = {}
    for entry in load_transcript(path).entries:
        first.setdefault(entry.id, entry)
    compared = 0
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        obj = json.loads(line)
        entry = first.get(obj.get("id")) if isinstance(obj, dict) and isinstance(obj.get("id"), str) else None
        if entry is None:
            continue
        compared += 1
        assert indexes(obj) == indexed(entry), f"seed {seed} ({damage}): {line[:300]}"
    assert compared


_USER = {"role": "user", "content": "hi"}
#: (name, an entry after the header's first message): a field each of the schema's branches reads
BRANCHES = [
    ("timestamp-number", {"type": "message", "timestamp": 5, "message": _USER}),
    ("timestamp-null", {"type": "message", "timestamp": None, "message": _USER}),
    ("content-object", {"type": "message", "message": {"role": "user", "content": {"a": 1}}}),
    (
        "tool-result-isError-number",
        {
            "type": "message",
            "message": {"role": "toolResult", "toolCallId": "c", "toolName": "r", "isError": 0, "content": []},
        },
    ),
    ("reset-reason-list", {"type": "reset", "reason": ["new", "idle"]}),  # String(): "new,idle"
    ("reset-reason-unknown", {"type": "reset", "reason": "whim"}),
    ("custom-without-type", {"type": "custom", "data": {}}),
    ("custom-message-display-string", {"type": "custom_message", "customType": "x", "content": "c", "display": "yes"}),
    ("model-change-empty", {"type": "model_change", "provider": "", "modelId": "m"}),
    ("compaction-tokens-string", {"type": "compaction", "summary": "s", "firstKeptEntryId": "e1", "tokensBefore": "9"}),
    ("label-without-target", {"type": "label", "label": "x"}),
]


@pytest.mark.parametrize("name,entry", BRANCHES, ids=[n for n, _ in BRANCHES])
def test_each_branch_of_the_schema_is_read_alike_on_json_and_entry(name: str, entry: dict, tmp_path: Path) -> None:
    header = {"type": "session", "version": 4, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}
    first = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2026-01-01T00:00:00Z", "message": _USER}
    obj = {"timestamp": "2026-01-01T00:00:00Z", **entry, "id": "e2", "parentId": "e1"}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, first, obj)), encoding="utf-8")
    read = [e for e in load_transcript(path).entries if e.id == "e2"]
    assert read, f"{name}: the load keeps the entry"
    assert indexes(obj) == indexed(read[0]) is False, name
