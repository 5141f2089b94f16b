"""HTML report for 1,000 sessions: rendered ≤ 3 s, file ≤ 10 MB, opens in headless Chromium.

Input: a `RunReport` of 1,000 τ²-sized items built from the real report models (90 % passed,
7 % failed with blocking and regression defects, a divergence and both run traces, 2 % error,
1 % skipped; windows of ~30 messages before / ~12 after compaction with protected entries,
ledgers of 0–6 mutating events, summaries of ~1.5 KB). Subject: `render_html(report)`; floor:
`report.model_dump_json()` of the same data (what any serializer of the report must spend).
The file comes from `write_reports`; Chromium loads it with `--dump-dom` and the last session's
id must be in the DOM (`--quick`: 50 sessions). Absolute limits here are a benchmark's targets,
never a test assertion.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from typing import Any

from bench.cases.common import Context, check, result, round_robin

NAME = "html-report"
FULL, QUICK = 1_000, 50
MAX_RENDER_S, MAX_BYTES = 3.0, 10_000_000


def build_report(count: int, seed: int = 7) -> Any:
    from replaylab import __version__
    from replaylab.defects import Code, Defect
    from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
    from replaylab.report.merge import compute_totals
    from replaylab.results import (
        CompactionView,
        Divergence,
        ItemResult,
        QualityGuardView,
        RunMeta,
        RunReport,
        WindowItem,
    )
    from replaylab.safety.ledger import LedgerEvent, LedgerView

    rng = random.Random(seed)
    words = "order refund ticket flight booking customer invoice reservation account change cancel status".split()

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    def window(n: int, protected: set[str]) -> list[WindowItem]:
        roles = ("user", "assistant", "toolResult")
        out = []
        for i in range(n):
            eid = f"e{i:03d}"
            body = text(rng.randint(10, 120))
            out.append(
                WindowItem(
                    entry_id=eid,
                    role=roles[i % 3],
                    text=body,
                    tokens=len(body) // 4,
                    protected=eid in protected,
                    mutating=eid in protected,
                )
            )
        return out

    def ledger(ids: list[str]) -> LedgerView:
        return LedgerView(
            replay_safe=not ids,
            mutated_event_ids=ids,
            events=[
                LedgerEvent(
                    event_id=i,
                    entry_id=f"e{n:03d}",
                    tool_call_id=i,
                    tool="update_reservation",
                    tool_class="write",
                    args_hash=f"{n:016x}",
                    result_entry_id=f"e{n + 1:03d}",
                )
                for n, i in enumerate(ids)
            ],
        )

    def trace(label: str) -> RunTrace:
        turns = []
        for t in range(1, 6):
            calls = [
                ToolCallTrace(
                    turn=t,
                    step=s,
                    tool_call_id=f"call_{t}_{s}",
                    tool=rng.choice(words),
                    arguments={"id": f"R-{rng.randint(1000, 9999)}", "note": text(6)},
                    result=text(30),
                    mutating=s == 0 and t == 3,
                )
                for s in range(rng.randint(0, 3))
            ]
            turns.append(
                TurnTrace(
                    turn=t,
                    user_text=text(15),
                    answer=text(25),
                    tool_calls=calls,
                    context_tokens=[rng.randint(2000, 9000) for _ in calls],
                )
            )
        return RunTrace(label=label, turns=turns)

    items = []
    for n in range(count):
        roll = rng.random()
        outcome = "passed" if roll < 0.90 else "failed" if roll < 0.97 else "error" if roll < 0.99 else "skipped"
        mutated = [f"call_m{n}_{k}" for k in range(rng.randint(0, 6))]
        protected = {f"e{k:03d}" for k in range(0, 30, 7)}
        item = ItemResult(
            id=f"tau2-airline::session-{n:04d}::safeguard",
            suite="tau2-airline",
            scenario="safeguard",
            recording=f"recordings/tau2/session-{n:04d}.jsonl",
            outcome=outcome,
            ledger_before=ledger(mutated),
            ledger_after=ledger(mutated),
            window_before=window(30, protected),
            window_after=window(12, protected),
            compaction=CompactionView(
                mode="safeguard",
                success=True,
                original_tokens=9000,
                compacted_tokens=3500,
                token_saved=5500,
                protected_entry_ids=sorted(protected),
                compaction_event_id=f"c{n}",
                summary_text="## Decisions\n" + text(250),
                quality_guard=QualityGuardView(ok=True, attempts=1),
            ),
            recording_sha256=f"{n:064x}",
            cassette_sha256=f"{n + 1:064x}",
            duration_s=rng.random(),
        )
        if outcome == "failed":
            item.defects = [
                Defect.of(
                    Code.MUTATION_DROPPED,
                    f"mutating entry e007 missing from the window ({text(8)})",
                    entry_id="e007",
                    tool_call_id="call_3_0",
                    expected="in window",
                    actual="absent",
                ),
                Defect.of(
                    Code.TOOL_SEQUENCE_DIVERGED,
                    "update_reservation arguments differ",
                    turn=3,
                    tool_call_id="call_3_0",
                    tool="update_reservation",
                    expected={"id": "R-1"},
                    actual={"id": "<lost>"},
                ),
            ]
            item.baseline, item.compacted = trace("baseline"), trace("compacted")
            item.first_divergence = Divergence(
                turn=3, step=0, what="tool call", baseline={"id": "R-1"}, compacted={"id": "<lost>"}
            )
            item.reason = "1 blocking defect, 1 regression"
        elif outcome == "error":
            item.defects = [Defect.of(Code.BASELINE_DRIFT, "turn 1: answer differs from the recording", turn=1)]
            item.reason = "baseline drift"
        elif outcome == "skipped":
            item.reason = "not exercised: no compaction happened"
        items.append(item)
    items.sort(key=lambda i: i.id)
    meta = RunMeta(replaylab_version=__version__, model="replay", mode="safeguard", python="3.11")
    return RunReport(meta=meta, totals=compute_totals(items), items=items)


def open_in_chromium(path: Any, workdir: Any) -> tuple[bool, float, str]:
    """Load the file in headless Chromium: (it loaded, seconds, the DOM Chromium built)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={workdir / 'chromium-profile'}",
        "--dump-dom",
        path.as_uri(),
    ]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):  # no Chromium here: the check fails, the run goes on
        return False, time.perf_counter() - start, ""
    return proc.returncode == 0 and "<html" in proc.stdout, time.perf_counter() - start, proc.stdout


