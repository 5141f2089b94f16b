"""The full QA pipeline on one big session, 10k / 50k / 100k entries: linear, and within 3× of
`compact()` alone on the same file.

Inputs: one seeded OpenClaw-shaped session per size (`bench.generate`) with a recorded-tool
cassette of its own leaf path's calls and results, and a suite that compacts it mid-way:
`compact_at: turn:K`, K the last turn before the first recorded compaction past the session's
middle (the window is then at its largest, so the compaction has something to summarize), mode
`auto` (safeguard keeps every mutating event of these sessions and finds nothing to gain),
contextTokens 120,000. The pipeline is `run_item`: load, ledger, baseline over the later half,
compact, compacted run over it, diff. The pi oracle check is off here (it runs node on each
compacted window): its cost is measured apart and printed, when the oracle is installed.

Times are this process's CPU seconds (both are single-threaded and in-process): on a shared
machine a wall clock measures the neighbours too — a minute-long sample sees the load change
several times, enough to bend a slope over three sizes. Wall times are kept in the details.

* `pipeline-scaling`: the log-log slope of the pipeline's time over the entries (least
  squares over the sizes) ≤ 1.1, and at every size the pipeline ≤ 3× `compact()` alone on the
  same file (same mode, budget and point — the entry before turn K — into a fresh working copy). Both are
  reported (met / missed), never asserted.

`--quick`: 300 / 1k / 3k entries, one repeat (a smoke run, in seconds).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from bench.cases.common import Context, check, result
from bench.cases.compact_scaling import slope

NAME = "pipeline-scaling"
TITLE = "full pipeline on one session of 10k / 50k / 100k entries: slope, and vs compact() alone"
TARGET = "slope ≤ 1.1, pipeline ≤ 3× compact()"
FULL_SIZES = (10_000, 50_000, 100_000)
QUICK_SIZES = (300, 1_000, 3_000)
CONTEXT_TOKENS, RESERVE_TOKENS, KEEP_RECENT_TOKENS = 120_000, 20_000, 20_000
MODE = "auto"


def write_session(folder: Path, entries: int, seed: int = 3, version: int = 3) -> Path:
    """`folder/big-<entries>.jsonl` and its cassette (the leaf path's calls and results);
    `version`: the session header's (`bench.generate.transcript_entries`)."""
    from bench.generate import write_transcript

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"big-{entries}.jsonl"
    if path.exists():
        return path
    write_transcript(path, seed, entries=entries, version=version)
    write_leaf_cassette(path)
    return path


def write_leaf_cassette(path: Path) -> Path:
    """The recorded-tool cassette of the session at `path`: its leaf path's calls and results."""
    from replaylab.cassette import cassette_path_for, recorded_tool_interaction, write_cassette
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import AssistantMessage, MessageEntry, ToolResultMessage

    calls: dict[str, Any] = {}
    interactions = []
    for entry in load_transcript(path).leaf_path():
        message = entry.message if isinstance(entry, MessageEntry) else None
        if isinstance(message, AssistantMessage):
            calls.update((call.id, call) for call in message.tool_calls())
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in calls:
            call = calls.pop(message.tool_call_id)
            text = (
                message.content
                if isinstance(message.content, str)
                else "".join(getattr(b, "text", "") for b in message.content)
            )
            interactions.append(recorded_tool_interaction(call.name, call.arguments, text, is_error=message.is_error))
    cassette = cassette_path_for(path)
    write_cassette(cassette, interactions)
    return cassette


def mid_turn(path: Path) -> int:
    """1-based K for `compact_at: turn:K`: the last user turn that starts before the first
    recorded compaction past the middle of the leaf path (the first turn past it if none)."""
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import CompactionEntry

    leaf_path = load_transcript(path).leaf_path()
    turns = split_turns(leaf_path)
    position = {entry.id: index for index, entry in enumerate(leaf_path)}
    middle = len(leaf_path) // 2
    cut = next((i for i, e in enumerate(leaf_path) if i > middle and isinstance(e, CompactionEntry)), middle)
    starts = [k for k, turn in enumerate(turns) if turn.inputs and position[turn.inputs[0].id] < cut]
    return max(2, (starts[-1] if starts else len(turns) // 2) + 1)


def leaf_before(path: Path, turn: int) -> str | None:
    """The id of the entry before turn `turn` (1-based): where the pipeline compacts."""
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript

    leaf_path = load_transcript(path).leaf_path()
    first = split_turns(leaf_path)[turn - 1].inputs[0]
    index = next(i for i, entry in enumerate(leaf_path) if entry is first)
    return leaf_path[index - 1].id if index else None


def write_suite(recording: Path, turn: int) -> Path:
    suite = recording.with_suffix(".suite.yaml")
    suite.write_text(
        f"name: scaling\nrecordings: {recording.name}\n"
        f"compaction: {{mode: {MODE}, contextTokens: {CONTEXT_TOKENS}, reserveTokensFloor: {RESERVE_TOKENS}, "
        f"keepRecentTokens: {KEEP_RECENT_TOKENS}}}\ncompact_at: turn:{turn}\n",
        encoding="utf-8",
    )
    return suite


def _compact_alone(ctx: Context, recording: Path, leaf: str | None) -> Any:
    """`compact()` on the file where the pipeline compacts it (`leaf`), with its settings."""
    from replaylab.compaction import CompactParams, compact

    params = CompactParams(
        session_file=str(recording),
        leaf_id=leaf,
        compaction_mode=MODE,
        context_tokens=CONTEXT_TOKENS,
        reserve_tokens_floor=RESERVE_TOKENS,
        keep_recent_tokens=KEEP_RECENT_TOKENS,
        working_copy=str(ctx.fresh(f"alone-{recording.stem}", ".jsonl")),
    )
    return compact(params)


def _pi_check_cost(ctx: Context, recording: Path, leaf: str | None) -> dict[str, Any]:
    """The pi oracle's check of the compacted window of `compact()` on the file (node builds
    the context from the working copy): what `verify_with_pi: auto` adds per compacted window."""
    from replaylab.checks.agent_window import check_windows
    from replaylab.oracles.agent import oracle_unavailable
    from replaylab.qa.views import window_of
    from replaylab.upstream.profiles import default_profile

    profile = default_profile()
    reason = oracle_unavailable(profile)
    if reason is not None:
        return {"available": False, "reason": reason}
    done = _compact_alone(ctx, recording, leaf)
    if not done.success:
        return {"available": True, "error": done.error}
    window = window_of(done)
    started = time.perf_counter()
    checks = check_windows(profile, Path(done.working_copy), [(done.compaction_event_id, window)], "on")
    return {
        "available": True,
        "seconds": time.perf_counter() - started,
        "window_messages": len(window),
        "equal": bool(checks and checks[0].equal),
    }


def run(ctx: Context) -> list[dict[str, Any]]:
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite

    sizes = QUICK_SIZES if ctx.quick else FULL_SIZES
    per_size: dict[str, Any] = {}
    pipeline_medians: list[float] = []
    compact_medians: list[float] = []
    warm = write_session(ctx.workdir / f"scaling-{sizes[0]}", sizes[0])  # imports and caches, untimed
    run_item(load_suite(write_suite(warm, mid_turn(warm))).scenarios[0], warm, RunOptions(verify_with_pi="off"))
    _compact_alone(ctx, warm, leaf_before(warm, mid_turn(warm)))
    leaves: dict[int, str | None] = {}
    for n in sizes:
        recording = write_session(ctx.workdir / f"scaling-{n}", n)
        turn = mid_turn(recording)
        leaves[n] = leaf_before(recording, turn)
        suite = load_suite(write_suite(recording, turn))
        scenario = suite.scenarios[0]
        # the big sizes take minutes a repeat: fewer of them
        repeats = 1 if ctx.quick else ctx.repeats if n < 50_000 else max(1, ctx.repeats // 3)
        outcome: dict[str, Any] = {}

        def pipeline(scenario: Any = scenario, recording: Path = recording, outcome: dict = outcome) -> None:
            item = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
            outcome.update(outcome=item.outcome, compacted=item.compaction is not None, defects=len(item.defects))

        def alone(recording: Path = recording, leaf: str | None = leaves[n], outcome: dict = outcome) -> None:
            done = _compact_alone(ctx, recording, leaf)
            outcome.update(compact_success=done.success, compact_error=done.error)

        samples: dict[str, list[float]] = {"pipeline": [], "compact": []}
        wall: dict[str, list[float]] = {"pipeline": [], "compact": []}
        for round_ in range(repeats):
            order = [("pipeline", pipeline), ("compact", alone)]
            for name, fn in order if round_ % 2 == 0 else order[::-1]:
                started, cpu = time.perf_counter(), time.process_time()
                fn()
                samples[name].append(time.process_time() - cpu)
                wall[name].append(time.perf_counter() - started)
        pipeline_medians.append(statistics.median(samples["pipeline"]))
        compact_medians.append(statistics.median(samples["compact"]))
        per_size[str(n)] = {
            "pipeline_median_s": pipeline_medians[-1],
            "compact_median_s": compact_medians[-1],
            "ratio": pipeline_medians[-1] / compact_medians[-1],
            "pipeline_samples_s": samples["pipeline"],
            "compact_samples_s": samples["compact"],
            "pipeline_wall_s": wall["pipeline"],
            "compact_wall_s": wall["compact"],
            "file_bytes": recording.stat().st_size,
            "compact_at": scenario.compact_at,
            **outcome,
        }
    entries = [float(n) for n in sizes]
    fitted = slope(entries, pipeline_medians)
    ratios = [p / c for p, c in zip(pipeline_medians, compact_medians)]
    largest = per_size[str(sizes[-1])]
    pi_cost = _pi_check_cost(ctx, write_session(ctx.workdir / f"scaling-{sizes[1]}", sizes[1]), leaves[sizes[1]])
    table = "; ".join(
        f"{int(n):,}: pipeline {p:.2f} s, compact() {c:.2f} s ({p / c:.2f}×)"
        for n, p, c in zip(entries, pipeline_medians, compact_medians)
    )
    out = result(
        NAME,
        TITLE,
        subject=largest["pipeline_samples_s"],
        floor=largest["compact_samples_s"],
        floor_what=f"compact() alone on the same {sizes[-1]:,}-entry file",
        target=TARGET,
        checks=[check("slope", fitted, "<=", 1.1), check("ratio", max(ratios), "<=", 3.0, "×")],
        details={
            "sizes": per_size,
            "slope": fitted,
            "compact_slope": slope(entries, compact_medians),
            "segment_slopes": [slope(entries[i : i + 2], pipeline_medians[i : i + 2]) for i in range(len(entries) - 1)],
            "ratios": ratios,
            "pi_check": {"entries": sizes[1], **pi_cost},
            "note": f"{table}; slope {fitted:.2f}"
            + (
                f"; the pi check adds {pi_cost['seconds']:.2f} s per compacted window ({sizes[1]:,} entries)"
                if "seconds" in pi_cost
                else ""
            ),
        },
    )
    return [out]
