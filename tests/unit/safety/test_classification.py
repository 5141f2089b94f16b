"""Classification with reasons: OpenClaw's read-only shell exemption case by case (the mirror),
which rule answers each kind of call (OpenClaw's refusals read again by replaylab's shell grammar,
Claude Code's built-in tools, tool-name verbs), a declared `exec` shell tool, the suite's
`classification` key (its errors with file, line and field; commands that widen the list but never
lift a refusal; tools forced either way), the ledger keeping each reason and `replaylab inspect`
printing it. The corpora of read-only and write calls are in test_shell_grammar.py and
test_verbs.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builders.transcripts import Session
from replaylab.diagnostics import InputError
from replaylab.qa.setup import classifier_for
from replaylab.safety import ToolClassifier, build_ledger
from replaylab.safety.overrides import ClassificationOverrides
from replaylab.safety.shell import shell_verdict
from replaylab.suite import load_suite
from replaylab.transcript.load import load_transcript
from repo_paths import REPO_ROOT

REPO = REPO_ROOT

#: (command, read-only?, a part of the reason) — what OpenClaw 2026.9.6 exempts and what it refuses
SHELL = [
    ("ls -la", True, "`ls`"),
    ("LS", True, "`ls`"),
    ('"cat" README.md', True, "`cat`"),
    ("c''at x", True, "`cat`"),
    ("grep -rn 'a b' src", True, "`grep`"),
    ("head -n 5 f", True, "`head`"),
    ("tail -f log", True, "`tail`"),
    ("wc -l a b", True, "`wc`"),
    ("pwd", True, "`pwd`"),
    ("stat f", True, "`stat`"),
    ("rg foo", True, "`rg`"),
    ("sed -n 1,20p f", True, "`sed -n 1,20p`"),
    ("sed -n '5p' f", True, "`sed -n 5p`"),
    ("gh pr view 12", True, "`gh pr view`"),
    ("gh issue list", True, "`gh issue list`"),
    ("gh search code foo", True, "`gh search code`"),
    ("cat a | grep b", False, "`|` pipe"),
    ("ls || true", False, "`||` operator"),
    ("cd x && ls", False, "`&&` operator"),
    ("ls; rm x", False, "`;` command separator"),
    ("sleep 1 &", False, "`&` background job"),
    ("ls &> out", False, "`&>` redirection"),
    ("ls > out", False, "`>` redirection"),
    ("grep x f 2>/dev/null", False, "`>` redirection"),
    ("cat < in", False, "`<` redirection"),
    ("ls\nrm x", False, "line break"),
    ("echo `id`", False, "command substitution"),
    ("ls $(pwd)", False, "`$(…)` command substitution"),
    ("cat $HOME/x", False, "`$` expansion"),
    ("ls *.py", False, "`*` glob"),
    ("ls a?c", False, "`?` glob"),
    ("ls [ab]", False, "`[` glob"),
    ("ls {a,b}", False, "`{` brace expansion"),
    ("cat ~/.bashrc", False, "`~` home expansion"),
    ("grep a\\ b f", False, "`\\` escape"),
    ("cat 'unterminated", False, "unterminated ' quote"),
    ("(ls)", False, "`(ls)` is not one of"),
    ("sudo ls", False, "`sudo` is not one of"),
    ("env ls", False, "`env` is not one of"),
    ("FOO=1 ls", False, "`foo=1` is not one of"),
    ("find . -name x", False, "`find` is not one of"),
    ("find . -delete", False, "`find` is not one of"),
    ("git status", False, "`git` is not one of"),
    ("git log --oneline", False, "`git` is not one of"),
    ("sed -i s/a/b/ f", False, "`-i` edits files in place"),
    ("sed --in-place=.bak 1p f", False, "`sed --in-place`"),
    ("sed -n -e 1p f", False, "`sed -e`"),
    ("sed --quiet 1p f", False, "holding `i`"),  # OpenClaw's check reads the `i` of --quiet
    ("sed 1p f", False, "without `-n`"),
    ("sed -n 1d f", False, "other than `Np`"),
    ("rg --pre cat x", False, "`rg --pre`"),
    ("rg --PRE-GLOB=z x", False, "`rg --pre-glob`"),
    ("rg -z x", False, "`rg -z`"),
    ("gh pr view 1 --web", False, "--web"),
    ("gh pr view 1 -w", False, "--web"),
    ("gh pr merge 1", False, "`gh pr merge`"),
    ("gh search", False, "without what"),
    ("gh repo clone x", False, "`gh repo clone`"),
    ("''", False, "no words"),
    ("ls\u00a0-la", True, "`ls`"),  # ECMAScript whitespace splits words, as in OpenClaw
    ("café", False, "`café` is not one of"),
]


@pytest.mark.parametrize(("command", "read_only", "why"), SHELL)
def test_openclaws_exemption_exempts_or_refuses_with_the_reason(command: str, read_only: bool, why: str) -> None:
    verdict = shell_verdict(command)
    assert verdict.read_only is read_only
    assert why in verdict.reason, verdict.reason
    classified = ToolClassifier().explain("bash", {"command": command})
    if read_only:  # what OpenClaw exempts replaylab exempts, by OpenClaw's rule
        assert (classified.rule, classified.reason) == ("shell-read-only", verdict.reason)
    else:  # what it refuses, replaylab's grammar reads again
        assert classified.rule in ("shell-grammar", "shell-mutating")


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("cat a | grep b", True),
        ("ls || true", True),
        ("cd x && ls", True),
        ("ls; rm x", False),
        ("ls &> out", False),
        ("ls > out", False),
        ("grep x f 2>/dev/null", True),
        ("cat < in", True),
        ("ls\nrm x", False),
        ("echo `id`", True),
        ("ls *.py", True),
        ("cat ~/.bashrc", True),
        ("sudo ls", True),
        ("sudo -e /etc/hosts", False),
        ("env ls", True),
        ("find . -name x", True),
        ("find . -delete", False),
        ("git status", True),
        ("git log --oneline", True),
        ("sed -i s/a/b/ f", False),
        ("sed 1p f", True),
        ("rg --pre cat x", False),
        ("gh pr merge 1", False),
        ("cat 'unterminated", False),
    ],
)
def test_the_grammar_reads_again_what_openclaw_refuses(command: str, read_only: bool) -> None:
    classified = ToolClassifier().explain("bash", {"command": command})
    assert classified.mutating is not read_only, classified
    assert classified.rule == ("shell-grammar" if read_only else "shell-mutating")


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({}, "no `command`"),
        ({"command": "   "}, "no `command`"),
        ({"command": 3, "cmd": "ls"}, "no `command`"),  # a non-string command is not replaced by cmd
        ({"command": None, "cmd": "ls"}, "`ls`"),
        ({"cmd": "ls"}, "`ls`"),
    ],
)
def test_the_command_is_read_as_openclaw_reads_it(args: dict[str, Any], why: str) -> None:
    assert why in ToolClassifier().explain("exec", args).reason


@pytest.mark.parametrize(
    ("name", "args", "tool_class", "rule", "why"),
    [
        ("edit", {}, "write", "openclaw-name", "`edit` always mutates"),
        ("sessions_spawn", {}, "write", "openclaw-name", "always mutates"),
        ("resend_invoice", {}, "write", "openclaw-name", "holds `send`"),
        ("message_slack", {}, "write", "openclaw-name", "`message_*`"),
        ("process", {"action": "kill"}, "exec", "openclaw-action", "action `kill` mutates"),
        ("process", {"action": "poll"}, "read", "openclaw-action", "does not mutate"),
        ("message", {"action": "read"}, "read", "openclaw-action", "action `read`"),
        ("message", {}, "write", "openclaw-action", "no action mutates"),
        ("gateway", {"action": "config.get"}, "read", "openclaw-action", "config.get"),
        ("nodes", {"action": "Status"}, "read", "openclaw-action", "`status`"),
        ("cron", {"action": "add"}, "write", "openclaw-action", "`add`"),
        ("deploy_actions", {"action": "List"}, "read", "openclaw-action", "`list`"),
        ("session_status", {"model": "m"}, "write", "openclaw-action", "with a `model`"),
        ("subagents", {}, "read", "openclaw-action", "no action"),
        ("web_fetch", {}, "read", "openclaw-replay-safe", "read-only tool"),
        ("memory_get", {}, "read", "openclaw-replay-safe", "read-only tool"),
        ("read", {}, "read", "openclaw-replay-safe", "`read`"),
        ("Read", {}, "read", "agent-builtin", "reads a file"),
        ("browser", {"action": "snapshot"}, "read", "openclaw-replay-safe", "action `snapshot`"),
        ("browser", {"action": "click"}, "unknown", "unproven-action", "OpenClaw: not mutating"),
        ("TodoWrite", {}, "state", "agent-builtin", "the session's own todo list"),
        # OpenClaw's documentation: a widget shown to the user is no read, whatever its verb says
        ("show_widget", {"widget_code": "<p>hi</p>"}, "write", "agent-builtin", "on the user's surface"),
        ("code_execution", {"code": "print(1)"}, "compute", "agent-builtin", "xAI's remote sandbox"),
        ("llm-task", {"prompt": "x"}, "compute", "agent-builtin", "one JSON-only model call"),
        # Tool Search's code mode calls the catalog's tools, writes included, whatever its verb says
        (
            "tool_search_code",
            {"code": "return await openclaw.tools.call('write', {path: 'notes.txt', content: 'x'})"},
            "exec",
            "agent-builtin",
            "calls any tool of the catalog",
        ),
        # Playwright MCP's own annotations, by the name under any agent's namespace
        ("mcp__playwright__browser_snapshot", {}, "read", "mcp-server", "`browser_snapshot` readOnlyHint: true"),
        ("playwright__browser_network_requests", {}, "read", "mcp-server", "readOnlyHint: true"),
        ("browser_wait_for", {"time": 2}, "read", "mcp-server", "readOnlyHint: true"),  # an assertion
        ("mcp__playwright__browser_click", {"ref": "e3"}, "write", "mcp-server", "`browser_click` readOnlyHint: false"),
        ("browser_navigate", {"url": "https://x"}, "write", "mcp-server", "readOnlyHint: false"),
        ("browser_video_hide_actions", {}, "write", "openclaw-action", "no action mutates"),  # OpenClaw's rule first
        ("BashOutput", {}, "read", "agent-builtin", "reads the output a background shell"),
        ("KillShell", {}, "exec", "agent-builtin", "kills a background shell"),
        ("KillBash", {}, "exec", "agent-builtin", "the 1.0.x name of KillShell"),
        # the tools 2.1.x adds (its sdk-tools.d.ts): Monitor runs a command, read by the grammar
        ("TaskStop", {"task_id": "b7"}, "exec", "agent-builtin", "stops a background task"),
        ("Monitor", {"command": "tail -f log/app.log"}, "read", "shell-read-only", "`tail`"),
        ("Monitor", {"command": "npm run dev"}, "exec", "agent-builtin", "`npm run`"),
        ("CronCreate", {"cron": "*/5 * * * *", "prompt": "check CI"}, "write", "agent-builtin", "schedules"),
        ("CronList", {}, "state", "agent-builtin", "scheduled prompts"),
        ("PushNotification", {"message": "done"}, "write", "agent-builtin", "sends a notification"),
        ("EnterWorktree", {"name": "fix"}, "write", "agent-builtin", "creates a git worktree"),
        ("ReportFindings", {"findings": []}, "interaction", "agent-builtin", "a review's findings"),
        ("Workflow", {"name": "sweep"}, "exec", "agent-builtin", "runs a workflow script"),
        ("Artifact", {"action": "list"}, "read", "tool-action-verb", "`list`"),  # by its action, not a builtin
        # the tools of 2.1.332's own bundle (its tool objects' names, aliases and search hints):
        # a message to the user is no write, whatever its `send` says
        ("SendUserMessage", {"message": "done"}, "interaction", "agent-builtin", "sends the user a message"),
        ("Brief", {"message": "done"}, "interaction", "agent-builtin", "the alias of SendUserMessage"),
        # a file path among its attachments is uploaded, or copied into the project folder; a
        # reference a device tool already uploaded is passed through as it is
        ("SendUserMessage", {"message": "log", "attachments": ["out/app.log"]}, "write", "agent-builtin", "uploads"),
        (
            "Brief",
            {"message": "log", "attachments": [{"file_uuid": "f1"}, "/tmp/d.png"]},
            "write",
            "agent-builtin",
            "`/tmp/d.png`",
        ),  # fmt: skip
        (
            "SendUserMessage",
            {"message": "pic", "attachments": [{"file_uuid": "f1"}]},
            "interaction",
            "agent-builtin",
            "sends the user",
        ),  # fmt: skip
        ("SendUserMessage", {"message": "done", "attachments": []}, "interaction", "agent-builtin", "sends the user"),
        ("StructuredOutput", {"answer": 42}, "interaction", "agent-builtin", "structured JSON"),
        ("WrapUp", {}, "interaction", "agent-builtin", "offers the user a next step"),
        ("EndConversation", {}, "interaction", "agent-builtin", "ends the conversation"),
        ("Yield", {}, "state", "agent-builtin", "waits for the session's own background work"),
        ("Poll", {}, "state", "agent-builtin", "waits for the harness's queued events"),
        ("ReadMcpResourceDirTool", {"server": "s", "uri": "d://"}, "read", "agent-builtin", "lists a directory"),
        ("LSP", {"operation": "findReferences"}, "read", "agent-builtin", "asks the language servers"),
        ("Bash", {"command": "ps aux | grep node"}, "read", "shell-grammar", "`ps`, `grep`"),
        ("Bash", {"command": "rm -r build"}, "exec", "agent-builtin", "`rm` removes files"),
        ("exec", {"command": "git status"}, "read", "shell-grammar", "`git status`"),
        ("exec", {"command": "git status > out"}, "exec", "shell-mutating", "writes the file `out`"),
        ("powershell", {"command": "Get-ChildItem C:\\Users"}, "read", "shell-grammar", "`Get-ChildItem`"),
        # tools named for running a command, as other agents name theirs: the same grammar
        ("execute_bash", {"command": "ls -la"}, "read", "shell-read-only", "runs a shell command; read-only"),
        ("execute_bash", {"command": "rm -rf build"}, "exec", "tool-name-shell", "`rm` removes files"),
        ("run_shell_command", {"command": "git log -3"}, "read", "shell-grammar", "`git log`"),
        ("execute_command", {"command": "npm install"}, "exec", "tool-name-shell", "runs a shell command"),
        ("exec_command", {"cmd": "cat a.txt | wc -l"}, "read", "shell-grammar", "`cat`, `wc`"),
        ("shell", {"command": ["bash", "-lc", "git status && ls"]}, "read", "shell-grammar", "`git status`"),
        ("shell", {"command": ["bash", "-lc", "echo x > f"]}, "exec", "tool-name-shell", "writes the file `f`"),
        ("shell", {"command": ["rm", "-f", "a b"]}, "exec", "tool-name-shell", "`rm` removes files"),
        ("shell", {"command": ["ls", "a; rm b"]}, "read", "shell-grammar", "`ls`"),  # one quoted word
        ("run_terminal_cmd", {}, "unknown", "unknown-tool", "holds `run`"),
        # OpenClaw's own tools that change only the session (its tool descriptions)
        ("progress_card", {"action": "create"}, "state", "agent-builtin", "the session's own progress card"),
        ("sessions_yield", {}, "state", "agent-builtin", "submits nothing"),
        ("structured_output", {"result": {}}, "interaction", "agent-builtin", "submits the run's result"),
        ("suggest_task", {"title": "t"}, "unknown", "unknown-tool", "⇒ mutating"),  # a card in the operator's UI
        ("tts", {"text": "hi"}, "unknown", "unknown-tool", "⇒ mutating"),  # audio delivered to the user
        # Anthropic's text editor tool: `view` reads, every other command writes
        ("str_replace_editor", {"command": "view", "path": "/a"}, "read", "agent-builtin", "with `view` only reads"),
        ("str_replace_based_edit_tool", {"command": "str_replace"}, "write", "agent-builtin", "changes a file"),
        ("str_replace_editor", {"path": "/a"}, "write", "agent-builtin", "with no command changes a file"),
        ("get_order_details", {}, "read", "tool-name-verb", "starts with `get`"),
        ("identificar_paciente", {}, "read", "tool-name-verb", "the Spanish verb `identificar`"),
        ("create_reservation", {}, "unknown", "unknown-tool", "holds `create`"),
        ("refund_order", {}, "unknown", "unknown-tool", "⇒ mutating"),
        ("calendar", {"action": "list_events"}, "read", "tool-action-verb", "action `list_events` starts with `list`"),
        ("github", {"action": "status"}, "read", "tool-action-verb", "one of OpenClaw's read-only actions"),
        ("calendar", {"action": "create_event"}, "unknown", "unknown-tool", "action `create_event` holds `create`"),
        ("delete_items", {"action": "list"}, "unknown", "unknown-tool", "its name holds `delete`"),
    ],
)
def test_each_rule_gives_its_class_and_reason(name: str, args: dict, tool_class: str, rule: str, why: str) -> None:
    classified = ToolClassifier().explain(name, args)
    assert (classified.tool_class, classified.rule) == (tool_class, rule)
    assert why in classified.reason, classified.reason


def test_a_tool_named_for_a_shell_and_declared_exec_is_read_by_its_command() -> None:
    """OpenHands' `execute_bash` and Codex's `shell` declared `exec` in a tool_classes.json: their
    read-only commands are exempt as Claude Code's `Bash`'s are; their writes stay `declared`."""
    classifier = ToolClassifier(declared={"execute_bash": "exec", "shell": "exec", "restart_service": "exec"})
    ls = classifier.explain("execute_bash", {"command": "ls -la"})
    assert (ls.tool_class, ls.rule, ls.reason) == (
        "read",
        "shell-read-only",
        "declared exec; read-only shell command `ls`",
    )
    status = classifier.explain("shell", {"command": ["bash", "-lc", "git status"]})
    assert (status.tool_class, status.rule) == ("read", "shell-grammar")
    rm = classifier.explain("execute_bash", {"command": "rm -rf build"})
    assert (rm.tool_class, rm.rule, rm.mutating) == ("exec", "declared", True)
    assert classifier.explain("restart_service", {"command": "ls"}).mutating  # not named for a shell


def test_a_shell_tool_declared_exec_keeps_the_exemption_and_others_do_not() -> None:
    """Claude Code's tool_classes.json declares Bash and KillShell `exec`: Bash is a shell whose
    read-only commands are exempt; KillShell is not a shell and stays mutating."""
    classifier = ToolClassifier(declared={"Bash": "exec", "KillShell": "exec", "Edit": "write"})
    ls = classifier.explain("Bash", {"command": "ls -la"})
    assert (ls.tool_class, ls.rule, ls.reason) == (
        "read",
        "shell-read-only",
        "declared exec; read-only shell command `ls`",
    )
    push = classifier.explain("Bash", {"command": "git push"})
    assert (push.tool_class, push.rule) == ("exec", "declared")
    assert push.reason == "declared exec; `git push` changes the repository or is not a subcommand the grammar knows"
    status = classifier.explain("Bash", {"command": "git status"})
    assert (status.tool_class, status.rule, status.reason) == (
        "read",
        "shell-grammar",
        "declared exec; read-only shell: `git status`",
    )
    assert classifier.explain("KillShell", {"command": "ls"}).tool_class == "exec"
    assert classifier.explain("Edit", {}).reason == "declared write"
    # a shell tool declared anything else keeps its declared class
    assert ToolClassifier(declared={"bash": "write"}).explain("bash", {"command": "ls"}).tool_class == "write"


def test_suite_read_only_commands_widen_the_list_but_never_lift_a_refusal() -> None:
    overrides = ClassificationOverrides(read_only_commands=["git status", "Git log", "make help"])
    classifier = ToolClassifier(overrides=overrides)
    for command in ("git status", "git status --short", "GIT log -3", "make help"):
        classified = classifier.explain("bash", {"command": command})
        assert classified.rule == "shell-read-only" and classified.reason.endswith("(suite)"), command
    for command in ("git status > out", "git status; rm x", "git log $(x)", "git push", "git", "make"):
        assert classifier.explain("bash", {"command": command}).mutating, command
    # OpenClaw's own answer is unchanged by the extra list
    assert shell_verdict("ls").read_only and not shell_verdict("git status").read_only


def test_suite_forced_tools_win_over_every_rule() -> None:
    overrides = ClassificationOverrides(mutating=["web_fetch", "lookup"], safe=["refund_order", "bash"])
    classifier = ToolClassifier(declared={"lookup": "read"}, overrides=overrides)
    assert classifier.explain("web_fetch", {}).mutating
    assert classifier.explain("lookup", {}).mutating
    assert classifier.explain("refund_order", {}).rule == "suite-override"
    assert not classifier.explain("bash", {"command": "rm -rf x"}).mutating
    assert classifier.source("lookup") == "suite" and classifier.source("TodoWrite") == "agent-builtin"
    assert classifier.source("refund") == "default-unsafe" and classifier.source("get_ticket") == "tool-name-verb"
    # merging declared classes keeps the overrides
    assert classifier.merged(ToolClassifier(declared={"x": "read"})).explain("web_fetch", {}).mutating


def _suite(tmp_path: Path, classification: str) -> Path:
    recordings = tmp_path / "recordings"
    recordings.mkdir(exist_ok=True)
    session = Session()
    session.user("hi")
    session.tool_turn("bash", {"command": "acme next"}, "nothing next")
    session.write(recordings / "s.jsonl")
    path = tmp_path / "suite.yaml"
    path.write_text(f"name: t\nrecordings: recordings/*.jsonl\n{classification}", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("classification", "line", "field", "message"),
    [
        (
            "classification:\n  read_only_commands:\n    - git status\n    - git log | head\n",
            6,
            "classification.read_only_commands.1",
            "not a plain command (`|` pipe)",
        ),
        ("classification:\n  mutating: ['']\n", 4, "classification.mutating.0", "an empty tool name"),
        ("classification:\n  safe: [a]\n  mutating: [a]\n", 3, "classification", "listed under both"),
        ("classification:\n  readonly: [ls]\n", 4, "classification.readonly", "unknown key"),
        ("classification: [ls]\n", 3, "classification", ""),
        (f"classification:\n  safe: [{'x' * 201}]\n", 4, "classification.safe.0", "at most 200"),
    ],
)
def test_a_bad_classification_key_names_file_line_and_field(
    tmp_path: Path, classification: str, line: int, field: str, message: str
) -> None:
    path = _suite(tmp_path, classification)
    with pytest.raises(InputError) as raised:
        load_suite(path)
    (diagnostic,) = raised.value.diagnostics
    assert (diagnostic.file, diagnostic.line, diagnostic.field) == (str(path), line, field)
    assert message in diagnostic.message


def test_a_suite_classification_reaches_the_items_classifier(tmp_path: Path) -> None:
    path = _suite(tmp_path, "classification:\n  read_only_commands: [acme next]\n  mutating: [read]\n")
    suite = load_suite(path)
    (scenario,) = suite.scenarios
    classifier = classifier_for(scenario, suite.recordings[0], None)
    assert not classifier.is_mutating("bash", {"command": "acme next"})
    assert not classifier.is_mutating("bash", {"command": "cd x && acme next 2>&1 | head"})  # in a pipeline too
    assert classifier.is_mutating("bash", {"command": "acme next > out"})
    assert classifier.is_mutating("read", {})
    ledger = build_ledger(load_transcript(suite.recordings[0]), classifier)
    assert ledger.replay_safe and [e.reason for e in ledger.exempted] == ["read-only shell command `acme next` (suite)"]
    # without the key the same call is an event
    plain = load_suite(_suite(tmp_path, ""))
    classifier = classifier_for(plain.scenarios[0], plain.recordings[0], None)
    (event,) = build_ledger(load_transcript(plain.recordings[0]), classifier).events
    assert (event.rule, event.reason) == ("shell-mutating", "`acme` is not a command the read-only grammar knows")


WRITES_LISTING = "`>` redirection writes the file `listing.txt`"
REFUND_WHY = (
    "no declared class, no OpenClaw rule, no read verb (its name holds `refund`, a verb that changes something) "
    "⇒ mutating"
)


def _session(tmp_path: Path) -> Path:
    session = Session()
    session.user("look around")
    session.tool_turn("bash", {"command": "ls -la"}, "a b")
    session.tool_turn("bash", {"command": "ls | wc -l"}, "2")
    session.tool_turn("bash", {"command": "ls > listing.txt"}, "")
    session.tool_turn("web_fetch", {"url": "https://example.com"}, "page")
    session.tool_turn("refund_order", {"order": "o1"}, "ok")
    return session.write(tmp_path / "s.jsonl")


def test_the_ledger_keeps_each_events_rule_and_reason_and_each_exemption(tmp_path: Path) -> None:
    ledger = build_ledger(load_transcript(_session(tmp_path)), ToolClassifier())
    assert [(e.tool, e.tool_class, e.rule, e.reason) for e in ledger.events] == [
        ("bash", "exec", "shell-mutating", WRITES_LISTING),
        ("refund_order", "unknown", "unknown-tool", REFUND_WHY),
    ]
    assert [(e.tool, e.reason) for e in ledger.exempted] == [
        ("bash", "read-only shell command `ls`"),
        ("bash", "read-only shell: `ls`, `wc`"),
    ]
    assert ledger.view().events[0].reason == WRITES_LISTING  # the report's model


def test_inspect_prints_why_per_mutating_event_and_exempted_call(tmp_path: Path) -> None:
    path = _session(tmp_path)

    def inspect(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "replaylab.cli", "inspect", str(path), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    text = inspect()
    assert "bash (exec)" in text and f"why (shell-mutating): {WRITES_LISTING}" in text
    assert "why (unknown-tool): no declared class, no OpenClaw rule, no read verb" in text
    assert (
        "decided by   shell-read-only 1, shell-grammar 1, shell-mutating 1, openclaw-replay-safe 1, unknown-tool 1"
        in text
    )
    assert "exempted     2 read-only shell calls (not mutating)" in text
    assert "why: read-only shell command `ls`" in text and "why: read-only shell: `ls`, `wc`" in text
    (report,) = json.loads(inspect("--json"))
    assert [e["rule"] for e in report["mutatingEvents"]] == ["shell-mutating", "unknown-tool"]
    assert [e["reason"] for e in report["exemptedShellCalls"]] == [
        "read-only shell command `ls`",
        "read-only shell: `ls`, `wc`",
    ]
    assert report["toolCallsByClass"] == {"exec": 1, "read": 3, "unknown": 1}


def test_inspect_names_a_call_known_only_by_its_result_by_that_result(tmp_path: Path) -> None:
    session = Session()
    session.user("clean up")
    call, _ = session.tool_turn("exec", {"command": "rm -rf build"}, "", thinking="go")
    for line in session.lines:
        if line["id"] == call:  # a content that is an object: the whole message cannot be read
            line["message"]["content"] = {"blocks": line["message"]["content"]}
    path = session.write(tmp_path / "s.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "error[invalid-entry]" in done.stdout + done.stderr
    result = session.last
    assert "replaySafe   false  (1 mutating events)" in done.stdout
    assert f"exec (exec)  entry {result} (its result)  why (shell-mutating): its call cannot be read" in done.stdout


def test_inspect_counts_by_class_and_by_rule_the_same_calls_sub_agents_included(tmp_path: Path) -> None:
    """A session's tool calls by class fold in its sub-agents' (the ledger's); by rule they are the
    same calls, so the two lines add up alike."""
    from builders.claude_code_logs import SESSION, Log
    from replaylab.commands.inspect import inspect_transcript, render_text
    from replaylab.importers import import_sessions, write_session

    log = Log(version="2.1.39")
    log.user("look around")
    log.call("toolu_L", "Bash", {"command": "ls"})
    log.result("toolu_L", "a.py")
    log.call("toolu_T", "Task", {"description": "search", "prompt": "Find the TODOs"})
    log.result("toolu_T", "One.", {"agentId": "a1", "content": [], "totalTokens": 5})
    log.say("One TODO.")
    (tmp_path / SESSION / "subagents").mkdir(parents=True)
    log.write(tmp_path / f"{SESSION}.jsonl")
    agent = Log(version="2.1.39")
    agent.user("Find the TODOs", side=True, root=True)
    agent.call("toolu_G", "Grep", {"pattern": "TODO"}, side=True)
    agent.result("toolu_G", "a.py:1", side=True)
    agent.say("One.", side=True)
    agent.write(tmp_path / SESSION / "subagents" / "agent-a1.jsonl")
    (session,) = import_sessions("claude-code", tmp_path / f"{SESSION}.jsonl")
    written, _ = write_session(session, tmp_path / "out")
    report = inspect_transcript(load_transcript(written), ToolClassifier(), "none")
    assert sum(report["toolCallsByClass"].values()) == sum(report["toolCallsByRule"].values()) == 3
    # and says how many of them the sub-agent made, as `init` counts only the file's own
    assert (report["subagentToolCalls"], report["subagentTranscripts"]) == (1, 1)
    assert "; 1 of them in 1 sub-agent transcript)" in render_text(report)


def test_a_declared_class_is_read_in_any_case_and_common_spelling_and_an_unknown_one_says_so() -> None:
    """A tool_classes.json written `Read`, `read-only` or `safe` declares reads: taking them for an
    unknown class would make every read mutating. An unknown word still mutates, and says it."""
    classifier = ToolClassifier(
        declared={"get_a": "Read", "get_b": "read-only", "get_c": "Read Only", "get_d": "safe", "w": "side-effect"}
    )
    for tool, spelled in (("get_a", "Read"), ("get_b", "read-only"), ("get_c", "Read Only"), ("get_d", "safe")):
        explained = classifier.explain(tool, {})
        assert (explained.tool_class, explained.mutating) == ("read", False), explained
        assert explained.reason == f"declared read (spelled `{spelled}`)"
    assert classifier.explain("w", {}).tool_class == "write" and classifier.explain("w", {}).mutating
    unknown = ToolClassifier(declared={"x": "frobnicate"}).explain("x", {})
    assert unknown.mutating and unknown.reason == "declared frobnicate, a class replaylab does not know: mutating"
    # merged with a pack's classes, the spelling is still told
    merged = ToolClassifier(declared={"other": "write"}).merged(classifier)
    assert merged.explain("get_a", {}).reason == "declared read (spelled `Read`)"


def test_every_playwright_mcp_tool_is_read_as_its_server_annotates_it_under_any_namespace() -> None:
    """`toMcpTool` of the pinned version: `readOnlyHint` for the types `readOnly` and `assertion`,
    not for `input` and `action`; the same under Claude Code's `mcp__server__` (a plugin's long
    server name too) and OpenClaw's `server__`. OpenClaw's own rules still come first."""
    from replaylab.safety.openclaw_rules import DEFAULT_RULE, openclaw_decision
    from replaylab.upstream import playwright_mcp as PW

    classifier = ToolClassifier()
    assert set(PW.TOOL_TYPES.values()) == {"readOnly", "assertion", "input", "action"}
    reads = [name for name, kind in PW.TOOL_TYPES.items() if kind in ("readOnly", "assertion")]
    assert "browser_snapshot" in reads and "browser_click" not in reads
    for name, kind in PW.TOOL_TYPES.items():
        for spelled in (name, f"mcp__playwright__{name}", f"mcp__plugin_playwright_playwright__{name}", f"pw__{name}"):
            got = classifier.explain(spelled, {})
            if openclaw_decision(spelled, {}).rule != DEFAULT_RULE:
                assert got.mutating and got.rule.startswith("openclaw"), (spelled, got)
                continue
            assert got.rule == "mcp-server", (spelled, got)
            assert got.mutating is (kind in ("input", "action")), (spelled, got)
    # under a server of another name the reason says whose tool table it is read by
    other = classifier.explain("mcp__browsermcp__browser_click", {}).reason
    assert other.startswith("@playwright/mcp") and "server `browsermcp` is read as serving the same tools" in other
    assert "read as serving" not in classifier.explain("mcp__plugin_playwright_playwright__browser_click", {}).reason
    # a name the server does not have is left to the other rules
    assert classifier.explain("browser_tab_list", {}).rule == "tool-name-verb"
    assert classifier.explain("mcp__playwright__browser_teleport", {}).rule == "unknown-tool"


def _browsing(folder: Path, tool: str) -> Path:
    """Six turns that each look at a page through Playwright MCP (a long accessibility snapshot)
    and answer from it, as Claude Code names the server's tools."""
    from builders.transcripts import Session, imported_suite

    s = Session("browsing")
    for page in ("pricing", "docs", "blog", "careers", "status", "about"):
        s.user(f"What does the {page} page say?")
        snapshot = "".join(f'- row "{page} item {n}" [ref=e{n}]: text {n} of the {page} page\n' for n in range(80))
        s.tool_turn(tool, {"url": f"https://example.com/{page}"} if "navigate" in tool else {}, snapshot)
        s.assistant(f"The {page} page lists 80 items.")
    return imported_suite(s, folder)


