"""Mutation score: does replaylab catch real compaction bugs? (`replaylab selftest`)

Each *mutant* is a small variant of the compactor (or of its output, or of the tool classes)
that reproduces one bug class reported upstream, and declares the defect code(s) replaylab must
report for it. The engine replays every recording through the full QA pipeline (`run_item`) once
with the unmodified compactor (the baseline row: it must show no blocking defect) and once per
mutant, the mutant injected through `RunOptions.compactor` / `RunOptions.classifier_override`.

Mutation-testing vocabulary: a mutant is *caught* (killed) when at least one session on which it
actually changed something (*applied*) shows one of its expected codes; the row also says on how
many of the applied sessions it was caught. A mutant compactor reports no findings of its own
(the engine clears them: upstream compactors do not check themselves), so whatever catches it is
the pipeline's own checks. A mutant whose shape no session has (`needs`) is reported `n/a`.

Mutants live in a folder: by default the seeded ones shipped in `replaylab/mutants` (found next to
this module, so an installed replaylab has them too), or a user's own folder. Every `*.py` of the
folder not starting with `_` is imported as a module of one package (so they may share helpers)
and contributes its module-level `MUTANTS` list.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from replaylab import caches
from replaylab.defects import Code

#: the seeded mutants shipped with the package (they import this module, never the reverse)
DEFAULT_MUTANTS = Path(__file__).resolve().parent / "mutants"
#: how a mutant compactor says it changed something in this compaction (a `CompactResult.notes` line)
APPLIED = "mutant applied: "
BASELINE = "(unmodified compactor)"


@dataclass(frozen=True)
class Mutant:
    """One seeded bug. `compactor(params, *, classifier, writer) -> CompactResult` replaces
    `compact()`; `classifier_override(classifier) -> classifier` replaces the tool classes."""

    name: str
    issue: str  # upstream issue(s) it reproduces
    expected: tuple[Code, ...]  # caught on a session when any of these codes is found there
    what: str  # one line: what the mutant does
    compactor: Callable[..., Any] | None = None
    classifier_override: Callable[[Any], Any] | None = None
    #: for mutants that cannot note it themselves: did this session exercise the mutation?
    applies: Callable[[Any], bool] | None = None
    needs: str | None = None  # the session shape it needs, shown when no session has it


def applied(outcome: Any, what: str) -> Any:
    """Mark a `CompactResult` as changed by the mutant (the engine counts the session as applied)."""
    outcome.notes.append(APPLIED + what)
    return outcome


class Row(BaseModel):
    mutant: str
    issue: str = ""
    what: str = ""
    expected: list[str] = Field(default_factory=list)
    sessions: int = 0  # sessions the scenario exercised (a compaction happened)
    applied: int = 0
    caught: int = 0
    codes: dict[str, int] = Field(default_factory=dict)  # codes found on applied sessions → sessions
    blocking: int = 0  # baseline row: sessions with a blocking defect
    status: str = ""  # caught | MISSED | n/a | clean | BLOCKING
    missed_on: list[str] = Field(default_factory=list)
    needs: str | None = None


class SelftestReport(BaseModel):
    rows: list[Row] = Field(default_factory=list)
    recordings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(r.status in ("caught", "clean", "n/a") for r in self.rows)


# ---------------------------------------------------------------- loading


#: mutants by their folder: loading imports the folder's modules, once per process
_LOADED: caches.ProcessCache[Path, list[Mutant]] = caches.ProcessCache("selftest.mutants")


def load_mutants(directory: Path | str | None = None) -> list[Mutant]:
    """Every `MUTANTS` entry of the `*.py` modules of `directory` (cached per process)."""
    directory = Path(directory or DEFAULT_MUTANTS).resolve()
    if directory in _LOADED:
        return _LOADED[directory]
    if not directory.is_dir():
        from replaylab.diagnostics import Diagnostic, InputError

        raise InputError(
            [
                Diagnostic(
                    code="selftest-mutants",
                    file=str(directory),
                    message="no such folder; expected a folder of mutant modules (*.py with MUTANTS)",
                )
            ]
        )
    package = f"replaylab_mutants_{abs(hash(str(directory)))}"
    spec = importlib.util.spec_from_file_location(
        package, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[package] = module
    if (directory / "__init__.py").is_file():
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    mutants: list[Mutant] = []
    for file in sorted(directory.glob("*.py")):
        if file.name.startswith("_"):
            continue
        sub = importlib.import_module(f"{package}.{file.stem}")
        mutants.extend(getattr(sub, "MUTANTS", []))
    names = [m.name for m in mutants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{directory}: mutant names must be unique: {', '.join(duplicates)}")
    _LOADED[directory] = mutants
    return mutants


# ---------------------------------------------------------------- running


@dataclass
class _Outcome:
    mutant: str
    recording: str
    exercised: bool
    applied: bool
    codes: list[str] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)
    outcome: str = ""
    error: str = ""


def _run_one(job: tuple[str | None, str, Any, str]) -> _Outcome:
    """One (mutant or baseline) × (scenario, recording), in this process."""
    from replaylab.qa.pipeline import RunOptions, run_item

    name, mutants_dir, scenario, recording = job
    mutant = next(m for m in load_mutants(mutants_dir) if m.name == name) if name else None
    notes: list[str] = []
    options = RunOptions()
    if mutant is not None and mutant.compactor is not None:
        options.compactor = _tracked(mutant.compactor, notes)
    if mutant is not None and mutant.classifier_override is not None:
        options.classifier_override = mutant.classifier_override
    try:
        result = run_item(scenario, Path(recording), options)
    except Exception as exc:
        return _Outcome(
            mutant=name or BASELINE,
            recording=recording,
            exercised=False,
            applied=bool(notes),
            outcome="error",
            error=f"{type(exc).__name__}: {exc}"[:300],
        )
    exercised = result.compaction is not None and result.compaction.success
    was_applied = bool(notes) or bool(mutant is not None and mutant.applies is not None and mutant.applies(result))
    return _Outcome(
        mutant=name or BASELINE,
        recording=recording,
        exercised=exercised,
        applied=was_applied,
        codes=sorted({d.code.value for d in result.defects}),
        blocking=sorted({d.code.value for d in result.defects if d.severity == "blocking"}),
        outcome=result.outcome,
    )


def _tracked(compactor: Callable[..., Any], notes: list[str]) -> Callable[..., Any]:
    def run(params: Any, *, classifier: Any = None, writer: Any = None) -> Any:
        outcome = compactor(params, classifier=classifier, writer=writer)
        notes.extend(n for n in outcome.notes if n.startswith(APPLIED))
        outcome.findings = []  # the compactor under test vouches for nothing
        return outcome

    return run


def run_selftest(
    items: Sequence[tuple[Any, Path]],
    *,
    mutants_dir: Path | str | None = None,
    only: Iterable[str] | None = None,
    jobs: int = 2,
) -> SelftestReport:
    """Baseline + every mutant over `items` ((scenario, recording) pairs)."""
    import time

    started = time.perf_counter()
    mutants = load_mutants(mutants_dir)
    wanted = set(only or [])
    mutants = [m for m in mutants if not wanted or m.name in wanted]
    directory = str(Path(mutants_dir or DEFAULT_MUTANTS).resolve())
    jobs_list = [
        (name, directory, scenario, str(recording))
        for name in [None, *(m.name for m in mutants)]
        for scenario, recording in items
    ]
    if jobs > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(_run_one, jobs_list, chunksize=4))
    else:
        outcomes = [_run_one(job) for job in jobs_list]
    report = SelftestReport(recordings=sorted({str(r) for _, r in items}))
    report.rows.append(_baseline_row([o for o in outcomes if o.mutant == BASELINE]))
    for mutant in mutants:
        report.rows.append(_mutant_row(mutant, [o for o in outcomes if o.mutant == mutant.name]))
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def _baseline_row(outcomes: list[_Outcome]) -> Row:
    row = Row(mutant=BASELINE, what="replaylab.compaction.compact, as shipped", expected=[])
    row.sessions = sum(o.exercised for o in outcomes)
    for o in outcomes:
        for code in o.codes:
            row.codes[code] = row.codes.get(code, 0) + 1
    bad = [o for o in outcomes if o.blocking or o.error]
    row.blocking = len(bad)
    row.missed_on = [f"{Path(o.recording).name}: {o.error or ', '.join(o.blocking)}" for o in bad]
    row.status = "BLOCKING" if bad else "clean"
    return row


def _mutant_row(mutant: Mutant, outcomes: list[_Outcome]) -> Row:
    expected = {c.value for c in mutant.expected}
    row = Row(mutant=mutant.name, issue=mutant.issue, what=mutant.what, expected=sorted(expected), needs=mutant.needs)
    row.sessions = sum(o.exercised for o in outcomes)
    hits = [o for o in outcomes if o.applied]
    row.applied = len(hits)
    for o in hits:
        for code in o.codes:
            row.codes[code] = row.codes.get(code, 0) + 1
    caught = [o for o in hits if expected & set(o.codes)]
    row.caught = len(caught)
    row.missed_on = [
        f"{Path(o.recording).name}: "
        + (f"crashed: {o.error}" if o.error else f"found {', '.join(o.codes) or 'nothing'}")
        for o in hits
        if o not in caught
    ]
    if not hits:
        row.status = "n/a" if mutant.needs else "MISSED"
    else:
        row.status = "caught" if caught else "MISSED"
    return row


# ---------------------------------------------------------------- output


def format_table(report: SelftestReport) -> str:
    """The mutation-score table, one row per mutant (markdown, readable as plain text)."""
    lines = [
        "| mutant | upstream | expected | caught | on sessions (caught/applied/exercised) | codes found |",
        "|---|---|---|---|---|---|",
    ]
    for row in report.rows:
        codes = ", ".join(f"{c}×{n}" for c, n in sorted(row.codes.items())) or "—"
        if row.mutant == BASELINE:
            verdict = "no blocking defect" if row.status == "clean" else f"BLOCKING on {row.blocking}"
            lines.append(f"| {row.mutant} | — | no blocking | {verdict} | {row.sessions} exercised | {codes} |")
            continue
        caught = {"caught": "yes", "MISSED": "**NO**", "n/a": f"n/a ({row.needs})"}[row.status]
        lines.append(
            f"| {row.mutant} | {row.issue} | {', '.join(row.expected)} | {caught} | "
            f"{row.caught}/{row.applied}/{row.sessions} | {codes} |"
        )
    killed = sum(r.status == "caught" for r in report.rows)
    scored = sum(r.status in ("caught", "MISSED") for r in report.rows)
    not_applicable = sum(r.status == "n/a" for r in report.rows)
    lines.append("")
    lines.append(
        f"mutation score: {killed}/{scored} mutants caught with their expected code"
        + (f" ({not_applicable} n/a)" if not_applicable else "")
        + f"; baseline {'clean' if report.rows and report.rows[0].status == 'clean' else 'NOT clean'}; "
        f"{len(report.recordings)} recordings; {report.seconds} s"
    )
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)
