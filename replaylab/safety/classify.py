"""Tool classification: is a call mutating (write, send, pay, exec …) or safe to replay, and why?

Order of authority (docs/classification.md): evidence first, the strongest first, and
"mutating" where there is none.
1. a suite's `classification` overrides (`overrides.py`): tools forced mutating or safe;
2. what the tools declare: the class a tool pack or a `tool_classes.json` gives (τ²-bench's
   `@is_tool(ToolType.READ|WRITE)`, MCP's `readOnlyHint` / `destructiveHint` read by the
   importers), action-aware when the pack gives a `class_for(args)`; else Claude Code's own
   documentation of its built-in tools (`upstream/claude_code.py`: `TodoWrite` keeps the
   session's todo list, `BashOutput` reads a background shell's output);
3. a code-mode cell (OpenClaw's `exec {code}`, `wait {runId}`, Codex's `wait {cell_id}`, pi's `codemode`)
   runs or resumes JavaScript that may call any tool: class `exec`, its `command` never read as a shell
   command (`agent_tools.code_mode_cell`; its recorded calls judge it: `nested_calls`); then OpenClaw's
   `isMutatingToolCall` (`openclaw_rules.py`) where one of its rules names the tool;
4. for a shell tool (`exec`, `bash`, one declared `exec`, Claude Code's `Bash` / `PowerShell`):
   OpenClaw's read-only exemption, else replaylab's read-only shell grammar (`shell_grammar.py`:
   pipelines and lists of read-only commands, git's read-only subcommands, PowerShell's `Get-*`,
   never a redirection into a file or a known writer);
5. OpenClaw's `isReplaySafeToolCall` where it proves a call safe (`read`, `grep`, `web_fetch`,
   a browser snapshot …);
6. what the agents document of their own tools: OpenClaw's that change only the session
   (`progress_card`, `sessions_yield`, `structured_output`; `upstream/openclaw_2026_9_6.py`);
   Anthropic's text editor (`upstream/anthropic_tools.py`: `str_replace_editor` with `view`
   reads, its other commands write); the read-only annotations a well-known MCP server gives its
   tools, by name (`upstream/playwright_mcp.py`: `browser_snapshot` reads, `browser_click`
   writes) or under a namespace that names the server (`upstream/mcp_servers.py`:
   `mcp__filesystem__directory_tree` reads, `mcp__chrome-devtools__take_screenshot` writes); a
   tool named for running shell commands (`execute_bash`, `run_shell_command`, Codex's `shell`
   with an argument vector) through the same shell grammar, class `exec`;
7. the tool's name: its verb reads and no verb in it changes something (`verbs.py`:
   `get_order_details`, `search_products`, `identificar_paciente`, `brave_web_search`, `git_status`
   as the command it names), or changes nothing at all (`sequentialthinking`: class `think`);
8. else — no evidence at all — **mutating**. OpenClaw calls such tools not mutating; replaylab
   keeps them unsafe, because a wrong "safe" lets a side effect replay live and a wrong "unsafe"
   only makes replay stricter.

Every answer is a `Classification`: the class, the rule that gave it and the reason in words,
which the ledger keeps, every finding about a call repeats and `replaylab inspect` prints.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from replaylab.safety import agent_tools as AG
from replaylab.safety.openclaw_rules import (
    DEFAULT_RULE,
    REPLAY_SAFE_ACTION_TOOLS,
    SHELL_MUTATING,
    SHELL_READ_ONLY,
    is_replay_safe_tool_call,
    name_case,
    normalize_action,
    openclaw_decision,
)
from replaylab.safety.overrides import ClassificationOverrides
from replaylab.safety.payloads import payload_writes
from replaylab.safety.shell import ShellVerdict, js_lower_or_empty, read_shell_command, shell_verdict, word
from replaylab.safety.shell_grammar import grammar_verdict
from replaylab.safety.tool_classes import parse_tool_classes, read_tool_classes  # re-exported
from replaylab.safety.tool_search import tool_call_target
from replaylab.safety.verbs import action_verdict, bare_tool_name, name_words, tool_namespace, verb_verdict
from replaylab.transcript.model import UnreadableArguments
from replaylab.upstream import anthropic_tools as AT
from replaylab.upstream import claude_code as CC
from replaylab.upstream import coding_agents as CA
from replaylab.upstream import mcp_servers as MCP
from replaylab.upstream import openclaw_2026_9_6 as OC96

#: classes that never change the outside world. Everything else (write, exec, send, …) mutates.
SAFE_CLASSES = frozenset({"read", "compute", "think", "transfer", "interaction", "mode", "skill", "state", "subagent"})

#: rule ids replaylab adds to OpenClaw's (docs/classification.md)
DECLARED = "declared"
OVERRIDE = "suite-override"
AGENT_BUILTIN = "agent-builtin"
MCP_SERVER = "mcp-server"
SHELL_GRAMMAR = "shell-grammar"
REPLAY_SAFE = "openclaw-replay-safe"
TOOL_NAME_VERB = "tool-name-verb"
#: a read verb in the name, and arguments that send a change (`payloads`): OpenClaw reads only the name
TOOL_PAYLOAD = "tool-payload"
TOOL_ACTION_VERB = "tool-action-verb"
UNKNOWN = "unknown-tool"
UNPROVEN = "unproven-action"
TOOL_NAME_SHELL = "tool-name-shell"
#: a recorded call whose arguments are no object (`model.UnreadableArguments`): mutating
UNREADABLE_ARGUMENTS = "unreadable-arguments"
#: the rules that call a shell command read-only (the ledger lists those calls as exempted)
SHELL_EXEMPTIONS = frozenset({SHELL_READ_ONLY, SHELL_GRAMMAR})
#: the words a tool named for running shell commands is made of (`execute_bash`, `run_shell_command`,
#: `exec_command`, `run_terminal_cmd`, `container.exec`), and the words one of them must be
_SHELL_NAME_WORDS = frozenset(
    {"run", "execute", "exec", "shell", "bash", "sh", "zsh", "command", "cmd", "terminal", "powershell", "pwsh"}
    | {"local", "container"}
)
_SHELL_WORDS = frozenset({"shell", "bash", "sh", "zsh", "command", "cmd", "terminal", "powershell", "pwsh", "exec"})
#: an argument vector that hands a script to a shell: `bash -lc <script>`
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_SHELL_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-cl"})

#: shell tools that OpenClaw's rules call mutating are reported as class `exec` (the τ²-bench /
#: tool_classes.json word for "runs commands"), not `write`, so pi's bash and Claude Code's Bash
#: land in the same column of `replaylab inspect`.
_EXEC_TOOL_NAMES = frozenset({"exec", "bash", "process"})
_NO_OVERRIDES = ClassificationOverrides()


@dataclass(frozen=True)
class Classification:
    """The class of one call, the rule that gave it and why."""

    tool_class: str
    rule: str
    reason: str

    @property
    def mutating(self) -> bool:
        return is_mutating_class(self.tool_class)


#: mutating classes replaylab names itself (any other unknown word mutates too, and says so)
MUTATING_CLASSES = frozenset({"write", "exec", "unknown"})
#: other spellings of the classes that tool_classes files and packs use (keys lower-cased, runs of
#: `-` and spaces read as `_`): a `Read-Only` tool is a `read` one, not an unknown class that mutates
CLASS_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(("read_only", "readonly", "safe", "query", "lookup", "get", "search", "fetch"), "read"),
    **dict.fromkeys(("retrieve", "retrieval", "observe", "observation", "view"), "read"),
    **dict.fromkeys(("thinking", "reasoning"), "think"),
    **dict.fromkeys(("execute", "execution", "shell", "command", "run"), "exec"),
    **dict.fromkeys(("mutating", "mutation", "side_effect", "destructive", "modify", "update", "mutate"), "write"),
    **dict.fromkeys(("delegate", "delegation", "sub_agent", "agent"), "subagent"),
}


def canonical_class(tool_class: str) -> str:
    """A declared class in replaylab's words: lower-cased, `-` and spaces as `_`, synonyms mapped
    (`Read-Only` → `read`, `side-effect` → `write`); an unknown word is returned as it was read."""
    key = "_".join(tool_class.strip().lower().replace("-", " ").split())
    return CLASS_SYNONYMS.get(key, key)


def is_mutating_class(tool_class: str) -> bool:
    if tool_class in SAFE_CLASSES or tool_class in MUTATING_CLASSES:  # replaylab's own words: every call's
        return tool_class in MUTATING_CLASSES
    return canonical_class(tool_class) not in SAFE_CLASSES


def replaylab_rules(name: str, args: Any, extra_read_only: frozenset[tuple[str, ...]] = frozenset()) -> Classification:
    """Steps 3 to 8 above, for a tool nothing declares: OpenClaw's answer where one of its rules
    names the tool (a shell command's through the read-only grammar when OpenClaw refuses it),
    `isReplaySafeToolCall`, the name's verb, else mutating."""
    normalized = js_lower_or_empty(name)
    cell = AG.code_mode_cell(normalized, args)
    if cell is not None:
        return Classification("exec", AGENT_BUILTIN, cell)
    decision = openclaw_decision(name, args, extra_read_only)
    observed = AG.computer_observation(normalized, args)
    if observed is not None and (decision.mutating or decision.rule == DEFAULT_RULE):
        why = f"computer use `{normalized}` with `{observed}` only observes the screen"
        return Classification(
            "read", AGENT_BUILTIN, why if decision.rule == DEFAULT_RULE else f"{why} ({decision.reason})"
        )
    if decision.rule == SHELL_MUTATING:
        return shell_classification(args, extra_read_only, "exec")
    if decision.rule != DEFAULT_RULE:
        if not decision.mutating:
            return Classification("read", decision.rule, decision.reason)
        return Classification("exec" if normalized in _EXEC_TOOL_NAMES else "write", decision.rule, decision.reason)
    if is_replay_safe_tool_call(name, args):
        if normalized in OC96.REPLAY_SAFE_TOOL_NAMES:
            return Classification("read", REPLAY_SAFE, f"OpenClaw: `{word(normalized)}` is a read-only tool")
        action = normalize_action(args.get("action") if isinstance(args, dict) else None)
        return Classification("read", REPLAY_SAFE, f"OpenClaw: `{normalized}` action `{action}` is replay-safe")
    if normalized in REPLAY_SAFE_ACTION_TOOLS:
        return Classification(
            "unknown",
            UNPROVEN,
            f"OpenClaw does not prove this `{normalized}` action replay-safe ⇒ mutating (OpenClaw: not mutating)",
        )
    session_own = OC96.SESSION_OWN_TOOLS.get(normalized)
    if session_own is not None:
        return Classification(session_own[0], AGENT_BUILTIN, f"OpenClaw `{normalized}` {session_own[1]}")
    documented = OC96.DOCUMENTED_TOOLS.get(normalized)
    if documented is not None:
        return Classification(documented[0], AGENT_BUILTIN, f"OpenClaw `{normalized}` {documented[1]}")
    bare = bare_tool_name(name)
    if name in AT.TEXT_EDITOR_TOOLS or bare in AT.TEXT_EDITOR_TOOLS or bare in CA.OTHER_TEXT_EDITOR_TOOLS:
        return _text_editor_classification(name, args)
    other_agents = _other_agents_builtin(name, bare, args, extra_read_only)
    if other_agents is not None:
        return other_agents
    server = MCP.server_of(tool_namespace(name), bare)
    if server is not None:
        read_only = bare in server.read_only
        why = f"{server.package} {server.version} annotates `{bare}` readOnlyHint: {str(read_only).lower()}"
        namespace = tool_namespace(name)
        if namespace and server.key not in namespace.lower().replace("_", "-"):
            # a server of another name that serves the same tool names (a fork, a user's own key)
            served_by = namespace.lower().removeprefix("mcp__").strip("_")
            why += f", its tool of that name (the call's server `{served_by}` is read as serving the same tools)"
        return Classification("read" if read_only else "write", MCP_SERVER, why)
    command = named_shell_command(name, args)
    if command is not None and AG.sends_input(args):
        return _input_to_process(command, "exec", TOOL_NAME_SHELL)
    if command is not None:
        why = "its name says it runs a shell command; "
        return shell_classification({"command": command}, extra_read_only, "exec", why, TOOL_NAME_SHELL)
    verb = verb_verdict(name)
    if verb.read_only:
        against = payload_writes(args, name)
        if against is not None:
            return Classification("write", TOOL_PAYLOAD, f"{verb.reason}, but {against} ⇒ mutating")
        return Classification(verb.tool_class, TOOL_NAME_VERB, verb.reason)
    action = AG.action_word(args, names_a_shell(name)) if isinstance(args, dict) and not verb.changes else None
    if action is not None:
        acted = action_verdict(action)
        if acted.read_only:
            return Classification(acted.tool_class, TOOL_ACTION_VERB, acted.reason)
        verb = acted if acted.changes else verb
    return Classification(
        "unknown", UNKNOWN, f"no declared class, no OpenClaw rule, no read verb ({verb.reason}) ⇒ mutating"
    )


def _other_agents_builtin(
    name: str, bare: str, args: Any, extra_read_only: frozenset[tuple[str, ...]]
) -> Classification | None:
    """Other coding agents' built-ins (`agent_tools`): their session tools by name, the command
    Cline's `attempt_completion` runs, the MCP tool Cline's `use_mcp_tool` calls."""
    known = AG.builtin_class(name, bare, args)
    if known is not None:
        return Classification(known[0], AGENT_BUILTIN, known[1])
    command = AG.completion_command(name, args)
    if command is not None:
        why = "Cline `attempt_completion` runs its `command` in the user's terminal; "
        return shell_classification({"command": command}, extra_read_only, "exec", why, TOOL_NAME_SHELL)
    wrapped = AG.wrapped_mcp_call(name, args)
    if wrapped is None:
        return None
    called = replaylab_rules(*wrapped, extra_read_only)
    return Classification(called.tool_class, called.rule, f"`{name}` calls `{word(wrapped[0])}`: {called.reason}")


def _input_to_process(text: str, tool_class: str, rule: str, prefix: str = "") -> Classification:
    why = f"its `is_input` sends `{word(text)}` to the running process's standard input, not to a shell ⇒ mutating"
    return Classification(tool_class, rule, prefix + why)


def names_a_shell(name: str) -> bool:
    """Whether a tool's name says it runs shell commands (`shell`, `pwsh`, `execute_bash`,
    `run_shell_command`): made of shell words, one of them naming a shell or a command."""
    words = set(name_words(name))
    return bool(words) and words <= _SHELL_NAME_WORDS and bool(words & _SHELL_WORDS)


def named_shell_command(name: str, args: Any) -> str | None:
    """The command of a tool named for running one (`shell`, `execute_bash`, `run_shell_command`,
    `exec_command`): its `command` / `cmd` string, or an argument vector (Codex's `shell`:
    `["bash", "-lc", "npm test"]`) as the script a shell's `-c` runs, else its words quoted as a
    shell would need them. None for any other tool or a call without a readable command."""
    if not names_a_shell(name):
        return None
    text = read_shell_command(args)
    if text is not None or not isinstance(args, dict):
        return text
    action = args.get("action")
    if isinstance(action, dict) and args.get("command") is None and not isinstance(action.get("action"), dict):
        return named_shell_command(name, action)  # OpenAI's `local_shell`: {type: exec, command: argv}; one level
    commands = args.get("commands")  # OpenAI's `shell`: command lines run one after another
    if isinstance(commands, list) and commands and all(isinstance(c, str) and c.strip() for c in commands):
        return "\n".join(c.strip() for c in commands)
    argv = args.get("command") if args.get("command") is not None else args.get("cmd")
    if not isinstance(argv, list) or not argv or not all(isinstance(part, str) for part in argv):
        return None
    if len(argv) == 3 and PurePosixPath(argv[0]).name in _SHELLS and argv[1] in _SHELL_SCRIPT_FLAGS:
        return argv[2].strip() or None
    return shlex.join(argv)


def _text_editor_classification(name: str, args: Any) -> Classification:
    """Anthropic's text editor tool (and goose's, with its commands): `view` reads, every other
    command (or none) changes a file."""
    command = args.get("command") if isinstance(args, dict) else None
    spelled = f"`{word(command)}`" if isinstance(command, str) else "no command"
    whose = "goose's" if bare_tool_name(name) in CA.OTHER_TEXT_EDITOR_TOOLS else "Anthropic's"
    if command in AT.TEXT_EDITOR_READ_COMMANDS:
        return Classification("read", AGENT_BUILTIN, f"{whose} text editor `{name}` with {spelled} only reads")
    return Classification("write", AGENT_BUILTIN, f"{whose} text editor `{name}` with {spelled} changes a file")


def shell_classification(
    args: Any,
    extra_read_only: frozenset[tuple[str, ...]],
    tool_class: str,
    prefix: str = "",
    mutating_rule: str = SHELL_MUTATING,
) -> Classification:
    """A shell call: OpenClaw's read-only exemption (with the suite's extra commands), else
    replaylab's read-only grammar; mutating with the grammar's reason when neither proves it."""
    command = read_shell_command(args)
    exempt = shell_verdict(command, extra_read_only)
    if exempt.read_only:
        return Classification("read", SHELL_READ_ONLY, prefix + exempt.reason)
    grammar: ShellVerdict = grammar_verdict(command, extra_read_only)
    if grammar.read_only:
        return Classification("read", SHELL_GRAMMAR, prefix + grammar.reason)
    return Classification(tool_class, mutating_rule, prefix + grammar.reason)


def declared_reason(
    name: str, args: Any, declared: str, extra_read_only: frozenset[tuple[str, ...]] = frozenset()
) -> str:
    """Why a declared class stands; a declaration that calls safe what one of OpenClaw's rules
    calls mutating (`send_email` declared read) says that it overrode that rule."""
    if is_mutating_class(declared):
        if declared not in MUTATING_CLASSES:
            return f"declared {declared}, a class replaylab does not know: mutating"
        return f"declared {declared}"
    rule = replaylab_rules(name, args, extra_read_only)
    if not rule.mutating or rule.rule in (UNKNOWN, UNPROVEN):
        return f"declared {declared}"
    return f"declared {declared}, overriding a mutating rule ({rule.reason}): its calls replay as reads"


#: answers kept per classifier, and the longest arguments (as JSON) kept: a few distinct calls
#: recur in a session, a big write's content would only fill memory
MAX_EXPLAINED = 50_000
MAX_KEY_BYTES = 2_048


def _call_key(name: str, args: Mapping[str, Any] | None) -> tuple[str, bytes] | None:
    """(name, the arguments' JSON in their own key order), or None when they have no short JSON
    form: the same name and arguments get the same answer (every rule reads only those)."""
    import orjson

    try:
        text = orjson.dumps(args) if isinstance(args, dict) or args is None else None
    except TypeError:
        return None
    return (name, text) if text is not None and len(text) <= MAX_KEY_BYTES else None


@dataclass
class ToolClassifier:
    """Decides the class of each call. `declared` maps tool name → class; `deciders` map tool
    name → function of the arguments (for tools whose class depends on an action argument);
    `overrides`: a suite's `classification` key."""

    declared: dict[str, str] = field(default_factory=dict)
    deciders: dict[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)
    overrides: ClassificationOverrides = field(default_factory=ClassificationOverrides)
    #: answers by (name, arguments as JSON): an item classifies each recorded call several times
    #: (ledgers, recorded trace, both replays), and the rules cost tens of microseconds a call
    _explained: dict[tuple[str, bytes], Classification] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _tables: Callable[[tuple[Any, ...]], dict[Any, Classification]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    #: the declared classes spelled otherwise than replaylab's word for them (tool → as written)
    _spelled: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        canonical = {tool: canonical_class(spelled) for tool, spelled in self.declared.items()}
        self._spelled = {tool: spelled for tool, spelled in self.declared.items() if canonical[tool] != spelled}
        self.declared = canonical

    @classmethod
    def from_json(cls, path: str | Path, *, field: str | None = None) -> ToolClassifier:
        """A `tool_classes.json` ({tool: class}). Raises `InputError` naming the file, the line
        and the tool for anything else (`field`: the option or key that named the file)."""
        return cls(declared=read_tool_classes(path, field=field))

    @classmethod
    def from_text(cls, text: str, *, source: str, field: str | None = None) -> ToolClassifier:
        """The same from JSON text given inline (`--tool-classes '{"get_order": "read"}'`)."""
        return cls(declared=parse_tool_classes(text, source=source, field=field))

    @classmethod
    def from_tool_pack(cls, pack: Any) -> ToolClassifier:
        declared = {name: spec.tool_class for name, spec in pack.tools.items()}
        deciders = {name: spec.class_for for name, spec in pack.tools.items() if spec.class_for}
        return cls(declared=declared, deciders=deciders)

    def merged(self, other: ToolClassifier) -> ToolClassifier:
        overrides = other.overrides if other.overrides != _NO_OVERRIDES else self.overrides
        both = ToolClassifier(
            {**self.declared, **other.declared}, {**self.deciders, **other.deciders}, overrides=overrides
        )
        both._spelled = {**{t: s for t, s in self._spelled.items() if t not in other.declared}, **other._spelled}
        return both

    def with_overrides(self, overrides: ClassificationOverrides) -> ToolClassifier:
        again = ToolClassifier(dict(self.declared), dict(self.deciders), overrides=overrides)
        again._spelled = dict(self._spelled)
        return again

    def answer_key(self) -> tuple[Any, ...]:
        """Everything its answers are read from besides the call (the deciders by identity)."""
        rules = self.overrides
        return (
            type(self),
            *map(tuple, (self.declared.items(), self.deciders.items(), self._spelled.items())),
            type(rules),
            tuple(rules.read_only_commands),
            tuple(rules.mutating),
            tuple(rules.safe),
        )

    def answering_from(self, tables: Callable[[tuple[Any, ...]], dict[Any, Classification]]) -> ToolClassifier:
        """From its first call on, keep answers in the table `tables` gives for its `answer_key` then
        (after any change made to it before): classifiers of the same declarations share one."""
        self._tables = tables
        return self

    def explain(self, name: str, args: Mapping[str, Any] | None = None) -> Classification:
        """The class of one call with its rule and reason."""
        if self._tables is not None:
            shared, self._tables = self._tables(self.answer_key()), None
            self._explained = shared
        if type(args) is UnreadableArguments:
            return self._unreadable(name, args)
        key = _call_key(name, args)
        if key is None:
            return self._explain(name, args)
        hit = self._explained.get(key)
        if hit is None:
            hit = self._explain(name, args)
            if len(self._explained) < MAX_EXPLAINED:
                self._explained[key] = hit
        return hit

    def _unreadable(self, name: str, args: UnreadableArguments) -> Classification:
        """A call whose arguments cannot be read: what it did depends on them, so it mutates
        unless the suite forces its tool safe by name (no rule may call it a read for want of them)."""
        seen = self._explain(name, {})
        why = f"its arguments cannot be read ({args.why})"
        if seen.mutating or seen.rule == OVERRIDE:
            return Classification(seen.tool_class, seen.rule, f"{seen.reason}; {why}")
        return Classification(
            "unknown",
            UNREADABLE_ARGUMENTS,
            f"{why}: judged mutating, since with none it reads as {seen.tool_class} ({seen.reason})",
        )

    def _explain(self, name: str, args: Mapping[str, Any] | None) -> Classification:
        forced = self.overrides.forced(name)
        if forced is not None:
            return Classification(forced, OVERRIDE, f"forced {'safe' if forced == 'read' else 'mutating'} by the suite")
        extra = self.overrides.read_only_command_words
        if name in self.deciders:
            declared = canonical_class(self.deciders[name](dict(args or {})))
        elif name in self.declared:
            declared = self.declared[name]
        else:
            builtin = CC.BUILTIN_TOOLS.get(name)
            if name == OC96.TOOL_CALL_TOOL_NAME:
                return self._tool_call(name, args)
            if builtin is None:
                return replaylab_rules(name, args, extra)
            if name in CC.SHELL_TOOLS:
                why = f"Claude Code `{name}` {builtin.why}; "
                return shell_classification(args, extra, builtin.tool_class, why, AGENT_BUILTIN)
            sent = CC.attached_paths(name, args)
            if sent:
                why = f"Claude Code `{name}` uploads its attachments or copies them into the project folder"
                return Classification("write", AGENT_BUILTIN, f"{why}: {', '.join(f'`{p}`' for p in sent)}")
            return Classification(builtin.tool_class, AGENT_BUILTIN, f"Claude Code `{name}` {builtin.why}")
        if declared == "exec":
            # a shell declared exec (`Bash`, `execute_bash`, Codex's `shell`): its command decides
            normalized = js_lower_or_empty(name)
            cell = AG.code_mode_cell(normalized, args)
            if cell is not None:
                return Classification("exec", DECLARED, f"declared exec; {cell}")
            command = named_shell_command(name, args)
            if command is not None or name_case(normalized) == "shell" or names_a_shell(name):
                if AG.sends_input(args):
                    return _input_to_process(command or "", "exec", DECLARED, "declared exec; ")
                shell_args = args if command is None else {"command": command}
                return shell_classification(shell_args, extra, "exec", "declared exec; ", DECLARED)
        reason = declared_reason(name, args, declared, extra)
        spelled = self._spelled.get(name)
        return Classification(declared, DECLARED, reason if spelled is None else f"{reason} (spelled `{spelled}`)")

    def _tool_call(self, name: str, args: Any) -> Classification:
        """OpenClaw's Tool Search `tool_call`: the class of the catalog tool it calls with the
        arguments it passes (`tool_search.tool_call_target`), mutating when the call alone cannot
        say which. A read keeps its rule (a shell exemption stays listed); a change is `agent-builtin`:
        OpenClaw's own rules answer `tool_call` "not mutating" whatever it calls."""
        target = tool_call_target(args)
        if isinstance(target, str):
            why = f"OpenClaw `{name}` calls a catalog tool the call alone does not name for certain: {target}"
            why += " ⇒ mutating"
            return Classification("unknown", AGENT_BUILTIN, why)
        called = self.explain(*target)
        why = f"OpenClaw `{name}` calls `{word(target[0])}`: {called.reason}"
        return Classification(called.tool_class, called.rule if not called.mutating else AGENT_BUILTIN, why)

    def classify(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        return self.explain(name, args).tool_class

    def is_mutating(self, name: str, args: Mapping[str, Any] | None = None) -> bool:
        return is_mutating_class(self.classify(name, args))

    def source(self, name: str) -> str:
        """Where the class of `name` comes from: suite, declared, agent-builtin, mcp-server,
        openclaw-rules, tool-name-shell, tool-name-verb or default-unsafe."""
        if self.overrides.forced(name) is not None:
            return "suite"
        if name in self.declared or name in self.deciders:
            return "declared"
        if (
            name in CC.BUILTIN_TOOLS
            or name in AT.TEXT_EDITOR_TOOLS
            or js_lower_or_empty(name) in OC96.SESSION_OWN_TOOLS
            or js_lower_or_empty(name) in OC96.DOCUMENTED_TOOLS
            or name == OC96.TOOL_CALL_TOOL_NAME
        ):
            return AGENT_BUILTIN
        if MCP.server_of(tool_namespace(name), bare_tool_name(name)) is not None:
            return MCP_SERVER
        normalized = js_lower_or_empty(name)
        known = (
            name_case(normalized) != "default"
            or normalized in OC96.REPLAY_SAFE_TOOL_NAMES
            or normalized in REPLAY_SAFE_ACTION_TOOLS
        )
        if known:
            return "openclaw-rules"
        if names_a_shell(name):
            return TOOL_NAME_SHELL
        return TOOL_NAME_VERB if verb_verdict(name).read_only else "default-unsafe"
