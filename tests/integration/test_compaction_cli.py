"""`replaylab compact FILE`: output, exit status, and the input file left untouched."""

from __future__ import annotations

import itertools
import json

import pytest

from builders.transcripts import TOOL_CLASSES, helpdesk_session
from replaylab.cli import main
from replaylab.transcript import file_sha256, load_transcript

OPTIONS = [
    "--context-tokens",
    "6000",
    "--reserve-tokens-floor",
    "1000",
    "--keep-recent-tokens",
    "800",
    "--tool-classes",
    json.dumps(TOOL_CLASSES),
]


@pytest.fixture
def recording(tmp_path):
    return helpdesk_session(8).write(tmp_path / "rec.jsonl")


def test_json_output_is_the_compact_result_in_camel_case(recording, tmp_path, capsys):
    before = file_sha256(recording)
    code = main(["compact", str(recording), "--json", "--out", str(tmp_path / "copy.jsonl"), *OPTIONS])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["success"] is True and data["findings"] == []
    assert data["workingCopy"] == str(tmp_path / "copy.jsonl") and data["compactionEventId"]
    assert {
        "originalTokenCount",
        "compactedTokenCount",
        "tokenSaved",
        "replaySafe",
        "mutatedEventIds",
        "compactedWindow",
        "summaryText",
        "protectedEntryIds",
        "cutPoint",
    } <= set(data)
    assert file_sha256(recording) == before
    copy = load_transcript(tmp_path / "copy.jsonl")
    # the compaction keeps nothing itself and restates the protected entries and the tail after it
    assert copy.leaf_id == data["leafId"] == data["compactedWindow"][-1]["entryId"]
    assert copy.by_id[data["compactionEventId"]].first_kept_entry_id == data["compactionEventId"]


def test_text_output(recording, capsys):
    assert main(["compact", str(recording), "--json", *OPTIONS]) == 0
    data = json.loads(capsys.readouterr().out)
    code = main(["compact", str(recording), *OPTIONS])
    out = capsys.readouterr().out
    assert code == 0
    for needle in (
        "tokens: 1972 →",
        f"cut point: the compaction keeps nothing itself; it restates {len(data['compactedWindow']) - 1} entries",
        f"compaction entry: {data['compactionEventId']}   leaf: {data['leafId']}",
        f"protected entries kept verbatim: {len(data['protectedEntryIds'])}",
        "quality guard: ok",
        "findings (0):",
        "## Decisions",
        "working copy:",
    ):
        assert needle in out
    after = out.split("protected entries kept verbatim:")[1].splitlines()[1:]
    listed = [line.split()[:3] for line in itertools.takewhile(lambda line: line.startswith("  "), after)]
    copies = {w["entryId"]: w["restates"] for w in data["compactedWindow"][1:]}
    assert [(copies[entry_id], source) for entry_id, _, source in listed] == [
        (i, f"{i})") for i in data["protectedEntryIds"]
    ]
    assert len(listed) == 12 and all(word == "(restates" for _, word, _ in listed)
    assert "shrunk" not in out  # nothing shortens a protected payload


def test_negative_control_exits_1_with_findings(recording, capsys):
    code = main(["compact", str(recording), "--mode", "auto", *OPTIONS])
    out = capsys.readouterr().out
    assert code == 1 and "[blocking] MUTATION_DROPPED" in out


def test_failed_compaction_exits_1_and_names_the_reason(recording, capsys):
    code = main(
        [
            "compact",
            str(recording),
            "--context-tokens",
            "1600",
            "--reserve-tokens-floor",
            "1000",
            "--tool-classes",
            json.dumps(TOOL_CLASSES),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and "compaction failed (safeguard): compaction_failure:" in out and "nothing appended" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["missing.jsonl"], "no such file"),
        (["{rec}", "--tool-classes", "{{not json"], "does not parse"),
        (["{rec}", "--leaf", "nope"], "leafId"),
        (["{rec}", "--context-tokens", "0"], "field '--context-tokens': Input should be greater than 0 (got 0)"),
        # pi's default reserve (20,000) would leave a negative budget: refused before anything runs
        (
            ["{rec}", "--context-tokens", "3000"],
            "field '--context-tokens': contextTokens 3,000 leaves no budget after reserveTokensFloor 20,000",
        ),
    ],
)
def test_usage_errors_exit_2_with_a_diagnostic(recording, tmp_path, capsys, args, needle):
    argv = ["compact", *[a.format(rec=recording) for a in args]]
    if argv[1] == "missing.jsonl":
        argv[1] = str(tmp_path / "missing.jsonl")
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_existing_out_is_refused(recording, tmp_path, capsys):
    (tmp_path / "copy.jsonl").write_text("keep me")
    assert main(["compact", str(recording), "--out", str(tmp_path / "copy.jsonl")]) == 2
    assert "must not exist" in capsys.readouterr().err and (tmp_path / "copy.jsonl").read_text() == "keep me"


def test_without_out_the_working_copy_is_removed(recording, tmp_path, capsys, monkeypatch):
    """No `--out`: the copy lives in a temporary folder that the command removes, and the output
    says it was not kept instead of naming a file that will not exist."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(
        [
            "compact",
            str(recording),
            "--json",
            "--mode",
            "auto",
            "--context-tokens",
            "2000",
            "--reserve-tokens-floor",
            "200",
            "--keep-recent-tokens",
            "300",
        ]
    ) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert data["success"] is True and data["workingCopy"] is None
    assert "the working copy was not kept: pass --out COPY to keep it" in data["notes"]
    assert list(scratch.iterdir()) == []  # nothing left behind


def test_under_openclaw_2026_9_6_the_reserve_is_a_quarter_of_a_small_window_whatever_the_floor(recording, capsys):
    """OpenClaw 2026.9.6 retired reserveTokensFloor: its compaction keeps the least of 20,000 and a
    quarter of contextTokens, so a window pi's default floor would use up compacts, and a floor
    given is not read; pi's profile still refuses it."""
    small = ["--context-tokens", "3000", "--keep-recent-tokens", "800", "--tool-classes", json.dumps(TOOL_CLASSES)]
    for floor in ([], ["--reserve-tokens-floor", "100"]):
        code = main(["compact", str(recording), "--json", "--agent", "openclaw@2026.9.6", *small, *floor])
        data = json.loads(capsys.readouterr().out)
        assert code == 0 and data["budgetTokens"] == 3_000 - 750, data.get("error")
    assert main(["compact", str(recording), "--agent", "pi@0.73.1", *small]) == 2
    assert "leaves no budget after reserveTokensFloor 20,000" in capsys.readouterr().err
