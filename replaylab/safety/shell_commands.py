"""One simple command of the read-only shell grammar (`shell_grammar.py`): its executable and
words decide whether it only reads.

Decided here, in this order:

1. **wrappers** run another command, which is what is checked: `env [NAME=value…] cmd`,
   `timeout D cmd`, `time`, `nice`, `command -p cmd`, `xargs [opts] cmd` (no command: `echo`),
   `sudo|doas [-u USER] cmd` (never `-e`, `-s`, `-i`: an editor or a shell), `ssh HOST cmd` (the
   remote command; never forwarding, a local command, `-F`, `-E`, or no command at all),
   `bash|sh|zsh -c 'script'`, `powershell|pwsh -Command 'script'`, and the command `find -exec`
   runs (`bash -n script.sh` only checks its syntax, and reads); a shell reading its script from
   standard input the command line shows (`bash -s <<'EOF'`) runs that script;
2. **read-only commands** (`READ_ONLY`), some with the options that make them write refused
   (`shell_readers.py`: `sort -o`, `uniq IN OUT`, `sed -i`, `sed … w file`, `awk` printing to a
   file or a pipe, `date -s`, `hostname NAME`, `tar` other than `-t`, `tree -o`, `less -o`, `ss
   -K`, `history -w`, `file -C`, `ack --pager`, `xxd IN OUT`, `yq -i`, `unzip` extracting, `top`
   without `-b`), the HTTP clients `curl` and `wget` when they only GET a web page to standard
   output (`shell_http.py`), and the commands `find -exec` and `fd -x` run, checked here like
   any other; `python -c 'script'` whose script only computes and prints (`shell_python.py`), and
   the script or SQL a here-document gives `python` or `sqlite3`; the SQL shells (`sqlite3`,
   `psql`, `mysql`) and `redis-cli` when their query only reads (`shell_sql.py`,
   `shell_sql_servers.py`, `shell_redis.py`);
   a code checker asked only to report (`tsc --noEmit`, `black --check`; `shell_checkers.py`);
   a system or infrastructure tool in its query mode (`terraform show`, `rpm -q`, `launchctl
   list`, `firewall-cmd --list-all`, `openssl x509 -noout`; `shell_admin.py`); the agent's own
   CLI asked only to show something (`openclaw status`, `openclaw config get x`;
   `shell_openclaw.py`);
3. **subcommands** of the tools agents run most (`shell_subcommands.py`): git (`status`, `log`,
   `diff`, `show`, `branch` and `tag` as lists, `remote -v`, `stash list`, `config --get`, one
   config name …; never `-c`, never `--output`), npm / pnpm / yarn (`list`, `view`, `outdated`,
   `why` …), pip (`list`, `show`, `freeze`), docker, kubectl, gh (`gh api` as a GET), go, cargo,
   helm, systemctl, apt;
4. **PowerShell's read verbs**: `Get-*`, `Test-*`, `Select-*`, `Measure-*`, `Format-*`,
   `Compare-*`, `Group-*`, `Sort-Object`, `Where-Object`, `ConvertTo-*`, `ConvertFrom-*`,
   `Out-String`, `Out-Host`, `Out-Null`, `Write-Output`, `Write-Host`, `Resolve-Path`,
   `Split-Path`, `Join-Path` (never `Out-File`, `Tee-Object`, `Set-*`, `New-*`, `Remove-*` …);
5. `X --version` / `X --help` alone, for any program named by a bare word (a program runner's
   bare `version` is what it runs — a make target, a script, an npm package — unless `version`
   is one of its subcommands);
6. a program none of the above knows, whose first word after it is a read verb (`acme show 12`,
   `brew list`, `nft list ruleset`), or whose read verb follows up to two group names that are no
   verb (`aws s3 ls`, `gcloud compute instances list`, `aws ec2 describe-instances`): read-only
   unless it is a known writer or program runner or a word asks it to change something
   (`--fix`, `--write`, `--apply`, `--delete`, `--force`, `-o` …);
7. everything else mutating: the known writers (`rm`, `mv`, `cp`, `mkdir`, `touch`, `chmod`,
   `tee`, `kill` …) and program runners (`python`, `node`, `make`, `npm run`, `npx` …) by name,
   anything unknown as unknown.

A word the shell only knows when it runs (`$x`, `$(…)`, `{a,b}`) is harmless as an operand of a
command that has no option that writes; where options decide (`sed`, `find`, `sort`, `git`,
…), such a word could be the option, so the command is mutating.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_admin import ADMIN_TOOLS, openssl
from replaylab.safety.shell_checkers import CHECKER_COMMANDS
from replaylab.safety.shell_environment import environment_change
from replaylab.safety.shell_evaluated import builtin_evaluates
from replaylab.safety.shell_http import HTTP_CLIENTS
from replaylab.safety.shell_node import NODE_RUNNERS, node_verdict
from replaylab.safety.shell_openclaw import after_global_options, openclaw_cli
from replaylab.safety.shell_programs import (
    CHANGE_WORDS,
    DASHED_READ_VERBS,
    GET_SUBCOMMANDS_THAT_WRITE,
    MAX_COMMAND_GROUPS,
    OUTPUT_FORMATS,
    PS_READ_CMDLETS,
    PS_READ_VERBS,
    READ_ONLY,
    READ_VERBS,
    RUNNER_FAMILIES,
    RUNNER_VERSION_FLAGS,
    RUNNER_VERSION_SUBCOMMANDS,
    RUNNERS,
    SETTINGS_GROUPS,
    SHELL_BUILTIN_WRITERS,
    SSH_FLAGS,
    SSH_READ_SETTINGS,
    SSH_VALUE_OPTIONS,
    SUBCOMMAND_CHANGE_VERBS,
    WRAPPER_VALUE_OPTIONS,
    WRITERS,
)
from replaylab.safety.shell_python import python_verdict
from replaylab.safety.shell_readers import READERS
from replaylab.safety.shell_redis import redis_cli
from replaylab.safety.shell_sql import sqlite3_command
from replaylab.safety.shell_sql_servers import mysql, psql
from replaylab.safety.shell_subcommands import SUBCOMMANDS
from replaylab.safety.shell_words import (
    PLAIN_READ,
    Inner,
    Word,
    dynamic,
    known_values,
    long_option,
    only_version_or_help,
    read,
    runs_script,
)
from replaylab.safety.shell_wrapper_options import after_options, elevated, timeout_signal_dumps_core, xargs_replace
from replaylab.safety.verb_words import CHANGE_VERBS, CHANGE_VERBS_IN_VERB_POSITION


def command_verdict(words: Sequence[Word], inner: Inner, stdin: str | None = None) -> ShellVerdict:
    """Whether one simple command (its words, the executable first) only reads; `inner` reads a
    script a wrapper runs (`bash -c`); `stdin` is its standard input when a here-document or
    here-string gives it literally, which an interpreter reading its program there runs
    (`python3 - <<'EOF'`, `sqlite3 db <<< 'SELECT …'`, `bash -s <<'EOF'`)."""
    name = words[0].value
    if name is None:
        return ShellVerdict(False, f"the program is an expansion (`{word(words[0].text)}`), known only when it runs")
    args = list(words[1:])
    if "/" in name and not _FIXED_PROGRAM.match(name):
        return ShellVerdict(False, f"`{word(name)}` runs the program file at a path the working directory decides")
    base = name.rsplit("/", 1)[-1] if "/" in name and not name.endswith("/") else name
    lower = base.lower()
    wrapped = _wrapper(lower, args, inner, stdin)
    if wrapped is not None:
        return wrapped
    client = QUERY_CLIENTS.get(lower)
    if client is not None:
        return client(base, args, stdin)
    special = _SPECIAL.get(lower)
    if special is not None:
        return special(lower, args, inner)
    if lower == "set" and _exports_all(args):
        return ShellVerdict(
            False, "`set -a` / `set -k` exports the variables the line sets (or names after a command) to what runs"
        )
    if lower in READ_ONLY:
        evaluated = builtin_evaluates(lower, args)
        if evaluated is not None:
            return evaluated
        return read(base)
    if _is_powershell_read(lower):
        return read(base, "PowerShell read verb")
    if lower in WRITERS:
        if _only_help_or_version_flag(args) and lower not in SHELL_BUILTIN_WRITERS:
            return read(f"{base} {args[0].value}")
        return ShellVerdict(False, f"`{word(base)}` {WRITERS[lower]}")
    if _PYTHON.fullmatch(lower) or lower == "uv":
        values = known_values(args)
        pip_at = _pip_words_at(lower, values) if values is not None else None
        if values is not None and pip_at is not None:  # `python -m pip …`, `uv pip …`: pip's subcommands decide
            return SUBCOMMANDS["pip"](f"{base} {' '.join(values[:pip_at])}", args[pip_at:], inner)
        scripted = python_verdict(base, values, stdin) if values is not None and lower != "uv" else None
        if scripted is not None:
            return scripted
    if lower in NODE_RUNNERS:
        values = known_values(args)
        scripted = node_verdict(base, values, stdin) if values is not None else None
        if scripted is not None:
            return scripted
    if lower in RUNNERS or lower.startswith("python") or RUNNER_FAMILIES.fullmatch(lower):
        if _only_help_or_version_flag(args, RUNNER_VERSION_FLAGS.get(lower)) or (
            lower in RUNNER_VERSION_SUBCOMMANDS and only_version_or_help(args)
        ):
            return read(f"{base} {args[0].value}")
        return ShellVerdict(False, f"`{word(base)}` runs programs whose effects the command does not show")
    if "/" in name:
        return ShellVerdict(False, f"`{word(name)}` runs a program file the grammar does not know")
    if only_version_or_help(args):
        return read(f"{base} {args[0].value}")
    return _unknown_program(base, args)


#: a program named by a path that does not depend on the working directory: an absolute one (not
#: `/proc/self/cwd/…` or `/dev/fd/…`), or one under `~` (the home folders agents keep their tools in).
#: `./ls`, `bin/cat`, `~+/ls` (`$PWD`) and `~-/ls` (`$OLDPWD`) run whatever file is there, under a
#: reader's name or not, as `PATH=.:$PATH ls` does
_FIXED_PROGRAM = re.compile(r"(?!/proc/|/dev/)/|~(?![+-])[A-Za-z0-9._-]*/")


def _exports_all(args: Sequence[Word]) -> bool:
    """`set -a`, `set -o allexport` (or an option only the running shell knows); `set -k`, `set -o
    keyword`: every `NAME=value` word of a command, wherever it stands, goes into its environment
    (`set -k; git status GIT_CONFIG_COUNT=1 …` runs a configured program), while the grammar reads it
    as the command's operand."""
    values = [a.value for a in args]
    if any(v is None for v in values):
        return True
    shown = [v for v in values if v is not None]
    if "allexport" in shown or "keyword" in shown:
        return True
    return any(v.startswith("-") and not v.startswith("--") and ("a" in v or "k" in v) for v in shown)


