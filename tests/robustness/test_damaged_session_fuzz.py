"""Fuzzing the whole pipeline on damaged sessions: generated sessions (`bench.generate`, under pi's
header and under OpenClaw 2026.9.6's) with one to three fields of their message entries given a
value of another JSON type, removed, or set to a role, stop reason or parent no agent wrote, and
for half of them a field of a cassette interaction too — what a hand edit, a fork or another tool
leaves in files nobody has seen.

Whatever is damaged, the item reaches a verdict and nothing raises: a broken line is a diagnostic
naming it, never a traceback. An item that ends in `error` says which of the damaged lines it
could not use, or names the cassette that no longer answers it (the verdict a QA engineer reads
must lead to the file to fix).

`REPLAYLAB_FUZZ_EXAMPLES=N` runs N sessions of random seeds instead of the CI's few.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bench.cases.pipeline_scaling import write_leaf_cassette
from builders.damage import ODD_VALUES, damaged_session
from builders.fuzzing import fuzz_seeds
from replaylab.qa.pipeline import RunOptions, run_item
from replaylab.suite import load_suite

SEEDS = fuzz_seeds(60)
SUITE = "name: damaged\nrecordings: session.jsonl\ncompaction: {mode: safeguard}\ncompact_at: auto\n"


def damage_cassette(cassette: Path, rng: random.Random) -> None:
    """One field of one interaction of the (JSON-flow) cassette removed or given an odd value."""
    data = json.loads(cassette.read_text(encoding="utf-8"))
    if not data["interactions"]:
        return
    part = rng.choice(data["interactions"])[rng.choice(("request", "response"))]
    key = rng.choice(sorted(part))
    if rng.random() < 0.3:
        part.pop(key)
    else:
        part[key] = rng.choice([*ODD_VALUES, {"string": 5}, {"code": "x"}, "not json"])
    cassette.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("seed", SEEDS)
def test_any_damaged_session_gets_a_verdict_that_names_the_lines_it_could_not_use(tmp_path: Path, seed: int):
    recording, damaged = damaged_session(tmp_path, seed)
    cassette = write_leaf_cassette(recording)  # the cassette of what the damaged file's path still holds
    if random.Random(-seed).random() < 0.5:
        damage_cassette(cassette, random.Random(-seed))
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    suite = load_suite(tmp_path / "suite.yaml")
    item = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="off"))
    assert item.outcome in ("passed", "failed", "skipped", "uncompacted", "error")
    if item.outcome == "error":
        named = [d for d in item.diagnostics if any(f":{n}:" in d or f"line {n}" in d for n in damaged)]
        # or the call whose result the damage took away (a result's role changed: the entry left
        # reads as a well-formed message, so only the call is known to miss something)
        named += [d for d in item.diagnostics if "missing-tool-result" in d]
        # or the cassette that no longer answers what the damaged recording asks
        named += [d for d in (item.reason, *item.diagnostics) if cassette.name in d]
        assert named, (item.reason, damaged, item.diagnostics)
