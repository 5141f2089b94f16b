"""Real-session sweep: every real recorded session through the full QA pipeline, safeguard mode,
`replay` model, with the figures a QA note quotes.

Sources (`../shared/data`, imported by replaylab's own importers into a scratch folder; the
originals are only read): τ-bench, τ²-bench, Claude Code (main sessions and their sub-agent
sessions, each also replayed on its own), pi.

Scenario (one per session, `sweep_scenario`): the sessions differ in size by three orders of
magnitude, so one fixed budget would leave most of them uncompacted. Each session is compacted
before one user turn (`compact_at: turn:N`, the later turns are then replayed on the compacted
window): the turn nearest 60 % of the session whose window is at least 4,000 tokens (else the
largest window). The budget gives safeguard room: half that window (kept tail: a third of it), but
never less than what safeguard must keep — the window's protected entries (mutating events and
their results, pending calls) — + the summary + a minimal tail; the reserve (a tenth of the window, within
2,000–5,000 tokens) lets the summary hold 6,400–16,000 chars. When that still loses something a
later write needs (a blocking defect: the replay model cannot reproduce a write whose text came from
a summarized file read), the session is replayed at 3/4 and then 9/10 of the window with a tail that
may fill the budget, and the tighter attempt is kept in the row (`tighter`). A session is *skipped*
(not exercised) only for a reason the pipeline states: one user turn (sub-agent sessions: a single
task prompt), or nothing to gain (summary + protected entries + tail would not be smaller than the
window).

Figures per session, measured on the first compaction through `RunOptions.compactor` (a wrapper
around the real `compact()` that only looks): tokens before / after, mutating entries in the window
before the compaction and how many are byte-identical in the window after, identifiers of the
summarized span (as IDENTIFIER_LOST checks them) and how many are visible in
the window after.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from replaylab.checks.agent_window import VerifyWithPi
    from replaylab.suite import Scenario

from replaylab.defects import RECORDED_CODES
from replaylab.qa.sweep_figures import measuring
from replaylab.qa.sweep_losses import SUMMARY_LOSS_CODES, after_a_divergence, confirmed_loss, lost_values

#: source name → (importer kind, folder or file under the shared data folder)
SOURCES: dict[str, tuple[str, str]] = {
    "tau-bench": ("tau-bench", "tau-bench"),
    "tau2-bench": ("tau2-bench", "tau2-bench"),
    "claude-code": ("claude-code", "claude-code-spotter/sessions"),
    "pi": ("pi", "openclaw-fixtures"),
}
#: compact before the user turn at this share of the session's turns
COMPACT_AT_SHARE = 0.6
#: (budget, kept tail) as shares of the window at the compaction point: first half the window with
#: a tail of a third of it; when that loses something a later write needs (a blocking defect), the
#: roomier steps, where the tail may fill the budget (safeguard shrinks it to fit), each attempt kept …
BUDGET_LADDER = ((0.5, 1 / 3), (0.75, 1.0), (0.9, 1.0))
#: … but at least the protected entries, the summary (≤ 0.8 × the reserve) and a minimal tail. The
#: reserve grows with the session (a tenth of the window, 2,000–5,000 tokens: the summary may then
#: use 6,400–16,000 chars, OpenClaw's cap), so large sessions keep more of their identifiers. With
#: a smaller reserve the summary drops values later writes need in some τ sessions
#: (SIDE_EFFECT_ESCAPED) — a tight budget, not a safeguard bug.
MIN_RESERVE_TOKENS = 2_000
MAX_RESERVE_TOKENS = 5_000
MIN_TAIL_TOKENS = 200
#: a window smaller than this has little a 6,400-char summary can save: the compaction point moves
#: to the turn nearest 60 % whose window is at least this large, else to the largest window
MIN_WINDOW_TOKENS = 4_000


class SweepSession(BaseModel):
    source: str
    path: str
    child: bool = False  # a sub-agent session (also folded into its parent's ledger)


class SweepRow(BaseModel):
    source: str
    session: str
    child: bool = False
    entries: int = 0
    turns: int = 0
    compact_at: str = ""
    budget_tokens: int = 0
    window_tokens: int = 0  # the window at the compaction point
    exercised: bool = False
    outcome: str = ""
    reason: str = ""
    codes: dict[str, int] = Field(default_factory=dict)
    blocking: int = 0
    #: findings about the compactions the recording itself holds (`checks.recorded`)
    recorded: int = 0
    drift: bool = False
    tokens_before: int = 0
    tokens_after: int = 0
    mutating_entries: int = 0
    mutating_kept_verbatim: int = 0
    identifiers: int = 0
    identifiers_visible: int = 0
    budget_share: float = 0.0
    #: the budget the item ran with and, when chosen automatically, the rule as it applied
    budget_rule: str = ""
    #: per blocked call (a blocking defect with the recorded call as its expected side): the
    #: recorded values its replay lost (the item's legend of the markers in its arguments)
    lost_values: list[list[str]] = Field(default_factory=list)
    #: blocking findings that are a summary's loss (SIDE_EFFECT_ESCAPED, IDENTIFIER_LOST), each
    #: checked: every value its replay lost is in the span one of the replay's compactions
    #: summarized and absent from the window it left (`confirmed_loss`)
    summary_losses: int = 0
    #: such findings whose values no compaction summarized, but which follow another call of the
    #: same replay that diverged or was blocked before them: the replay never read what it returned
    downstream_losses: int = 0
    #: such findings neither check confirms (code, lost values): a false finding
    unconfirmed_losses: list[dict[str, Any]] = Field(default_factory=list)
    #: earlier attempts at a tighter budget that lost something (budget, codes, first defect)
    tighter: list[dict[str, Any]] = Field(default_factory=list)
    seconds: float = 0.0
    #: the item's compactions that succeeded, and how many of their windows the agent's own
    #: rebuild of the working copy confirmed (a sweep under a named agent checks every one)
    compactions: int = 0
    verified_windows: int = 0
    #: where its first compaction happened, when that was within a run ("turn 3, reply 4")
    within_run: str = ""
    #: skipped because its compaction found nothing to gain; the summary counts it under that
    #: kind, and the row already says so in its reason
    nothing_to_gain: bool = Field(default=False, exclude=True)

    @property
    def saving(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0


class SweepReport(BaseModel):
    rows: list[SweepRow] = Field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1
    sampled: str | None = None  # None: every session; else what was left out and why

    def summary(self) -> dict[str, Any]:
        """The figures of `reports/realdata-sweep.json` (per source and in total)."""
        per_source = {s: _figures(rows) for s in SOURCES if (rows := [r for r in self.rows if r.source == s])}
        return {
            "sessions": per_source,
            "total": _figures(self.rows) if self.rows else {},
            "seconds": self.seconds,
            "jobs": self.jobs,
            "sampled": self.sampled or "no: every session",
        }


def _figures(rows: list[SweepRow]) -> dict[str, Any]:
    done = [r for r in rows if r.exercised]
    savings = sorted(r.saving for r in done)
    skipped: dict[str, int] = {}
    for r in rows:
        if not r.exercised:
            kind = LOSS_ONLY if r.tighter else NOTHING_TO_GAIN if r.nothing_to_gain else _reason_kind(r.reason)
            skipped[kind] = skipped.get(kind, 0) + 1
    codes: dict[str, int] = {}
    for r in rows:
        for code, n in r.codes.items():
            codes[code] = codes.get(code, 0) + n
    return {
        "sessions": len(rows),
        "child_sessions": sum(r.child for r in rows),
        "exercised": len(done),
        "skipped": skipped,
        "entries": sum(r.entries for r in rows),
        "blocking_defects": sum(r.blocking for r in rows),
        "baseline_drift": sum(r.drift for r in rows),
        "summary_losses": sum(r.summary_losses for r in rows),
        "downstream_losses": sum(r.downstream_losses for r in rows),
        "unconfirmed_losses": sum(len(r.unconfirmed_losses) for r in rows),
        "outcomes": {o: sum(r.outcome == o for r in rows) for o in sorted({r.outcome for r in rows})},
        "defects_by_code": codes,
        "mutating_entries": sum(r.mutating_entries for r in done),
        "mutating_kept_verbatim": sum(r.mutating_kept_verbatim for r in done),
        "token_saving": _distribution(savings),
        "tokens_before": sum(r.tokens_before for r in done),
        "tokens_after": sum(r.tokens_after for r in done),
        "identifiers": sum(r.identifiers for r in done),
        "identifiers_visible": sum(r.identifiers_visible for r in done),
        "roomier_budget": sum(bool(r.tighter) for r in rows),
        "tighter_attempts": [{"session": r.session, **t} for r in rows for t in r.tighter],
    }


def _distribution(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    p90 = values[min(len(values) - 1, math.ceil(0.9 * len(values)) - 1)]
    return {
        "min": round(values[0], 4),
        "median": round(statistics.median(values), 4),
        "p90": round(p90, 4),
        "max": round(values[-1], 4),
    }


#: skip kind of a session whose only compaction that saves tokens loses something a later write needs
LOSS_ONLY = "no loss-free budget saves tokens (the tighter attempt lost a write: see tighter_attempts)"
NOTHING_TO_GAIN = "nothing to gain (summary + protected entries + tail ≥ the window)"


#: skip kinds of the defaults: safeguard's kept entries alone are over the budget; too small a session
PROTECTED_OVER_BUDGET = "cannot compact: what safeguard must keep is over the budget (CANNOT_COMPACT)"
TOO_SMALL = "too small to be worth compacting (under the floor, or no turn start where a summary would gain)"


def _reason_kind(reason: str) -> str:
    text = reason.lower()
    if "past the last turn" in text or "one user turn" in text:
        return "fewer than 2 user turns"
    if "too small to be worth compacting" in text:
        return TOO_SMALL
    if text.startswith("cannot_compact") and "nothing to gain" in text:
        return NOTHING_TO_GAIN
    if text.startswith("cannot_compact"):
        return PROTECTED_OVER_BUDGET
    if "nothing to compact" in text:
        return "nothing to compact"
    return reason[:80] or "not exercised"


# ---------------------------------------------------------------- sessions


def import_shared_data(shared: Path, out: Path) -> list[SweepSession]:
    """Import every source of `shared` into `out/<source>/`; the sessions to sweep, children included."""
    from replaylab.importers import import_sessions, write_session

    sessions: list[SweepSession] = []
    for source, (kind, relative) in SOURCES.items():
        folder = out / source
        for imported in import_sessions(kind, Path(shared) / relative):
            write_session(imported, folder)
        for path in sorted(folder.glob("*.jsonl")):
            sessions.append(SweepSession(source=source, path=str(path), child=".sub-" in path.name))
    return sessions


def sweep_scenario(
    recording: Path, source: str = "real", step: tuple[float, float] = BUDGET_LADDER[0]
) -> tuple[Any, str, int, int]:
    """(scenario or None, compact_at / the reason it is skipped, budget tokens, window tokens at the
    compaction point) for one session."""
    from replaylab.agents import profile_of_recording
    from replaylab.compaction.safeguard import path_calls, select_protected
    from replaylab.qa.setup import classifier_for
    from replaylab.replay import split_turns
    from replaylab.suite import CompactionSettings, Expectations, MatchSettings, Scenario
    from replaylab.transcript import build_window, load_transcript
    from replaylab.transcript.memo import identity
    from replaylab.transcript.model import CompactionEntry
    from replaylab.transcript.tokens import estimate_tokens
    from replaylab.upstream.pi_0_73_1 import SUMMARY_MAX_TOKENS_SHARE

    profile = profile_of_recording(recording)
    transcript = load_transcript(recording, navigation=profile.navigation)  # as the item will read it
    path = transcript.leaf_path()
    turns = split_turns(path, agent=profile)  # as the item will split them
    # a turn whose input was typed while the agent's run went on is no point an agent compacts at
    with_inputs = [i for i, t in enumerate(turns) if i > 0 and t.inputs and not t.steered]
    if not with_inputs:
        return None, "one user turn: nothing before it to compact (turn:N is past the last turn)", 0, 0
    points = []  # (turn index, history, window tokens) of every turn boundary safeguard may compact at
    position = {identity(entry): i for i, entry in enumerate(path)}  # `list.index` compares fields
    for index in with_inputs:
        history = path[: position[identity(turns[index].inputs[0])]]
        if history and not isinstance(history[-1], CompactionEntry):  # else compacting again is refused
            points.append((index, history, sum(estimate_tokens(w.message) for w in build_window(history))))
    if not points:
        return None, "every later turn starts right after a recorded compaction", 0, 0
    roomy = [p for p in points if p[2] >= MIN_WINDOW_TOKENS]
    index, history, tokens = (
        min(roomy, key=lambda p: abs(p[0] - COMPACT_AT_SHARE * len(turns)))
        if roomy
        else max(points, key=lambda p: p[2])
    )
    window = build_window(history)
    base = Scenario(
        suite="realdata-sweep",
        name=source,
        suite_file=Path(recording),
        tools=None,
        tool_classes=None,
        model="replay",
        compaction=CompactionSettings(),
        compact_at=f"turn:{index + 1}",
        match=MatchSettings(),
        expect=Expectations(tolerate=sorted(RECORDED_CODES)),
        per_recording={},
        repeats=1,
    )
    classifier = classifier_for(base, Path(recording), None)
    by_id = {e.id: e for e in history}
    in_window = [by_id[w.entry_id] for w in window if w.entry_id in by_id]
    protection = select_protected(in_window, classifier, calls=path_calls(path))
    # safeguard keeps every protected entry of the window verbatim (restated after its summary)
    chosen = set(protection.entry_ids)
    protected = sum(estimate_tokens(e.message) for e in in_window if e.id in chosen and hasattr(e, "message"))
    reserve = min(MAX_RESERVE_TOKENS, max(MIN_RESERVE_TOKENS, tokens // 10))
    summary_room = math.floor(SUMMARY_MAX_TOKENS_SHARE * reserve)
    budget_share, tail_share = step
    budget = max(math.ceil(budget_share * tokens), protected + summary_room + MIN_TAIL_TOKENS)
    compaction = CompactionSettings(
        mode="safeguard",
        context_tokens=budget + reserve,
        reserve_tokens_floor=reserve,
        keep_recent_tokens=max(MIN_TAIL_TOKENS, int(budget * tail_share)),
    )
    return base.model_copy(update={"compaction": compaction}), base.compact_at, budget, tokens


# ---------------------------------------------------------------- one session


def sweep_one(session: SweepSession) -> SweepRow:
    """One session through `run_item` (safeguard, replay model) with its figures; at a roomier
    budget again while the tighter one shows a blocking defect (each such attempt is kept)."""
    from replaylab.agents import profile_of_recording
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript

    started = time.perf_counter()
    path = Path(session.path)
    row = SweepRow(source=session.source, session=path.name.removesuffix(".jsonl"), child=session.child)
    profile = profile_of_recording(path)
    leaf_path = load_transcript(path, navigation=profile.navigation).leaf_path()
    row.entries, row.turns = len(leaf_path), len(split_turns(leaf_path, agent=profile))
    for step in BUDGET_LADDER:
        scenario, compact_at, budget, tokens = sweep_scenario(path, session.source, step)
        row.compact_at, row.budget_tokens, row.window_tokens, row.budget_share = compact_at, budget, tokens, step[0]
        if scenario is None:
            row.outcome, row.reason = "skipped", compact_at
            break
        result, figures = _attempt(scenario, path)
        _fill(row, result, figures)
        if not (row.blocking or row.drift) or step == BUDGET_LADDER[-1]:
            break
        first = next(
            d
            for d in result.defects
            if (d.severity == "blocking" and d.code not in RECORDED_CODES) or d.code.value == "BASELINE_DRIFT"
        )
        row.tighter.append(
            {
                "budget_share": step[0],
                "budget_tokens": budget,
                "codes": dict(row.codes),
                "first": first.message[:400],
                "where": first.where.model_dump(exclude_none=True),
            }
        )
    row.seconds = round(time.perf_counter() - started, 2)
    return row


def defaults_scenario(path: Path, source: str) -> Any:
    """What a suite that sets nothing but its recordings runs: safeguard, `contextTokens: auto`,
    `compact_at: auto`, the replay model."""
    from replaylab.suite import CompactionSettings, Expectations, MatchSettings, Scenario

    return Scenario(
        suite="realdata-defaults",
        name=source,
        suite_file=path,
        tools=None,
        tool_classes=None,
        model="replay",
        compaction=CompactionSettings(),
        compact_at="auto",
        match=MatchSettings(),
        expect=Expectations(tolerate=sorted(RECORDED_CODES)),
        per_recording={},
        repeats=1,
    )


def sweep_defaults_one(session: SweepSession, agent: str | None = None) -> SweepRow:
    """One session through `run_item` with the defaults, once (no budget ladder: the budget is
    the automatic one); with `agent`, judged by that profile's rules instead of the session's
    own, each compacted window checked against the agent's own rebuild."""
    from replaylab.agents import profile_of_recording
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript

    started = time.perf_counter()
    path = Path(session.path)
    row = SweepRow(source=session.source, session=path.name.removesuffix(".jsonl"), child=session.child)
    profile = profile_of_recording(path)
    leaf_path = load_transcript(path, navigation=profile.navigation).leaf_path()
    row.entries, row.turns = len(leaf_path), len(split_turns(leaf_path, agent=profile))
    row.compact_at = "auto"
    scenario = defaults_scenario(path, session.source)
    if agent is not None:
        scenario = scenario.model_copy(update={"agent": agent})
    result, figures = _attempt(scenario, path, verify_with_pi="on" if agent is not None else "auto")
    _fill(row, result, figures)
    if result.budget is not None:
        row.budget_tokens = result.budget.budget
    row.seconds = round(time.perf_counter() - started, 2)
    return row


