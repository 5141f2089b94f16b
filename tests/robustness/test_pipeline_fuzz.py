"""Fuzzing (hypothesis) the whole pipeline on sessions nobody has seen: coherent Claude Code
sessions written at random (`builders.claude_code_logs.coherent_claude_code_log`: split responses,
parallel calls, reads and writes, failed results, API errors, interruptions, the recording's own
compactions), imported and run under the suite `init` writes (safeguard, the automatic budget,
`compact_at: auto`) with the pi oracle checking every compacted window.

Whatever a session holds, the item reaches a verdict (never `error`), replaylab's safeguard keeps
its contract (no mutating event dropped or altered, no pair broken, the replay flags right), the
baseline replays the recording as it was, and every window replaylab compacts is the window pi
rebuilds from the same file. What the recording's own compactions lost and what safeguard cannot
compact are findings of the session, not of replaylab, and may appear.

Example count: a few dozen in CI; `REPLAYLAB_FUZZ_EXAMPLES=N` for a longer run on demand.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders.claude_code_logs import coherent_claude_code_log
from builders.fuzzing import NEVER, fuzz_settings
from replaylab.importers import import_sessions, write_session
from replaylab.qa.pipeline import RunOptions, run_item
from replaylab.suite import load_suite

SUITE = "name: fuzz\nrecordings: out/*.jsonl\ncompaction: {mode: safeguard}\ncompact_at: auto\n"
FUZZ = fuzz_settings(30)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pipeline-fuzz")


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(3, 24))
def test_any_coherent_session_gets_a_verdict_and_safeguard_keeps_its_contract(folder: Path, seed: int, turns: int):
    session_dir = Path(tempfile.mkdtemp(dir=folder))
    source = session_dir / "session.jsonl"
    records = coherent_claude_code_log(random.Random(seed), turns)
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for session in import_sessions("claude-code", source):
        write_session(session, session_dir / "out")
    (session_dir / "suite.yaml").write_text(SUITE, encoding="utf-8")
    suite = load_suite(session_dir / "suite.yaml")
    (recording,) = suite.recordings
    item = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="on"))
    assert item.outcome != "error", item.reason
    assert not [str(d) for d in item.defects if d.code in NEVER]
    if item.compaction is not None and item.compaction.success:
        assert item.verified_against is not None and item.verified_windows >= 1, item.reason
