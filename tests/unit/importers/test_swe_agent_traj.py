"""A SWE-agent trajectory (`{"history": [...]}`) imports as one session, and SWE-agent's windowed
`open` (which only reads the file and moves SWE-agent's own window) is declared read there only."""

from __future__ import annotations

import json

from replaylab.importers import import_sessions
from replaylab.safety.classify import ToolClassifier


def _call(cid: str, name: str, arguments: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


HISTORY = [
    {"role": "system", "content": "SETTING: ...", "agent": "main", "message_type": "system_prompt"},
    {"role": "user", "content": "ISSUE: ...", "agent": "main", "message_type": "observation"},
    {"role": "assistant", "content": "open it", "agent": "main", "message_type": "action",
     "tool_calls": [_call("c1", "open", {"path": "tests/missing_colon.py"})]},
    {"role": "tool", "content": "[File: tests/missing_colon.py (10 lines total)]", "agent": "main",
     "message_type": "observation", "tool_call_ids": ["c1"]},
    {"role": "assistant", "content": "fix", "agent": "main", "message_type": "action",
     "tool_calls": [_call("c2", "edit", {"search": "a", "replace": "b"})]},
    {"role": "tool", "content": "Text replaced.", "agent": "main", "message_type": "observation",
     "tool_call_ids": ["c2"]},
    {"role": "assistant", "content": "done", "agent": "main", "message_type": "action",
     "tool_calls": [_call("c3", "submit", {})]},
    {"role": "tool", "content": "diff --git ...", "agent": "main", "message_type": "observation",
     "tool_call_ids": ["c3"]},
]  # fmt: skip


def test_swe_agent_trajectory_imports_and_reads_its_open(tmp_path):
    src = tmp_path / "x.traj"
    src.write_text(json.dumps({"history": HISTORY}))
    (session,) = list(import_sessions("openai-chat", src))
    assert session.tool_classes.get("open") == "read"
    classifier = ToolClassifier(declared=session.tool_classes)
    assert not classifier.explain("open", {"path": "tests/missing_colon.py"}).mutating
    assert classifier.explain("edit", {"search": "a", "replace": "b"}).mutating
    assert classifier.explain("submit", {}).mutating  # `git add -A && git diff --cached > model.patch`
    assert not any("tool_call_id" in note for note in session.notes)


def test_open_stays_mutating_outside_a_swe_agent_trajectory(tmp_path):
    plain = [{k: v for k, v in m.items() if k not in ("agent", "message_type")} for m in HISTORY]
    src = tmp_path / "chat.json"
    src.write_text(json.dumps({"messages": plain}))
    (session,) = list(import_sessions("openai-chat", src))
    assert "open" not in session.tool_classes
    assert ToolClassifier(declared=session.tool_classes).explain("open", {"path": "a.py"}).mutating
    assert ToolClassifier().explain("open", {"path": "a.py"}).mutating


def test_a_folder_of_trajectories_imports_each(tmp_path):
    for name in ("a.traj", "b.traj"):
        (tmp_path / name).write_text(json.dumps({"history": HISTORY}))
    assert len(list(import_sessions("openai-chat", tmp_path))) == 2
