"""Scenario plumbing for the pipeline: tool pack, classifier, compact() parameters, budgets, and
writing a replayed turn into the working copy so a later compaction summarizes what really ran."""

from __future__ import annotations

import bisect
import datetime as _dt
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from replaylab import caches
from replaylab.qa.boundaries import Boundary, counted, prompt_tokens
from replaylab.qa.plan import BudgetRequest
from replaylab.replay.loop import WindowTokenCount, window_tokens
from replaylab.replay.tools.pack import ToolPack
from replaylab.results import BudgetView
from replaylab.safety.classify import ToolClassifier
from replaylab.suite import CompactionSettings, Scenario
from replaylab.transcript import TranscriptWriter
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.ids import derived_entry_id
from replaylab.transcript.memo import ItemMemo

if TYPE_CHECKING:
    from replaylab.compaction import CompactParams
    from replaylab.qa.auto_budget import PointWords, TailOf
    from replaylab.safety.nested_calls import NestedRecords
    from replaylab.upstream.runtime_rules import TurnStartRules

#: tool packs by the suite's name for them (as data, or the failure that made them none): loading
#: one starts its process and reads its specs
_PACKS: caches.ProcessCache[str, Any] = caches.ProcessCache("qa.tool_packs")


def load_pack(scenario: Scenario) -> ToolPack | None:
    """The suite's tool pack as data (`replay.tools.pack_data`): never imported here, its schemas,
    classes and `class_for` answers come from a process of its own. Raises `PackFailure` naming
    the pack when its code misbehaves there (an item error); a failure is kept for the run."""
    from replaylab.replay.tools.pack_data import load_pack_data

    return load_pack_data_once(scenario.tools, load_pack_data) if scenario.tools else None


def load_pack_data_once(name: str, load: Any) -> ToolPack:
    """`load(name)` once per process; a pack whose process failed is not started again for every
    item (the failure is raised again), one whose `class_for` failed later is (its process ended)."""
    hit = _PACKS.get(name)
    if hit is None:
        try:
            hit = _PACKS[name] = load(name)
        except Exception as failure:
            _PACKS[name] = failure
            raise
    if isinstance(hit, Exception):
        raise hit
    pack: ToolPack = hit
    return pack


def classifier_for(scenario: Scenario, recording: Path, pack: ToolPack | None) -> ToolClassifier:
    """Declared classes: the suite's tool_classes.json, the tool pack, a tool_classes.json next to
    the recording — merged in that order of precedence, the suite's `classification` overrides
    above them all; OpenClaw rules / unknown ⇒ mutating after."""
    classifier = ToolClassifier()
    beside = Path(recording).parent / "tool_classes.json"
    if beside.is_file():
        classifier = classifier.merged(ToolClassifier.from_json(beside))
    if pack is not None:
        classifier = classifier.merged(ToolClassifier.from_tool_pack(pack))
    if scenario.tool_classes is not None:
        classifier = classifier.merged(ToolClassifier.from_json(scenario.tool_classes))
    return _sharing_answers(classifier.with_overrides(scenario.classification))


#: the answers of the classifiers `classifier_for` made, by everything an answer is read from: the
#: items of a suite each make an equal classifier, and their recordings repeat the same calls
_ANSWERS: caches.ProcessCache[tuple[Any, ...], dict[Any, Any]] = caches.ProcessCache("qa.classifier_answers")
#: classifiers of distinct declarations whose answers are kept at once (each table is bounded)
MAX_ANSWER_TABLES = 16


def _sharing_answers(classifier: ToolClassifier) -> ToolClassifier:
    """`classifier` answering from the table of every classifier of the same declarations, deciders
    and overrides (`ToolClassifier.answer_key`: the deciders by identity, the same pack's)."""
    return classifier.answering_from(_answer_table)


def _answer_table(key: tuple[Any, ...]) -> dict[Any, Any]:
    try:
        table = _ANSWERS.get(key)
    except TypeError:  # a decider that cannot be a key: its classifier keeps answers of its own
        return {}
    if table is None:
        if len(_ANSWERS) >= MAX_ANSWER_TABLES:
            _ANSWERS.clear()
        table = _ANSWERS[key] = {}
    return table


