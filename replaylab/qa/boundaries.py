"""The window at the start of every user turn of a recording, in one pass over its path.

`compact_at: auto` compacts before the first turn whose window crosses the budget, and the
automatic budget (`qa.auto_budget`) is chosen from these windows; building the window again at
every turn would make both quadratic in the session's length. The figures are exactly those of
`window_tokens(build_window(path[:start]))` (pi's chars/4 estimate of the context pi builds at that
point), kept as running sums: the latest compaction's summary, the entries it kept, and everything
after it.

Those running sums follow pi 0.73.1's rebuild. An item judged under another agent's rules
(`ItemMemo.rules`) gets each boundary's window rebuilt by those rules instead: the agent decides
what its window holds at each turn start (a reset empties it, an excluded message is not in it).

Each boundary also carries what safeguard must keep verbatim there: the tokens of the window's
protected entries (mutating tool calls and their results, calls still waiting for their result,
entries an earlier safeguard compaction protected) — safeguard's compacted window holds them all,
besides its summary and its kept tail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replaylab.compaction.safeguard import PathCalls, path_calls, select_protected, unread_call_mutates
from replaylab.qa.progress import Progress, report_phase, report_turns
from replaylab.transcript.context import entry_to_message, protected_ids
from replaylab.transcript.javascript import number_or_none
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id() call
from replaylab.transcript.model import CompactionEntry, CompactionSummaryMessage, MessageEntry, ToolResultMessage
from replaylab.transcript.pairing import recorded_calls
from replaylab.transcript.tokens import estimate_tokens

if TYPE_CHECKING:
    from replaylab.replay import Turn
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.model import AnyEntry
    from replaylab.upstream.runtime_rules import TurnStartRules


@dataclass(frozen=True)
class Boundary:
    """The start of one user turn after the first, where an agent could compact."""

    turn: int  # index of the turn (0-based)
    start: int  # index on the path of the turn's first input: the window is built from path[:start]
    tokens: int  # the window's tokens (what the trigger compares with the budget)
    protected_tokens: int  # tokens of the window's protected entries (0: none)
    after_compaction: bool  # the entry before the turn is a compaction (compacting again is refused)
    #: the tokens of the turn's inputs (the prompt an agent's check before it may count)
    inputs: int = 0


def turn_boundaries(
    path: Sequence[AnyEntry],
    turns: Sequence[Turn],
    classifier: ToolClassifier | None = None,
    memo: ItemMemo | None = None,
    progress: Progress | None = None,
) -> list[Boundary]:
    """Every turn after the first that starts with an input where an agent checks for compaction
    (not one typed while its run went on: `Turn.steered`), in order. Without a classifier no
    entry counts as protected. Where the agent's rules rebuild each window (`memo.rules`), a
    long session takes a while here, before any turn is replayed: `progress` hears of it."""
    tokens_of = estimate_tokens if memo is None else memo.tokens
    position = {identity(entry): index for index, entry in enumerate(path)}
    starts = [
        (index, position[identity(turn.first_entry)])
        for index, turn in enumerate(turns)
        if index and (turn.inputs or turn.steps) and not turn.steered
    ]
    inputs = {index: prompt_tokens(turns[index], memo) for index, _ in starts}
    calls = path_calls(path) if classifier is not None else PathCalls(frozenset())
    if memo is not None and memo.rules is not None:
        return _rebuilt(path, starts, classifier, calls, memo, inputs, progress)
    first_of: dict[str, int] = {}  # entry id → its first index (a compaction's firstKeptEntryId)
    for index, entry in enumerate(path):
        first_of.setdefault(entry.id, index)
    found: list[Boundary] = []
    # running state: the window so far is [summary] + path[kept_from:compaction] + path[compaction+1:i]
    window = 0  # tokens of the window over path[:i]
    protected = 0  # tokens of its protected entries
    protected_calls: set[str] = set()  # call ids of the protected calls seen so far (their results are too)
    at = 0
    for turn_index, start in starts:
        while at < start:
            entry = path[at]
            if isinstance(entry, CompactionEntry):
                kept_from = first_of.get(entry.first_kept_entry_id or "", at)
                window, protected = _after_compaction(
                    path,
                    at,
                    kept_from if kept_from < at else at,
                    entry,
                    tokens_of,
                    classifier,
                    calls,
                    protected_calls,
                )
            else:
                message = entry_to_message(entry)
                if message is not None:
                    tokens = tokens_of(message)
                    if classifier is not None and _protected(entry, classifier, calls, protected_calls):
                        protected += tokens
                    window += tokens
            at += 1
        found.append(
            Boundary(
                turn=turn_index,
                start=start,
                tokens=window,
                protected_tokens=protected,
                after_compaction=start > 0 and isinstance(path[start - 1], CompactionEntry),
                inputs=inputs[turn_index],
            )
        )
    return found


def _rebuilt(
    path: Sequence[AnyEntry],
    starts: list[tuple[int, int]],
    classifier: ToolClassifier | None,
    calls: PathCalls,
    memo: ItemMemo,
    inputs: dict[int, int],
    progress: Progress | None = None,
) -> list[Boundary]:
    """The boundaries with each window as the item's agent rules make it (`window_steps`: a stretch
    without a boundary grows the window, so a long session is not rebuilt from its root at every
    turn start)."""
    assert memo.rules is not None
    by_id = {entry.id: entry for entry in path}
    found = []
    report_phase(progress, f"reading {len(starts):,} turn starts by the agent's rules")
    # running figures of the window so far, grown or started again by each step
    tokens = protected = 0
    protected_calls: set[str] = set()
    steps = memo.rules.window_steps(path, [start for _, start in starts])
    for done, ((turn_index, start), step) in enumerate(zip(starts, steps), 1):
        if step.replaced:
            tokens = protected = 0
            protected_calls = set()
        for item in step.messages:
            count = memo.tokens(item.message)
            tokens += count
            if (
                classifier is not None
                and (entry := by_id.get(item.entry_id or "")) is not None
                and _protected(entry, classifier, calls, protected_calls)  # first: it notes the calls
            ) or item.protected:
                protected += count
        found.append(
            Boundary(
                turn=turn_index,
                start=start,
                tokens=tokens,
                protected_tokens=protected,
                after_compaction=start > 0 and isinstance(path[start - 1], CompactionEntry),
                inputs=inputs[turn_index],
            )
        )
        report_turns(progress, "turn-start windows rebuilt", done, len(starts))
    return found


def _after_compaction(
    path: Sequence[AnyEntry],
    index: int,
    kept_from: int,
    compaction: CompactionEntry,
    tokens_of: Any,
    classifier: ToolClassifier | None,
    calls: PathCalls,
    protected_calls: set[str],
) -> tuple[int, int]:
    """The window's tokens right after the compaction entry at `index` (as `build_window` makes it:
    the summary, then the entries from its firstKeptEntryId — at `kept_from` — up to it), and the
    tokens of its protected entries."""
    summary = CompactionSummaryMessage(
        summary=compaction.summary,
        tokens_before=int(tokens) if (tokens := number_or_none(compaction.tokens_before)) is not None else None,
        timestamp=compaction.timestamp,
    )
    window = estimate_tokens(summary)
    keep = set(protected_ids(compaction))
    protected = 0
    protected_calls.clear()  # a call the compaction summarized no longer protects its result
    for entry in path[kept_from:index]:
        message = entry_to_message(entry)
        if message is None:
            continue
        tokens = tokens_of(message)
        if entry.id in keep or (classifier is not None and _protected(entry, classifier, calls, protected_calls)):
            protected += tokens
        window += tokens
    return window, protected


def _protected(entry: AnyEntry, classifier: ToolClassifier, calls: PathCalls, protected_calls: set[str]) -> bool:
    """Safeguard's own rule for one entry: a mutating call that ran, a call still waiting for its
    result, or the result of such a call (`protected_calls`: their call ids so far, grown here)."""
    if not isinstance(entry, MessageEntry):
        return False
    if isinstance(entry.message, ToolResultMessage):
        call_id = entry.message.tool_call_id
        return call_id in protected_calls or (
            entry.id in calls.unread_results and unread_call_mutates(entry.message, classifier)
        )
    made = recorded_calls(entry.message)
    # a message making no call is protected by nothing `select_protected` is given here
    if not made or not select_protected([entry], classifier, calls=calls).entry_ids:
        return False
    protected_calls.update(c.id for c in made)
    return True


def counted(boundary: Boundary, rules: TurnStartRules) -> int:
    """What the item's release's check counts at a recorded turn start: the window, with the
    turn's prompt where it counts the prompt at the first point too."""
    return boundary.tokens + (boundary.inputs if rules.counts_prompt_first else 0)


