"""`python -m bench [--quick | --ci] [--only NAME]` (or `python bench/run.py`): replaylab's benchmarks.

Generates its own inputs (seeded, OpenClaw-shaped, in a temp dir that is removed afterwards),
runs each benchmark several times against a floor measured in the same run, prints a table and
writes `reports/bench.json` (median / min / max, the floor, the ratio, the target, whether it
was met, plus machine info and the git sha). `--quick` is the CI smoke run: small inputs, few
repeats; its numbers prove the harness works, not the targets. `--ci` is `--quick` over the rows
`.ci/run` prints after the tests (`CI_ROWS`, a few seconds each), each ratio beside its target.

Exit status: 0 when every benchmark ran (met, missed, info or pending), 1 when one crashed,
2 on a usage error. A missed target is reported, not an exit status: CI runs `--quick`, whose
small inputs say nothing about the targets.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python bench/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import CASES
from bench.cases.common import REPO, Context, failed

SCHEMA_VERSION = 1
#: the rows `.ci/run` prints after the tests: a few seconds each in `--quick`, so that a
#: regression shows at the commit that made it (ratios against targets, never a failed build)
CI_ROWS = ("pytest-startup", "compact-scaling", "pipeline-1000", "pipeline-scaling", "oracle-check")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: small inputs, few repeats (CI)")
    p.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        default=[],
        help="run only this benchmark (e.g. load-100mb) or case (e.g. cassette_load); repeatable",
    )
    p.add_argument(
        "--ci",
        action="store_true",
        help=f"the quick rows CI prints after the tests ({', '.join(CI_ROWS)}): --quick, those only",
    )
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per benchmark (default 5, quick 3)")
    p.add_argument("--out", type=Path, default=REPO / "reports" / "bench.json", help="JSON output file")
    p.add_argument("--keep", action="store_true", help="keep the generated inputs (prints where)")
    return p.parse_args(argv)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    try:
        with open("/proc/meminfo") as handle:
            info["mem_total_kib"] = int(handle.readline().split()[1])
        info["loadavg_start"] = os.getloadavg()
    except (OSError, ValueError, IndexError):
        pass
    for name in ("orjson", "pydantic", "pydantic_core", "yaml", "pytest"):
        try:
            info[name] = importlib.import_module(name).__version__
        except (ImportError, AttributeError):
            pass
    return info


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def selected(only: list[str]) -> list[str]:
    """Cases to run for `--only` values: a case (module) name or a benchmark name."""
    if not only:
        return list(CASES)
    wanted = {o.replace("_", "-") for o in only}
    return [case for case, names in CASES.items() if case.replace("_", "-") in wanted or wanted.intersection(names)]


def wanted_benchmarks(cases: list[str], only: list[str]) -> frozenset[str]:
    """The benchmark names `--only` asks for (a case name asks for all of its own); empty: all."""
    if not only:
        return frozenset()
    wanted = {o.replace("_", "-") for o in only}
    return frozenset(
        name for case in cases for name in CASES[case] if case.replace("_", "-") in wanted or name in wanted
    )


def run_cases(ctx: Context, cases: list[str], only: list[str]) -> list[dict[str, Any]]:
    wanted = {o.replace("_", "-") for o in only}
    results: list[dict[str, Any]] = []
    for case in cases:
        as_if_alone()
        start = time.perf_counter()
        print(f"… {case}", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(f"bench.cases.{case}")
            records = module.run(ctx)
        except Exception as exc:  # a crashed case is a result too: reported, exit 1
            records = [failed(name, case, "-", exc) for name in CASES[case]]
        for record in records:
            record["case"] = case
            record["case_wall_s"] = time.perf_counter() - start
        if wanted and case.replace("_", "-") not in wanted:  # only the named benchmarks of this case
            records = [r for r in records if r["name"] in wanted]
        results.extend(records)
    return results


def as_if_alone() -> None:
    """The process as a case run alone would find it: replaylab's process caches empty and the
    earlier cases' garbage collected. Why: the cases share one process, and what an earlier
    case left (a big session's parsed cassette, its cyclic garbage) slows every load after it —
    the row then measured the case before it too, and the table differed from the row run alone."""
    from replaylab import caches

    caches.clear()
    gc.collect()


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def table(results: list[dict[str, Any]]) -> str:
    rows = [("benchmark", "median", "min", "max", "floor", "ratio", "min/min", "target", "status")]
    for r in results:
        floor = r.get("floor") or {}
        ratio, by_min = r.get("ratio"), r.get("ratio_of_minimums")
        rows.append(
            (
                r["name"],
                _fmt_s(r.get("median_s")),
                _fmt_s(r.get("min_s")),
                _fmt_s(r.get("max_s")),
                _fmt_s(floor.get("median_s")),
                "-" if ratio is None else f"{ratio:.2f}×",
                "-" if by_min is None else f"{by_min:.2f}×",
                r["target"],
                r["status"] + _check_text(r),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _check_text(record: dict[str, Any]) -> str:
    if record["status"] in ("pending", "error"):
        return f" ({record.get('reason', '')})"
    parts = []
    for c in record.get("checks", []):
        value = c["value"]
        shown = f"{value:.3g}" if isinstance(value, float) else str(value)
        parts.append(f"{c['metric']} {shown}{c.get('unit', '')} {c['op']} {c['limit']:g}{'' if c['met'] else ' ✗'}")
    return f" ({'; '.join(parts)})" if parts else ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.ci:
        args.quick, args.only = True, [*args.only, *CI_ROWS]
    cases = selected(args.only)
    if not cases:
        print(f"no benchmark matches {args.only}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    repeats = args.repeats or (3 if args.quick else 5)
    started = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="replaylab-bench-"))
    try:
        ctx = Context(workdir=workdir, quick=args.quick, repeats=repeats, wanted=wanted_benchmarks(cases, args.only))
        results = run_cases(ctx, cases, args.only)
    finally:
        if args.keep:
            print(f"inputs kept in {workdir}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    document = {
        "schema_version": SCHEMA_VERSION,
        "quick": args.quick,
        "repeats": repeats,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wall_s": time.time() - started,
        "git_sha": git_sha(),
        "machine": machine(),
        "benchmarks": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    print(table(results))
    print(
        "ratio = median / floor median (what the target is checked on); min/min = fastest run / fastest floor "
        "run, a cross-check on a busy machine"
    )
    for r in results:  # a second reference a case measured beside its floor (never the target's)
        if (r.get("details") or {}).get("note"):
            print(f"{r['name']}: {r['details']['note']}")
    print(
        f"\n{len(results)} benchmarks in {document['wall_s']:.1f} s"
        f"{' (quick: smoke run, not the targets)' if args.quick else ''}; written to {args.out}"
    )
    return 1 if any(r["status"] == "error" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
