"""A version-3 file against each agent's own code under its profile's navigation: OpenClaw 2026.9.6
reads the hand-written sessions of `builders.version3_navigation` as a version-4 file (its load
migrates no version-3 file), pi walks their links as written; replaylab, loading each with the
profile's navigation (`agent_conformance.compare_file`), gives the same windows and cuts. OpenClaw is
also asked about the other headers it navigates alike (a version it compares as 3, none at all, 4),
and pi about a version-4 file, whose links it walks as written too (it checks no version above its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_conformance import KEEPS, Tally, compare_file
from builders.version3_navigation import CASES, session_bytes
from replaylab.upstream.profiles import profiles


@pytest.mark.parametrize(
    ("name", "version"),
    [(name, 3) for name in sorted(profiles())]
    + [("openclaw@2026.9.6", version) for version in (4, "3", None)]
    + [(name, 4) for name in sorted(profiles()) if name.startswith("pi@")],
    ids=lambda value: repr(value),
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_version3_file_is_read_as_the_agent_navigates_it(
    name: str, case: str, version: object, agent_oracles, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(CASES[case][0](), version=version))
    tally = Tally()
    compare_file(agent_oracles(name), path, tally, KEEPS)
    assert tally.counts["files"] == 1
    assert not tally.differences(), tally.note()
