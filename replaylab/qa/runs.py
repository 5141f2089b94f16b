"""The item's two runs of the later turns: the baseline on the full window, and the compacted run
on the compacted window, compacting again at each later point and on a context overflow (the
recovery chain and the model that answers as its provider when a request does not fit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from replaylab.checks.diff import drift_from_recording
from replaylab.checks.item import unanswered_recorded_calls
from replaylab.checks.lost_legend import CompactionStep, lost_records
from replaylab.compactors.outcome import Compacted, refused_as_pi
from replaylab.defects import Code
from replaylab.qa import views
from replaylab.qa.item import Baseline, CompactedRun, LoadedItem, StartPoint, WorkingCopy
from replaylab.qa.progress import report_phase, report_turns
from replaylab.replay.trace import RunTrace, turn_number

if TYPE_CHECKING:
    from replaylab.replay import Model, ToolExecutor
    from replaylab.replay.overflow import OverflowRecovery, SessionRewrite, TruncationPlan
    from replaylab.safety.nested_calls import NestedRecords
    from replaylab.transcript.context import WindowMessage


def baseline_run(item: LoadedItem, start: StartPoint, records: NestedRecords | None = None) -> Baseline:
    """The later turns replayed on the full window: on it the agent must do what the recording did.
    `records`: what the recording's path records of the calls other calls made (`views.code_cells`),
    which judge the replayed calls it made as the ledger judges them (`setup.replay_tools`)."""
    from replaylab.qa.setup import replay_tools
    from replaylab.replay import recorded_run_trace, run_turns

    executor = replay_tools(
        item.scenario,
        item.files.cassette,
        item.classifier,
        item.pack,
        path=start.path,
        history=start.history,
        entries=item.transcript.entries,
        base_url=item.plan.tool_base_url,
        memo=item.memo,
        records=records,
    )
    model = item.model("baseline")
    trace = run_turns(
        start.full_window,
        start.later,
        model,
        executor,
        label="baseline",
        tools=views.tool_schemas(item.pack),
        memo=item.memo,
        on_turn=lambda done: report_turns(item.plan.progress, "baseline", done, len(start.later)),
    )
    infrastructure = [d for d in executor.defects if d.code in (Code.CASSETTE_MISSING, Code.TOOL_FAILED)]
    # a model's own findings (a litellm model's cassette miss) stop the run where they happen: the
    # drift from the recording that follows is their consequence, not a finding of its own
    own = list(getattr(model, "defects", []))
    recorded = recorded_run_trace(start.later, item.classifier, memo=item.memo)
    drift = [] if own else drift_from_recording(trace, recorded, item.drift_rules)
    defects = [
        *own,
        *drift,
        *(d for d in executor.defects if d.code == Code.MISLABELLED_TOOL),
        *infrastructure,
        # a call a live read tool failed on is reported as that, not again as a cassette gap
        *unanswered_recorded_calls(
            _without_calls(trace, {d.where.tool_call_id for d in infrastructure}),
            recorded,
            item.files.cassette,
            drifted=bool(drift),
        ),
    ]
    return Baseline(trace, executor, defects, lost_records([model]))


def _without_calls(trace: RunTrace, tool_call_ids: set[str | None]) -> RunTrace:
    """`trace` without the tool calls of these ids (the same trace when there are none)."""
    if not tool_call_ids:
        return trace
    copy = trace.model_copy(deep=True)
    for turn in copy.turns:
        turn.tool_calls = [c for c in turn.tool_calls if c.tool_call_id not in tool_call_ids]
    return copy


def compacted_run(
    item: LoadedItem,
    start: StartPoint,
    copy: WorkingCopy,
    first: Compacted,
    baseline_executor: ToolExecutor,
    before_writing: Callable[[], None] | None = None,
) -> CompactedRun:
    """The later turns replayed on the compacted window, compacting again at each later point
    (and, under `compact_at: auto`, whenever the window crosses the budget again: at a turn
    start, and before each reply after tool results for an agent that checks there).
    `before_writing` is called before anything changes the working copy (an agent asked ahead
    may still be reading it)."""
    from replaylab.compaction.recovery import StepOutcome
    from replaylab.qa.setup import ReplayedTurns, budget, crosses_budget, forced_past_guard
    from replaylab.replay import WindowTokenCount, run_turns
    from replaylab.replay.loop import produced_excluded_reply, prompt_window

    scenario = item.scenario
    window = list(first.window)  # this run's own list, grown turn by turn (`copy_window=False`)
    executor = baseline_executor.fresh()
    model = item.model("compacted")
    trace = RunTrace(label="compacted")
    replayed = ReplayedTurns(copy.writer, views.compaction_leaf(first.result))
    tools = views.tool_schemas(item.pack)
    token_count = WindowTokenCount(item.memo)  # one running count over the turns (a new window restarts it)
    later_compactions = []
    agent_windows: list[tuple[str, list[WindowMessage]]] = []
    steps = [
        CompactionStep(
            1,
            first.result.compaction_event_id,
            first.result.summary_text,
            start.first,
            first.window,
            at=len(start.history),
        )
    ]
    synced: list[int | None] = [None]  # where the window's messages not yet in the working copy start
    #: replaylab's own compaction failed because the entries safeguard keeps are over the budget on
    #: their own: until one succeeds (none can), each later one fails alike
    hopeless: list[Any] = [None]
    own_compactor = item.plan.compactor.given is None and item.plan.compactor.spec is None
    settle = before_writing or (lambda: None)
    turn_start = [0]

    def compact_again(at: int, why: str, trigger: str | None = None) -> tuple[Any, list[WindowMessage] | None]:
        """The compactor under test once more on the working copy (the replayed run written to
        it first); its window when it compacted. `trigger`: the recovery chain's (`overflow`,
        `timeout_recovery`); else the scenario's, as for the first compaction."""
        if hopeless[0] is not None:
            # the window still holds every entry that was over the budget on its own, and more:
            # the attempt fails as the last one did (counted, as pi tries again too), not re-run
            later_compactions.append(hopeless[0])
            return hopeless[0], None
        leaf = replayed.write()  # the next compaction summarizes the replayed turns
        report_phase(item.plan.progress, why)
        forced = forced_past_guard(item.memo)
        update: dict[str, Any] = {"leaf_id": leaf, "force_compact": forced}
        if trigger is not None:
            update["trigger"] = trigger
        again = copy.compactor(
            copy.params.model_copy(update=update),
            classifier=item.classifier,
            writer=copy.writer,
        )
        if not forced and getattr(again, "failure", None) == "already_compacted":
            again = refused_as_pi(
                again, copy.writer.transcript().path_to(leaf, item.memo), item.plan.profile.name, item.memo
            )
        later_compactions.append(again)
        if not again.success:
            if own_compactor and again.protected_over_budget:
                hopeless[0] = again
            return again, None
        compacted_window = views.window_of(again, copy.writer, item.memo, at_leaf=True)
        replayed.leaf = views.compaction_leaf(again)
        # a copy: the loop grows the window in place, and the legend reads it as compaction left it
        steps.append(
            CompactionStep(len(steps) + 1, again.compaction_event_id, again.summary_text, at, list(compacted_window))
        )
        leaf_now = copy.writer.transcript().leaf_id
        if leaf_now is not None:
            agent_windows.append((leaf_now, list(compacted_window)))
        return again, compacted_window

    #: the working copy's leaf and the window's length before the chain's last compaction
    pre_compaction: list[tuple[str | None, int]] = []

    def sync(current: list[WindowMessage]) -> None:
        """The turn's messages not yet in the working copy queued for it (a recovery step mid-turn
        writes the turn so far before it acts on the copy)."""
        replayed.add_messages(current[synced[0] if synced[0] is not None else turn_start[0] :])
        synced[0] = len(current)

    def compact_on_overflow(trigger: str, current: list[WindowMessage], info: dict[str, Any]) -> StepOutcome:
        """A compaction the recovery chain asks for, mid-turn: the turn's messages so far are
        written to the working copy with the turns before it."""
        settle()
        sync(current)
        pre_compaction[:] = [(replayed.write(), len(current))]
        again, compacted_window = compact_again(index, f"compacting on a context overflow ({trigger})", trigger)
        if compacted_window is None:
            return StepOutcome(False, reason=again.error, failure=getattr(again, "failure", None))
        synced[0] = len(compacted_window)
        return StepOutcome(True, window=compacted_window)

    def truncate_in_session(current: list[WindowMessage], plan: TruncationPlan) -> list[WindowMessage]:
        """The chain's truncation as OpenClaw rewrites its session: the turn so far written to
        the working copy, the plan made on the window rebuilt from it, the branch taken again
        with the cut results; the window rebuilt from the rewritten copy (the agent's window
        there is checked against the agent's own rebuild, as after a compaction)."""
        from replaylab.compaction.session_truncation import rewrite_branch
        from replaylab.transcript import build_window

        settle()
        sync(current)
        written = replayed.write()  # first: each transcript() is a snapshot of the file as it is
        transcript = copy.writer.transcript()
        path = transcript.path_to(written, item.memo)
        leaf, _ = rewrite_branch(copy.writer.append, path, plan(build_window(path, item.memo)), set(transcript.by_id))
        if leaf is None:
            return current
        replayed.leaf = leaf
        rewritten = views.window_of(None, copy.writer, item.memo, at_leaf=True)
        synced[0] = len(rewritten)
        agent_windows.append((leaf, list(rewritten)))
        return rewritten

    reply_tokens = WindowTokenCount(item.memo)  # the run's window grows reply by reply: counted as it grows

    def compact_before_reply(current: list[WindowMessage]) -> list[WindowMessage] | None:
        """An agent that checks before each reply of a run compacts there when the window crosses
        the budget: the turn's messages so far are written to the working copy first."""
        if reply_tokens.grown(current) <= budget(scenario):
            return None
        settle()
        sync(current)
        _, compacted_window = compact_again(index, f"compacting again within turn {turn_number(index):,}'s run")
        if compacted_window is not None:
            synced[0] = len(compacted_window)
        return compacted_window

    def restore_session(snapshot: list[WindowMessage]) -> None:
        """After a compaction timeout the run goes on from the pre-compaction snapshot: the
        working copy from the leaf written before the compaction (its entry stays in the file,
        off the path), as OpenClaw's session, whose compaction never completed."""
        if pre_compaction and pre_compaction[0][1] == len(snapshot):
            replayed.leaf, synced[0] = pre_compaction[0]

    recovery = overflow_recovery(item, compact_on_overflow, truncate_in_session, restore_session)
    model = recovery_model(item, model)
    checks_before_replies = scenario.compact_at == "auto" and item.plan.profile.compacts_before_replies
    excluded_since_prompt = False  # a reply of the turns since the last prompt is marked excluded
    for offset, turn in enumerate(start.later):
        index = start.first + offset
        if excluded_since_prompt and not turn.steered and turn.inputs:
            # the window the agent rebuilds for the prompt: what it checks for compaction and the turn starts on
            window = prompt_window(window, turn, item.plan.profile, "compacted")
            excluded_since_prompt = False
        if offset and (
            index in start.points
            or (
                scenario.compact_at == "auto"
                and not turn.steered
                and crosses_budget(window, turn, scenario, item.memo, token_count)
            )
        ):
            _, compacted_window = compact_again(index, f"compacting again before turn {turn_number(index):,}")
            if compacted_window is not None:
                window = compacted_window
            # a failed re-compaction leaves the window as it was (pi keeps going too); `compare`
            # reports it unless it only found nothing worth compacting
        before = turn_start[0] = len(window)
        synced[0] = None
        turn_trace, window = run_turns(
            window,
            [turn],
            model,
            executor,
            label="compacted",
            tools=tools,
            return_window=True,
            token_count=token_count,
            memo=item.memo,
            copy_window=False,
            recovery=recovery,
            before_reply=compact_before_reply if checks_before_replies else None,
        )
        excluded_since_prompt = excluded_since_prompt or produced_excluded_reply(turn_trace)
        trace.turns.extend(turn_trace.turns)
        trace.recovery.extend(turn_trace.recovery)
        trace.error = trace.error or turn_trace.error
        if synced[0] is None:
            replayed.add(window, turn, since=before)
        else:  # a recovery compaction in the turn wrote what came before it
            replayed.add_messages(window[synced[0] :])
        report_turns(item.plan.progress, "compacted run", offset + 1, len(start.later))
    first_window = views.window_of(first.result, copy.writer, item.memo)
    return CompactedRun(
        trace,
        later_compactions,
        [*executor.defects, *getattr(model, "defects", [])],
        first_window,
        lost_records([model]),
        steps,
        agent_windows,
    )


