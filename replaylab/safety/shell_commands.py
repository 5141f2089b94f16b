"""One simple command of the read-only shell grammar (`shell_grammar.py`): its executable and
words decide whether it only reads.

Decided here, in this order:

1. **wrappers** run another command, which is what is checked: `env [NAME=value…] cmd`,
   `timeout D cmd`, `time`, `nice`, `command -p cmd`, `xargs [opts] cmd` (no command: `echo`),
   `bash|sh|zsh -c 'script'`, `powershell|pwsh -Command 'script'`, and the command `find -exec`
   runs;
2. **read-only commands** (`READ_ONLY`), some with the options that make them write refused
   (`sort -o`, `uniq IN OUT`, `find -delete|-fprint`, `sed -i`, `sed … w file`, `awk` printing to
   a file or a pipe, `date -s`, `hostname NAME`, `tar` other than `-t`, `tree -o`, `less -o`,
   `ss -K`, `history -w`, `file -C`, `ack --pager`; what `fd -x` runs is checked);
3. **subcommands** of the tools agents run most: git (`status`, `log`, `diff`, `show`, `branch`
   and `tag` as lists, `remote -v`, `stash list`, `config --get` …; never `-c`, never
   `--output`), npm / pnpm / yarn (`list`, `view`, `outdated`, `why` …), pip (`list`, `show`,
   `freeze`), docker, kubectl, gh (`gh api` as a GET), go, cargo, systemctl, apt / dpkg, and the
   read forms of `xxd`, `yq`, `unzip`, `top`;
4. **PowerShell's read verbs**: `Get-*`, `Test-*`, `Select-*`, `Measure-*`, `Format-*`,
   `Compare-*`, `Group-*`, `Sort-Object`, `Where-Object`, `ConvertTo-*`, `ConvertFrom-*`,
   `Out-String`, `Out-Host`, `Out-Null`, `Write-Output`, `Write-Host`, `Resolve-Path`,
   `Split-Path`, `Join-Path` (never `Out-File`, `Tee-Object`, `Set-*`, `New-*`, `Remove-*` …);
5. `X --version` / `X --help` alone, for any program named by a bare word (a program runner's
   bare `version` is what it runs — a make target, a script, an npm package — unless `version`
   is one of its subcommands);
6. a program none of the above knows, whose first word after it is a read verb (`bd show 12`,
   `terraform show`, `helm list`): read-only unless it is a known writer or program runner or a
   word asks it to change something (`--fix`, `--write`, `--apply`, `--delete`, `--force`, `-o` …);
7. everything else mutating: the known writers (`rm`, `mv`, `cp`, `mkdir`, `touch`, `chmod`,
   `tee`, `curl`, `kill` …) and program runners (`python`, `node`, `make`, `npm run`, `npx`,
   `sudo`, `ssh` …) by name, anything unknown as unknown.

A word the shell only knows when it runs (`$x`, `$(…)`, `{a,b}`) is harmless as an operand of a
command that has no option that writes; where options decide (`sed`, `find`, `sort`, `git`,
…), such a word could be the option, so the command is mutating.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_programs import (
    APT_READ,
    AWK_WRITES,
    CARGO_READ,
    CHANGE_WORDS,
    DOCKER_GROUPS,
    DOCKER_READ,
    GH_API_BODY_OPTIONS,
    GH_API_FLAGS,
    GH_API_VALUE_OPTIONS,
    GH_EXTRA,
    GH_ISSUE,
    GH_PR,
    GIT_BRANCH_CHANGES,
    GIT_BRANCH_LISTS,
    GIT_CONFIG_READ_FLAGS,
    GIT_CONFIG_READS,
    GIT_GLOBAL_FLAGS,
    GIT_GLOBAL_VALUE,
    GIT_PAIRS,
    GIT_READ,
    GIT_TAG_CHANGES,
    GIT_TAG_LISTS,
    GO_READ,
    KUBECTL_READ,
    NPM_READ,
    PIP_READ,
    PNPM_READ,
    PS_READ_CMDLETS,
    PS_READ_VERBS,
    READ_ONLY,
    READ_VERBS,
    RUNNER_VERSION_FLAGS,
    RUNNER_VERSION_SUBCOMMANDS,
    RUNNERS,
    SED_COMMAND,
    SHELL_BUILTIN_WRITERS,
    SYSTEMCTL_READ,
    UNZIP_READS,
    WRAPPER_VALUE_OPTIONS,
    WRITERS,
    XXD_VALUE_OPTIONS,
    YARN_READ,
)
from replaylab.upstream import openclaw_2026_9_6 as OC96


@dataclass(frozen=True)
class Word:
    """One word of a command: its value as the program receives it, None when only the running
    shell knows it (an expansion), and its source text."""

    value: str | None
    text: str


Inner = Callable[[str], ShellVerdict]


def command_verdict(words: Sequence[Word], inner: Inner) -> ShellVerdict:
    """Whether one simple command (its words, the executable first) only reads; `inner` reads a
    script a wrapper runs (`bash -c`)."""
    name = words[0].value
    if name is None:
        return ShellVerdict(False, f"the program is an expansion (`{word(words[0].text)}`), known only when it runs")
    args = list(words[1:])
    base = name.rsplit("/", 1)[-1] if "/" in name and not name.endswith("/") else name
    lower = base.lower()
    wrapped = _wrapper(lower, args, inner)
    if wrapped is not None:
        return wrapped
    special = _SPECIAL.get(lower)
    if special is not None:
        return special(lower, args, inner)
    if lower in READ_ONLY:
        return _read(base)
    if _is_powershell_read(lower):
        return _read(base, "PowerShell read verb")
    if lower in WRITERS:
        if _only_help_or_version_flag(args) and lower not in SHELL_BUILTIN_WRITERS:
            return _read(f"{base} {args[0].value}")
        return ShellVerdict(False, f"`{word(base)}` {WRITERS[lower]}")
    if lower in RUNNERS or lower.startswith("python"):
        if _only_help_or_version_flag(args, RUNNER_VERSION_FLAGS.get(lower)) or (
            lower in RUNNER_VERSION_SUBCOMMANDS and _only_version_or_help(args)
        ):
            return _read(f"{base} {args[0].value}")
        return ShellVerdict(False, f"`{word(base)}` runs programs whose effects the command does not show")
    if "/" in name:
        return ShellVerdict(False, f"`{word(name)}` runs a program file the grammar does not know")
    if _only_version_or_help(args):
        return _read(f"{base} {args[0].value}")
    return _unknown_program(base, args)


#: how the reason of a plain read-only command starts (the grammar lists such commands bare)
PLAIN_READ = "read-only command "


def _read(what: str, kind: str = PLAIN_READ.strip()) -> ShellVerdict:
    return ShellVerdict(True, f"{kind} `{word(what)}`")


def _only_version_or_help(args: Sequence[Word]) -> bool:
    return len(args) == 1 and args[0].value in ("--version", "-V", "--help", "-h", "version")


def _only_help_or_version_flag(args: Sequence[Word], own_flag: str | None = None) -> bool:
    """One flag asking for the version or the help: never a bare word, which a runner runs (a
    target, a script, a package) and a writer takes as its operand."""
    return len(args) == 1 and args[0].value in ("--version", "-V", "--help", "-h", own_flag)


def _unknown_program(base: str, args: Sequence[Word]) -> ShellVerdict:
    first = next((a for a in args if a.value is None or not a.value.startswith("-")), None)
    verb = first.value.lower() if first is not None and first.value is not None else None
    if verb not in READ_VERBS:
        return ShellVerdict(False, f"`{word(base)}` is not a command the read-only grammar knows")
    asked = next(
        (a.value for a in args if a.value in CHANGE_WORDS or (a.value or "").split("=", 1)[0] in CHANGE_WORDS), None
    )
    if asked is not None:
        return ShellVerdict(False, f"`{word(base)} {verb}` with `{word(asked)}`, which asks for a change")
    if any(a.value is None for a in args):
        return ShellVerdict(False, f"`{word(base)} {verb}` with a word known only when the shell runs")
    return ShellVerdict(True, f"`{word(base)} {verb}`: a read verb of a program the grammar does not know")


OptionCheck = Callable[[str, list[str]], ShellVerdict]


def _static(check: OptionCheck) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """A command whose options decide: its words must all be known before they are read (an
    expansion could be the option that writes)."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = _values(args)
        return _dynamic(name) if values is None else check(name, values)

    return decide


