"""Fuzzing (hypothesis) the importers: Claude Code logs with records linked at random, and
τ²-bench results with messages of every shape. Each importer raises nothing but `InputError` (a
bad simulation is a problem of its own), and every session it gives is written and loads as a v3
transcript whose only diagnostics are the source's own gaps (a call never answered, an answer to
no call, a compaction that keeps nothing, as Claude Code's do), with every parent before its
child and the last entry the leaf.

Example count: a few hundred in CI; `REPLAYLAB_FUZZ_EXAMPLES=N` for a longer run on demand.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders.benchmark_results import random_tau2_results
from builders.claude_code_logs import random_claude_code_log
from builders.fuzzing import fuzz_settings
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.importers import import_sessions, write_session
from replaylab.transcript.load import load_transcript

#: what a source may lack, said by the loader: anything else is the importer's fault
SOURCE_GAPS = frozenset({"missing-tool-result", "orphan-tool-result", "first-kept-itself"})
FUZZ = fuzz_settings(300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("import-fuzz")


def _check_written(sessions, out: Path) -> None:
    for session in sessions:
        written, _ = write_session(session, out)
        transcript = load_transcript(written)
        assert {d.code for d in transcript.diagnostics} <= SOURCE_GAPS, [str(d) for d in transcript.diagnostics]
        ids = [e.id for e in transcript.entries]
        assert len(ids) == len(set(ids))
        position = {entry_id: n for n, entry_id in enumerate(ids)}
        assert all(
            e.parent_id is None or position.get(e.parent_id, len(ids)) < position[e.id] for e in transcript.entries
        )
        if ids:
            assert transcript.path_to()[-1].id == ids[-1]


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 24))
def test_claude_code_import_raises_only_input_error_and_writes_clean_sessions(folder: Path, seed: int, size: int):
    records = random_claude_code_log(random.Random(seed), size)
    source = Path(tempfile.mkdtemp(dir=folder)) / "session.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        sessions = list(import_sessions("claude-code", source))
    except InputError as exc:
        assert exc.diagnostics and all(d.message for d in exc.diagnostics)
        return
    _check_written(sessions, source.parent / "out")


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_tau2_bench_import_lists_each_bad_simulation_and_writes_clean_sessions(folder: Path, seed: int):
    source = Path(tempfile.mkdtemp(dir=folder)) / "results.json"
    source.write_text(json.dumps(random_tau2_results(random.Random(seed))), encoding="utf-8")
    problems: list[Diagnostic] = []
    try:
        sessions = list(import_sessions("tau2-bench", source, problems=problems))
    except InputError as exc:
        assert exc.diagnostics and all(d.message for d in exc.diagnostics)
        return
    assert all(p.file == str(source) and p.message for p in problems)
    _check_written(sessions, source.parent / "out")