@pytest.mark.parametrize(
    ("tool", "mutating"),
    [("mcp__playwright__browser_snapshot", False), ("mcp__playwright__browser_navigate", True)],
)
def test_a_session_that_reads_pages_through_playwright_mcp_compacts_and_one_that_navigates_keeps_them(
    tmp_path: Path, tool: str, mutating: bool
) -> None:
    """Through the whole pipeline: snapshots are what Playwright MCP annotates read-only, so none is
    a mutating event and safeguard may summarize them, as it could not when every snapshot was an
    unknown tool; navigating, which the server does not call read-only, stays six kept events."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    suite = load_suite(_browsing(tmp_path, tool))
    item = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="off"))
    assert item.ledger_before is not None
    assert len(item.ledger_before.mutated_event_ids) == (6 if mutating else 0)
    assert not [d for d in item.defects if d.blocking], item.defects
    if mutating:
        assert item.outcome == "uncompacted" and "CANNOT_COMPACT" in (item.reason or "")
    else:
        assert item.outcome == "passed" and item.compaction is not None and item.compaction.compactions >= 1


# ---------------------------------------------------------------- Tool Search's `tool_call`


def _json_of_length(units: int, pad: str = "x") -> str:
    """`{"path": "a.txt", "pad": …}` of `units` UTF-16 code units."""
    head, tail = '{"path": "a.txt", "pad": "', '"}'
    return head + pad * ((units - len(head) - len(tail)) // (2 if pad > "\uffff" else 1)) + tail


#: (tool_call's arguments, the tool it calls with what, or None when the call alone cannot say,
#: its class, mutating). OpenClaw 2026.9.6 `local-model-lean-*.mjs`: `prepareToolSearchDispatcherArguments`,
#: agent-core's `validateToolArguments`, `readToolSearchCallArgs`, `findEntry`; a catalog id is
#: `<source>:<sourceName>:<name>`.
TOOL_CALLS: list[tuple[dict[str, Any], tuple[str, Any] | None, str, bool]] = [
    ({"id": "read", "args": {"path": "a.txt"}}, ("read", {"path": "a.txt"}), "read", False),
    (
        {"id": "openclaw:core:read", "input": {"path": "a.txt"}},
        ("openclaw:core:read", {"path": "a.txt"}),
        "read",
        False,
    ),
    ({"toolId": "web_search", "args": {"query": "x"}}, ("web_search", {"query": "x"}), "read", False),
    ({"id": " grep ", "pattern": "x", "args.path": "src"}, ("grep", {"path": "src", "pattern": "x"}), "read", False),
    ({"id": "exec", "args": {"command": "ls"}}, ("exec", {"command": "ls"}), "read", False),
    ({"args": {"name": "read", "path": "a.txt"}}, ("read", {"path": "a.txt"}), "read", False),
    ({"id": "read", "args": {}, "path": "a.txt"}, ("read", {"path": "a.txt"}), "read", False),
    ({"id": "read", "name": "write", "args": {"path": "a"}}, ("read", {"path": "a"}), "read", False),
    ({"id": "write", "args": {"path": "a", "content": "x"}}, ("write", {"path": "a", "content": "x"}), "write", True),
    ({"id": "openclaw:core:edit", "path": "a"}, ("openclaw:core:edit", {"path": "a"}), "write", True),
    ({"id": "exec", "command": "rm -rf build"}, ("exec", {"command": "rm -rf build"}), "exec", True),
    (
        {"name": "message", "args": {"action": "send", "message": "hi"}},
        ("message", {"action": "send", "message": "hi"}),
        "write",
        True,
    ),
    ({"id": "read", "args.path": "a", "args": {"path": "b"}}, ("read", {"path": "b"}), "read", False),
    # `args` as a JSON object in a string: `validateToolArguments` parses it against the Record schema
    ({"id": "read", "args": '{"path": "a.txt"}'}, ("read", {"path": "a.txt"}), "read", False),
    ({"args": {"id": "read", "args": ' {"path": "a"}'}}, ("read", {"path": "a"}), "read", False),
    ({"id": "exec", "args": '{"command": "rm -rf build"}'}, ("exec", {"command": "rm -rf build"}), "exec", True),
    ({"id": "exec", "args": "{}", "command": "rm -rf build"}, ("exec", {"command": "rm -rf build"}), "exec", True),
    ({"id": "read", "args": _json_of_length(65536)}, ("read", json.loads(_json_of_length(65536))), "read", False),
    # unresolvable from the call alone ⇒ mutating
    ({"id": "read", "name": "notes.txt"}, None, "unknown", True),  # `name` a selector or read's argument?
    ({"id": "read", "toolId": "write"}, None, "unknown", True),  # which selector matches the catalog
    ({"id": " read", "name": "read"}, None, "unknown", True),  # matched untrimmed, found trimmed
    ({"id": "plugin:x:read"}, None, "unknown", True),  # no catalog source: a name or nothing
    ({"id": "openclaw:core:a:b"}, None, "unknown", True),  # which part is the name
    ({"id": "tool_search", "args": {"query": "x"}}, None, "unknown", True),  # never in the catalog
    ({"id": "read", "args": "a.txt"}, None, "unknown", True),  # its input is not an object
    ({"id": "read", "args": '{"path": NaN}'}, None, "unknown", True),  # not JSON: the call fails validation
    ({"id": "read", "input": '{"path": "a"}'}, None, "unknown", True),  # `input` is no schema field: kept a string
    ({"id": "read", "args": _json_of_length(65537)}, None, "unknown", True),  # too long to parse
    ({"id": "read", "args": _json_of_length(65538, "\U0001f600")}, None, "unknown", True),  # UTF-16 units count
    ({"args": {"path": "a"}}, None, "unknown", True),  # no id
    ({"id": 7, "args": {"path": "a"}}, None, "unknown", True),
]


@pytest.mark.parametrize(("args", "target", "tool_class", "mutating"), TOOL_CALLS)
def test_tool_call_is_the_catalog_tool_it_calls_or_mutating(
    args: dict[str, Any], target: tuple[str, Any] | None, tool_class: str, mutating: bool
) -> None:
    got = ToolClassifier().explain("tool_call", args)
    assert (got.tool_class, got.mutating) == (tool_class, mutating), got
    if target is None:
        assert "does not name for certain" in got.reason, got
    else:
        name = target[0].rsplit(":", 1)[-1]
        assert got.reason.startswith(f"OpenClaw `tool_call` calls `{name}`: "), got
        assert got.rule == "agent-builtin" if mutating else got.rule != "agent-builtin", got


def test_tool_search_and_describe_only_read_the_catalog() -> None:
    for name, args in (("tool_search", {"query": "send mail"}), ("tool_describe", {"id": "message"})):
        got = ToolClassifier().explain(name, args)
        assert (got.tool_class, got.rule) == ("read", "openclaw-replay-safe"), got


def _catalogs(args: dict[str, Any]) -> list[list[dict[str, str]]]:
    """Catalogs OpenClaw's reader may see: none, and each string the call holds as a tool's name or id."""
    nested = args.get("args") if isinstance(args.get("args"), dict) else {}
    spelled = sorted({v for v in (*args.values(), *nested.values()) if isinstance(v, str)} - {""})
    named = [{"id": f"openclaw:core:{v.strip()}", "name": v} for v in spelled]
    by_id = [{"id": v, "name": f"t{i}"} for i, v in enumerate(spelled)]
    return [[], named, by_id, *([entry] for entry in named)]


def test_tool_call_reads_its_arguments_as_openclaws_own_reader() -> None:
    """Each resolved row as OpenClaw's `readToolSearchCallArgs` reads it after agent-core's schema
    validation, in every catalog that holds its tool; each
    unresolved by its selectors read otherwise (or refused) in some catalog."""
    from replaylab.oracles.openclaw_rules import ask_rules, rules_unavailable
    from replaylab.safety.tool_search import coerce_to_schema, prepare_dispatcher_arguments, read_call_args

    why = rules_unavailable("2026.9.6")
    if why is not None:
        pytest.skip(why)
    rows = [(args, target, catalog) for args, target, _, _ in TOOL_CALLS for catalog in _catalogs(args)]
    asked = ask_rules(
        {"id": i, "fn": "toolSearchCallArgs", "args": [args, catalog]} for i, (args, _, catalog) in enumerate(rows)
    )
    answers: dict[str, set[str]] = {}
    for (args, target, catalog), answer in zip(rows, asked.answers):
        read = "error" if "error" in answer else json.dumps([answer["ok"]["id"], answer["ok"]["input"]], sort_keys=True)
        answers.setdefault(json.dumps(args), set()).add(read)
        ours = read_call_args(coerce_to_schema(prepare_dispatcher_arguments(args)))
        finds = target is not None and any(target[0] in (e["id"], e["name"]) for e in catalog)
        if finds:  # where `findEntry` finds no tool the call fails, whatever the reader read
            assert read == json.dumps(list(target), sort_keys=True) == json.dumps(list(ours), sort_keys=True), args
    for (args, target, _), answer in zip(rows, asked.answers):
        if isinstance(args.get("args"), str) and target is None:  # a string left unparsed fails the schema
            assert "error" in answer or answer["ok"]["schemaRefuses"], args
    for args, target, _, _ in TOOL_CALLS:
        ours = read_call_args(coerce_to_schema(prepare_dispatcher_arguments(args)))
        if target is None and isinstance(ours, str) and "selectors" in ours:
            assert len(answers[json.dumps(args)]) > 1, (args, answers[json.dumps(args)])