def run(ctx: Context) -> list[dict[str, Any]]:
    from replaylab.report import write_reports
    from replaylab.report.html import render_html

    count = QUICK if ctx.quick else FULL
    report = build_report(count)
    times = round_robin(
        {"floor": report.model_dump_json, "subject": lambda: render_html(report)},
        max(2, ctx.repeats // 2) if not ctx.quick else ctx.repeats,
    )
    out_dir = ctx.fresh("html-report")
    paths = write_reports(report, out_dir)
    html_path = paths["html"]
    size = html_path.stat().st_size
    last_id = report.items[-1].id
    opened, browser_s, dom = open_in_chromium(html_path, ctx.workdir)
    import statistics

    median = statistics.median(times["subject"])
    return [
        result(
            NAME,
            f"HTML report for {count:,} sessions: render_html",
            subject=times["subject"],
            floor=times["floor"],
            floor_what="RunReport.model_dump_json() of the same data",
            target=f"render ≤ {MAX_RENDER_S} s, file ≤ {MAX_BYTES / 1e6:.0f} MB, opens in headless Chromium",
            checks=[
                check("render_s", median, "<=", MAX_RENDER_S, "s"),
                check("file_bytes", float(size), "<=", float(MAX_BYTES), "B"),
                check("opens_in_chromium", float(opened and last_id in dom), ">=", 1.0),
            ],
            details={
                "sessions": count,
                "html_bytes": size,
                "chromium_s": browser_s,
                "chromium_dom_bytes": len(dom),
                "json_bytes": paths["json"].stat().st_size,
            },
        )
    ]
