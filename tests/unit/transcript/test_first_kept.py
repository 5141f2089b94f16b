"""Recorded compactions whose `firstKeptEntryId` is not an earlier entry on their own path are
reported (file, line, entry id, field), and the window is built as pi builds it for them: the
summary and what follows, nothing from before the compaction. A valid link is not reported, and
the compactions replaylab itself writes pass the check (manual mode names itself on purpose,
a warning)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.transcripts import TOOL_CLASSES, helpdesk_session
from replaylab.transcript.context import build_window
from replaylab.transcript.first_kept import check_first_kept
from replaylab.transcript.graph import check_graph
from replaylab.transcript.index import TranscriptIndex
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import SessionHeader

NAME = Path("s.jsonl")
HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def user(entry_id: str, parent: str | None) -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": {"role": "user", "content": f"text of {entry_id}"},
    }


def compaction(entry_id: str, parent: str, first_kept: object = ...) -> dict:
    entry = {"type": "compaction", "id": entry_id, "parentId": parent, "timestamp": "t", "summary": "S"}
    if first_kept is not ...:
        entry["firstKeptEntryId"] = first_kept
    return entry


def write(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [HEADER, *lines]))
    return path


#: u1 → u2 → c → u3, and an abandoned branch u1 → b1; the compaction (line 5) names ...
CASES = {
    "later": ("u3", "first-kept-later", "error"),
    "other-branch": ("b1", "first-kept-other-branch", "error"),
    "itself": ("c", "first-kept-itself", "warning"),
    "unknown": ("gone", "first-kept-unknown", "error"),
    "missing": (..., "first-kept-missing", "error"),
}


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_first_kept_entry_not_earlier_on_the_path_is_reported_and_keeps_nothing(
    tmp_path: Path, case: str, lazy: bool
) -> None:
    first_kept, code, severity = CASES[case]
    lines = [user("u1", None), user("b1", "u1"), user("u2", "u1"), compaction("c", "u2", first_kept), user("u3", "c")]
    transcript = load_transcript(write(tmp_path, lines), lazy=lazy)
    (diagnostic,) = transcript.diagnostics
    assert (diagnostic.code, diagnostic.severity) == (code, severity)
    assert (diagnostic.line, diagnostic.entry_id, diagnostic.field) == (5, "c", "firstKeptEntryId")
    assert "no message from before the compaction is kept" in diagnostic.message
    # the window says the same: the summary, then only what follows the compaction (pi's rule)
    window = build_window(transcript.leaf_path())
    assert [w.entry_id for w in window] == ["c", "u3"]


def test_a_first_kept_entry_before_the_compaction_on_its_path_is_not_reported(tmp_path: Path) -> None:
    lines = [user("u1", None), user("u2", "u1"), compaction("c1", "u2", "u2"), user("u3", "c1")]
    lines += [compaction("c2", "u3", "u2"), user("u4", "c2")]  # a second compaction may keep from further back
    transcript = load_transcript(write(tmp_path, lines), strict=True)
    assert [w.entry_id for w in build_window(transcript.leaf_path())] == ["c2", "u2", "u3", "u4"]


def test_every_compaction_on_every_branch_is_checked(tmp_path: Path) -> None:
    """A compaction on an abandoned branch is checked along its own path, not the leaf's."""
    lines = [user("u1", None), user("b1", "u1"), compaction("cb", "b1", "b1"), user("u2", "u1")]
    lines += [compaction("cu", "u2", "b1"), user("u3", "cu")]
    codes = {(d.entry_id, d.code) for d in load_transcript(write(tmp_path, lines)).diagnostics}
    assert codes == {("cu", "first-kept-other-branch")}


def compacted_helpdesk(tmp_path: Path, mode: str, tool_classes: dict[str, str]):
    """`compact()` of the helpdesk session in `mode`, into tmp_path/copy.jsonl."""
    from replaylab.compaction import CompactParams, compact

    recording = tmp_path / "rec.jsonl"
    helpdesk_session().write(recording)
    return compact(
        CompactParams(
            session_file=str(recording),
            compaction_mode=mode,
            context_tokens=4000,
            reserve_tokens_floor=500,
            keep_recent_tokens=300,
            tool_classes=tool_classes,
            working_copy=str(tmp_path / "copy.jsonl"),
            force_compact=True,
        )
    )


@pytest.mark.parametrize("mode", ["safeguard", "auto", "aggressive", "manual"])
def test_the_compactions_replaylab_writes_pass_the_check(tmp_path: Path, mode: str) -> None:
    result = compacted_helpdesk(tmp_path, mode, TOOL_CLASSES)
    assert result.success, result.error
    codes = [d.code for d in load_transcript(tmp_path / "copy.jsonl").diagnostics]
    names_itself = result.first_kept_entry_id == result.compaction_event_id
    # manual names its own id; so does safeguard when it restates the protected entries of the
    # summarized part after itself (pi shows what follows a compaction): this session writes before the cut
    if mode in ("safeguard", "manual"):
        assert result.protected_entry_ids and names_itself
    assert codes == (["first-kept-itself"] if names_itself else [])


def test_a_manual_compaction_with_nothing_protected_names_itself_and_the_check_says_so(tmp_path: Path) -> None:
    every_tool_reads = dict.fromkeys(TOOL_CLASSES, "read")
    result = compacted_helpdesk(tmp_path, "manual", every_tool_reads)
    assert result.success, result.error
    assert result.protected_entry_ids == [] and result.first_kept_entry_id == result.compaction_event_id
    codes = [d.code for d in load_transcript(tmp_path / "copy.jsonl").diagnostics]
    assert codes == ["first-kept-itself"]


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.integers(1, 40), st.integers(0, 6), st.randoms(use_true_random=False))
def test_the_check_along_the_leaf_path_finds_what_the_walk_of_the_whole_tree_finds(
    entries: int, compactions: int, rng: random.Random
) -> None:
    """The load hands the check its leaf path, so that only the compared entries off it are walked
    up; on any tree (abandoned branches, several roots, dangling parents, an empty id, cycles as
    the graph check cuts them) it must report exactly what the walk of the whole tree reports."""
    ids = [f"e{i}" for i in range(entries)]
    if rng.random() < 0.2:
        ids[rng.randrange(entries)] = ""  # pi's path stops at an empty parent id; the tree does not
    index = TranscriptIndex(path=None, header=SessionHeader(id="s"), diagnostics=[])
    for line, entry_id in enumerate(ids, start=2):
        index.ids.append(entry_id)
        index.line_of[entry_id] = line
        index.parent_of[entry_id] = rng.choice([None, "gone", "", *ids])
    check_graph(index, NAME)
    named = [None, "gone", *ids]
    first_kept = {rng.choice(ids): rng.choice(named) for _ in range(compactions)}
    whole_tree = check_first_kept(index, first_kept, NAME)
    assert check_first_kept(index, first_kept, NAME, index.leaf_path_ids()) == whole_tree
