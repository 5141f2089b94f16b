"""Agent profiles: found by module, named by suites and the command line, recognised from a session,
carried in the item's plan, and used by its budgets."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from replaylab.agents import profile_of_recording, recording_profile, rules_of
from replaylab.diagnostics import InputError
from replaylab.qa.plan import RunOptions, plan_item
from replaylab.suite import load_suite
from replaylab.upstream.profiles import FALLBACK, UnknownProfile, profile_for_header, profile_named, profiles
from repo_paths import REPO_ROOT

HELPDESK = REPO_ROOT / "recordings" / "helpdesk"


def test_every_profile_module_is_found_with_its_rules_and_oracle_folder() -> None:
    found = profiles()
    assert {"pi@0.73.1", "openclaw@2026.9.6"} <= set(found)
    for name, profile in found.items():
        assert profile.name == name == f"{profile.agent}@{profile.version}"
        assert rules_of(profile).name == name
        folder = REPO_ROOT / "replaylab" / "oracles" / "node" / profile.oracle_folder
        assert (folder / "package.json").is_file() and (folder / "package-lock.json").is_file()
        assert (folder / profile.oracle_entry).is_file()
    with pytest.raises(UnknownProfile, match="expected one of: openclaw@2026.9.6, pi@0.73.1"):
        profile_named("openclaw@1.0")


def test_openclaws_sessions_are_recognised_by_header_version_or_import() -> None:
    assert profile_for_header({"type": "session", "version": 4}).name == "openclaw@2026.9.6"
    assert profile_for_header({"type": "session", "version": 3, "source": {"kind": "openclaw"}}).name == (
        "openclaw@2026.9.6"
    )
    assert profile_for_header({"type": "session", "version": 3, "source": {"kind": "pi"}}).name == FALLBACK
    assert profile_for_header({"type": "session"}).name == FALLBACK
    assert profile_for_header(None).name == FALLBACK
    assert all(profile_of_recording(p).name == FALLBACK for p in HELPDESK.glob("*.jsonl"))


HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-11-25T10:00:00.000Z", "cwd": "/w"}


def _entry(i: int, **fields: object) -> dict[str, object]:
    return {"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "t", **fields}


def _session(tmp_path: Path, name: str, entries: list[dict[str, object]], header: dict[str, object] = HEADER) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in (header, *entries)))
    return path


def test_a_session_holding_what_only_one_agent_writes_is_that_agents(tmp_path: Path) -> None:
    """pi 1.6.0 writes header version 3, as pi 0.73.1 did; a `system` message, a `context_edit`
    or a `usage` entry claims the session for it, an OpenClaw `reset` for OpenClaw, each record
    checked by its own fields."""
    user = _entry(0, message={"role": "user", "content": "hi", "timestamp": 1})
    system = _entry(1, message={"role": "system", "content": "", "sections": {"preamble": "p"}, "timestamp": 2})
    edit = {
        "type": "context_edit",
        "id": "e1",
        "parentId": "e0",
        "timestamp": "t",
        "targetId": "e0",
        "replacement": None,
    }
    usage = {"type": "usage", "id": "e1", "parentId": "e0", "timestamp": "t", "kind": "cache_warm"}
    for name, entries, line, what in (
        ("system", [user, system], 3, "a system message"),
        ("edit", [user, edit], 3, "a context_edit entry"),
        ("usage", [user, usage], 3, "a usage entry"),
    ):
        choice = recording_profile(_session(tmp_path, name, entries))
        assert choice.profile.name == "pi@1.6.0" and f"line {line} holds {what}" in choice.reason, choice
    # spelled with spaces, as Python's json writes it
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("\n".join(json.dumps(line) for line in (HEADER, user, system)) + "\n", encoding="utf-8")
    assert recording_profile(spaced).profile.name == "pi@1.6.0"
    # OpenClaw's reset (and leaf control) in a session it began before it wrote version 4
    reset = {"type": "reset", "id": "e1", "parentId": "e0", "timestamp": "t", "reason": "new"}
    choice = recording_profile(_session(tmp_path, "reset", [user, reset]))
    assert choice.profile.name == "openclaw@2026.9.6" and "line 3 holds a reset entry" in choice.reason
    # the model snapshot OpenClaw records with a turn, in the version-3 files its earlier releases wrote
    snapshot = {"type": "custom", "id": "e1", "parentId": "e0", "timestamp": "t", "customType": "model-snapshot"}
    choice = recording_profile(_session(tmp_path, "snapshot", [user, snapshot | {"data": {"provider": "ollama"}}]))
    assert choice.profile.name == "openclaw@2026.9.6" and "line 3 holds a model-snapshot custom entry" in choice.reason
    other = recording_profile(_session(tmp_path, "other", [user, snapshot | {"customType": "ui-state"}]))
    assert other.profile.name == FALLBACK
    # the header comes first: OpenClaw's version 4 stays OpenClaw's
    assert recording_profile(_session(tmp_path, "v4", [user, system], {**HEADER, "version": 4})).profile.name == (
        "openclaw@2026.9.6"
    )


def test_words_that_only_spell_such_a_record_claim_nothing(tmp_path: Path) -> None:
    """A call's arguments, a tool result's JSON text and a user's words may hold `"role":"system"`
    or `"type":"usage"`: the line's own fields decide, and a session of pi 0.73.1 stays its."""
    call = {"type": "toolCall", "id": "c1", "name": "chat", "arguments": {"role": "system", "type": "usage"}}
    entries = [
        _entry(0, message={"role": "user", "content": '{"role":"system"} and {"type":"context_edit"}', "timestamp": 1}),
        _entry(1, message={"role": "assistant", "content": [call], "usage": {}, "stopReason": "toolUse"}),
        _entry(
            2,
            message={
                "role": "toolResult",
                "toolCallId": "c1",
                "content": [{"type": "text", "text": '{"type":"usage"}'}],
            },
        ),
        {
            "type": "custom",
            "id": "e3",
            "parentId": "e2",
            "timestamp": "t",
            "customType": "x",
            "data": {"type": "usage"},
        },
    ]
    path = _session(tmp_path, "words", entries)
    assert b'"role":"system"' in path.read_bytes() and b'"type":"usage"' in path.read_bytes()
    choice = recording_profile(path)
    assert choice.profile.name == FALLBACK and "fallback" in choice.reason
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert recording_profile(empty).profile.name == FALLBACK
    assert recording_profile(tmp_path / "missing.jsonl").profile.name == FALLBACK


