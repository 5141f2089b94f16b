"""An OpenClaw 2026.9.6 state folder from `init` to a verdict, as a user runs it.

The folder is OpenClaw's own (`openclaw_state`: a store its SessionManager wrote — several
sessions, a compaction, a reset, an excluded message) plus the archives OpenClaw leaves beside it,
named as OpenClaw names them (their lines are OpenClaw's own records of a stored session).
`replaylab init` must name every file for what it is and leave none out in silence; with
`--import` the suite covers them all; `pytest --replaylab` judges every item under the
openclaw@2026.9.6 profile, every compacted window verified by OpenClaw's own rebuild.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import zstandard

from builders.pytest_runs import run_pytest
from replaylab.importers import openclaw_store as store
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
ARCHIVED_AT = "2026-12-01T12-00-00.000Z"


def replaylab(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replaylab.cli", *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd
    )


@pytest.fixture(scope="module")
def state(openclaw_state: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the state folder with a reset archive, a deleted session's archive (zstd), a zstd
    transcript and a legacy transcript beside the store."""
    folder = tmp_path_factory.mktemp("openclaw-init") / ".openclaw"
    shutil.copytree(openclaw_state, folder)
    agent_store = folder / "agents" / "main" / "agent" / store.STORE_NAME
    sessions = folder / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    stored = {s.name: s for s in store.list_sessions(agent_store)}
    lines = {name: store.jsonl_bytes(store.read_records(agent_store, s.session_id)) for name, s in stored.items()}
    zstd = zstandard.ZstdCompressor()
    first, second, third = sorted(name for name in stored if name != "reset-after-51")[:3]
    (sessions / f"{stored[first].session_id}.jsonl.reset.{ARCHIVED_AT}").write_bytes(lines[first])
    (sessions / f"{stored[second].session_id}.jsonl.deleted.{ARCHIVED_AT}.zst").write_bytes(
        zstd.compress(lines[second])
    )
    (sessions / f"{stored[third].session_id}.jsonl.zst").write_bytes(zstd.compress(lines[third]))
    (sessions / f"{stored['reset-after-51'].session_id}.jsonl").write_bytes(lines["reset-after-51"])
    return folder


def test_init_names_every_openclaw_file_and_leaves_none_out_in_silence(state: Path, tmp_path: Path) -> None:
    done = replaylab("init", state, "--out", tmp_path / "suite.yaml", "--import-to", tmp_path / "imported")
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "an OpenClaw session store (agent main): 5 transcripts" in said
    assert "OpenClaw's a reset's archive of session" in said and f"(reset at {ARCHIVED_AT})" in said
    assert "a deleted session's archive" in said and f"(deleted at {ARCHIVED_AT}, zstd)" in said
    assert "an OpenClaw zstd transcript archive of session" in said
    assert "an OpenClaw legacy transcript of session" in said
    assert said.count("replaylab import --from openclaw") == 5


