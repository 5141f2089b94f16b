"""What safeguard's guarantee costs: its savings against auto on the same cuts, verified by pi.

    python -m bench.safeguard_savings [--shared ../shared/data] [--jobs 2] [--no-pi] [--limit N] [--generated N]
        [--json FILE]

Every bundled recording, `--generated` generated sessions whose writes start in their first turns
(`bench.generate`, about 30k tokens each) and every real session of the shared data folder (each source imported by
replaylab's own importers into a scratch folder; the originals are only read), compacted in `auto`
(pi's compaction: summary + kept tail) and in `safeguard` on the same cut — the same leaf, the same
budget — as an agent would:

* the budget: OpenClaw's defaults (contextTokens 200,000, reserve 20,000, keepRecentTokens 20,000)
  for a session whose window passes 180,000 tokens at a turn start; else the automatic budget
  (`qa.auto_budget`, taken mode-independently: the same for both modes), so a session is compacted
  where it is large;
* the first compaction at the first turn start whose window passes the budget (`qa.boundaries`);
* then the session goes on: the recorded turns after the cut are appended to each working copy,
  and whenever the window at a turn start passes the budget again the copy is compacted again —
  the second and later compactions of a long session.

Per data set: sessions; sessions where compaction is due; compacted (with a gain) by auto, and by
safeguard where auto did; median and p90 saving of each (share of the window saved); safeguard's
saving against auto's minus the tokens of the protected entries it restates, met within 10
percentage points of the window (and within 10 % of that figure, the stricter reading); later
compactions attempted and succeeded; and, with the pi oracle installed, every working copy as the
real pi 0.73.1 rebuilds it (context = `compactedWindow` position by position; for safeguard: no
protected entry missing, in chronological order, pairs intact, and the copy's ledger the
recording's), and, with their oracles installed, as the other pinned agents rebuild it — pi 1.6.0
and OpenClaw 2026.9.6: no protected entry missing, chronological order, pairs intact. Sessions
where auto compacts and safeguard does not, or saves less, are named with their numbers and the
summaries' sizes: safeguard's summary is OpenClaw's (recent turns preserved, every identifier of
the span under identifierPolicy strict), which on a window of a few hundred tokens can outweigh
what auto's gains.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from replaylab.compaction import CompactParams, compact
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_CONTEXT_TOKENS, DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS

REPO = Path(__file__).resolve().parents[1]
MODES = ("auto", "safeguard")
#: (data set, importer kind, folder or file under the shared data folder)
SHARED = (
    ("claude-code-spotter", "claude-code", "claude-code-spotter/sessions"),
    ("claude-code-fasthooks", "claude-code", "claude-code-fasthooks/sessions"),
    ("openclaw-fixtures (pi)", "pi", "openclaw-fixtures"),
    ("tau-bench", "tau-bench", "tau-bench"),
    ("tau2-bench", "tau2-bench", "tau2-bench"),
    ("tau2-bench-extra", "tau2-bench", "tau2-bench-extra"),
)
#: generated sessions (`bench.generate`: a quarter of the calls mutating, so the first write comes
#: in the first turns and writes run through the whole session) of about this many bytes (~30k tokens)
GENERATED_BYTES = 120_000
#: the bundled recordings, each with its tool pack
BUNDLED = (("bundled helpdesk", "recordings/helpdesk"), ("bundled helpdesk-local", "recordings/helpdesk-local"))
BUNDLED_PACK = "examples.helpdesk"
#: a saving within this many points of the window (and, strictly, this share) of auto's minus the
#: protected entries' tokens meets the target
TARGET_SLACK = 0.10
#: later compactions tried per session at most (a bound on the loop over real data)
MAX_LATER = 20


@dataclass
class Compaction:
    """One compaction of one mode."""

    success: bool
    before: int
    after: int
    failure: str | None = None
    protected_tokens: int = 0
    protected: int = 0
    summary_tokens: int = 0
    error: str = ""  # why it did not happen, in words
    pi: dict[str, int] = field(default_factory=dict)  # check → problems (empty: not checked)

    @property
    def saved(self) -> int:
        return self.before - self.after if self.success else 0


@dataclass
class Row:
    dataset: str
    session: str
    due: bool = False
    #: replaylab's own rule finds no turn start worth compacting (`AutoBudget.too_small`): the
    #: pipeline reports such a session as too small to compact where its compaction gains nothing
    too_small: bool = False
    why: str = ""
    budget: int = 0
    first: dict[str, Compaction] = field(default_factory=dict)
    later: dict[str, list[Compaction]] = field(default_factory=dict)


# ---------------------------------------------------------------- sessions


def import_all(shared: Path, out: Path, generated: int = 0) -> tuple[list[tuple[str, Path, str | None]], list[str]]:
    """(data set, session file, tool pack) of every bundled recording, `generated` generated
    sessions (written into `out`) and every session of the shared data (imported into `out`), and
    the source files that are no session, with why."""
    from bench.generate import write_transcript
    from replaylab.diagnostics import InputError
    from replaylab.importers import import_sessions, write_session

    sessions = [
        (name, path, BUNDLED_PACK) for name, folder in BUNDLED for path in sorted((REPO / folder).glob("*.jsonl"))
    ]
    if generated:
        (out / "generated").mkdir(parents=True, exist_ok=True)
        for seed in range(generated):
            path = out / "generated" / f"g-{seed:04d}.jsonl"
            write_transcript(path, seed, target_bytes=GENERATED_BYTES)
            sessions.append(("generated (writes from the start)", path, None))
    skipped: list[str] = []
    for name, kind, relative in SHARED:
        source, folder = shared / relative, out / name.split()[0]
        try:
            for imported in import_sessions(kind, source):
                write_session(imported, folder)
        except InputError:  # a folder holding a file that is no session: import it file by file
            shutil.rmtree(folder, ignore_errors=True)
            for file in sorted(p for p in source.rglob("*.json*") if p.is_file()):
                try:
                    for imported in import_sessions(kind, file):
                        write_session(imported, folder)
                except InputError as error:
                    skipped.append(f"{name}: {file.name}: {str(error).splitlines()[0][:160]}")
        sessions += [(name, path, None) for path in sorted(folder.glob("*.jsonl"))]
    return sessions, skipped


def _classifier(path: Path, pack: str | None) -> Any:
    from replaylab.safety.classify import ToolClassifier

    beside = path.parent / "tool_classes.json"
    classifier = ToolClassifier.from_json(beside) if beside.is_file() else ToolClassifier()
    if pack:
        from replaylab.replay.tools.pack import load_tool_pack

        classifier = classifier.merged(ToolClassifier.from_tool_pack(load_tool_pack(pack)))
    return classifier


def _budget(boundaries: list[Any]) -> tuple[int, int, int, bool] | None:
    """(contextTokens, reserveTokensFloor, keepRecentTokens, too small) — the same for both modes."""
    from replaylab.qa.auto_budget import choose_budget

    peak = max((b.tokens for b in boundaries), default=0)
    budget = DEFAULT_CONTEXT_TOKENS - DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
    if peak > budget:
        return DEFAULT_CONTEXT_TOKENS, DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR, PI_KEEP_RECENT_TOKENS, False
    chosen = choose_budget(boundaries, protects=False)
    if chosen is None:
        return None
    return chosen.context_tokens, chosen.reserve_tokens_floor, chosen.keep_recent_tokens, chosen.too_small


# ---------------------------------------------------------------- one session


_PI: list[Any] = []


def _pi() -> Any:
    """This process's pi oracle (None when it is not installed)."""
    if not _PI:
        from replaylab.oracles.pi import PiOracle, oracle_unavailable

        _PI.append(PiOracle() if oracle_unavailable() is None else None)
    return _PI[0]


