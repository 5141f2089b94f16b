"""Summaries: the deterministic extractive summarizer, the litellm summarizer, OpenClaw's quality
guard with retries and feedback, the fallback, and the safeguard's summary assembly.

Why an extractive summarizer is the offline default: replay must be deterministic and need no key.
It writes OpenClaw's five sections (## Decisions, ## Open TODOs, ## Constraints/Rules,
## Pending user asks, ## Exact identifiers) plus one line per tool outcome, and — unlike an LLM —
it can guarantee what replay needs: every identifier of the summarized span verbatim, the pending
user ask, the argument values a later call may reuse. It works inside the character budget
(16,000 by default) and spends it by priority: asks, constraints, identifiers, TODOs, then the
most recent tool outcomes and decisions, saying how many older lines it left out.

The LLM path (`LiteLLMSummarizer`) imports litellm lazily, offline-safe environment first. Tests
drive it through litellm's own `mock_response` (including responses that raise).

Fallback (openclaw#127997, #5224): when every attempt fails, the summary is OpenClaw's structured
fallback with the pinned context — the previous summary is kept whole when it already has the
sections, else it becomes the Decisions section. An LLM answer that is an empty skeleton while a
previous summary exists is rejected like a failed quality check, never written over it.
"""

from __future__ import annotations

import os
import random
import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import orjson

from replaylab.constants import (
    FILE_OP_EDIT_TOOLS,
    FILE_OP_READ_TOOLS,
    FILE_OP_WRITE_TOOLS,
    HEARTBEAT_OK_TOKEN,
    IDENTIFIER_SEED_MESSAGES,
    MAX_ASK_OVERLAP_TOKENS,
    MAX_EXPLICIT_CONSTRAINT_CHARS,
    MAX_EXPLICIT_CONSTRAINTS,
    MAX_FILE_OPS_LIST_CHARS,
    MAX_FILE_OPS_SECTION_CHARS,
    MAX_RECENT_TURN_TEXT_CHARS,
    MAX_RECENT_TURNS_PRESERVE,
    MAX_TOOL_FAILURE_CHARS,
    MAX_TOOL_FAILURES,
    MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH,
    MODIFIED_FILES_TAG,
    NO_PRIOR_HISTORY,
    NONE_CAPTURED,
    NONE_TEXT,
    POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION,
    QUALITY_FEEDBACK_POLICY,
    QUALITY_FEEDBACK_STRICT,
    READ_FILES_TAG,
    REAL_CONVERSATION_TOOL_RESULT_LOOKBACK,
    RECENT_TURNS_HEADING,
    REQUIRED_SUMMARY_SECTIONS,
    SILENT_REPLY_TOKEN,
    SPLIT_TURN_HEADING,
    STRICT_EXACT_IDENTIFIERS_INSTRUCTION,
    SUMMARY_TRUNCATED_MARKER,
    TOOL_FAILURES_HEADING,
    TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT,
    TOOL_RESULT_TRUNCATED_IN_SUMMARY,
    TURN_PREFIX_INSTRUCTIONS,
    CONSTRAINT_PATTERNS,
)
from replaylab.compaction.identifiers import (
    TextScans,
    argument_values,
    result_values,
    normalize_identifier,
    summary_includes_identifier,
)
from replaylab.compaction.safeguard import is_errored, message_calls
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultMessage,
    UserMessage,
    message_text,
)

_CONSTRAINTS = [re.compile(p, re.IGNORECASE) for p in CONSTRAINT_PATTERNS]
_TODO_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[ \]|\bTODO\b|^\s*(?:next steps?|remaining|still (?:need|to do))\b", re.I)
_HEADING = re.compile(r"^#{1,6}\s+\S")
_FILE_TAGS = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.S)
MAX_LINE_CHARS = 200
MAX_OUTCOME_RESULT_CHARS = 160
MAX_OUTCOME_ARGS_CHARS = 160
MAX_TODO_LINES = 10
MAX_ASK_CHARS = MAX_RECENT_TURN_TEXT_CHARS
#: share of the extractive budget kept for tool outcomes and decisions once the must-have
#: identifiers (OpenClaw's rules) are in; argument values and id-like tokens get the rest
NARRATIVE_SHARE = 0.3
NARRATIVE_FLOOR_CHARS = 1_500
#: room kept for each '- ...N earlier X omitted' line
OMITTED_LINE_CHARS = 48
MAX_DECISION_CHARS = 160

