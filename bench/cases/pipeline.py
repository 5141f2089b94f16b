"""Slots for the benchmarks that need the QA pipeline (replaylab.qa.pipeline + the pytest plugin).

They report an explicit "pending" status — never a number — until the lead wires them to the
pipeline. What each one will measure (issue 8):

* `pipeline-1000`: full pipeline (baseline + compact + compacted run + diff) per τ²-sized
  session over 1,000 sessions vs loading the same sessions (`load_transcript`): ≤ 10×.
* `pytest-1000`: `pytest --replaylab` over 1,000 items vs the same pipeline called in a plain
  Python loop: ≤ 1.3× plus ≤ 1 s.
* `xdist-n2`: `pytest --replaylab -n 2` over 1,000 items vs the same run without xdist: ≤ 0.6×.

To fill one in: build the 1,000 inputs in `Context.workdir` (bench.generate has the transcript
and cassette generators), time subject and floor with `common.round_robin`, and return
`common.result(...)` with the target as a `check` — as the other cases do.
"""

from __future__ import annotations

from typing import Any

from bench.cases.common import Context, pending

SLOTS = (
    ("pipeline-1000", "full pipeline per τ²-sized session ×1000 vs loading them", "≤ 10× floor"),
    ("pytest-1000", "pytest --replaylab over 1000 items vs the pipeline in a plain loop", "≤ 1.3× floor + 1 s"),
    ("xdist-n2", "pytest --replaylab -n 2 over 1000 items vs no xdist", "≤ 0.6× floor"),
)


def run(ctx: Context) -> list[dict[str, Any]]:
    return [pending(name, title, target, "pending: needs the QA pipeline (replaylab.qa.pipeline + pytest plugin)")
            for name, title, target in SLOTS]
