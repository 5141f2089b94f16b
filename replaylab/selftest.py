"""Mutation score: does replaylab catch real compaction bugs? (`replaylab selftest`)

Each *mutant* is a small variant of the compactor (or of its output, or of the tool classes)
that reproduces one bug class reported upstream, and declares the defect code(s) replaylab must
report for it. The engine replays every recording through the full QA pipeline (`run_item`) once
with the unmodified compactor (the baseline row: it must show no blocking defect but the
recording's own, `RECORDED_*`) and once per mutant, the mutant injected through
`RunOptions.compactor` / `RunOptions.classifier_override`.
Under `--compactor SPEC` the compactor is the user's (built from the spec in each worker): the
baseline row is it unmodified, and the mutants break its output (`base_compactor`).

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
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from replaylab import caches
from replaylab.defects import RECORDED_CODES, Code

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactParams, CompactResult
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import TranscriptWriter

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
    #: why it cannot edit another compactor's output (it needs replaylab's own internals): under
    #: `--compactor` its row is n/a with this reason; None: it runs on any compactor's output
    own_compactor_only: str | None = None


#: the compactor the running mutant edits in this process: None is replaylab's own `compact()`
_BASE: ContextVar[Callable[..., Any] | None] = ContextVar("replaylab_selftest_base", default=None)


def base_compactor() -> Callable[..., Any]:
    """The compactor a mutant runs and then breaks: the user's under `--compactor`, else
    `replaylab.compaction.compact`."""
    base = _BASE.get()
    if base is not None:
        return base
    from replaylab.compaction import compact

    return compact


def foreign_base() -> bool:
    """Is the base another compactor (whose entries carry none of replaylab's bookkeeping)?"""
    return _BASE.get() is not None


def applied(outcome: CompactResult, what: str) -> Any:
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
    compactor: str = "replaylab"  # the compactor under test: the base of every mutant
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


@dataclass(frozen=True)
class _Job:
    """What a worker process needs (it pickles): the spec, not a built compactor."""

    mutant: str | None  # None: the baseline
    mutants_dir: str
    scenario: Any
    recording: str
    compactor: Any = None  # a `qa.compactor_spec` spec; None: replaylab's own
    cwd: str = "."  # where a command compactor's relative paths resolve


def _base_for(job: _Job) -> Callable[..., Any] | None:
    if job.compactor is None:
        return None
    from replaylab.compactors.external import ExternalCompactor, SourceStates

    return ExternalCompactor(job.compactor, SourceStates(()), Path(job.cwd))


def _run_one(job: _Job) -> _Outcome:
    """One (mutant or baseline) × (scenario, recording), in this process."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    name, recording = job.mutant, job.recording
    mutant = next(m for m in load_mutants(job.mutants_dir) if m.name == name) if name else None
    notes: list[str] = []
    base = _base_for(job)
    options = RunOptions(compactor=base)
    if mutant is not None and mutant.compactor is not None:
        options.compactor = _tracked(mutant.compactor, notes)
    if mutant is not None and mutant.classifier_override is not None:
        options.classifier_override = mutant.classifier_override
    token = _BASE.set(base)
    try:
        result = run_item(job.scenario, Path(recording), options)
    except Exception as exc:
        return _Outcome(
            mutant=name or BASELINE,
            recording=recording,
            exercised=False,
            applied=bool(notes),
            outcome="error",
            error=f"{type(exc).__name__}: {exc}"[:300],
        )
    finally:
        _BASE.reset(token)
    exercised = result.compaction is not None and result.compaction.success
    was_applied = bool(notes) or bool(mutant is not None and mutant.applies is not None and mutant.applies(result))
    return _Outcome(
        mutant=name or BASELINE,
        recording=recording,
        exercised=exercised,
        applied=was_applied,
        codes=sorted({d.code.value for d in result.defects}),
        # the recording's own compactions are judged before any compactor runs: the same findings
        # with or without a mutant, so they say nothing of the compactor under test
        blocking=sorted(
            {d.code.value for d in result.defects if d.severity == "blocking" and d.code not in RECORDED_CODES}
        ),
        outcome=result.outcome,
    )


def _tracked(compactor: Callable[..., Any], notes: list[str]) -> Callable[..., Any]:
    def run(
        params: CompactParams, *, classifier: ToolClassifier | None = None, writer: TranscriptWriter | None = None
    ) -> Any:
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
    compactor: Any = None,
    cwd: Path | str | None = None,
) -> SelftestReport:
    """Baseline + every mutant over `items` ((scenario, recording) pairs). `compactor`: a
    `qa.compactor_spec` spec whose output the mutants break instead of replaylab's own (the
    baseline is that compactor unmodified); `cwd`: where its relative paths resolve."""
    import time

    started = time.perf_counter()
    mutants = load_mutants(mutants_dir)
    wanted = set(only or [])
    mutants = [m for m in mutants if not wanted or m.name in wanted]
    runnable = [m for m in mutants if compactor is None or not m.own_compactor_only]
    directory = str(Path(mutants_dir or DEFAULT_MUTANTS).resolve())
    where = str(Path(cwd or Path.cwd()).resolve())
    jobs_list = [
        _Job(name, directory, scenario, str(recording), compactor, where)
        for name in [None, *(m.name for m in runnable)]
        for scenario, recording in items
    ]
    if jobs > 1 and len(jobs_list) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(_run_one, jobs_list, chunksize=4))
    else:
        outcomes = [_run_one(job) for job in jobs_list]
    label = compactor.name() if compactor is not None else "replaylab"
    report = SelftestReport(compactor=label, recordings=sorted({str(r) for _, r in items}))
    baseline = [o for o in outcomes if o.mutant == BASELINE]
    report.rows.append(_baseline_row(baseline, label))
    codes = {o.recording: set(o.codes) for o in baseline}
    for mutant in mutants:
        if mutant not in runnable:
            report.rows.append(_not_applicable(mutant, mutant.own_compactor_only or ""))
            continue
        mine = [o for o in outcomes if o.mutant == mutant.name]
        report.rows.append(_mutant_row(mutant, mine, codes, foreign=compactor is not None))
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def _baseline_row(outcomes: list[_Outcome], compactor: str = "replaylab") -> Row:
    what = "replaylab.compaction.compact, as shipped" if compactor == "replaylab" else f"{compactor}, unmodified"
    row = Row(mutant=BASELINE, what=what, expected=[])
    row.sessions = sum(o.exercised for o in outcomes)
    for o in outcomes:
        for code in o.codes:
            row.codes[code] = row.codes.get(code, 0) + 1
    bad = [o for o in outcomes if o.blocking or o.error]
    row.blocking = len(bad)
    row.missed_on = [f"{Path(o.recording).name}: {o.error or ', '.join(o.blocking)}" for o in bad]
    row.status = "BLOCKING" if bad else "clean"
    return row


def _not_applicable(mutant: Mutant, why: str) -> Row:
    expected = sorted(c.value for c in mutant.expected)
    return Row(mutant=mutant.name, issue=mutant.issue, what=mutant.what, expected=expected, status="n/a", needs=why)


#: an n/a row's reason under `--compactor` when the mutant changed nothing on any session
NOTHING_TO_BREAK = (
    "nothing to break in this compactor's output on these sessions (its cut or its claims leave the mutant "
    "nothing to change)"
)


def _mutant_row(mutant: Mutant, outcomes: list[_Outcome], baseline: dict[str, set[str]], foreign: bool) -> Row:
    """`baseline`: the codes the unmodified compactor showed per recording. A session counts as
    caught only on an expected code its baseline did not show already: a defect of the compactor
    itself (another compactor's baseline need not be clean) catches no mutant."""
    expected = {c.value for c in mutant.expected}
    row = Row(mutant=mutant.name, issue=mutant.issue, what=mutant.what, expected=sorted(expected), needs=mutant.needs)
    row.sessions = sum(o.exercised for o in outcomes)
    hits = [o for o in outcomes if o.applied]
    row.applied = len(hits)
    for o in hits:
        for code in o.codes:
            row.codes[code] = row.codes.get(code, 0) + 1
    caught = [o for o in hits if expected & (set(o.codes) - baseline.get(o.recording, set()))]
    row.caught = len(caught)
    row.missed_on = [f"{Path(o.recording).name}: {_why_missed(o, expected, baseline)}" for o in hits if o not in caught]
    if not hits:
        # replaylab's own compactor must give every mutant something to break on the covering
        # sessions; another compactor's cut choices and claims may leave a mutant nothing
        row.status = "n/a" if mutant.needs or foreign else "MISSED"
        if foreign and not mutant.needs:
            row.needs = NOTHING_TO_BREAK
    else:
        row.status = "caught" if caught else "MISSED"
    return row


def _why_missed(outcome: _Outcome, expected: set[str], baseline: dict[str, set[str]]) -> str:
    if outcome.error:
        return f"crashed: {outcome.error}"
    masked = sorted(expected & baseline.get(outcome.recording, set()))
    found = f"found {', '.join(outcome.codes) or 'nothing'}"
    return found + (f" ({', '.join(masked)} already in the baseline)" if masked else "")


# ---------------------------------------------------------------- output


def format_table(report: SelftestReport) -> str:
    """The mutation-score table, one row per mutant (markdown, readable as plain text)."""
    lines = [
        f"compactor under test: {report.compactor}",
        "",
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
