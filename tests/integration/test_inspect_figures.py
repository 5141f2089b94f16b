"""`replaylab inspect`'s token figures and its refusal of other tools' formats, on the real files.

The context figure must be the number compaction triggers on (`window_tokens` of the leaf
window, which `replaylab compact` reports as its tokens before); the recorded usage is shown
beside it as the model's own count. A Claude Code session or a τ / τ²-bench results file gets
no replaySafe verdict but the `replaylab import` command that converts it — and that command runs.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replaylab.compaction import CompactParams, compact
from replaylab.diagnostics import InputError
from replaylab.importers import KINDS
from replaylab.replay.loop import window_tokens
from replaylab.suite import load_suite
from replaylab.transcript.context import build_window
from replaylab.transcript.foreign import FORMATS, HEAD_BYTES, detect_foreign, detect_foreign_head
from replaylab.transcript.load import load_transcript


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replaylab.cli", *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def inspect_json(path: Path) -> dict[str, Any]:
    done = run_cli("inspect", "--json", path)
    assert done.returncode in (0, 1), done.stderr
    (report,) = json.loads(done.stdout)
    return report


# ---------------------------------------------------------------- item 2: one token figure


def test_pi_session_context_is_the_figure_compaction_uses(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "openclaw-fixtures" / "pi-session.jsonl"
    report = inspect_json(source)
    transcript = load_transcript(source)
    assert report["contextTokens"] == window_tokens(build_window(transcript.leaf_path()))
    copy = tmp_path / "pi-session.jsonl"
    shutil.copyfile(source, copy)
    result = compact(CompactParams(sessionFile=str(copy), contextTokens=20_000, reserveTokensFloor=2_000))
    assert report["contextTokens"] == result.original_token_count
    # the last reply's usage counts the whole request (its cache write alone is 185,942)
    assert report["recordedUsage"]["tokens"] == 186_045 > report["contextTokens"]
    replies = [e.id for e in transcript.leaf_path() if getattr(getattr(e, "message", None), "role", "") == "assistant"]
    assert report["recordedUsage"]["entryId"] == replies[-1]

    text = run_cli("inspect", source).stdout
    assert f"context      ~{report['contextTokens']:,} tokens over" in text
    assert "what compaction triggers on" in text
    assert "recorded     186,045 tokens of usage (the model's count at entry" in text
    assert "pi chars/4 estimate)" not in text  # the old label on the usage figure


def _session(tmp_path: Path, replies: list[dict[str, Any]]) -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": "x"},
        },
    ]
    parent = "u1"
    for index, reply in enumerate(replies):
        entry_id = f"a{index}"
        message = {"role": "assistant", "content": [{"type": "text", "text": "y" * 40}], **reply}
        lines.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t", "message": message})
        parent = entry_id
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_recorded_usage_is_pis_last_usable_reply_and_never_the_context(tmp_path: Path) -> None:
    path = _session(
        tmp_path,
        [
            {"stopReason": "stop", "usage": {"totalTokens": 90_000}},
            {"stopReason": "aborted", "usage": {"totalTokens": 5}},  # pi takes no usage from an aborted reply
        ],
    )
    report = inspect_json(path)
    assert report["recordedUsage"] == {"tokens": 90_000, "entryId": "a0"}
    assert report["contextTokens"] == window_tokens(build_window(load_transcript(path).leaf_path())) < 100


def test_a_reply_whose_usage_is_all_zero_is_shown_as_no_usage(tmp_path: Path) -> None:
    """A provider that reports no usage writes every count 0: that is no count of the model's."""
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    path = _session(tmp_path, [{"stopReason": "stop", "usage": zero}])
    text = run_cli("inspect", path).stdout
    assert "recorded     no usage (the last assistant reply, entry a0, reports every count 0" in text
    assert "tokens of usage" not in text


# ---------------------------------------------------------------- item 5: foreign formats


def _foreign_files(shared_data: Path) -> list[tuple[Path, str]]:
    claude = sorted((shared_data / "claude-code-spotter" / "sessions").glob("*.jsonl"))
    tau2 = sorted((shared_data / "tau2-bench").glob("*/*_1trials.json"))
    tau = [shared_data / "tau-bench" / "airline" / "gpt-4o-airline.json"]
    return [(p, "claude-code") for p in claude] + [(p, "tau2-bench") for p in tau2] + [(p, "tau-bench") for p in tau]


def test_every_real_foreign_file_is_named_with_its_import_and_no_verdict(shared_data: Path) -> None:
    files = _foreign_files(shared_data)
    assert len(files) >= 10
    done = run_cli("inspect", *(p for p, _ in files))
    assert done.returncode == 1, done.stderr
    assert "replaySafe" not in done.stdout and "mutating" not in done.stdout
    for path, kind in files:
        assert f"run `replaylab import --from {kind} {shlex.quote(str(path))} --out imported`" in done.stdout
    assert "this is a Claude Code session" in done.stdout and "this is a τ²-bench results file" in done.stdout
    reports = json.loads(run_cli("inspect", "--json", *(p for p, _ in files)).stdout)
    assert [r["foreignFormat"] for r in reports] == [kind for _, kind in files]
    assert all("replaySafe" not in r and [d["code"] for d in r["diagnostics"]] == ["foreign-format"] for r in reports)
    strict = run_cli("inspect", "--strict", files[0][0])
    assert strict.returncode == 2 and "error[foreign-format]" in strict.stderr