def _attempt(scenario: Scenario, path: Path, verify_with_pi: VerifyWithPi = "auto") -> tuple[Any, dict[str, Any]]:
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    figures: dict[str, Any] = {}
    # the compactor the item itself compacts with (under an agent's rules, the agent's cut),
    # measured: not one given in its place
    options = RunOptions(
        observe_compactor=lambda compactor: measuring(compactor, figures), verify_with_pi=verify_with_pi
    )
    return run_item(scenario, path, options), figures


def _fill(row: SweepRow, result: Any, figures: dict[str, Any]) -> None:
    row.outcome, row.reason = result.outcome, result.reason
    row.exercised = result.compaction is not None and result.compaction.success
    # the pipeline skips an item whose first compaction found nothing to gain, unless an error
    # outranks that
    row.nothing_to_gain = result.outcome == "uncompacted" and figures.get("nothing_to_gain", False)
    row.budget_rule = result.budget.line() if result.budget is not None else ""
    row.codes = {}
    for d in result.defects:
        row.codes[d.code.value] = row.codes.get(d.code.value, 0) + 1
    # the sweep judges replaylab's own compaction: what a compaction of the recording itself lost
    # is counted apart (and tolerated by its scenarios)
    own = [d for d in result.defects if d.code not in RECORDED_CODES]
    row.recorded = len(result.defects) - len(own)
    row.blocking = sum(1 for d in own if d.severity == "blocking")
    legend = {lost.marker: lost.value for lost in result.lost_values}
    row.lost_values = [lost_values(d, legend) for d in own if d.severity == "blocking"]
    row.summary_losses, row.downstream_losses, row.unconfirmed_losses = 0, 0, []
    for position, defect in enumerate(own):
        if defect.severity == "blocking" and defect.code.value in SUMMARY_LOSS_CODES:
            values = lost_values(defect, legend)
            if confirmed_loss(values, figures.get("compaction_texts", [])):
                row.summary_losses += 1
            elif values and after_a_divergence(defect, own, position):
                row.downstream_losses += 1
            else:
                row.unconfirmed_losses.append({"code": defect.code.value, "values": values})
    row.drift = any(d.code.value == "BASELINE_DRIFT" for d in result.defects)
    row.compactions = result.compaction.compactions if row.exercised and result.compaction is not None else 0
    row.verified_windows = result.verified_windows
    within = next((note for note in result.diagnostics if "compacted within" in note), "")
    row.within_run = within.split(" (line ", 1)[0].removeprefix("one user turn: ") if within else ""
    for key in (
        "tokens_before",
        "tokens_after",
        "mutating_entries",
        "mutating_kept_verbatim",
        "identifiers",
        "identifiers_visible",
    ):
        setattr(row, key, figures.get(key, 0) if row.exercised else 0)


