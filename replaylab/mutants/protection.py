"""Protected entries that do not survive as recorded: dropped, merged, truncated, re-signed."""

from __future__ import annotations

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


def _drop_pending(ctx: Ctx) -> str | None:
    """Protection forgets what still awaits a decision: calls with no result yet, and mutating
    calls that were refused pending an approval (every result an error), with their results."""
    by_id, results = ctx.by_id(), ctx.result_entries()
    dropped: list[str] = []
    for entry_id in list(ctx.protected):
        entry = by_id.get(entry_id)
        if not isinstance(entry, MessageEntry):
            continue
        calls = message_calls(entry.message)
        if not calls:
            continue
        pending = any(c.id not in results for c in calls)
        refused = ctx.is_mutating_call_entry(entry) and all(
            c.id in results and results[c.id].message.is_error for c in calls
        )
        if pending or refused:
            dropped.append(entry_id)
            dropped.extend(results[c.id].id for c in calls if c.id in results)
    if not dropped:
        return None
    ctx.protected[:] = [i for i in ctx.protected if i not in set(dropped)]
    return f"pending / refused-for-approval events dropped from protection: {', '.join(dropped)}"


PENDING = Mutant(
    name="pending-confirmation-compacted-away",
    issue="google/adk-python#4740",
    expected=(Code.MUTATION_DROPPED,),
    what="the call awaiting a confirmation (no result yet, or refused pending approval) is summarized away",
    compactor=edited(_drop_pending),
)


def _merge_groups(ctx: Ctx) -> str | None:
    """Each protected tool-call group (the call message and its results) collapses into one
    assistant message of text — MS Agent Framework's ToolResultCompactionStrategy."""
    by_id, results = ctx.by_id(), ctx.result_entries()
    merged: list[str] = []
    for entry_id in list(ctx.protected):
        entry = by_id.get(entry_id)
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            continue
        calls = entry.message.tool_calls()
        if not calls:
            continue
        lines = []
        for call in calls:
            result = results.get(call.id)
            outcome = message_text(result.message) if result is not None else "(no result)"
            lines.append(f"{call.name}({call.arguments}) -> {outcome}")
        text = "Tool calls:\n" + "\n".join(lines)
        merged_message = entry.message.model_copy(
            update={"content": [TextBlock(type="text", text=text)], "stop_reason": "stop"}
        )
        ctx.shrink(entry_id, merged_message)
        gone = {results[c.id].id for c in calls if c.id in results}
        ctx.protected[:] = [i for i in ctx.protected if i not in gone]
        merged.append(entry_id)
    return f"{len(merged)} tool group(s) merged into one assistant message each" if merged else None


MERGED = Mutant(
    name="tool-groups-merged",
    issue="MS Agent Framework ToolResultCompactionStrategy (peers.md §4)",
    expected=(Code.MUTATION_ALTERED,),
    what="each tool-call group collapses into one assistant text message",
    compactor=edited(_merge_groups),
)


def _truncate_results(ctx: Ctx) -> str | None:
    """Protected results of mutating calls are head-truncated (and declared with the original's
    hash, as allowMutatingEventTruncate would) although the scenario does not allow it."""
    by_id = ctx.by_id()
    call_entries = {c.id: e for e in ctx.path if isinstance(e, MessageEntry) for c in message_calls(e.message)}
    cut: list[str] = []
    for entry_id in list(ctx.protected):
        entry = by_id.get(entry_id)
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage)):
            continue
        caller = call_entries.get(entry.message.tool_call_id)
        text = message_text(entry.message)
        if caller is None or not ctx.is_mutating_call_entry(caller) or len(text) < 24:
            continue
        short = text[: len(text) // 2] + f"\n\n[... {len(text) - len(text) // 2} more characters truncated]"
        ctx.shrink(entry_id, entry.message.model_copy(update={"content": [TextBlock(type="text", text=short)]}))
        cut.append(entry_id)
    return f"{len(cut)} mutating result(s) truncated" if cut else None


TRUNCATED = Mutant(
    name="mutating-result-truncated",
    issue="openclaw tool-result truncation applied to a protected write (allowMutatingEventTruncate off)",
    expected=(Code.MUTATION_ALTERED,),
    what="the results of mutating calls are truncated to half although truncation is not allowed",
    compactor=edited(_truncate_results),
)


def _strip_signatures(ctx: Ctx) -> str | None:
    """Kept assistant messages lose their thinking signatures (re-injected into a new prefix)."""
    by_id = ctx.by_id()
    stripped: list[str] = []
    for entry_id in list(ctx.protected):
        entry = by_id.get(entry_id)
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)):
            continue
        blocks = entry.message.content
        if not any(isinstance(b, ThinkingBlock) and b.thinking_signature for b in blocks):
            continue
        content = [
            b.model_copy(update={"thinking_signature": None}) if isinstance(b, ThinkingBlock) else b for b in blocks
        ]
        ctx.shrink(entry_id, entry.message.model_copy(update={"content": content}))
        stripped.append(entry_id)
    return f"thinking signatures stripped from {len(stripped)} kept message(s)" if stripped else None


THINKING = Mutant(
    name="thinking-signature-stripped",
    issue="openclaw/openclaw#85912 (#90108, #36229)",
    expected=(Code.THINKING_ALTERED,),
    what="kept assistant messages are re-emitted without their thinking signatures",
    compactor=edited(_strip_signatures),
    needs="a protected message with a signed thinking block (real Claude Code / pi sessions: --realdata)",
)

MUTANTS = [PENDING, MERGED, TRUNCATED, THINKING]
