"""OpenClaw's `isMutatingToolCall` and `isReplaySafeToolCall`, rule for rule, with reasons.

A mirror of `src/agents/tool-mutation.ts` of the OpenClaw version in
`constants.OPENCLAW_RULES_VERSION` (the oracle test, `tests/test_openclaw_oracle.py`, runs the
published function under node and requires the same answer on every pair it tries). JavaScript's
coercions are kept: a name or action that is not a string counts as absent, strings are trimmed
with ECMAScript whitespace, an action's runs of whitespace and `-` become `_`, and an array of
arguments is an object without fields.

`openclaw_decision` returns OpenClaw's boolean with the rule that gave it; which of those answers
replaylab keeps is `classify.py`'s business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from replaylab import caches
from replaylab.safety.shell import js_lower_or_empty, js_trim, read_shell_command, shell_verdict
from replaylab.upstream import openclaw_2026_9_6 as OC96

#: rule ids (docs/classification.md names them): which part of OpenClaw's function answered
NAME_RULE = "openclaw-name"  # the name alone: write, edit, apply_patch, … / message_* / *send*
ACTION_RULE = "openclaw-action"  # the name's rule reads the action (or model, dialogAction)
SHELL_READ_ONLY = "shell-read-only"  # exec / bash with a plain read-only command
SHELL_MUTATING = "shell-mutating"  # exec / bash with anything else
DEFAULT_RULE = "openclaw-default"  # no case names the tool: OpenClaw answers "not mutating"

_ACTION_SEPARATORS = re.compile(f"[{re.escape(OC96.JS_WHITESPACE)}-]+")
_ACTION_TOOLS = frozenset(
    {"process", "message", "sessions", "computer", "mobile_ui", "subagents", "session_status", "gateway"}
    | {"portal", "theme", "nodes"}
)
#: names `isReplaySafeToolCall` has a case for beyond `isMutatingToolCall`'s (their default is
#: "not mutating", but only some actions are proven safe)
REPLAY_SAFE_ACTION_TOOLS = frozenset({"browser", "skill_workshop", "transcripts"})


@dataclass(frozen=True)
class Decision:
    """OpenClaw's answer for one call, the rule that gave it and why, in words."""

    mutating: bool
    rule: str
    reason: str
    #: a suite's extra read-only command made a shell call read-only (OpenClaw would not)
    by_override: bool = False


def normalize_action(value: Any) -> str | None:
    """`normalizeActionName`: trimmed, lower-cased, whitespace and `-` runs as `_`; None if absent."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return _ACTION_SEPARATORS.sub("_", trimmed.lower()) if trimmed else None


def _record(args: Any) -> dict[str, Any]:
    """`asOptionalObjectRecord`: the fields of an object; an array or a scalar has none."""
    return args if isinstance(args, dict) else {}


@caches.lru("safety.name_rule", maxsize=4096)
def name_case(name: str) -> str:
    """Which case of `isMutatingToolCall` a normalized name takes: the name itself for the cases
    that read arguments, "always" / "shell" / "actions" / "name" / "default"."""
    if name in OC96.OPENCLAW_ALWAYS_MUTATING_TOOLS:
        return "always"
    if name in OC96.OPENCLAW_SHELL_TOOLS:
        return "shell"
    if name in _ACTION_TOOLS:
        return name
    if name in OC96.AUTOMATIONS_TOOL_NAMES or name == "canvas" or name.endswith("_actions"):
        return "actions"
    if name.startswith("message_") or "send" in name:
        return "name"
    return "default"


def openclaw_decision(name: Any, args: Any, extra_read_only: frozenset[tuple[str, ...]] = frozenset()) -> Decision:
    """`isMutatingToolCall(name, args)` with its rule. `extra_read_only`: a suite's extra
    read-only shell commands (see `shell.shell_verdict`); empty, this is OpenClaw's answer."""
    normalized = js_lower_or_empty(name)
    case = name_case(normalized)
    if case == "always":
        return Decision(True, NAME_RULE, f"OpenClaw: `{normalized}` always mutates")
    if case == "shell":
        verdict = shell_verdict(read_shell_command(args), extra_read_only)
        rule = SHELL_READ_ONLY if verdict.read_only else SHELL_MUTATING
        return Decision(not verdict.read_only, rule, verdict.reason, verdict.by_override)
    if case == "name":
        why = "a `message_*` tool" if normalized.startswith("message_") else "a tool whose name holds `send`"
        return Decision(True, NAME_RULE, f"OpenClaw: {why} mutates")
    if case == "default":
        return Decision(False, DEFAULT_RULE, "OpenClaw has no rule for this tool (its default: not mutating)")
    record = _record(args)
    action = normalize_action(record.get("action"))
    mutating = _by_action(case, action, record)
    return Decision(mutating, ACTION_RULE, _action_reason(normalized, case, action, record, mutating))