# ---------------------------------------------------------------- the sweep


def run_sweep(
    sessions: list[SweepSession],
    *,
    jobs: int = 2,
    sampled: str | None = None,
    defaults: bool = False,
    agent: str | None = None,
) -> SweepReport:
    """Every session (largest first, so two workers finish together), in `jobs` processes; with
    `defaults`, under what a suite that sets nothing runs (`sweep_defaults_one`), by `agent`'s
    rules when named."""
    started = time.perf_counter()
    order = sorted(sessions, key=lambda s: -Path(s.path).stat().st_size)
    one: Callable[[SweepSession], SweepRow] = (
        functools.partial(sweep_defaults_one, agent=agent) if defaults else sweep_one
    )
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            rows = list(pool.map(one, order))
    else:
        rows = [one(s) for s in order]
    rows.sort(key=lambda r: (list(SOURCES).index(r.source), r.session))
    return SweepReport(rows=rows, seconds=round(time.perf_counter() - started, 1), jobs=jobs, sampled=sampled)


def write_report(report: SweepReport, path: Path) -> Path:
    """`reports/realdata-sweep.json`: the summary figures plus one row per session."""
    path.parent.mkdir(parents=True, exist_ok=True)
    from replaylab.scrub import scrub_data  # the rows name sessions

    data = {"summary": report.summary(), "rows": [r.model_dump() for r in report.rows]}
    path.write_bytes(orjson.dumps(scrub_data(data), option=orjson.OPT_INDENT_2))
    return path