_AGENTS: dict[str, Any] = {}


def _agents() -> dict[str, Any]:
    """This process's oracles of the other pinned agents (pi 1.6.0, OpenClaw 2026.9.6: those installed)."""
    if not _AGENTS:
        from replaylab.oracles.agent import AgentOracle, oracle_unavailable
        from replaylab.upstream.profiles import profile_named, profiles

        for name in sorted(profiles()):
            profile = profile_named(name)
            if name != "pi@0.73.1" and oracle_unavailable(profile) is None:
                _AGENTS[name] = AgentOracle(profile)
    return _AGENTS


def agent_problems(result: Any, before: list[Any], sources: dict[str, str]) -> dict[str, int]:
    """What each other pinned agent's rebuild of the working copy shows wrong by safeguard's promise
    (`before`: the path the compaction compacted): protected entries missing, entries out of
    chronological order, pairs the compaction broke (PAIR_BROKEN of the agent's context)."""
    from replaylab.compaction.invariants import as_window, check_pairs

    order = {e.id: i for i, e in enumerate(before)}
    out: dict[str, int] = {}
    for name, oracle in _agents().items():
        context = oracle.view(result.working_copy).windows[0].context
        shown = [sources.get(m.entry_id, m.entry_id) for m in context]
        positions = [order[i] for i in shown if i in order]
        window = as_window(
            {"entryId": m.entry_id, "message": m.message, "restates": sources.get(m.entry_id)} for m in context
        )
        out[f"{name} missing"] = len(set(result.protected_entry_ids) - set(shown))
        out[f"{name} order"] = int(positions != sorted(positions))
        out[f"{name} pairs"] = len(check_pairs(before, window))
    return out


