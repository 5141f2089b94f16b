"""Whether a compaction has a real conversation to summarize, as the item's agent decides it: without
one the safeguard writes its fixed fallback summary. A profile that names no rule
(`AgentProfile.real_conversation`) is judged by OpenClaw 2026.4.12's (`messages.has_real_conversation`);
one that names a rule by that release's `containsRealConversation` (its upstream module says where).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from replaylab.compaction.summary.messages import has_real_conversation
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import BashExecutionMessage, TextBlock
from replaylab.upstream.openclaw_2026_9_6 import JS_WHITESPACE
from replaylab.upstream.profiles import RealConversationRules

_JS_SPACE = f"[{re.escape(JS_WHITESPACE)}]"
_JS_SPACES = re.compile(f"{_JS_SPACE}+")
#: `stripHeartbeatToken`'s `stripMarkup`; JavaScript's `$` without the m flag ends the input only
_TAGS = re.compile(r"<[^>]*>")
_NBSP = re.compile("&nbsp;", re.IGNORECASE)
_MARKUP_HEAD = re.compile(r"\A[*`~_]+")
_MARKUP_TAIL = re.compile(r"[*`~_]+\Z")


def compaction_has_real_conversation(
    rules: RealConversationRules | None, span: Sequence[Any], window: Sequence[WindowMessage] = ()
) -> bool:
    """Whether the safeguard summarizes `span` (the summarized messages and a split turn's prefix)
    rather than write its fallback; `window`: the session's whole context before the compaction."""
    if rules is None:
        return has_real_conversation(span)
    if contains_real_conversation(rules, span):
        return True
    return rules.session_context and contains_real_conversation(rules, [w.message for w in window])


def contains_real_conversation(rules: RealConversationRules, messages: Sequence[Any], *, strip: bool = True) -> bool:
    """`containsRealConversation(stripRuntimeContextCustomMessages(messages))`; with `strip` False the
    compaction run's `containsRealConversationMessages(messages)`, which keeps every message."""
    kept = [m for m in messages if not _ignored_custom(rules, m)] if strip else list(messages)
    return any(is_real_conversation_message(rules, m, kept, i) for i, m in enumerate(kept))


def is_real_conversation_message(
    rules: RealConversationRules, message: Any, messages: Sequence[Any], index: int
) -> bool:
    """`isRealConversationMessage`: a message of the rule's roles by its own content; a tool result
    when an anchor with meaningful content is among the messages just before it."""
    role = getattr(message, "role", None)
    if role in rules.roles:
        return has_meaningful_conversation_content(rules, message)
    if role != "toolResult":
        return False
    start = max(0, index - rules.tool_result_lookback)
    return any(
        getattr(messages[i], "role", None) in rules.anchor_roles
        and has_meaningful_conversation_content(rules, messages[i])
        for i in range(index - 1, start - 1, -1)
    )


def has_meaningful_conversation_content(rules: RealConversationRules, message: Any) -> bool:
    """`hasMeaningfulConversationContent`: never a message marked `excludeFromContext: true`; a custom
    message shown with meaningful content, a bash execution by its command and output, a summary by
    its text, any other by its content."""
    if _excluded(message):
        return False
    role = getattr(message, "role", None)
    if role == "custom":
        return getattr(message, "display", None) is not False and _meaningful_content(
            rules, getattr(message, "content", None)
        )
    if role == "bashExecution":
        command, output = getattr(message, "command", None), getattr(message, "output", None)
        command = command if isinstance(command, str) else ""
        return has_meaningful_text(rules, f"{command}\n{output if isinstance(output, str) else ''}")
    if role in rules.summary_roles:
        summary = getattr(message, "summary", None)
        return isinstance(summary, str) and has_meaningful_text(rules, summary)
    return _meaningful_content(rules, getattr(message, "content", None))


def _meaningful_content(rules: RealConversationRules, content: Any) -> bool:
    """`hasMeaningfulMessageContent`: string content by its text; a list when one text block is
    meaningful, else when it holds a block that is neither text, a tool call nor reasoning (an image)."""
    if isinstance(content, str):
        return has_meaningful_text(rules, content)
    if not isinstance(content, list):
        return False
    saw_other = False
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            if isinstance(block, TextBlock) and has_meaningful_text(rules, block.text):
                return True
        elif kind not in rules.tool_call_block_types and str(kind) not in rules.non_conversation_block_types:
            saw_other = True
    return saw_other


def has_meaningful_text(rules: RealConversationRules, text: str) -> bool:
    """`hasMeaningfulText`: not blank, not only silent-reply tokens (`isSilentReplyText`) and not a
    bare heartbeat acknowledgement (`stripHeartbeatToken` in its message mode)."""
    trimmed = _trim(text)
    if not trimmed or _is_silent_reply_text(rules, trimmed):
        return False
    return not _heartbeat_only(rules, trimmed)


def _is_silent_reply_text(rules: RealConversationRules, text: str) -> bool:
    """`isSilentReplyText`: the token, repeated, alone (any case), also with punctuation around it."""
    exact = _silent_exact(rules.silent_token)
    return bool(exact.match(text)) or bool(exact.match(_strip_edge_punctuation(_trim(text))))


@functools.cache
def _silent_exact(token: str) -> re.Pattern[str]:
    """`getSilentExactRegex(token)`."""
    escaped = re.escape(token)
    return re.compile(f"\\A{_JS_SPACE}*{escaped}(?:{_JS_SPACE}+{escaped})*{_JS_SPACE}*\\Z", re.IGNORECASE)


def _strip_edge_punctuation(text: str) -> str:
    """`stripEdgePunctuation`: the runs of Unicode punctuation (`\\p{P}`) at both ends removed."""
    start = 0
    while start < len(text) and unicodedata.category(text[start]).startswith("P"):
        start += 1
    end = len(text)
    while end > 0 and unicodedata.category(text[end - 1]).startswith("P"):
        end -= 1
    return text[start:end]


def _heartbeat_only(rules: RealConversationRules, trimmed: str) -> bool:
    """`stripHeartbeatToken(trimmed, {mode: "message"})` strips the token and leaves no text."""
    token = rules.heartbeat_token
    if token not in trimmed:
        return False
    normalized = _MARKUP_TAIL.sub("", _MARKUP_HEAD.sub("", _NBSP.sub(" ", _TAGS.sub(" ", trimmed))))
    original_text, original_stripped = _strip_token_at_edges(token, trimmed)
    if original_stripped and original_text:
        return False
    text, stripped = _strip_token_at_edges(token, normalized)
    return stripped and not text


def _strip_token_at_edges(token: str, raw: str) -> tuple[str, bool]:
    """`stripTokenAtEdges`: the token removed from the start, and from the end (up to four non-word
    characters after it), while either is there: (what is left, whether any was removed)."""
    text = _trim(raw)
    if not text or token not in text:
        return text, False
    at_end = re.compile(re.escape(token) + r"[^A-Za-z0-9_]{0,4}\Z")
    stripped, changed = False, True
    while changed:
        changed = False
        following = _trim(text)
        if following.startswith(token):
            text = following[len(token) :].lstrip(JS_WHITESPACE)
            stripped = changed = True
            continue
        if at_end.search(following):
            index = following.rfind(token)
            before = following[:index].rstrip(JS_WHITESPACE)
            after = following[index + len(token) :].lstrip(JS_WHITESPACE)
            text = f"{before}{after}".rstrip(JS_WHITESPACE) if before else ""
            stripped = changed = True
    return _trim(_JS_SPACES.sub(" ", text)), stripped


def _trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def _excluded(message: Any) -> bool:
    """`"excludeFromContext" in message && message.excludeFromContext === true`."""
    if isinstance(message, BashExecutionMessage):
        return message.exclude_from_context is True
    extras = getattr(message, "__pydantic_extra__", None)
    return isinstance(extras, dict) and extras.get("excludeFromContext") is True


def _ignored_custom(rules: RealConversationRules, message: Any) -> bool:
    """`isOpenClawRuntimeContextCustomMessage` and its kind: removed before the test."""
    return getattr(message, "role", None) == "custom" and (
        getattr(message, "custom_type", None) in rules.ignored_custom_types
    )
