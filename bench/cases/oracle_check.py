"""What the check against the agent's own context costs: one item with it vs the same item without.

Input: one seeded OpenClaw-shaped session (`pipeline_scaling.write_session`, 10,000 entries; 600
with `--quick`) and a suite that compacts it every K turns (K a quarter of its turns: several
compacted windows on one working copy), mode `auto`, the scaling case's budget. Subject:
`run_item` with `verify_with_pi="on"` (every compacted window compared with the context the
item's pinned agent, run in node, rebuilds from the working copy); floor: the same item with
`"off"`. Both in this process, alternately, after one warm-up each (which also starts the
oracle's node process, shared by the run as in a real run). CPU seconds of this
process are kept in the details; the ratio is of wall times, since the check's work is node's
(a child this process waits for).

* `oracle-check`: subject / floor ≤ 1.5×. The details count the oracle's requests per item:
  one per working copy, holding every window, is the design (`checks.agent_window`).

Pending when the oracle of the default agent is not installed (`npm ci` in its folder).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.cases.common import Context, check, pending, result
from bench.cases.pipeline_scaling import CONTEXT_TOKENS, KEEP_RECENT_TOKENS, MODE, RESERVE_TOKENS, write_session

NAME = "oracle-check"
TITLE = "one item with the agent-context check vs without (node rebuilds every compacted window)"
TARGET = "≤ 1.5× floor"
FULL_ENTRIES, QUICK_ENTRIES = 10_000, 600


def run(ctx: Context) -> list[dict[str, Any]]:
    from replaylab.oracles.agent import AgentOracle, oracle_unavailable
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.replay import split_turns
    from replaylab.suite import load_suite
    from replaylab.transcript import load_transcript
    from replaylab.upstream.profiles import default_profile

    reason = oracle_unavailable(default_profile())
    if reason is not None:
        return [pending(NAME, TITLE, TARGET, reason)]
    entries = QUICK_ENTRIES if ctx.quick else FULL_ENTRIES
    recording = write_session(ctx.workdir / f"oracle-{entries}", entries)
    turns = len(split_turns(load_transcript(recording).leaf_path()))
    every = max(2, turns // 4)
    suite_file = recording.with_suffix(".suite.yaml")
    suite_file.write_text(
        f"name: oracle\nrecordings: {recording.name}\n"
        f"compaction: {{mode: {MODE}, contextTokens: {CONTEXT_TOKENS}, reserveTokensFloor: {RESERVE_TOKENS}, "
        f"keepRecentTokens: {KEEP_RECENT_TOKENS}}}\ncompact_at: every:{every}\n",
        encoding="utf-8",
    )
    scenario = load_suite(suite_file).scenarios[0]

    requests = [0]
    sent = AgentOracle.send  # every request goes through it (`ask` too)

    def counting(self: AgentOracle, request: dict[str, Any]) -> Any:
        requests[0] += 1
        return sent(self, request)

    AgentOracle.send = counting  # type: ignore[method-assign]
    outcome: dict[str, Any] = {}
    try:

        def item(setting: str) -> None:
            before = requests[0]
            done = run_item(scenario, recording, RunOptions(verify_with_pi=setting))  # type: ignore[arg-type]
            outcome[setting] = {
                "outcome": done.outcome,
                "verified_windows": done.verified_windows,
                "compactions": done.compaction.compactions if done.compaction else 0,
                "requests": requests[0] - before,
            }

        item("on")  # warm-up: imports, caches, the oracle's node process
        item("off")
        repeats = 1 if ctx.quick else ctx.repeats
        samples: dict[str, list[float]] = {"on": [], "off": []}
        wall: dict[str, list[float]] = {"on": [], "off": []}
        for round_ in range(repeats):
            for setting in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
                started, cpu = time.perf_counter(), time.process_time()
                item(setting)
                wall[setting].append(time.perf_counter() - started)
                samples[setting].append(time.process_time() - cpu)
    finally:
        AgentOracle.send = sent  # type: ignore[method-assign]
    # the check's time is mostly node's: the wall clock is the measure (this process waits)
    ratio = statistics.median(wall["on"]) / statistics.median(wall["off"])
    on = outcome["on"]
    return [
        result(
            NAME,
            TITLE,
            subject=wall["on"],
            floor=wall["off"],
            floor_what="the same item with verify_with_pi off",
            ratio=ratio,
            target=TARGET,
            checks=[check("ratio", ratio, "<=", 1.5, "×")],
            details={
                "entries": entries,
                "compact_at": f"every:{every}",
                "agent": default_profile().label,
                "with_check": on,
                "without_check": outcome["off"],
                "cpu_on_s": samples["on"],
                "cpu_off_s": samples["off"],
                "note": f"{on['verified_windows']} of {on['compactions']} compacted windows checked "
                f"in {on['requests']} oracle request(s) per item ({entries:,} entries)",
            },
        )
    ]
