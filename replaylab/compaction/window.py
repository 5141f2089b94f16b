"""The compacted window: its tokens as pi rebuilds it, and its items as `compactedWindow` JSON."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from replaylab.compaction.plan import Plan
from replaylab.transcript.context import WindowMessage, build_window, entry_to_message
from replaylab.transcript.model import (
    MESSAGE_ADAPTER,
    AnyEntry,
    CompactionEntry,
    CompactionSummaryMessage,
    dump_entry,
)
from replaylab.transcript.tokens import estimate_tokens


def window_tokens(
    path: list[AnyEntry],
    plan: Plan,
    entry: CompactionEntry,
    tokens_of: Callable[[Any], int] = estimate_tokens,
    unmarked: Mapping[str, Any] | None = None,
) -> int:
    """Tokens of the window `entry` makes (pi's estimate, as `build_window` rebuilds it): its
    summary message + the rest (the entries it restates after itself, or the kept tail from its
    `firstKeptEntryId` on). The rest depends on the plan only (the summary text is in the first
    message alone), so it is measured once per plan and reused for the next summary. `tokens_of`:
    a message's estimate (the job's, which a QA pipeline item's memo keeps). A system message the
    entry carries for its agent (`AgentRules.compaction_fields`: pi 1.6.0's prompt state) leads
    the window and counts too. `unmarked`: the restated messages written without their
    `excludeFromContext` mark (`Job.unmarked`)."""
    carried = _carried_tokens(entry, tokens_of)
    if plan.rest_tokens is None:
        if plan.restated:  # the restated entries carry the very messages of the path (or shortened ones)
            unmarked = unmarked or {}
            messages = (plan.shrunk.get(e.id) or unmarked.get(e.id) or entry_to_message(e) for e in plan.restated)
            plan.rest_tokens = sum(tokens_of(m) for m in messages if m is not None)
        else:
            window = build_window(path + [entry])
            plan.rest_tokens = sum(tokens_of(w.message) for w in window[1:])
            return carried + tokens_of(window[0].message) + plan.rest_tokens
    return carried + estimate_tokens(CompactionSummaryMessage(summary=entry.summary)) + plan.rest_tokens


def _carried_tokens(entry: CompactionEntry, tokens_of: Callable[[Any], int]) -> int:
    """The estimate of the system message the entry carries (0 without one)."""
    system = (entry.model_extra or {}).get("systemMessage")
    return tokens_of(MESSAGE_ADAPTER.validate_python(system)) if isinstance(system, dict) else 0


def window_item_json(item: WindowMessage, tokens_of: Callable[[Any], int] = estimate_tokens) -> dict[str, Any]:
    """One `compactedWindow` element: entryId, protected flag, role, tokens and the message JSON;
    `restates` (the recorded entry it is) for an entry a compaction restated, `truncated` for one
    it restated shortened (allowMutatingEventTruncate)."""
    message = dump_entry(item.message)
    role = getattr(item.message, "role", None)
    if role and "role" not in message:
        message = {"role": role, **message}
    out: dict[str, Any] = {
        "entryId": item.entry_id,
        "protected": item.protected,
        "role": role,
        "tokens": tokens_of(item.message),
        "message": message,
    }
    if item.restates is not None:
        out["restates"] = item.restates
    if item.truncated:
        out["truncated"] = True
    return out
