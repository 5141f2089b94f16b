"""OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) → v3 sessions.

Older layouts are read too: an early codex-rs rollout (its session meta as the first line, then
bare response items and `{record_type: state}` lines) and the TypeScript Codex CLI's
`~/.codex/sessions/rollout-*.json` (one `{session, items}` document). `codex_layouts` tells the
layout and restates each of their records as the line below, so the items are read here alike
(a `local_shell_call_output` answers its call as a `function_call_output` does; errors name a
field as the file has it: `payload.<field>`, `<field>` or `items[N].<field>`). In a folder, a
`rollout-*.json` of the same session id as a JSONL rollout is that session, imported once.

The format, as Codex writes and reads it (openai/codex 001cb8e2, `codex-rs/protocol/src/protocol.rs`
`RolloutItem`, `#[serde(tag = "type", content = "payload")]`, each line a `RolloutLine` with its
`timestamp`; `codex-rs/protocol/src/models.rs` `ResponseItem`):
* `session_meta` `{id, timestamp, cwd, originator, cli_version, instructions?, source, model_provider}`
  gives the header (its id, cwd and time); the whole record is kept as a custom entry, and its
  `instructions` (Codex's base instructions) as the system prompt;
* `response_item`: `message` (role `user` → a user message; `developer` / `system` → a
  `system-prompt` custom entry, as the OpenAI chat importer keeps them; `assistant` → assistant
  text), `reasoning` (its summary and text → a thinking block; only `encrypted_content` → a
  redacted thinking block), `function_call {name, arguments: JSON string, call_id}`,
  `custom_tool_call {name, input, call_id}` (arguments `{"input": ...}`: Codex's freeform
  `apply_patch`), `local_shell_call {call_id, action: {type: exec, command: argv, ...}}` (a call
  of `local_shell` whose arguments are the action), `function_call_output` /
  `custom_tool_call_output {call_id, output}` (a string, a list of content items, or
  `{content, success}`; `success: false` is an error — Codex itself writes the text alone, so the
  output of a tool that runs a process is an error when the exit code Codex wrote into it is not 0,
  `exit_code`). The items of one model answer (reasoning,
  text, calls) follow each other with no user message or output between them: they become ONE
  assistant message, so parallel calls are one message and each output follows its call.
  `web_search_call` (OpenAI's hosted search: nothing of the user's runs, no output item),
  `ghost_snapshot`, `compaction` and any other item are custom entries `codex:<type>`;
* `compacted {message, replacement_history?}` is Codex's own compaction (the model's later context
  is `replacement_history`, or the summary): kept as a custom entry `codex:compacted` and named in a
  note — never dropped, and never written as a pi compaction (replaylab did not make it);
* `turn_context` and `event_msg` (Codex's UI events, which repeat the response items) are custom
  entries `codex:turn_context` / `codex:event_msg:<type>`; a `turn_context`'s `model` names the
  model of the assistant messages after it;
* a record of another `type` is a custom entry `codex:<type>` and a note.

Tools keep Codex's names and arguments, so replaylab's classifier judges them as Codex's:
`shell` / `local_shell` (an argument vector; `bash -lc <script>` is the script), `shell_command`
and `exec_command` (`cmd`) through the shell grammar; `apply_patch` writes (`CODEX_CLASSES`).
A line that does not parse is an error naming it, except the file's last line (a write cut off
by a crash), which is named in a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic
from replaylab.importers.codex_layouts import (
    CLI_JSON,
    CURRENT,
    EARLY,
    Row,
    cli_rows,
    current_rows,
    early_rows,
    layout_of,
)
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    each_source,
    find_tool_classes,
    parse_arguments,
    provider_for_model,
    safe_name,
)
from replaylab.importers.openai_chat import add_model_fields

CUSTOM_PREFIX = "codex:"
#: Codex's patch tool (`codex-rs/core/src/tools/handlers/apply_patch.rs`: it adds, deletes,
#: updates and moves files); OpenClaw's rules say the same of the name, declared here all the same
CODEX_CLASSES = {"apply_patch": "write"}
#: response items that are part of a model answer (one assistant message)
_ANSWER_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call"})
#: (the TypeScript CLI answers a `local_shell_call` with a `local_shell_call_output`)
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
#: records that are no model item: an open answer goes on past them
_ASIDES = frozenset({"turn_context", "event_msg", "session_meta"})
#: and early codex-rs's state lines, in that layout only (a current rollout has no `state` record)
_EARLY_ASIDES = _ASIDES | {"state"}
#: the session id a rollout file's name ends with
_SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_SYSTEM_ROLES = frozenset({"developer", "system"})
#: Codex's tools that run a process (or a patch) and write its exit code into their output
EXEC_TOOLS = frozenset(
    {"shell", "container.exec", "local_shell", "shell_command", "exec_command", "write_stdin", "apply_patch"}
)
#: the lines Codex writes before a process's output (`codex-rs/core/src/tools/mod.rs`
#: `format_exec_output_for_model_freeform`; `tools/handlers/unified_exec.rs` `format_response`)
_EXIT_LINE = re.compile(r"(?:Exit code: |Process exited with code )(-?\d+)")
_HEADER_LINE = re.compile(
    r"Exit code: -?\d+|Process exited with code -?\d+|Wall time: .*|Total output lines: \d+|Chunk ID: .*"
    r"|Process running with session ID .*|Original token count: \d+"
)


def import_codex(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    if src.is_dir():
        files = sorted(src.rglob("rollout-*.jsonl")) or sorted(src.rglob("*.jsonl"))
        # the TypeScript CLI's sessions; one of the same session id as a JSONL rollout is that session
        rollout_ids = {_session_id_of(path) for path in files} - {None}
        files += [p for p in sorted(src.rglob("rollout-*.json")) if _session_id_of(p) not in rollout_ids]
        if not files:
            raise bad_input(src, "holds no Codex rollout (rollout-*.jsonl, or the TypeScript CLI's rollout-*.json)")
    else:
        files = [src]
    yield from each_source(files, lambda path: [import_codex_file(path, tool_classes_path)], problems)


def _session_id_of(path: Path) -> str | None:
    match = _SESSION_ID.search(path.stem)
    return match.group(0).lower() if match else None


def import_codex_file(path: Path, tool_classes_path: Path | None = None) -> ImportedSession:
    layout = layout_of(path)
    if layout == EARLY:
        rows, cut_off = early_rows(path)
    elif layout == CLI_JSON:
        rows, cut_off = cli_rows(path), None
    else:
        rows, cut_off = current_rows(path)
    meta: dict[str, Any] = next((r["payload"] for _, r, _ in rows if r["type"] == "session_meta"), {})
    classes, _ = find_tool_classes(path, tool_classes_path)
    name = safe_name(path.stem)
    source = {"kind": "codex", "file": str(path)} | ({"layout": layout} if layout != CURRENT else {})
    builder = SessionBuilder(
        name,
        session_id=str(meta.get("id") or name),
        source=source,
        cwd=str(meta.get("cwd") or ""),
        timestamp=meta.get("timestamp"),
        tool_classes={**CODEX_CLASSES, **classes},
    )
    provider = str(meta.get("model_provider") or "") or None
    _Rollout(builder, path, provider, _EARLY_ASIDES if layout == EARLY else _ASIDES).add(rows)
    if cut_off is not None:
        builder.notes.append(f"{name}: line {cut_off} does not parse (a write cut off?); skipped")
    return builder.finish()


class _Rollout:
    def __init__(self, builder: SessionBuilder, path: Path, provider: str | None, asides: frozenset[str]):
        self.b = builder
        self.asides = asides
        self.path = path
        self.provider = provider
        self.model: str | None = None
        self.answer: list[dict[str, Any]] = []  # the blocks of the model answer being read
        self.answer_at: tuple[int, Any] = (0, None)  # its first line and timestamp
        self.compactions = 0
        self.held: list[tuple[str, dict[str, Any], int, Any]] = []  # records read while an answer was open
        self.prefix = "payload."  # what errors name the fields of the record being read by

    def add(self, rows: list[Row]) -> None:
        for lineno, record, prefix in rows:
            self.prefix = prefix
            kind, payload, timestamp = record["type"], record["payload"], record.get("timestamp")
            item = payload.get("type") if kind == "response_item" else None
            if kind == "response_item" and (
                item in _ANSWER_ITEMS or (item == "message" and payload.get("role") == "assistant")
            ):
                if not self.answer:
                    self.answer_at = (lineno, timestamp)
                self.answer.extend(self._answer_blocks(payload, lineno))
                continue
            if kind in self.asides:
                if self.answer:  # no model item: the answer goes on past it, and it is written after the answer
                    self.held.append((kind, payload, lineno, timestamp))
                else:
                    self._aside(kind, payload, lineno, timestamp)
                continue
            self._flush()
            if kind == "response_item":
                self._item(payload, lineno, timestamp)
            elif kind == "compacted":
                self._compacted(payload, lineno, timestamp)
            else:
                self.b.custom(CUSTOM_PREFIX + kind, payload, source_id=f"line:{lineno}", timestamp=timestamp)
                self.b.notes.append(
                    f"{self.b.name}: line {lineno}: rollout item {kind!r} is not Codex's; kept as custom"
                )
        self._flush()
        if self.compactions:
            self.b.notes.append(
                f"{self.b.name}: Codex compacted this session {self.compactions} time(s); each kept as a "
                f"'{CUSTOM_PREFIX}compacted' custom entry (Codex's summary, not a replaylab compaction)"
            )

    def _aside(self, kind: str, payload: dict[str, Any], lineno: int, timestamp: Any) -> None:
        if kind == "session_meta":
            self.provider = str(payload.get("model_provider") or "") or self.provider
            instructions = payload.get("instructions")
            if isinstance(instructions, str) and instructions:
                self.b.system_prompt(instructions, source_id=f"line:{lineno}", timestamp=timestamp)
            self.b.custom(CUSTOM_PREFIX + kind, payload, source_id=f"line:{lineno}", timestamp=timestamp)
            return
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        custom_type = CUSTOM_PREFIX + kind + (f":{payload['type']}" if isinstance(payload.get("type"), str) else "")
        self.b.custom(custom_type, payload, source_id=f"line:{lineno}", timestamp=timestamp)

    def _answer_blocks(self, payload: dict[str, Any], lineno: int) -> list[dict[str, Any]]:
        item = payload["type"]
        if item == "message":
            return [{"type": "text", "text": _text(payload.get("content"), self.path, lineno, self.prefix)}]
        if item == "reasoning":
            parts = [p for key in ("summary", "content") for p in payload.get(key) or [] if isinstance(p, dict)]
            text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p.get("text"), str))
            block: dict[str, Any] = {"type": "thinking", "thinking": text}
            if payload.get("encrypted_content"):
                block["thinkingSignature"] = payload["encrypted_content"]
                if not text:
                    block["redacted"] = True
            return [block]
        call_id = payload.get("call_id") or payload.get("id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_input(
                self.path,
                f"{item} has no string 'call_id'; expected the id its output answers",
                line=lineno,
                field_name=self.prefix + "call_id",
            )
        if item == "function_call":
            name = payload.get("name")
            arguments, problem = parse_arguments(payload.get("arguments"))
            if problem:
                self.b.notes.append(f"{self.b.name}: line {lineno} call {call_id!r}: {problem}")
        elif item == "custom_tool_call":
            name, arguments = payload.get("name"), {"input": payload.get("input")}
        else:  # local_shell_call: Codex runs its action's argument vector
            action = payload.get("action")
            if not isinstance(action, dict):
                raise bad_input(
                    self.path,
                    "local_shell_call has no 'action' object; expected {type: exec, command: [...]}",
                    line=lineno,
                    field_name=self.prefix + "action",
                )
            name, arguments = "local_shell", dict(action)
        if not isinstance(name, str) or not name:
            raise bad_input(self.path, f"{item} has no string 'name'", line=lineno, field_name=self.prefix + "name")
        return [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}]

    def _flush(self) -> None:
        if not self.answer:
            return
        blocks, (lineno, timestamp) = self.answer, self.answer_at
        self.answer = []
        message: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop",
        }
        provider = self.provider or provider_for_model(self.model)
        add_model_fields(message, api="openai-responses" if self.model else None, provider=provider, model=self.model)
        self.b.message(message, source_id=f"line:{lineno}", timestamp=timestamp)
        held, self.held = self.held, []
        for aside in held:
            self._aside(*aside)

    def _item(self, payload: dict[str, Any], lineno: int, timestamp: Any) -> None:
        item, source_id = payload.get("type"), f"line:{lineno}"
        if item == "message":
            role = payload.get("role")
            text = _text(payload.get("content"), self.path, lineno, self.prefix)
            if role == "user":
                content = _user_content(payload.get("content"), self.path, lineno, self.prefix)
                self.b.message({"role": "user", "content": content}, source_id=source_id, timestamp=timestamp)
            elif role in _SYSTEM_ROLES:
                extra = {"role": role} if role != "system" else None
                self.b.system_prompt(text, source_id=source_id, timestamp=timestamp, extra_data=extra)
            else:
                raise bad_input(
                    self.path,
                    f"message has role {role!r}; expected user, assistant, developer or system",
                    line=lineno,
                    field_name=self.prefix + "role",
                )
        elif item in _OUTPUT_ITEMS:
            call_id = payload.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise bad_input(
                    self.path, f"{item} has no string 'call_id'", line=lineno, field_name=self.prefix + "call_id"
                )
            text, is_error = _output(payload.get("output"))
            if not is_error and self.b.pending_call_name(call_id) in EXEC_TOOLS:
                code = exit_code(text)
                is_error = code is not None and code != 0
            self.b.tool_result(call_id, text, is_error=is_error, source_id=source_id, timestamp=timestamp)
        else:  # web_search_call, ghost_snapshot, compaction, other: kept, never sent as a message
            self.b.custom(f"{CUSTOM_PREFIX}{item}", payload, source_id=source_id, timestamp=timestamp)

    def _compacted(self, payload: dict[str, Any], lineno: int, timestamp: Any) -> None:
        self.compactions += 1
        self.b.custom(CUSTOM_PREFIX + "compacted", payload, source_id=f"line:{lineno}", timestamp=timestamp)


def _parts(content: Any, path: Path, lineno: int, prefix: str) -> list[dict[str, Any]]:
    if not isinstance(content, list) or not all(isinstance(p, dict) for p in content):
        raise bad_input(
            path,
            f"message content is {type(content).__name__}; expected a list of content items",
            line=lineno,
            field_name=prefix + "content",
        )
    return content


def _text(content: Any, path: Path, lineno: int, prefix: str) -> str:
    parts = _parts(content, path, lineno, prefix)
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p.get("text"), str))


def _user_content(content: Any, path: Path, lineno: int, prefix: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in _parts(content, path, lineno, prefix):
        url = part.get("image_url")
        if part.get("type") == "input_image" and isinstance(url, str):
            if url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "data": data, "mimeType": mime})
            else:
                blocks.append({"type": "text", "text": f"[image {url}]"})
        else:
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
    return blocks


def _output(output: Any) -> tuple[str, bool]:
    """(text, is_error) of a call's output: a string, content items, or `{content, success}`."""
    if isinstance(output, str):
        return output, False
    if isinstance(output, list):
        return "\n".join(
            str(p.get("text")) if p.get("type") == "input_text" else f"[image {p.get('image_url', '')}]"
            for p in output
            if isinstance(p, dict)
        ), False
    if isinstance(output, dict):
        content = output.get("content")
        text = content if isinstance(content, str) else _output(content)[0] if content is not None else ""
        return text, output.get("success") is False
    return "" if output is None else str(output), False


def exit_code(text: str) -> int | None:
    """The exit code Codex wrote into a process's output, else None. Codex never keeps its own
    `success` flag in a rollout (`FunctionCallOutputPayload` serializes as its text alone), so the
    text is all there is: `{"output": ..., "metadata": {"exit_code": N, ...}}`
    (`format_exec_output_for_model_structured`), or the header lines before `Output:` —
    `Exit code: N` (`..._freeform`) or `Process exited with code N` (unified exec's
    `format_response`; a process still running has none)."""
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        metadata = value.get("metadata") if isinstance(value, dict) and "output" in value else None
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    header, found, _ = text.partition("\nOutput:")
    if not found or not all(_HEADER_LINE.fullmatch(line) for line in header.split("\n")):
        return None
    for line in header.split("\n"):
        match = _EXIT_LINE.fullmatch(line)
        if match:
            return int(match.group(1))
    return None
