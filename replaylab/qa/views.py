"""Turn engine objects into the report's views: ledgers, windows, the compaction."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.results import SUMMARY_SOURCES, CompactionView, QualityGuardView, WindowItem
from replaylab.safety.ledger import LedgerEvent, LedgerView
from replaylab.safety.nested_calls import NO_RECORDS, NestedRecords, path_records
from replaylab.scrub import scrub_prefix, scrub_text
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import ToolCallBlock, ToolResultMessage, message_text
from replaylab.transcript.tokens import estimate_tokens

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactResult
    from replaylab.replay.tools.pack import ToolPack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import Ledger
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.rules import AgentRules

EXCERPT_CHARS = 400


def ledger_view(ledger: Ledger) -> LedgerView:
    return LedgerView(
        replay_safe=ledger.replay_safe,
        mutated_event_ids=list(ledger.mutated_event_ids),
        events=[
            e if isinstance(e, LedgerEvent) else LedgerEvent.model_validate(e, from_attributes=True)
            for e in ledger.events
        ],
    )


def events_after_point(item: Any, history: list[Any]) -> list[str]:
    """The events of the recording's ledger that the history up to the first compaction point does
    not hold (sub-agents go with their spawning call): the ones the compacted run replays."""
    from replaylab.safety.ledger import build_ledger

    span = set(build_ledger(item.transcript, item.classifier, path=history, memo=item.memo).mutated_event_ids)
    return [event_id for event_id in item.ledger.mutated_event_ids if event_id not in span]


def window_ledger_view(
    window: list[WindowMessage], classifier: ToolClassifier, memo: ItemMemo | None = None, children_of: Any = None
) -> LedgerView:
    """The ledger of a window; `children_of`: the recording whose sub-agent transcripts the
    window's spawning calls name (a window has no file of its own), so the window's ledger holds
    the same sub-agent events as the recording's."""
    from replaylab.safety.ledger import ledger_for_window, sibling_resolver
    from replaylab.safety.spawn_links import NO_LINKS, header_links

    resolver = sibling_resolver(children_of) if children_of is not None else None
    links = header_links(children_of.header) if children_of is not None else NO_LINKS
    return ledger_view(ledger_for_window(window, classifier, resolve_child=resolver, memo=memo, links=links))


def code_cells(transcript: Transcript, memo: ItemMemo | None = None) -> NestedRecords:
    """What the recording's leaf path records of the calls other calls made (`window_view`'s
    `code_cells`): OpenClaw's Code Mode cells, pi's `nestedCalls`."""
    return path_records(transcript.leaf_path(memo))


def window_view(
    window: list[WindowMessage],
    classifier: ToolClassifier,
    memo: ItemMemo | None = None,
    *,
    code_cells: NestedRecords | frozenset[str] = NO_RECORDS,
) -> list[WindowItem]:
    """The report's rows of a window. With an item's `memo`, each message's row is made once for
    both windows (before and after the compaction hold mostly the same message objects).
    `code_cells`: what the recording records of the calls other calls made (`code_cells`; a set
    of ids: OpenClaw's Code Mode cells), each call judged by them as the ledger judges it."""
    records = code_cells if isinstance(code_cells, NestedRecords) else NestedRecords(frozenset(code_cells))

    def made(message: Any) -> tuple[Any, tuple[str, int, str, bool]]:
        return classifier, _shown(message, classifier, memo)

    # a result is marked as its call is: the class can depend on the call's arguments (a read-only
    # shell command), which the result does not hold
    calls = {
        block.id: block
        for item in window
        if isinstance(getattr(item.message, "content", None), list)
        for block in item.message.content
        if isinstance(block, ToolCallBlock)
    }
    items = []
    for item in window:
        message = item.message
        seen = memo.shown.get(message, made) if memo is not None else None
        role, tokens, text, mutating = (
            seen[1] if seen is not None and seen[0] is classifier else _shown(message, classifier, memo)
        )
        if isinstance(message, ToolResultMessage) and message.tool_call_id in calls:
            mutating = records.mutating(calls[message.tool_call_id], classifier)
        elif isinstance(message, ToolResultMessage) and records.covers(message.tool_call_id):
            # its call summarized: judged by its tool's name and the records
            alone = ToolCallBlock(id=message.tool_call_id, name=message.tool_name or "", arguments={})
            mutating = records.mutating(alone, classifier)
        elif records:
            content = getattr(message, "content", None)
            blocks = [b for b in content if isinstance(b, ToolCallBlock)] if isinstance(content, list) else []
            if any(records.covers(b.id) for b in blocks):
                mutating = any(records.mutating(b, classifier) for b in blocks)
        items.append(
            WindowItem(
                entry_id=item.entry_id,
                role=role,
                tokens=tokens,
                text=text,
                protected=item.protected,
                mutating=mutating,
                restates=item.restates,
            )
        )
    return items