#: stop words for the latest-ask overlap check (OpenClaw uses `extractKeywords` of its memory
#: search; this English list is replaylab's approximation of it)
STOP_WORDS = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor not
now of off on once only or other our ours ourselves out over own please same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself yourselves can't don't won't it's i'm
also get got make made want need like one two""".split())


class SummarizationError(RuntimeError):
    """A summarizer call failed (provider error, empty answer, injected failure)."""


# ---------------------------------------------------------------- message helpers


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


def _one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _first_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("#*-> ").strip()
        if stripped:
            return _one_line(stripped, limit)
    return ""


def is_meaningful_text(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and stripped.upper() not in (SILENT_REPLY_TOKEN, HEARTBEAT_OK_TOKEN)


def has_real_conversation(messages: Sequence[Any]) -> bool:
    """`compaction-real-conversation.ts`: a user / assistant message with meaningful text, or a
    tool result with a meaningful user message among the previous 20 messages."""
    last_user = -10**9
    for index, message in enumerate(messages):
        if isinstance(message, (UserMessage, AssistantMessage)) and is_meaningful_text(text_of(message)):
            return True
        if isinstance(message, UserMessage) and is_meaningful_text(text_of(message)):
            last_user = index
        if isinstance(message, ToolResultMessage) and index - last_user <= REAL_CONVERSATION_TOOL_RESULT_LOOKBACK:
            return True
    return False


def latest_user_ask(messages: Sequence[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            text = text_of(message)
            if text:
                return text
    return None


def identifier_seed(messages: Sequence[Any], scans: TextScans | None = None) -> list[str]:
    """OpenClaw's quality-guard identifiers: ≤ 12 from the last 10 messages' text, joined by
    newlines — read from each message's own scan (`TextScans.opaque_identifiers`), which the
    summary of the same messages then reuses."""
    scans = scans if scans is not None else TextScans()
    return scans.opaque_identifiers(scan_text(m) for m in messages[-IDENTIFIER_SEED_MESSAGES:])


def explicit_constraints(messages: Iterable[Any]) -> list[str]:
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


# ---------------------------------------------------------------- quality guard


def _ask_tokens(text: str) -> list[str]:
    normalized = unicodedata.normalize("NFKC", text).lower().strip()
    return [t for t in re.split(r"[^\w]+|_", normalized) if t]


def has_ask_overlap(summary: str, latest_ask: str | None) -> bool:
    """The latest ask is reflected: ≥ 2 of its first 12 meaningful tokens (≥ 1 if it has < 3)."""
    if not latest_ask:
        return True
    tokens = list(dict.fromkeys(_ask_tokens(latest_ask)))[:MAX_ASK_OVERLAP_TOKENS]
    meaningful = [t for t in tokens if len(t) > 1 and t not in STOP_WORDS]
    check = meaningful or tokens
    if not check:
        return True
    present = set(_ask_tokens(summary))
    overlap = sum(1 for t in check if t in present)
    return overlap >= (2 if len(check) >= MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH else 1)


def audit_summary_quality(summary: str, identifiers: Sequence[str], latest_ask: str | None,
                          identifier_policy: str = "strict") -> tuple[bool, list[str]]:
    """OpenClaw `auditSummaryQuality`: the five headings each on their own line, every seed
    identifier present (strict policy; hex case-insensitive), the latest ask reflected."""
    reasons: list[str] = []
    lines = {line.strip() for line in summary.splitlines() if line.strip()}
    for section in REQUIRED_SUMMARY_SECTIONS:
        if section not in lines:
            reasons.append(f"missing_section:{section}")
    if identifier_policy == "strict":
        upper = summary.upper()
        missing = [i for i in identifiers if not summary_includes_identifier(summary, i, upper_summary=upper)]
        if missing:
            reasons.append(f"missing_identifiers:{','.join(missing[:3])}")
    if not has_ask_overlap(summary, latest_ask):
        reasons.append("latest_user_ask_not_reflected")
    return not reasons, reasons


def parse_sections(summary: str) -> dict[str, list[str]]:
    """`## Heading` → its non-empty lines (text before the first heading goes under '')."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for raw in summary.splitlines():
        line = raw.rstrip()
        if line.strip().startswith("## "):
            current = line.strip()
            sections.setdefault(current, [])
        elif line.strip():
            sections[current].append(line)
    return sections


def has_required_sections(summary: str) -> bool:
    lines = {line.strip() for line in summary.splitlines()}
    return all(s in lines for s in REQUIRED_SUMMARY_SECTIONS)


_EMPTY_BODIES = {"", "none", "none.", NONE_CAPTURED.lower(), NO_PRIOR_HISTORY.lower(), "n/a", "-", "- none", "- none."}


def is_empty_skeleton(summary: str) -> bool:
    """Every required section present but empty (`None.`, `No prior history.` …): openclaw#127997.
    A blank summary is one too (it holds no section). Each non-blank line that is no heading is
    some section's body (`parse_sections`), so the first meaningful one settles it: a real
    summary is read up to its first body line, not parsed whole."""
    if not summary.strip():
        return True
    for raw in summary.splitlines():
        line = raw.strip()
        if line and not line.startswith("## ") and line.lower() not in _EMPTY_BODIES:
            return False
    return has_required_sections(summary)


# ---------------------------------------------------------------- suffix sections (safeguard)


