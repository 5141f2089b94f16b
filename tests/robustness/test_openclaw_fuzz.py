"""Fuzzing the whole pipeline on OpenClaw 2026.9.6 sessions nobody has seen: sessions of random
shape (`bench.generate`: turns of reads and writes, parallel calls, large and failed results,
recorded compactions, abandoned branches, model changes), given random `reset` boundaries (some
keeping the question before them) and messages marked `excludeFromContext`, written into a store
by OpenClaw's own SessionManager (tests/openclaw_stores.py), imported from that store and run
under the openclaw@2026.9.6 profile (safeguard, the automatic budget, `compact_at: auto`) with
OpenClaw's own rebuild checking every compacted window.

Whatever a session holds, the item reaches a verdict, replaylab's safeguard keeps its contract,
the baseline replays the recording as it was — on the window the agent had, which a reset starts
afresh — and every window replaylab compacts is the window OpenClaw rebuilds from the same file.

The sessions share one store (one node process writes them all); `REPLAYLAB_FUZZ_EXAMPLES=N`
runs N sessions of random seeds instead of the CI's few.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from bench.generate import transcript_entries
from builders.fuzzing import NEVER, fuzz_seeds
from openclaw_stores import make_store, spec_from_transcript
from replaylab.importers import import_sessions, openclaw_store, write_session
from replaylab.qa.pipeline import RunOptions, run_item
from replaylab.suite import load_suite

SEEDS = fuzz_seeds(24)
SUITE = (
    "name: openclaw-fuzz\nrecordings: out/*.jsonl\nagent: openclaw@2026.9.6\n"
    "compaction: {mode: safeguard}\ncompact_at: auto\n"
)


def _user_indexes(entries: list[dict[str, Any]]) -> list[int]:
    return [i for i, e in enumerate(entries) if e.get("type") == "message" and e["message"].get("role") == "user"]


def random_spec(seed: int, folder: Path) -> dict[str, Any]:
    """A generated session as a store spec, with up to two resets and maybe an excluded message."""
    rng = random.Random(seed)
    source = folder / f"generated-{seed}.jsonl"
    lines = transcript_entries(seed, entries=rng.randint(20, 160))
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    spec = spec_from_transcript(source, name=f"fuzz-{seed}")
    entries = spec["entries"]
    for k in range(rng.randint(0, 2)):
        users = _user_indexes(entries)
        if len(users) < 3:
            break
        j = rng.randrange(1, len(users))
        kept = {"firstKept": entries[users[j - 1]]["ref"]} if rng.random() < 0.5 else {}
        reason = rng.choice(("reset", "new", "idle"))
        entries.insert(users[j], {"ref": f"reset-{k}", "type": "reset", "reason": reason, **kept})
    if rng.random() < 0.4:
        note = {"role": "user", "content": "operator note ORD-99X1 (not for the model)", "excludeFromContext": True}
        entries.insert(rng.choice(_user_indexes(entries)), {"ref": "excluded-1", "type": "message", "message": note})
    return spec


@pytest.fixture(scope="module")
def recordings(openclaw, tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Every seed's session, written by OpenClaw into one store and imported from it."""
    root = tmp_path_factory.mktemp("openclaw-fuzz")
    make_store(root / "state", {"sessions": [random_spec(seed, root) for seed in SEEDS]})
    store = next((root / "state").rglob(openclaw_store.STORE_NAME))
    for session in import_sessions("openclaw", store):
        write_session(session, root / "out")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    found = {seed: list((root / "out").glob(f"*fuzz-{seed}.*.jsonl")) for seed in SEEDS}
    assert all(len(paths) == 1 for paths in found.values()), found
    return {seed: paths[0] for seed, paths in found.items()}


@pytest.mark.parametrize("seed", SEEDS)
def test_any_openclaw_session_gets_a_verdict_with_every_window_openclaws(recordings: dict[int, Path], seed: int):
    suite = load_suite(recordings[seed].parent.parent / "suite.yaml")
    (recording,) = [r for r in suite.recordings if r == recordings[seed]]
    item = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="on"))
    assert item.outcome != "error", item.reason
    assert not [str(d) for d in item.defects if d.code in NEVER]
    assert item.agent == "openclaw@2026.9.6"
    if item.compaction is not None and item.compaction.success:
        assert item.verified_against is not None and item.verified_windows >= 1, item.reason
