"""`python -m bench.huge_session [--entries 200000]`: one huge OpenClaw-shaped session through the
whole pipeline, as a user runs it, with the agent's window check on.

Generates a seeded session (`bench.generate`, header version 4: OpenClaw 2026.9.6's, whose profile
then judges it) with its recorded-tool cassette and a suite over it in a temp folder, then runs
`pytest --replaylab <suite> --replaylab-verify-windows on -v` there, its output streamed as it
comes, each line after the seconds since the run began (the progress lines a long item prints
under -v included: the phases and where the time goes). The suite is the scaling bench's
(`bench.cases.pipeline_scaling`: mode auto, compacted once mid-way, before the turn where the
window is largest) unless `--compact-at` names another point (`auto`, `every:N`, `turn:N`).

Printed at the end: the wall time of the pytest run, its CPU (user + sys of pytest and every
process it waited for, node's oracle included) and its peak RSS (the largest single process, not
a sum), both `getrusage(RUSAGE_CHILDREN)` of a small wrapper process whose only child is pytest:
Linux starts a child's `ru_maxrss` at its parent's size, and this process holds the generated
session; this process's own peak (generation), the load average before and after, and the
outcome line pytest printed.
Nothing is asserted: the figures are for reading (speed is measured, not asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python bench/huge_session.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases.common import checkout_env
from bench.cases.pipeline_scaling import (
    CONTEXT_TOKENS,
    KEEP_RECENT_TOKENS,
    MODE,
    RESERVE_TOKENS,
    mid_turn,
    write_session,
)

#: OpenClaw 2026.9.6's session header version (`replaylab.upstream.openclaw_2026_9_6` claims it)
OPENCLAW_HEADER_VERSION = 4


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.huge_session", description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=200_000, help="entries of the session (default 200,000)")
    p.add_argument("--seed", type=int, default=38)
    p.add_argument("--compact-at", default="mid", help="mid (default: one compaction mid-way), auto, every:N, turn:N")
    p.add_argument("--agent", default=None, help="judge it under this profile (default: the header's, OpenClaw)")
    p.add_argument("--verify", default="on", choices=("on", "auto", "off"), help="the agent window check")
    p.add_argument("--keep", action="store_true", help="keep the temp folder (prints where)")
    p.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="run pytest under cProfile, its stats into FILE, the top functions printed (slower: not the figures)",
    )
    return p.parse_args(argv)


def rusage(who: int) -> dict[str, float]:
    usage = resource.getrusage(who)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": float(usage.ru_maxrss)}


#: runs argv[2:] and writes its CPU and peak RSS (its own and its waited-for children's) to argv[1]
WRAPPER = """
import json, resource, subprocess, sys
status = subprocess.call(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump({"cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}, out)
sys.exit(status)
"""


def write_inputs(root: Path, entries: int, seed: int, compact_at: str) -> tuple[Path, str]:
    """The session, its cassette and `root/suite.yaml`; returns the suite and its compaction point."""
    recording = write_session(root, entries, seed, version=OPENCLAW_HEADER_VERSION)
    point = f"turn:{mid_turn(recording)}" if compact_at == "mid" else compact_at
    suite = root / "suite.yaml"
    suite.write_text(
        f"name: huge\nrecordings: {recording.name}\n"
        f"compaction: {{mode: {MODE}, contextTokens: {CONTEXT_TOKENS}, reserveTokensFloor: {RESERVE_TOKENS}, "
        f"keepRecentTokens: {KEEP_RECENT_TOKENS}}}\ncompact_at: {point}\n",
        encoding="utf-8",
    )
    return suite, point


def run_pytest(
    root: Path, suite: Path, verify: str, agent: str | None, profile: Path | None = None
) -> tuple[int, list[str]]:
    """`pytest --replaylab` over the suite, its lines echoed as they come, each after the seconds
    since the run began; (exit status, lines)."""
    env = {k: v for k, v in checkout_env().items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # replaylab's plugin alone (as the bench's pytest rows)
    command = [
        sys.executable,
        "-c",
        WRAPPER,
        str(root / "rusage.json"),
        sys.executable,
        *(["-m", "cProfile", "-o", str(profile.resolve())] if profile else []),
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "replaylab.pytest_plugin",
        "-v",  # the progress lines of a long item are shown under -v
        "--replaylab",
        str(suite),
        "--replaylab-verify-windows",
        verify,
        "--replaylab-report",
        str(root / "reports"),
        "--basetemp",
        str(root / "pytest-basetemp"),
        *(["--replaylab-agent", agent] if agent else []),
    ]
    lines: list[str] = []
    started = time.perf_counter()
    with subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # each line with the seconds since pytest started: where the time goes
            lines.append(line.rstrip("\n"))
            print(f"{time.perf_counter() - started:7.1f}s | {line}", end="", flush=True)
    return proc.returncode, lines


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    load_before = os.getloadavg()
    started = time.perf_counter()
    suite, point = write_inputs(root, args.entries, args.seed, args.compact_at)
    generated_s = time.perf_counter() - started
    recording = next(root.glob("big-*.jsonl"))
    print(
        f"generated {recording.name} ({recording.stat().st_size / 1e6:.0f} MB, header version "
        f"{OPENCLAW_HEADER_VERSION}) in {generated_s:.1f} s; compact_at {point}",
        flush=True,
    )
    started = time.perf_counter()
    status, lines = run_pytest(root, suite, args.verify, args.agent, args.profile)
    wall_s = time.perf_counter() - started
    measured = root / "rusage.json"
    after = json.loads(measured.read_text()) if measured.is_file() else {"cpu_s": float("nan"), "maxrss_kib": 0}
    return {
        "entries": args.entries,
        "file_bytes": recording.stat().st_size,
        "compact_at": point,
        "generate_s": generated_s,
        "exit_status": status,
        "wall_s": wall_s,
        "cpu_s": after["cpu_s"],
        # ru_maxrss of the wrapper's children is the largest one's peak (KiB on Linux): pytest's, or node's
        "children_peak_rss_bytes": int(after["maxrss_kib"] * 1024),
        "self_peak_rss_bytes": int(rusage(resource.RUSAGE_SELF)["maxrss_kib"] * 1024),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "progress_lines": sum(1 for line in lines if line.startswith("replaylab: ") and "  " in line),
        "summary": [line for line in lines if line.startswith("replaylab: ")][-3:],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="replaylab-huge-"))
    try:
        figures = measure(args, root)
    finally:
        if args.keep:
            print(f"inputs kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"\n{figures['entries']:,} entries ({figures['file_bytes'] / 1e6:.0f} MB), compact_at {figures['compact_at']}, "
        f"window check {args.verify}: pytest exit {figures['exit_status']}\n"
        f"  wall {figures['wall_s']:.1f} s, CPU {figures['cpu_s']:.1f} s (user + sys, pytest and its children), "
        f"peak RSS {figures['children_peak_rss_bytes'] / 2**20:,.0f} MiB (largest child), "
        f"generation {figures['generate_s']:.1f} s (peak RSS here {figures['self_peak_rss_bytes'] / 2**20:,.0f} MiB)\n"
        f"  load average {' '.join(f'{x:.2f}' for x in figures['load_before'])} before, "
        f"{' '.join(f'{x:.2f}' for x in figures['load_after'])} after; {figures['progress_lines']} progress lines"
    )
    if args.profile:
        import pstats

        print(f"\ncProfile of the pytest run ({args.profile}), by cumulative time:")
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats(40)
    return 0 if figures["exit_status"] in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
