"""Other coding agents' built-in tools (`upstream.coding_agents`): what a call of one says by its
name and arguments — the agent's own session tools, an observation of the screen, text sent to a
running process, a one-word `command` that names the action, the MCP tool a wrapper calls."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from replaylab.safety.openclaw_rules import normalize_action
from replaylab.safety.shell import word
from replaylab.upstream import coding_agents as CA
from replaylab.upstream import openclaw_2026_9_6 as OC96
from replaylab.upstream import pi_1_6_0 as PI16

_ONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def builtin_class(name: str, bare: str, args: Any) -> tuple[str, str] | None:
    """(class, why) of a call the other agents' tables decide alone, else None."""
    known = CA.BUILTIN_TOOLS.get(name)
    if known is not None:
        return known
    record = args if isinstance(args, dict) else {}
    if name == CA.CODEX_WRITE_STDIN and record.get("chars") in ("", None):
        return "read", "Codex `write_stdin` with no characters only polls the session's output"
    command = record.get("command")
    if bare == CA.MEMORY_TOOL and isinstance(command, str):
        if command in CA.MEMORY_READ_COMMANDS:
            return "read", f"Anthropic's memory tool with `{word(command)}` only reads"
        return "write", f"Anthropic's memory tool with `{word(command)}` changes the memory directory"
    if name == CA.ATTEMPT_COMPLETION and not (isinstance(command, str) and command.strip()):
        return "interaction", "Cline `attempt_completion` presents the result to the user"
    return None


def completion_command(name: str, args: Any) -> str | None:
    """The command Cline's `attempt_completion` runs in the user's terminal, if it names one."""
    command = args.get("command") if name == CA.ATTEMPT_COMPLETION and isinstance(args, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def wrapped_mcp_call(name: str, args: Any) -> tuple[str, dict[str, Any]] | None:
    """The MCP tool (as `mcp__server__tool`) and arguments Cline's / Roo-Code's `use_mcp_tool`
    calls; None when it names none, or its arguments cannot be read (then it mutates)."""
    if name not in CA.MCP_WRAPPERS or not isinstance(args, dict):
        return None
    server, tool, inner = args.get("server_name"), args.get("tool_name"), args.get("arguments")
    if not (isinstance(server, str) and server.strip() and isinstance(tool, str) and tool.strip()):
        return None
    if isinstance(inner, str):
        try:
            inner = json.loads(inner) if inner.strip() else {}
        except ValueError:
            return None
    inner = {} if inner is None else inner
    return (f"mcp__{server.strip()}__{tool.strip()}", inner) if isinstance(inner, dict) else None


def computer_observation(normalized: str, args: Any) -> str | None:
    """The action of a computer-use call that only observes the screen, as Anthropic
    (`cursor_position`) and OpenAI (`{"type": "screenshot"}`) spell it; None for any other call."""
    if normalized not in CA.COMPUTER_TOOL_NAMES or not isinstance(args, dict):
        return None
    action = args.get("action")
    if isinstance(action, dict):
        action = action.get("type")
    observed = normalize_action(action) if isinstance(action, str) else None
    return observed if observed in CA.COMPUTER_OBSERVATIONS else None


def code_mode_cell(normalized: str, args: Any) -> str | None:
    """Why a call runs or resumes a code-mode cell, JavaScript that may call any tool of the
    agent's catalog, writes included; None for any other call. pi's `codemode` always runs one. An
    OpenClaw `exec` holding `code` is never read as a shell command: its `command` is the same
    program (`readCode`). A `wait` naming a run or a cell resumes it; one naming neither (Codex's
    multi-agent `wait`) only waits."""
    record = args if isinstance(args, dict) else {}
    if normalized == PI16.CODEMODE_TOOL_NAME:
        # what it did shows only on its result (`nested_calls`): a call judged alone may do anything
        return (
            "pi `codemode` runs its `code` as JavaScript whose `tools.<name>()` calls reach any tool of the agent"
            " (extensions/codemode/tool.js), writes included ⇒ mutating"
        )
    if normalized == OC96.CODE_MODE_EXEC_TOOL_NAME and OC96.CODE_MODE_CODE_KEY in record:
        return (
            "OpenClaw Code Mode `exec` runs its `code` as JavaScript (its `command` is the same program, never a"
            " shell command) whose calls reach any tool of the catalog, writes included ⇒ mutating"
        )
    if normalized != OC96.CODE_MODE_WAIT_TOOL_NAME:
        return None
    if any(key in record for key in OC96.CODE_MODE_RUN_ID_KEYS):
        return (
            "OpenClaw Code Mode `wait` resumes the suspended cell its `runId` names, whose JavaScript goes on"
            " to call tools of the catalog, writes included ⇒ mutating"
        )
    if any(key in record for key in CA.CODEX_CODE_MODE_WAIT_KEYS):
        return "Codex Code Mode `wait` waits on a running `exec` cell, or stops it (`terminate`) ⇒ mutating"
    return None


def nested_call_parents(messages: Iterable[Any]) -> frozenset[str]:
    """The calls OpenClaw's `openclaw.nested-tool.v1` records name as their parent: each ran code
    that called catalog tools, whatever its arguments read as (an `exec` whose `command` is both a
    read-only shell command and JavaScript Code Mode runs)."""
    parents = set()
    for message in messages:
        if recorded_attribute(message, "custom_type") != OC96.NESTED_TOOL_CUSTOM_TYPE:
            continue
        details = recorded_attribute(message, "details")
        if isinstance(details, dict):
            parent = details.get("parentToolCallId")
            if isinstance(parent, str) and parent:
                parents.add(parent)
    return frozenset(parents)


def recorded_attribute(obj: Any, name: str) -> Any:
    """`getattr(obj, name, None)` for a message: a model's field, else its extra field, read
    directly (pydantic's `__getattr__` raises and catches an error for every missing name)."""
    if isinstance(obj, BaseModel):
        fields = obj.__dict__
        if name in fields:
            return fields[name]
        extra = obj.__pydantic_extra__
        return extra.get(name) if extra else None
    return getattr(obj, name, None)


#: why a call the records above name mutates, whatever the classifier read in its arguments
RAN_NESTED_CALLS = (
    "OpenClaw recorded calls of catalog tools (`openclaw.nested-tool.v1`) made by this call's code: a Code Mode"
    " cell, its `command` JavaScript whatever it reads as in a shell ⇒ mutating"
)


def sends_input(args: Any) -> bool:
    """Whether a shell tool's call sends its text to the process already running (OpenHands'
    `is_input`): an answer to a prompt, not a command any grammar can read."""
    value = args.get("is_input") if isinstance(args, dict) else None
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def action_word(args: dict[str, Any], shell_named: bool) -> str | None:
    """A call's `action`; else the `command` of a tool of many commands when it is one word
    (SWE-agent's `web_browser` `screenshot_site`, goose's `cache` `list`), never a shell's."""
    action = args.get("action")
    if action is not None or shell_named:
        return normalize_action(action)
    command = args.get("command")
    if isinstance(command, str) and _ONE_WORD.fullmatch(command.strip()):
        return normalize_action(command.strip())
    return None
