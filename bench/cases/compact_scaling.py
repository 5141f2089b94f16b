"""`compact()` in safeguard mode on transcripts of 1k, 10k and 100k entries: is it linear?

No floor: the target is the log-log slope of median time vs entries (least squares over the
three sizes) ≤ 1.1. The reported ratio is t(largest) / (t(smallest) × size ratio), i.e. the time of
the largest run against a linear extrapolation of the smallest (1.0 = exactly linear).

Each call compacts the generated recording into a fresh working copy (compact() never writes the
recording). Sizes: 1k / 10k / 100k entries (≈2.4 KB per entry, a compaction every ≈150k tokens,
so the window stays bounded while the history grows); `--quick`: 300 / 1k / 3k.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

from bench.cases.common import Context, check, pending, result

NAME = "compact-scaling"
TITLE = "compact() safeguard on 1k / 10k / 100k entries: log-log slope of time vs entries"
TARGET = "slope ≤ 1.1"
FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300, 1_000, 3_000)


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) over log(x)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def run(ctx: Context) -> list[dict[str, Any]]:
    try:
        from replaylab.compaction import CompactParams, compact
    except ImportError as exc:
        return [pending(NAME, TITLE, TARGET, f"not available yet: replaylab.compaction.compact ({exc})")]
    sizes = QUICK_SIZES if ctx.quick else FULL_SIZES
    medians: list[float] = []
    per_size: dict[str, Any] = {}
    for n in sizes:
        info = ctx.transcript(2, entries=n)
        repeats = 2 if ctx.quick else ctx.repeats if n < 50_000 else max(2, ctx.repeats // 2)
        samples: list[float] = []
        outcome = None
        for i in range(repeats + 1):  # the first run warms up (imports, page cache)
            params = CompactParams(
                session_file=str(info.path),
                compaction_mode="safeguard",
                working_copy=str(ctx.fresh(f"compact-{n}", ".jsonl")),
            )
            start = time.perf_counter()
            outcome = compact(params)
            elapsed = time.perf_counter() - start
            if i:
                samples.append(elapsed)
        assert outcome is not None
        medians.append(statistics.median(samples))
        per_size[str(info.entries)] = {
            "median_s": medians[-1],
            "min_s": min(samples),
            "max_s": max(samples),
            "repeats": len(samples),
            "samples_s": list(samples),
            "file_bytes": info.bytes,
            "success": outcome.success,
            "error": outcome.error,
            "tokens_before": outcome.original_token_count,
            "tokens_after": outcome.compacted_token_count,
        }
    entries = [float(n) for n in per_size]  # the generator finishes the last turn: ≥ n entries
    fitted = slope(entries, medians)
    ratio = medians[-1] / (medians[0] * entries[-1] / entries[0])
    largest = per_size[list(per_size)[-1]]
    out = result(
        NAME,
        TITLE,
        target=TARGET,
        ratio=ratio,
        checks=[check("slope", fitted, "<=", 1.1)],
        details={
            "sizes": per_size,
            "slope": fitted,
            "segment_slopes": [slope(entries[i : i + 2], medians[i : i + 2]) for i in range(len(entries) - 1)],
            "ratio_meaning": "t(largest) / (t(smallest) × size ratio); 1.0 = linear",
        },
    )
    out.update(
        median_s=largest["median_s"],
        min_s=largest["min_s"],
        max_s=largest["max_s"],
        repeats=largest["repeats"],
        samples_s=largest["samples_s"],
    )
    out["floor"] = {
        "what": f"linear extrapolation of the {int(entries[0])}-entry time",
        "median_s": medians[0] * entries[-1] / entries[0],
    }
    return [out]
