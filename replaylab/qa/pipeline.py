"""The QA pipeline for one (recording × scenario), top to bottom (DESIGN §3).

    load → ledger → pick compaction point(s) → baseline run on the full window
         → compact() with replayCheck (appends to a working copy, never the recording)
         → compacted run on the compacted window (compacting again when the budget is crossed)
         → diff → defects → verdict

Every step is a plain function call over pydantic models; nothing here is global, and a run is a
value (`ItemResult`) that crosses process boundaries as JSON.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from replaylab.cassette import cassette_path_for
from replaylab.defects import Code, Defect
from replaylab.diagnostics import InputError
from replaylab.qa.diff import diff_runs, drift_from_recording
from replaylab.qa.results import ItemResult
from replaylab.replay.trace import RunTrace
from replaylab.qa.scratch import item_folder
from replaylab.qa.suite import Scenario
from replaylab.qa.verdict import verdict
from replaylab.qa import views
from replaylab.transcript import load_transcript
from replaylab.transcript.writer import FileState, file_state, file_state_again
from replaylab.transcript.memo import messages_as_values


@dataclass
class RunOptions:
    """Command-line overrides of the suite settings."""

    model: str | None = None
    mode: str | None = None
    record_mode: str = "none"
    strict: bool = False
    work_dir: Path | None = None
    #: where pack tools point during replay. Replay answers from the cassette and never goes live,
    #: so this only matters as a trap: point it at a live service (REPLAYLAB_TOOL_BASE_URL) and its
    #: request counter proves that nothing escaped. Default: 127.0.0.1:9, where nothing listens.
    tool_base_url: str = field(default_factory=lambda: os.environ.get("REPLAYLAB_TOOL_BASE_URL", "http://127.0.0.1:9"))
    #: the compactor under test, `compact(params, *, classifier, writer) -> CompactResult` (default
    #: `replaylab.compaction.compact`; `replaylab selftest` passes seeded mutants). Whichever it is,
    #: the pipeline re-checks its output itself (`replaylab.qa.recheck`), never trusting its findings.
    compactor: Callable[..., Any] | None = None
    #: classifier → classifier, applied to the suite's classifier (selftest: a write tool declared read)
    classifier_override: Callable[[Any], Any] | None = None

    @classmethod
    def from_config(cls, config: Any) -> "RunOptions":
        strict = config.getoption("replaylab_strict")
        return cls(
            model=config.getoption("replaylab_model") or config.getini("replaylab_model") or None,
            mode=config.getoption("replaylab_mode") or config.getini("replaylab_mode") or None,
            record_mode=config.getoption("replaylab_record_mode") or "none",
            strict=bool(strict if strict is not None else config.getini("replaylab_strict")),
        )


def item_name(recording: Path, scenario: Scenario) -> str:
    """Readable pytest id part: `<recording stem>::<scenario>` (the suite is the collector)."""
    return f"{Path(recording).name.removesuffix('.jsonl')}::{scenario.name}"


def item_id(recording: Path, scenario: Scenario) -> str:
    return f"{scenario.suite}::{item_name(recording, scenario)}"


def run_item(scenario: Scenario, recording: Path, options: RunOptions | None = None) -> ItemResult:
    """Replay one recording under one scenario (`repeats` times) and return its verdict and evidence."""
    options = options or RunOptions()
    started = time.perf_counter()
    recording = Path(recording)
    expect = scenario.expectations_for(recording)
    runs = [_run_once(scenario, recording, options, expect) for _ in range(max(1, scenario.repeats))]
    result = runs[0]
    if len(runs) > 1:
        result = _combine_repeats(runs, expect, options)
    result.excerpt_tool_results()
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _run_once(scenario: Scenario, recording: Path, options: RunOptions, expect) -> ItemResult:
    cassette = cassette_path_for(recording)
    result = ItemResult(id=item_id(recording, scenario), suite=scenario.suite, scenario=scenario.name,
                        recording=_display_path(recording), outcome="passed")
    states = _file_states(recording, cassette, keep_hashers=True)  # the recording's: its working copy's start
    before = tuple(state.sha256 if state else "" for state in states)
    result.recording_sha256, result.cassette_sha256 = before
    result.expected_defects = [c.value for c in expect.defects]
    exercised = True
    try:
        with item_folder(options.work_dir) as work, messages_as_values():
            exercised = _replay_and_compare(scenario, recording, cassette, options, work, result, states[0])
    except InputError as exc:
        result.defects.append(Defect.of(Code.RECORDING_INVALID, "; ".join(str(d) for d in exc.diagnostics[:3])))
    after = tuple(state.sha256 if state else "" for state in _file_states(recording, cassette, since=states))
    if after != before:
        result.defects.append(Defect.of(Code.TRANSCRIPT_REWRITTEN, "the recording or its cassette changed during the run",
                                        expected=list(before), actual=list(after)))
    _check_expected_flags(result, expect)
    final = verdict(result.defects, expect, exercised=exercised, strict=options.strict,
                    not_exercised_reason=result.reason or "no compaction happened")
    result.outcome, result.reason, result.missing_expected = final.outcome, final.reason, final.missing_expected
    return result


def _combine_repeats(runs: list[ItemResult], expect, options: RunOptions) -> ItemResult:
    """pass^k over k repeats, and whether a failure is model variance (the baseline runs differ
    from each other) or compaction's doing (baselines agree, only compacted runs fail)."""
    first = runs[0]
    passes = sum(1 for r in runs if r.outcome == "passed")
    baselines = {r.baseline.model_dump_json() if r.baseline else "" for r in runs}
    compacted = {r.compacted.model_dump_json() if r.compacted else "" for r in runs}
    failing = [r for r in runs if r.outcome in ("failed", "error")]
    attribution = "none"
    if failing:
        attribution = "model variance (baseline repeats differ)" if len(baselines) > 1 else "compaction (baselines agree)"
    first.repeats = {"k": len(runs), "passes": passes, "pass_k": passes == len(runs),
                     "baseline_variants": len(baselines), "compacted_variants": len(compacted),
                     "failure_attribution": attribution}
    first.defects = _dedupe([d for r in runs for d in r.defects])
    exercised = any(r.outcome != "skipped" for r in runs)
    final = verdict(first.defects, expect, exercised=exercised, strict=options.strict,
                    not_exercised_reason=first.reason or "no compaction happened")
    first.outcome, first.missing_expected = final.outcome, final.missing_expected
    first.reason = f"{final.reason} (pass^{len(runs)} = {passes}/{len(runs)}; failures: {attribution})"
    return first