def replay_tools(
    scenario: Scenario,
    cassette: Path,
    classifier: ToolClassifier,
    pack: ToolPack | None,
    *,
    path: list[Any],
    history: list[Any],
    entries: Sequence[Any],
    base_url: str,
    memo: ItemMemo | None = None,
    records: NestedRecords | None = None,
) -> Any:
    """The tools of an item's replays (`replay.ToolExecutor`): the pack's tools answered from the
    recording's results on its leaf `path` (their code runs only for read tools, and only when the
    suite opts in with `live_read_tools`), every call of `history` (before the starting point)
    marked played from the recording, so a repeat of one is not served twice; and the calls of the
    file's `entries` off the path (an abandoned branch), whose answers the path never got. A call
    the recording made mutates as the ledger judges it, by what `records` (`views.code_cells`; None:
    made from `path`) say of the calls it made (`RecordedJudgement`)."""
    from replaylab.replay import ToolExecutor, calls_before, calls_off_path
    from replaylab.replay.tools.recorded_judgement import RecordedJudgement
    from replaylab.replay.tools.recorded_results import RecordedResults

    recorded = RecordedResults.of(path, memo)
    return ToolExecutor(
        cassette,
        classifier,
        tool_pack=pack,
        recorded=recorded,
        executed_before=calls_before(history),
        recorded_calls=calls_before(path),
        file_calls=calls_off_path(entries, path),
        base_url=base_url,
        live_read_tools=scenario.live_read_tools,
        judged=RecordedJudgement.of(classifier, records, recorded) if records is not None else None,
    )


#: characters a scenario name keeps in a cassette file name (others become `_`)
_FILE_NAME_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def llm_cassette_path(recording: Path, scenario: Scenario, run: str, *, repeat: int = 0) -> Path:
    """The litellm model's cassette for one recording, scenario and run (`baseline` | `compacted`):
    `<stem>.llm.<scenario>.<run>.cassette.yaml`, beside the recording or in the suite's
    `llm_cassettes` folder; repeats after the first (`repeats: k`) add `.r2` … `.rk` before
    `.cassette.yaml`. One file per run, not one per scenario with tagged requests: the two runs
    send the same request whenever their windows agree, and a file of its own lets a run be
    re-recorded (or deleted) without touching the other's answers. One per repeat, because a
    repeat that replayed the first repeat's answers could never differ from it."""
    stem = Path(recording).name.removesuffix(".jsonl")
    again = f".r{repeat + 1}" if repeat else ""
    name = f"{stem}.llm.{_FILE_NAME_SAFE.sub('_', scenario.name)}.{run}{again}.cassette.yaml"
    return (scenario.llm_cassettes or Path(recording).parent) / name


def compact_params(
    scenario: Scenario, mode: str, working_copy: Path, *, leaf_id: str | None, force: bool = False
) -> CompactParams:
    """compact()'s parameters for a scenario whose budget is settled (`resolve_budget`); `force`:
    past the double-compaction guard (`forced_past_guard`)."""
    from replaylab.compaction import CompactParams

    c = scenario.compaction
    context, reserve = settled_budget(c)
    return CompactParams(
        session_file=str(working_copy),
        # a mode from an ini file is checked here first: pydantic refuses one that is no `Mode`
        compaction_mode=mode,  # type: ignore[arg-type]
        context_tokens=context,
        reserve_tokens_floor=reserve,
        model_provider=c.model_provider,
        replay_check=True,
        force_compact=force,
        allow_mutating_event_truncate=c.allow_mutating_event_truncate,
        max_history_share=c.max_history_share,
        identifier_policy=c.identifier_policy,
        recent_turns_preserve=c.recent_turns_preserve,
        keep_recent_tokens=c.keep_recent_tokens,
        leaf_id=leaf_id,
        summarizer_failures=c.summarizer_failures,
        # pi's reasons: under `auto` the window crossed the budget; at a fixed point it was asked for
        trigger="threshold" if scenario.compact_at == "auto" else "manual",
    )


def forced_past_guard(memo: ItemMemo) -> bool:
    """Whether the pipeline forces its compactions past the harness's double-compaction guard
    (`forceCompact`). An item whose memo carries its agent's rules meets those rules' own refusals
    (`compaction.plan.agent_refusal`) instead. pi 0.73.1's items carry none: the guard is pi 0.73.1's
    own (`prepareCompaction` returns nothing for a compaction leaf; `compact()` throws "Already
    compacted", threshold and overflow compactions end without one), so every one of their
    compactions, manual ones too, meets it as pi does."""
    return memo.rules is not None


def budget(scenario: Scenario) -> int:
    """The window the check before a turn lets the context fill: contextTokens less the reserve
    `resolve_budget` settled (the suite's floor, or the reserve the item's OpenClaw release keeps
    at that window). Only for a scenario whose budget is resolved."""
    context, reserve = settled_budget(scenario.compaction)
    return context - reserve


