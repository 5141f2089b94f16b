"""The agents-cut bench rows compare the same work: replaylab's load + cut (`replaylab_cut`) and
each pinned agent's own load + `prepareCompaction` (`time_cut.mjs`, in node) pick the same first
kept entry — or refuse alike — on the files the rows time (a generated session, the real pi
fixtures). No time is asserted.

Without node or an oracle's `npm ci` these tests skip with the command; under CI=true they fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cases.agents_cut import AGENTS, AgentTimer, Cut, replaylab_cut
from bench.generate import write_transcript


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two seeded sessions: pi-shaped (header version 3) and OpenClaw 2026.9.6's (version 4)."""
    folder = tmp_path_factory.mktemp("agents-cut")
    return [write_transcript(folder / f"v{v}.jsonl", 5, entries=600, version=v).path for v in (3, 4)]


def _agree(agent_oracles, name: str, files: list[Path]) -> list[Cut]:
    profile = agent_oracles(name).profile  # skips (fails under CI=true) when the oracle cannot run
    cuts = []
    with AgentTimer(profile) as timer:
        assert timer.ready["agent"]["version"] == profile.version
        for path in files:
            mine, theirs = replaylab_cut(path, profile), timer.time(path, repeats=2)
            assert len(theirs["samplesMs"]) == 2 and all(t > 0 for t in theirs["samplesMs"])
            assert mine.same_as(theirs), (path.name, mine, theirs)
            cuts.append(mine)
    return cuts


@pytest.mark.parametrize("name", AGENTS)
def test_generated_sessions_are_cut_where_the_agent_cuts_them(name: str, agent_oracles, generated) -> None:
    cuts = _agree(agent_oracles, name, generated)
    assert all(c.refused is None and c.first_kept_line and c.summarized > 0 for c in cuts), cuts


@pytest.mark.realdata
@pytest.mark.parametrize("name", AGENTS)
def test_the_real_pi_fixtures_are_cut_where_the_agent_cuts_them(name: str, agent_oracles, shared_data: Path) -> None:
    files = sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))
    assert len(files) == 4
    cuts = _agree(agent_oracles, name, files)
    assert sum(c.refused is None for c in cuts) >= 3, cuts  # v1 files: compared by line, not by id


def test_a_cut_agrees_only_with_the_same_line_or_a_refusal_alike() -> None:
    agent = {"refused": None, "firstKeptLine": 12}
    assert Cut(None, "a", 12).same_as(agent)
    assert not Cut(None, "a", 13).same_as(agent)
    assert not Cut(None, "a", None).same_as({"refused": None, "firstKeptLine": None})
    assert not Cut("already-compacted", None, None).same_as(agent)
    assert Cut("already-compacted", None, None).same_as({"refused": "nothing", "firstKeptLine": None})
    assert not Cut(None, "a", 12).same_as({"refused": "nothing-to-summarize", "firstKeptLine": None})