def _by_action(case: str, action: str | None, record: dict[str, Any]) -> bool:
    if case == "process":
        return action is not None and action in OC96.PROCESS_MUTATING_ACTIONS
    if case == "message":
        return action is None or action not in OC96.MESSAGE_READ_ONLY_ACTIONS
    if case == "sessions":
        return action != "group_list"
    if case == "computer":
        return not is_computer_observation(action, record.get("dialogAction"))
    if case == "mobile_ui":
        return action is None or action not in OC96.MOBILE_UI_REPLAY_SAFE_ACTIONS
    if case == "subagents":
        return action in ("cancel", "kill", "steer")
    if case == "session_status":
        model = record.get("model")
        return isinstance(model, str) and len(js_trim(model)) > 0
    if case == "gateway":
        return action is None or action not in OC96.GATEWAY_REPLAY_SAFE_ACTIONS
    if case == "portal":
        return action != "list"
    if case == "theme":
        return action not in ("list", "get")
    if case == "nodes":
        return action is None or action not in OC96.NODES_REPLAY_SAFE_ACTIONS
    return action is None or action not in OC96.READ_ONLY_ACTIONS  # automations, cron, canvas, *_actions


def _action_reason(name: str, case: str, action: str | None, record: dict[str, Any], mutating: bool) -> str:
    verb = "mutates" if mutating else "does not mutate"
    if case == "session_status":
        return f"OpenClaw: `session_status` {'with' if mutating else 'without'} a `model` {verb}"
    if case == "computer" and action == "browser_dialog":
        return f"OpenClaw: `computer` browser_dialog {'without' if mutating else 'with'} dialogAction inspect {verb}"
    what = f"action `{action}`" if action is not None else "no action"
    shown = name if len(name) <= 40 else name[:39] + "…"
    return f"OpenClaw: `{shown}` with {what} {verb}"


def is_computer_observation(action: str | None, dialog_action: Any) -> bool:
    """`isComputerObservationAction` (src/agents/tools/computer-tool-shared.ts)."""
    return action is not None and (
        action in OC96.COMPUTER_OBSERVATION_ACTIONS or (action == "browser_dialog" and dialog_action == "inspect")
    )


def is_mutating_tool_call(name: Any, args: Any) -> bool:
    """OpenClaw's `isMutatingToolCall(name, args)`."""
    return openclaw_decision(name, args).mutating


def is_replay_safe_tool_call(name: Any, args: Any) -> bool:
    """OpenClaw's `isReplaySafeToolCall(name, args)`: true only where the tool's contract proves it."""
    normalized = js_lower_or_empty(name)
    record = _record(args)
    action = normalize_action(record.get("action"))
    if normalized in OC96.REPLAY_SAFE_TOOL_NAMES:
        return True
    if normalized in OC96.OPENCLAW_SHELL_TOOLS:
        return False
    if normalized == "process":
        return action is not None and action in OC96.PROCESS_REPLAY_SAFE_ACTIONS
    if normalized == "message":
        return action is not None and action in OC96.MESSAGE_READ_ONLY_ACTIONS
    if normalized == "subagents":
        return action is None or action == "list"
    if normalized == "sessions":
        return action == "group_list"
    if normalized == "session_status":
        return not is_mutating_tool_call(normalized, args)
    if normalized == "browser":
        return action is not None and action in OC96.BROWSER_READ_ONLY_ACTIONS
    if normalized == "computer":
        return is_computer_observation(action, record.get("dialogAction"))
    if normalized == "mobile_ui":
        return action is not None and action in OC96.MOBILE_UI_REPLAY_SAFE_ACTIONS
    if normalized == "skill_workshop":
        return action in ("list", "inspect", "read")
    if normalized == "transcripts":
        return action == "status"
    if normalized == "gateway":
        return action is not None and action in OC96.GATEWAY_REPLAY_SAFE_ACTIONS
    if normalized == "portal":
        return action == "list"
    if normalized == "theme":
        return action in ("list", "get")
    if normalized == "nodes":
        return action is not None and action in OC96.NODES_REPLAY_SAFE_ACTIONS
    if normalized in OC96.AUTOMATIONS_TOOL_NAMES or normalized == "canvas":
        return action is not None and action in OC96.READ_ONLY_ACTIONS
    return False