def pi_problems(
    result: Any, classifier: Any, recorded_ledger: Any, children: Path, *, protects: bool = True
) -> dict[str, int]:
    """What the real pi's rebuild of the working copy right after `result` shows wrong, by check
    (`children`: the recording's folder, where its sub-agent sessions are). A mode that protects
    nothing (auto) is checked for pi's context alone: the other checks, and the other agents',
    are of what safeguard promises."""
    from replaylab.compaction.invariants import as_window, check_pairs
    from replaylab.oracles.compare import context_mismatches
    from replaylab.safety.ledger import build_ledger, folder_resolver
    from replaylab.transcript import build_window, load_transcript
    from replaylab.transcript.restated import restated_sources

    pi = _pi()
    if pi is None:
        return {}
    view = pi.view(result.working_copy)
    context = len(context_mismatches(as_window(result.compacted_window), view))
    if not protects:
        return {"context": context}
    copy = load_transcript(Path(result.working_copy))
    after = copy.path_to(result.leaf_id)
    before = copy.path_to(result.compaction_event_id)[:-1]
    sources = restated_sources(after)
    shown = [sources.get(m.entry_id, m.entry_id) for m in view.context[1:]]
    order = {e.id: i for i, e in enumerate(before)}
    positions = [order[i] for i in shown if i in order]
    return {
        "context": context,
        "missing": len(set(result.protected_entry_ids) - set(shown)),
        "order": int(positions != sorted(positions)),
        "pairs": len(check_pairs(before, build_window(after))),
        "ledger": int(
            build_ledger(copy, classifier, path=after, resolve_child=folder_resolver(children)).events
            != recorded_ledger.events
        ),
        **agent_problems(result, before, sources),
    }


def _measured(result: Any, classifier: Any, ledger: Any, check_pi: bool, children: Path, mode: str) -> Compaction:
    return Compaction(
        success=result.success,
        before=result.original_token_count,
        after=result.compacted_token_count,
        failure=result.failure,
        protected_tokens=sum(w["tokens"] for w in result.compacted_window if w.get("protected")),
        protected=len(result.protected_entry_ids) if result.success else 0,
        summary_tokens=result.compacted_window[0]["tokens"] if result.success else 0,
        error=(result.error or "").removeprefix("compaction_failure: "),
        pi=pi_problems(result, classifier, ledger, children, protects=mode == "safeguard")
        if check_pi and result.success
        else {},
    )


def measure(dataset: str, path: Path, pack: str | None, check_pi: bool = True) -> Row:
    """Both modes on one session: the first compaction, then the later ones as the session goes on."""
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.replay import split_turns
    from replaylab.safety.ledger import build_ledger
    from replaylab.transcript import TranscriptWriter, load_transcript

    row = Row(dataset, path.name.removesuffix(".jsonl"))
    transcript = load_transcript(path)
    leaf_path = transcript.leaf_path()
    turns = split_turns(leaf_path)
    classifier = _classifier(path, pack)
    boundaries = turn_boundaries(leaf_path, turns, classifier)
    settled = _budget(boundaries)
    if settled is None:
        row.why = "one user turn"
        return row
    context, reserve, keep, row.too_small = settled
    row.budget = context - reserve
    due = [b for b in boundaries if b.tokens > row.budget and not b.after_compaction]
    if not due:
        row.why = "never crosses the budget"
        return row
    row.due, row.why = True, "defaults" if context == DEFAULT_CONTEXT_TOKENS else "auto"
    start = due[0].start
    with tempfile.TemporaryDirectory(prefix="replaylab-savings-") as scratch:
        for mode in MODES:
            writer = TranscriptWriter.working_copy(path, Path(scratch) / mode / path.name)
            params = CompactParams(
                session_file=str(writer.path),
                compaction_mode=mode,
                context_tokens=context,
                reserve_tokens_floor=reserve,
                keep_recent_tokens=keep,
                leaf_id=leaf_path[start - 1].id,
                child_sessions_dir=str(path.parent),
            )
            ledger = build_ledger(transcript, classifier, path=leaf_path[:start])
            first = compact(params, classifier=classifier, writer=writer)
            row.first[mode] = _measured(first, classifier, ledger, check_pi, path.parent, mode)
            row.later[mode] = _go_on(writer, params, first, leaf_path, start, row.budget, classifier, check_pi)
    return row


