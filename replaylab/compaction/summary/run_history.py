"""The context's messages as an agent's compaction run has rewritten them when it asks whether they
hold a real conversation (its profile's `real_conversation.compaction_run_history`; the release
module names the code). Only the rewrites that can change that answer are made: a user message from
another session is annotated, transcript-only assistant messages and an assistant's display blocks
are dropped. The cut and the summary read the session's entries, never these messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replaylab.compaction.summary.real_conversation import contains_real_conversation
from replaylab.transcript.model import TextBlock
from replaylab.upstream.openclaw_2026_9_6 import JS_WHITESPACE
from replaylab.upstream.profiles import RealConversationRules, RunHistoryRules


def compaction_run_finds_real_conversation(rules: RealConversationRules, messages: Sequence[Any]) -> bool:
    """`containsRealConversationMessages` of the messages the run holds: nothing stripped, each
    rewritten as the run's history rules say (none: read as they are)."""
    history = rules.compaction_run_history
    seen = run_history(history, messages) if history is not None else list(messages)
    return contains_real_conversation(rules, seen, strip=False)


def run_history(rules: RunHistoryRules, messages: Sequence[Any]) -> list[Any]:
    """The messages in order, user messages annotated and assistant messages thinned or dropped."""
    seen: list[Any] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            seen.append(_annotated(rules, message))
        elif role == "assistant":
            kept = _replayed_assistant(rules, message)
            if kept is not None:
                seen.append(kept)
        else:
            seen.append(message)
    return seen


def _extras(message: Any) -> dict[str, Any]:
    extras = getattr(message, "__pydantic_extra__", None)
    return extras if isinstance(extras, dict) else {}


def _annotated(rules: RunHistoryRules, message: Any) -> Any:
    """`annotateInterSessionUserMessages`: the header before the first text block's text unless it
    is blank; a text block of its own when there is none."""
    provenance = _extras(message).get("provenance")
    if not isinstance(provenance, dict) or provenance.get("kind") != rules.annotated_user_provenance:
        return message
    content = getattr(message, "content", None)
    if isinstance(content, str):
        if not content.strip(JS_WHITESPACE):
            return message
        return message.model_copy(update={"content": f"{rules.user_annotation}\n{content}"})
    if not isinstance(content, list):
        return message
    first = next((i for i, b in enumerate(content) if isinstance(b, TextBlock) and isinstance(b.text, str)), None)
    if first is None:
        header = TextBlock(text=rules.user_annotation)
        return message.model_copy(update={"content": [header, *content]})
    text = content[first].text
    if not text.strip(JS_WHITESPACE):
        return message
    annotated = [*content]
    annotated[first] = TextBlock(text=f"{rules.user_annotation}\n{text}")
    return message.model_copy(update={"content": annotated})


def _replayed_assistant(rules: RunHistoryRules, message: Any) -> Any | None:
    """`normalizeAssistantReplayContent`: None for a transcript-only message
    (`isTranscriptOnlyOpenClawAssistantMessage`) or one left with no block once its display blocks
    are gone; else the message without them."""
    # read as the run reads any message: a damaged one may lack a field
    model, provider = getattr(message, "model", None), getattr(message, "provider", None)
    if provider == rules.dropped_assistant_provider and isinstance(model, str):
        if model in rules.dropped_assistant_models:
            return None
    marker = _extras(message).get(rules.dropped_assistant_marker)
    kind = marker.get("kind") if isinstance(marker, dict) else None
    if isinstance(kind, str) and kind in rules.dropped_assistant_marker_kinds:
        return None
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return message
    kept = [b for b in content if not _display_block(rules, b)]
    if len(kept) == len(content):
        return message
    return message.model_copy(update={"content": kept}) if kept else None


def _display_block(rules: RunHistoryRules, block: Any) -> bool:
    kind = getattr(block, "type", None)
    return isinstance(kind, str) and kind in rules.dropped_assistant_block_types