def _replay_and_compare(scenario: Scenario, recording: Path, cassette: Path, options: RunOptions, work: Path,
                        result: ItemResult, recording_state: FileState | None = None) -> bool:
    """Fill `result` with the runs and defects; return False when the scenario was not exercised
    (`recording_state`: the recording's state hashed before the run, for its working copy)."""
    from replaylab.qa.setup import classifier_for, compact_params, copy_children, load_pack, scenario_mode
    from replaylab.replay import ToolExecutor, calls_before, make_model, run_turns, split_turns
    from replaylab.safety.ledger import build_ledger
    from replaylab.transcript import TranscriptWriter, build_window

    transcript = load_transcript(recording)
    result.diagnostics = [str(d) for d in transcript.diagnostics]
    if options.strict and any(d.severity == "error" for d in transcript.diagnostics):
        raise InputError(transcript.diagnostics)
    if not cassette.is_file():
        result.defects.append(Defect.of(Code.CASSETTE_MISSING, f"no cassette next to the recording: {cassette.name}",
                                        expected=str(cassette), actual="missing"))
        return True
    pack = load_pack(scenario)
    classifier = classifier_for(scenario, recording, pack)
    if options.classifier_override is not None:
        classifier = options.classifier_override(classifier)
    ledger = build_ledger(transcript, classifier)
    result.ledger_before = views.ledger_view(ledger)
    path = transcript.leaf_path()
    turns = split_turns(path)
    points = compaction_points(scenario, turns, path)
    if not points:
        result.reason = (f"no compaction happened: the session never crossed the budget "
                         f"({scenario.compaction.context_tokens} − {scenario.compaction.reserve_tokens_floor} tokens)"
                         if scenario.compact_at == "auto" else f"{scenario.compact_at} is past the last turn")
        return False
    first = points[0]
    history = path[: path.index(turns[first].inputs[0])] if turns[first].inputs else path
    later = turns[first:]
    executed_before = calls_before(history)  # every call already run: a repeat is not served twice
    recorded_calls = calls_before(path)
    model_spec = options.model or scenario.model

    # baseline: the full window
    full_window = build_window(history)
    result.window_before = views.window_view(full_window, classifier)
    baseline_exec = ToolExecutor(cassette, classifier, tool_pack=pack, executed_before=executed_before,
                                 recorded_calls=recorded_calls, base_url=options.tool_base_url)
    baseline = run_turns(full_window, later, make_model(model_spec, recording=transcript, record_mode=options.record_mode),
                         baseline_exec, label="baseline", tools=views.tool_schemas(pack))
    result.baseline = baseline
    result.defects.extend(drift_from_recording(baseline, recorded_trace(later, classifier)))
    result.defects.extend(d for d in baseline_exec.defects if d.code in (Code.MISLABELLED_TOOL, Code.CASSETTE_MISSING))
    result.defects.extend(unanswered_recorded_calls(baseline, cassette))

    # compaction on a working copy, then the compacted run
    writer = TranscriptWriter.working_copy(recording, work / recording.name, parsed=transcript,
                                           parsed_sha256=result.recording_sha256, recording_state=recording_state)
    copy_children(recording, work)
    params = compact_params(scenario, options, writer.path, leaf_id=history[-1].id if history else None)
    executors: list[ToolExecutor] = []

    def compacted_executor() -> ToolExecutor:
        """The compacted run's tools, made only when a compaction succeeded (half the bench's
        sessions end at "nothing to gain"): the baseline's as they were before it ran."""
        executors.append(baseline_exec.fresh())
        return executors[0]

    compacted, compactions = compacted_run(params, writer, classifier, later, points, first, model_spec, transcript,
                                           compacted_executor, scenario, options, pack)
    if compactions and not compactions[0].success and "nothing to gain" in (compactions[0].error or ""):
        result.compaction = views.compaction_view(compactions[0], scenario_mode(scenario, options))
        result.reason = f"no compaction happened: {compactions[0].error}"
        return False
    if not compactions or not compactions[0].success:
        failure = compactions[0] if compactions else None
        result.compaction = views.compaction_view(failure, scenario_mode(scenario, options)) if failure else None
        result.defects.append(Defect.of(Code.COMPACTION_FAILED, (failure.error if failure else None) or "compact() failed"))
        return True
    first_compaction = compactions[0]
    result.compaction = views.compaction_view(first_compaction, scenario_mode(scenario, options),
                                              count=sum(1 for c in compactions if c.success))
    first_window = views.window_of(first_compaction, writer)
    result.window_after = views.window_view(first_window, classifier)
    result.ledger_after = views.window_ledger_view(first_window, classifier)
    result.compacted = compacted
    for outcome in compactions:
        result.defects.extend(outcome.findings)
    for later_outcome in compactions[1:]:
        if not later_outcome.success and "nothing to gain" not in (later_outcome.error or ""):
            result.defects.append(Defect.of(Code.COMPACTION_FAILED, f"a later compaction failed: {later_outcome.error}"))
    result.defects.extend(d for executor in executors for d in executor.defects)
    # compact() answers for the path it compacted: the history up to the compaction point
    result.defects.extend(views.flag_defects(first_compaction, build_ledger(transcript, classifier, path=history)))
    result.defects.extend(views.identifier_defects(first_compaction, history, first_window))
    divergence_defects, first_divergence = diff_runs(baseline, compacted, scenario.match)
    result.defects.extend(divergence_defects)
    result.first_divergence = first_divergence
    result.defects = _dedupe(result.defects)
    return True


