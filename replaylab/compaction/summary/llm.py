"""The litellm summarizer: one `litellm.completion` per call, pi's conversation serialization and
OpenClaw's instructions.

litellm is imported lazily (`replaylab.litellm_import`), offline-safe environment first: importing the engine
must stay cheap, and a run without a model never pays for it. Tests drive this summarizer through
litellm's own `mock_response` (including responses that raise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replaylab.compaction.summary.messages import text_of
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.summarizer import SummarizationError, Summarizer
from replaylab.json_dump import compact_json
from replaylab.litellm_import import import_litellm
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ThinkingBlock,
    ToolResultMessage,
    UnreadableArguments,
    UserMessage,
)
from replaylab.transcript.pairing import message_calls
from replaylab.upstream.openclaw_2026_4_12 import (
    POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION,
    REQUIRED_SUMMARY_SECTIONS,
    STRICT_EXACT_IDENTIFIERS_INSTRUCTION,
    TURN_PREFIX_INSTRUCTIONS,
)
from replaylab.upstream.pi_0_73_1 import (
    BASH_EXECUTION_PREFIX,
    BASH_NO_OUTPUT,
    TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT,
    TOOL_RESULT_TRUNCATED_IN_SUMMARY,
)

SUMMARIZATION_SYSTEM_PROMPT = (  # replaylab's wording of pi's SUMMARIZATION_SYSTEM_PROMPT (structure, not verbatim)
    "You are a context summarization assistant. Read the conversation between a user and an AI assistant and "
    "produce a structured summary in the exact format requested. Do NOT continue the conversation. Do NOT answer "
    "questions from the conversation. ONLY output the structured summary."
)
STRUCTURE_INSTRUCTIONS = "Produce a compact, factual summary with these exact section headings:\n" + "\n".join(
    REQUIRED_SUMMARY_SECTIONS
)
TURN_PREFIX_SECTIONS = "Use these sections: ## Original Request, ## Early Progress, ## Context for Suffix."
#: litellm's mock value that makes the call raise through litellm's own error path
INJECTED_FAILURE_MOCK = "litellm.InternalServerError"


def serialize_conversation(messages: Sequence[Any]) -> str:
    """pi `serializeConversation`: `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
    `[Assistant tool calls]: name(k=<json>, …); …`, `[Tool result]: …` (each tool result cut to
    `TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT`)."""
    parts = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = text_of(message)
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            thinking = "\n".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock) and b.thinking)
            if thinking:
                parts.append(f"[Assistant thinking]: {thinking}")
            text = text_of(message)
            if text:
                parts.append(f"[Assistant]: {text}")
            calls = message_calls(message)  # a call paired from an item no block model reads too
            if calls:
                rendered = "; ".join(
                    f"{c.name}(" + ", ".join(f"{k}={v}" for k, v in _argument_entries(c.arguments)) + ")" for c in calls
                )
                parts.append(f"[Assistant tool calls]: {rendered}")
        elif isinstance(message, ToolResultMessage):
            text = text_of(message)
            if len(text) > TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT:
                rest = len(text) - TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT
                text = text[:TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT] + TOOL_RESULT_TRUNCATED_IN_SUMMARY.format(n=rest)
            if text:
                parts.append(f"[Tool result]: {text}")
        elif isinstance(message, BashExecutionMessage):
            command = BASH_EXECUTION_PREFIX.format(command=message.command)
            parts.append(f"[User]: {command}\n{message.output or BASH_NO_OUTPUT}")
        elif isinstance(message, (CustomMessage, CompactionSummaryMessage, BranchSummaryMessage)):
            text = text_of(message)
            if text:
                parts.append(f"[User]: {text}")
    return "\n\n".join(parts)


def build_instructions(request: SummaryRequest) -> str:
    """The instructions after the conversation: the sections, the identifier policy, the operator's
    focus and the quality guard's feedback."""
    if request.turn_prefix:
        lines = [TURN_PREFIX_INSTRUCTIONS, TURN_PREFIX_SECTIONS]
    else:
        lines = [STRUCTURE_INSTRUCTIONS]
        if request.identifier_policy == "off":
            lines.append(POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION)
        elif request.identifier_policy == "custom" and request.identifier_instructions:
            lines.append(
                f"For ## Exact identifiers, apply this operator-defined policy: {request.identifier_instructions}"
            )
        else:
            lines.append(STRICT_EXACT_IDENTIFIERS_INSTRUCTION)
        lines.append("Do not omit unresolved asks from the user.")
    if request.custom_instructions:
        lines.append(f"Additional focus:\n{request.custom_instructions}")
    if request.feedback:
        lines.append(request.feedback)
    return "\n".join(lines)


class LiteLLMSummarizer(Summarizer):
    """One `litellm.completion` per call. `mock_responses` (tests, offline) are consumed in order,
    one per call, injected failures included."""

    deterministic = False
    calls_model = True

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        timeout_s: float = 120.0,
        mock_responses: Sequence[str] | None = None,
    ):
        self.model = model.removeprefix("litellm/")
        self.name = f"litellm:{self.model}"
        self.api_base = api_base
        self.timeout_s = timeout_s
        self.mock_responses = list(mock_responses) if mock_responses is not None else None
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> str:
        return self._complete(request)

    def summarize_failing(self, request: SummaryRequest, note: str) -> str:
        """The call goes out, made to raise by litellm's own mock error path (`note` is not needed:
        litellm's error says what failed)."""
        return self._complete(request, mock_response=INJECTED_FAILURE_MOCK)

    def _complete(self, request: SummaryRequest, *, mock_response: str | None = None) -> str:
        litellm = import_litellm()
        prompt = f"<conversation>\n{serialize_conversation(request.messages)}\n</conversation>\n\n"
        if request.previous_summary:
            prompt += f"<previous-summary>\n{request.previous_summary}\n</previous-summary>\n\n"
        prompt += build_instructions(request)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "timeout": self.timeout_s,
            "messages": [
                {"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT},
                {"role": "user", "content": prompt},
            ],
        }
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        index = self.calls
        self.calls += 1
        if mock_response is not None:
            kwargs["mock_response"] = mock_response
        elif self.mock_responses is not None:
            kwargs["mock_response"] = self.mock_responses[min(index, len(self.mock_responses) - 1)]
        try:
            response = litellm.completion(**kwargs)
        except Exception as exc:  # provider errors of every kind: the caller retries / falls back
            raise SummarizationError(f"Summarization failed: {type(exc).__name__}: {exc}") from exc
        choice = response.choices[0]
        text = (getattr(choice.message, "content", None) or "").strip()
        if not text:
            raise SummarizationError("Summarization failed: empty response")
        return text


def _argument_entries(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """pi's `Object.entries(arguments)` with each value as `JSON.stringify` prints it: arguments
    that are no object are read as written, a string by its UTF-16 units, an array by its items
    (null or none make pi's serialization throw; replaylab shows no argument)."""
    if type(arguments) is not UnreadableArguments:
        return [(k, compact_json(v)) for k, v in (arguments or {}).items()]
    written = arguments.written
    if isinstance(written, list):
        return [(str(i), compact_json(v)) for i, v in enumerate(written)]
    if not isinstance(written, str):
        return []
    units = written.encode("utf-16-le", "surrogatepass")
    entries = []
    for i in range(0, len(units), 2):
        unit = int.from_bytes(units[i : i + 2], "little")
        # a lone surrogate: `JSON.stringify` escapes it
        text = f'"\\u{unit:04x}"' if 0xD800 <= unit <= 0xDFFF else compact_json(chr(unit))
        entries.append((str(i // 2), text))
    return entries
