"""The overflow recovery chain on real sessions: a sample of ../shared/data (every `STRIDE`-th
main session of each source, at most `PER_SOURCE`), each in the sweep's scenario (safeguard,
`replay` model, compacted once near 60 % of the session) with the agent's model given a window of
60 % of the session's largest request (its whole final window, by pi's estimate). Every chain keeps
its release's rules, none cuts a mutating result, no run errs; the counts per source (sessions
that met the window, turns recovered / given up) are printed (`pytest -s`)."""

from __future__ import annotations

import collections
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from replaylab.qa.sweep import import_shared_data

pytestmark = pytest.mark.realdata

PER_SOURCE = 12
WINDOW_SHARE = 0.6


def _one(job: tuple[str, str]) -> dict[str, Any]:
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.sweep import sweep_scenario
    from replaylab.replay.loop import window_tokens
    from replaylab.suite.schema import ContextWindow
    from replaylab.transcript import build_window, load_transcript

    source, path = job
    scenario, why, _, _ = sweep_scenario(Path(path), source)
    row: dict[str, Any] = {"source": source, "session": Path(path).name, "outcome": "skipped", "chains": []}
    if scenario is None:
        return row
    largest = window_tokens(build_window(load_transcript(path).leaf_path()))
    window = ContextWindow(tokens=max(1, int(WINDOW_SHARE * largest)))
    result = run_item(scenario.model_copy(update={"context_window": window}), Path(path))
    row["outcome"] = result.outcome
    row["codes"] = [d.code.value for d in result.defects]
    row["error"] = result.compacted.error if result.compacted else None
    row["chains"] = [c.model_dump() for c in (result.compacted.recovery if result.compacted else [])]
    return row


@pytest.fixture(scope="module")
def rows(shared_data, tmp_path_factory) -> list[dict[str, Any]]:
    sessions = [s for s in import_shared_data(shared_data, tmp_path_factory.mktemp("overflow")) if not s.child]
    by_source: dict[str, list[str]] = collections.defaultdict(list)
    for session in sessions:
        by_source[session.source].append(session.path)
    jobs = []
    for source, paths in sorted(by_source.items()):
        stride = max(1, len(paths) // PER_SOURCE)
        jobs += [(source, p) for p in paths[::stride][:PER_SOURCE]]
    with ProcessPoolExecutor(max_workers=2) as pool:
        found = list(pool.map(_one, jobs))
    print("\n" + _table(found))
    return found


def _table(rows: list[dict[str, Any]]) -> str:
    lines = ["source        sessions  compacted  met window  turns recovered  turns gave up  sessions gave up"]
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        compacted = [r for r in mine if r["outcome"] not in ("skipped", "uncompacted")]
        met = [r for r in compacted if any(s["kind"] != "guard" for c in r["chains"] for s in c["steps"])]
        recovered = sum(
            1 for r in mine for c in r["chains"] if not c["gave_up"] and any(s["kind"] != "guard" for s in c["steps"])
        )
        gave_up = sum(1 for r in mine for c in r["chains"] if c["gave_up"])
        sessions_gave_up = sum(1 for r in mine if any(c["gave_up"] for c in r["chains"]))
        lines.append(
            f"{source:13} {len(mine):8}  {len(compacted):9}  {len(met):10}  {recovered:15}  {gave_up:13}  "
            f"{sessions_gave_up:16}"
        )
    return "\n".join(lines)


def test_every_chain_keeps_its_rules_and_no_step_cuts_a_mutating_result(rows):
    assert rows and any(r["chains"] for r in rows)
    assert [r["session"] for r in rows if r.get("error")] == []
    assert [r["session"] for r in rows if "RECOVERY_CHAIN_WRONG" in r.get("codes", [])] == []
    touched = [
        (r["session"], c["turn"], s["kind"], s["mutating_entry_ids"])
        for r in rows
        for c in r["chains"]
        for s in c["steps"]
        if s["mutating_entry_ids"]
    ]
    assert touched == []
