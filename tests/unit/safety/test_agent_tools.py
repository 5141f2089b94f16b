"""Other coding agents' built-in tools, read from each agent's own source (`upstream.coding_agents`):
their session tools, the editors and memory tool by command, computer use that only observes, the
shell tools' other argument shapes, text sent to a running process, a one-word command that is the
action, and the MCP tool a wrapper calls. Every write among them stays mutating."""

from __future__ import annotations

from typing import Any

import pytest

from replaylab.safety.classify import ToolClassifier

READS = [
    ("memory", {"command": "view", "path": "/memories"}, "agent-builtin", "memory tool with `view` only reads"),
    ("developer__text_editor", {"command": "view", "path": "src/a.rs"}, "agent-builtin", "goose's text editor"),
    ("mcp__files__str_replace_editor", {"command": "view", "path": "a.py"}, "agent-builtin", "with `view` only reads"),
    ("computer", {"action": "cursor_position"}, "agent-builtin", "only observes the screen"),
    ("computer", {"action": {"type": "screenshot"}}, "agent-builtin", "only observes the screen"),
    ("computer_use_preview", {"action": {"type": "screenshot"}}, "agent-builtin", "only observes the screen"),
    ("local_shell", {"action": {"type": "exec", "command": ["git", "status"]}}, "shell-grammar", "`git status`"),
    ("shell", {"commands": ["ls -la", "cat README.md"]}, "shell-grammar", "`ls`, `cat`"),
    ("web_browser", {"command": "get_console_output"}, "tool-action-verb", "`get_console_output`"),
    ("computercontroller__cache", {"command": "list"}, "tool-action-verb", "`list`"),
    (
        "use_mcp_tool",
        {"server_name": "github", "tool_name": "get_file_contents", "arguments": '{"path": "a"}'},
        "tool-name-verb",
        "`use_mcp_tool` calls `mcp__github__get_file_contents`",
    ),
    ("access_mcp_resource", {"server_name": "weather", "uri": "weather://sf"}, "agent-builtin", "resources/read"),
    ("attempt_completion", {"result": "done"}, "agent-builtin", "presents the result"),
    ("attempt_completion", {"result": "done", "command": "cat README.md"}, "shell-read-only", "`cat`"),
    ("write_stdin", {"session_id": 3, "chars": ""}, "agent-builtin", "only polls"),
    ("update_plan", {"plan": [{"step": "a", "status": "pending"}]}, "agent-builtin", "Codex `update_plan`"),
    ("write_todos", {"todos": []}, "agent-builtin", "gemini-cli"),
    ("switch_mode", {"mode_slug": "code"}, "agent-builtin", "Roo-Code"),
    ("grep_files", {"pattern": "TODO"}, "agent-builtin", "ripgrep"),
    (
        "todowrite",
        {"todos": [{"content": "a", "status": "pending", "priority": "high", "id": "1"}]},
        "agent-builtin",
        "opencode",
    ),
    ("todoread", {}, "agent-builtin", "`Todo.get`"),
    ("webfetch", {"url": "https://example.com", "format": "markdown"}, "agent-builtin", "GETs its `url`"),
    ("websearch", {"query": "replaylab"}, "agent-builtin", "Exa"),
]
WRITES = [
    ("memory", {"command": "delete", "path": "/memories/a"}, "changes the memory directory"),
    ("memory", {"command": "rename", "old_path": "a", "new_path": "b"}, "changes the memory directory"),
    ("developer__text_editor", {"command": "write", "path": "a", "file_text": "x"}, "changes a file"),
    ("computer", {"action": "left_click", "coordinate": [1, 2]}, "mutates"),
    ("computer", {"action": {"type": "click", "x": 1, "y": 2}}, "mutates"),
    ("local_shell", {"action": {"type": "exec", "command": ["rm", "-rf", "build"]}}, "`rm` removes files"),
    ("shell", {"commands": ["ls", "rm notes.txt"]}, "`rm` removes files"),
    ("web_browser", {"command": "click_mouse"}, "`click`"),
    ("deploy", {"command": "list"}, "`deploy`"),  # the name's own verb changes something
    ("use_mcp_tool", {"server_name": "github", "tool_name": "create_issue", "arguments": {"title": "x"}}, "calls"),
    ("use_mcp_tool", {"server_name": "db", "tool_name": "query", "arguments": "{not json"}, "`use`"),
    (
        "use_mcp_tool",
        {"server_name": "db", "tool_name": "read_query", "arguments": {"query": "DROP TABLE t"}},
        "`DROP`",
    ),
    ("attempt_completion", {"result": "done", "command": "open index.html"}, "`open`"),
    ("write_stdin", {"session_id": 3, "chars": "y\n"}, "`write`"),
    ("spawn_agent", {"message": "fix the bug"}, "`spawn`"),  # its calls are in a rollout of their own
    # OpenHands' `is_input`: the text answers the running process, whatever a shell would make of it
    ("execute_bash", {"command": "true", "is_input": "true"}, "sends `true` to the running process"),
    ("execute_bash", {"command": "ls", "is_input": True}, "standard input"),
]


