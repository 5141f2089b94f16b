"""Claude Code's built-in tools: what each does to the world, by Claude Code's own documentation.

Source: Claude Code's tools reference (code.claude.com/docs/en/tools-reference, the "Permission
required" column: read-only tools run without approval, Bash and file modification need it; the
LSP tool's operations, "LSP tool behavior") and
its identity and access page (docs.anthropic.com/en/docs/claude-code/iam: "read-only: file
reads, LS, Grep — no approval"), for the CLI generations 1.0.x, 2.0.x and 2.1.x whose sessions
replaylab imports; the tools 2.1.x adds, from the input schemas and their comments in
@anthropic-ai/claude-code 2.1.332's `sdk-tools.d.ts` (a tool whose effect depends on its action,
such as `Artifact`, `RemoteTrigger` or `Projects`, is left to the general rules); and the tools
the schemas leave out, from the tool objects in the JavaScript of 2.1.332's `claude` binary
(@anthropic-ai/claude-code-linux-x64 2.1.332, whose `.bun` section holds it): their `name`,
`aliases` (`Brief` is SendUserMessage's, `ReadMcpResourceDir` ReadMcpResourceDirTool's) and
`searchHint` (what the tool does, in the words the model reads). Names are
matched exactly as Claude Code spells them (`TodoWrite`, not `todowrite`): a tool of another
agent that happens to share a lower-cased name is not meant.

Classes are replaylab's words (`safety.classify.SAFE_CLASSES`): `read` reads files or the web,
`state` changes only the session's own bookkeeping (the todo / task list Claude Code keeps for
the conversation), `interaction` asks the user, `mode` switches plan mode, `subagent` spawns a
sub-agent whose own calls are classified in its own transcript, `skill` loads a skill's prompt;
`write` and `exec` change the world.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VERSIONS = "1.0.x, 2.0.x, 2.1.x"


@dataclass(frozen=True)
class BuiltinTool:
    tool_class: str
    why: str


BUILTIN_TOOLS: dict[str, BuiltinTool] = {
    "Read": BuiltinTool("read", "reads a file (no approval needed)"),
    "Glob": BuiltinTool("read", "lists files matching a pattern (no approval needed)"),
    "Grep": BuiltinTool("read", "searches file contents (no approval needed)"),
    "LS": BuiltinTool("read", "lists a folder (no approval needed)"),
    "NotebookRead": BuiltinTool("read", "reads a notebook (no approval needed)"),
    "WebFetch": BuiltinTool("read", "fetches a web page (a GET) and reads it"),
    "WebSearch": BuiltinTool("read", "searches the web"),
    "BashOutput": BuiltinTool("read", "reads the output a background shell has printed so far"),
    "TaskOutput": BuiltinTool("read", "reads the output of a background task"),
    "ListMcpResourcesTool": BuiltinTool("read", "lists the resources of the connected MCP servers"),
    "ReadMcpResourceTool": BuiltinTool("read", "reads an MCP resource"),
    # its operations (definition, references, hover, symbols, call hierarchy) only read
    "LSP": BuiltinTool("read", "asks the language servers about the code (definitions, references, symbols)"),
    "TodoWrite": BuiltinTool(
        "state", "rewrites the session's own todo list, which Claude Code keeps for the conversation only"
    ),
    "TaskList": BuiltinTool("state", "lists the session's own task list"),
    "TaskGet": BuiltinTool("state", "reads one task of the session's own task list"),
    "TaskCreate": BuiltinTool("state", "adds to the session's own task list"),
    "TaskUpdate": BuiltinTool("state", "updates the session's own task list"),
    "AskUserQuestion": BuiltinTool("interaction", "asks the user a question"),
    "EnterPlanMode": BuiltinTool("mode", "switches the session to plan mode"),
    "ExitPlanMode": BuiltinTool("mode", "presents a plan and leaves plan mode"),
    "Task": BuiltinTool("subagent", "spawns a sub-agent; its own calls are classified in its transcript"),
    "Agent": BuiltinTool("subagent", "spawns a sub-agent; its own calls are classified in its transcript"),
    "Skill": BuiltinTool("skill", "loads a skill's instructions into the conversation"),
    "Edit": BuiltinTool("write", "edits a file"),
    "MultiEdit": BuiltinTool("write", "edits a file"),
    "Write": BuiltinTool("write", "creates or overwrites a file"),
    "NotebookEdit": BuiltinTool("write", "edits a notebook"),
    "Bash": BuiltinTool("exec", "runs a shell command"),
    "PowerShell": BuiltinTool("exec", "runs a PowerShell command"),
    "KillShell": BuiltinTool("exec", "kills a background shell process"),
    "KillBash": BuiltinTool("exec", "kills a background shell process (the 1.0.x name of KillShell)"),
    # the tools 2.1.x adds (2.1.332's sdk-tools.d.ts, each tool's input schema and its comments)
    "TaskStop": BuiltinTool("exec", "stops a background task or agent (KillShell's successor)"),
    "Monitor": BuiltinTool("exec", "runs a shell command and reports each line it prints"),
    "Workflow": BuiltinTool("exec", "runs a workflow script whose agents' own transcripts the import does not read"),
    "ReadMcpResourceDir": BuiltinTool("read", "lists a directory resource of an MCP server"),
    "CronList": BuiltinTool("state", "lists the session's scheduled prompts"),
    "ScheduleWakeup": BuiltinTool("state", "schedules the session's own next turn of a loop"),
    "RefreshMcpTools": BuiltinTool("state", "reconnects MCP servers to refresh the session's list of their tools"),
    "ReportFindings": BuiltinTool("interaction", "hands a review's findings back to the conversation"),
    "ProposeGoal": BuiltinTool("interaction", "proposes a completion goal for the user to approve"),
    "OfferChromeSetup": BuiltinTool("interaction", "offers the user to set up their browser"),
    "ShowOnboardingRolePicker": BuiltinTool("interaction", "shows the user a picker"),
    "CronCreate": BuiltinTool("write", "schedules a prompt to run at cron times (a durable one is saved to disk)"),
    "CronDelete": BuiltinTool("write", "deletes a scheduled prompt"),
    "PushNotification": BuiltinTool("write", "sends a notification to the user's devices"),
    "EnterWorktree": BuiltinTool("write", "creates a git worktree, or switches into one"),
    "ExitWorktree": BuiltinTool("write", "leaves the worktree; `remove` deletes it and its branch"),
    # 2.1.332's bundle (the `claude` binary of @anthropic-ai/claude-code-linux-x64 2.1.332): each
    # tool object's `name`, `aliases` and `searchHint`, for tools the input schemas leave out or
    # name by an alias
    "ReadMcpResourceDirTool": BuiltinTool("read", "lists a directory resource of an MCP server"),
    "SendUserMessage": BuiltinTool("interaction", "sends the user a message, its visible output channel"),
    "Brief": BuiltinTool("interaction", "the alias of SendUserMessage: sends the user a message"),
    "StructuredOutput": BuiltinTool("interaction", "returns the run's final response as structured JSON"),
    "WrapUp": BuiltinTool("interaction", "offers the user a next step when a turn ends"),
    "EndConversation": BuiltinTool("interaction", "ends the conversation with the user"),
    "Yield": BuiltinTool("state", "waits for the session's own background work"),
    "Poll": BuiltinTool("state", "waits for the harness's queued events and receives them"),
}
#: the built-in tools that run a command string (`command`), read by the shell grammar
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "Monitor"})
#: the tools whose `attachments` send files (2.1.332's SendUserMessage, `Brief` its alias): a
#: file path entry is stat'ed and uploaded (`uploadBriefAttachment`) or written into the project
#: folder (`writeAttachmentToProjectFolder`); an object entry, a file a device tool already
#: uploaded, is passed through untouched
ATTACHING_TOOLS = frozenset({"SendUserMessage", "Brief"})


def attached_paths(name: str, args: Any) -> list[str]:
    """The file paths a call of an `ATTACHING_TOOLS` tool sends; empty for any other call."""
    if name not in ATTACHING_TOOLS or not isinstance(args, dict):
        return []
    attachments = args.get("attachments")
    if isinstance(attachments, str):  # not the schema's list: read as the one path it may be
        attachments = [attachments]
    return [a for a in attachments if isinstance(a, str)] if isinstance(attachments, list) else []
