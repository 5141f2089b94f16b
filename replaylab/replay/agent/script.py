"""Scripts for the `scripted` model: what the agent does in each user turn, as YAML.

Format (one session per file)::

    name: refund-happy-path        # optional; the session / file name (default: the file's stem)
    system: You are a helpdesk agent.   # optional system prompt (kept in the transcript, not a message)
    model: helpdesk-script         # optional; recorded as the assistant messages' `model`
    parent_session: parent.jsonl   # optional; this session is a sub-agent of that session
                                   #   (written to the v3 header's `parentSession`)
    turns:                         # the user turns, in order
      - user: "Hi, I'm alice@example.com. Please refund order 1001."
        steps:                     # the assistant's messages in this turn, in order
          - tool_calls:            # one assistant message with one or more (parallel) calls
              - name: find_customer
                arguments: {email: alice@example.com}
                as: cust           # optional alias for ${...} references (default: the tool name)
          - tool_calls:
              - {name: get_order, arguments: {order_id: "${cust.orders[0].id}"}}
              - {name: get_refund_policy, arguments: {}}
          - tool_calls:            # a sub-agent: `child` names its own script (relative to this file)
              - {name: sessions_spawn, arguments: {task: "Refund ORD-1001"}, child: billing.yaml, as: billing}
          - say: "Refund ${refund_order.refund_id} is on its way."   # final answer (no tool calls)
      - custom_message: {custom_type: openclaw.sessions_yield, content: "Sub-agent finished."}
        steps: [...]

A step may have both `say` and `tool_calls` (text plus calls in one message). A turn input is
`user` (text) and/or `custom_message` ({custom_type, content, display}).

Sub-agents: a call with `child: other.yaml` is not sent to the tool pack. The recorder records the
child script as its own session at that point of the run, against the same live service, into
`<parent>.sub-<child>.jsonl` (+ cassette) next to the parent; the call's result is the child's
final answer as JSON (`{"status", "session", "answer"}`) and carries
`details.replaylab.childSession = "<parent>.sub-<child>.jsonl"`, which the ledger follows to fold
the child's mutating events into the parent's. The tool name is the agent's (OpenClaw:
`sessions_spawn`, mutating by OpenClaw's rules).

References: `${NAME.path}` inside any string of `arguments` or `say`. NAME is an alias (`as`)
or a tool name: the most recent call with that alias / name *whose result is in the window*; the
result text is parsed as JSON and `path` walks it (`.key`, `[index]`; no path = the whole
result). A string that is exactly one reference keeps the JSON type (a number stays a number);
inside a longer string the value is inserted as text (JSON for objects and lists). `$${` is a
literal `${`. Because references read the results the model actually sees, a script stays valid
when the service hands out different ids on a re-recording — and, replayed on a compacted
window whose result is gone, the reference cannot resolve and becomes a `⟨lost:N⟩` marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from replaylab.diagnostics import Diagnostic, InputError

REF_RE = re.compile(r"\$\$\{|\$\{([^}]*)\}")
PATH_RE = re.compile(r"\.([^.\[\]]+)|\[(-?\d+)\]")


@dataclass
class ScriptCall:
    name: str
    arguments: dict[str, Any]
    alias: str | None = None
    line: int | None = None
    #: sub-agent script (absolute path, resolved against the parent script's folder)
    child: Path | None = None


@dataclass
class ScriptStep:
    say: str | None = None
    tool_calls: list[ScriptCall] = field(default_factory=list)
    line: int | None = None


@dataclass
class ScriptTurn:
    user: str | None = None
    custom_message: dict[str, Any] | None = None
    steps: list[ScriptStep] = field(default_factory=list)
    line: int | None = None


@dataclass
class Script:
    path: Path
    name: str
    turns: list[ScriptTurn]
    system: str | None = None
    model: str | None = None
    parent_session: str | None = None


# ---------------------------------------------------------------- loading with line numbers


def _construct(node: yaml.Node, lines: dict[int, int]) -> Any:
    """Python data of a YAML node; `lines[id(container)]` = its 1-based line."""
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        lines[id(out)] = node.start_mark.line + 1
        for key_node, value_node in node.value:
            out[_construct(key_node, lines)] = _construct(value_node, lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        seq: list[Any] = []
        lines[id(seq)] = node.start_mark.line + 1
        seq.extend(_construct(item, lines) for item in node.value)
        return seq
    return _SCALARS.construct_object(node, deep=True)


_SCALARS = yaml.SafeLoader("")  # only its constructor is used: YAML's own typing of scalars


def load_script(path: str | Path) -> Script:
    """Read and validate a script; every problem is an `InputError` naming file, line and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError([Diagnostic(code="missing-file", file=str(path), message="no such script file")]) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            [
                Diagnostic(
                    code="invalid-yaml",
                    file=str(path),
                    line=mark.line + 1 if mark else None,
                    message=f"is not valid YAML: {getattr(exc, 'problem', exc)}",
                )
            ]
        ) from None
    lines: dict[int, int] = {}
    data = _construct(node, lines) if node is not None else None
    problems: list[Diagnostic] = []

    def bad(where: Any, field_name: str, message: str) -> None:
        problems.append(
            Diagnostic(
                code="invalid-script", file=str(path), line=lines.get(id(where)), field=field_name, message=message
            )
        )

    if not isinstance(data, dict):
        raise InputError(
            [
                Diagnostic(
                    code="invalid-script", file=str(path), line=1, message="expected a mapping with a 'turns' list"
                )
            ]
        )
    turns_data = data.get("turns")
    if not isinstance(turns_data, list) or not turns_data:
        bad(data, "turns", "expected a non-empty list of turns ({user: ..., steps: [...]})")
        raise InputError(problems)
    for key in ("name", "system", "model", "parent_session"):
        if key in data and not isinstance(data[key], str):
            bad(data, key, f"expected a string, got {type(data[key]).__name__}")
    turns: list[ScriptTurn] = []
    for t, raw in enumerate(turns_data):
        where = f"turns[{t}]"
        if not isinstance(raw, dict):
            bad(turns_data, where, "expected a mapping {user: ..., steps: [...]}")
            continue
        turn = ScriptTurn(line=lines.get(id(raw)))
        user, custom = raw.get("user"), raw.get("custom_message")
        if user is None and custom is None:
            bad(raw, f"{where}.user", "each turn needs `user` (text) or `custom_message`")
        if user is not None and not isinstance(user, str):
            bad(raw, f"{where}.user", f"expected a string, got {type(user).__name__}")
        if custom is not None and (not isinstance(custom, dict) or not isinstance(custom.get("content"), str)):
            bad(raw, f"{where}.custom_message", "expected {custom_type: ..., content: <text>, display: bool}")
        turn.user = user if isinstance(user, str) else None
        turn.custom_message = custom if isinstance(custom, dict) else None
        steps = raw.get("steps", [])
        if not isinstance(steps, list):
            bad(raw, f"{where}.steps", "expected a list of steps ({tool_calls: [...]} or {say: ...})")
            steps = []
        for s, step_raw in enumerate(steps):
            step_where = f"{where}.steps[{s}]"
            if not isinstance(step_raw, dict) or not ({"say", "tool_calls"} & set(step_raw)):
                bad(
                    step_raw if isinstance(step_raw, dict) else steps,
                    step_where,
                    "expected {tool_calls: [{name, arguments}]} and/or {say: <text>}",
                )
                continue
            unknown = set(step_raw) - {"say", "tool_calls"}
            if unknown:
                bad(step_raw, step_where, f"unknown keys {sorted(unknown)}; expected say / tool_calls")
            step = ScriptStep(line=lines.get(id(step_raw)))
            if "say" in step_raw:
                if not isinstance(step_raw["say"], str):
                    bad(step_raw, f"{step_where}.say", "expected a string")
                else:
                    step.say = step_raw["say"]
            calls = step_raw.get("tool_calls", [])
            if not isinstance(calls, list):
                bad(step_raw, f"{step_where}.tool_calls", "expected a list of {name, arguments}")
                calls = []
            for c, call_raw in enumerate(calls):
                call_where = f"{step_where}.tool_calls[{c}]"
                if not isinstance(call_raw, dict) or not isinstance(call_raw.get("name"), str):
                    bad(
                        call_raw if isinstance(call_raw, dict) else calls,
                        call_where,
                        "expected {name: <tool>, arguments: {...}, as: <alias>}",
                    )
                    continue
                arguments = call_raw.get("arguments", {})
                if not isinstance(arguments, dict):
                    bad(call_raw, f"{call_where}.arguments", f"expected a mapping, got {type(arguments).__name__}")
                    arguments = {}
                alias = call_raw.get("as")
                if alias is not None and not isinstance(alias, str):
                    bad(call_raw, f"{call_where}.as", "expected a string alias")
                    alias = None
                unknown_call = set(call_raw) - {"name", "arguments", "as", "child"}
                if unknown_call:
                    bad(
                        call_raw,
                        call_where,
                        f"unknown keys {sorted(unknown_call)}; expected name / arguments / as / child",
                    )
                child = _child_path(
                    path,
                    call_raw.get("child"),
                    lambda msg, raw=call_raw, where=call_where: bad(raw, f"{where}.child", msg),
                )
                step.tool_calls.append(ScriptCall(call_raw["name"], arguments, alias, lines.get(id(call_raw)), child))
            turn.steps.append(step)
        turns.append(turn)
    if problems:
        raise InputError(problems)
    return Script(
        path=path,
        name=data.get("name") or path.stem.removesuffix(".script"),
        turns=turns,
        system=data.get("system"),
        model=data.get("model"),
        parent_session=data.get("parent_session"),
    )