def format_table(report: SweepReport) -> str:
    """The figures per source, as a markdown table."""
    summary = report.summary()
    lines = [
        "| source | sessions (children) | exercised | skipped | entries | blocking | drift | mutating kept "
        "verbatim | token saving min / median / p90 / max | identifiers visible |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for source, f in [*summary["sessions"].items(), ("total", summary["total"])]:
        s = f["token_saving"]
        saving = " / ".join(f"{100 * s[k]:.1f} %" for k in ("min", "median", "p90", "max")) if s else "—"
        skipped = sum(f["skipped"].values())
        lines.append(
            f"| {source} | {f['sessions']} ({f['child_sessions']}) | {f['exercised']} | {skipped} | "
            f"{f['entries']} | {f['blocking_defects']} | {f['baseline_drift']} | "
            f"{f['mutating_kept_verbatim']}/{f['mutating_entries']} | {saving} | "
            f"{f['identifiers_visible']}/{f['identifiers']} |"
        )
    total = summary["total"]
    lines.append("")
    lines.append("skipped: " + (", ".join(f"{k}: {n}" for k, n in total["skipped"].items()) or "none"))
    lines.append(
        "defects: "
        + (", ".join(f"{k}×{n}" for k, n in sorted(total["defects_by_code"].items())) or "none")
        + "; outcomes: "
        + ", ".join(f"{k} {n}" for k, n in total["outcomes"].items())
    )
    for attempt in total["tighter_attempts"]:
        lines.append(
            f"roomier budget needed: {attempt['session']} at {attempt['budget_share']:.0%} of the window "
            f"({attempt['budget_tokens']} tokens): {attempt['first'][:160]}"
        )
    lines.append(f"{report.seconds} s with {report.jobs} worker(s); sampled: {summary['sampled']}")
    return "\n".join(lines)
