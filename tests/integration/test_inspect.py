"""`replaylab inspect` as a user runs it: a subprocess, its exit status, its text and its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from builders.version3_navigation import no_parent_key, session_bytes
from replaylab.replay.loop import window_tokens
from replaylab.safety import ToolClassifier, build_ledger
from replaylab.transcript.context import build_window
from replaylab.transcript.load import load_transcript
from replaylab.transcript.writer import file_sha256


def inspect(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def session_lines(with_problem: bool = False) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "sess-1", "timestamp": "t", "cwd": "/work/x"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": "book it" * 10},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "t",
            "message": {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [
                    {"type": "toolCall", "id": "call_r", "name": "get_flight", "arguments": {"id": "F1"}},
                    {"type": "toolCall", "id": "call_w", "name": "book_flight", "arguments": {"id": "F1"}},
                ],
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a1",
            "timestamp": "t",
            "message": {"role": "toolResult", "toolCallId": "call_r", "content": [{"type": "text", "text": "F1 free"}]},
        },
        {
            "type": "message",
            "id": "r2",
            "parentId": "r1",
            "timestamp": "t",
            "message": {"role": "toolResult", "toolCallId": "call_w", "content": [{"type": "text", "text": "booked"}]},
        },
        {
            "type": "message",
            "id": "x1",
            "parentId": "u1",
            "timestamp": "t",  # abandoned branch
            "message": {"role": "assistant", "content": [{"type": "text", "text": "old"}], "stopReason": "stop"},
        },
        {
            "type": "message",
            "id": "a2",
            "parentId": "r2",
            "timestamp": "t",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "stopReason": "stop"},
        },
    ]
    if with_problem:
        lines[-1]["parentId"] = "missing-parent"
    return lines


def write(path: Path, lines: list[dict[str, Any]], classes: dict[str, str] | None = None) -> Path:
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    if classes is not None:
        (path.parent / "tool_classes.json").write_text(json.dumps(classes))
    return path


CLASSES = {"get_flight": "read", "book_flight": "write"}


def test_clean_file_exits_0_with_a_readable_block(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", session_lines(), CLASSES)
    done = inspect(path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"== {path}" in out
    assert "sess-1" in out and "version 3" in out and "/work/x" in out
    assert "entries      6  (leaf path 5, abandoned 1)" in out
    assert "abandoned    x1" in out
    assert "book_flight (write)" in out and "call_w" in out and "entry a1 → r2" in out
    assert "read 1, write 1*" in out and str(path.parent / "tool_classes.json") in out
    assert "replaySafe   false  (1 mutating events)" in out
    assert "diagnostics  none" in out


def test_a_folder_is_the_transcripts_under_it_each_with_the_classes_beside_it(tmp_path: Path) -> None:
    """`replaylab inspect imported/` after an import: every transcript under the folder, sub-folders
    included, in order, each classified by its own folder's tool_classes.json; a session in another
    tool's format among them is named with its import command; files that are neither are left out."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a" / "s.jsonl", session_lines(), CLASSES)
    second = write(tmp_path / "b" / "t.jsonl", session_lines(), {"get_flight": "read", "book_flight": "read"})
    foreign = tmp_path / "b" / "results.json"
    foreign.write_text(json.dumps({"timestamp": "t", "info": {}, "tasks": [], "simulations": []}))
    (tmp_path / "b" / "notes.json").write_text("{}")
    done = inspect(tmp_path, "--json")
    reports = json.loads(done.stdout)
    assert [r["file"] for r in reports] == [str(first), str(foreign), str(second)]
    assert reports[0]["replaySafe"] is False and reports[2]["replaySafe"] is True
    assert "replaylab import --from tau2-bench" in json.dumps(reports[1])
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = inspect(empty)
    assert refused.returncode == 2 and "no-transcripts" in refused.stderr and str(empty) in refused.stderr