def overflow_recovery(
    item: LoadedItem,
    compact: Callable[..., Any],
    rewrite_session: SessionRewrite | None = None,
    restore_session: Callable[[list[WindowMessage]], None] | None = None,
) -> OverflowRecovery | None:
    """The compacted run's recovery chain when the scenario gives the agent a context window:
    the item's OpenClaw runtime rules, its agent's token estimate, safeguard's protection of
    mutating events unless the scenario allows truncating them, the truncation's rewrite of the
    working copy and the copy's return to a snapshot after a compaction timeout."""
    from replaylab.replay.loop import window_tokens
    from replaylab.replay.overflow import OverflowRecovery, spawning_entries
    from replaylab.upstream.runtime_rules import runtime_rules_named

    limit = item.scenario.context_window
    if limit is None:
        return None
    settings = item.scenario.compaction
    return OverflowRecovery(
        context_tokens=limit.tokens,
        rules=runtime_rules_named(item.plan.profile.runtime_rules),
        compact=compact,
        estimate=lambda window: window_tokens(window, item.memo),
        is_mutating=item.classifier.is_mutating,
        spawns=spawning_entries(item.ledger),
        protect_mutating=item.mode == "safeguard"
        and not settings.allow_mutating_event_truncate
        and "cut_mutating" not in limit.faults,
        faults=frozenset(limit.faults),
        diag_id_factory=_diag_ids(),
        rewrite_session=rewrite_session,
        # the reserve the scenario compacts with (its floor): what pi's setting is in the item
        reserve_tokens=settings.reserve_tokens_floor,
        mid_turn_precheck=limit.mid_turn_precheck,
        compaction_timeout=limit.compaction_timeout,
        restore_session=restore_session,
    )


def _diag_ids() -> Callable[[], str]:
    """OpenClaw's diagnostic ids (`cmp-<time base36>-<4 chars>`) numbered from the item's start
    instead of by the clock and chance: an item's results are the same at every run."""
    from replaylab.compaction.recovery import create_compaction_diag_id

    count = iter(range(1, 1 << 31))
    return lambda: create_compaction_diag_id(now_ms=0, token=f"{next(count):04d}")


def recovery_model(item: LoadedItem, model: Model) -> Model:
    """The compacted run's model, answering as its provider when a request does not fit."""
    from replaylab.model_spec import is_litellm
    from replaylab.replay.agent.context_limit import ContextLimitedModel
    from replaylab.replay.loop import window_tokens

    limit = item.scenario.context_window
    if limit is None or limit.overflow == "model":
        return model
    return ContextLimitedModel(
        model,
        tokens=limit.tokens,
        estimate=lambda window: window_tokens(window, item.memo),
        overflow=limit.overflow,
        provider=limit.provider,
        restate_usage=not is_litellm(item.plan.model_spec),
    )
