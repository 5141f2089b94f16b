"""`pytest --replaylab --collect-only` startup vs bare `pytest --collect-only`, on an empty folder.

Floor: `python -m pytest --collect-only -q -p no:replaylab` (every other installed plugin, xdist
included, still loads). Subject: `python -m pytest --replaylab --collect-only -q` (the plugin
comes from its pytest11 entry point; `-p replaylab.pytest_plugin` is added when the entry point
is not installed). Both in the same empty temp folder, alternately. Target: subject − floor ≤ 0.5 s.

Bytecode caching is on for both (PYTHONPYCACHEPREFIX in the temp dir): see `_env`.

Import check: one more subject run under `python -X importtime`; the benchmark fails when any
`litellm` module shows up there, and lists which heavy modules (vcr, openai, deepdiff, jinja2,
httpx, requests) the startup did import.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from bench.cases.common import REPO, Context, check, result

NAME = "pytest-startup"
TARGET_DELTA_S = 0.5
HEAVY = ("litellm", "openai", "vcr", "deepdiff", "jinja2", "httpx", "requests", "aiohttp")


def _command(replaylab: bool) -> list[str]:
    base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    if not replaylab:
        return base + ["-p", "no:replaylab"]
    registered = any(ep.name == "replaylab" for ep in entry_points(group="pytest11"))
    return base + ["--replaylab"] + ([] if registered else ["-p", "replaylab.pytest_plugin"])


def _env(pycache: Path) -> dict[str, str]:
    """The caller's environment, minus pytest's own variables, with bytecode caching on (into a
    temp dir): pytest rewrites the asserts of every module of a plugin's distribution, and
    without a cache (PYTHONDONTWRITEBYTECODE, set in some sandboxes) it re-parses and recompiles
    all of replaylab's modules on every start, which no user with a default setup pays."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = _env(cwd.parent / "pycache")
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode not in (0, 5):  # 5: no tests collected, which is the point here
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {proc.stdout[-1000:]} {proc.stderr[-1000:]}")
    return proc


def imported_modules(importtime_stderr: str) -> list[str]:
    """Module names from `python -X importtime` output (`import time: self | cumulative | name`)."""
    names = []
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def run(ctx: Context) -> list[dict[str, Any]]:
    import time

    empty = ctx.workdir / "empty-pytest-folder"
    empty.mkdir(exist_ok=True)
    floor_cmd, subject_cmd = _command(False), _command(True)
    _run(floor_cmd, empty)
    _run(subject_cmd, empty)
    samples: dict[str, list[float]] = {"floor": [], "subject": []}
    cpu: dict[str, list[float]] = {"floor": [], "subject": []}
    for _ in range(2 if ctx.quick else ctx.repeats + 2):
        for key, command in (("floor", floor_cmd), ("subject", subject_cmd)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            _run(command, empty)
            samples[key].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[key].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    proc = _run([sys.executable, "-X", "importtime", *subject_cmd[1:]], empty)
    modules = imported_modules(proc.stderr)
    ours = sorted(m for m in modules if m.split(".")[0] == "replaylab")
    litellm = sorted({m for m in modules if m == "litellm" or m.startswith("litellm.")})
    heavy = sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})
    delta = statistics.median(samples["subject"]) - statistics.median(samples["floor"])
    paired = statistics.median(s - f for s, f in zip(samples["subject"], samples["floor"]))
    cpu_delta = statistics.median(cpu["subject"]) - statistics.median(cpu["floor"])
    return [
        result(
            NAME,
            "pytest --replaylab --collect-only startup, empty folder (litellm never imported)",
            subject=samples["subject"],
            floor=samples["floor"],
            floor_what="pytest --collect-only -p no:replaylab, same folder",
            target=f"≤ +{TARGET_DELTA_S} s over the floor; litellm not imported",
            checks=[
                check("delta_s", delta, "<=", TARGET_DELTA_S, "s"),
                check("litellm_modules_imported", float(len(litellm)), "<=", 0.0),
            ],
            details={
                "delta_s": delta,
                "paired_delta_median_s": paired,
                "cpu_delta_s": cpu_delta,
                "cpu_note": "user+sys CPU of the pytest process: what the delta is on an idle machine",
                "litellm_modules": litellm[:20],
                "heavy_packages_imported": heavy,
                "modules_imported": len(modules),
                "replaylab_modules_imported": ours,
                "bytecode_cache": "on (PYTHONPYCACHEPREFIX in the temp dir; PYTHONDONTWRITEBYTECODE unset)",
                "subject_command": " ".join(subject_cmd[1:]),
                "floor_command": " ".join(floor_cmd[1:]),
            },
        )
    ]