def compacted_run(params, writer, classifier, later, points, first, model_spec, transcript, make_executor, scenario,
                  options, pack):
    """Replay the later turns on the compacted window, compacting again at each later point
    (`make_executor()` gives the run's tools, asked for once the first compaction succeeded)."""
    from replaylab.compaction import compact
    from replaylab.qa.recheck import rechecked
    from replaylab.replay import WindowTokenCount, make_model, run_turns
    from replaylab.qa.setup import ReplayedTurns, crosses_budget

    compact = rechecked(options.compactor or compact)

    outcomes = []
    outcome = compact(params, classifier=classifier, writer=writer)
    outcomes.append(outcome)
    if not outcome.success:
        return RunTrace(label="compacted"), outcomes
    window = views.window_of(outcome, writer)
    executor = make_executor()
    model = make_model(model_spec, recording=transcript, record_mode=options.record_mode)
    trace = RunTrace(label="compacted")
    replayed = ReplayedTurns(writer, outcome.compaction_event_id)
    tools = views.tool_schemas(pack)
    token_count = WindowTokenCount()  # one running count over the turns (a new window restarts it)
    for offset, turn in enumerate(later):
        index = first + offset
        if offset and (index in points or (scenario.compact_at == "auto" and crosses_budget(window, turn, scenario))):
            leaf = replayed.write()  # the next compaction summarizes the replayed turns
            again = compact(params.model_copy(update={"leaf_id": leaf, "force_compact": True}),
                            classifier=classifier, writer=writer)
            outcomes.append(again)
            if again.success:
                window, replayed.leaf = views.window_of(again, writer), again.compaction_event_id
            # a failed re-compaction leaves the window as it was (pi keeps going too); the
            # pipeline reports it unless it only found nothing worth compacting
        turn_trace, window = run_turns(window, [turn], model, executor, label="compacted", tools=tools,
                                       return_window=True, token_count=token_count)
        trace.turns.extend(turn_trace.turns)
        replayed.add(window, turn)
    return trace, outcomes