def _child_path(script: Path, value: Any, bad) -> Path | None:
    """The sub-agent script a call names, resolved against the parent script's folder."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        bad("expected the path of the sub-agent's script (relative to this script)")
        return None
    child = (script.parent / value).resolve()
    if child == script.resolve():
        bad("a script cannot be its own sub-agent")
        return None
    if not child.is_file():
        bad(f"no such script file: {child}")
        return None
    return child


# ---------------------------------------------------------------- references


class Unresolved(Exception):
    """A `${...}` reference whose result is not in the window (or whose path does not exist)."""

    def __init__(self, ref: str, why: str):
        super().__init__(f"${{{ref}}}: {why}")
        self.ref = ref


def walk(value: Any, path: str, ref: str) -> Any:
    pos = 0
    for match in PATH_RE.finditer(path):
        if match.start() != pos:
            raise Unresolved(ref, f"bad path syntax at {path[pos:]!r}")
        pos = match.end()
        key, index = match.group(1), match.group(2)
        try:
            value = value[int(index)] if index is not None else value[key]
        except (KeyError, IndexError, TypeError, ValueError):
            raise Unresolved(ref, f"the result has no {match.group(0)!r}") from None
    if pos != len(path):
        raise Unresolved(ref, f"bad path syntax at {path[pos:]!r}")
    return value


def substitute(value: Any, lookup) -> Any:
    """Resolve `${...}` in every string of `value`; `lookup(ref) -> Any` raises `Unresolved`."""
    if isinstance(value, dict):
        return {k: substitute(v, lookup) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, lookup) for v in value]
    if not isinstance(value, str) or "$" not in value:
        return value
    whole = REF_RE.fullmatch(value)
    if whole and whole.group(0) != "$${":
        return lookup(whole.group(1).strip())

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        found = lookup(match.group(1).strip())
        if isinstance(found, (dict, list)):
            import orjson

            return orjson.dumps(found).decode()
        return str(found)

    return REF_RE.sub(replace, value)