def _values(args: Sequence[Word]) -> list[str] | None:
    """The words' values, or None when one is an expansion (then options cannot be read)."""
    values = [a.value for a in args]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def _dynamic(name: str) -> ShellVerdict:
    return ShellVerdict(
        False, f"`{word(name)}` with a word known only when the shell runs (it could be an option that writes)"
    )


# ---------------------------------------------------------------- wrappers


def _wrapper(name: str, args: list[Word], inner: Inner) -> ShellVerdict | None:
    if name in ("bash", "sh", "zsh", "dash", "ksh"):
        return _shell_c(name, args, inner)
    if name in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
        return _powershell(name, args, inner)
    if name not in WRAPPER_VALUE_OPTIONS:
        return None
    if name == "command" and args and args[0].value in ("-v", "-V"):
        return _read("command -v")
    rest = _after_options(name, args)
    if rest is None:
        return _dynamic(name)
    if name == "env":
        while rest and rest[0].value is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", rest[0].value, re.S):
            rest = rest[1:]
    if name == "timeout":
        rest = rest[1:]  # the duration
    if name == "time" and any(a.value in ("-o", "--output") for a in args):
        return ShellVerdict(False, "`time -o` writes a file")
    if not rest:
        if name in ("env", "xargs"):
            return _read(name)  # `env` prints the environment, `xargs` alone runs echo
        return ShellVerdict(False, f"`{name}` without the command it runs")
    return command_verdict(rest, inner)