def split_preserved_recent_turns(messages: Sequence[Any], recent_turns: int) -> tuple[list[Any], list[Any]]:
    """`splitPreservedRecentTurns`: the last N user turns' user/assistant messages (+ their tool
    results) leave the summarizer input and are rendered verbatim in the summary."""
    from replaylab.compaction.safeguard import repair_tool_pairing

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
        keep.update(i for i in range(first, len(messages))
                    if isinstance(messages[i], ToolResultMessage) and messages[i].tool_call_id in call_ids)
    summarizable, _ = repair_tool_pairing([m for i, m in enumerate(messages) if i not in keep])
    preserved = [m for i, m in enumerate(messages) if i in keep
                 and isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))]
    return summarizable, preserved


def _non_text_placeholder(content: Any) -> str | None:
    if not isinstance(content, list):
        return None
    counts: dict[str, int] = {}
    for block in content:
        kind = getattr(block, "type", "unknown") or "unknown"
        if kind != "text":
            counts[kind] = counts.get(kind, 0) + 1
    if not counts:
        return None
    return "[non-text content: " + ", ".join(f"{k} x{n}" if n > 1 else k for k, n in counts.items()) + "]"


def format_context_lines(messages: Sequence[Any]) -> list[str]:
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
        lines, _ = _fit_lines(lines, max(0, max_chars - len(RECENT_TURNS_HEADING) - 4), omitted_label="messages")
    return f"\n\n{RECENT_TURNS_HEADING}\n" + "\n".join(lines) if lines else ""


def collect_tool_failures(messages: Sequence[Any]) -> list[tuple[str, str, str | None]]:
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
    if not failures:
        return ""
    lines = [f"- {name}{f' ({meta})' if meta else ''}: {summary}" for name, summary, meta in failures[:MAX_TOOL_FAILURES]]
    if len(failures) > MAX_TOOL_FAILURES:
        lines.append(f"- ...and {len(failures) - MAX_TOOL_FAILURES} more")
    return f"\n\n{TOOL_FAILURES_HEADING}\n" + "\n".join(lines)


@dataclass
class FileOps:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def lists(self) -> tuple[list[str], list[str]]:
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


#: replaylab: Claude Code spells the file tools Read / Write / Edit / MultiEdit with `file_path`
_PATH_KEYS = ("path", "file_path", "notebook_path")


def collect_file_ops(messages: Iterable[Any], ops: FileOps | None = None) -> FileOps:
    """pi `extractFileOpsFromMessage`: read / write / edit calls with a string path."""
    ops = ops or FileOps()
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls():
            path = next((call.arguments.get(k) for k in _PATH_KEYS if isinstance(call.arguments.get(k), str)), None)
            if not path:
                continue
            name = call.name.lower()
            if name in FILE_OP_READ_TOOLS:
                ops.read.add(path)
            elif name in FILE_OP_WRITE_TOOLS:
                ops.written.add(path)
            elif name in FILE_OP_EDIT_TOOLS or name in ("multiedit", "notebookedit"):
                ops.edited.add(path)
    return ops


def _bounded_file_list(tag: str, files: Sequence[str], max_chars: int) -> str:
    if not files or max_chars <= 0:
        return ""
    open_tag, close_tag = f"<{tag}>\n", f"\n</{tag}>"
    lines: list[str] = []
    used = len(open_tag) + len(close_tag)
    for i, name in enumerate(files):
        line = f"{name}\n"
        remaining = len(files) - i - 1
        overflow = f"...and {remaining} more\n" if remaining else ""
        if used + len(line) + len(overflow) > max_chars:
            overflow = f"...and {len(files) - i} more\n"
            if used + len(overflow) <= max_chars:
                lines.append(overflow)
            break
        lines.append(line)
        used += len(line)
    return f"{open_tag}{''.join(lines)}{close_tag}" if lines else ""


def format_file_operations(read: Sequence[str], modified: Sequence[str], *, bounded: bool = True) -> str:
    """`<read-files>` / `<modified-files>` sections (safeguard: each list ≤ 900 chars, whole ≤ 2000)."""
    if not bounded:
        parts = [f"<{READ_FILES_TAG}>\n" + "\n".join(read) + f"\n</{READ_FILES_TAG}>" if read else "",
                 f"<{MODIFIED_FILES_TAG}>\n" + "\n".join(modified) + f"\n</{MODIFIED_FILES_TAG}>" if modified else ""]
        return "".join(f"\n\n{p}" for p in parts if p)
    sections = [s for s in (_bounded_file_list(READ_FILES_TAG, read, MAX_FILE_OPS_LIST_CHARS),
                            _bounded_file_list(MODIFIED_FILES_TAG, modified, MAX_FILE_OPS_LIST_CHARS)) if s]
    if not sections:
        return ""
    return cap_summary("\n\n" + "\n\n".join(sections), MAX_FILE_OPS_SECTION_CHARS)


def cap_summary(summary: str, max_chars: int) -> str:
    """`capCompactionSummary`: cut to `max_chars`, ending with the truncation marker."""
    if max_chars <= 0 or len(summary) <= max_chars:
        return summary
    budget = max(0, max_chars - len(SUMMARY_TRUNCATED_MARKER))
    if budget <= 0:
        return summary[:max_chars]
    return summary[:budget] + SUMMARY_TRUNCATED_MARKER