def settled_budget(settings: CompactionSettings) -> tuple[int, int]:
    """(contextTokens, reserve) of settings whose budget `resolve_budget` settled."""
    context, reserve = settings.context_tokens, settings.reserve_tokens_floor
    assert isinstance(context, int) and reserve is not None, "the budget is settled first (resolve_budget)"
    return context, reserve


def turn_start_rules(memo: ItemMemo | None) -> TurnStartRules:
    """When the item's OpenClaw release compacts before a turn (2026.4.12's without rules: pi 0.73.1's items)."""
    from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12

    runtime = memo.runtime_rules if memo is not None else None
    return (runtime or OPENCLAW_2026_4_12).turn_start


def resolve_budget(
    scenario: Scenario,
    request: BudgetRequest,
    boundaries: list[Boundary],
    mode: str,
    words: PointWords | None = None,
    tail: TailOf | None = None,
    rules: TurnStartRules | None = None,
) -> tuple[Scenario, BudgetView] | None:
    """The scenario with its budget in numbers — the plan's request (the command line's settings
    over the suite's), `auto` chosen from the recording's own turn-start windows
    (`qa.auto_budget`) — and what it is for the report; None when an auto budget has no turn
    start to work from. `words`: how an auto budget's rule names the points (default: turn starts);
    `tail`: what the agent's cut keeps at a point (`auto_budget.choose_budget`); `rules`: when the
    item's release compacts before a turn and with which reserve (default: 2026.4.12's, the floor).
    Where that reserve follows a set window, the settled reserveTokensFloor is that reserve, so the
    trigger's budget and the compaction's (`compaction.job.Job.reserve`) are the release's."""
    from replaylab.qa.auto_budget import TURN_STARTS, choose_budget

    rules = rules or turn_start_rules(None)
    c = scenario.compaction
    context, reserve, keep = request.context_tokens, request.reserve_tokens_floor, request.keep_recent_tokens
    source: Literal["command line", "suite", "auto"] = request.source
    rule, too_small = "", False
    if context == "auto":
        chosen = choose_budget(
            boundaries,
            protects=mode == "safeguard",
            reserve_tokens_floor=reserve,
            keep_recent_tokens=keep,
            words=words or TURN_STARTS,
            tail=tail,
            rules=rules,
        )
        if chosen is None:
            return None
        context, reserve, keep, rule = (
            chosen.context_tokens,
            chosen.reserve_tokens_floor,
            chosen.keep_recent_tokens,
            chosen.why,
        )
        source, too_small = "auto", chosen.too_small
    elif reserve is None:
        reserve = c.reserve(context)
    reserve_rule = None
    if rules.reserve == "window" and source != "auto":  # auto keeps its own reserve (auto_budget step 7)
        reserve = rules.trigger_reserve(context, reserve)
        reserve_rule = reserve_in_words(reserve, request.reserve_tokens_floor)
    settled = c.model_copy(
        update={"context_tokens": context, "reserve_tokens_floor": reserve, "keep_recent_tokens": keep}
    )
    view = BudgetView(
        context_tokens=context,
        reserve_tokens_floor=reserve,
        keep_recent_tokens=keep,
        source=source,
        rule=rule,
        too_small=too_small,
        reserve_rule=reserve_rule,
    )
    return scenario.model_copy(update={"compaction": settled}), view


def reserve_in_words(reserve: int, floor: int | None) -> str:
    """A reserve that follows the window, as the report names it (and the floor it leaves unread)."""
    from replaylab.upstream.openclaw_2026_9_6 import COMPACTION_RESERVE_TOKENS_FLOOR, MAX_COMPACTION_RESERVE_RATIO

    unread = f"; reserveTokensFloor {floor:,} is a setting it retired" if floor is not None and floor != reserve else ""
    return (
        f"OpenClaw 2026.9.6's: the least of {COMPACTION_RESERVE_TOKENS_FLOOR:,} and "
        f"{MAX_COMPACTION_RESERVE_RATIO:.0%} of contextTokens{unread}"
    )


def auto_points(boundaries: list[Boundary], scenario: Scenario, rules: TurnStartRules | None = None) -> list[int]:
    """The first turn at whose start the item's release compacts: the recorded window (with the
    turn's prompt where the release counts it there) over the budget, or reaching it where the
    release compacts at the threshold (`TurnStartRules`)."""
    rules = rules or turn_start_rules(None)
    limit = budget(scenario)
    return next(([b.turn] for b in boundaries if rules.fires(counted(b, rules), limit)), [])