def _go_on(
    writer: Any, params: Any, first: Any, leaf_path: list[Any], start: int, budget: int, classifier: Any, pi: bool
) -> list[Compaction]:
    """The recorded turns after the cut appended to the working copy (new ids, chained from where
    the compaction left it), compacting again at each turn start whose window passes the budget."""
    from replaylab.safety.ledger import build_ledger, folder_resolver
    from replaylab.transcript import build_window, dump_entry
    from replaylab.transcript.ids import derived_entry_id
    from replaylab.transcript.tokens import estimate_tokens

    if not first.success:
        return []
    later: list[Compaction] = []
    leaf = first.leaf_id
    taken = {e.id for e in writer.transcript().entries}
    from replaylab.replay import split_turns

    rest = leaf_path[start:]
    starts = {turn.inputs[0].id for turn in split_turns(rest) if turn.inputs}
    for entry in rest:
        if entry.id in starts and entry is not rest[0] and len(later) < MAX_LATER:
            path = writer.transcript().path_to(leaf)
            if sum(estimate_tokens(w.message) for w in build_window(path)) > budget:
                again = compact(
                    params.model_copy(update={"leaf_id": leaf, "force_compact": True}),
                    classifier=classifier,
                    writer=writer,
                )
                children = Path(params.child_sessions_dir)
                ledger = build_ledger(
                    writer.transcript(), classifier, path=path, resolve_child=folder_resolver(children)
                )
                later.append(_measured(again, classifier, ledger, pi, children, params.compaction_mode))
                if again.success:
                    leaf = again.leaf_id
        data = dump_entry(entry)
        data["id"], data["parentId"] = derived_entry_id(taken, leaf, entry.id, "later"), leaf
        writer.append(data)
        leaf = data["id"]
    return later


def _measure_one(args: tuple[str, str, str | None, bool]) -> Row:
    dataset, path, pack, check_pi = args
    return measure(dataset, Path(path), pack, check_pi)


# ---------------------------------------------------------------- the table


def _pct(values: list[float], q: float) -> str:
    if not values:
        return "—"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.1%}"


def summary(rows: list[Row]) -> list[dict[str, Any]]:
    """One line per data set (and the total)."""
    out = []
    for name in [*dict.fromkeys(r.dataset for r in rows), "all"]:
        mine = [r for r in rows if name in ("all", r.dataset)]
        due = [r for r in mine if r.due]
        gained = [r for r in due if r.first["auto"].success]
        both = [r for r in gained if r.first["safeguard"].success]
        worth = [r for r in gained if not r.too_small]
        worth_both = [r for r in worth if r.first["safeguard"].success]
        savings = {m: [r.first[m].saved / r.first[m].before for r in due if r.first[m].success] for m in MODES}
        later = {m: [c for r in due for c in r.later.get(m, [])] for m in MODES}
        checks: dict[str, int] = {}
        for r in due:
            for c in [r.first.get("safeguard"), *r.later.get("safeguard", [])]:
                for key, value in (c.pi if c else {}).items():
                    checks[key] = checks.get(key, 0) + value
        checked = sum(1 for r in due for c in [r.first["safeguard"], *r.later.get("safeguard", [])] if c.pi)
        auto = [c for r in due for c in [r.first["auto"], *r.later.get("auto", [])] if c.pi]
        out.append(
            {
                "dataset": name,
                "sessions": len(mine),
                "due": len(due),
                "auto compacted": len(gained),
                "safeguard where auto": f"{len(both)} ({len(both) / len(gained):.0%})" if gained else "0",
                "not too small": f"{len(worth_both)}/{len(worth)}",
                "auto median": _pct(savings["auto"], 0.5),
                "auto p90": _pct(savings["auto"], 0.9),
                "safeguard median": _pct(savings["safeguard"], 0.5),
                "safeguard p90": _pct(savings["safeguard"], 0.9),
                "target met": f"{sum(map(_meets, both))}/{len(both)}",
                "strictly": f"{sum(_meets(r, strict=True) for r in both)}/{len(both)}",
                "later auto": f"{sum(c.success for c in later['auto'])}/{len(later['auto'])}",
                "later safeguard": f"{sum(c.success for c in later['safeguard'])}/{len(later['safeguard'])}",
                "pi checked": checked,
                "pi problems": checks,
                "auto pi checked": len(auto),
                "auto pi context problems": sum(c.pi["context"] for c in auto),
            }
        )
    return out


