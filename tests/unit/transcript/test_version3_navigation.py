"""A version-3 file's tree under each agent's navigation (`load_transcript(navigation=...)`).

OpenClaw 2026.9 does not migrate a version-3 file (`migrateToCurrentVersion`): its schema sorts the
entries and its navigation places them as a version-4 file's (`SessionManager.buildIndex`), so under
its profile an entry with no `parentId` key continues from the leaf and an entry written to a record
its schema keeps aside continues from the leaf too. pi's `getBranch` walks the links as written:
under pi's profiles the same file is read as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders.version3_navigation import CASES, entry, no_parent_key, session_bytes
from replaylab.transcript import TranscriptWriter, load_transcript, loads_transcript
from replaylab.transcript.writer import file_sha256
from replaylab.upstream.profiles import profile_named


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_version3_file_is_read_with_the_profiles_navigation(tmp_path: Path, case: str, lazy: bool) -> None:
    build, openclaw, pi = CASES[case]
    data = session_bytes(build())
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    for name, expected in (("openclaw@2026.9.6", openclaw), ("pi@1.6.0", pi), ("pi@0.73.1", pi)):
        navigation = profile_named(name).navigation
        for transcript in (
            load_transcript(path, lazy=lazy, navigation=navigation),
            loads_transcript(data, lazy=lazy, navigation=navigation),
        ):
            assert [e.id for e in transcript.leaf_path()] == expected, name
    assert [e.id for e in load_transcript(path, lazy=lazy).leaf_path()] == pi  # pi's by default


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_version4_file_is_read_with_openclaws_navigation_unless_pi_reads_it(case: str) -> None:
    """With no agent named a version-4 file is OpenClaw's own; pi walks its links as written, as it
    walks any file's (its `getBranch`: tests/oracles/test_version3_navigation_conformance.py)."""
    build, openclaw, pi = CASES[case]
    data = session_bytes(build(), version=4)
    for navigation in (None, "openclaw"):
        assert [e.id for e in loads_transcript(data, navigation=navigation).leaf_path()] == openclaw
    assert [e.id for e in loads_transcript(data, navigation="pi").leaf_path()] == pi


@pytest.mark.parametrize(
    "version",
    [None, 2, "2", True],
    ids=["none", "two", "two-as-text", "boolean"],
)
def test_a_file_openclaw_migrates_keeps_pis_links(version: object) -> None:
    """A version OpenClaw migrates (`version ?? 1` below 3) is no file its navigation reads as its own."""
    data = session_bytes(no_parent_key(), version=version)
    ours = [e.id for e in loads_transcript(data, navigation="openclaw").leaf_path()]
    assert ours == [e.id for e in loads_transcript(data).leaf_path()]


def test_a_version_openclaw_compares_as_three_or_more_is_navigated() -> None:
    for version in ("3", 3.5, 5):
        data = session_bytes(no_parent_key(), version=version)
        assert [e.id for e in loads_transcript(data, navigation="openclaw").leaf_path()] == ["u1", "a1", "u2"], version


@pytest.mark.parametrize("navigation", ["pi", "openclaw"])
@pytest.mark.parametrize("mirrored", [True, False], ids=["from-the-parse", "parsed-again"])
def test_a_working_copy_is_read_with_its_recordings_navigation(tmp_path: Path, navigation: str, mirrored: bool) -> None:
    """The writer of a working copy reads every append, and parses the copy again, with the
    navigation its recording was read with: the item's tree stays one agent's."""
    recording = tmp_path / "s.jsonl"
    recording.write_bytes(session_bytes(no_parent_key()))
    parsed = load_transcript(recording, navigation=navigation)  # type: ignore[arg-type]
    writer = TranscriptWriter.working_copy(
        recording,
        tmp_path / "copy" / "s.jsonl",
        parsed=parsed,
        parsed_sha256=file_sha256(recording) if mirrored else None,
    )
    appended = entry("a2", None)
    del appended["parentId"]
    writer.append(appended)
    expected = ["u1", "a1", "u2", "a2"] if navigation == "openclaw" else ["a2"]
    assert [e.id for e in writer.transcript().leaf_path()] == expected
    assert [e.id for e in load_transcript(writer.path, navigation=navigation).leaf_path()] == expected  # type: ignore[arg-type]