def cap_summary_preserving_suffix(body: str, suffix: str, max_chars: int) -> str:
    """Cap the body so body + suffix fit; a suffix alone over the cap keeps its last chars."""
    if not suffix:
        return cap_summary(body, max_chars)
    if max_chars <= 0:
        return cap_summary(body + suffix, max_chars)
    if len(suffix) >= max_chars:
        return suffix[-max_chars:]
    return cap_summary(body, max(0, max_chars - len(suffix))) + suffix


def assemble_suffix(*sections: str) -> str:
    suffix = ""
    for section in sections:
        if not section:
            continue
        suffix = section.lstrip() if not suffix.strip() else suffix + section
    if suffix and not suffix[0].isspace():
        suffix = "\n\n" + suffix
    return suffix


def build_structured_fallback_summary(previous_summary: str | None, *, latest_ask: str | None = None,
                                      identifiers: Sequence[str] = (), constraints: Sequence[str] = ()) -> str:
    """`buildStructuredFallbackSummary` in the five-section shape, with the pinned context of
    later OpenClaw releases: a previous summary that already has the sections is returned as is;
    otherwise it becomes ## Decisions (`No prior history.` when there is none)."""
    previous = (previous_summary or "").strip()
    if previous and has_required_sections(previous):
        return previous
    return "\n".join([
        "## Decisions", previous or NO_PRIOR_HISTORY, "",
        "## Open TODOs", NONE_TEXT, "",
        "## Constraints/Rules", "\n".join(f"- {c}" for c in constraints) if constraints else NONE_TEXT, "",
        "## Pending user asks", f"- {_one_line(latest_ask, MAX_ASK_CHARS)}" if latest_ask else NONE_TEXT, "",
        "## Exact identifiers", "\n".join(f"- {i}" for i in identifiers) if identifiers else NONE_CAPTURED,
    ])


# ---------------------------------------------------------------- summarizer input


@dataclass
class SummaryRequest:
    """What one summarizer call summarizes."""

    messages: list[Any]
    previous_summary: str | None = None
    identifier_policy: str = "strict"
    include_tool_results: bool = True
    budget_chars: int = 16_000
    custom_instructions: str | None = None
    identifier_instructions: str | None = None
    feedback: str | None = None
    turn_prefix: bool = False  # summarizing the prefix of a split turn
    max_tokens: int | None = None
    pinned_asks: list[str] = field(default_factory=list)  # asks the summary must carry (guard targets)
    kept_call_ids: frozenset[str] = frozenset()  # calls kept verbatim in the window (no outcome line needed)
    identifier_sources: list[Any] = field(default_factory=list)  # more messages whose identifiers to carry
    pinned_identifiers: list[str] = field(default_factory=list)  # the quality guard's identifiers: first in line


# ---------------------------------------------------------------- extractive summarizer


def _tool_outcomes(messages: Sequence[Any], skip_call_ids: Iterable[str] = ()) -> list[str]:
    """One line per tool call: name, arguments, ok/error and the first line of the result. Calls
    kept verbatim in the window anyway (protected) are skipped."""
    skip = set(skip_call_ids)
    results: dict[str, ToolResultMessage] = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    lines = []
    for message in messages:
        for call in message_calls(message):
            if call.id in skip:
                continue
            result = results.get(call.id)
            args = orjson.dumps(call.arguments or {}, option=orjson.OPT_SORT_KEYS).decode()
            if len(args) > MAX_OUTCOME_ARGS_CHARS:
                args = args[: MAX_OUTCOME_ARGS_CHARS - 3] + "..."
            if result is None:
                status = "not run" if is_errored(message) else "pending (no result)"
                lines.append(f"- {call.name} {args} → {status}")
                continue
            state = "error" if result.is_error else "ok"
            first = _first_line(text_of(result), MAX_OUTCOME_RESULT_CHARS) or "(no output)"
            lines.append(f"- {call.name} {args} → {state}: {first}")
    return lines


def _decisions(messages: Sequence[Any]) -> list[str]:
    lines = []
    for message in messages:
        if isinstance(message, AssistantMessage) and not is_errored(message):
            text = text_of(message)
            if is_meaningful_text(text):
                lines.append(f"- {_one_line(text, MAX_DECISION_CHARS)}")
        elif isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
            lines.append(f"- Earlier summary: {_first_line(message.summary)}")
        elif isinstance(message, BashExecutionMessage):
            lines.append(f"- Ran `{_one_line(message.command, 120)}` (exit {message.exit_code})")
    return lines


def _todos(messages: Sequence[Any]) -> list[str]:
    lines: list[str] = []
    for message in messages:
        if not isinstance(message, (AssistantMessage, UserMessage)):
            continue
        for raw in text_of(message).splitlines():
            if _TODO_LINE.search(raw):
                line = f"- {_one_line(raw.strip().lstrip('-* '))}"
                if line not in lines:
                    lines.append(line)
    return lines[-MAX_TODO_LINES:]