@pytest.fixture(scope="module")
def suite(state: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("openclaw-suite")
    done = replaylab(
        "init",
        state,
        "--import",
        "--out",
        out / "suite.yaml",
        "--import-to",
        out / "imported",
        "--tools",
        "examples.helpdesk",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "suite.yaml"


def test_init_import_covers_every_session_and_archive(suite: Path) -> None:
    imported = sorted((suite.parent / "imported").glob("*.jsonl"))
    assert len(imported) == 5 + 4
    names = " ".join(p.name for p in imported)
    assert f".reset-{ARCHIVED_AT}." in names and f".deleted-{ARCHIVED_AT}." in names
    text = suite.read_text(encoding="utf-8")
    assert text.count("agent openclaw@2026.9.6") == len(imported)
    for path in imported:
        header = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
        assert header["source"]["kind"] == "openclaw" and header["version"] == 4


def test_pytest_replaylab_judges_them_under_openclaw_with_every_window_verified(suite: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    # a budget every session crosses (the auto budget's safeguard limits are not what this tests)
    budget = ("--replaylab-context-tokens", "2000", "--replaylab-reserve-tokens-floor", "600")
    done = run_pytest(REPO, "--replaylab", str(suite), *budget, f"--replaylab-report={reports}", "-q", "-rs")
    report = json.loads((reports / "replaylab.json").read_text(encoding="utf-8"))
    items = report["items"]
    assert items and {i["agent"] for i in items} == {"openclaw@2026.9.6"}, done.stdout[-3000:]
    assert report["totals"]["agents"] == {"openclaw@2026.9.6": len(items)}
    assert "AGENT_CONTEXT_DIFFERS" not in report["totals"]["defects_by_code"], done.stdout[-3000:]
    windows = report["totals"]["verified_windows"].get("openclaw 2026.9.6", 0)
    compacted = sum(i["compaction"]["compactions"] for i in items if i.get("compaction") and i["compaction"]["success"])
    assert windows == compacted >= 3, done.stdout[-3000:]
    line = f"window verified against openclaw 2026.9.6: {windows} compacted windows equal to openclaw's context"
    assert f"replaylab: {line}" in done.stdout
    assert line in (reports / "replaylab.md").read_text(encoding="utf-8")
    assert f"replaylab: agents: openclaw@2026.9.6 {len(items)} items" in done.stdout
    assert done.returncode == 0, done.stdout[-4000:]


def _users_around_reset(path: Path) -> tuple[int, int]:
    """User turns before the path's reset and answered ones after it."""
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import MessageEntry, ResetEntry

    entries = load_transcript(path).leaf_path()
    at = next((i for i, e in enumerate(entries) if isinstance(e, ResetEntry)), len(entries))
    roles = [e.message.role if isinstance(e, MessageEntry) else None for e in entries]
    answered = sum(1 for i in range(at, len(roles) - 1) if roles[i] == "user" and roles[i + 1] == "assistant")
    return roles[:at].count("user"), answered


@pytest.fixture(scope="module")
def reset_session(suite: Path) -> Path:
    """An imported session OpenClaw wrote with a reset after two user turns or more, and an
    answered user turn after it."""
    from replaylab.suite import load_suite

    recordings = [Path(r) for r in load_suite(suite).recordings]
    return next(r for r in recordings if (around := _users_around_reset(r))[0] >= 2 and around[1] >= 1)


def test_a_compaction_before_a_reset_is_judged_on_the_file_openclaw_had_then(suite: Path, reset_session: Path) -> None:
    """OpenClaw's load attaches an entry that follows a reset in the file, and branches off before
    it, to the file's last entry: a compaction appended to the whole file, continuing from before
    the reset, would be read by OpenClaw as following the session's end. The working copy holds
    the file up to the compaction point (the file as it stood then), so OpenClaw's own rebuild of
    it is replaylab's window; the turns after the reset are not replayed (OpenClaw's context starts
    afresh there, so the compaction reaches none of them), and the item says so."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    before, after = _users_around_reset(reset_session)
    scenario = load_suite(suite).scenarios[0]
    scenario = scenario.model_copy(update={"agent": "openclaw@2026.9.6", "compact_at": f"turn:{before}"})
    result = run_item(
        scenario,
        reset_session,
        RunOptions(verify_with_pi="on", context_tokens=2000, reserve_tokens_floor=600, keep_recent_tokens=100),
    )
    codes = {d.code.value for d in result.defects}
    assert result.outcome in ("passed", "failed") and "AGENT_CONTEXT_DIFFERS" not in codes, result.reason
    assert result.verified_windows >= 1
    note = next(d for d in result.diagnostics if "starts afresh there" in d)
    assert f"{after} recorded turn(s) after the reset entry" in note and "openclaw@2026.9.6" in note
    # the last turn before the reset is replayed in both runs, nothing after it
    assert len(result.baseline.turns) == len(result.compacted.turns) == 1


def test_compact_at_an_entry_before_a_reset_writes_a_copy_openclaw_rebuilds_the_same(
    reset_session: Path, tmp_path: Path
) -> None:
    """`replaylab compact --leaf` at the last entry before the reset, checked by OpenClaw: the copy
    is the file up to that entry with the compaction after it, and OpenClaw's window is replaylab's."""
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import ResetEntry

    path = load_transcript(reset_session).leaf_path()
    leaf = path[next(i for i, e in enumerate(path) if isinstance(e, ResetEntry)) - 1]
    out = tmp_path / "copy.jsonl"
    budget = ("--context-tokens", "2000", "--reserve-tokens-floor", "600", "--keep-recent-tokens", "100")
    done = replaylab(
        "compact", reset_session, "--leaf", leaf.id, "--agent", "openclaw@2026.9.6", "--verify", "--out", out, *budget
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "window verified against openclaw 2026.9.6" in done.stdout and "DIFFERS" not in done.stdout
    line = load_transcript(reset_session).line_of[leaf.id]
    assert f"the working copy holds the file's first {line:,} lines, up to the leaf {leaf.id}" in done.stdout
    copied = out.read_bytes().splitlines(keepends=True)
    recorded = reset_session.read_bytes().splitlines(keepends=True)
    assert copied[:line] == recorded[:line]  # the file as it stood at the leaf, byte for byte
    assert orjson.loads(copied[line])["type"] == "compaction" and orjson.loads(copied[line])["parentId"] == leaf.id


def test_a_compaction_point_whose_turn_a_reset_starts_afresh_gives_way_to_the_next(tmp_path: Path) -> None:
    """A reset inside the turn after a compaction point (a user message, the reset, the reply):
    OpenClaw's context starts afresh before any of that turn's replies, so a compaction there
    reaches nothing. With one point the item is not exercised, and the reason says why. With more
    points the first compaction is the next point, which is checked by OpenClaw's own rebuild."""
    from replaylab.cassette import cassette_path_for
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    source = REPO / "recordings" / "helpdesk" / "handbook-damaged-in-transit.jsonl"
    lines = [orjson.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    users = [i for i, e in enumerate(lines) if e.get("type") == "message" and e["message"]["role"] == "user"]
    third = lines[users[2]]
    # keeping the messages from the first user message on (and their paired tool results), as
    # OpenClaw's preserve-tail reset keeps the recent ones: the turns after it stay grounded
    kept = {"reason": "reset", "firstKeptEntryId": lines[users[0]]["id"]}
    reset = {"type": "reset", "id": "reset-1", "parentId": third["id"], "timestamp": third["timestamp"], **kept}
    lines[users[2] + 1]["parentId"] = reset["id"]
    lines.insert(users[2] + 1, reset)
    recording = tmp_path / source.name
    recording.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    shutil.copyfile(cassette_path_for(source), cassette_path_for(recording))
    scenario = next(s for s in load_suite(REPO / "suites" / "safeguard.yaml").scenarios if s.name == "safeguard")
    scenario = scenario.model_copy(update={"agent": "openclaw@2026.9.6"})
    said = "no compaction before turn 3: openclaw@2026.9.6's context starts afresh at the reset entry reset-1 (line"

    alone = run_item(scenario.model_copy(update={"compact_at": "turn:3"}), recording, RunOptions(verify_with_pi="on"))
    assert alone.outcome == "skipped" and said in (alone.reason or ""), alone.reason
    assert alone.cause is not None and alone.cause.key == "starts-afresh"

    then = run_item(scenario.model_copy(update={"compact_at": "every:2"}), recording, RunOptions(verify_with_pi="on"))
    codes = {d.code.value for d in then.defects}
    assert then.outcome in ("passed", "failed") and "AGENT_CONTEXT_DIFFERS" not in codes, then.reason
    assert then.verified_windows >= 1 and any(said in note for note in then.diagnostics)
    # from turn 5 on (the next point), to the end
    assert len(then.baseline.turns) == len(users) - 4


def test_a_session_openclaw_rewound_is_judged_on_the_history_it_resumes(tmp_path: Path) -> None:
    """OpenClaw's rewind copies a session's history and ends it with a leaf control aimed at an
    earlier reply (`{type: "leaf", parentId: <last id>, targetId}`): the session resumes there, and
    the turns after that reply are an abandoned branch. The item replays and counts only the history OpenClaw resumes (its mutating events, its
    turns), and OpenClaw's own rebuild agrees on every compacted window."""
    from replaylab.cassette import cassette_path_for
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    source = REPO / "recordings" / "helpdesk" / "long-account-review.jsonl"
    scenario = next(s for s in load_suite(REPO / "suites" / "safeguard.yaml").scenarios if s.name == "safeguard")
    scenario = scenario.model_copy(update={"agent": "openclaw@2026.9.6"})
    whole = run_item(scenario, source, RunOptions(verify_with_pi="off"))
    lines = [orjson.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    at = {e.get("id"): i for i, e in enumerate(lines)}
    users = [i for i, e in enumerate(lines) if e.get("type") == "message" and e["message"]["role"] == "user"]
    # rewound to the reply before the turn of the session's last write
    last_write = max(at[e.entry_id] for e in whole.ledger_before.events)
    cut = max(u for u in users if u < last_write)
    answer = lines[cut - 1]
    assert answer["message"]["role"] == "assistant"
    abandoned = {e["id"] for e in lines[cut:]}
    control = {"type": "leaf", "id": "rewind-1", "parentId": lines[-1]["id"], "timestamp": answer["timestamp"]}
    lines.append({**control, "targetId": answer["id"]})
    recording = tmp_path / source.name
    recording.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    shutil.copyfile(cassette_path_for(source), cassette_path_for(recording))

    rewound = run_item(scenario, recording, RunOptions(verify_with_pi="on"))
    codes = {d.code.value for d in rewound.defects}
    assert rewound.outcome in ("passed", "failed") and "AGENT_CONTEXT_DIFFERS" not in codes, rewound.reason
    assert rewound.verified_windows >= 1
    # the turns from the last write on are not OpenClaw's any more: not replayed, their events not counted
    assert len(rewound.baseline.turns) == len(whole.baseline.turns) - len([u for u in users if u >= cut])
    assert {e.entry_id for e in whole.ledger_before.events} & abandoned
    said = f"the file ends with an OpenClaw leaf control (entry rewind-1, line {len(lines)}), which resumes"
    assert any(note.startswith(said) and answer["id"] in note for note in rewound.diagnostics), rewound.diagnostics
    # its version 3 header names no agent, but the leaf control is a record only OpenClaw writes:
    # judged under OpenClaw's rules by default; a suite naming pi's is told whose records it holds
    by_default = run_item(scenario.model_copy(update={"agent": None}), recording, RunOptions(verify_with_pi="off"))
    assert by_default.agent == "openclaw@2026.9.6"
    assert len(by_default.baseline.turns) == len(rewound.baseline.turns)
    as_pi = run_item(scenario.model_copy(update={"agent": "pi@0.73.1"}), recording, RunOptions(verify_with_pi="off"))
    hint = f"holds records only openclaw 2026.9.6 writes (1 leaf entry; first: entry rewind-1, line {len(lines)})"
    assert any(hint in note and "agent: openclaw@2026.9.6" in note for note in as_pi.diagnostics), as_pi.diagnostics
    assert not any(hint in note for note in (*rewound.diagnostics, *by_default.diagnostics))
    assert not {e.entry_id for e in rewound.ledger_before.events} & abandoned
