"""Shared fixtures. Tests that need the real recorded sessions read them from ../shared/data."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data; skips visibly when absent (never under CI=true: fails instead)."""
    if not SHARED_DATA.is_dir():
        message = f"../shared/data not found at {SHARED_DATA}: real-session tests need it"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SHARED_DATA


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def swept_sessions(shared_data: Path, request: pytest.FixtureRequest) -> list[Any]:
    """Every session of ../shared/data as the real-session sweep imports it
    (`qa.sweep.import_shared_data`), imported once for the whole run (`run_once`): the tests only
    read the files."""
    from replaylab.qa.sweep import import_shared_data
    from run_once import once_per_run, run_folder

    return once_per_run(
        request, "swept-sessions", lambda: import_shared_data(shared_data, run_folder(request, "swept-sessions"))
    )


@pytest.fixture(scope="session")
def real_session_files(shared_data: Path, request: pytest.FixtureRequest) -> list[Path]:
    """The τ-bench, τ²-bench, Claude Code and pi sessions of ../shared/data imported as transcripts
    (`loopback.imported_real_sessions`: each source file in its own folder, with its tool classes),
    imported once for the whole run (`run_once`): the tests only read the files."""
    from loopback import imported_real_sessions
    from run_once import once_per_run, run_folder

    return once_per_run(
        request, "real-sessions", lambda: imported_real_sessions(shared_data, run_folder(request, "real-sessions"))
    )


@pytest.fixture(scope="session", autouse=True)
def _temp_files_under_basetemp(tmp_path_factory: pytest.TempPathFactory):
    """Everything `tempfile` makes during the tests goes under pytest's basetemp, which pytest
    prunes (it keeps the last three runs): `compact()` without a writer leaves its working copy in
    a new temporary folder — that copy is its output — and the property tests call it thousands
    of times, which would leave as many folders in /tmp. Subprocesses inherit it via TMPDIR."""
    folder = str(tmp_path_factory.mktemp("tempfile"))
    previous, previous_env = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = folder
    yield
    tempfile.tempdir = previous
    if previous_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = previous_env


@pytest.fixture(scope="session")
def bench_compaction_points(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str]]:
    """(session file, the entry before its third user turn) of 30 generated bench sessions: where
    the bench's suite compacts them (`compact_at: turn:3`)."""
    from bench.cases.pipeline import make_sessions
    from replaylab.replay.turns import split_turns
    from replaylab.transcript import load_transcript

    root = tmp_path_factory.mktemp("bench-points")
    make_sessions(root, 30)
    points = []
    for path in sorted((root / "recordings").glob("s-*.jsonl")):
        entries = load_transcript(path).leaf_path()
        turns = split_turns(entries)
        if len(turns) > 2 and turns[2].inputs:
            points.append((path, entries[entries.index(turns[2].inputs[0]) - 1].id))
    return points


@pytest.fixture(scope="session")
def pi():
    """The pinned real pi (`replaylab.oracles.pi`), one node process for the whole run: what pi itself
    makes of a working copy. Skips with the reason when node or the oracle's npm install is missing
    (never under CI=true: fails instead, `.ci/run` installs it)."""
    from replaylab.oracles.pi import PiOracle, oracle_unavailable

    reason = oracle_unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the pi oracle is required under CI=true: {reason}")
        pytest.skip(reason)
    with PiOracle() as oracle:
        yield oracle


def _agent_oracle(name: str):
    """The pinned agent of profile `name` (`replaylab.oracles.agent`), skipping with the install
    command when it cannot run (never under CI=true: fails instead, `.ci/run` installs it)."""
    from replaylab.oracles.agent import AgentOracle, oracle_unavailable
    from replaylab.upstream.profiles import profile_named

    profile = profile_named(name)
    reason = oracle_unavailable(profile)
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the {profile.label} oracle is required under CI=true: {reason}")
        pytest.skip(reason)
    return AgentOracle(profile)


@pytest.fixture(scope="session")
def openclaw():
    """OpenClaw 2026.9.6's own code, one node process for the whole test session."""
    with _agent_oracle("openclaw@2026.9.6") as oracle:
        yield oracle


@pytest.fixture(scope="session")
def agent_oracles():
    """One node process per pinned agent, started on first use, for the whole test session."""
    started: dict[str, object] = {}

    def get(name: str):
        if name not in started:
            started[name] = _agent_oracle(name)
        return started[name]

    yield get
    for oracle in started.values():
        oracle.close()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def openclaw_state(openclaw, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OpenClaw state folder (`~/.openclaw` layout) whose store OpenClaw's own SessionManager
    wrote (tests/openclaw_stores.py): four bundled recordings as sessions — one with a compaction
    OpenClaw wrote, one with a message excluded from the context, one with a reset keeping the last
    user message — and a session of 51 messages reset to a fresh start."""
    from openclaw_stores import (
        RECORDINGS,
        long_then_reset,
        make_store,
        spec_from_transcript,
        with_compaction,
        with_excluded,
        with_reset,
    )

    recordings = REPO / "recordings" / "helpdesk"
    first, second, third, fourth = (spec_from_transcript(recordings / f"{name}.jsonl") for name in RECORDINGS)
    sessions = [
        with_compaction(first, 2, "The customer asked to cancel two orders; both were looked up."),
        with_excluded(second, 1, "operator note: never shown to the model"),
        with_reset(third, 2),
        fourth,
        long_then_reset(51),
    ]
    state = tmp_path_factory.mktemp("openclaw") / "state"
    make_store(state, {"sessions": sessions})  # what it wrote: state.parent / "state.written.json"
    return state


@pytest.fixture(scope="session")
def bundled_results(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Every item of the bundled suites (suites/*.yaml) run once per test run with the default
    options, by item key (`<suite>::<recording>::<scenario>`): the `ItemResult`s that the golden
    results and the tests of what a plain run gives read."""
    from golden.golden import bundled_jobs, run_items
    from run_once import once_per_run

    return once_per_run(request, "bundled-results", lambda: run_items(bundled_jobs()))
