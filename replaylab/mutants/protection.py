"""Protected entries that do not reach the agent as recorded: summarized away, merged, truncated,
re-signed.

Safeguard keeps them in entries pi shows (the kept tail, or the entries it restates after its
compaction entry), so a buggy compactor loses them the ways pi honours: some of them never written
where pi shows them, or written changed (`Ctx.restate`: pi then shows the changed entries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replaylab.defects import Code
from replaylab.selftest import Mutant
from replaylab.transcript.model import (
    AssistantMessage,
    MessageEntry,
    TextBlock,
    ThinkingBlock,
    ToolResultMessage,
    message_text,
)
from replaylab.transcript.pairing import message_calls

from ._kit import Ctx, edited


def awaiting_decision(ctx: Ctx, entry_ids: Sequence[str]) -> list[str]:
    """The entries among `entry_ids` (shown ones) that still await a decision — calls with no result
    yet, and mutating calls refused pending an approval (every result an error) — with their shown
    results."""
    by_id = ctx.by_id()
    shown_results = ctx.result_entries(ctx.kept())
    results = ctx.result_entries([*ctx.path, *ctx.after_entries()])
    awaiting: list[str] = []
    for entry_id in entry_ids:
        entry = by_id.get(entry_id)
        if not isinstance(entry, MessageEntry):
            continue
        calls = message_calls(entry.message)
        if not calls:
            continue
        pending = any(c.id not in results for c in calls)
        refused = ctx.is_mutating_call_entry(entry) and all(
            c.id in results and getattr(results[c.id].message, "is_error", False) for c in calls
        )
        if pending or refused:
            awaiting.append(entry_id)
            awaiting.extend(shown_results[c.id].id for c in calls if c.id in shown_results)
    return awaiting


def _drop_pending(ctx: Ctx) -> str | None:
    """Protection forgets what still awaits a decision: the pending / refused calls are not written
    where pi shows them (left out of the restated entries, or of the kept span), so they are gone
    with the summarized history."""
    awaiting = awaiting_decision(ctx, ctx.protected)
    if not awaiting:
        return None
    ctx.restate(dict.fromkeys(awaiting))
    return f"pending / refused-for-approval events left out of what pi shows: {', '.join(awaiting)}"


PENDING = Mutant(
    name="pending-confirmation-compacted-away",
    issue="google/adk-python#4740",
    expected=(Code.MUTATION_DROPPED,),
    what="the call awaiting a confirmation (no result yet, or refused pending approval) is summarized away",
    compactor=edited(_drop_pending),
)


def _protected_groups(ctx: Ctx) -> list[tuple[MessageEntry, list[Any]]]:
    """(call entry, its calls) of every protected assistant message with tool calls pi shows."""
    protected = set(ctx.protected)
    return [
        (e, e.message.tool_calls())
        for e in ctx.kept()
        if e.id in protected
        and isinstance(e, MessageEntry)
        and isinstance(e.message, AssistantMessage)
        and e.message.tool_calls()
    ]


def _merge_groups(ctx: Ctx) -> str | None:
    """Each protected tool-call group (the call message and its results) collapses into one
    assistant message that states the outcomes as text — MS Agent Framework's
    ToolResultCompactionStrategy — written in place of the recorded entries."""
    results = ctx.result_entries(ctx.kept())
    kept = {e.id for e in ctx.kept()}
    replaced: dict[str, Any] = {}
    for entry, calls in _protected_groups(ctx):
        lines = []
        for call in calls:
            result = results.get(call.id)
            outcome = message_text(result.message) if result is not None else "(no result)"
            lines.append(f"{call.name}({call.arguments}) -> {outcome}")
            if result is not None and result.id in kept:
                replaced[result.id] = None
        text = TextBlock(type="text", text="Tool calls:\n" + "\n".join(lines))
        # a protected group's first entry is the message that made the calls: one with content
        content = entry.message.content  # type: ignore[union-attr]
        replaced[entry.id] = entry.message.model_copy(update={"content": [*content, text]})
    if not replaced:
        return None
    ctx.restate(replaced)
    merged = sum(1 for v in replaced.values() if v is not None)
    return f"{merged} tool group(s) merged into one assistant message each"


MERGED = Mutant(
    name="tool-groups-merged",
    issue="MS Agent Framework ToolResultCompactionStrategy (peers.md §4)",
    expected=(Code.MUTATION_ALTERED,),
    what="each protected tool-call group collapses into one assistant message stating the outcomes",
    compactor=edited(_merge_groups),
)


def _truncate_results(ctx: Ctx) -> str | None:
    """Protected results of mutating calls are head-truncated (new entries in their place, as a
    tool-result truncation that rewrites the session does) although the scenario does not allow it."""
    calls = {c.id: entry for entry, group in _protected_groups(ctx) for c in group}
    protected = set(ctx.protected)
    replaced: dict[str, Any] = {}
    for entry in ctx.kept():
        if not (
            entry.id in protected and isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)
        ):
            continue
        caller = calls.get(entry.message.tool_call_id)
        text = message_text(entry.message)
        if caller is None or not ctx.is_mutating_call_entry(caller) or len(text) < 24:
            continue
        short = text[: len(text) // 2] + f"\n\n[... {len(text) - len(text) // 2} more characters truncated]"
        replaced[entry.id] = entry.message.model_copy(update={"content": [TextBlock(type="text", text=short)]})
    if not replaced:
        return None
    ctx.restate(replaced)
    return f"{len(replaced)} mutating result(s) truncated"


TRUNCATED = Mutant(
    name="mutating-result-truncated",
    issue="openclaw tool-result truncation applied to a protected write (allowMutatingEventTruncate off)",
    expected=(Code.MUTATION_ALTERED,),
    what="the results of mutating calls are truncated to half although truncation is not allowed",
    compactor=edited(_truncate_results),
)


def _strip_signatures(ctx: Ctx) -> str | None:
    """Kept assistant messages lose their thinking signatures: re-injected into a new prefix, they
    are written again (new entries in place of the recorded ones) without them."""
    replaced: dict[str, Any] = {}
    for entry in ctx.kept():
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)):
            continue
        blocks = entry.message.content
        if not any(isinstance(b, ThinkingBlock) and b.thinking_signature for b in blocks):
            continue
        content = [
            b.model_copy(update={"thinking_signature": None}) if isinstance(b, ThinkingBlock) else b for b in blocks
        ]
        replaced[entry.id] = entry.message.model_copy(update={"content": content})
    if not replaced:
        return None
    ctx.restate(replaced)
    return f"thinking signatures stripped from {len(replaced)} kept message(s)"


THINKING = Mutant(
    name="thinking-signature-stripped",
    issue="openclaw/openclaw#85912 (#90108, #36229)",
    expected=(Code.THINKING_ALTERED,),
    what="kept assistant messages are re-emitted without their thinking signatures",
    compactor=edited(_strip_signatures),
    needs="a kept message with a signed thinking block (real Claude Code / pi sessions: --realdata)",
)

MUTANTS = [PENDING, MERGED, TRUNCATED, THINKING]
