"""Generated tool calls for the OpenClaw oracle: shell commands from a small grammar and every
name / action / argument shape OpenClaw's rules distinguish, plus JavaScript's coercion edges
(non-string names and actions, arrays and scalars as arguments, ECMAScript-only whitespace).
Deterministic: the same list every run."""

from __future__ import annotations

import random
from typing import Any

from replaylab.upstream import openclaw_2026_9_6 as OC96

SEED = 20260906

EXECUTABLES = [
    *sorted(OC96.READ_ONLY_SHELL_COMMANDS),
    "sed",
    "gh",
    "git",
    "find",
    "sudo",
    "env",
    "echo",
    "rm",
    "mv",
    "npm",
    "python",
    "bash",
    "xargs",
    "LS",
    "Cat",
    "GREP",
    '"ls"',
    "'cat'",
    'l"s"',
    "c''at",
    '" ls"',
    "ls\u00a0",
    "tee",
    "curl",
]
WORDS = [
    "-la",
    "-n",
    "-i",
    "-ni",
    "-in",
    "-e",
    "--expression",
    "--in-place",
    "--in-place=.bak",
    "--quiet",
    "--silent",
    "-",
    "1p",
    "1,5p",
    "10,$p",
    "$p",
    "p",
    "1,5d",
    "s/a/b/",
    "pr",
    "issue",
    "repo",
    "search",
    "view",
    "list",
    "diff",
    "checks",
    "status",
    "merge",
    "create",
    "close",
    "--web",
    "--WEB",
    "-w",
    "-wc",
    "-aw=1",
    "--web=true",
    "--pre",
    "--pre=cat",
    "--PRE-GLOB=*.gz",
    "--hostname-bin=x",
    "-z",
    "--search-zip",
    "-exec",
    "-delete",
    "{}",
    "log",
    "push",
    "commit",
    "-m",
    "file.txt",
    "src/app.py",
    "'a b'",
    '"x y"',
    "''",
    '""',
    "'unterminated",
    '"unterminated',
    "café",
    "中文",
    "emoji\U0001f600",
    "a\u2028b",
    "a\u3000b",
    "a\ufeffb",
    "a\u000bb",
    "a\u001cb",
    "a\u0085b",
    "'-w'",
    '" --web"',
    "' view '",
    "123",
    "-N",
    "--",
    "%s",
    "#comment",
    "!",
    "=",
    "FOO=bar",
    "(",
    ")",
]
DECORATIONS = [
    "",
    " | wc -l",
    " > out.txt",
    " >> log",
    " 2>&1",
    " 2>/dev/null",
    " < in.txt",
    " && echo ok",
    " || true",
    " ; rm -rf x",
    " &",
    " &> all",
    " $(rm x)",
    " `id`",
    " *.py",
    " a?c",
    " [ab]",
    " {a,b}",
    " ~/x",
    " ~",
    " a\\ b",
    "\nrm x",
    "\r\n",
    " $HOME",
    " ${X}",
    "\t",
    " \u00a0",
    " \u2029",
]
PREFIXES = ["", " ", "\t", "\u3000", "\ufeff", "sudo ", "env ", "FOO=1 ", "( ", "time ", "nohup ", "exec "]
SHELL_NAMES = ["exec", "bash", "Bash", "EXEC", " bash ", "\ufeffexec", "exec\u00a0", "shell", "sh", "execute"]


def shell_commands(rng: random.Random, count: int) -> list[str]:
    fixed = [
        "",
        " ",
        "\t\n",
        "ls",
        "pwd",
        "git status",
        "git log --oneline",
        "gh pr view 12",
        "gh search",
        "gh search code foo",
        "gh issue view 3 --comments",
        "gh pr merge 1",
        "sed -n 1,20p file",
        "sed -n '1,20p' file",
        "sed -n $p f",
        "sed -ne 1p f",
        "sed --quiet 1p f",
        "sed -n -- 1p f",
        "sed 1p f",
        "sed -n f",
        "sed -n",
        "rg foo",
        "rg --pre cat foo",
        "rg -z foo",
        "find . -name x",
        "find . -exec rm {} \\;",
        "find . -delete",
        "sudo rm -rf /",
        "env ls",
        "cat a | grep b",
        "ls && rm x",
        "(ls)",
        "$(ls)",
        "ls $(pwd)",
        "echo `id`",
        "cat <(rm x)",
        "ls *",
        "cat ~/.bashrc",
        "grep -r foo .",
        "wc -l a b",
        "head -n 5 f",
        "tail -f log",
        "stat f",
        "cat 'a;b'",
        'cat "a|b"',
        "''",
        '""',
        "'' ''",
        "'",
        'ls "',
        "ls\u00a0-la",
        "ls\u2028-la",
        "\u2028ls\u2028",
        "ls \\",
    ]
    out = list(fixed)
    while len(out) < count:
        parts = [rng.choice(PREFIXES), rng.choice(EXECUTABLES)]
        for _ in range(rng.randrange(0, 4)):
            parts.append(" " + rng.choice(WORDS))
        if rng.random() < 0.45:
            parts.append(rng.choice(DECORATIONS))
        out.append("".join(parts))
    return out


