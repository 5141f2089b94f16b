"""What the summarized messages say: their text as OpenClaw reads it, whether they hold a real
conversation, the latest user ask, the user's explicit constraints and the quality guard's
identifiers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from replaylab.compaction.identifiers import TextScans
from replaylab.transcript.model import (
    AssistantMessage,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.upstream.openclaw_2026_4_12 import (
    CONSTRAINT_PATTERNS,
    HEARTBEAT_OK_TOKEN,
    IDENTIFIER_SEED_MESSAGES,
    MAX_EXPLICIT_CONSTRAINT_CHARS,
    MAX_EXPLICIT_CONSTRAINTS,
    REAL_CONVERSATION_TOOL_RESULT_LOOKBACK,
    SILENT_REPLY_TOKEN,
)

_CONSTRAINTS = [re.compile(p, re.IGNORECASE) for p in CONSTRAINT_PATTERNS]


def text_of(message: Any) -> str:
    """OpenClaw `extractMessageText`: trimmed text blocks (or string content), joined by newlines."""
    return "\n".join(t.strip() for t in _text_parts(message) if t.strip()).strip()


def scan_text(message: Any) -> str:
    """What `text_of` reads, untrimmed, for the identifier and value-token scans: trimming and
    the joins change no match (none spans whitespace). For a message of text blocks only it is
    the very string `message_text` gives, so one scan serves the summary and the guard's seed."""
    return "\n".join(_text_parts(message))


def _text_parts(message: Any) -> list[str]:
    """The texts `text_of` reads: the string content, the text blocks, else summary / output."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.text for b in content if isinstance(b, TextBlock)]
    for attr in ("summary", "output"):
        value = getattr(message, attr, None)
        if isinstance(value, str):
            return [value]
    return []


def is_meaningful_text(text: str) -> bool:
    """Text that is more than OpenClaw's silent-reply and heartbeat tokens."""
    stripped = text.strip()
    return bool(stripped) and stripped.upper() not in (SILENT_REPLY_TOKEN, HEARTBEAT_OK_TOKEN)


def has_real_conversation(messages: Sequence[Any]) -> bool:
    """`compaction-real-conversation.ts`: a user / assistant message with meaningful text, or a
    tool result close enough after a meaningful user message (`REAL_CONVERSATION_TOOL_RESULT_LOOKBACK`)."""
    last_user = -(10**9)
    for index, message in enumerate(messages):
        if isinstance(message, (UserMessage, AssistantMessage)) and is_meaningful_text(text_of(message)):
            return True
        if isinstance(message, UserMessage) and is_meaningful_text(text_of(message)):
            last_user = index
        if isinstance(message, ToolResultMessage) and index - last_user <= REAL_CONVERSATION_TOOL_RESULT_LOOKBACK:
            return True
    return False


def latest_user_ask(messages: Sequence[Any]) -> str | None:
    """The text of the last user message that has any."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            text = text_of(message)
            if text:
                return text
    return None


def identifier_seed(messages: Sequence[Any], scans: TextScans | None = None) -> list[str]:
    """OpenClaw's quality-guard identifiers: the opaque identifiers of the last
    `IDENTIFIER_SEED_MESSAGES` messages' text, joined by newlines — read from each message's own
    scan (`TextScans.opaque_identifiers`), which the summary of the same messages then reuses."""
    scans = scans if scans is not None else TextScans()
    return scans.opaque_identifiers(scan_text(m) for m in messages[-IDENTIFIER_SEED_MESSAGES:])


def explicit_constraints(messages: Iterable[Any]) -> list[str]:
    """The user's explicit constraints (OpenClaw's `CONSTRAINT_PATTERNS`), deduped, in order."""
    seen: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, UserMessage):
            continue
        text = text_of(message)
        for pattern in _CONSTRAINTS:
            for match in pattern.finditer(text):
                value = " ".join(match.group(0).split())[:MAX_EXPLICIT_CONSTRAINT_CHARS]
                if value and value.lower() not in seen:
                    seen[value.lower()] = value
                    if len(seen) >= MAX_EXPLICIT_CONSTRAINTS:
                        return list(seen.values())
    return list(seen.values())