def _target(row: Row) -> int:
    """auto's saving minus the tokens of the protected entries safeguard restates."""
    return row.first["auto"].saved - row.first["safeguard"].protected_tokens


def _meets(row: Row, *, strict: bool = False) -> bool:
    """safeguard saves at least auto's saving minus its protected entries' tokens, within 10 points
    of the window (strict: within 10 % of that figure)."""
    saved, target = row.first["safeguard"].saved, _target(row)
    if strict:
        return target <= 0 or saved >= (1 - TARGET_SLACK) * target
    return saved >= target - TARGET_SLACK * row.first["safeguard"].before


def decomposition(rows: list[Row]) -> tuple[int, int, int]:
    """(sessions both modes compacted, those where safeguard's saving is exactly auto's minus the
    protected entries' tokens minus the difference of the summaries — the same cut and tail —, those
    where safeguard saved more: its tail refit shrank the tail to fit the budget)."""
    both = [r for r in rows if r.due and r.first["auto"].success and r.first["safeguard"].success]
    exact = more = 0
    for r in both:
        auto, safe = r.first["auto"], r.first["safeguard"]
        residual = auto.saved - safe.protected_tokens - (safe.summary_tokens - auto.summary_tokens) - safe.saved
        exact += residual == 0
        more += residual < 0
    return len(both), exact, more


#: windows at least this large are where a summary's fixed size no longer decides the saving
LARGE_WINDOW = 2_000


@dataclass(frozen=True)
class SavingsReadings:
    """The savings target ("at least auto's saving minus the protected entries' tokens, within
    10 %") read three ways over the sessions both modes compacted."""

    sessions: int
    #: sum of safeguard's savings over sum of the targets
    aggregate: float
    #: sessions within 10 % of their own target, all and those of a large window
    strict: int
    large: int
    large_strict: int


def readings(rows: list[Row]) -> SavingsReadings:
    both = [r for r in rows if r.due and r.first["auto"].success and r.first["safeguard"].success]
    targets = sum(max(0, _target(r)) for r in both)
    saved = sum(r.first["safeguard"].saved for r in both)
    large = [r for r in both if r.first["auto"].before >= LARGE_WINDOW]
    return SavingsReadings(
        sessions=len(both),
        aggregate=saved / targets if targets else 1.0,
        strict=sum(_meets(r, strict=True) for r in both),
        large=len(large),
        large_strict=sum(_meets(r, strict=True) for r in large),
    )


def collect(
    shared: Path, *, jobs: int = 2, check_pi: bool = True, generated: int = 24, limit: int | None = None
) -> tuple[list[Row], list[str]]:
    """Every session (bundled, generated, each source of the shared folder) measured in both modes."""
    with tempfile.TemporaryDirectory(prefix="replaylab-savings-") as scratch:
        sessions, skipped = import_all(shared, Path(scratch) / "imported", generated)
        if limit:
            sessions = [s for s in sessions if [d for d, *_ in sessions[: sessions.index(s)]].count(s[0]) < limit]
        work = [(d, str(p), pack, check_pi) for d, p, pack in sessions]
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
            rows = list(pool.map(_measure_one, work, chunksize=4))
    return rows, skipped