def crosses_budget(
    window: list[WindowMessage],
    turn: Any,
    scenario: Scenario,
    memo: ItemMemo | None = None,
    count: WindowTokenCount | None = None,
) -> bool:
    """Whether the window, with the turn's inputs, is over the budget (reaches it, where the
    item's release compacts at the threshold). `count`: the run's running count of `window` (a list
    only ever appended to), so a run asking before each of its turns sums each message once, not
    the whole window again per turn."""
    incoming = prompt_tokens(turn, memo)
    held = window_tokens(window, memo) if count is None else count.grown(window)
    return turn_start_rules(memo).fires(held + incoming, budget(scenario))


class ReplayedTurns:
    """The replayed turns still to be written to the working copy, chained from `leaf`.

    Only a later compaction reads them (it summarizes the replayed run, not the recording), so
    they are written just before one runs — or never, when none follows (`compact_at: turn:N`):
    dumping and appending every replayed message would cost a file nobody reads again."""

    def __init__(self, writer: TranscriptWriter, leaf: str | None):
        self.writer = writer
        self.leaf = leaf
        self._pending: list[WindowMessage] = []

    def add(self, window: list[WindowMessage], turn: Any, since: int = 0) -> None:
        """The turn's recorded inputs and everything the replay produced after them. `since`:
        the window's length before the turn, where its inputs start (the search starts there:
        from the window's start, every turn of a long run would scan the whole window again)."""
        count = _new_messages(window, turn, since)
        self._pending.extend(window[len(window) - count :])

    def add_messages(self, messages: list[WindowMessage]) -> None:
        """Messages of the run to write as they are (a turn's part after a recovery compaction)."""
        self._pending.extend(messages)

    def write(self) -> str:
        """Append what is pending, as the run had it, and return the new leaf id.

        Tool results are not capped again: each is the result the recording persisted, so it went
        through the recorded agent's own write-time cap already (pi has none; OpenClaw's depends on
        the model's window, which a session does not hold), and the copy stays the run's window."""
        stamp = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        leaf = self.leaf
        assert leaf is not None, "replayed turns chain from the leaf of a successful compaction"
        for item in self._pending:
            entry_id = derived_entry_id(set(), leaf, item.entry_id or "", "replayed")
            message = item.message.model_dump(mode="json", by_alias=True, exclude_none=True)
            self.writer.append(
                {"type": "message", "id": entry_id, "parentId": leaf, "timestamp": stamp, "message": message}
            )
            leaf = entry_id
        self._pending.clear()
        self.leaf = leaf
        return leaf


def copy_children(recording: Path, work: Path) -> None:
    """Sub-agent transcripts (`<name>.sub-*.jsonl` + cassettes) next to the working copy, so the
    ledger of the working copy can fold them in as it does for the recording."""
    import shutil

    prefix = recording.name.removesuffix(".jsonl") + ".sub-"
    names = _folder_names(recording.parent)
    # the listing is sorted, so the names with the prefix are the run that starts where the prefix
    # would go: found in O(log n), not by testing every name of a folder of many sessions
    index = bisect.bisect_left(names, prefix)
    while index < len(names) and names[index].startswith(prefix):
        name = names[index]
        index += 1
        if (recording.parent / name).is_file():
            shutil.copyfile(recording.parent / name, work / name)


#: folder → (its mtime when listed, its sorted file names)
_LISTINGS: caches.ProcessCache[Path, tuple[int, list[str]]] = caches.ProcessCache("qa.folder_listings")
LISTING_SETTLE_NS = 3_000_000_000


def _folder_names(folder: Path) -> list[str]:
    """The file names in a recordings folder, listed again only when the folder changed (its
    mtime): listing it per item would make a suite's items O(n²) in its sessions. A folder
    changed in the last few seconds is always listed again: on a file system with a coarse
    clock, a second change in the same tick would not move the mtime."""
    stamp = folder.stat().st_mtime_ns
    hit = _LISTINGS.get(folder)
    if hit is None or hit[0] != stamp or time.time_ns() - stamp < LISTING_SETTLE_NS:
        hit = _LISTINGS[folder] = (stamp, sorted(os.listdir(folder)))
    return hit[1]


def _new_messages(window: list[WindowMessage], turn: Any, since: int = 0) -> int:
    """Messages the last turn added: its recorded inputs plus everything after them. The inputs
    are looked for from `since` on, then (a window the run replaced) from the start."""
    input_ids = {e.id for e in turn.inputs}
    for start, stop in ((since, len(window)), (0, min(since, len(window)))):
        for index in range(start, stop):
            if window[index].entry_id in input_ids:
                return len(window) - index
    return 0
