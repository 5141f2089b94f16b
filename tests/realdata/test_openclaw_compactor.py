"""OpenClaw 2026.9.6's own compaction (`compactor: openclaw`) on two real OpenClaw sessions of
../shared/data (openclaw-fixtures: one plain, one that holds a compaction already; imported into a
scratch folder here, the originals are only read), against replaylab's safeguard on the same
scenario (the real-session sweep's): every
OpenClaw compaction succeeds, the window OpenClaw rebuilt is the one replaylab builds from the
working copy, and replaylab finds the writes OpenClaw summarizes away, which its own safeguard
keeps. The same comparison over every real session: `python -m bench.openclaw_compaction --shared
../shared/data` (its figures are in the README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.openclaw_compaction import compare_one
from replaylab.importers import import_sessions, write_session

pytestmark = pytest.mark.realdata


def test_openclaw_compacts_the_real_sessions_and_drops_the_writes_replaylabs_safeguard_keeps(
    shared_data: Path, openclaw: None, tmp_path: Path
) -> None:
    for session in import_sessions("pi", shared_data / "openclaw-fixtures"):
        write_session(session, tmp_path)
    paths = [tmp_path / f"{name}.jsonl" for name in ("pi-session", "pi-compact")]
    rows = [compare_one(("pi", str(path), None)) for path in paths]
    for row in rows:
        assert set(row.compactions) == {"compacted"} and row.windows_equal == row.windows_checked >= 1, row
        assert row.ours_codes.get("MUTATION_DROPPED", 0) == 0, row
        assert row.openclaw_codes.get("MUTATION_DROPPED", 0) > 0 and row.openclaw == "failed", row
