"""What every benchmark shares: the run context, round-robin timing, child-process RSS, results.

Timing rule: a benchmark and its floor run in the same process, alternately (floor, subject,
floor, subject, ...) after one warm-up each, so a noisy neighbour on a shared machine slows
both alike — in chunks (`interleaved`) where the work splits into many small parts; the ratio of
the medians is what is compared to the target. Absolute times are printed for humans, never
asserted.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.generate import TranscriptInfo, write_cassette_file, write_transcript

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Context:
    """One bench run: where inputs go (a temp dir), how big and how often."""

    workdir: Path
    quick: bool = False
    repeats: int = 5
    #: the benchmarks asked for (`--only`, `--ci`); empty: every one
    wanted: frozenset[str] = frozenset()
    _made: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    def wants(self, name: str) -> bool:
        """Whether benchmark `name` is to run (a case skips the ones that are not)."""
        return not self.wanted or name in self.wanted

    def transcript(self, seed: int, *, entries: int | None = None, target_bytes: int | None = None) -> TranscriptInfo:
        """A generated transcript, made once per run (the big ones are slow to write)."""
        key = ("transcript", seed, entries, target_bytes)
        if key not in self._made:
            size = f"{entries}e" if entries else f"{target_bytes}b"
            self._made[key] = write_transcript(
                self.workdir / f"t-{seed}-{size}.jsonl", seed, entries=entries, target_bytes=target_bytes
            )
        return self._made[key]

    def cassette(self, count: int, seed: int = 0) -> Path:
        key = ("cassette", count, seed)
        if key not in self._made:
            self._made[key] = write_cassette_file(self.workdir / f"c-{seed}-{count}.cassette.yaml", count, seed)
        return self._made[key]

    def fresh(self, stem: str, suffix: str = "") -> Path:
        """A path that does not exist yet (for outputs that refuse to overwrite)."""
        n = 0
        while (path := self.workdir / f"{stem}-{n}{suffix}").exists():
            n += 1
        return path


def checkout_env() -> dict[str, str]:
    """The environment with this checkout first on Python's path, for a child process that imports
    replaylab: the bench times the code it was started from, and a child would otherwise import the
    installed replaylab (another checkout's, when the bench runs from a second work tree)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def summary(samples: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples)}


def round_robin(
    fns: dict[str, Callable[[], object]],
    repeats: int,
    *,
    warmup: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Wall times of each function (`clock`: another clock's), `repeats` times, interleaved (see
    the module docstring)."""
    if warmup:
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = clock()
            fn()
            samples[name].append(clock() - start)
    return samples


def interleaved(
    fns: dict[str, Callable[[list[Any]], object]], items: list[Any], repeats: int, *, chunk: int = 50
) -> dict[str, list[float]]:
    """Wall times of each function over all `items`, `repeats` times, taken chunk by chunk: each
    function runs over the first `chunk` items, then each over the next, ... and a sample is the
    sum of its chunks. The order of the functions turns by one at every chunk, so none always
    runs right after the same other one.

    Why: `round_robin` alternates whole runs, and when a subject takes many times as long as its
    floor, the two samples of a round see the machine at different times. A shared machine's
    speed drifts over tens of seconds, so each ratio would measure whether the machine slowed
    down during the subject or during the floor. Short chunks see both under the same
    conditions. One warm-up of every function over all items first, as `round_robin`."""
    names = list(fns)
    for name in names:
        fns[name](items)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(repeats):
        spent = dict.fromkeys(names, 0.0)
        for k, start in enumerate(range(0, len(items), chunk)):
            part = items[start : start + chunk]
            for name in names[k % len(names) :] + names[: k % len(names)]:
                began = time.perf_counter()
                fns[name](part)
                spent[name] += time.perf_counter() - began
        for name in names:
            samples[name].append(spent[name])
    return samples


def check(metric: str, value: float, op: str, limit: float, unit: str = "") -> dict[str, Any]:
    met = value <= limit if op == "<=" else value >= limit if op == ">=" else value == limit
    return {"metric": metric, "value": value, "op": op, "limit": limit, "unit": unit, "met": bool(met)}


def result(
    name: str,
    title: str,
    *,
    subject: list[float] | None = None,
    floor: list[float] | None = None,
    floor_what: str | None = None,
    ratio: float | None = None,
    target: str,
    checks: list[dict[str, Any]],
    details: dict[str, Any] | None = None,
    info: bool = False,
) -> dict[str, Any]:
    """One benchmark's record in reports/bench.json. `ratio` defaults to median(subject) /
    median(floor). `info`: a reference measurement with no target of its own."""
    out: dict[str, Any] = {"name": name, "title": title, "target": target}
    if subject:
        out.update(summary(subject), repeats=len(subject), samples_s=list(subject))
    if floor:
        out["floor"] = {"what": floor_what, **summary(floor), "samples_s": list(floor)}
        if ratio is None:
            ratio = out["median_s"] / out["floor"]["median_s"]
        # the least disturbed run of each: a cross-check when neighbours load the machine
        out["ratio_of_minimums"] = out["min_s"] / out["floor"]["min_s"]
        if subject and len(subject) == len(floor):
            # each round's subject over the floor run next to it (a cross-check when the machine's
            # speed drifts between rounds; the target is checked on `ratio`)
            out["ratio_of_rounds"] = statistics.median(s / f for s, f in zip(subject, floor))
    out["ratio"] = ratio
    out["checks"] = checks
    out["met"] = None if info else all(c["met"] for c in checks)
    out["status"] = "info" if info else ("met" if out["met"] else "missed")
    out["details"] = details or {}
    return out


def pending(name: str, title: str, target: str, reason: str) -> dict[str, Any]:
    """A slot whose code is not there yet: an explicit status, never a number."""
    return {
        "name": name,
        "title": title,
        "target": target,
        "status": "pending",
        "ratio": None,
        "met": None,
        "checks": [],
        "reason": reason,
        "details": {},
    }


def failed(name: str, title: str, target: str, error: BaseException) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "target": target,
        "status": "error",
        "ratio": None,
        "met": False,
        "checks": [],
        "reason": f"{type(error).__name__}: {error}",
        "details": {},
    }


# ---------------------------------------------------------------- peak memory in a child


RSS_CHILD = textwrap.dedent("""
    import gc, json, resource, sys
    {imports}

    def peak_kib():
        try:
            with open("/proc/self/status") as handle:
                return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:"))
        except (OSError, StopIteration):
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // (1024 if sys.platform == "darwin" else 1)

    gc.collect()
    baseline = peak_kib()
    {body}
    print(json.dumps({{"baseline_kib": baseline, "peak_kib": peak_kib()}}))
""")


def child_peak_rss(imports: str, body: str, path: Path) -> dict[str, int]:
    """Peak RSS a piece of code adds, measured in a fresh child process.

    Method: the child imports what it needs, collects garbage and reads its peak RSS so far (the
    baseline: interpreter plus imports), runs `body` (with `path` bound to the input), reads the
    peak again and prints both; the difference is the peak the work itself added. The peak is
    Linux's `VmHWM` (/proc/self/status), the high-water mark of the process's own memory map,
    which starts afresh at exec. `getrusage().ru_maxrss` is the same mark but Linux carries the
    *parent's* peak across fork + exec into it, so a child of a big benchmark process would
    report the parent's size; it is used only where /proc is missing. A child process, because
    neither mark ever goes down: in this process the earlier benchmarks already raised it."""
    code = f"path = {str(path)!r}\n" + RSS_CHILD.format(imports=imports, body=body.strip())
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"RSS child failed: {proc.stderr[-2000:]}")
    import json

    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "baseline_bytes": data["baseline_kib"] * 1024,
        "peak_bytes": data["peak_kib"] * 1024,
        "added_bytes": (data["peak_kib"] - data["baseline_kib"]) * 1024,
    }


def max_rss_self() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