def _only_help_or_version_flag(args: Sequence[Word], own_flag: str | None = None) -> bool:
    """One flag asking for the version or the help: never a bare word, which a runner runs (a
    target, a script, a package) and a writer takes as its operand."""
    # a word only known when the shell runs is no flag (`rm "$f"`, `python3 "$s"`): it must never
    # match an absent `own_flag`
    return (
        len(args) == 1 and args[0].value is not None and args[0].value in ("--version", "-V", "--help", "-h", own_flag)
    )


#: a Python interpreter by name (`python`, `python3`, `python3.12`)
_PYTHON = re.compile(r"python[0-9.]*")
#: a command group's name (`s3`, `compute`, `instances`): a plain lower-case word
_GROUP_NAME = re.compile(r"[a-z][a-z0-9_]*")
_NOT_GROUPS = CHANGE_VERBS | CHANGE_VERBS_IN_VERB_POSITION


def _openclaw(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """The agent's own CLI by the commands its pinned release documents; one it does not document
    (an older release's) as any program the grammar does not know, after the global options."""
    values = known_values(args)
    if values is None:
        return dynamic(name)
    decided = openclaw_cli(name, values)
    if decided is not None:
        return decided
    rest = after_global_options(values) or []
    return _unknown_program(name, args[len(args) - len(rest) :])


def _unknown_program(base: str, args: Sequence[Word]) -> ShellVerdict:
    verb = _read_verb(args)
    if verb is None or base.startswith("-"):  # `-o FILE ls`: an option a wrapper left (`time -o`)
        return ShellVerdict(False, f"`{word(base)}` is not a command the read-only grammar knows")
    asked = _asked_change(args)
    if asked is not None:
        return ShellVerdict(False, f"`{word(base)} {verb}` with `{word(asked)}`, which asks for a change")
    if any(a.value is None for a in args):
        return ShellVerdict(False, f"`{word(base)} {verb}` with a word known only when the shell runs")
    *groups, last = verb.split(" ")
    if last in GET_SUBCOMMANDS_THAT_WRITE:
        return ShellVerdict(
            False, f"`{word(base)} {verb}` writes a file (credentials into the kubeconfig, or an object)"
        )
    if last.startswith("get-") and not (groups and groups[-1] in SETTINGS_GROUPS):
        operand = _file_operand(args, verb)
        if operand is not None:
            return ShellVerdict(False, f"`{word(base)} {verb}` with an operand `{word(operand)}`, where it may write")
    return ShellVerdict(True, f"`{word(base)} {verb}`: a read verb of a program the grammar does not know")


def _asked_change(args: Sequence[Word]) -> str | None:
    """The first word asking for a change (`CHANGE_WORDS`), but `-o` / `--output` naming an output
    format (`az vm list -o table`, `aws … --output json`): that only chooses how to print."""
    values = [a.value or "" for a in args]
    for at, value in enumerate(values):
        option, _, attached = value.partition("=")
        if option not in CHANGE_WORDS:
            continue
        if option in ("-o", "--output"):
            given = attached if "=" in value else (values[at + 1] if at + 1 < len(values) else "")
            if given.lower() in OUTPUT_FORMATS:
                continue
        return value
    return None


def _file_operand(args: Sequence[Word], verb: str) -> str | None:
    """A word after a dashed `get-…` subcommand that is no option's value: an operand, such as
    the file `aws s3api get-object … out.txt` writes its result to. An option's value follows its
    option; a word right after the subcommand, after another such word, or after a `--no-…` flag
    is an operand."""
    values = [a.value or "" for a in args]
    start = next(at for at, v in enumerate(values) if v.lower() == verb.rsplit(" ", 1)[-1]) + 1
    previous = ""
    for value in values[start:]:
        if not value.startswith("-") and (not previous.startswith("-") or previous.startswith("--no-")):
            return value
        previous = value if "=" not in value else ""
    return None


def _read_verb(args: Sequence[Word]) -> str | None:
    """The read verb of an unknown program's command line, with the group names before it: its
    first word that is not an option, or the first after up to `MAX_COMMAND_GROUPS` group names
    (`aws s3 ls`, `gcloud compute instances list`, `brew services list`), before any option; a read
    verb prefixed to a dashed subcommand counts too (`aws ec2 describe-instances`), `get` after a
    group (`vault kv get x`, `openclaw config get x`), and `get-…` after a settings group (`gcloud
    config get-value project`). None when a word before it is no plain name, or
    names a change (`foo deploy list`) or a program that writes or runs others."""
    words = [a.value for a in args if a.value is None or not a.value.startswith("-")]
    # group names come first, before any option: an option's value is no group (`--message status`)
    leading = next((at for at, a in enumerate(args) if a.value is None or a.value.startswith("-")), len(args))
    for at, value in enumerate(words[: max(1, min(leading, MAX_COMMAND_GROUPS + 1))]):
        if value is None:
            return None
        lower = value.lower()
        # `get` after a group fetches one of its things (`ntn pages get ID`, `aws sts
        # get-caller-identity`); first, it may download (`dvc get`)
        grouped_get = at > 0 and lower.split("-", 1)[0] == "get"
        if lower in READ_VERBS or lower.split("-", 1)[0] in DASHED_READ_VERBS or grouped_get:
            # a service named like a read verb (`aws logs`) is a group: its dashed subcommand decides
            if any(_changes(later) for later in words[at + 1 : leading]):
                return None
            return " ".join(w.lower() for w in words[: at + 1] if w is not None)
        if not _GROUP_NAME.fullmatch(lower) or lower in _NOT_GROUPS or lower in WRITERS or lower in RUNNERS:
            return None
    return None


def _changes(subcommand: str | None) -> bool:
    """Whether a word after a read verb is a command that changes something: a dashed one starting
    with a verb that does (`delete-log-group`, `put-retention-policy`), or a verb that changes
    something wherever it stands (`foo info update`); any other word is what it shows (`acme show
    web-api`, `brew info node`)."""
    lower = (subcommand or "").lower()
    first, dashed, _ = lower.partition("-")
    if not dashed:
        return lower in CHANGE_VERBS
    return first in _NOT_GROUPS or first in SUBCOMMAND_CHANGE_VERBS


# ---------------------------------------------------------------- wrappers


def _wrapper(name: str, args: list[Word], inner: Inner, stdin: str | None) -> ShellVerdict | None:
    if name in ("bash", "sh", "zsh", "dash", "ksh"):
        return _shell_c(name, args, inner, stdin)
    if name in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
        return _powershell(name, args, inner)
    if name not in WRAPPER_VALUE_OPTIONS:
        return None
    if name == "command" and args and args[0].value in ("-v", "-V"):
        return read("command -v")
    rest = after_options(name, args)
    if rest is None:
        return dynamic(name)
    if name == "env":
        while rest and rest[0].value is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", rest[0].value, re.S):
            variable, _, value = rest[0].value.partition("=")
            changed = environment_change(variable, Word(value, value), inner)
            if changed is not None:
                return changed
            rest = rest[1:]
    if name == "timeout":
        if timeout_signal_dumps_core(args[: len(args) - len(rest)]):
            return ShellVerdict(False, "`timeout -s` sends a signal that dumps core (a `core` file written)")
        rest = rest[1:]  # the duration
    own = args[: len(args) - len(rest)]  # `time`'s own options, not those of the command it times
    if name == "time" and any(
        re.fullmatch(r"-[A-Za-z]*o.*", a.value or "") or long_option(a.value or "", ("--output",)) for a in own
    ):
        return ShellVerdict(False, "`time -o` writes a file")
    if name in ("sudo", "doas"):
        own_verdict = elevated(name, [a.value or "" for a in args[: len(args) - len(rest)]], bool(rest))
        if own_verdict is not None:
            return own_verdict
    if not rest:
        if name in ("env", "xargs"):
            return read(name)  # `env` prints the environment, `xargs` alone runs echo
        return ShellVerdict(False, f"`{name}` without the command it runs")
    if name == "xargs":
        # `xargs` turns its standard input into the command's words: the command reads none of
        # it, but those words may be its options (`echo -delete | xargs find .`), and with `-I R`
        # every word holding R becomes the line read (`xargs -I cat sh -c cat`)
        replace = xargs_replace(args[: len(args) - len(rest)])
        if replace is not None:
            rest = [Word(None, w.text) if w.value is None or replace in w.value else w for w in rest]
        else:
            rest = [*rest, Word(None, "<the words xargs reads>")]
        return command_verdict(rest, inner, None)
    return command_verdict(rest, inner, stdin)


def _shell_c(name: str, args: list[Word], inner: Inner, stdin: str | None = None) -> ShellVerdict:
    """`bash -c 'script'` and `bash -n`; `bash [-s] <<'EOF'` runs the script its standard input
    gives, which decides like `-c`'s."""
    values = known_values(args)
    if values is None:
        return dynamic(name)
    noexec = from_stdin = False
    operand: int | None = None
    index = 0
    while index < len(values):
        value = values[index]
        if value == "-c" or (value.startswith("-") and not value.startswith("--") and "c" in value[1:]):
            if index + 1 >= len(values):
                return ShellVerdict(False, f"`{name} -c` without a script")
            return inner(values[index + 1])
        if value in ("--", "-"):  # the end of the options: a script file follows, unless `-s`
            operand = index + 1 if index + 1 < len(values) else None
            break
        if not value.startswith("-"):
            operand = index
            break
        short = not value.startswith("--")
        noexec = noexec or (short and "n" in value[1:])
        from_stdin = from_stdin or (short and "s" in value[1:])
        index += 2 if short and value.endswith("o") else 1  # `-o pipefail`, `-euo pipefail`
    if values in (["--version"], ["--help"]):  # `-h` is a shell's hashall option, not its help
        return read(f"{name} {values[0]}")
    if noexec:  # `-n` reads the script's commands without running them: a syntax check
        return read(f"{name} -n")
    if stdin is not None and (from_stdin or operand is None):
        return runs_script(f"{name} (the script on standard input)", stdin, inner)
    return ShellVerdict(False, f"`{name}` runs a script file")


def _powershell(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    values = known_values(args)
    if values is None:
        return dynamic(name)
    index = 0
    while index < len(values):
        option = values[index].lower()
        if option in ("-command", "-c", "/c"):
            script = " ".join(values[index + 1 :])
            return inner(script) if script else ShellVerdict(False, f"`{name} -Command` without a script")
        if option in ("-noprofile", "-noninteractive", "-nologo", "-mta", "-sta"):
            index += 1
        elif option in ("-executionpolicy", "-outputformat", "-inputformat", "-windowstyle"):
            index += 2
        else:
            break
    return ShellVerdict(False, f"`{name}` runs a script whose commands the grammar cannot see")


# ---------------------------------------------------------------- readers that run commands


@dataclass(frozen=True)
class _Runner:
    """A reader one of whose actions runs a command: the flags that start it, where its words end
    (`ends`; with `to_the_end`, at the last word when nothing ends them), and the actions that
    write."""

    flags: frozenset[str]
    ends: Callable[[list[str], int], bool]
    to_the_end: bool
    writes: frozenset[str] = frozenset()
    #: a cluster of flags that ends in a running flag (`fd -HIx rm`): refused whole
    cluster: str | None = None


def _running(runner: _Runner) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """The reader reads unless an action writes; a command it runs (`find -exec grep -l x {} ;`,
    `fd -x wc -l`) is checked like any other, with `{}` as the path it reads."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        if values is None:
            return dynamic(name)
        ran_reads: list[str] = []
        index = 0
        while index < len(values):
            value = values[index]
            if value in runner.writes:
                return ShellVerdict(False, f"`{name} {value}` writes")
            if runner.cluster is not None and value not in runner.flags and re.fullmatch(runner.cluster, value):
                return ShellVerdict(False, f"`{name} {word(value)}` runs a command")
            if value.split("=", 1)[0] in runner.flags:
                if value not in runner.flags:
                    return ShellVerdict(False, f"`{name} {word(value)}` runs a command")
                fallback = len(values) if runner.to_the_end else None
                end = next((k for k in range(index + 1, len(values)) if runner.ends(values, k)), fallback)
                if end is None or end == index + 1:
                    ended = "" if runner.to_the_end else " ended by `;` or `+`"
                    return ShellVerdict(False, f"`{name} {value}` without a command{ended}")
                ran = command_verdict(args[index + 1 : end], inner)
                if not ran.read_only:
                    return ShellVerdict(False, f"`{name} {value}` runs a command that is not read-only: {ran.reason}")
                ran_reads.append(f"{value} {ran.reason.removeprefix(PLAIN_READ)}")
                index = end + 1
                continue
            index += 1
        return ShellVerdict(True, " ".join([f"{PLAIN_READ}`{word(name)}`", *dict.fromkeys(ran_reads)]))

    return decide


def _ends_find_command(values: list[str], at: int) -> bool:
    return values[at] == ";" or (values[at] == "+" and values[at - 1] == "{}")


#: `find`: the actions that run the command after them, up to a `;` or (after `{}`) a `+`
_FIND = _Runner(
    flags=frozenset({"-exec", "-execdir", "-ok", "-okdir"}),
    ends=_ends_find_command,
    to_the_end=False,
    writes=frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}),
)
#: `fd`: `-x` / `-X` run every word after them, up to a `;`
_FD = _Runner(
    flags=frozenset({"-x", "--exec", "-X", "--exec-batch"}),
    ends=lambda values, at: values[at] == ";",
    to_the_end=True,
    cluster=r"-[HIusigFalLp01q]*[xX].*",  # fd's flags that take no value, then `-x` / `-X`
)


def _ssh(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """`ssh [options] HOST COMMAND…`: the remote command, as the remote shell reads the words
    joined by spaces, decides; options that forward ports, run a local command, read a
    configuration, write a log or share the connection make it mutating, and so does a session
    with no command (a shell)."""
    values = known_values(args)
    if values is None:
        return dynamic(name)
    index = 0
    while index < len(values) and values[index].startswith("-") and values[index] != "-":
        option = values[index]
        if option == "--":
            index += 1
            break
        attached = len(option) > 2 and (option[:2] == "-o" or option[:2] in SSH_VALUE_OPTIONS)  # `-p2222`
        if option[:2] == "-o":
            setting = option[2:] if attached else values[index + 1] if index + 1 < len(values) else ""
            key = re.split(r"[=\s]", setting.strip(), maxsplit=1)[0].lower()
            if key not in SSH_READ_SETTINGS:
                return ShellVerdict(False, f"`ssh -o {word(setting)}` may run a local command or forward a port")
            index += 1 if attached else 2
            continue
        if option in SSH_VALUE_OPTIONS or attached:
            index += 1 if attached else 2
            continue
        if not set(option[1:]) <= SSH_FLAGS:
            return ShellVerdict(False, f"`ssh {word(option)}` forwards, runs a local command or writes a file")
        index += 1
    command = values[index + 1 :]
    if index >= len(values) or not command:
        return ShellVerdict(False, "`ssh` without a command opens a shell on the other host")
    return runs_script("ssh", " ".join(command), inner)  # the remote shell reads the words joined


#: the commands whose standard input decides as much as their words: the database clients (their
#: query, on the command line or on standard input the command shows) and `openssl` (`s_client`
#: sends its input to the server)
QUERY_CLIENTS: dict[str, Callable[[str, Sequence[Word], str | None], ShellVerdict]] = {
    "sqlite3": sqlite3_command,
    "psql": psql,
    "mysql": mysql,
    "mariadb": mysql,
    "redis-cli": redis_cli,
    "valkey-cli": redis_cli,
    "openssl": openssl,
}


def _pip_words_at(program: str, values: list[str]) -> int | None:
    """Where pip's own words start in `python [-I …] -m pip WORDS` or `uv pip WORDS`; None for
    any other use."""
    if program == "uv":
        return 1 if values[:1] == ["pip"] else None
    index = 0
    while index < len(values) and values[index].startswith("-") and values[index] not in ("-m", "-c"):
        index += 1
    return index + 2 if values[index : index + 2] == ["-m", "pip"] else None


def _is_powershell_read(lower: str) -> bool:
    return lower in PS_READ_CMDLETS or (lower.startswith(PS_READ_VERBS) and "-" in lower and len(lower) > 5)


_SPECIAL: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    **READERS,
    **ADMIN_TOOLS,
    "openclaw": _openclaw,
    **HTTP_CLIENTS,
    **SUBCOMMANDS,
    **CHECKER_COMMANDS,
    "find": _running(_FIND),
    "fd": _running(_FD),
    "fdfind": _running(_FD),
    "ssh": _ssh,
}