def _span_text_for_identifiers(message: Any, include_tool_results: bool) -> str:
    if isinstance(message, ToolResultMessage) and not include_tool_results:
        return ""
    if not include_tool_results:  # aggressive: what the user and assistant wrote, nothing else
        return scan_text(message)
    return message_text(message)


def _fit_lines(lines: Sequence[str], budget: int, *, omitted_label: str) -> tuple[list[str], int]:
    """The most recent lines that fit `budget` chars, with a note on how many older were left out."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = len(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    kept.reverse()
    omitted = len(lines) - len(kept)
    if omitted:
        kept.insert(0, f"- ...{omitted} earlier {omitted_label} omitted")
    return kept, omitted


def _dedupe_identifiers(groups: Iterable[Iterable[str]]) -> list[list[str]]:
    seen: set[str] = set()
    out = []
    for group in groups:
        fresh = []
        for value in group:
            key = normalize_identifier(value)
            if key not in seen:
                seen.add(key)
                fresh.append(value)
        out.append(fresh)
    return out


@dataclass
class _Layout:
    """What the extractive summary holds besides its identifiers, fixed by the request alone:
    the previous summary's sections, the asks / constraints / TODOs (never trimmed) and the
    candidate tool-outcome and decision lines."""

    previous: str
    prev_sections: dict[str, list[str]] | None
    fixed: list[list[str]]  # asks, constraints, todos: each at least one line
    outcomes: list[str]
    decisions: list[str]


def _layout(request: SummaryRequest) -> _Layout:
    messages = request.messages
    previous = (request.previous_summary or "").strip()
    # file lists are rebuilt from the calls each time; their paths still reach the identifiers
    previous_text = _FILE_TAGS.sub("", previous).strip()
    prev_sections = parse_sections(previous_text) if previous and has_required_sections(previous) else None

    asks = []
    ask = latest_user_ask(messages)
    for value in ([ask] if ask else []) + list(request.pinned_asks):
        line = f"- {_one_line(value, MAX_ASK_CHARS)}"
        if line not in asks:
            asks.append(line)
    if prev_sections is not None and not ask:
        asks.extend(x for x in prev_sections.get("## Pending user asks", []) if x.strip().lower() not in _EMPTY_BODIES)
    constraints = [f"- {c}" for c in explicit_constraints(messages)]
    if prev_sections is not None:
        constraints = _merge(prev_sections.get("## Constraints/Rules", []), constraints)
    todos = _todos(messages)
    if prev_sections is not None:
        todos = _merge(prev_sections.get("## Open TODOs", []), todos)[-MAX_TODO_LINES:]

    outcomes = _tool_outcomes(messages, request.kept_call_ids) if request.include_tool_results else []
    decisions = _decisions(messages)
    if prev_sections is not None:
        prior = [x for name, lines in prev_sections.items()
                 if name not in ("## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers",
                                 "## Tool outcomes") for x in lines if x.strip().lower() not in _EMPTY_BODIES]
        decisions = [x if x.lstrip().startswith("-") else f"- {x.strip()}" for x in prior] + decisions
        outcomes = [x for x in prev_sections.get("## Tool outcomes", [])] + outcomes
    elif previous:
        decisions = [f"- Earlier summary: {_one_line(line, MAX_LINE_CHARS)}" for line in previous_text.splitlines()
                     if line.strip() and not _HEADING.match(line.strip())] + decisions
    fixed = [asks or [NONE_TEXT], constraints or [NONE_TEXT], todos or [NONE_TEXT]]
    return _Layout(previous, prev_sections, fixed, outcomes, decisions)


def _render(decision_lines: Sequence[str], fixed: Sequence[Sequence[str]], identifier_lines: Sequence[str],
            outcome_lines: Sequence[str]) -> str:
    parts = [
        "## Decisions", *(decision_lines or [NONE_CAPTURED]), "",
        "## Open TODOs", *fixed[2], "",
        "## Constraints/Rules", *fixed[1], "",
        "## Pending user asks", *fixed[0], "",
        "## Exact identifiers", *(identifier_lines or [NONE_CAPTURED]),
    ]
    if outcome_lines:
        parts += ["", "## Tool outcomes", *outcome_lines]
    return "\n".join(parts)


def extractive_summary_floor(request: SummaryRequest) -> int:
    """The fewest characters `ExtractiveSummarizer.summarize(request)` can return (a summary
    request, not a turn prefix) — computed without scanning a text for identifiers, so the
    harness can tell "nothing to gain" before paying for the summary.

    The summary is `_render(decisions, fixed, identifiers, outcomes)`: lines joined by newlines,
    so its length is the sum of its lines' lengths plus one per line but the last. Of its lines,
    the headings and the asks / constraints / TODOs (`_layout`, never trimmed) are fixed by the
    request; the rest are at least:
    * decisions: one line, whatever the budget (`_fit_lines` keeps a line or writes how many it
      left out; the trimming loop stops at one) — `None captured.` exactly when there are none;
    * identifiers: one line (an identifier, the omitted note, or `None captured.`);
    * tool outcomes: none when there are no outcome lines; else the blank line, the heading and
      one line (kept or the omitted note, as for decisions).
    So the render with empty strings for those lines is never longer than the summary."""
    layout = _layout(request)
    return len(_render([""] if layout.decisions else [], layout.fixed, [""], [""] if layout.outcomes else []))


class ExtractiveSummarizer:
    """Deterministic, offline: OpenClaw's sections built from the messages themselves."""

    name = "extractive"
    deterministic = True

    def __init__(self, scans: TextScans | None = None):
        #: the compaction's scans (shared with its guard seed, its other calls and tail refits)
        self.scans = scans

    def summarize(self, request: SummaryRequest) -> str:
        if request.turn_prefix:
            return self._turn_prefix(request)
        scans = self.scans if self.scans is not None else TextScans()
        messages = request.messages
        include = request.include_tool_results
        layout = _layout(request)
        previous, prev_sections = layout.previous, layout.prev_sections
        fixed, outcomes, decisions = layout.fixed, layout.outcomes, layout.decisions

        opaque: list[str] = []
        values: list[str] = []
        tokens_text: list[str] = []
        tokens_results: list[str] = []
        if previous:
            opaque.extend(scans.identifiers(previous))
            if prev_sections is not None:
                values.extend(x.lstrip("- ").strip() for x in prev_sections.get("## Exact identifiers", [])
                              if x.strip().lower() not in _EMPTY_BODIES and not x.lstrip("- ").startswith("..."))
        for message in list(messages) + list(request.identifier_sources):
            text = _span_text_for_identifiers(message, include)
            if text:
                opaque.extend(scans.identifiers(text))
            if include:
                for call in message_calls(message):
                    values.extend(argument_values(call.arguments))
            if isinstance(message, ToolResultMessage):
                if include:
                    result_text = text_of(message)
                    tokens_results.extend(result_values(result_text))
                    tokens_results.extend(scans.value_tokens(result_text))
            elif isinstance(message, (UserMessage, AssistantMessage)):
                tokens_text.extend(scans.value_tokens(text_of(message)))
        groups = _dedupe_identifiers([opaque, values, tokens_text, tokens_results])
        order = {value: i for i, value in enumerate(groups[0])}
        pinned = {normalize_identifier(x) for x in request.pinned_identifiers}
        # when they do not all fit, the guard's identifiers go first, then the most recent ones
        groups[0] = [x for x in groups[0] if normalize_identifier(x) in pinned] + \
            [x for x in reversed(groups[0]) if normalize_identifier(x) not in pinned]

        headings = sum(len(h) + 2 for h in REQUIRED_SUMMARY_SECTIONS) + len("## Tool outcomes") + 8
        budget = request.budget_chars - headings - sum(len(x) + 1 for group in fixed for x in group) - OMITTED_LINE_CHARS * 3
        identifier_lines: list[str] = []
        omitted_ids = 0
        # a floor for the narrative even before the must-have identifiers: a summary of nothing but
        # identifiers tells a model what, not why
        narrative_reserve = min(NARRATIVE_FLOOR_CHARS, int(request.budget_chars * 0.15)) if outcomes or decisions else 0
        for rank, group in enumerate(groups):
            if rank == 1:  # after the must-have identifiers, keep room for outcomes and decisions
                narrative_reserve = min(max(0, budget), int(request.budget_chars * NARRATIVE_SHARE)) \
                    if outcomes or decisions else 0
            for value in group:
                line = f"- {value}"
                if len(line) + 1 > budget - narrative_reserve:
                    omitted_ids += 1
                    continue
                identifier_lines.append(line)
                budget -= len(line) + 1
        identifier_lines.sort(key=lambda line: order.get(line[2:], len(order)))
        if omitted_ids:
            identifier_lines.append(f"- ...{omitted_ids} more identifiers omitted (budget)")
        outcome_budget = max(0, int(budget * 0.5)) if decisions else max(0, budget)
        outcome_lines, _ = _fit_lines(outcomes, outcome_budget, omitted_label="tool outcomes")
        budget -= sum(len(x) + 1 for x in outcome_lines)
        decision_lines, _ = _fit_lines(decisions, max(0, budget - 40), omitted_label="decisions")

        def render() -> str:
            return _render(decision_lines, fixed, identifier_lines, outcome_lines)

        text = render()
        # the line budgets above are estimates: trim the oldest narrative lines until it fits,
        # so the caller's cap never cuts into the identifiers
        while len(text) > request.budget_chars and (len(decision_lines) > 1 or len(outcome_lines) > 1):
            lines = decision_lines if len(decision_lines) > 1 else outcome_lines
            dropped = lines.pop(1 if lines[0].startswith("- ...") else 0)
            label = "decisions" if lines is decision_lines else "tool outcomes"
            count = 1 + (int(re.match(r"- \.\.\.(\d+)", lines[0]).group(1)) if lines and lines[0].startswith("- ...")
                         else 0)
            if lines and lines[0].startswith("- ..."):
                lines[0] = f"- ...{count} earlier {label} omitted"
            elif dropped:
                lines.insert(0, f"- ...{count} earlier {label} omitted")
            text = render()
        return text

    def _turn_prefix(self, request: SummaryRequest) -> str:
        messages = request.messages
        ask = latest_user_ask(messages) or NONE_CAPTURED
        outcomes = _tool_outcomes(messages, request.kept_call_ids) if request.include_tool_results else []
        budget = max(200, request.budget_chars // 16)
        lines, _ = _fit_lines(outcomes + _decisions(messages), budget, omitted_label="steps")
        return "\n".join(["## Original Request", _one_line(ask, MAX_ASK_CHARS), "", "## Early Progress",
                          *(lines or [NONE_CAPTURED])])


def _merge(first: Sequence[str], second: Sequence[str]) -> list[str]:
    out = [x for x in first if x.strip().lower() not in _EMPTY_BODIES]
    for x in second:
        if x not in out:
            out.append(x)
    return out


# ---------------------------------------------------------------- LLM summarizer


SUMMARIZATION_SYSTEM_PROMPT = (  # replaylab's wording of pi's SUMMARIZATION_SYSTEM_PROMPT (structure, not verbatim)
    "You are a context summarization assistant. Read the conversation between a user and an AI assistant and "
    "produce a structured summary in the exact format requested. Do NOT continue the conversation. Do NOT answer "
    "questions from the conversation. ONLY output the structured summary."
)
STRUCTURE_INSTRUCTIONS = "Produce a compact, factual summary with these exact section headings:\n" + "\n".join(
    REQUIRED_SUMMARY_SECTIONS)
TURN_PREFIX_SECTIONS = "Use these sections: ## Original Request, ## Early Progress, ## Context for Suffix."


def serialize_conversation(messages: Sequence[Any]) -> str:
    """pi `serializeConversation`: `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
    `[Assistant tool calls]: name(k=<json>, …); …`, `[Tool result]: …` (≤ 2000 chars each)."""
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
            calls = message.tool_calls()
            if calls:
                rendered = "; ".join(
                    f"{c.name}(" + ", ".join(f"{k}={orjson.dumps(v).decode()}" for k, v in (c.arguments or {}).items()) + ")"
                    for c in calls)
                parts.append(f"[Assistant tool calls]: {rendered}")
        elif isinstance(message, ToolResultMessage):
            text = text_of(message)
            if len(text) > TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT:
                rest = len(text) - TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT
                text = text[:TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT] + TOOL_RESULT_TRUNCATED_IN_SUMMARY.format(n=rest)
            if text:
                parts.append(f"[Tool result]: {text}")
        elif isinstance(message, BashExecutionMessage):
            parts.append(f"[User]: Ran `{message.command}`\n{message.output or '(no output)'}")
        elif isinstance(message, (CustomMessage, CompactionSummaryMessage, BranchSummaryMessage)):
            text = text_of(message)
            if text:
                parts.append(f"[User]: {text}")
    return "\n\n".join(parts)


def build_instructions(request: SummaryRequest) -> str:
    if request.turn_prefix:
        lines = [TURN_PREFIX_INSTRUCTIONS, TURN_PREFIX_SECTIONS]
    else:
        lines = [STRUCTURE_INSTRUCTIONS]
        if request.identifier_policy == "off":
            lines.append(POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION)
        elif request.identifier_policy == "custom" and request.identifier_instructions:
            lines.append(f"For ## Exact identifiers, apply this operator-defined policy: {request.identifier_instructions}")
        else:
            lines.append(STRICT_EXACT_IDENTIFIERS_INSTRUCTION)
        lines.append("Do not omit unresolved asks from the user.")
    if request.custom_instructions:
        lines.append(f"Additional focus:\n{request.custom_instructions}")
    if request.feedback:
        lines.append(request.feedback)
    return "\n".join(lines)


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm  # noqa: PLC0415 — lazy on purpose (seconds of import time, network at import)

    return litellm


class LiteLLMSummarizer:
    """One `litellm.completion` per call. `mock_responses` (tests, offline) are consumed in order;
    `inject_failures` makes the first N calls raise through litellm's own mock error path."""

    def __init__(self, model: str, *, api_base: str | None = None, timeout_s: float = 120.0,
                 mock_responses: Sequence[str] | None = None):
        self.model = model.removeprefix("litellm/")
        self.name = f"litellm:{self.model}"
        self.api_base = api_base
        self.timeout_s = timeout_s
        self.mock_responses = list(mock_responses) if mock_responses is not None else None
        self.calls = 0

    def summarize(self, request: SummaryRequest, *, fail: bool = False) -> str:
        litellm = _litellm()
        prompt = f"<conversation>\n{serialize_conversation(request.messages)}\n</conversation>\n\n"
        if request.previous_summary:
            prompt += f"<previous-summary>\n{request.previous_summary}\n</previous-summary>\n\n"
        prompt += build_instructions(request)
        kwargs: dict[str, Any] = {"model": self.model, "temperature": 0, "timeout": self.timeout_s,
                                  "messages": [{"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT},
                                               {"role": "user", "content": prompt}]}
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        index = self.calls
        self.calls += 1
        if fail:
            kwargs["mock_response"] = "litellm.InternalServerError"
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


# ---------------------------------------------------------------- attempts, guard, fallback


@dataclass
class SummaryOutcome:
    text: str
    source: str  # extractive | litellm:<model> | fallback
    calls: int = 0
    guard_ok: bool = True
    guard_rounds: int = 0
    reasons: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class FailureInjector:
    """Test hook (`summarizerFailures`): the first `count` summarizer calls of a compaction fail."""

    def __init__(self, count: int = 0):
        self.remaining = count
        self.total = count

    def take(self) -> bool:
        if self.remaining > 0:
            self.remaining -= 1
            return True
        return False


def call_with_retries(summarizer: Any, request: SummaryRequest, *, retries: int, delay_s: float,
                      injector: FailureInjector, errors: list[str], sleep: Callable[[float], None] = time.sleep
                      ) -> tuple[str | None, int]:
    """`retryAsync` (3 attempts, back-off 0.5–5 s, jitter 0.2); returns (text or None, calls)."""
    calls = 0
    for attempt in range(retries):
        calls += 1
        fail = injector.take()
        try:
            if isinstance(summarizer, LiteLLMSummarizer):
                return summarizer.summarize(request, fail=fail), calls
            if fail:
                raise SummarizationError(f"Summarization failed: injected failure "
                                         f"{injector.total - injector.remaining}/{injector.total}")
            return summarizer.summarize(request), calls
        except SummarizationError as exc:
            errors.append(str(exc))
            if attempt + 1 < retries and delay_s > 0 and isinstance(summarizer, LiteLLMSummarizer) and not fail:
                wait = min(delay_s * (2 ** attempt), 5.0)
                sleep(wait * (1 + random.uniform(-0.2, 0.2)))
    return None, calls


def summarize_with_guard(summarizer: Any, request: SummaryRequest, *, guard_identifiers: Sequence[str],
                         guard_latest_ask: str | None, quality_guard: bool, max_retries: int, call_retries: int,
                         retry_delay_s: float, injector: FailureInjector,
                         fallback: Callable[[], str], audit_suffix: str = "") -> SummaryOutcome:
    """Quality-guarded summary: up to max_retries + 1 rounds, each round's failures fed back into
    the next prompt; a failing retry keeps the last good summary; no summary at all ⇒ fallback."""
    outcome = SummaryOutcome(text="", source=summarizer.name)
    rounds = max_retries + 1 if quality_guard else 1
    last_good: str | None = None
    previous = (request.previous_summary or "").strip()
    for round_index in range(rounds):
        outcome.guard_rounds = round_index + 1
        text, calls = call_with_retries(summarizer, request, retries=call_retries, delay_s=retry_delay_s,
                                        injector=injector, errors=outcome.errors)
        outcome.calls += calls
        if text is None:
            if last_good is not None:
                outcome.errors.append("quality retry failed; keeping the last successful summary")
                break
            outcome.guard_rounds = round_index + 1
            continue
        if previous and is_empty_skeleton(text):
            outcome.reasons = ["empty_skeleton_over_previous_summary"]
            outcome.guard_ok = False
            if round_index + 1 < rounds:
                request = _with_feedback(request, outcome.reasons)
            continue
        ok, reasons = audit_summary_quality(text + audit_suffix, guard_identifiers, guard_latest_ask,
                                            request.identifier_policy)
        last_good, outcome.text = text, text
        outcome.guard_ok, outcome.reasons = ok, reasons
        if ok or not quality_guard or round_index + 1 >= rounds:
            break
        if getattr(summarizer, "deterministic", False):
            break  # the same input gives the same summary: a retry cannot fix it
        request = _with_feedback(request, reasons)
    if last_good is None:
        outcome.text = fallback()
        outcome.source = "fallback"
        ok, reasons = audit_summary_quality(outcome.text + audit_suffix, guard_identifiers, guard_latest_ask,
                                            request.identifier_policy)
        outcome.guard_ok = False
        outcome.reasons = (outcome.reasons or ["summarizer_failed"]) + [r for r in reasons if r not in outcome.reasons]
    return outcome


def _with_feedback(request: SummaryRequest, reasons: Sequence[str]) -> SummaryRequest:
    instruction = QUALITY_FEEDBACK_STRICT if request.identifier_policy == "strict" else QUALITY_FEEDBACK_POLICY
    feedback = (f"{instruction}\n\n<untrusted-text label=\"Quality check feedback\">\n"
                f"Previous summary failed quality checks ({', '.join(reasons)}).\n</untrusted-text>")
    return SummaryRequest(**{**request.__dict__, "feedback": feedback})


def merge_split_turn(history: str, prefix: str) -> str:
    section = f"{SPLIT_TURN_HEADING}\n\n{prefix}"
    return f"{history}\n\n---\n\n{section}" if history.strip() else section
