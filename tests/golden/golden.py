"""The golden results: what every item of three corpora gives.

An item's golden result is its outcome and every part of its result: reason, defects with their
messages and evidence, ledgers, windows, compaction and summary, both runs, the first divergence
and the diagnostics. Paths that depend on where the run happens are normalised first.

Corpora:

* ``bundled``: every item of ``suites/*.yaml`` (the bundled helpdesk recordings), one readable
  YAML file per item under ``bundled/<suite>/<recording>.<scenario>.yaml`` holding every part in
  full (a reviewer reads what changed in its diff, as with syrupy's snapshots);
* ``bench``: the benchmark's generated τ²-sized sessions (`bench.cases.pipeline.make_sessions`);
* ``realdata``: every real session of ``../shared/data``, imported by replaylab's importers into
  a scratch folder, under the real-session sweep's first scenario.

The two large corpora keep a fingerprint per item in one JSON file: the outcome and defect codes
(readable) plus a sha256 of each part. The real sessions' file must hold nothing more: nothing
derived from the shared data may be committed in readable form.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import yaml

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
    """The fingerprint file of a large corpus (`bench`, `realdata`)."""
    return GOLDEN / f"{corpus}.json"


def normalised(result: Any, roots: Iterable[Path]) -> dict[str, Any]:
    """The outcome and every part of `result` as JSON data, each root path written `<root>`."""
    data = result.model_dump(mode="json")
    parts: dict[str, Any] = {"outcome": data["outcome"]}
    for part in PARTS:
        raw = orjson.dumps(data.get(part), option=orjson.OPT_SORT_KEYS).decode()
        for root in roots:  # deepest first: a scratch folder may sit inside the repository
            raw = raw.replace(str(root), "<root>")
        parts[part] = orjson.loads(raw)
    return parts


def digest(part: Any) -> str:
    return hashlib.sha256(orjson.dumps(part, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def fingerprint(parts: dict[str, Any]) -> dict[str, Any]:
    """Outcome, defect codes with where they are, and a digest per part of a `normalised` result."""
    return {
        "outcome": parts["outcome"],
        "defects": [
            f"{d['code']}@{d['where'].get('entry_id')}/{d['where'].get('turn')}/{d['where'].get('tool_call_id')}"
            for d in parts["defects"]
        ],
        "sha256": {part: digest(parts[part]) for part in PARTS},
    }


Job = tuple[str, Any, str, list[str]]  # (key, scenario, recording, roots to normalise)


def _result(job: Job) -> tuple[str, Any]:
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    key, scenario, recording, _roots = job
    return key, run_item(scenario, Path(recording), RunOptions())


def _viewed(job: Job, view: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    key, result = _result(job)
    return key, view(normalised(result, [Path(r) for r in job[3]]))


def _map(function: Callable[[Job], tuple[str, Any]], jobs: list[Job], workers: int) -> dict[str, Any]:
    if workers > 1 and len(jobs) > 20:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return dict(sorted(pool.map(function, jobs, chunksize=4)))
    return dict(sorted(map(function, jobs)))


def run_items(jobs: list[Job], workers: int = 2) -> dict[str, Any]:
    """Each job's `ItemResult`, by key."""
    return _map(_result, jobs, workers)


def run_jobs(jobs: list[Job], view: Callable[[dict[str, Any]], dict[str, Any]], workers: int = 2) -> dict[str, Any]:
    """`view` (e.g. `fingerprint`) of each job's `normalised` result, by key."""
    return _map(partial(_viewed, view=view), jobs, workers)


def _roots(*paths: Path) -> list[str]:
    found = {str(p.resolve()) for p in paths} | {str(p) for p in paths}
    return sorted(found, key=len, reverse=True)


def bundled_roots() -> list[str]:
    return _roots(REPO)


def bundled_jobs() -> list[Job]:
    from replaylab.qa.item import item_id
    from replaylab.suite import load_suite

    jobs = []
    for suite_file in sorted((REPO / "suites").glob("*.yaml")):
        suite = load_suite(suite_file)
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                jobs.append((item_id(recording, scenario), scenario, str(recording), bundled_roots()))
    return jobs


def bench_jobs(scratch: Path, count: int = BENCH_SESSIONS) -> list[Job]:
    from bench.cases.pipeline import make_sessions
    from replaylab.suite import load_suite

    suite = load_suite(make_sessions(scratch, count))
    scenario = suite.scenarios[0]
    return [(recording.name, scenario, str(recording), _roots(scratch, REPO)) for recording in suite.recordings]


