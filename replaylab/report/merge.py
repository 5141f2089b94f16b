"""Merging CI shard (or xdist worker) reports into one run report.

Why recompute instead of adding up: totals are a pure function of the items (`compute_totals`),
so a merged report is identical to the report of the same items run in one process — the
property the shard and xdist tests rely on. Items are sorted by id for the same reason.

A merge refuses inputs that cannot belong to one run (a session in two shards, shards built
from different commits, one cassette with two different hashes) rather than hiding it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.errors import ReplaylabError
from replaylab.input_files import read_regular
from replaylab.report.causes import cause_counts
from replaylab.results import SCHEMA_VERSION, ItemResult, RunMeta, RunReport, Totals

#: older report versions merge and render read. Version 2 numbered turns from 0: read with each
#: turn number moved up by one (`turns_from_one`), it is a version-3 report. Version 1 also differs
#: in the shape of item ids: read as it was written, its version kept, so it is never merged with
#: newer shards and a merged version-1 report reads back the same
OLDER_SCHEMA_VERSIONS = (1, 2)
#: the version whose turn numbers count from 0 and are renumbered on reading
ZERO_BASED_TURNS_VERSION = 2
#: a report is read whole: a bigger file is refused with its size, not a MemoryError
MAX_REPORT_BYTES = 2 << 30


class MergeError(ReplaylabError, ValueError):
    """Shard reports that cannot be merged into one run; the message says which and why."""


def compute_totals(items: Iterable[ItemResult]) -> Totals:
    """Counts by outcome, unexpected blocking defects and regressions, expected findings, and all
    defects by code.

    A finding the suite expects (a negative control's `expect.defects`) is counted in
    `defects_by_code` and `expected_defects`, never in `blocking_defects` or `regression_defects`.
    """
    items = list(items)
    totals = Totals()
    by_code: Counter[str] = Counter()
    verified: Counter[str] = Counter()
    agents: Counter[str] = Counter()
    for item in items:
        totals.items += 1
        setattr(totals, item.outcome, getattr(totals, item.outcome) + 1)
        for defect in item.defects:
            by_code[defect.code.value] += 1
            if defect.code.value in item.expected_defects:
                totals.expected_defects += 1
            elif defect.severity == "blocking":
                totals.blocking_defects += 1
            elif defect.severity == "regression":
                totals.regression_defects += 1
        if item.verified_against:
            verified[item.verified_against] += item.verified_windows
        agents[item.agent] += 1
    totals.defects_by_code = dict(sorted(by_code.items()))
    totals.verified_windows = dict(sorted(verified.items()))
    totals.agents = dict(sorted(agents.items()))
    totals.causes = cause_counts(items)
    return totals


def sort_items(items: Iterable[ItemResult]) -> list[ItemResult]:
    """Items in report order: by id (stable across shards, xdist and reruns)."""
    return sorted(items, key=lambda item: item.id)


def merge_reports(reports: Sequence[RunReport], labels: Sequence[str] | None = None) -> RunReport:
    """One report from shard reports: items sorted by id, totals recomputed, `meta.shards` filled.

    `labels` name the inputs in error messages and stand in for shards whose report carries no
    `meta.shards` (e.g. the file paths). Raises `MergeError` for inputs of different runs.
    """
    if not reports:
        raise MergeError("no reports to merge")
    names = list(labels) if labels is not None else [f"report {i + 1}" for i in range(len(reports))]
    if len(names) != len(reports):
        raise MergeError(f"{len(reports)} reports but {len(names)} labels")
    versions = {report.schema_version for report in reports}
    if len(versions) > 1:
        raise MergeError(
            "the reports have schema versions "
            + ", ".join(f"{r.schema_version} ({name})" for r, name in zip(reports, names))
            + ": their item ids differ in shape, so they cannot be one run; re-run the older shards"
        )

    seen: dict[str, str] = {}
    items: list[ItemResult] = []
    for name, report in zip(names, reports):
        for item in report.items:
            if item.id in seen:
                raise MergeError(
                    f"session {item.id!r} is in both {seen[item.id]} and {name}: "
                    "shards must not overlap (check --replaylab-shard K/N)"
                )
            seen[item.id] = name
            items.append(item)

    cassettes: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name, report in zip(names, reports):
        for cassette, digest in report.cassette_hashes.items():
            if cassette in cassettes and cassettes[cassette] != digest:
                raise MergeError(
                    f"cassette {cassette!r} has sha256 {cassettes[cassette][:12]}… in {owner[cassette]} "
                    f"but {digest[:12]}… in {name}: the shards did not replay the same recordings"
                )
            cassettes[cassette] = digest
            owner.setdefault(cassette, name)

    items = sort_items(items)
    # baseline-comparison lines start with the item id: sorted, they follow the item order
    regressions = sorted({line for r in reports for line in r.regressions_vs_baseline})
    return RunReport(
        schema_version=versions.pop(),
        meta=_merge_meta([r.meta for r in reports], names),
        totals=compute_totals(items),
        items=items,
        cassette_hashes=dict(sorted(cassettes.items())),
        regressions_vs_baseline=regressions,
    )


def _merge_meta(metas: list[RunMeta], names: list[str]) -> RunMeta:
    shas = {m.git_sha for m in metas if m.git_sha}
    if len(shas) > 1:
        raise MergeError(
            "the reports come from different commits (git SHA "
            + ", ".join(sorted(shas))
            + "): merge shards of one run only"
        )
    shards: list[str] = []
    for meta, name in zip(metas, names):
        shards.extend(meta.shards or [name])
    started = [m.started_at for m in metas if m.started_at]
    finished = [m.finished_at for m in metas if m.finished_at]
    argvs = {tuple(m.argv) for m in metas}
    return RunMeta(
        replaylab_version=_joined(m.replaylab_version for m in metas) or "",
        git_sha=next(iter(shas), None),
        model=_joined(m.model for m in metas) or "replay",
        mode=_joined(m.mode for m in metas),
        started_at=min(started, default=""),
        finished_at=max(finished, default=""),
        python=_joined(m.python for m in metas) or "",
        argv=list(next(iter(argvs))) if len(argvs) == 1 else [],
        shards=shards,
    )


def _joined(values: Iterable[str | None]) -> str | None:
    """The common value, or the distinct values comma-joined (a mixed run stays visible)."""
    distinct = sorted({v for v in values if v})
    return ", ".join(distinct) if distinct else None


def load_report(path: Path) -> RunReport:
    """A `replaylab.json` of this schema version or an older one merge and render read
    (`OLDER_SCHEMA_VERSIONS`), its totals recomputed from its items (a report written before a
    count existed gets it too). Raises `InputError` naming the file."""
    report = _read_report(path)
    report.totals = compute_totals(report.items)
    return report


def _read_report(path: Path) -> RunReport:
    from replaylab.report.jsonio import load_json

    try:
        raw = read_regular(path, MAX_REPORT_BYTES)
    except OSError as exc:
        message = f"cannot read the report: {exc.strerror or exc}"
        raise InputError([Diagnostic(code="REPORT_UNREADABLE", file=str(path), message=message)]) from None
    version = _schema_version(raw)
    if version not in OLDER_SCHEMA_VERSIONS:
        try:
            return load_json(raw)
        except InputError as exc:
            raise InputError([d.model_copy(update={"file": str(path)}) for d in exc.diagnostics]) from None
    data = orjson.loads(raw)
    if version == ZERO_BASED_TURNS_VERSION:
        data = turns_from_one(data)
    data["schema_version"] = SCHEMA_VERSION
    try:
        report = load_json(orjson.dumps(data))
    except InputError as exc:
        raise InputError([d.model_copy(update={"file": str(path)}) for d in exc.diagnostics]) from None
    if version != ZERO_BASED_TURNS_VERSION:
        report.schema_version = version
    return report


def turns_from_one(data: Any) -> Any:
    """A version-2 report's JSON (`data`, changed in place) with every turn number counted from 1:
    each finding's `where.turn` (the item's and each run's own), the first divergence, both runs'
    turns and tool calls. Every one
    of them counted from 0 in version 2, so adding 1 is exact. The messages are left as that run
    wrote them: free text quoting recorded arguments and answers, in which no number can be told
    to be a turn. Parts of another shape are left for the schema check to report."""
    for item in _dicts(data.get("items") if isinstance(data, dict) else None):
        for defect in _dicts(item.get("defects")):
            _add_one(defect.get("where"))
        _add_one(item.get("first_divergence"))
        for label in ("baseline", "compacted"):
            found = item.get(label)
            trace = found if isinstance(found, dict) else {}
            for defect in _dicts(trace.get("defects")):
                _add_one(defect.get("where"))
            for turn in _dicts(trace.get("turns")):
                _add_one(turn)
                for call in _dicts(turn.get("tool_calls")):
                    _add_one(call)
    return data


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _add_one(holder: Any) -> None:
    turn = holder.get("turn") if isinstance(holder, dict) else None
    if isinstance(turn, int) and not isinstance(turn, bool):
        holder["turn"] = turn + 1


def _schema_version(raw: bytes) -> object:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return data.get("schema_version") if isinstance(data, dict) else None