def shell_pairs(rng: random.Random, count: int) -> list[tuple[Any, Any]]:
    pairs: list[tuple[Any, Any]] = []
    for command in shell_commands(rng, count):
        name = rng.choice(SHELL_NAMES[:6]) if rng.random() < 0.9 else rng.choice(SHELL_NAMES)
        shape = rng.random()
        if shape < 0.7:
            args: Any = {"command": command}
        elif shape < 0.8:
            args = {"cmd": command}
        elif shape < 0.85:
            args = {"command": None, "cmd": command}
        elif shape < 0.9:
            args = {"command": "rm -rf x", "cmd": command}
        else:
            args = {"command": command, "timeout": 10, "description": "x", "run_in_background": True}
        pairs.append((name, args))
    for args in (None, [], ["ls"], "ls", 3, {}, {"command": 3, "cmd": "ls"}, {"command": ["ls"]}, {"cmd": None}):
        for name in ("exec", "bash"):
            pairs.append((name, args))
    return pairs


ACTION_TOOLS = [
    "process",
    "message",
    "sessions",
    "computer",
    "mobile_ui",
    "subagents",
    "session_status",
    "gateway",
    "portal",
    "theme",
    "nodes",
    "automations",
    "cron",
    "canvas",
    "browser",
    "skill_workshop",
    "transcripts",
    "deploy_actions",
    "github_actions",
    "message_actions",
    "_actions",
]
OTHER_NAMES = [
    *sorted(OC96.OPENCLAW_ALWAYS_MUTATING_TOOLS),
    *sorted(OC96.REPLAY_SAFE_TOOL_NAMES),
    "message_slack",
    "message_",
    "sendgrid",
    "resend",
    "email_SENDER",
    "Message_X",
    "MESSAGE",
    "Write",
    " edit ",
    "Read",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "Task",
    "MultiEdit",
    "NotebookEdit",
    "KillShell",
    "BashOutput",
    "mcp__playwright__browser_click",
    "mcp__playwright__browser_snapshot",
    "show_widget",
    "code_execution",
    "lookup",
    "get_order",
    "refund_order",
    "",
    " ",
    "\ufeff",
    "ＷＲＩＴＥ",
    "wr\u0131te",
    "\u212aill_actions",
    "İnspect",
    "ſend",
    "sessions_spawn",
    "SESSIONS_SPAWN",
    "image_generate",
    "tts",
    "memory_search",
]
EXTRA_ACTIONS = [
    None,
    "",
    " ",
    "LIST",
    " list ",
    "group list",
    "group-list",
    "Group--List",
    "send keys",
    "Send-Keys",
    "send\tkeys",
    "config.get",
    "CONFIG.GET",
    "browser_dialog",
    "browser dialog",
    "add",
    "run",
    "delete",
    "kill",
    "cancel",
    "steer",
    "observe",
    "describe",
    "pending",
    "click",
    "navigate",
    "\u3000list\u3000",
    "li\u00a0st",
    "list\u2028",
    "ＬＩＳＴ",
    3,
    True,
    ["list"],
    {"a": 1},
]


def all_actions() -> list[Any]:
    sets = (
        OC96.READ_ONLY_ACTIONS,
        OC96.PROCESS_MUTATING_ACTIONS,
        OC96.PROCESS_REPLAY_SAFE_ACTIONS,
        OC96.MESSAGE_READ_ONLY_ACTIONS,
        OC96.BROWSER_READ_ONLY_ACTIONS,
        OC96.MOBILE_UI_REPLAY_SAFE_ACTIONS,
        OC96.GATEWAY_REPLAY_SAFE_ACTIONS,
        OC96.NODES_REPLAY_SAFE_ACTIONS,
        OC96.COMPUTER_OBSERVATION_ACTIONS,
    )
    return [*sorted({a for s in sets for a in s}), *EXTRA_ACTIONS]


def action_pairs() -> list[tuple[Any, Any]]:
    pairs: list[tuple[Any, Any]] = []
    for name in ACTION_TOOLS:
        for action in all_actions():
            pairs.append((name, {"action": action}))
        for args in (
            None,
            [],
            "list",
            0,
            {},
            {"model": "gpt"},
            {"model": " "},
            {"model": "\u3000"},
            {"model": 3},
            {"action": "browser_dialog", "dialogAction": "inspect"},
            {"action": "browser_dialog", "dialogAction": "Inspect"},
            {"action": "browser_dialog"},
            {"content": "hi"},
        ):
            pairs.append((name, args))
    # computer use as Anthropic's and OpenAI's tools spell their observations
    for args in ({"action": "cursor_position"}, {"action": {"type": "screenshot"}}, {"action": {"type": "click"}}):
        pairs.append(("computer", args))
    for name in OTHER_NAMES:
        for args in (None, {}, {"action": "list"}, {"action": "kill"}, {"command": "ls"}, [1]):
            pairs.append((name, args))
    for name in (None, 3, True, ["exec"], {"name": "exec"}):
        pairs.append((name, {"command": "rm x"}))
    return pairs


def generated_pairs(shell_count: int = 3000) -> list[tuple[Any, Any]]:
    rng = random.Random(SEED)
    return [*shell_pairs(rng, shell_count), *action_pairs()]
