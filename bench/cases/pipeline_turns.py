"""The full QA pipeline under the defaults on sessions of many short turns: linear in the turns.

Inputs: one seeded session per size of 2k / 6k / 12k user turns, each turn a prompt, one read
call, its result and a short answer (the shape of a long coding-agent session), with a
recorded-tool cassette of its calls, and the suite `init` writes: safeguard, `contextTokens:
auto` (a budget from the session's own windows: the same two compactions at every size),
`compact_at: auto`. After them the window grows turn by turn to the end, and the run asks before
each turn whether it crosses the budget: a check that sums the whole window every time is
quadratic in the turns, which no other row sees (they compact at a fixed turn).

* `pipeline-turns`: the log-log slope of `run_item`'s CPU time over the turns (least squares
  over the sizes) ≤ 1.1. The floor printed beside it is `load_transcript` of the largest file.

`--quick`: 300 / 1k / 3k turns, one repeat (a smoke run).
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import orjson

from bench.cases.common import Context, check, result
from bench.cases.compact_scaling import slope

NAME = "pipeline-turns"
TITLE = "full pipeline, compact_at: auto, on sessions of 2k / 6k / 12k short turns: slope over the turns"
TARGET = "slope ≤ 1.1"
FULL_SIZES = (2_000, 6_000, 12_000)
QUICK_SIZES = (300, 1_000, 3_000)
SUITE = "name: turns\nrecordings: {name}\ncompaction: {{mode: safeguard}}\ncompact_at: auto\n"


def write_session(folder: Path, turns: int, seed: int = 7) -> Path:
    """`folder/turns-N.jsonl` (pi v3, one linear chain) and its cassette."""
    from bench.cases.pipeline_scaling import write_leaf_cassette

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"turns-{turns}.jsonl"
    rnd = random.Random(seed)
    at = "2026-01-01T00:00:00.000Z"
    lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": path.stem, "timestamp": at, "cwd": "/w"}]
    parent = None
    for n in range(turns):
        call, shelf = f"call-{n}", f"SHELF-{rnd.randrange(10_000):04d}"
        found = [{"type": "text", "text": f"item {n} is on {shelf}"}]
        messages = [
            {"role": "user", "content": f"where is item {n}?"},
            {"role": "assistant", "content": [_lookup(call, n)]},
            {"role": "toolResult", "toolCallId": call, "toolName": "lookup_item", "content": found, "isError": False},
            {"role": "assistant", "content": [{"type": "text", "text": f"Item {n} is on {shelf}."}]},
        ]
        for k, message in enumerate(messages):
            entry_id = f"{n:06d}{k}"
            lines.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": at, "message": message})
            parent = entry_id
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    write_leaf_cassette(path)
    (folder / f"turns-{turns}.yaml").write_text(SUITE.format(name=path.name), encoding="utf-8")
    return path


def _lookup(call: str, item: int) -> dict[str, Any]:
    return {"type": "toolCall", "id": call, "name": "lookup_item", "arguments": {"item": item}}


def run(ctx: Context) -> list[dict[str, Any]]:
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite
    from replaylab.transcript import load_transcript

    sizes = QUICK_SIZES if ctx.quick else FULL_SIZES
    repeats = 1 if ctx.quick else max(1, ctx.repeats // 2)
    medians: list[float] = []
    per_size: dict[str, Any] = {}
    load_samples: list[float] = []
    warm = write_session(ctx.workdir / "turns-warm", 50)  # imports and caches, untimed
    run_item(load_suite(warm.with_suffix(".yaml")).scenarios[0], warm, RunOptions(verify_with_pi="off"))
    for turns in sizes:
        recording = write_session(ctx.workdir / f"turns-{turns}", turns)
        scenario = load_suite(recording.with_suffix(".yaml")).scenarios[0]
        samples: list[float] = []
        outcome: dict[str, Any] = {}
        for _ in range(repeats):
            cpu = time.process_time()
            item = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
            samples.append(time.process_time() - cpu)
            compactions = 0 if item.compaction is None else item.compaction.compactions
            outcome = {"outcome": item.outcome, "compactions": compactions}
        medians.append(statistics.median(samples))
        per_size[str(turns)] = {"median_s": medians[-1], "samples_s": samples, **outcome}
        if turns == sizes[-1]:
            for _ in range(repeats):
                cpu = time.process_time()
                load_transcript(recording)
                load_samples.append(time.process_time() - cpu)
    fitted = slope([float(n) for n in sizes], medians)
    table = "; ".join(f"{n:,} turns: {m:.2f} s" for n, m in zip(sizes, medians))
    return [
        result(
            NAME,
            TITLE,
            subject=per_size[str(sizes[-1])]["samples_s"],
            floor=load_samples,
            floor_what=f"load_transcript of the same {sizes[-1]:,}-turn file",
            target=TARGET,
            checks=[check("slope", fitted, "<=", 1.1)],
            details={"sizes": per_size, "slope": fitted, "note": f"{table}; slope {fitted:.2f}"},
        )
    ]