def realdata_jobs(shared: Path, sessions: list[Any]) -> tuple[list[Job], dict[str, Any]]:
    """(jobs, the sessions the sweep scenario does not compact, with why), of the sessions
    `qa.sweep.import_shared_data` imported from `shared` (each in its source's folder)."""
    from replaylab.qa.sweep import sweep_scenario

    jobs, skipped = [], {}
    scratch = Path(sessions[0].path).parents[1]
    for session in sessions:
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


# The bundled corpus, readable: one YAML file per item.

BUNDLED = GOLDEN / "bundled"
#: keys shown first in a mapping (in this order), then the others by name, then `LAST`: a row reads
#: "where, what, how much", its long text at the end
FIRST = (
    "label", "turn", "step", "id", "entry_id", "event_id", "tool_call_id", "role", "type", "code", "severity",
    "tool", "name", "tool_class", "source", "mode", "success", "tokens",
)  # fmt: skip
LAST = ("arguments", "result", "message", "text", "answer", "summary_text", "content")
#: the parts in the order a reviewer reads them: the verdict first, the long traces last
READABLE_ORDER = (
    "outcome", "reason", "defects", "missing_expected", "compaction", "first_divergence", "lost_values",
    "repeats", "diagnostics", "ledger_before", "ledger_after", "window_before", "window_after", "baseline",
    "compacted",
)  # fmt: skip


def bundled_file(key: str) -> Path:
    """`<suite>::<recording>::<scenario>` → bundled/<suite>/<recording>.<scenario>.yaml."""
    suite, recording, scenario = key.split("::")
    return BUNDLED / suite / f"{recording}.{scenario}.yaml"


def _key_order(key: str) -> tuple[int, int, str]:
    if key in FIRST:
        return (0, FIRST.index(key), "")
    if key in LAST:
        return (2, LAST.index(key), "")
    return (1, 0, key)


class _Row(dict):
    """A mapping written on one line (`{a: 1, b: x}`): a window message, a ledger event, a call."""


_SCALAR = (str, int, float, bool, type(None))


def _flat(value: Any) -> bool:
    """A scalar, or a list or mapping of scalars."""
    if isinstance(value, dict):
        return all(isinstance(v, _SCALAR) for v in value.values())
    if isinstance(value, list):
        return all(isinstance(v, _SCALAR) for v in value)
    return isinstance(value, _SCALAR)


def _shaped(value: Any) -> Any:
    """`value` with every mapping's keys in `_key_order`; a mapping whose values are all flat and
    hold no text of several lines is a `_Row`."""
    if isinstance(value, dict):
        ordered = {k: _shaped(value[k]) for k in sorted(value, key=_key_order)}
        one_line = all(_flat(v) and not (isinstance(v, str) and "\n" in v) for v in value.values())
        return _Row(ordered) if ordered and one_line else ordered
    if isinstance(value, list):
        return [_shaped(v) for v in value]
    return value


class _Dumper(yaml.CSafeDumper):  # libyaml: the same text as the pure-Python emitter, in a sixth of the time
    pass


def _text(dumper: yaml.CSafeDumper, value: str) -> yaml.ScalarNode:
    # a text of several lines as a literal block (the emitter falls back to quoting when it cannot be)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(_Row, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
_Dumper.add_representer(dict, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=False))
_Dumper.add_representer(list, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=_flat(v)))


def readable(key: str, parts: dict[str, Any]) -> str:
    """The golden file of one bundled item: every part of its `normalised` result, in full."""
    body = yaml.dump(
        {k: _shaped(parts[k]) for k in READABLE_ORDER},
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,  # one row per line: a changed message or event is a one-line diff
    )
    return f"# {key}: its golden result (`pytest tests/golden --update-golden` rewrites it)\n{body}"


def read_readable(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def readable_differences(expected: dict[Path, str], actual: dict[Path, str], limit: int = 60) -> list[str]:
    """The files missing, new or changed, and the first `limit` lines of the changed ones' diff."""
    missing = sorted(set(expected) - set(actual))
    new = sorted(set(actual) - set(expected))
    changed = sorted(p for p in set(expected) & set(actual) if expected[p] != actual[p])
    out = [f"{p.relative_to(GOLDEN)}: no such item now" for p in missing]
    out += [f"{p.relative_to(GOLDEN)}: new item" for p in new]
    out += [f"{p.relative_to(GOLDEN)}: changed" for p in changed]
    diff: list[str] = []
    for path in changed:
        name = str(path.relative_to(GOLDEN))
        diff += difflib.unified_diff(
            expected[path].splitlines(),
            actual[path].splitlines(),
            f"{name} (golden)",
            f"{name} (now)",
            n=1,
            lineterm="",
        )
    if diff:
        out += ["", *(line[:300] for line in diff[:limit])]
        out += [f"… {len(diff) - limit} more lines of diff"] if len(diff) > limit else []
    return out
