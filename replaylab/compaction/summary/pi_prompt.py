"""pi's summary prompt read back into a `SummaryRequest`: what a model answering pi's own
compaction is given, and nothing more.

pi serializes the span to text before it asks (`serializeConversation`: tool results cut
short, no call ids, arguments as `k=<json>`), so a summarizer standing in for pi's
model must work from that text, not from the transcript: otherwise it would know what pi's
model cannot. The parts become messages again (calls get ids `pi-call-N`, each tool result
answers the oldest unanswered call), the `<previous-summary>` becomes the previous summary, and
pi's turn-prefix prompt asks for a turn-prefix summary.

Both pinned pis are read: pi 0.73.1 wraps every conversation in `<conversation>` tags; pi 1.6.0
does so for the history (the same prompts, byte for byte) but asks for a split turn's prefix in a
second request whose prompt is `# Conversation` + the serialized messages + `# Instructions` +
its rewritten turn-prefix prompt (`upstream.pi_1_6_0`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from replaylab.compaction.summary.request import SummaryRequest
from replaylab.transcript.model import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.upstream.pi_0_73_1 import (
    PI_CONVERSATION_TAGS,
    PI_PREVIOUS_SUMMARY_TAGS,
    PI_SERIALIZED_CALL_SEPARATOR,
    PI_SERIALIZED_LABELS,
    PI_TURN_PREFIX_PROMPT_START,
)
from replaylab.upstream.pi_1_6_0 import (
    TURN_PREFIX_CONVERSATION_HEADING,
    TURN_PREFIX_INSTRUCTIONS_HEADING,
    TURN_PREFIX_PROMPT_START,
)

_PART = re.compile(r"(?:^|\n\n)(" + "|".join(re.escape(label) for label in PI_SERIALIZED_LABELS) + ")")
_CALL_NAME = re.compile(r"\s*([^\s(;]+)\(")
_KEY = re.compile(r"\s*([^=,()\s]+)=")


def _between(text: str, tags: tuple[str, str]) -> str | None:
    start = text.find(tags[0])
    if start < 0:
        return None
    end = text.rfind(tags[1])
    return text[start + len(tags[0]) : end if end > start else len(text)]


def split_parts(conversation: str) -> list[tuple[str, str]]:
    """(label, text) of each part of a serialized conversation, in order."""
    marks = list(_PART.finditer(conversation))
    parts = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(conversation)
        parts.append((mark.group(1), conversation[mark.end() : end]))
    return parts


def parse_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`name(k=<json>, …); …` → [(name, arguments)]; a call whose arguments do not read as JSON
    keeps what was read of them (the text is a model's input, not a contract)."""
    decoder = json.JSONDecoder()
    calls: list[tuple[str, dict[str, Any]]] = []
    at = 0
    while at < len(text):
        name = _CALL_NAME.match(text, at)
        if name is None:
            break
        at = name.end()
        arguments: dict[str, Any] = {}
        while at < len(text) and text[at] != ")":
            key = _KEY.match(text, at)
            if key is None:
                break
            try:
                value, at = decoder.raw_decode(text, key.end())
            except json.JSONDecodeError:
                break
            arguments[key.group(1)] = value
            if text.startswith(", ", at):
                at += 2
        calls.append((name.group(1), arguments))
        close = text.find(")", at)
        if close < 0:
            break
        at = close + 1
        if text.startswith(PI_SERIALIZED_CALL_SEPARATOR, at):
            at += len(PI_SERIALIZED_CALL_SEPARATOR)
    return calls


def messages_of(conversation: str) -> list[Any]:
    """The messages a serialized conversation shows, as transcript messages."""
    messages: list[Any] = []
    assistant: AssistantMessage | None = None
    unanswered: list[ToolCallBlock] = []
    count = 0
    for label, text in split_parts(conversation):
        if label.startswith("[Assistant"):
            if assistant is None:
                assistant = AssistantMessage(content=[])
                messages.append(assistant)
            if label == "[Assistant thinking]: ":
                assistant.content.append(ThinkingBlock(thinking=text))
            elif label == "[Assistant]: ":
                assistant.content.append(TextBlock(text=text))
            else:
                for name, arguments in parse_calls(text):
                    count += 1
                    call = ToolCallBlock(id=f"pi-call-{count}", name=name, arguments=arguments)
                    assistant.content.append(call)
                    unanswered.append(call)
            continue
        assistant = None
        if label == "[User]: ":
            messages.append(UserMessage(content=text))
        else:
            answered = unanswered.pop(0) if unanswered else None
            messages.append(
                ToolResultMessage(
                    tool_call_id=answered.id if answered else f"pi-result-{len(messages)}",
                    tool_name=answered.name if answered else None,
                    content=[TextBlock(text=text)],
                )
            )
    return messages


def request_of_prompt(prompt: str, *, budget_chars: int, max_tokens: int | None = None) -> SummaryRequest:
    """The `SummaryRequest` pi's summary prompt (the user message of its request) asks for."""
    prefix_conversation = _turn_prefix_conversation(prompt)
    if prefix_conversation is not None:
        return SummaryRequest(
            messages=messages_of(prefix_conversation),
            previous_summary=None,
            budget_chars=budget_chars,
            turn_prefix=True,
            max_tokens=max_tokens,
        )
    conversation = _between(prompt, PI_CONVERSATION_TAGS) or ""
    return SummaryRequest(
        messages=messages_of(conversation),
        previous_summary=_between(prompt, PI_PREVIOUS_SUMMARY_TAGS),
        budget_chars=budget_chars,
        turn_prefix=PI_TURN_PREFIX_PROMPT_START in prompt,
        max_tokens=max_tokens,
    )


def _turn_prefix_conversation(prompt: str) -> str | None:
    """The serialized messages of pi 1.6.0's turn-prefix prompt (None: the prompt is not one): the
    text between its `# Conversation` heading and the last `# Instructions` heading that starts
    pi's turn-prefix instructions (the conversation itself may hold either heading)."""
    if not prompt.startswith(TURN_PREFIX_CONVERSATION_HEADING):
        return None
    end = prompt.rfind(TURN_PREFIX_INSTRUCTIONS_HEADING + TURN_PREFIX_PROMPT_START)
    if end < 0:
        return None
    return prompt[len(TURN_PREFIX_CONVERSATION_HEADING) : end]