def prompt_tokens(turn: Turn, memo: ItemMemo | None = None) -> int:
    """The agent's estimate of a turn's inputs, the prompt its check before the turn counts. Where
    the item's release estimates the prompt's text trimmed (`TurnStartRules.trims_prompt`), an input
    of one text block is counted so."""
    if memo is None:
        return sum(estimate_tokens(m) for e in turn.inputs if (m := entry_to_message(e)) is not None)
    trims = memo.runtime_rules is not None and memo.runtime_rules.turn_start.trims_prompt
    total = 0
    for entry in turn.inputs:
        message = entry_to_message(entry)
        if message is None:
            continue
        trimmed = _trimmed_prompt(message) if trims else None
        # a trimmed copy is estimated afresh, never memoized in the message's place
        total += memo.tokens(message) if trimmed is None else memo.estimate(trimmed)
    return total


def _trimmed_prompt(message: Any) -> Any | None:
    """A user message of one text block with that text trimmed; None where there is nothing to trim."""
    content = getattr(message, "content", None)
    if getattr(message, "role", None) != "user" or not isinstance(content, list) or len(content) != 1:
        return None
    block = content[0]
    text = getattr(block, "text", None)
    if getattr(block, "type", None) != "text" or not isinstance(text, str) or text.strip() == text:
        return None
    return message.model_copy(update={"content": [block.model_copy(update={"text": text.strip()})]})
