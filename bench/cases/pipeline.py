"""The QA pipeline at nightly scale: 1,000 τ²-sized sessions.

Inputs: seeded OpenClaw-shaped sessions of 40 entries (`bench.generate`, about a τ²-bench
session's size), each with a recorded-tool cassette made from its own leaf path's calls and
results, and one suite (safeguard, `compact_at: turn:3`) over all of them.

* `pipeline-1000`: `run_item` (baseline + compact + compacted run + diff) over every session
  vs `load_transcript` of the same files: ≤ 5×. Also printed (details, not the target): the
  ratio to loading each whole session, transcript plus a bare parse of its cassette.
* `pytest-1000`: `pytest --replaylab` over the suite vs the same `run_item` loop in a plain
  Python process (both subprocesses, so both pay interpreter start-up): ≤ 1.3× + 1 s.
* `xdist-n2`: `pytest --replaylab -n 2` vs the same run without xdist: ≤ 0.6×. Also printed
  (details), to account for the ratio in the same run: the machine's parallel ceiling for this
  work — the plain loop split over two processes running at once vs one process running it all
  (no pytest, nothing shared) — and xdist's own cost — `-n 2` minus serial over as many tests
  that do nothing (starting the workers, five messages per test through execnet) — and what
  those two predict: ceiling × the serial run + xdist's cost.

`--quick`: 12 sessions, one repeat (a smoke run: the ratios are not the targets' regime).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from bench.cases.common import Context, check, checkout_env, interleaved, result, round_robin

FULL, QUICK = 1_000, 12
ENTRIES = 40
SUITE = """\
name: bench
recordings: ../recordings/*.jsonl
compaction: {mode: safeguard, contextTokens: 12000, reserveTokensFloor: 2000, keepRecentTokens: 1500}
compact_at: turn:3
"""

LOOP = textwrap.dedent("""
    import sys
    from pathlib import Path
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite
    suite = load_suite(Path(sys.argv[1]))
    part, parts = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (0, 1)
    recordings = suite.recordings[part::parts]
    outcomes = [run_item(suite.scenarios[0], r, RunOptions()).outcome for r in recordings]
    print(len(outcomes), outcomes.count("passed"))
""")


def make_sessions(root: Path, count: int) -> Path:
    """`root/recordings/s-N.jsonl` + cassettes and `root/suites/bench.yaml`; returns the suite."""
    from bench.cases.pipeline_scaling import write_leaf_cassette
    from bench.generate import write_transcript

    recordings = root / "recordings"
    recordings.mkdir(parents=True, exist_ok=True)
    for seed in range(count):
        path = recordings / f"s-{seed:04d}.jsonl"
        if path.exists():
            continue
        write_transcript(path, seed, entries=ENTRIES)
        write_leaf_cassette(path)
    suites = root / "suites"
    suites.mkdir(exist_ok=True)
    (suites / "bench.yaml").write_text(SUITE, encoding="utf-8")
    return suites / "bench.yaml"


#: as many tests as sessions, each doing nothing: what pytest and xdist cost without replaylab
NOOP_TESTS = """import pytest


@pytest.mark.parametrize("i", range({count}))
def test_nothing(i):
    pass
"""


def _noop_tests(root: Path, count: int) -> Path:
    path = root / "noop" / "test_nothing.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NOOP_TESTS.format(count=count), encoding="utf-8")
    return path


def _pytest(root: Path, *extra: str, noop: Path | None = None) -> None:
    """pytest with replaylab's plugin (and xdist's for `-n`) and no other: plugins a development
    environment happens to hold are not replaylab's cost (hypothesis's imports all of hypothesis
    in every terminal summary).

    `--basetemp` in the bench's own folder: without it, an xdist controller makes a numbered
    folder in pytest's temporary root for its workers, and at the end of its session pytest
    deletes the numbered folders beyond the last three — those of earlier test sessions, large
    after a run of replaylab's tests. Unlinking them can take seconds of a sample, a cost of
    whatever ran on the machine before, not of the run.

    `noop`: run that file of tests doing nothing instead of the suite, without replaylab."""
    env = {k: v for k, v in checkout_env().items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    plugins = [*([] if noop else ["-p", "replaylab.pytest_plugin"]), *(["-p", "xdist.plugin"] if "-n" in extra else [])]
    target = [str(noop)] if noop else ["--replaylab", "suites/bench.yaml", "--replaylab-report", str(root / "reports")]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *plugins,
            *target,
            "--basetemp",
            str(root / "pytest-basetemp"),
            *extra,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode not in ((0,) if noop else (0, 1)):
        raise RuntimeError(
            f"pytest {' '.join(target)} exited {done.returncode}: {done.stdout[-800:]}{done.stderr[-800:]}"
        )


def _loop(suite: Path, parts: int = 1) -> None:
    """The `run_item` loop in a plain Python process; with `parts` > 1, that many processes at
    once, each over its share of the sessions (no pytest, no xdist, nothing shared)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOOP, str(suite), str(part), str(parts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=checkout_env(),
        )
        for part in range(parts)
    ]
    for proc in procs:
        _, stderr = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"pipeline loop failed: {stderr[-800:]}")


def run(ctx: Context) -> list[dict[str, Any]]:
    import orjson

    from replaylab.cassette import cassette_path_for
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite
    from replaylab.transcript import load_transcript

    count = QUICK if ctx.quick else FULL
    # all the run's repeats, not 3: on a shared machine one sample of the floor can move a lot
    # between rounds, and a median of 3 is one sample away from either end
    repeats = 1 if ctx.quick else ctx.repeats
    root = ctx.workdir / f"pipeline-{count}"
    suite_path = make_sessions(root, count)
    suite = load_suite(suite_path)
    scenario, recordings = suite.scenarios[0], suite.recordings
    outcomes: dict[Path, str] = {}  # each session's outcome in the latest pass

    def pipeline(part: list[Path]) -> None:
        for recording in part:
            outcomes[recording] = run_item(scenario, recording, RunOptions()).outcome

    def load_all(part: list[Path]) -> None:
        for recording in part:
            load_transcript(recording)

    def load_sessions(part: list[Path]) -> None:
        """A session is its transcript and its cassette: the transcript loaded, the cassette's
        bytes parsed bare (orjson, no checks) — for the second, informational ratio."""
        for recording in part:
            load_transcript(recording)
            orjson.loads(cassette_path_for(recording).read_bytes())

    out = []
    # chunk by chunk (`interleaved`): the pipeline takes many times its floor, so whole runs of
    # each would see the machine at different speeds
    samples = interleaved(
        {"pipeline": pipeline, "load": load_all, "sessions": load_sessions}, list(recordings), repeats
    )
    median = {k: sorted(v)[len(v) // 2] for k, v in samples.items()}
    ratio = median["pipeline"] / median["load"]
    out.append(
        result(
            "pipeline-1000",
            f"full pipeline per τ²-sized session ×{count} vs loading them",
            subject=samples["pipeline"],
            floor=samples["load"],
            floor_what="load_transcript of the same files",
            target="≤ 5× floor",
            checks=[check("ratio", ratio, "<=", 5.0, "×")],
            details={
                "sessions": count,
                "outcomes": dict(Counter(outcomes.values())),
                "entries_per_session": ENTRIES,
                "session_load_median_s": median["sessions"],
                "ratio_vs_transcript_and_cassette_load": median["pipeline"] / median["sessions"],
                "note": f"{median['pipeline'] / median['sessions']:.2f}× loading whole sessions "
                "(transcript + a bare orjson parse of its cassette)",
            },
        )
    )

    if not ctx.wants("pytest-1000") and not ctx.wants("xdist-n2"):
        return out
    samples = round_robin({"pytest": lambda: _pytest(root), "loop": lambda: _loop(suite_path)}, repeats, warmup=False)
    median = {k: sorted(v)[len(v) // 2] for k, v in samples.items()}
    allowed = 1.3 * median["loop"] + 1.0
    out.append(
        result(
            "pytest-1000",
            f"pytest --replaylab over {count} items vs the pipeline in a plain loop",
            subject=samples["pytest"],
            floor=samples["loop"],
            floor_what="run_item loop in one python process",
            target="≤ 1.3× floor + 1 s",
            checks=[check("seconds", median["pytest"], "<=", round(allowed, 3), "s")],
            details={"allowed_s": allowed},
        )
    )

    if not ctx.wants("xdist-n2"):
        return out
    noop = _noop_tests(root, count)
    samples = round_robin(
        {
            "xdist": lambda: _pytest(root, "-n", "2"),
            "serial": lambda: _pytest(root),
            "halves": lambda: _loop(suite_path, parts=2),
            "loop": lambda: _loop(suite_path),
            "noop_xdist": lambda: _pytest(root, "-n", "2", noop=noop),
            "noop_serial": lambda: _pytest(root, noop=noop),
        },
        repeats,
        warmup=False,
    )
    median = {k: sorted(v)[len(v) // 2] for k, v in samples.items()}
    ratio = median["xdist"] / median["serial"]
    ceiling = median["halves"] / median["loop"]
    xdist_cost = median["noop_xdist"] - median["noop_serial"]
    predicted = (ceiling * median["serial"] + xdist_cost) / median["serial"]
    out.append(
        result(
            "xdist-n2",
            f"pytest --replaylab -n 2 over {count} items vs no xdist",
            subject=samples["xdist"],
            floor=samples["serial"],
            floor_what="the same run without xdist",
            target="≤ 0.6× floor",
            checks=[check("ratio", ratio, "<=", 0.6, "×")],
            details={
                "cores": os.cpu_count(),
                # what two processes gain on the machine running the bench, with nothing to coordinate:
                # the plain loop split over two processes at once vs one process
                "parallel_ceiling": ceiling,
                "halves_median_s": median["halves"],
                "loop_median_s": median["loop"],
                # what xdist costs by itself: -n 2 minus serial over as many no-op tests
                "xdist_cost_s": xdist_cost,
                "noop_tests": count,
                "noop_xdist_median_s": median["noop_xdist"],
                "noop_serial_median_s": median["noop_serial"],
                "predicted_ratio": predicted,
                "samples_s": {name: samples[name] for name in ("halves", "loop", "noop_xdist", "noop_serial")},
                "note": f"this machine's parallel ceiling: the plain loop in two processes at once "
                f"takes {ceiling:.2f}× the loop in one; xdist alone adds {xdist_cost:.2f} s "
                f"over {count} tests that do nothing; the two predict {predicted:.2f}×",
            },
        )
    )
    return out
