"""The built-in tools of the coding agents users record sessions of, as each agent's source defines them.

Only tools whose name no general rule reads and whose name is distinctive enough not to be some
other tool's: a generic `open`, `goto`, `finish`, `codebase` or `new_task` is left to the general
rules, where it mutates (a wrong "read" is the worse error). A sub-agent whose own calls are not
in the recording (Codex's `spawn_agent`, its calls in a rollout of their own) is left there too.
Each entry: (class, what the tool does). Classes are replaylab's words (`safety.classify`).

Sources (repository, path, commit):

* google-gemini/gemini-cli `packages/core/src/tools/definitions/base-declarations.ts`, and
  `tool-names.ts` (`PLAN_MODE_TOOLS`, "read-only tools available in Plan Mode"), 00068e9c;
* openai/codex `codex-rs/core/src/tools/spec.rs` 001cb8e2 (`write_stdin`: `chars` "may be empty
  to poll"); `codex-rs/core/src/tools/code_mode/wait_spec.rs` ef500f4d (code mode's `wait
  {cell_id, terminate}` waits on a running `exec` cell or stops it) and `handlers/multi_agents/wait.rs`
  1f1bd303 (the multi-agent `wait {targets, timeout_ms}` only subscribes to the agents' statuses);
* cline/cline `src/shared/tools.ts` 0a3eba34; RooCodeInc/Roo-Code `src/shared/tools.ts` 0126cb0b
  (`use_mcp_tool {server_name, tool_name, arguments}`, `access_mcp_resource {server_name, uri}`,
  `attempt_completion {result, command?}`);
* block/goose `crates/goose-mcp/src/developer/rmcp_developer.rs` 00a4a7bd (`text_editor`: `view`,
  `write`, `str_replace`, `insert`, `undo_edit`);
* anthropics/anthropic-quickstarts `computer-use-demo/computer_use_demo/tools/computer.py`
  a10bd57a (`cursor_position` runs `xdotool getmouselocation`); OpenAI's computer use sends its
  action as an object (`{"type": "screenshot"}`);
* OpenAI's `local_shell` (`action: {type: "exec", command: [argv]}`) and `shell` (`commands`);
* All-Hands-AI/OpenHands `openhands/agenthub/codeact_agent/tools/bash.py` 542bc264: `is_input`
  sends the command's text "to STDIN of the running process";
* Anthropic's memory tool (`memory_20250818`): `view` reads; `create`, `str_replace`, `insert`,
  `delete`, `rename` change the memory directory;
* anomalyco/opencode (sst/opencode) `packages/opencode/src/tool/todo.ts` 63704f99 (`todowrite`:
  `Todo.update` of the session's own list, `todoread`: `Todo.get`), `webfetch.ts` a63173da (an
  `HttpClientRequest.get` of `url`, nothing saved), `websearch.ts` 4f870745 (a query to Exa's
  `web_search_exa`, nothing saved).
"""

from __future__ import annotations

SOURCE = (
    "gemini-cli 00068e9c, codex 001cb8e2/ef500f4d/1f1bd303, cline 0a3eba34, Roo-Code 0126cb0b, goose 00a4a7bd,"
    " OpenHands 542bc264, opencode 63704f99/a63173da/4f870745"
)