@pytest.mark.parametrize("kind", ["claude-code", "tau2-bench"])
def test_the_suggested_import_runs_and_its_output_inspects(shared_data: Path, tmp_path: Path, kind: str) -> None:
    path = min((p for p, k in _foreign_files(shared_data) if k == kind), key=lambda p: p.stat().st_size)
    report = inspect_json(path)
    argv = shlex.split(report["importCommand"])
    assert argv[:3] == ["replaylab", "import", "--from"]
    done = run_cli(*argv[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted((tmp_path / "imported").glob("*.jsonl"))
    assert written and all(detect_foreign(p) is None for p in written)
    assert "replaySafe" in inspect_json(written[0])


def test_pi_transcripts_are_not_foreign(shared_data: Path, repo_root: Path) -> None:
    pi = list((shared_data / "openclaw-fixtures").glob("*.jsonl"))
    bundled = [p for p in (repo_root / "tests").rglob("*.jsonl") if p.stat().st_size]
    assert pi and bundled
    assert [p for p in pi + bundled if detect_foreign(p) is not None] == []


def test_detection_reads_only_the_head() -> None:
    record = {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s", "message": {}}
    head = (json.dumps(record) + "\n" + "x" * (2 * HEAD_BYTES))[:HEAD_BYTES]
    assert detect_foreign_head(head) is not None and detect_foreign_head(head).kind == "claude-code"
    assert detect_foreign_head('{"type": "session", "version": 3, "id": "s"}\n') is None
    assert detect_foreign_head('[\n  {\n    "task_id": 0,\n    "reward": 1.0,') is not None
    assert detect_foreign_head('{"timestamp": "t", "info": {"agent_info": {}}') is not None


def test_a_file_is_detected_as_its_whole_head_reads(tmp_path: Path) -> None:
    """`detect_foreign` decodes and searches no more than a pi header's first line when the
    file starts with one: its answer is still `detect_foreign_head` of the whole decoded head,
    for heads of every kind, with blank lines, lines cut off by the end, split UTF-8 sequences."""
    import random

    lines = [
        '{"type": "session", "version": 3, "id": "s"}',
        '{"type": "user", "uuid": "u", "parentUuid": null, "sessionId": "s", "message": {}}',
        '{"tasks": [], "simulations": [], "info": {"agent_info": {}}}',
        '[{"task_id": 0, "reward": 1.0, "traj": []}]',
        "",
        "   ",
        "not json",
        "[1, 2]",
        '"é日本"',
        '{"type": "session"}',
    ]
    rnd = random.Random(7)
    path, kinds = tmp_path / "head.jsonl", set()
    for _ in range(3000):
        data = "\n".join(rnd.choice(lines) for _ in range(rnd.randint(0, 8)))
        raw = (data + "\n" * rnd.randint(0, 1)).encode()
        raw = raw[: rnd.randint(0, len(raw))] if rnd.random() < 0.3 else raw
        path.write_bytes(raw)
        found = detect_foreign(path)
        assert found == detect_foreign_head(raw[:HEAD_BYTES].decode("utf-8", errors="replace")), raw
        kinds.add(found.kind if found else None)
    assert kinds == {None, "claude-code", "tau2-bench", "tau-bench"}


def test_detected_kinds_are_import_kinds() -> None:
    assert {f.kind for f in FORMATS} <= set(KINDS)


def test_repeated_diagnostics_are_capped_in_text_not_in_json(tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    header = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"})
    path.write_text(header + "\n" + "not json\n" * 50)
    done = run_cli("inspect", path)
    assert done.returncode == 1
    shown = [line for line in done.stdout.splitlines() if "error[invalid-json]" in line]
    assert len(shown) == 20
    assert "    … 30 more invalid-json" in done.stdout.splitlines()
    assert len(inspect_json(path)["diagnostics"]) == 50


def test_suite_loader_names_a_claude_code_recording(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "claude-code-spotter" / "sessions" / "short.jsonl"
    (tmp_path / "rec").mkdir()
    shutil.copyfile(source, tmp_path / "rec" / "short.jsonl")
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nrecordings: rec/*.jsonl\nmodel: replay\n")
    with pytest.raises(InputError) as caught:
        load_suite(suite)
    (problem,) = caught.value.diagnostics
    assert problem.code == "foreign-format" and problem.line == 2
    assert "this is a Claude Code session" in problem.message
    assert "replaylab import --from claude-code" in problem.message
