"""Real OpenClaw 2026.9.6 session stores for the tests, written by OpenClaw's own `SessionManager`
(`replaylab/oracles/node/openclaw-2026.9.6/store.mjs`) from specs built here — never by hand, never
committed.

A spec is JSON: `{"sessions": [{"name", "entries": [...]}]}` (store.mjs's docstring lists the
entries). `spec_from_transcript` turns a bundled recording into one, with its entries' ids as refs
so that compactions, labels and branches resolve; `with_reset` / `with_excluded` /
`with_compaction` add what the recordings lack: a `reset`, a message marked `excludeFromContext`,
a compaction written by OpenClaw itself.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from replaylab.oracles.agent import folder, node_executable
from replaylab.upstream.openclaw_2026_9_6 import PROFILE

STORE_SCRIPT = folder(PROFILE) / "store.mjs"
DUMP_SCRIPT = folder(PROFILE) / "dump_store.mjs"
#: the bundled recordings a store's sessions are made from: several turns, tools of every class
RECORDINGS = ("cancel-two-orders", "refund-cracked-headphones", "vat-invoice-escalation", "handbook-damaged-in-transit")


def spec_from_transcript(path: Path, name: str | None = None) -> dict[str, Any]:
    """One store session holding the transcript's entries in file order (a branch where an entry's
    parent is not the entry before it)."""
    entries: list[dict[str, Any]] = []
    last = None
    skipped: dict[str, str | None] = {}  # an entry the spec leaves out → its parent
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        kind = entry.get("type")
        if kind == "session":
            continue
        parent = entry.get("parentId")
        while parent in skipped:  # the spec's entries link past the ones it leaves out
            parent = skipped[parent]
        if parent != last and parent is not None:
            entries.append({"type": "branch", "from": parent})
        ref = entry.get("id")
        if kind == "message":
            entries.append({"ref": ref, "type": "message", "message": entry["message"]})
        elif kind == "custom":
            entries.append({"ref": ref, "type": "custom", "customType": entry["customType"], "data": entry.get("data")})
        elif kind == "custom_message":
            entries.append(
                {
                    "ref": ref,
                    "type": "custom_message",
                    "customType": entry["customType"],
                    "content": entry["content"],
                    "display": entry.get("display", True),
                }
            )
        elif kind == "compaction":
            entries.append(
                {
                    "ref": ref,
                    "type": "compaction",
                    "summary": entry["summary"],
                    "firstKept": entry["firstKeptEntryId"],
                    "tokensBefore": entry.get("tokensBefore", 0),
                }
            )
        elif kind in ("model_change", "thinking_level_change", "session_info"):
            entries.append({"ref": ref, **{k: v for k, v in entry.items() if k not in ("id", "parentId", "timestamp")}})
        else:
            skipped[ref] = parent
            continue
        last = ref
    return {"name": name or Path(path).stem, "entries": entries}


def user_refs(spec: dict[str, Any]) -> list[int]:
    """Indexes of the spec's user messages."""
    return [
        i for i, e in enumerate(spec["entries"]) if e.get("type") == "message" and e["message"].get("role") == "user"
    ]


def with_reset(spec: dict[str, Any], before_user: int, *, keep_last_user: bool = True) -> dict[str, Any]:
    """A `reset` right before the spec's `before_user`-th user message, keeping (or not) the user
    message before it and what follows."""
    users = user_refs(spec)
    at = users[before_user]
    kept = spec["entries"][users[before_user - 1]]["ref"] if keep_last_user else None
    reset = {"ref": "reset-1", "type": "reset", "reason": "reset", **({"firstKept": kept} if kept else {})}
    return {**spec, "entries": [*spec["entries"][:at], reset, *spec["entries"][at:]]}


def with_excluded(spec: dict[str, Any], before_user: int, text: str) -> dict[str, Any]:
    """A user message marked `excludeFromContext` right before the spec's `before_user`-th one."""
    at = user_refs(spec)[before_user]
    note = {
        "ref": "excluded-1",
        "type": "message",
        "message": {"role": "user", "content": text, "excludeFromContext": True},
    }
    return {**spec, "entries": [*spec["entries"][:at], note, *spec["entries"][at:]]}


def with_compaction(spec: dict[str, Any], before_user: int, summary: str) -> dict[str, Any]:
    """A compaction written by OpenClaw right before the spec's `before_user`-th user message,
    keeping from the user message before it on (with `tokensAfter` and `__openclaw` ids)."""
    users = user_refs(spec)
    at = users[before_user]
    compaction = {
        "ref": "compaction-1",
        "type": "compaction",
        "summary": summary,
        "firstKept": spec["entries"][users[before_user - 1]]["ref"],
        "tokensBefore": 4000,
        "tokensAfter": 900,
        "metadata": {"runId": "run-1"},
    }
    return {**spec, "entries": [*spec["entries"][:at], compaction, *spec["entries"][at:]]}


def long_then_reset(messages: int = 51) -> dict[str, Any]:
    """`messages` user / assistant messages, a reset keeping nothing, then one user message."""
    entries: list[dict[str, Any]] = []
    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        entries.append({"type": "message", "message": {"role": role, "content": f"message {n + 1} of the old history"}})
    entries.append({"type": "reset", "reason": "reset"})
    entries.append({"type": "message", "message": {"role": "user", "content": "a fresh start"}})
    return {"name": "reset-after-51", "entries": entries}


def make_store(state: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """Write the spec's sessions into `state` (an `~/.openclaw`-shaped folder) with OpenClaw's
    SessionManager; what it wrote, read back by a fresh SessionManager."""
    node = node_executable(PROFILE)
    assert node is not None
    spec_file = state.parent / f"{state.name}.spec.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    out = state.parent / f"{state.name}.written.json"
    done = subprocess.run(
        [node, str(STORE_SCRIPT), str(state), str(spec_file), "--out", str(out)],
        cwd=STORE_SCRIPT.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


def dump_store(store: Path) -> dict[str, Any]:
    """What OpenClaw's SessionManager reads of every session of a store (on a scratch copy)."""
    node = node_executable(PROFILE)
    assert node is not None
    done = subprocess.run(
        [node, str(DUMP_SCRIPT), str(store)],
        cwd=DUMP_SCRIPT.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)