def exceptions(rows: list[Row]) -> list[str]:
    """Sessions where auto compacts with a gain and safeguard does not, or saves less than the target."""
    out = []
    for r in rows:
        if not r.due or not r.first["auto"].success:
            continue
        auto, safe = r.first["auto"], r.first["safeguard"]
        if not safe.success:
            needs = re.search(
                r"(\d[\d,]*) protected entries .*?need ([\d,]+) tokens and the smallest summary ([\d,]+)", safe.error
            )
            protected = f"; its {needs[1]} protected entries {needs[2]} + smallest summary {needs[3]}" if needs else ""
            out.append(
                f"{r.dataset} {r.session}: safeguard {safe.failure} (window {safe.before:,}, budget {r.budget:,}"
                f"{protected}; auto {auto.before:,} → {auto.after:,}, its summary {auto.summary_tokens:,} tokens)"
            )
        elif not _meets(r):
            out.append(
                f"{r.dataset} {r.session}: window {safe.before:,}: saved {safe.saved:,}, auto {auto.saved:,} − "
                f"protected {safe.protected_tokens:,} − 10 points; summaries {safe.summary_tokens:,} / "
                f"{auto.summary_tokens:,} tokens"
            )
    return out


def later_failures(rows: list[Row]) -> list[str]:
    out = []
    for r in rows:
        failed = [c for c in r.later.get("safeguard", []) if not c.success]
        if failed:
            kinds = sorted({c.failure or "?" for c in failed})
            first = next(c for c in failed if c.failure == kinds[-1])
            out.append(
                f"{r.dataset} {r.session}: {len(failed)} of {len(r.later['safeguard'])} ({', '.join(kinds)}); "
                f"first {first.failure}: {first.error[:240]}"
            )
    return out


def print_table(lines: list[dict[str, Any]]) -> None:
    columns = [
        "dataset",
        "sessions",
        "due",
        "auto compacted",
        "safeguard where auto",
        "not too small",
        "auto median",
        "auto p90",
        "safeguard median",
        "safeguard p90",
        "target met",
        "strictly",
        "later auto",
        "later safeguard",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for line in lines:
        print("| " + " | ".join(str(line[c]) for c in columns) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-pi", action="store_true", help="do not check the working copies with pi")
    parser.add_argument("--limit", type=int, default=None, help="at most N sessions per data set")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--generated", type=int, default=24, help="generated sessions with writes from the start")
    args = parser.parse_args(argv)
    check_pi = not args.no_pi
    if check_pi:
        from replaylab.oracles.pi import oracle_unavailable

        reason = oracle_unavailable()
        if reason:
            print(f"(pi not checked: {reason})")
            check_pi = False
    rows, skipped = collect(args.shared, jobs=args.jobs, check_pi=check_pi, generated=args.generated, limit=args.limit)
    lines = summary(rows)
    print_table(lines)
    total = lines[-1]
    both, exact, more = decomposition(rows)
    worth = [r for r in rows if r.due and not r.too_small and r.first["auto"].success]
    print(
        f"\nwhere auto compacts, leaving out the sessions replaylab's own rule finds too small to be worth "
        f"compacting (AutoBudget.too_small): safeguard compacts {sum(r.first['safeguard'].success for r in worth)} "
        f"of {len(worth)}"
    )
    print(
        f"where both compacted ({both}): safeguard's saving = auto's − the protected entries' tokens − the "
        f"difference of the summaries, exactly, in {exact}; more than that in {more} (its tail refit)"
    )
    read = readings(rows)
    print(
        f"the savings target (auto's saving − the protected entries' tokens, within 10 %): in aggregate "
        f"safeguard saves {read.aggregate:.1%} of it; per session {read.strict} of {read.sessions}; per session "
        f"with a window of {LARGE_WINDOW:,} tokens or more {read.large_strict} of {read.large} (below that, "
        f"the summaries' fixed size decides)"
    )
    print(
        f"the pinned agents rebuilt {total['pi checked']} safeguard working copies; problems by check: "
        f"{total['pi problems']}; pi 0.73.1 rebuilt {total['auto pi checked']} auto working copies, "
        f"{total['auto pi context problems']} context problems"
    )
    for title, items in (
        ("auto compacts, safeguard does not or saves less than auto − protected − 10 points", exceptions(rows)),
        ("later safeguard compactions that failed", later_failures(rows)),
        ("source files that are no session", skipped),
    ):
        print(f"\n{title}: {len(items)}")
        for item in items:
            print(f"- {item}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
