"""`python -m bench.differences [--against REV] [--calls N]`: the time per call of `differences`.

Three cases a report meets: a 200-key dict with one difference, an edit whose long `old_string`
differs deep inside, and two equal 200-key dicts (the common case, which must stay cheap). Each is
timed in calls per repeat, the median of the repeats printed per call. With `--against REV` the
module as it is at that git revision is timed in the same run and the ratio printed (now / then),
so a rework is measured against what it replaces on the same machine and load. The first call that
differs is timed apart: it pays for importing deepdiff. Inputs are generated; nothing is written.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

if __package__ in (None, ""):  # `python bench/differences.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases.common import REPO

Case = tuple[str, Any, Any]


def cases() -> list[Case]:
    record = {f"field_{n}": {"id": n, "name": f"item {n}", "tags": ["a", "b"], "score": n / 7} for n in range(200)}
    one_changed = copy.deepcopy(record)
    one_changed["field_150"]["name"] = "item 150 (renamed)"
    text = "".join(f"    line {n:05d}: value = compute(value, {n})\n" for n in range(2000))
    edit = {"path": "src/module.py", "old_string": text, "new_string": text.replace("compute", "calculate")}
    edited = {**edit, "old_string": text.replace("line 01500:", "line 01500 ")}
    return [
        ("200-key dict, one difference", record, one_changed),
        (f"long old_string ({len(text)} chars), one difference", edit, edited),
        ("200-key dict, equal", record, copy.deepcopy(record)),
    ]


def per_call(function: Callable[[Any, Any], Any], expected: Any, actual: Any, calls: int, repeats: int) -> float:
    """Median seconds per call over `repeats` runs of `calls` calls (after one warm-up call)."""
    function(expected, actual)
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function(expected, actual)
        runs.append((time.perf_counter() - start) / calls)
    return statistics.median(runs)


def module_at(revision: str) -> ModuleType:
    """`replaylab/differences.py` as it is at `revision`, loaded under a name of its own."""
    source = subprocess.run(
        ["git", "show", f"{revision}:replaylab/differences.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    name = "bench_differences_then"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    exec(compile(source, f"{revision}:replaylab/differences.py", "exec"), module.__dict__)
    return module


def first_call() -> float:
    """The first differing call in a fresh process: it imports deepdiff when the module uses it."""
    code = (
        "import time; from replaylab.differences import differences; start = time.perf_counter(); "
        "differences({'a': 1}, {'a': 2}); print(time.perf_counter() - start)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.differences", description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also time the module at this git revision")
    parser.add_argument("--calls", type=int, default=50, help="calls per repeat (default 50)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats per case (default 5)")
    args = parser.parse_args(argv)

    from replaylab.differences import differences

    then = module_at(args.against).differences if args.against else None
    print(f"{'case':<46} {'now µs/call':>12}" + (f" {'then µs/call':>13} {'now/then':>9}" if then else ""))
    for label, expected, actual in cases():
        now = per_call(differences, expected, actual, args.calls, args.repeats)
        row = f"{label:<46} {now * 1e6:>12.1f}"
        if then is not None:
            before = per_call(then, expected, actual, args.calls, args.repeats)
            row += f" {before * 1e6:>13.1f} {now / before:>8.2f}x"
        print(row)
    print(f"{'first differing call, fresh process':<46} {first_call() * 1e6:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