def compaction_points(scenario: Scenario, turns: list, path: list) -> list[int]:
    """Indexes of the turns *before which* compaction happens (never 0: nothing to compact yet)."""
    from replaylab.qa.setup import auto_points

    kind, _, number = scenario.compact_at.partition(":")
    if kind == "turn":
        n = int(number) - 1  # turn:N is 1-based: compact before user turn N
        return [n] if 0 < n < len(turns) else []
    if kind == "every":
        step = int(number)
        return list(range(step, len(turns), step)) if step > 0 else []
    return auto_points(turns, path, scenario)


def unanswered_recorded_calls(baseline: RunTrace, cassette: Path) -> list[Defect]:
    """On the full window every call is the recorded one, so the cassette must answer it; a call
    it cannot answer means the cassette is stale or belongs to another session."""
    missing = [c for turn in baseline.turns for c in turn.tool_calls if c.source in ("missing", "blocked")]
    if not missing:
        return []
    first = missing[0]
    return [Defect.of(Code.CASSETTE_MISSING,
                      f"{cassette.name} has no recorded response for {len(missing)} call(s) of the recording "
                      f"(first: {first.tool} in turn {first.turn}); is it the cassette of another session?",
                      turn=first.turn, tool_call_id=first.tool_call_id, tool=first.tool,
                      expected=f"{cassette.name} answers every recorded call", actual=[c.tool for c in missing[:10]])]


def recorded_trace(turns: list, classifier) -> RunTrace:
    """The recording itself as a trace, to check that the baseline reproduces it."""
    from replaylab.replay import recorded_run_trace

    return recorded_run_trace(turns, classifier)


def _check_expected_flags(result: ItemResult, expect) -> None:
    if result.ledger_before is None:
        return
    if expect.replay_safe is not None and result.ledger_before.replay_safe != expect.replay_safe:
        result.defects.append(Defect.of(Code.REPLAY_FLAG_WRONG, "replaySafe of the recording differs from the suite's expectation",
                                        expected=expect.replay_safe, actual=result.ledger_before.replay_safe))
    if expect.mutated_event_ids is not None and result.ledger_before.mutated_event_ids != expect.mutated_event_ids:
        result.defects.append(Defect.of(Code.MUTATED_IDS_WRONG, "mutatedEventIds differ from the suite's expectation",
                                        expected=expect.mutated_event_ids, actual=result.ledger_before.mutated_event_ids))


def _dedupe(defects: list[Defect]) -> list[Defect]:
    seen: set[tuple] = set()
    out = []
    for d in defects:
        key = (d.code, d.message, d.where.entry_id, d.where.turn, d.where.tool_call_id)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _file_states(*paths: Path, since: tuple[FileState | None, ...] = (),
                 keep_hashers: bool = False) -> tuple[FileState | None, ...]:
    """Each file's sha256 (None: no such file); with `since`, hashed again only where the earlier
    state cannot vouch that the file is unchanged (`file_state_again`); `keep_hashers`: see `file_state`."""
    states: list[FileState | None] = []
    for index, path in enumerate(paths):
        earlier = since[index] if index < len(since) else None
        if not path.is_file():
            states.append(None)
        else:
            states.append(file_state_again(earlier, path) if earlier is not None
                          else file_state(path, keep_hasher=keep_hashers))
    return tuple(states)


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
