"""pass^k: one verdict over the k repeats of an item, and whom a failure is to blame on."""

from __future__ import annotations

from replaylab.checks.item import deduplicated
from replaylab.results import ItemResult
from replaylab.suite import Expectations
from replaylab.verdict import verdict


def combined_repeats(runs: list[ItemResult], expect: Expectations, *, strict: bool) -> ItemResult:
    """The first run, judged again over all `runs`: a failure is model variance when the baseline
    runs differ from each other, compaction's doing when the baselines agree and only compacted
    runs fail."""
    first = runs[0]
    passes = sum(1 for r in runs if r.outcome == "passed")
    baselines = {r.baseline.model_dump_json() if r.baseline else "" for r in runs}
    compacted = {r.compacted.model_dump_json() if r.compacted else "" for r in runs}
    failing = [r for r in runs if r.outcome in ("failed", "error")]
    attribution = "none"
    if failing:
        attribution = (
            "model variance (baseline repeats differ)" if len(baselines) > 1 else "compaction (baselines agree)"
        )
    defects = deduplicated(d for r in runs for d in r.defects)
    exercised = any(r.outcome != "skipped" for r in runs)
    final = verdict(
        defects,
        expect,
        exercised=exercised,
        strict=strict,
        not_exercised_reason=first.reason or "no compaction happened",
    )
    return first.model_copy(
        update={
            "repeats": {
                "k": len(runs),
                "passes": passes,
                "pass_k": passes == len(runs),
                "baseline_variants": len(baselines),
                "compacted_variants": len(compacted),
                "failure_attribution": attribution,
            },
            "defects": defects,
            "outcome": final.outcome,
            "missing_expected": final.missing_expected,
            "reason": f"{final.reason} (pass^{len(runs)} = {passes}/{len(runs)}; failures: {attribution})",
        }
    )