def test_a_suite_naming_pi_0_73_1_for_a_pi_1_6_0_session_is_told(tmp_path: Path) -> None:
    from replaylab.checks.item import records_of_another_agent
    from replaylab.transcript import load_transcript

    user = _entry(0, message={"role": "user", "content": "hi", "timestamp": 1})
    system = _entry(1, message={"role": "system", "content": "", "sections": {"preamble": "p"}, "timestamp": 2})
    transcript = load_transcript(_session(tmp_path, "named", [user, system]))
    note = records_of_another_agent(transcript, profile_named("pi@0.73.1"))
    assert note is not None and "1 system message" in note and "line 3" in note and "`agent: pi@1.6.0`" in note
    assert records_of_another_agent(transcript, profile_named("pi@1.6.0")) is None


def _suite(tmp_path: Path, extra: str) -> Path:
    suite = tmp_path / "s.yaml"
    recording = HELPDESK / "cancel-two-orders.jsonl"
    suite.write_text(f"name: s\nrecordings: {recording}\n{extra}", encoding="utf-8")
    return suite


def test_the_suite_the_scenario_and_the_command_line_name_the_agent(tmp_path: Path) -> None:
    suite = load_suite(
        _suite(tmp_path, "agent: openclaw@2026.9.6\nscenarios:\n  - {name: a}\n  - {name: b, agent: pi@0.73.1}\n")
    )
    a, b = suite.scenarios
    recording = suite.recordings[0]
    assert plan_item(a, recording, RunOptions()).profile.name == "openclaw@2026.9.6"
    assert plan_item(b, recording, RunOptions()).profile.name == "pi@0.73.1"
    assert plan_item(b, recording, RunOptions(agent="openclaw@2026.9.6")).profile.name == "openclaw@2026.9.6"
    plain = load_suite(_suite(tmp_path, "")).scenarios[0]
    assert plan_item(plain, recording, RunOptions()).profile.name == FALLBACK


def test_an_unknown_agent_in_a_suite_names_the_file_line_and_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_suite(_suite(tmp_path, "agent: pi@9\n"))
    text = str(caught.value)
    assert "s.yaml:3" in text and "'agent'" in text and "openclaw@2026.9.6, pi@0.73.1" in text


def test_turn_start_windows_rebuilt_by_rules_equal_the_running_sums_for_pi() -> None:
    """`qa.boundaries`: an item under another agent's rules rebuilds each turn-start window; under
    pi 0.73.1's rules that rebuild gives exactly the running sums the fast path keeps."""
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.replay import split_turns
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript import load_transcript
    from replaylab.transcript.memo import ItemMemo

    classifier = ToolClassifier()
    for recording in sorted(HELPDESK.glob("*.jsonl"))[:6]:
        path = load_transcript(recording).leaf_path()
        turns = split_turns(path)
        running = turn_boundaries(path, turns, classifier, ItemMemo())
        rebuilt = turn_boundaries(path, turns, classifier, ItemMemo(rules=rules_of("pi@0.73.1")))
        assert rebuilt == running, recording.name


def test_an_openclaw_import_header_keeps_its_version(tmp_path: Path) -> None:
    """A v4 file is read as OpenClaw reads it: no warning, entries as version 3's."""
    from replaylab.transcript import load_transcript

    path = tmp_path / "v4.jsonl"
    lines = [
        {"type": "session", "version": 4, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"},
        {"type": "message", "id": "u", "parentId": None, "message": {"role": "user", "content": "hi"}},
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    transcript = load_transcript(path)
    assert transcript.diagnostics == [] and transcript.header.version == 4
    assert profile_of_recording(path).name == "openclaw@2026.9.6"