def _shown(message: Any, classifier: ToolClassifier, memo: ItemMemo | None) -> tuple[str, int, str, bool]:
    """What the report shows of one message: role, token estimate, scrubbed excerpt, and whether
    it holds a mutating call or result."""
    mutating = False
    content = getattr(message, "content", None)
    if isinstance(content, list):
        mutating = any(isinstance(b, ToolCallBlock) and classifier.is_mutating(b.name, b.arguments) for b in content)
    if isinstance(message, ToolResultMessage) and message.tool_name:
        mutating = classifier.is_mutating(message.tool_name, {})
    if memo is not None:
        return getattr(message, "role", "?"), memo.tokens(message), _excerpt(memo.text(message)), mutating
    return getattr(message, "role", "?"), estimate_tokens(message), _excerpt(message_text(message)), mutating


def _excerpt(text: str) -> str:
    """The text scrubbed and cut to `EXCERPT_CHARS`: scrubbed before the cut (with a margin past
    it), so a secret the cut would split is still recognised whole and never half-kept."""
    if len(text) <= EXCERPT_CHARS:
        return scrub_text(text)
    return scrub_prefix(text, EXCERPT_CHARS) + f" … ({len(text) - EXCERPT_CHARS} more chars)"


def tool_schemas(pack: ToolPack | None) -> list[dict[str, Any]]:
    return [spec.openai_schema() for spec in pack.tools.values()] if pack is not None else []


def window_of(
    outcome: Any, writer: Any = None, memo: ItemMemo | None = None, *, at_leaf: bool = False
) -> list[WindowMessage]:
    """The compacted window, rebuilt from the working copy at the leaf the compaction left (its
    entry, or the last entry it restated after itself), through the working copy's writer when
    there is one: it re-reads the file only when needed. `at_leaf`: at the working copy's leaf
    instead — what the agent resumes from right after a compaction, whatever entry the compactor
    names (a compactor under test must leave its compaction, or its restatements, at the leaf)."""
    transcript = writer.transcript() if writer is not None else load_transcript(Path(outcome.working_copy))
    leaf = transcript.leaf_id if at_leaf else compaction_leaf(outcome)
    return build_window(transcript.path_to(leaf, memo), memo)


def agent_leaf(writer: Any, leaf: str, rules: AgentRules, memo: ItemMemo | None = None) -> str:
    """The entry the agent rebuilds its context at for the working copy's `leaf`: the leaf itself,
    or, when the agent keeps it aside as it loads the session (`AgentRules.kept_aside`; a safeguard
    compaction restates an entry OpenClaw keeps aside byte for byte, so keeps its copy aside too),
    its nearest ancestor the agent reads. The window there is the same: what it keeps aside is in
    none of its contexts."""
    path = writer.transcript().path_to(leaf, memo)
    # from the leaf back, entry by entry: nearly always the leaf itself is read, and the path is long
    return next((entry.id for entry in reversed(path) if not rules.kept_aside((entry,))), leaf)


def compaction_leaf(outcome: Any) -> str | None:
    """The leaf a successful compaction left in the working copy (`CompactResult.leaf_id`; a
    result that does not say: its compaction entry)."""
    leaf: str | None = getattr(outcome, "leaf_id", None) or outcome.compaction_event_id
    return leaf


def compaction_view(outcome: CompactResult, mode: str, count: int = 1) -> CompactionView:
    guard = getattr(outcome, "quality_guard", None)
    guard_view = None
    if guard is not None:
        data = guard if isinstance(guard, dict) else guard.model_dump()
        guard_view = QualityGuardView(
            ok=bool(data.get("ok")), attempts=int(data.get("attempts", 1)), reasons=list(data.get("reasons", []))
        )
    first_kept = getattr(outcome, "first_kept_entry_id", None)
    cut = getattr(getattr(outcome, "cut_point", None), "tail_entry_id", None)
    return CompactionView(
        cut_entry_id=cut if outcome.success and first_kept == outcome.compaction_event_id else None,
        mode=mode,
        success=outcome.success,
        original_tokens=outcome.original_token_count,
        compacted_tokens=outcome.compacted_token_count,
        token_saved=outcome.token_saved,
        first_kept_entry_id=getattr(outcome, "first_kept_entry_id", None),
        compaction_event_id=outcome.compaction_event_id,
        protected_entry_ids=list(getattr(outcome, "protected_entry_ids", []) or []),
        summary_text=scrub_text(outcome.summary_text or ""),
        quality_guard=guard_view,
        error=outcome.error,
        compactions=count,
        summary_source=SUMMARY_SOURCES.get(getattr(outcome, "summarizer", None) or ""),
    )