def _after_options(name: str, args: list[Word]) -> list[Word] | None:
    takes_value = WRAPPER_VALUE_OPTIONS[name]
    index = 0
    while index < len(args):
        value = args[index].value
        if value is None:
            return None
        if value == "--":
            return args[index + 1 :]
        if not value.startswith("-") or value == "-":
            return args[index:]
        if name == "env" and value in ("-S", "--split-string") or value.startswith("--split-string="):
            return None
        index += 2 if value in takes_value else 1
    return []


def _shell_c(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    values = _values(args)
    if values is None:
        return _dynamic(name)
    for index, value in enumerate(values):
        if value == "-c" or (value.startswith("-") and not value.startswith("--") and "c" in value[1:]):
            if index + 1 >= len(values):
                return ShellVerdict(False, f"`{name} -c` without a script")
            return inner(values[index + 1])
        if not value.startswith("-"):
            break
    if values in (["--version"], ["--help"]):  # `-h` is a shell's hashall option, not its help
        return _read(f"{name} {values[0]}")
    return ShellVerdict(False, f"`{name}` runs a script file")


def _powershell(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    values = _values(args)
    if values is None:
        return _dynamic(name)
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


# ---------------------------------------------------------------- commands with options that write


def _sort(name: str, values: list[str]) -> ShellVerdict:
    if any(v in ("-o", "--output") or v.startswith("--output=") or re.fullmatch(r"-[^-]*o.*", v) for v in values):
        return ShellVerdict(False, "`sort -o` writes a file")
    if any(v.split("=", 1)[0] == "--compress-program" for v in values):
        return ShellVerdict(False, "`sort --compress-program` runs a program")
    return _read(name)


def _refusing(options: frozenset[str], what: str) -> OptionCheck:
    """A reader with options that write, run a program or change the system: any of `options`
    (`--long` also as `--long=value`, a short one also inside a cluster) makes it mutating."""
    longs = {o for o in options if o.startswith("--")}
    shorts = "".join(o[1] for o in options if not o.startswith("--"))

    def check(name: str, values: list[str]) -> ShellVerdict:
        for value in values:
            if value.split("=", 1)[0] in longs or (
                shorts and value.startswith("-") and not value.startswith("--") and any(c in shorts for c in value[1:])
            ):
                return ShellVerdict(False, f"`{word(name)} {word(value)}` {what}")
        return _read(name)

    return check


def _uniq(name: str, values: list[str]) -> ShellVerdict:
    operands = [v for v in values if not v.startswith("-") or v == "-"]
    if len(operands) > 1:
        return ShellVerdict(False, "`uniq IN OUT` writes its second operand")
    return _read(name)


@dataclass(frozen=True)
class _Runner:
    """A reader one of whose actions runs a command: the flags that start it, where its words end
    (`ends`; with `to_the_end`, at the last word when nothing ends them), and the actions that
    write."""

    flags: frozenset[str]
    ends: Callable[[list[str], int], bool]
    to_the_end: bool
    writes: frozenset[str] = frozenset()


def _running(runner: _Runner) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """The reader reads unless an action writes; a command it runs (`find -exec grep -l x {} ;`,
    `fd -x wc -l`) is checked like any other, with `{}` as the path it reads."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = _values(args)
        if values is None:
            return _dynamic(name)
        ran_reads: list[str] = []
        index = 0
        while index < len(values):
            value = values[index]
            if value in runner.writes:
                return ShellVerdict(False, f"`{name} {value}` writes")
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
    flags=frozenset({"-x", "--exec", "-X", "--exec-batch"}), ends=lambda values, at: values[at] == ";", to_the_end=True
)


def _sed(name: str, values: list[str]) -> ShellVerdict:
    scripts: list[str] = []
    explicit = False
    index = 0
    while index < len(values):
        value = values[index]
        if value in ("-i", "--in-place") or value.startswith("--in-place=") or re.fullmatch(r"-[a-zA-Z]*i.*", value):
            return ShellVerdict(False, "`sed -i` edits files in place")
        if value in ("-f", "--file") or value.startswith("--file="):
            return ShellVerdict(False, "`sed -f` runs a script file the command does not show")
        if value in ("-e", "--expression"):
            if index + 1 < len(values):
                scripts.append(values[index + 1])
            explicit = True
            index += 2
            continue
        if value.startswith("--expression="):
            scripts.append(value.split("=", 1)[1])
            explicit = True
        elif not value.startswith("-") and not explicit and not scripts:
            scripts.append(value)
        index += 1
    if not scripts:
        return ShellVerdict(False, "`sed` without a script it can read")
    for script in scripts:
        if not _sed_reads(script):
            return ShellVerdict(False, f"a sed script other than print / delete / substitute (`{word(script)}`)")
    return _read("sed")


def _sed_reads(script: str) -> bool:
    """Every command of the script prints, deletes, quits or substitutes (no `w`, `e`, `r`)."""
    for part in re.split(r"[;\n]", script):
        if part.strip() and not SED_COMMAND.fullmatch(part):
            return False
    return True


def _awk(name: str, values: list[str]) -> ShellVerdict:
    program = None
    index = 0
    while index < len(values):
        value = values[index]
        if value in ("-f", "--file") or value.startswith("-f"):
            return ShellVerdict(False, f"`{name} -f` runs a program file the command does not show")
        if value in ("-i", "--include") and index + 1 < len(values) and values[index + 1] == "inplace":
            return ShellVerdict(False, f"`{name} -i inplace` edits files")
        if value in ("-v", "-F", "--assign", "--field-separator"):
            index += 2
            continue
        if not value.startswith("-"):
            program = value
            break
        index += 1
    if program is None:
        return ShellVerdict(False, f"`{name}` without a program it can read")
    if AWK_WRITES.search(program):
        return ShellVerdict(False, f"an {name} program that writes a file or runs a command (`{word(program)}`)")
    return _read(name)


def _rg(name: str, values: list[str]) -> ShellVerdict:
    """OpenClaw's rule: `--pre`, `--pre-glob`, `--hostname-bin` run programs, `-z` reads archives."""
    for value in values:
        flag = value.lower().split("=", 1)[0]
        if flag in OC96.UNSAFE_RG_FLAGS:
            return ShellVerdict(False, f"`rg {word(flag)}` runs other programs or reads archives")
    return _read(name)


def _date(name: str, values: list[str]) -> ShellVerdict:
    if any(v in ("-s", "--set") or v.startswith("--set=") for v in values):
        return ShellVerdict(False, "`date -s` sets the clock")
    return _read(name)


def _hostname(name: str, values: list[str]) -> ShellVerdict:
    if any(not v.startswith("-") or v.split("=", 1)[0] in ("-F", "--file", "-b", "--boot") for v in values):
        return ShellVerdict(False, "`hostname NAME` sets the host name")
    return _read(name)


def _tar(name: str, values: list[str]) -> ShellVerdict:
    first = values[0] if values else ""
    if first in ("-t", "--list", "-tf", "-tzf", "-tvf", "-tzvf", "-tvzf") or re.fullmatch(r"-?t[vzjJf]*", first):
        return _read("tar -t")
    return ShellVerdict(False, "`tar` other than `-t` writes archives or extracts files")


# ---------------------------------------------------------------- subcommands


def _git(name: str, values: list[str]) -> ShellVerdict:
    index = 0
    while index < len(values):
        value = values[index]
        if value.startswith(("--config-env", "-c")):
            return ShellVerdict(False, "`git -c` sets configuration that can run programs")
        if value in GIT_GLOBAL_VALUE:
            index += 2
        elif value.split("=", 1)[0] in GIT_GLOBAL_VALUE or value in GIT_GLOBAL_FLAGS:
            index += 1
        elif value.startswith("-"):
            if value in ("--version", "--help"):
                return _read(f"git {value}")
            return ShellVerdict(False, f"`git {word(value)}` is not an option the read-only grammar knows")
        else:
            break
    if index >= len(values):
        return ShellVerdict(False, "`git` without a subcommand")
    sub, rest = values[index], values[index + 1 :]
    if any(v == "--output" or v.startswith("--output=") for v in rest):
        return ShellVerdict(False, f"`git {word(sub)} --output` writes a file")
    if sub in GIT_READ:
        if sub in ("grep",) and any(
            v in ("-O", "--open-files-in-pager") or v.startswith("--open-files-in-pager") for v in rest
        ):
            return ShellVerdict(False, "`git grep -O` opens files in a program")
        return _read(f"git {sub}")
    if sub == "branch":
        return _git_listing("branch", rest, GIT_BRANCH_CHANGES, GIT_BRANCH_LISTS)
    if sub == "tag":
        return _git_listing("tag", rest, GIT_TAG_CHANGES, GIT_TAG_LISTS)
    if sub == "config":
        if any(v in GIT_CONFIG_READS for v in rest) and not any(
            v
            in (
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--rename-section",
                "--remove-section",
                "-e",
                "--edit",
                "set",
                "unset",
            )
            for v in rest
        ):
            return _read("git config (read)")
        operands = [v for v in rest if v not in GIT_CONFIG_READ_FLAGS]
        if len(operands) == 1 and not operands[0].startswith("-"):
            return _read("git config NAME (read)")
        return ShellVerdict(False, "`git config` other than a read (`--get`, `--list`, one name) sets configuration")
    allowed = GIT_PAIRS.get(sub)
    if allowed is not None:
        first = next((v for v in rest if not v.startswith("-") or v in allowed), None)
        if first is None and sub in ("remote", "stash", "worktree", "submodule", "reflog", "notes"):
            if sub == "stash" and not rest:
                return ShellVerdict(False, "`git stash` saves and resets changes")
            return _read(f"git {sub}")
        if first in allowed:
            return _read(f"git {sub} {first}")
    return ShellVerdict(False, f"`git {word(sub)}` changes the repository or is not a subcommand the grammar knows")


def _git_listing(sub: str, rest: list[str], changes: frozenset[str], lists: frozenset[str]) -> ShellVerdict:
    change = next((v for v in rest if v in changes or v.split("=", 1)[0] in changes), None)
    if change is not None:
        return ShellVerdict(False, f"`git {sub} {change}` changes {sub}es")
    operands = [v for v in rest if not v.startswith("-")]
    if operands and not any(v in lists or v.split("=", 1)[0] in lists for v in rest):
        return ShellVerdict(False, f"`git {sub} NAME` creates a {sub}")
    return _read(f"git {sub} (list)")


def _subcommands(table: frozenset[str], *, configs: bool = False) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = _values(args)
        if values is None:
            return _dynamic(name)
        first = next((v for v in values if not v.startswith("-") or v in table), None)
        if first is None:
            return ShellVerdict(False, f"`{word(name)}` without a subcommand runs its default action")
        if configs and first == "config":
            second = next((v for v in values[values.index(first) + 1 :] if not v.startswith("-")), None)
            if second in ("get", "list", "ls"):
                return _read(f"{name} config {second}")
        if first == "version" and len(values) > 1 + values.index(first):
            return ShellVerdict(False, f"`{word(name)} version X` sets the version")
        if first not in table:
            return ShellVerdict(False, f"`{word(name)} {word(first)}` changes something or runs scripts")
        if first == "audit" and any(v in ("fix", "--fix") for v in values):
            return ShellVerdict(False, f"`{word(name)} audit fix` installs packages")
        return _read(f"{name} {first}")

    return decide


def _grouped(
    table: frozenset[str], groups: dict[str, frozenset[str]]
) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = _values(args)
        if values is None:
            return _dynamic(name)
        operands = [v for v in values if not v.startswith("-")]
        if _only_version_or_help(args):
            return _read(f"{name} {values[0]}")
        if not operands:
            return ShellVerdict(False, f"`{word(name)}` without a subcommand")
        first = operands[0]
        if first in groups:
            second = operands[1] if len(operands) > 1 else None
            if second in groups[first]:
                return _read(f"{name} {first} {second}")
            return ShellVerdict(False, f"`{word(name)} {word(first)} {word(second or '')}` changes something")
        if first in table:
            return _read(f"{name} {first}")
        return ShellVerdict(False, f"`{word(name)} {word(first)}` changes something or runs programs")

    return decide


def _gh(name: str, values: list[str]) -> ShellVerdict:
    if any(v == "--web" or v.startswith("--web=") or re.fullmatch(r"-[a-z]*w[a-z]*", v) for v in values):
        return ShellVerdict(False, "`gh … --web` opens a browser")
    area = values[0] if values else ""
    action = values[1] if len(values) > 1 else ""
    if area == "api":
        return _gh_api(values[1:])
    if area == "search" and action:
        return _read(f"gh search {action}")
    groups = {"pr": GH_PR, "issue": GH_ISSUE, **GH_EXTRA}
    if action in groups.get(area, frozenset()):
        return _read(f"gh {area} {action}")
    return ShellVerdict(False, f"`gh {word(area)} {word(action)}` changes something or calls the API")


def _gh_api(values: list[str]) -> ShellVerdict:
    """`gh api ENDPOINT` is a GET unless a method, a field or an input says otherwise (and
    `graphql` is a POST whose query may be a mutation); an option the grammar does not know
    could be either."""
    endpoints: list[str] = []
    index = 0
    while index < len(values):
        value = values[index]
        option, _, inline = value.partition("=")
        if option in ("-X", "--method"):
            method = inline if inline else values[index + 1] if index + 1 < len(values) else ""
            if method.upper() != "GET":
                return ShellVerdict(False, f"`gh api -X {word(method)}` changes something")
            index += 1 if inline else 2
        elif option in GH_API_BODY_OPTIONS:
            return ShellVerdict(False, f"`gh api {word(option)}` sends a body: a POST unless the method says GET")
        elif option in GH_API_VALUE_OPTIONS:
            index += 1 if inline else 2
        elif value in GH_API_FLAGS:
            index += 1
        elif value.startswith("-"):
            return ShellVerdict(False, f"`gh api {word(value)}` is not an option the read-only grammar knows")
        else:
            endpoints.append(value)
            index += 1
    if len(endpoints) != 1:
        return ShellVerdict(False, "`gh api` without one endpoint")
    if endpoints[0].strip("/").lower() == "graphql":
        return ShellVerdict(False, "`gh api graphql` is a POST whose query may change something")
    return _read("gh api (GET)")


def _xxd(name: str, values: list[str]) -> ShellVerdict:
    operands, index = [], 0
    while index < len(values):
        if values[index] in XXD_VALUE_OPTIONS:
            index += 2
            continue
        if not values[index].startswith("-") or values[index] == "-":
            operands.append(values[index])
        index += 1
    if len(operands) > 1:
        return ShellVerdict(False, "`xxd IN OUT` writes its output file")
    return _read(name)


def _yq(name: str, values: list[str]) -> ShellVerdict:
    for value in values:
        option = value.split("=", 1)[0]
        if option in ("--inplace", "--split-exp") or re.fullmatch(r"-[A-Za-z]*[is][A-Za-z]*", value):
            return ShellVerdict(False, f"`yq {word(value)}` writes files")
    return _read(name)


def _unzip(name: str, values: list[str]) -> ShellVerdict:
    if values and values[0] in UNZIP_READS:
        return _read(f"unzip {values[0]}")
    return ShellVerdict(False, "`unzip` other than a listing, a test or `-p` extracts files")


def _top(name: str, values: list[str]) -> ShellVerdict:
    # interactive, `top` takes keys that signal and renice processes; in batch mode it only prints
    if any(re.fullmatch(r"-[A-Za-z0-9]*b[A-Za-z0-9]*", v) for v in values):
        return _read("top -b")
    return ShellVerdict(False, "`top` without `-b` is interactive: its keys signal and renice processes")


def _journalctl(name: str, values: list[str]) -> ShellVerdict:
    if any(v.startswith(("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys")) for v in values):
        return ShellVerdict(False, "`journalctl` maintenance option changes the journal")
    return _read(name)


def _dpkg(name: str, values: list[str]) -> ShellVerdict:
    if values and values[0] in (
        "-l",
        "-L",
        "-s",
        "-S",
        "--list",
        "--listfiles",
        "--status",
        "--search",
        "-p",
        "--print-avail",
    ):
        return _read(f"dpkg {values[0]}")
    return ShellVerdict(False, "`dpkg` other than a query installs or removes packages")


def _is_powershell_read(lower: str) -> bool:
    return lower in PS_READ_CMDLETS or (lower.startswith(PS_READ_VERBS) and "-" in lower and len(lower) > 5)


_SPECIAL: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    "sort": _static(_sort),
    "uniq": _static(_uniq),
    "find": _running(_FIND),
    "sed": _static(_sed),
    "gsed": _static(_sed),
    "awk": _static(_awk),
    "gawk": _static(_awk),
    "mawk": _static(_awk),
    "rg": _static(_rg),
    "date": _static(_date),
    "hostname": _static(_hostname),
    "tar": _static(_tar),
    "git": _static(_git),
    "npm": _subcommands(NPM_READ, configs=True),
    "pnpm": _subcommands(PNPM_READ, configs=True),
    "yarn": _subcommands(YARN_READ, configs=True),
    "pip": _subcommands(PIP_READ, configs=True),
    "pip3": _subcommands(PIP_READ, configs=True),
    "docker": _grouped(DOCKER_READ, DOCKER_GROUPS),
    "podman": _grouped(DOCKER_READ, DOCKER_GROUPS),
    "kubectl": _grouped(KUBECTL_READ, {"config": frozenset({"view", "get-contexts", "current-context"})}),
    "go": _grouped(GO_READ, {}),
    "cargo": _grouped(CARGO_READ, {}),
    "systemctl": _grouped(SYSTEMCTL_READ, {}),
    "apt": _grouped(APT_READ["apt"], {}),
    "apt-cache": _grouped(APT_READ["apt-cache"], {}),
    "dpkg": _static(_dpkg),
    "gh": _static(_gh),
    "journalctl": _static(_journalctl),
    "fd": _running(_FD),
    "fdfind": _running(_FD),
    "tree": _static(_refusing(frozenset({"-o"}), "writes its listing to a file")),
    "less": _static(_refusing(frozenset({"-o", "-O", "--log-file", "--LOG-FILE"}), "copies what it shows to a file")),
    "ss": _static(_refusing(frozenset({"-K", "--kill"}), "closes sockets")),
    "history": _static(_refusing(frozenset({"-w", "-a"}), "writes the history file")),
    "file": _static(_refusing(frozenset({"-C", "--compile"}), "compiles a magic file")),
    "ack": _static(_refusing(frozenset({"--pager"}), "runs its pager program")),
    "ag": _static(_refusing(frozenset({"--pager"}), "runs its pager program")),
    "xxd": _static(_xxd),
    "yq": _static(_yq),
    "unzip": _static(_unzip),
    "top": _static(_top),
}
