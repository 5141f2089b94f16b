"""Importers: τ-bench, τ²-bench, Claude Code, pi and OpenAI chat → v3 transcripts + cassettes.

The real-data tests import every source file once per test session (module-scoped fixtures
writing into a temporary folder) and then check the written files the way every consumer
reads them: `load_transcript`, `build_ledger`, `load_cassette`. Expected counts are the ground
truth in ../shared/data/*/stats.json and SOURCES.md.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replaylab.cassette import canonical_json, cassette_path_for, load_cassette
from replaylab.diagnostics import InputError
from replaylab.importers import import_sessions, write_session
from replaylab.importers.common import ImportedSession, update_tool_classes
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.load import load_transcript as _load_transcript
from replaylab.transcript.model import (
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    dump_entry,
)

TAU2_FILES = {
    "airline/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json": 50,
    "airline/gpt-4.1_airline_default_gpt-4.1_1trials.json": 20,
    "airline/qwen2.5-7b_airline_default_gpt-4.1-2025-04-14_1trials.json": 50,
    "retail/gpt-4.1_retail_defautl_gpt-4.1_1trials.json": 40,
    "telecom/gpt-4.1_telecom_default_gpt-4.1_1trials.json": 40,
    "telecom/gpt-4.1_telecom_no-user_gpt-4.1_1trials.json": 40,
}
PI_FILES = ("pi-before-compaction.jsonl", "pi-compact.jsonl", "pi-large-session.jsonl", "pi-session.jsonl")
PAIRING_CODES = {"orphan-tool-result", "missing-tool-result"}


# ---------------------------------------------------------------- helpers


@functools.cache
def _load_cached(path: Path):
    return _load_transcript(path)


def load_transcript(path: Path):
    """Each written file is loaded once per test session (files are never rewritten)."""
    return _load_cached(Path(path))


def _write_all(sessions: list[ImportedSession], out: Path) -> list[Path]:
    return [write_session(s, out)[0] for s in sessions]


def _calls(transcript) -> list[tuple[MessageEntry, ToolCallBlock]]:
    """Every tool call of a loaded transcript (assistant and user-side), in file order."""
    out = []
    for entry in transcript.entries:
        if (
            isinstance(entry, MessageEntry)
            and isinstance(entry.message, (AssistantMessage, UserMessage))
            and isinstance(entry.message.content, list)
        ):
            out.extend((entry, b) for b in entry.message.content if isinstance(b, ToolCallBlock))
    return out


def _extra(model, key: str):
    """An extra (non-modelled) field of a loaded entry, by its JSON name."""
    return (model.model_extra or {}).get(key)


def _errors(transcript) -> list:
    return [d for d in transcript.diagnostics if d.severity == "error"]


def _class_counts(paths: list[Path], classifier: ToolClassifier) -> Counter:
    counts: Counter = Counter()
    for path in paths:
        for _, call in _calls(load_transcript(path)):
            counts[classifier.classify(call.name, call.arguments)] += 1
    return counts


def _ledger_counts(
    paths: list[Path], classifier: ToolClassifier, unresolved: frozenset[str] = frozenset()
) -> tuple[Counter, Counter]:
    """The ledgers' calls by class and events by (class, actor); `unresolved`: the children whose
    transcript the data does not hold (every other child must load)."""
    from replaylab.safety.ledger import build_ledger

    counts: Counter = Counter()
    events: Counter = Counter()
    for path in paths:
        ledger = build_ledger(load_transcript(path), classifier)  # children: loaded from disk
        assert set(ledger.unresolved_children) <= unresolved, (path, ledger.unresolved_children)
        counts.update(ledger.class_counts)
        events.update((e.tool_class, e.actor) for e in ledger.events)
    return counts, events


def _assert_cassette_matches_calls(path: Path, *, answered_only: bool = False) -> None:
    """One interaction per call, in call order, body = canonical JSON of the call's arguments."""
    transcript = load_transcript(path)
    answered = {
        e.message.tool_call_id
        for e in transcript.entries
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    }
    calls = [c for _, c in _calls(transcript) if not answered_only or c.id in answered]
    interactions = load_cassette(cassette_path_for(path))
    assert len(interactions) == len(calls), path
    for call, interaction in zip(calls, interactions):
        request = interaction["request"]
        assert request["method"] == "POST"
        assert request["uri"] == f"http://127.0.0.1:9/tools/{call.name}"
        assert request["body"] == canonical_json(call.arguments)
        assert request["body"] == canonical_json(json.loads(request["body"]))


# ---------------------------------------------------------------- real data: fixtures


