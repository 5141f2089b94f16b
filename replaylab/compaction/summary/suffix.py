"""The safeguard's sections after the summary's body: the recent turns preserved verbatim (which
leave the summarizer's input) and the tool failures, and how the sections are joined."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replaylab.compaction.safeguard import repair_tool_pairing
from replaylab.compaction.summary.lines import fit_recent_lines
from replaylab.compaction.summary.messages import text_of
from replaylab.transcript.model import AssistantMessage, OpaqueBlock, ToolResultMessage, UserMessage
from replaylab.transcript.pairing import message_calls
from replaylab.upstream.openclaw_2026_4_12 import (
    MAX_RECENT_TURN_TEXT_CHARS,
    MAX_RECENT_TURNS_PRESERVE,
    MAX_TOOL_FAILURE_CHARS,
    MAX_TOOL_FAILURES,
    RECENT_TURNS_HEADING,
    TOOL_FAILURES_HEADING,
)


def split_preserved_recent_turns(messages: Sequence[Any], recent_turns: int) -> tuple[list[Any], list[Any]]:
    """`splitPreservedRecentTurns`: the last N user turns' user/assistant messages (+ their tool
    results) leave the summarizer input and are rendered verbatim in the summary."""
    turns = min(MAX_RECENT_TURNS_PRESERVE, max(0, recent_turns))
    if turns <= 0:
        return list(messages), []
    conversation = [i for i, m in enumerate(messages) if isinstance(m, (UserMessage, AssistantMessage))]
    users = [i for i in conversation if isinstance(messages[i], UserMessage)]
    if not conversation:
        return list(messages), []
    keep: set[int] = set()
    if len(users) >= turns:
        start = users[len(users) - turns]
        keep.update(i for i in conversation if i >= start)
    else:
        keep.update(users)
        for index in reversed(conversation):
            keep.add(index)
            if len(keep) >= turns * 2:
                break
    if not keep:
        return list(messages), []
    call_ids = {c.id for i in keep for c in message_calls(messages[i])}
    if call_ids:
        first = min(keep)
        keep.update(
            i
            for i in range(first, len(messages))
            if isinstance(messages[i], ToolResultMessage) and messages[i].tool_call_id in call_ids
        )
    summarizable, _ = repair_tool_pairing([m for i, m in enumerate(messages) if i not in keep])
    preserved = [
        m
        for i, m in enumerate(messages)
        if i in keep and isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))
    ]
    return summarizable, preserved


def _non_text_placeholder(content: Any) -> str | None:
    """OpenClaw's `formatNonTextPlaceholder`: an item that is no object (a number, a string, null,
    as written in an opaque item) is not counted; a type that is no non-blank string is "unknown"."""
    if not isinstance(content, list):
        return None
    counts: dict[str, int] = {}
    for block in content:
        if isinstance(block, OpaqueBlock) and not isinstance(block.value, (dict, list)):
            continue
        kind = getattr(block, "type", None)
        if not isinstance(kind, str) or not kind.strip():
            kind = "unknown"
        if kind != "text":
            counts[kind] = counts.get(kind, 0) + 1
    if not counts:
        return None
    return "[non-text content: " + ", ".join(f"{k} x{n}" if n > 1 else k for k, n in counts.items()) + "]"


def format_context_lines(messages: Sequence[Any]) -> list[str]:
    """One `- Label: text` line per user / assistant / tool-result message, each text cut to
    `MAX_RECENT_TURN_TEXT_CHARS`, non-text blocks named by a placeholder."""
    lines = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            label = "Assistant"
        elif isinstance(message, UserMessage):
            label = "User"
        elif isinstance(message, ToolResultMessage):
            label = f"Tool result ({(message.tool_name or '').strip() or 'tool'})"
        else:
            continue
        text = text_of(message)
        placeholder = _non_text_placeholder(getattr(message, "content", None))
        rendered = f"{text}\n{placeholder}" if text and placeholder else (text or placeholder)
        if not rendered:
            continue
        if len(rendered) > MAX_RECENT_TURN_TEXT_CHARS:
            rendered = rendered[:MAX_RECENT_TURN_TEXT_CHARS] + "..."
        lines.append(f"- {label}: {rendered}")
    return lines


def format_preserved_turns_section(messages: Sequence[Any], *, max_chars: int | None = None) -> str:
    """`## Recent turns preserved verbatim`. With `max_chars` (replaylab: small summaries) only the
    most recent lines that fit are kept, so the section cannot crowd the body out of the summary."""
    lines = format_context_lines(messages)
    if max_chars is not None:
        lines, _ = fit_recent_lines(lines, max(0, max_chars - len(RECENT_TURNS_HEADING) - 4), omitted_label="messages")
    return f"\n\n{RECENT_TURNS_HEADING}\n" + "\n".join(lines) if lines else ""


def collect_tool_failures(messages: Sequence[Any]) -> list[tuple[str, str, str | None]]:
    """(tool name, what it said, status / exit code) of each errored tool result, once per call."""
    failures = []
    seen: set[str] = set()
    for message in messages:
        if not isinstance(message, ToolResultMessage) or message.is_error is not True:
            continue
        if not message.tool_call_id or message.tool_call_id in seen:
            continue
        seen.add(message.tool_call_id)
        details = message.details if isinstance(message.details, dict) else {}
        meta_parts = []
        if isinstance(details.get("status"), str):
            meta_parts.append(f"status={details['status']}")
        if isinstance(details.get("exitCode"), (int, float)) and not isinstance(details.get("exitCode"), bool):
            meta_parts.append(f"exitCode={details['exitCode']}")
        meta = " ".join(meta_parts) or None
        text = " ".join(text_of(message).split())
        summary = text or ("failed" if meta else "failed (no output)")
        if len(summary) > MAX_TOOL_FAILURE_CHARS:
            summary = summary[: MAX_TOOL_FAILURE_CHARS - 3] + "..."
        failures.append(((message.tool_name or "").strip() or "tool", summary, meta))
    return failures


def format_tool_failures_section(failures: Sequence[tuple[str, str, str | None]]) -> str:
    """`## Tool Failures`: the first `MAX_TOOL_FAILURES`, then how many more there were."""
    if not failures:
        return ""
    lines = [
        f"- {name}{f' ({meta})' if meta else ''}: {summary}" for name, summary, meta in failures[:MAX_TOOL_FAILURES]
    ]
    if len(failures) > MAX_TOOL_FAILURES:
        lines.append(f"- ...and {len(failures) - MAX_TOOL_FAILURES} more")
    return f"\n\n{TOOL_FAILURES_HEADING}\n" + "\n".join(lines)


def assemble_suffix(*sections: str) -> str:
    """The non-empty sections in order, the whole set apart from the body by a blank line."""
    suffix = ""
    for section in sections:
        if not section:
            continue
        suffix = section.lstrip() if not suffix.strip() else suffix + section
    if suffix and not suffix[0].isspace():
        suffix = "\n\n" + suffix
    return suffix
