"""The golden results: what every item of three corpora gives, as a fingerprint per item.

A fingerprint is the item's outcome and defect codes (readable, so a reviewed diff says what
changed) plus a sha256 of each part of its result: reason, defects with their messages and
evidence, ledgers, windows, compaction and summary, both runs, the first divergence and the
diagnostics. Paths that depend on where the run happens are normalised before hashing.

Corpora:

* ``bundled``: every item of ``suites/*.yaml`` (the bundled helpdesk recordings);
* ``bench``: the benchmark's generated τ²-sized sessions (`bench.cases.pipeline.make_sessions`);
* ``realdata``: every real session of ``../shared/data``, imported by replaylab's importers into
  a scratch folder, under the real-session sweep's first scenario. Its golden file holds only
  outcomes, codes and digests — nothing of the sessions' text — because nothing derived from the
  shared data may be committed in readable form.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent
BENCH_SESSIONS = 120
PARTS = (
    "reason",
    "defects",
    "missing_expected",
    "ledger_before",
    "ledger_after",
    "window_before",
    "window_after",
    "compaction",
    "baseline",
    "compacted",
    "first_divergence",
    "repeats",
    "diagnostics",
    "lost_values",
)


def golden_file(corpus: str) -> Path:
    return GOLDEN / f"{corpus}.json"


def fingerprint(result: Any, roots: Iterable[Path]) -> dict[str, Any]:
    """Outcome, defect codes with where they are, and a digest per part of `result`."""
    data = result.model_dump(mode="json")
    digests = {}
    for part in PARTS:
        raw = orjson.dumps(data.get(part), option=orjson.OPT_SORT_KEYS).decode()
        for root in roots:  # deepest first: a scratch folder may sit inside the repository
            raw = raw.replace(str(root), "<root>")
        digests[part] = hashlib.sha256(raw.encode()).hexdigest()[:16]
    return {
        "outcome": data["outcome"],
        "defects": [
            f"{d['code']}@{d['where'].get('entry_id')}/{d['where'].get('turn')}/{d['where'].get('tool_call_id')}"
            for d in data["defects"]
        ],
        "sha256": digests,
    }


def _run(job: tuple[str, Any, str, list[str]]) -> tuple[str, dict[str, Any]]:
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    key, scenario, recording, roots = job
    result = run_item(scenario, Path(recording), RunOptions())
    return key, fingerprint(result, [Path(r) for r in roots])


def run_jobs(jobs: list[tuple[str, Any, str, list[str]]], workers: int = 2) -> dict[str, dict[str, Any]]:
    if workers > 1 and len(jobs) > 20:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return dict(sorted(pool.map(_run, jobs, chunksize=4)))
    return dict(sorted(map(_run, jobs)))


def _roots(*paths: Path) -> list[str]:
    found = {str(p.resolve()) for p in paths} | {str(p) for p in paths}
    return sorted(found, key=len, reverse=True)


def bundled_jobs() -> list[tuple[str, Any, str, list[str]]]:
    from replaylab.qa.pipeline import item_id
    from replaylab.suite import load_suite

    jobs = []
    for suite_file in sorted((REPO / "suites").glob("*.yaml")):
        suite = load_suite(suite_file)
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                jobs.append((item_id(recording, scenario), scenario, str(recording), _roots(REPO)))
    return jobs


def bench_jobs(scratch: Path, count: int = BENCH_SESSIONS) -> list[tuple[str, Any, str, list[str]]]:
    from bench.cases.pipeline import make_sessions
    from replaylab.suite import load_suite

    suite = load_suite(make_sessions(scratch, count))
    scenario = suite.scenarios[0]
    return [(recording.name, scenario, str(recording), _roots(scratch, REPO)) for recording in suite.recordings]


def realdata_jobs(shared: Path, scratch: Path) -> tuple[list[tuple[str, Any, str, list[str]]], dict[str, Any]]:
    """(jobs, the sessions the sweep scenario does not compact, with why)."""
    from replaylab.qa.sweep import import_shared_data, sweep_scenario

    jobs, skipped = [], {}
    for session in import_shared_data(shared, scratch):
        path = Path(session.path)
        key = f"{session.source}/{path.name}"
        scenario, compact_at, _budget, _tokens = sweep_scenario(path, session.source)
        if scenario is None:
            skipped[key] = {"outcome": "not run", "reason_sha256": hashlib.sha256(compact_at.encode()).hexdigest()[:16]}
        else:
            jobs.append((key, scenario, str(path), _roots(scratch, shared, REPO)))
    return jobs, skipped


def dump(results: dict[str, Any]) -> bytes:
    """One item per line, sorted: a behavioural change is a readable diff of a few lines."""
    lines = [
        orjson.dumps(key).decode() + ": " + orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        for key, value in sorted(results.items())
    ]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode()


def differences(expected: dict[str, Any], actual: dict[str, Any], limit: int = 25) -> list[str]:
    """What differs, item by item, part by part (the first `limit`)."""
    out = []
    for key in sorted(set(expected) | set(actual)):
        if key not in actual:
            out.append(f"{key}: missing now")
        elif key not in expected:
            out.append(f"{key}: new item")
        elif expected[key] != actual[key]:
            old, new = expected[key], actual[key]
            what = [k for k in ("outcome", "defects") if old.get(k) != new.get(k)]
            what += [f"sha256.{p}" for p in PARTS if old.get("sha256", {}).get(p) != new.get("sha256", {}).get(p)]
            detail = f" ({old.get('outcome')} → {new.get('outcome')})" if "outcome" in what else ""
            out.append(f"{key}: {', '.join(what) or 'differs'}{detail}")
    return out[:limit] + ([f"… and {len(out) - limit} more"] if len(out) > limit else [])
