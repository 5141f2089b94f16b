"""A run's report assembled from its items: totals, cassette hashes, and the comparison with a
blessed baseline (`--replaylab-bless`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from replaylab import __version__
from replaylab.qa.results import ItemResult, RunMeta, RunReport
from replaylab.report.merge import compute_totals, sort_items
from replaylab.scrub import scrub_text


def build_report(items: list[ItemResult], meta: RunMeta) -> RunReport:
    items = sort_items(items)
    hashes = {item.recording: item.recording_sha256 for item in items if item.recording_sha256}
    hashes.update(
        {
            item.recording.removesuffix(".jsonl") + ".cassette.yaml": item.cassette_sha256
            for item in items
            if item.cassette_sha256
        }
    )
    return RunReport(meta=meta, totals=compute_totals(items), items=items, cassette_hashes=dict(sorted(hashes.items())))


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def compare_with_baseline(report: RunReport, baseline_path: Path) -> list[str]:
    """Items that passed in the blessed baseline and do not pass now (new failures / errors)."""
    if not baseline_path.is_file():
        return []
    try:
        blessed = json.loads(baseline_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"baseline file {baseline_path} is unreadable; bless again with --replaylab-bless"]
    before = blessed.get("items", {})
    out = []
    for item in report.items:
        old = before.get(scrub_text(item.id))  # the baseline file holds the ids scrubbed
        if old and old.get("outcome") == "passed" and item.outcome in ("failed", "error"):
            out.append(f"{item.id}: passed in the baseline, {item.outcome} now ({item.reason})")
        elif old and set(old.get("defects", [])) != {d.code.value for d in item.defects}:
            new = sorted({d.code.value for d in item.defects} - set(old.get("defects", [])))
            if new:
                out.append(f"{item.id}: new defect codes since the baseline: {', '.join(new)}")
    return out


def bless(report: RunReport, baseline_path: Path) -> None:
    data = {
        "schema_version": 1,
        "replaylab_version": __version__,
        "git_sha": report.meta.git_sha,
        "items": {
            scrub_text(item.id): {"outcome": item.outcome, "defects": sorted({d.code.value for d in item.defects})}
            for item in report.items
        },
    }
    baseline_path.parent.mkdir(parents=True, exist_ok=True)
    baseline_path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
