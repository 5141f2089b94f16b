"""The `openclaw` command line in the read-only shell grammar: the agent's own CLI, which agents
run to look at themselves (`openclaw status`, `openclaw gateway probe`, `openclaw config get
gateway.port`, `openclaw --profile rescue logs --follow`).

A command reads when its path is one OpenClaw 2026.9.6 documents as only showing something
(`upstream/openclaw_2026_9_6_cli.py` `READ_COMMANDS`), after the global options (`--profile NAME`,
`--dev`, `--container NAME`, `--log-level L`, `--no-color`, `--`), with no option that makes it
change something (`--fix`, `--repair`, `--yes`, `--allow-exec`, `--output FILE` …), and with
operands only where the path takes a key, an id or a query (a further word after a path that takes
none may be a subcommand: it reads only when it is a read verb, `openclaw sessions list`). `doctor`
reads only in its read-only postures (`--lint`, a bare `--json`, `--post-upgrade`): otherwise it
applies safe config migrations. Any other documented
command — `agent` (an agent turn), `gateway call` (any RPC), `config set`, `plugins install`,
`sessions delete`, `qr` (mints a pairing code) — stays mutating; a command the release does not
document with a read verb in its first words (an older release's, or a plugin's) is read by the
rules for any program (`openclaw gateway ping`, `openclaw infer image describe`).

On a state folder that holds nothing yet, OpenClaw's first command of almost any kind creates its
device identity (a private key in its state store): `openclaw skills list` does too. The listing
commands stay reads: an agent running them runs in an OpenClaw that has its state already, where
none of them changed a row (each was run against a fresh and an existing state).
"""

from __future__ import annotations

import itertools

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_programs import DASHED_READ_VERBS, READ_VERBS
from replaylab.safety.shell_words import read
from replaylab.upstream import openclaw_2026_9_6_cli as CLI


def openclaw_cli(name: str, values: list[str]) -> ShellVerdict | None:
    """The verdict on `openclaw` with these words, or None for a command the pinned release does
    not document (an older one's, `openclaw gateway ping`): any program's rules decide it then."""
    rest = after_global_options(values)
    if rest is None:
        return ShellVerdict(False, f"`{word(name)}` with a global option the grammar does not read")
    if rest in (["--version"], ["-V"], ["-v"], ["--help"], ["-h"]) or (rest[-1:] == ["--help"]):
        return read(f"{name} {rest[-1]}")
    leading = list(itertools.takewhile(lambda v: not v.startswith("-"), rest))
    if not leading:
        return ShellVerdict(False, f"`{word(name)}` without a command starts its setup")
    leading[0] = CLI.COMMAND_ALIASES.get(leading[0], leading[0])
    command = " ".join(leading[:2])
    changing = next((v for v in rest if v.split("=", 1)[0] in CLI.CHANGE_OPTIONS), None)
    if changing is not None:
        return ShellVerdict(False, f"`{word(name)} {word(command)} {word(changing)}` changes something")
    if leading[0] == "doctor":
        options = _doctor_options(rest[1:])
        if options is not None and options & CLI.DOCTOR_READ_FLAGS and options <= CLI.DOCTOR_READ_OPTIONS:
            return read(f"{name} doctor {min(options & CLI.DOCTOR_READ_FLAGS)}")
        return ShellVerdict(
            False,
            f"`{word(name)} doctor` applies safe config migrations (only `--lint`, `--json`, `--post-upgrade` read)",
        )
    path = next(
        (
            tuple(leading[:size])
            for size in range(min(len(leading), 4), 0, -1)
            if tuple(leading[:size]) in CLI.READ_COMMANDS
        ),
        None,
    )
    if path is None:
        # a subcommand the release does not document is refused by the CLI, or an older release's:
        # a read verb is read as any program's (`openclaw gateway ping`), anything else is refused
        named = any(w in READ_VERBS or w.split("-", 1)[0] in DASHED_READ_VERBS for w in leading[1:4])
        return _changes(name, command) if leading[0] in CLI.COMMANDS and not named else None
    operands = leading[len(path) :] + _operands(rest[len(leading) :])
    if operands and not CLI.READ_COMMANDS[path]:  # a further word may be a subcommand of its own
        if operands[0] not in READ_VERBS:
            return _changes(name, f"{' '.join(path)} {operands[0]}")
        return read(f"{name} {' '.join(path)} {operands[0]}")
    return read(f"{name} {' '.join(path)}")


def _doctor_options(words: list[str]) -> set[str] | None:
    """`doctor`'s options, the check selection's values left out; None for a word that is neither."""
    options: set[str] = set()
    at = 0
    while at < len(words):
        option = words[at].split("=", 1)[0]
        if option in CLI.DOCTOR_CHECK_SELECTION:
            at += 1 if "=" in words[at] else 2
            continue
        if not option.startswith("-"):
            return None
        options.add(option)
        at += 1
    return options


def _changes(name: str, command: str) -> ShellVerdict:
    return ShellVerdict(False, f"`{word(name)} {word(command)}` changes something or runs the agent")


def _operands(words: list[str]) -> list[str]:
    """The words among options that are no option's value: a word after an option the CLI's pages
    show with a value is that value; any other is an operand, or a command."""
    found: list[str] = []
    for at, value in enumerate(words):
        if value.startswith("-"):
            continue
        before = words[at - 1] if at else ""
        if before in CLI.VALUE_OPTIONS:
            continue
        found.append(value)
    return found


def after_global_options(values: list[str]) -> list[str] | None:
    """The words after the global options; None for an option before the command that is not one."""
    index = 0
    while index < len(values) and values[index].startswith("-"):
        value = values[index]
        option = value.split("=", 1)[0]
        if value == "--":
            return values[index + 1 :]
        if option in CLI.GLOBAL_VALUE_OPTIONS:
            index += 1 if "=" in value else 2
        elif value in CLI.GLOBAL_FLAGS:
            index += 1
        elif value in ("--version", "-V", "-v", "--help", "-h"):
            return values[index:]
        else:
            return None
    return values[index:]