BUILTIN_TOOLS: dict[str, tuple[str, str]] = {
    # gemini-cli
    "write_todos": ("state", "gemini-cli `write_todos` rewrites the session's own todo list"),
    "activate_skill": ("skill", "gemini-cli `activate_skill` loads a skill's instructions"),
    "enter_plan_mode": ("mode", "gemini-cli `enter_plan_mode` switches the session to plan mode"),
    "exit_plan_mode": ("mode", "gemini-cli `exit_plan_mode` presents the plan and leaves plan mode"),
    "update_topic": ("state", "gemini-cli `update_topic` sets the session's topic shown in its UI"),
    "tracker_visualize": ("read", "gemini-cli `tracker_visualize` draws the task tracker's graph"),
    "codebase_investigator": ("read", "gemini-cli `codebase_investigator` is a sub-agent gemini-cli runs read-only"),
    "cli_help": ("read", "gemini-cli `cli_help` is a sub-agent gemini-cli runs read-only"),
    # Codex
    "update_plan": ("state", "Codex `update_plan` updates the plan it shows in the session"),
    "request_user_input": ("interaction", "Codex `request_user_input` asks the user"),
    "grep_files": ("read", "Codex `grep_files` searches file contents with ripgrep"),
    # OpenHands
    "condensation_request": ("state", "OpenHands `condensation_request` asks to condense the session's history"),
    # Cline / Roo-Code
    "access_mcp_resource": ("read", "Cline `access_mcp_resource` reads an MCP resource (`resources/read`)"),
    "plan_mode_respond": ("interaction", "Cline `plan_mode_respond` answers the user in plan mode"),
    "act_mode_respond": ("interaction", "Cline `act_mode_respond` answers the user"),
    "load_mcp_documentation": ("read", "Cline `load_mcp_documentation` loads the MCP documentation"),
    "focus_chain": ("state", "Cline `focus_chain` updates the session's own todo list"),
    "switch_mode": ("mode", "Roo-Code `switch_mode` switches the session's mode"),
    "update_todo_list": ("state", "Roo-Code `update_todo_list` rewrites the session's own todo list"),
    # opencode
    "todowrite": ("state", "opencode `todowrite` rewrites the session's own todo list (`Todo.update`)"),
    "todoread": ("read", "opencode `todoread` reads the session's own todo list (`Todo.get`)"),
    "webfetch": ("read", "opencode `webfetch` GETs its `url` and returns it, nothing saved"),
    "websearch": ("read", "opencode `websearch` sends its query to Exa's `web_search_exa` search"),
    # Continue
    "request_rule": ("read", "Continue `request_rule` reads a rule's text"),
    # the providers' own sandboxes, which reach nothing of the user's
    "bash_code_execution": ("compute", "Anthropic's code execution runs it in Anthropic's container"),
    "text_editor_code_execution": ("compute", "Anthropic's code execution edits files in Anthropic's container"),
    "code_interpreter": ("compute", "OpenAI's hosted code interpreter runs Python in OpenAI's container"),
    # goose's developer extension
    "developer__screen_capture": ("read", "goose `screen_capture` returns a screenshot (nothing saved)"),
    "developer__list_windows": ("read", "goose `list_windows` lists the open windows"),
    "developer__image_processor": ("read", "goose `image_processor` reads and resizes an image in memory"),
    "developer__analyze": ("read", "goose `analyze` reports a codebase's structure"),
}

#: Codex's `write_stdin`: with no characters it only polls the session's output
CODEX_WRITE_STDIN = "write_stdin"
#: Codex code mode's `wait`: the key naming the running cell it waits on (or stops, `terminate`)
CODEX_CODE_MODE_WAIT_KEYS = frozenset({"cell_id"})
#: Cline's and Roo-Code's call of an MCP server's tool
MCP_WRAPPERS = frozenset({"use_mcp_tool"})
#: Cline's `attempt_completion`: its optional `command` runs in the user's terminal
ATTEMPT_COMPLETION = "attempt_completion"
#: the computer-use tools, and the actions that only observe the screen, as Anthropic and OpenAI spell them
COMPUTER_TOOL_NAMES = frozenset({"computer", "computer_use_preview", "computer_use"})
COMPUTER_OBSERVATIONS = frozenset({"screenshot", "cursor_position", "wait", "zoom"})
#: goose's editor: the same commands as Anthropic's (`write` for `create`)
OTHER_TEXT_EDITOR_TOOLS = frozenset({"text_editor"})
#: Anthropic's memory tool, and its commands that only read
MEMORY_TOOL = "memory"
MEMORY_READ_COMMANDS = frozenset({"view"})