@pytest.fixture(scope="module")
def tau_out(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("tau")
    sessions = list(import_sessions("tau-bench", shared_data / "tau-bench" / "airline" / "gpt-4o-airline.json"))
    return out, sessions, _write_all(sessions, out)


@pytest.fixture(scope="module")
def tau2_out(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("tau2")
    by_file = {rel: list(import_sessions("tau2-bench", shared_data / "tau2-bench" / rel)) for rel in TAU2_FILES}
    paths = {rel: _write_all(sessions, out) for rel, sessions in by_file.items()}
    return out, by_file, paths


@pytest.fixture(scope="module")
def claude_files(shared_data):
    stats = json.loads((shared_data / "claude-code-spotter" / "stats.json").read_text())["per_file"]
    return {shared_data / rel: info for rel, info in stats.items()}


@pytest.fixture(scope="module")
def claude_direct(claude_files, tmp_path_factory):
    """Each of the 20 files imported directly (main sessions bring their sub-agent children)."""
    out = tmp_path_factory.mktemp("claude-direct")
    sessions = {}
    for path in claude_files:
        (session,) = list(import_sessions("claude-code", path))
        sessions[path] = session
    paths = {path: write_session(session, out)[0] for path, session in sessions.items()}
    return out, sessions, paths


@pytest.fixture(scope="module")
def claude_folder(shared_data, tmp_path_factory):
    """The sessions folder imported as a whole: main sessions + children + orphan sub-agent."""
    out = tmp_path_factory.mktemp("claude-folder")
    sessions = list(import_sessions("claude-code", shared_data / "claude-code-spotter" / "sessions"))
    return out, sessions, _write_all(sessions, out)


@pytest.fixture(scope="module")
def pi_out(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("pi")
    sessions = {name: next(iter(import_sessions("pi", shared_data / "openclaw-fixtures" / name))) for name in PI_FILES}
    paths = {name: write_session(s, out)[0] for name, s in sessions.items()}
    return out, sessions, paths


# ---------------------------------------------------------------- τ-bench


@pytest.mark.realdata
def test_tau_bench_imports_every_trajectory_clean(tau_out, shared_data):
    out, sessions, paths = tau_out
    stats = json.loads((shared_data / "tau-bench" / "stats.json").read_text())
    assert len(sessions) == len(paths) == 200 == stats["trajectories"]
    assert len({s.name for s in sessions}) == 200
    assert sum(len(s.entries) for s in sessions) == stats["messages_per_traj"]["sum"]
    for path in paths:
        transcript = load_transcript(path)
        assert not _errors(transcript), transcript.diagnostics
        assert len(transcript.leaf_path()) == len(transcript.entries)
        first = transcript.entries[0]
        assert first.type == "custom" and first.custom_type == "system-prompt"
        assert first.data["content"].startswith("# Airline Agent Policy")
        _assert_cassette_matches_calls(path)


@pytest.mark.realdata
def test_tau_bench_write_calls_match_ground_truth(tau_out, shared_data):
    out, _, paths = tau_out
    stats = json.loads((shared_data / "tau-bench" / "stats.json").read_text())
    classifier = ToolClassifier.from_json(out / "tool_classes.json")
    counts = _class_counts(paths, classifier)
    assert counts == Counter(stats["tool_calls_by_class"])
    assert counts["write"] == 250
    ledger_counts, events = _ledger_counts(paths, classifier)
    assert ledger_counts == dict(counts)
    assert events == Counter({("write", "assistant"): 250})


@pytest.mark.realdata
def test_tau_bench_reused_call_ids_are_made_unique_and_traceable(tau_out):
    _, sessions, paths = tau_out
    by_name = {p.stem: p for p in paths}
    transcript = load_transcript(by_name["tau-gpt-4o-airline-task0-trial0"])
    ids = [c.id for _, c in _calls(transcript)]
    assert len(ids) == len(set(ids)) == 8  # the source uses call_oIHazX6y... three times
    renamed = {}
    for entry, _ in _calls(transcript):
        renamed.update(_extra(entry, "sourceToolCallIds") or {})
    assert renamed == {
        "call_HGn16KZh9oNCruxsMJ4gYXan~2": "call_HGn16KZh9oNCruxsMJ4gYXan",
        "call_oIHazX6yQrB8hUwl4cRilFKj~2": "call_oIHazX6yQrB8hUwl4cRilFKj",
    }
    results = [
        e.message
        for e in transcript.entries
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]
    assert [r.tool_call_id for r in results] == ids
    assert sum(1 for s in sessions if any("sourceToolCallIds" in e for e in s.entries)) == 49


# ---------------------------------------------------------------- τ²-bench


@pytest.mark.realdata
def test_tau2_bench_imports_every_simulation_clean(tau2_out, shared_data):
    out, by_file, paths = tau2_out
    assert {rel: len(s) for rel, s in by_file.items()} == TAU2_FILES
    assert sum(len(p) for p in paths.values()) == 240
    stats = json.loads((shared_data / "tau2-bench" / "stats.json").read_text())["per_file"]
    for rel, file_paths in paths.items():
        messages = sum(len(s.entries) - 1 for s in by_file[rel])  # minus the system-prompt entry
        assert messages == stats[f"tau2-bench/{rel}"]["messages_per_traj"]["sum"]
        for path in file_paths:
            transcript = load_transcript(path)
            assert not _errors(transcript), transcript.diagnostics
            assert len(transcript.leaf_path()) == len(transcript.entries)
            _assert_cassette_matches_calls(path)


@pytest.mark.realdata
def test_tau2_bench_write_calls_and_user_side_actor_match_ground_truth(tau2_out, shared_data):
    out, by_file, paths = tau2_out
    all_paths = [p for file_paths in paths.values() for p in file_paths]
    classifier = ToolClassifier.from_json(out / "tool_classes.json")
    counts = _class_counts(all_paths, classifier)
    assert counts == Counter({"read": 1741, "write": 653, "transfer": 67, "compute": 16})
    ledger_counts, events = _ledger_counts(all_paths, classifier)
    assert ledger_counts == dict(counts)
    assert events == Counter({("write", "assistant"): 468, ("write", "user"): 185})
    telecom = paths["telecom/gpt-4.1_telecom_default_gpt-4.1_1trials.json"]
    _, telecom_events = _ledger_counts(telecom, classifier)
    assert telecom_events == Counter({("write", "assistant"): 31, ("write", "user"): 185})


@pytest.mark.realdata
def test_tau2_bench_user_side_calls_are_user_messages_with_user_actor_results(tau2_out, shared_data):
    _, _, paths = tau2_out
    telecom = paths["telecom/gpt-4.1_telecom_default_gpt-4.1_1trials.json"]
    user_calls = user_results = 0
    for path in telecom:
        transcript = load_transcript(path)
        user_ids = {c.id for e, c in _calls(transcript) if isinstance(e.message, UserMessage)}
        user_calls += len(user_ids)
        for entry in transcript.entries:
            if isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage):
                is_user = entry.message.tool_call_id in user_ids
                assert (_extra(entry, "actor") == "user") == is_user
                user_results += is_user
    stats = json.loads((shared_data / "tau2-bench" / "stats.json").read_text())["per_file"]
    expected = stats["tau2-bench/telecom/gpt-4.1_telecom_default_gpt-4.1_1trials.json"]["tool_calls_by_requestor"]
    assert user_calls == user_results == expected["user"] == 482


@pytest.mark.realdata
def test_tau2_bench_pairs_parallel_results_by_id(tau2_out, shared_data):
    """Parallel calls: each result names the call with the same source id and gets its tool name."""
    _, by_file, _ = tau2_out
    source = json.loads(
        (shared_data / "tau2-bench" / "airline" / "gpt-4.1_airline_default_gpt-4.1_1trials.json").read_text()
    )
    sessions = by_file["airline/gpt-4.1_airline_default_gpt-4.1_1trials.json"]
    parallel = 0
    for sim, session in zip(source["simulations"], sessions):
        names = {c["id"]: c["name"] for m in sim["messages"] for c in m.get("tool_calls") or []}
        parallel += sum(1 for m in sim["messages"] if len(m.get("tool_calls") or []) > 1)
        for entry in session.entries:
            message = entry.get("message") or {}
            if message.get("role") == "toolResult":
                source_message = sim["messages"][entry["sourceId"]]
                assert message["toolCallId"] == source_message["id"]
                assert message["toolName"] == names[source_message["id"]]
                assert message["content"][0]["text"] == source_message["content"]
    assert parallel == 17  # stats.json: messages_with_parallel_tool_calls


# ---------------------------------------------------------------- Claude Code


@pytest.mark.realdata
def test_claude_code_imports_all_20_files_directly(claude_direct, claude_files):
    out, sessions, paths = claude_direct
    kinds = Counter(info["kind"] for info in claude_files.values())
    assert kinds == Counter({"main": 8, "subagent": 7, "compaction-subagent": 5})
    assert len(paths) == 20
    for source, path in paths.items():
        info = claude_files[source]
        transcript = load_transcript(path)
        assert not _errors(transcript), transcript.diagnostics
        assert len(transcript.leaf_path()) == len(transcript.entries)  # linear: results stay on the path
        calls = _calls(transcript)
        assert len(calls) == info["tool_calls"]
        # one message per API message: merged assistant records + user records (the summary
        # record is inside the compaction entry)
        api_messages = sum(1 for e in transcript.entries if isinstance(e, (MessageEntry, CompactionEntry)))
        assert api_messages == info["api_messages(user records + distinct assistant message.id)"]
        assert sum(isinstance(e, CompactionEntry) for e in transcript.entries) == info["compact_boundaries"]
        _assert_cassette_matches_calls(path)
        for entry in sessions[source].entries:
            assert entry.get("sourceId"), entry


@pytest.mark.realdata
def test_claude_code_counts_match_ground_truth(claude_direct, claude_folder, shared_data):
    _, sessions, paths = claude_direct
    classifier = ToolClassifier.from_json(shared_data / "claude-code-spotter" / "tool_classes.json")
    counts = _class_counts(list(paths.values()), classifier)
    # 459 Bash calls (declared exec), of which 21 are read-only commands OpenClaw exempts and 156
    # more the read-only shell grammar reads (`git status`, beads' `bd ready` / `bd show`,
    # `find … | head`, `find lib -name "*.ex" -exec grep -l … {} \;`, four `bash -n` syntax checks,
    # a `curl` search, four `python3 -c` scripts that print what a JSON file holds …)
    assert counts == Counter(
        {"exec": 282, "read": 590, "write": 250, "subagent": 7, "interaction": 2, "mode": 3, "skill": 2}
    )
    # the folder import: 8 main sessions with their 6 linked sub-agents folded in by the ledger,
    # plus the one sub-agent whose main session is not in the data
    folder_out, folder_sessions, folder_paths = claude_folder
    assert len(folder_paths) == 9
    assert sum(len(s.children) for s in folder_sessions) == 6
    # subagent.jsonl's Task names agent afb92ff, whose transcript the data does not hold: its call
    # is a mutating event of its own (what the agent did is unknown)
    missing = frozenset({"subagent.sub-agent-afb92ff.jsonl"})
    classifier = ToolClassifier.from_json(folder_out / "tool_classes.json")
    ledger_counts, events = _ledger_counts(folder_paths, classifier, unresolved=missing)
    assert ledger_counts == dict(counts)
    assert events == Counter(
        {("exec", "assistant"): 282, ("write", "assistant"): 250, ("subagent-unresolved", "assistant"): 1}
    )


@pytest.mark.realdata
def test_claude_code_compaction_boundary_becomes_one_compaction_entry(claude_direct):
    _, sessions, paths = claude_direct
    triggers = Counter()
    for source, path in paths.items():
        records = [json.loads(line) for line in source.read_text().splitlines()]
        boundaries = [r for r in records if r.get("subtype") == "compact_boundary"]
        if not boundaries:
            continue
        (boundary,) = boundaries
        summary = next(r for r in records if r.get("isCompactSummary"))
        transcript = load_transcript(path)
        (compaction,) = [e for e in transcript.entries if isinstance(e, CompactionEntry)]
        assert compaction.summary == summary["message"]["content"]
        assert compaction.first_kept_entry_id == compaction.id
        assert compaction.tokens_before == boundary["compactMetadata"]["preTokens"]
        assert compaction.details == {"source": "claude-code", "trigger": boundary["compactMetadata"]["trigger"]}
        assert _extra(compaction, "sourceId") == boundary["uuid"]
        assert compaction in transcript.leaf_path()
        assert not any(_extra(e, "sourceId") == summary["uuid"] for e in transcript.entries)
        assert _extra(compaction, "sourceIds") == [boundary["uuid"], summary["uuid"]]
        triggers[compaction.details["trigger"]] += 1
    assert triggers == Counter({"auto": 4, "manual": 1})


@pytest.mark.realdata
def test_claude_code_merges_records_sharing_message_id(claude_direct, shared_data):
    _, sessions, _ = claude_direct
    source = shared_data / "claude-code-spotter" / "sessions" / "short.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines()]
    parts = [r for r in records if r["type"] == "assistant"]
    assert len({r["message"]["id"] for r in parts}) == 1 and len(parts) == 5
    (assistant,) = [e for e in sessions[source].entries if e.get("message", {}).get("role") == "assistant"]
    kinds = [b["type"] for b in assistant["message"]["content"]]
    assert kinds == ["text", "thinking", "text", "toolCall", "toolCall"]
    assert assistant["message"]["content"][1]["thinkingSignature"] == parts[1]["message"]["content"][0]["signature"]
    assert assistant["message"]["stopReason"] == "toolUse"
    assert assistant["sourceIds"] == [r["uuid"] for r in parts]
    usage = parts[-1]["message"]["usage"]
    assert assistant["message"]["usage"]["input"] == usage["input_tokens"]
    assert assistant["message"]["usage"]["cacheWrite"] == usage["cache_creation_input_tokens"]
    customs = Counter(e["customType"] for e in sessions[source].entries if e["type"] == "custom")
    assert customs == Counter(
        {"claude-code:progress": 3, "claude-code:file-history-snapshot": 1, "claude-code:system:local_command": 2}
    )


@pytest.mark.realdata
def test_claude_code_task_results_link_written_child_sessions(claude_folder):
    out, sessions, paths = claude_folder
    links = []
    for path in paths:
        for entry in load_transcript(path).entries:
            if (
                isinstance(entry, MessageEntry)
                and isinstance(entry.message, ToolResultMessage)
                and isinstance(entry.message.details, dict)
                and "replaylab" in entry.message.details
            ):
                links.append(entry.message.details["replaylab"]["childSession"])
    # every Task result names its agent's child session; afb92ff's file is not in the data
    assert len(links) == 7 and "subagent.sub-agent-afb92ff.jsonl" in links
    assert not (out / "subagent.sub-agent-afb92ff.jsonl").exists()
    for name in (n for n in links if "afb92ff" not in n):
        child = load_transcript(out / name)
        assert not _errors(child), child.diagnostics
        assert (out / name).name.count(".sub-agent-") == 1
        _assert_cassette_matches_calls(out / name)
    notes = [n for s in sessions for n in s.notes]
    assert sum("agent-acompact" in n for n in notes) == 5  # skipped, and said so
    assert any("afb92ff" in n and "no transcript" in n for n in notes)  # subagent.jsonl's missing child
    assert any("afc096d" in n and "parent session is not in" in n for n in notes)


# ---------------------------------------------------------------- pi


@pytest.mark.realdata
def test_pi_files_import_as_v3_with_the_same_entries(pi_out, shared_data):
    out, sessions, paths = pi_out
    assert len(paths) == 4
    for name, path in paths.items():
        source = _load_transcript(shared_data / "openclaw-fixtures" / name)
        written = load_transcript(path)
        assert written.header.version == 3 and written.source_version == 3
        assert written.header.id == source.header.id
        assert [dump_entry(e) | {"sourceId": e.id} for e in source.entries] == [dump_entry(e) for e in written.entries]
        assert not any(d.code == "glued-lines" for d in written.diagnostics)  # split on import
        errors = _errors(written)
        if name == "pi-before-compaction.jsonl":
            (diag,) = errors  # the call in flight when the session was compacted
            assert diag.code == "missing-tool-result" and diag.entry_id == "l628"
            following = written.entries[written.entries.index(written.by_id["l628"]) + 1]
            assert following.type == "compaction"
        else:
            assert not errors, errors
        _assert_cassette_matches_calls(path, answered_only=True)
    notes = {name: " ".join(s.notes) for name, s in sessions.items()}
    assert "pi-session.jsonl:440" in notes["pi-session.jsonl"] and "glued-lines" in notes["pi-session.jsonl"]
    assert "pi-compact.jsonl:1013" in notes["pi-compact.jsonl"]
    assert "pi-before-compaction.jsonl:628" in notes["pi-before-compaction.jsonl"]


# ---------------------------------------------------------------- CLI


@pytest.mark.realdata
def test_cli_imports_a_tau2_file_and_rejects_bad_sources(shared_data, tmp_path):
    src = shared_data / "tau2-bench" / "airline" / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
    cmd = [sys.executable, "-m", "replaylab.cli", "import", "--from", "tau2-bench"]
    done = subprocess.run([*cmd, str(src), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "imported 20 sessions" in done.stdout and "148 tool calls" in done.stdout
    assert len(list((tmp_path / "out").glob("*.jsonl"))) == 20
    assert len(list((tmp_path / "out").glob("*.cassette.yaml"))) == 20
    assert json.loads((tmp_path / "out" / "tool_classes.json").read_text())["book_reservation"] == "write"

    missing = tmp_path / "nope.json"
    done = subprocess.run([*cmd, str(missing), "--out", str(tmp_path / "o2")], capture_output=True, text=True)
    assert done.returncode == 2 and str(missing) in done.stderr and "Traceback" not in done.stderr

    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"not": "a tau2 file"}')
    done = subprocess.run([*cmd, str(wrong), "--out", str(tmp_path / "o3")], capture_output=True, text=True)
    assert done.returncode == 2 and str(wrong) in done.stderr and "simulations" in done.stderr

    again = subprocess.run([*cmd, str(src), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert again.returncode == 2 and "already exists" in again.stderr


# ---------------------------------------------------------------- hand-made inputs (no real data)


def _chat(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_openai_chat_list_becomes_a_clean_session(tmp_path):
    messages = [
        {"role": "system", "content": "You are a booking agent."},
        {"role": "user", "content": "Book HAT1 for me"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"b": 2, "a": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "book", "arguments": '{"flight": "HAT1"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "booked"},
        {"role": "tool", "tool_call_id": "c1", "content": "found"},
        {"role": "assistant", "content": "Done."},
    ]
    src = _chat(tmp_path, "chat.json", messages)
    (tmp_path / "tool_classes.json").write_text('{"search": "read", "book": "write"}')
    (session,) = list(import_sessions("openai-chat", src))
    assert session.tool_classes == {"search": "read", "book": "write"}
    path, cassette = write_session(session, tmp_path / "out")
    transcript = _load_transcript(path, strict=True)
    system, user, call, r2, r1, final = transcript.entries
    assert system.type == "custom" and system.data == {"content": "You are a booking agent."}
    assert [b.type for b in call.message.content] == ["text", "toolCall", "toolCall"]
    assert call.message.content[1].arguments == {"a": 1, "b": 2} and call.message.stop_reason == "toolUse"
    assert (r2.message.tool_name, r1.message.tool_name) == ("book", "search")
    assert final.message.stop_reason == "stop"
    assert [_extra(e, "sourceId") for e in transcript.entries] == [0, 1, 2, 3, 4, 5]
    assert [e.parent_id for e in transcript.entries[1:]] == [e.id for e in transcript.entries[:-1]]
    bodies = [
        (i["request"]["uri"].rsplit("/", 1)[1], i["request"]["body"], i["response"]["body"]["string"])
        for i in load_cassette(cassette)
    ]
    assert bodies == [("search", '{"a":1,"b":2}', "found"), ("book", '{"flight":"HAT1"}', "booked")]


def test_openai_chat_replies_without_ids_answer_their_calls_in_order(tmp_path):
    """A dataset that drops the call ids keeps each reply after its call: the first reply answers
    the first call, and no call is given the id "None"."""

    def call(name: str, arguments: str) -> dict:
        return {"type": "function", "function": {"name": name, "arguments": arguments}}

    messages = [
        {"role": "user", "content": "Find jobs in Oslo and book a call"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("searchjobs", '{"city": "Oslo"}'), call("book_call", "{}")],
        },  # fmt: skip
        {"role": "tool", "content": "3 jobs"},
        {"role": "tool", "content": "booked"},
        {"role": "assistant", "content": "Three jobs; the call is booked."},
    ]
    (session,) = list(import_sessions("openai-chat", _chat(tmp_path, "chat.json", messages)))
    path, cassette = write_session(session, tmp_path / "out")
    assert "None" not in path.read_text()
    transcript = _load_transcript(path, strict=True)
    calls = [c.id for c in transcript.entries[1].message.content if c.type == "toolCall"]
    assert [e.message.tool_call_id for e in transcript.entries[2:4]] == calls == ["call_1_0", "call_1_1"]
    bodies = [(i["request"]["uri"].rsplit("/", 1)[1], i["response"]["body"]["string"]) for i in load_cassette(cassette)]
    assert bodies == [("searchjobs", "3 jobs"), ("book_call", "booked")]
    assert any("answer the calls of the assistant message before them in order" in note for note in session.notes)
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}]
    with pytest.raises(InputError, match="follows no call left unanswered"):
        list(import_sessions("openai-chat", _chat(tmp_path, "orphan.json", orphan)))


def test_openai_chat_jsonl_gives_one_session_per_line(tmp_path):
    lines = [
        json.dumps({"messages": [{"role": "user", "content": f"hi {i}"}, {"role": "assistant", "content": "hello"}]})
        for i in range(3)
    ]
    src = _chat(tmp_path, "chats.jsonl", "\n".join(lines) + "\n")
    sessions = list(import_sessions("openai-chat", src))
    assert [s.name for s in sessions] == ["chats-0", "chats-1", "chats-2"]
    assert [s.entries[0]["message"]["content"] for s in sessions] == ["hi 0", "hi 1", "hi 2"]
    assert len({s.header["id"] for s in sessions}) == 3


@pytest.mark.parametrize("name", ["chats.jsonl", "chats.json"])
def test_openai_chat_lines_of_bare_message_lists_give_one_session_each(tmp_path, name):
    """Invariant's published agent datasets hold one list of chat messages per line, in a file
    named `.json`: each line is a conversation, and a line that is none is that line's problem."""
    lines = [
        json.dumps([{"role": "user", "content": f"hi {i}"}, {"role": "assistant", "content": "hello"}])
        for i in range(2)
    ]
    src = _chat(tmp_path, name, "\n".join([*lines, "[1, 2]"]) + "\n")
    problems: list = []
    sessions = list(import_sessions("openai-chat", src, problems=problems))
    assert [s.entries[0]["message"]["content"] for s in sessions] == ["hi 0", "hi 1"]
    assert [(p.line, p.field) for p in problems] == [(3, "messages")]
    with pytest.raises(InputError, match="is not valid JSON"):  # no JSON lines either: one bad document
        list(import_sessions("openai-chat", _chat(tmp_path, "bad.json", '[{"role": "user"\n, "x"}]\n]')))


@pytest.mark.parametrize(
    ("usage", "kept"),
    [
        ({"prompt_tokens": 120, "completion_tokens": 8}, {"input": 120, "output": 8, "totalTokens": 128}),
        ({"prompt_tokens": "120", "completion_tokens": [8]}, {"input": 120, "output": 0, "totalTokens": 120}),
        ({"prompt_tokens": "many", "completion_tokens": [8]}, None),  # counts nobody can read: left out
        ({"prompt_tokens": {"type": "text"}, "completion_tokens": 8}, {"input": 0, "output": 8, "totalTokens": 8}),
        ([120, 8], None),
    ],
)
def test_an_assistant_usage_is_kept_in_pis_shape_only_as_far_as_its_counts_are_numbers(tmp_path, usage, kept):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello", "usage": usage}]
    (session,) = list(import_sessions("openai-chat", _chat(tmp_path, "usage.json", messages)))
    message = session.entries[-1]["message"]
    assert {k: message["usage"][k] for k in kept} == kept if kept else "usage" not in message


def test_records_of_the_same_task_and_trial_become_sessions_of_their_own(tmp_path):
    """A results file that holds a task's trial twice (files joined by hand): each record is a
    session, the second named by its index, and both are written; none is lost to a name clash."""
    traj = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    records = [{"task_id": 4, "trial": 0, "reward": 1.0, "traj": traj}] * 2
    sessions = list(import_sessions("tau-bench", _chat(tmp_path, "gpt-4o-retail.json", records)))
    assert [s.name for s in sessions] == ["tau-gpt-4o-retail-task4-trial0", "tau-gpt-4o-retail-1"]
    written = [write_session(s, tmp_path / "out")[0] for s in sessions]
    assert len(set(written)) == 2 and all(path.is_file() for path in written)


def test_call_without_result_and_result_without_call_are_noted_not_invented(tmp_path):
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "zz", "content": "stray"},
    ]
    (session,) = list(import_sessions("openai-chat", _chat(tmp_path, "broken.json", messages)))
    assert session.interactions == []
    assert any("'c1'" in n and "no result" in n for n in session.notes)
    assert any("'zz'" in n and "no open call" in n for n in session.notes)
    path, _ = write_session(session, tmp_path / "out")
    codes = sorted(d.code for d in load_transcript(path).diagnostics)
    assert codes == ["missing-tool-result", "orphan-tool-result"]  # the loader sees the same defects


@pytest.mark.parametrize(
    "kind, name, content, expected",
    [
        ("tau2-bench", "bad.json", '{"simulations": [', ".json:1:"),
        ("tau2-bench", "list.json", "[1, 2]", "simulations"),
        ("tau-bench", "obj.json", '{"traj": []}', "JSON array"),
        ("tau-bench", "rec.json", '[{"task_id": 1}]', "traj"),
        ("claude-code", "cc.jsonl", '{"type": "user"}\n[1]\n', ":2"),
        (
            "claude-code",
            "msg.jsonl",
            '{"type": "user", "message": {"content": "hi"}}\n{"type": "user", "message": -1}\n',
            ".jsonl:2: error[bad-import-source] field 'message': the user record's message is int",
        ),
        (
            "claude-code",
            "content.jsonl",
            '{"type": "assistant", "message": {"id": "m", "content": 7}}\n',
            ".jsonl:1: error[bad-import-source] field 'message.content': the assistant record's message content is int",
        ),
        ("openai-chat", "chat.json", '{"foo": 1}', "expected a list of chat messages"),
        (
            "openai-chat",
            "calls.json",
            '[{"role": "assistant", "content": null, "tool_calls": 1.5}]',
            "field 'tool_calls': messages message 0 has tool_calls of type float; expected a list",
        ),
        (
            "openai-chat",
            "function.json",
            '[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": "book"}]}]',
            "messages message 0 has tool call 0 of another shape; expected an object with a 'function' object",
        ),
        (
            "tau2-bench",
            "sim.json",
            '{"simulations": [{"id": "s", "messages": [{"role": "assistant", "tool_calls": [7]}]}]}',
            "field 'simulations[0].messages[0].tool_calls': simulations[0].messages[0] has tool call 0 of another shape",
        ),
        ("openai-chat", "roles.json", '[{"role": "wizard", "content": "x"}]', "role 'wizard'"),
        (
            "openai-chat",
            "norole.json",
            '[{"role": "user", "content": "x"}, {"content": "y"}]',
            "field '[1].role': element 1 of the list has no 'role'",
        ),
        (
            "openai-chat",
            "nomessages.json",
            '[{"messages": []}, {"messages": []}, 3]',
            "field '[2].messages': element 2 of the list is of type int",
        ),
        ("pi", "notpi.jsonl", '{"type": "custom", "id": "a", "parentId": null}\n', "session header"),
        ("pi", "empty.jsonl", '{"type": "session", "id": "s", "version": 3}\n', "no session entries"),
    ],
)
def test_bad_sources_raise_input_errors_naming_the_file(tmp_path, kind, name, content, expected):
    src = _chat(tmp_path, name, content)
    with pytest.raises(InputError) as caught:
        list(import_sessions(kind, src))
    text = str(caught.value)
    assert str(src) in text and expected in text


def test_missing_source_and_existing_output_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        import_sessions("pi", tmp_path / "absent.jsonl")
    src = _chat(tmp_path, "c.json", [{"role": "user", "content": "hi"}])
    (session,) = list(import_sessions("openai-chat", src))
    write_session(session, tmp_path / "out")
    before = (tmp_path / "out" / "c.jsonl").read_bytes()
    with pytest.raises(InputError, match="already exists"):
        write_session(session, tmp_path / "out")
    assert (tmp_path / "out" / "c.jsonl").read_bytes() == before


def test_tool_classes_merge_keeps_the_mutating_class_on_conflict(tmp_path):
    update_tool_classes(tmp_path, [{"a": "read", "b": "write"}])
    merged = update_tool_classes(tmp_path, [{"a": "write", "b": "read", "c": "exec"}])
    assert merged == {"a": "write", "b": "write", "c": "exec"}
    assert json.loads((tmp_path / "tool_classes.json").read_text()) == merged


def test_mcp_annotations_of_the_recorded_tool_definitions_declare_classes(tmp_path):
    """A conversation that carries its tool definitions: MCP's `readOnlyHint` / `destructiveHint`
    declare the class (OpenAI's and MCP's definition shapes); a definition without annotations
    declares nothing (the tool's name decides, or it stays mutating); a tool_classes.json wins."""
    tools = [
        {"type": "function", "function": {"name": "lookup_room"}, "annotations": {"readOnlyHint": True}},
        {"name": "create_booking", "inputSchema": {}, "annotations": {"readOnlyHint": False}},
        {"name": "purge_cache", "annotations": {"readOnlyHint": False, "destructiveHint": True}},
        {"name": "fetch_invoice", "annotations": {"readOnlyHint": True}},
        {"type": "function", "function": {"name": "frobnicate"}},
    ]
    (tmp_path / "tool_classes.json").write_text('{"fetch_invoice": "write"}', encoding="utf-8")
    path = _chat(tmp_path, "mcp.json", {"messages": [{"role": "user", "content": "hi"}], "tools": tools})
    (session,) = import_sessions("openai-chat", path)
    assert session.tool_classes == {
        "lookup_room": "read",
        "create_booking": "write",
        "purge_cache": "write",
        "fetch_invoice": "write",
    }
    classifier = ToolClassifier(declared=session.tool_classes)
    assert (classifier.explain("lookup_room").rule, classifier.is_mutating("lookup_room")) == ("declared", False)
    assert classifier.is_mutating("frobnicate")


def test_an_openclaw_transcripts_own_problems_name_its_file_and_line(tmp_path: Path) -> None:
    """What the loader finds wrong in a transcript OpenClaw wrote is said at the line of that file
    (blank lines counted), not at a line of the importer's copy in memory."""
    lines = [
        {"type": "session", "id": "s1", "version": 3, "timestamp": "2026-02-24T10:00:00Z", "cwd": "/tmp"},
        {
            "type": "message",
            "id": "m1",
            "parentId": None,
            "timestamp": "2026-02-24T10:00:01Z",
            "message": {"role": "user", "content": "status?"},
        },  # fmt: skip
        {
            "type": "message",
            "id": "m2",
            "parentId": "gone",
            "timestamp": "2026-02-24T10:00:02Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        },  # fmt: skip
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines[:2]) + "\n\n" + json.dumps(lines[2]) + "\n")
    (session,) = import_sessions("openclaw", path)
    (note,) = [note for note in session.notes if "dangling-parent" in note]
    assert f"{path}:4: error[dangling-parent] entry m2" in note and "<memory>" not in note


def test_a_pi_entry_the_loader_cannot_read_is_written_back_as_the_source_holds_it(tmp_path: Path) -> None:
    """Not as the stand-in the loader reads (its id and link alone, not even a `type`): what it
    holds is kept, and the imported file says what is wrong with it as the source did."""
    answer = {"type": "message", "id": "a1", "parentId": "q1", "timestamp": "2026-07-20T14:02:00Z", "message": {"role": "assistant", "content": 42}}  # fmt: skip
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-07-20T14:00:00Z", "cwd": "/tmp"},
        {
            "type": "message",
            "id": "q1",
            "parentId": None,
            "timestamp": "2026-07-20T14:01:00Z",
            "message": {"role": "user", "content": "Plan it."},
        },  # fmt: skip
        answer,
    ]
    source = tmp_path / "s1.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (session,) = import_sessions("pi", source)
    assert {k: v for k, v in session.entries[-1].items() if k != "sourceId"} == answer
    written, _ = write_session(session, tmp_path / "out")
    codes = [(d.code, d.entry_id, d.field) for d in _load_transcript(written).diagnostics]
    assert codes == [("invalid-entry", "a1", "message.content")]


def test_a_pi_file_whose_every_entry_is_refused_says_why_each_line_was(tmp_path: Path) -> None:
    """Entries without ids under a version-3 header are each refused: the import names those
    lines and their field, not "no session entries" for a file that holds a dozen."""
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-07-20T14:00:00Z", "cwd": "/tmp"}]
    lines += [{"type": "message", "message": {"role": "user", "content": f"prompt {n}"}} for n in range(12)]
    source = tmp_path / "s1.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        list(import_sessions("pi", source))
    found = raised.value.diagnostics
    assert [(d.line, d.code, d.field) for d in found[:5]] == [(n, "missing-id", "id") for n in range(2, 7)]
    assert "12 lines refused" in found[-1].message and len(found) == 6


def test_a_tau2_simulation_written_on_its_own_or_in_a_list_imports(tmp_path):
    """A harness that runs τ²-bench one task at a time writes the simulation alone (or a list of
    them): it is recognised as τ²-bench's and imported as a results file holding it."""
    from replaylab.transcript.foreign import TAU2_BENCH, detect_foreign

    simulation = {
        "id": "sim-1",
        "task_id": "19",
        "termination_reason": "agent_stop",
        "reward_info": {"reward": 1.0},
        "messages": [
            {"role": "user", "content": "What is my balance?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "t1", "name": "get_balance", "arguments": {"account": "A1"}}],
            },  # fmt: skip
            {"role": "tool", "id": "t1", "content": "42.00"},
            {"role": "assistant", "content": "Your balance is 42.00."},
        ],
    }
    for name, data in (("one.json", simulation), ("many.json", [simulation, {**simulation, "id": "sim-2"}])):
        path = _chat(tmp_path, name, data)
        assert detect_foreign(path) is TAU2_BENCH
        sessions = list(import_sessions("tau2-bench", path))
        assert [s.header["source"]["simulationId"] for s in sessions] == ["sim-1", "sim-2"][: len(sessions)]
        assert sessions[0].tool_call_count() == 1
    assert len(list(import_sessions("tau2-bench", tmp_path / "many.json"))) == 2
    # statistics about simulations name how they ended, but hold no task and no messages
    stats = {"per_file": {"airline.json": {"termination_reason": {"user_stop": 50}, "messages_per_traj": {"n": 50}}}}
    assert detect_foreign(_chat(tmp_path, "stats.json", stats)) is None


@pytest.mark.parametrize("kind", [["session_meta"], {"k": 1}], ids=["list", "object"])
def test_a_first_record_whose_type_is_no_string_is_no_foreign_format(kind: Any):
    """What detection asks of a file's first record holds for a `type` of any JSON type (a list
    or an object is unhashable: asked whether it is one of Codex's types, it raised)."""
    from replaylab.transcript.foreign import detect_foreign_head

    assert detect_foreign_head(json.dumps({"type": kind, "payload": {"id": "x"}}) + "\n") is None