def test_json_output_holds_every_field(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", session_lines(), CLASSES)
    done = inspect(path, "--json")
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    transcript = load_transcript(path)
    window = build_window(transcript.leaf_path())
    assert report["file"] == str(path)
    assert report["header"] == {"id": "sess-1", "version": 3, "cwd": "/work/x"}
    assert report["entries"] == 6 and report["leafPathLength"] == 5
    assert report["abandonedEntryIds"] == ["x1"]
    assert report["contextTokens"] == window_tokens(window) > 0
    assert report["recordedUsage"] is None  # no assistant reply here records usage
    assert report["toolCallsByClass"] == {"read": 1, "write": 1}
    assert report["mutatedEventIds"] == ["call_w"]
    event = report["mutatingEvents"][0]
    assert (event["eventId"], event["entryId"], event["resultEntryId"], event["tool"], event["toolClass"]) == (
        "call_w",
        "a1",
        "r2",
        "book_flight",
        "write",
    )
    assert report["unsafeEntryIds"] == ["a1", "r2"]
    assert report["replaySafe"] is False
    assert report["diagnostics"] == []


def test_a_safeguard_working_copy_shows_its_restated_entries_as_the_recorded_events(tmp_path: Path) -> None:
    """After a safeguard compaction that restates the booking: the ledger is the recording's (the
    same event, once), the event says where it is restated, and a claim whose bytes differ is named."""
    lines = session_lines()
    recorded = {line["id"]: line for line in lines[1:]}
    lines.append(
        {
            "type": "compaction",
            "id": "cmp",
            "parentId": "a2",
            "timestamp": "t",
            "summary": "S",
            "firstKeptEntryId": "cmp",
        }
    )
    parent = "cmp"
    for source in ("a1", "r1", "r2"):
        lines.append({**recorded[source], "id": f"{source}-again", "parentId": parent, "restates": source})
        parent = f"{source}-again"
    forged = {**recorded["a2"], "id": "a2-again", "parentId": parent, "restates": "a2"}
    lines.append({**forged, "message": {**forged["message"], "content": [{"type": "text", "text": "Not done."}]}})
    path = write(tmp_path / "copy.jsonl", lines, CLASSES)
    (report,) = json.loads(inspect(path, "--json").stdout)
    assert report["mutatedEventIds"] == ["call_w"] and report["mutatingEvents"][0]["entryId"] == "a1"
    assert report["restatedEntries"] == [
        {"entryId": f"{source}-again", "restates": source, "truncated": False} for source in ("a1", "r1", "r2")
    ]
    assert report["unverifiedRestatements"] == [{"entryId": "a2-again", "restates": "a2"}]
    out = inspect(path).stdout
    assert "entry a1 → r2  restated as a1-again, r2-again" in out
    assert "restated     3 entries restate an earlier entry after a compaction" in out
    assert "not restated entry a2-again names 'a2'" in out


def test_classification_defaults_to_openclaw_rules_and_the_option_wins(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", session_lines())  # no tool_classes.json: by the evidence there is
    (report,) = json.loads(inspect(path, "--json").stdout)
    assert report["mutatedEventIds"] == ["call_w"]  # get_flight reads by its name; book_flight has no evidence
    assert report["toolCallsByClass"] == {"read": 1, "unknown": 1}
    assert report["classesFrom"].startswith("evidence:")
    classes = tmp_path / "elsewhere.json"
    classes.write_text(json.dumps({"get_flight": "read", "book_flight": "read"}))
    (report,) = json.loads(inspect(path, "--json", "--tool-classes", classes).stdout)
    assert report["replaySafe"] is True and report["mutatedEventIds"] == []


def test_diagnostics_exit_1_and_are_printed(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", session_lines())
    bad = write(tmp_path / "bad.jsonl", session_lines(with_problem=True))
    done = inspect(good, bad)
    assert done.returncode == 1
    assert f"{bad}:7: error[dangling-parent] entry a2 field 'parentId'" in done.stdout
    assert done.stdout.count("== ") == 2
    (_, report) = json.loads(inspect(good, bad, "--json").stdout)
    assert [d["code"] for d in report["diagnostics"]] == ["dangling-parent"]
    assert report["diagnostics"][0]["line"] == 7 and report["diagnostics"][0]["text"].startswith(f"{bad}:7:")


@pytest.mark.parametrize(
    "make_args",
    [
        lambda tmp: [tmp / "absent.jsonl"],
        lambda tmp: [tmp],
        lambda tmp: [write(tmp / "s.jsonl", session_lines()), "--no-such-option"],
        lambda tmp: [],
        lambda tmp: [write(tmp / "s.jsonl", session_lines()), "--tool-classes", tmp / "absent.json"],
        lambda tmp: [write(tmp / "s.jsonl", session_lines()), "--tools", "no_such_pack_module"],
    ],
    ids=["missing-file", "directory", "unknown-option", "no-file", "missing-classes", "bad-tool-pack"],
)
def test_usage_errors_exit_2_without_traceback(tmp_path: Path, make_args) -> None:
    done = inspect(*make_args(tmp_path))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.strip()
    assert done.stdout == ""


def test_bad_tool_classes_file_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", session_lines())
    (tmp_path / "tool_classes.json").write_text("[1, 2")
    done = inspect(path)
    assert done.returncode == 2
    assert str(tmp_path / "tool_classes.json") in done.stderr and "bad-tool-classes" in done.stderr


def test_strict_rejects_a_file_with_problems(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", session_lines())
    bad = write(tmp_path / "bad.jsonl", session_lines(with_problem=True))
    done = inspect("--strict", good, bad)
    assert done.returncode == 2
    assert f"{bad}:7: error[dangling-parent]" in done.stderr
    assert f"== {good}" in done.stdout and f"== {bad}" not in done.stdout
    assert inspect("--strict", good).returncode == 0


@pytest.mark.realdata
def test_largest_real_transcript(shared_data: Path) -> None:
    """pi-before-compaction.jsonl (2.37 MB) is the largest real pi/OpenClaw transcript in the data."""
    path = shared_data / "openclaw-fixtures" / "pi-before-compaction.jsonl"
    before = file_sha256(path)
    done = inspect(path, "--json")
    assert done.returncode == 1  # one bash call has no result before the compaction on line 629
    (report,) = json.loads(done.stdout)
    assert report["header"]["version"] is None and report["sourceVersion"] == 1
    assert report["entries"] == 1002 and report["leafPathLength"] == 1002 and report["abandonedEntryIds"] == []
    # 7 of the 205 bash calls are read-only commands OpenClaw exempts (ls, grep, sed -n Np …), 72 more
    # the read-only shell grammar reads (`cd repo && git status`, `grep … | head`, `npx tsgo --noEmit` …)
    assert report["toolCallsByClass"] == {"exec": 126, "read": 183, "write": 140}
    assert len(report["mutatedEventIds"]) == 266 and report["replaySafe"] is False
    ledger = build_ledger(load_transcript(path), ToolClassifier())
    assert report["mutatedEventIds"] == ledger.mutated_event_ids
    assert [d["line"] for d in report["diagnostics"]] == [628]
    assert report["diagnostics"][0]["code"] == "missing-tool-result"
    assert 0 < report["contextTokens"] < 200_000
    assert file_sha256(path) == before
    text = inspect(path)
    assert text.returncode == 1 and f"{path}:628: error[missing-tool-result]" in text.stdout


@pytest.mark.parametrize(("agent", "leaf_path"), [("openclaw@2026.9.6", 3), ("pi@1.6.0", 1)])
def test_a_version3_file_is_read_into_the_tree_of_the_agent_whose_rules_apply(
    tmp_path: Path, agent: str, leaf_path: int
) -> None:
    """An entry with no `parentId` continues from OpenClaw's leaf (it migrates no version-3 file);
    pi reads it as a root."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(no_parent_key()))
    done = inspect(path, "--json", "--agent", agent)
    assert done.returncode in (0, 1), done.stderr
    (report,) = json.loads(done.stdout)
    assert report["agent"] == agent and report["leafPathLength"] == leaf_path