@pytest.mark.parametrize(("name", "args", "rule", "why"), READS)
def test_another_agents_call_that_only_reads_is_read_by_its_own_definition(
    name: str, args: dict[str, Any], rule: str, why: str
) -> None:
    explained = ToolClassifier().explain(name, args)
    assert not explained.mutating, explained
    assert explained.rule == rule
    assert why in explained.reason


@pytest.mark.parametrize(("name", "args", "why"), WRITES)
def test_another_agents_call_that_changes_something_stays_mutating(name: str, args: dict[str, Any], why: str) -> None:
    explained = ToolClassifier().explain(name, args)
    assert explained.mutating, explained
    assert why in explained.reason


def test_an_action_nested_deeper_than_one_level_is_no_shell_command() -> None:
    nested: dict = {}
    inner = nested
    for _ in range(3000):  # as deep as a hostile transcript may nest it
        inner["action"] = {}
        inner = inner["action"]
    assert ToolClassifier().explain("local_shell", nested).mutating


def test_text_sent_to_a_running_process_mutates_under_a_declared_shell_too() -> None:
    declared = ToolClassifier({"execute_bash": "exec"})
    assert declared.explain("execute_bash", {"command": "ls"}).tool_class == "read"
    sent = declared.explain("execute_bash", {"command": "ls", "is_input": "true"})
    assert sent.mutating and "standard input" in sent.reason and sent.rule == "declared"


#: OpenClaw 2026.9.6 Code Mode (`tool-surface-bridge-*.mjs` `createCodeModeTools`): `exec` runs its
#: `code` (`command` is `readCode`'s alias of the same JavaScript), `wait {runId}` resumes the
#: suspended cell (`runWait`: `runCodeModeExecutor({kind: "resume"})`), whose guest may then call
#: any catalog tool; Codex's code-mode `wait {cell_id}` polls or `terminate`s a running cell
CODE_MODE_CELLS = [
    ("wait", {"runId": "cm_1"}, "resumes the suspended cell"),
    ("wait", {"run_id": "cm_1"}, "resumes the suspended cell"),
    ("wait", {"cell_id": "7", "terminate": True}, "Codex Code Mode `wait`"),
    ("exec", {"code": "return await write({path: 'a', content: 'b'})"}, "runs its `code` as JavaScript"),
    ("exec", {"code": "return 1", "command": "ls"}, "never a shell command"),
    ("exec", {"code": "ls", "command": "ls"}, "never a shell command"),
    ("exec", {"code": None, "command": "cat notes.txt"}, "never a shell command"),
    # pi 1.6.0's `codemode` (extensions/codemode/tool.js): judged alone, before any result says what
    # its script called (in replay too), it may call any tool
    ("codemode", {"code": "return await tools.read({path: 'a.txt'})"}, "pi `codemode` runs its `code`"),
    ("codemode", {}, "pi `codemode` runs its `code`"),
]


@pytest.mark.parametrize(("name", "args", "why"), CODE_MODE_CELLS)
def test_a_code_mode_cell_run_or_resumed_mutates_whatever_its_command_alias_says(
    name: str, args: dict[str, Any], why: str
) -> None:
    from replaylab.safety.classify import replaylab_rules

    for explained in (replaylab_rules(name, args), ToolClassifier({"exec": "exec"}).explain(name, args)):
        assert explained.mutating and explained.tool_class == "exec", explained
        assert why in explained.reason, explained


def test_a_wait_that_only_waits_stays_a_read() -> None:
    """Codex's multi-agent `wait {targets, timeout_ms}` (`multi_agents/wait.rs`) only subscribes
    to the agents' statuses; a `wait` naming no code-mode run or cell keeps the verb's reading."""
    for args in ({"targets": ["ag-1"], "timeout_ms": 30000}, {"ids": ["a"]}, {}):
        assert ToolClassifier().explain("wait", args).tool_class == "read"
    assert ToolClassifier().explain("exec", {"command": "ls"}).tool_class == "read"
