"""The subcommands of the tools agents run most — git, npm / pnpm / yarn, pip, docker, kubectl,
go, cargo, systemctl, pm2, apt, gh (and `gh api` as a GET), beads' `bd` — that only read; and the
command `docker exec` / `kubectl exec` run inside a container, which decides as any other."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Callable

from replaylab.safety.request_bodies import graphql_only_queries
from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_http import METHOD_OVERRIDE
from replaylab.safety.shell_programs import (
    APT_READ,
    CARGO_READ,
    CARGO_RESOLVES,
    DOCKER_GROUPS,
    DOCKER_READ,
    GH_API_BODY_OPTIONS,
    GH_API_FLAGS,
    GH_API_VALUE_OPTIONS,
    GH_EXTRA,
    GH_ISSUE,
    GH_PR,
    GH_VALUE_OPTIONS,
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
    GO_LIST_RUNS_OR_WRITES,
    GO_MOD_WRITES,
    GO_READ,
    HELM_GROUPS,
    HELM_READ,
    KUBECTL_GROUPS,
    KUBECTL_READ,
    NPM_READ,
    PIP_READ,
    PM2_READ,
    PNPM_READ,
    SYSTEMCTL_READ,
    SYSTEMD_SETTINGS_READ,
    TMUX_FLAGS,
    TMUX_PRINTING,
    TMUX_READ,
    TMUX_VALUE_OPTIONS,
    YARN_READ,
)
from replaylab.safety.shell_words import (
    Inner,
    Word,
    dynamic,
    known_values,
    long_option,
    one_word,
    only_version_or_help,
    option_name,
    read,
    runs_script,
    static,
)
from replaylab.upstream import beads as BEADS


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
                return read(f"git {value}")
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
            re.fullmatch(r"-[A-Za-z]*O.*", v) or long_option(v, ("--open-files-in-pager",)) for v in rest
        ):
            return ShellVerdict(False, "`git grep -O` opens files in a program")
        if sub == "ls-remote" and any(
            v == "-u" or long_option(v, ("--upload-pack", "--exec")) or v.startswith("--exec=") for v in rest
        ):
            return ShellVerdict(False, "`git ls-remote --upload-pack` runs the program it names")
        return read(f"git {sub}")
    if sub == "branch":
        return _git_listing("branch", rest, GIT_BRANCH_CHANGES, GIT_BRANCH_LISTS)
    if sub == "tag":
        return _git_listing("tag", rest, GIT_TAG_CHANGES, GIT_TAG_LISTS)
    if sub == "config":
        # a value option's value is no operand (`-f list` names a file), and `--no-get` undoes
        # the action before it (`--get --no-get NAME VALUE` sets)
        if any(
            v.startswith("--no-") and v not in GIT_CONFIG_READ_FLAGS or long_option(v, _GIT_CONFIG_WRITES) for v in rest
        ):
            return ShellVerdict(False, "`git config` with an option that sets, or undoes a read")
        operand_words, at = [], 0
        while at < len(rest):
            if (
                rest[at] in _GIT_CONFIG_VALUE_OPTIONS
                or "=" not in rest[at]
                and long_option(rest[at], _GIT_CONFIG_VALUE_OPTIONS)
                or re.fullmatch(r"-[A-Za-z]*[ft]", rest[at])  # `--fil F`, `-zf F`: git takes both
            ):
                at += 2
                continue
            if not rest[at].startswith("-"):
                operand_words.append(rest[at])
            at += 1
        # `get` / `list` read as the subcommand (the first operand), never as a value to set
        named = [v for v in rest if v.startswith("-") and v in GIT_CONFIG_READS] + operand_words[:1]
        if (
            any(v in GIT_CONFIG_READS for v in named)
            and len(operand_words) <= 3
            and not any(
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
            )
        ):
            return read("git config (read)")
        operands = [v for v in rest if v not in GIT_CONFIG_READ_FLAGS]
        # a key is `section.name`: one word without a dot is a subcommand (git 2.46's `edit` opens an editor)
        if len(operands) == 1 and "." in operands[0] and not operands[0].startswith("-") and operand_words == operands:
            return read("git config NAME (read)")
        return ShellVerdict(False, "`git config` other than a read (`--get`, `--list`, one name) sets configuration")
    allowed = GIT_PAIRS.get(sub)
    if allowed is not None:
        # the subcommand is the first word that is no option; `-v` reads only without one
        # only flags that take no value may come before it (`git stash -m list` saves a stash
        # named list; `git notes --ref list add` adds a note)
        leading = list(itertools.takewhile(lambda v: v.startswith("-"), rest))
        if any(v not in ("-v", "--verbose", "-q", "--quiet") and not v.startswith("--ref=") for v in leading):
            return ShellVerdict(False, f"`git {word(sub)} {word(leading[0])}` is an option the grammar does not read")
        if sub == "stash" and leading:
            return ShellVerdict(False, "`git stash` with options first saves and resets changes (`push`)")
        first = rest[len(leading)] if len(leading) < len(rest) else None
        if first is None and sub == "stash":
            return ShellVerdict(False, "`git stash` without `list` / `show` saves and resets changes (`push`)")
        if first is None and sub in ("remote", "worktree", "submodule", "reflog", "notes"):
            verbose = sub == "remote" and any(v in ("-v", "--verbose") for v in rest)
            return read(f"git {sub}" + (" -v" if verbose else ""))
        if first in allowed:
            return read(f"git {sub} {first}")
    return ShellVerdict(False, f"`git {word(sub)}` changes the repository or is not a subcommand the grammar knows")


#: `git config` options followed by a value (a file, a blob, a type, a default)
_GIT_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "-t", "--type", "--default"})
#: `git config` actions that set, unset, rename or edit (git takes any unique prefix)
_GIT_CONFIG_WRITES = (
    "--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit",
)  # fmt: skip


def _git_listing(sub: str, rest: list[str], changes: frozenset[str], lists: frozenset[str]) -> ShellVerdict:
    changes = changes | {"--edit-description"}
    change = next((v for v in rest if v in changes or v.split("=", 1)[0] in changes or long_option(v, changes)), None)
    if change is not None:
        return ShellVerdict(False, f"`git {sub} {change}` changes {sub}es")
    operands = [v for v in rest if not v.startswith("-")]
    if operands and not any(v in lists or v.split("=", 1)[0] in lists for v in rest):
        return ShellVerdict(False, f"`git {sub} NAME` creates a {sub}")
    return read(f"git {sub} (list)")


def _subcommands(table: frozenset[str], *, configs: bool = False) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        if values is None:
            return dynamic(name)
        risky = next((v for v in values if long_option(v, _RUNS_OR_WRITES.get(name.split()[0], ()))), None)
        if risky is not None:
            return ShellVerdict(False, f"`{word(name)} {word(risky)}` writes a log, runs a program or opens a browser")
        first = next((v for v in values if not v.startswith("-") or v in table), None)
        if first is None:
            return ShellVerdict(False, f"`{word(name)}` without a subcommand runs its default action")
        if configs and first == "config":
            second = next((v for v in values[values.index(first) + 1 :] if not v.startswith("-")), None)
            if second in ("get", "list", "ls"):
                return read(f"{name} config {second}")
        if first == "version" and len(values) > 1 + values.index(first):
            return ShellVerdict(False, f"`{word(name)} version X` sets the version")
        if first not in table:
            return ShellVerdict(False, f"`{word(name)} {word(first)}` changes something or runs scripts")
        if first == "audit" and any(_audit_fixes(v) for v in values):
            return ShellVerdict(False, f"`{word(name)} audit fix` installs packages")
        return read(f"{name} {first}")

    return decide


def _audit_fixes(value: str) -> bool:
    """Whether an `audit` word asks it to fix: `fix`, or pnpm's `--fix` in any spelling its parser
    (nopt) reads as true (`--fix=1`, `--no-fix=false`); only `--fix=false` and `--no-fix` keep it off."""
    if value in ("fix", "--fix"):
        return True
    name, _, given = value.partition("=")
    return (name == "--fix" and given != "false") or (name == "--no-fix" and given == "false")


def _grouped(
    table: frozenset[str], groups: dict[str, frozenset[str]], *, bare_shows: bool = False
) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """`bare_shows`: the tool shows its status when given no subcommand (`hostnamectl`)."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        if values is None:
            return dynamic(name)
        risky = next((v for v in values if long_option(v, _RUNS_OR_WRITES.get(name, ())) or v == "-Z"), None)
        if risky is not None:
            return ShellVerdict(
                False, f"`{word(name)} {word(risky)}` writes a file or loads settings that run programs"
            )
        operands = [v for v in values if not v.startswith("-")]
        if only_version_or_help(args):
            return read(f"{name} {values[0]}")
        if not operands and bare_shows:
            return read(name)
        if not operands:
            return ShellVerdict(False, f"`{word(name)}` without a subcommand")
        first = operands[0]
        if first in groups:
            second = operands[1] if len(operands) > 1 else None
            if second in groups[first]:
                return read(f"{name} {first} {second}")
            return ShellVerdict(False, f"`{word(name)} {word(first)} {word(second or '')}` changes something")
        if first in table:
            return read(f"{name} {first}")
        return ShellVerdict(False, f"`{word(name)} {word(first)}` changes something or runs programs")

    return decide


#: options, valid after the subcommand, that write a log, run a program, open a browser or load a
#: configuration that does (pip's `--log` / `--python`, cargo's `--config build.rustc=…`,
#: kubectl's / helm's `--kubeconfig` with an `exec` credential plugin, kubectl's `--profile=cpu`
#: writing profile.pprof, npm's `--viewer=browser`)
_RUNS_OR_WRITES = {
    "pip": ("--log", "--log-file", "--python", "--cert", "--client-cert"),
    "pip3": ("--log", "--log-file", "--python"),
    "npm": ("--viewer", "--browser", "--userconfig", "--globalconfig", "--logs-dir", "--cache"),
    "cargo": ("--config",),
    "kubectl": ("--kubeconfig", "--cache-dir", "--profile", "--profile-output"),
    "helm": ("--kubeconfig", "--repository-config", "--registry-config"),
}


def _cargo(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """cargo's read subcommands; `tree` and `metadata` only with what keeps Cargo.lock as it is."""
    verdict = _grouped(CARGO_READ, {})(name, args, inner)
    values = known_values(args) or []
    subcommand = next((v for v in values if not v.startswith("-")), "")
    if verdict.read_only and subcommand in CARGO_RESOLVES and not CARGO_RESOLVES[subcommand] & set(values):
        return ShellVerdict(False, f"`{word(name)} {subcommand}` writes Cargo.lock when it is missing or stale")
    return verdict


def _gh(name: str, values: list[str]) -> ShellVerdict:
    if any(v == "--web" or v.startswith("--web=") or re.fullmatch(r"-[a-z]*w[a-z]*", v) for v in values):
        return ShellVerdict(False, "`gh … --web` opens a browser")
    area = values[0] if values else ""
    action = values[1] if len(values) > 1 else ""
    if area == "api":
        return _gh_api(values[1:])
    if area == "search" and action:
        return read(f"gh search {action}")
    groups = {"pr": GH_PR, "issue": GH_ISSUE, **GH_EXTRA}
    if action in groups.get(area, frozenset()):
        return read(f"gh {area} {action}")
    return ShellVerdict(False, f"`gh {word(area)} {word(action)}` changes something or calls the API")


#: what stands for a value only known when the shell runs, where the check does not read it
_OPAQUE = "\0"


def _gh_words(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """`gh` by its words: a double-quoted expansion may be the value of an option that only names
    what to show (`--repo "$REPO"`), or a part of `gh api`'s endpoint after a written REST path
    (`gh api "repos/$REPO/pulls"`), never anything else."""
    values: list[str] = []
    for at, arg in enumerate(args):
        if arg.value is not None:
            values.append(arg.value)
        elif at > 1 and args[at - 1].value in GH_VALUE_OPTIONS and one_word(arg) and values[0] != "api":
            values.append(_OPAQUE)
        elif at > 0 and values[0] == "api" and _rest_path(arg):
            values.append(_OPAQUE + arg.text)  # an endpoint: the GET decides, whatever the path
        else:
            return dynamic(name)
    return _gh(name, values)


def _rest_path(arg: Word) -> bool:
    """A double-quoted word whose written start is a REST path (`"repos/$REPO/pulls"`): one word,
    and no expansion in it can make it an option or the `graphql` endpoint."""
    head = re.split(r"[$`\\]", arg.text[1:], maxsplit=1)[0] if arg.text.startswith('"') else ""
    return one_word(arg) and "/" in head and bool(head.strip("/")) and not head.startswith("-")


def _tmux(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """`tmux [-S socket] COMMAND …`: reads when its command only shows something; a socket path
    and a target (`-t "$SESSION"`) may be expansions, nothing else may."""
    index = 0
    while index < len(args) and (args[index].value or "-").startswith("-"):
        option = args[index].value
        if option in TMUX_VALUE_OPTIONS:
            if index + 1 < len(args) and not one_word(args[index + 1]):
                return ShellVerdict(False, f"`tmux {word(option)}` with a value the shell may split")
            index += 2
        elif option in TMUX_FLAGS:
            index += 1
        else:
            return ShellVerdict(False, f"`tmux {word(option or args[index].text)}` runs commands or writes a file")
    command = args[index].value if index < len(args) else None
    rest = [a.value for a in args[index + 1 :]]
    if command is None:
        return ShellVerdict(False, "`tmux` without a command (or with one only known when it runs) starts a session")
    if any(value is not None and value.rstrip().endswith(";") for value in rest):
        return ShellVerdict(False, "`tmux … \\;` runs a second command")
    # a format's `#(…)` runs a shell command; only a target may be known only when tmux runs
    if any(value is not None and "#(" in value for value in rest):
        return ShellVerdict(False, "`tmux` with a format that runs a shell command (`#(…)`)")
    after = args[index + 1 :]
    if any(
        value is None and (at == 0 or rest[at - 1] != "-t" or not one_word(after[at])) for at, value in enumerate(rest)
    ):
        return ShellVerdict(False, f"`tmux {word(command)}` with a word known only when the shell runs")
    if command in TMUX_READ or (command in TMUX_PRINTING and "-p" in rest):
        return read(f"tmux {command}")
    return ShellVerdict(False, f"`tmux {word(command)}` changes a session, sends keys or starts something")


def _gh_api(values: list[str]) -> ShellVerdict:
    """`gh api ENDPOINT` is a GET unless a method, a field or an input says otherwise; `graphql`
    is a POST that reads when its `query` field is a GraphQL document of queries only (the other
    fields are its variables); an option the grammar does not know could be either."""
    endpoints: list[str] = []
    fields: dict[str, str] = {}
    typed: set[str] = set()  # the keys a `-F` field set: gh sets `-f` fields first, then `-F` ones
    body_option = method = ""
    index = 0
    while index < len(values):
        value = values[index]
        option, _, inline = value.partition("=")
        if option in ("-X", "--method"):
            method = (inline if inline else values[index + 1] if index + 1 < len(values) else "").upper()
            if method not in ("GET", "POST"):
                return ShellVerdict(False, f"`gh api -X {word(method)}` changes something")
            index += 1 if inline else 2
        elif option in GH_API_BODY_OPTIONS:
            field = inline if inline else values[index + 1] if index + 1 < len(values) else ""
            key, _, given = field.partition("=")
            if option == "--input":
                key = "--input"  # the body is the file, whatever its name
            # `-F key=@file` and `--input` take what they send from a file
            from_file = option == "--input" or (option in ("-F", "--field") and given.startswith("@"))
            if not (option in ("-f", "--raw-field") and key in typed):  # a `-F` of the same key wins
                fields[key] = "@" if from_file else given
            if option in ("-F", "--field"):
                typed.add(key)
            body_option = body_option or option
            index += 1 if inline else 2
        elif option in GH_API_VALUE_OPTIONS:
            header = inline if inline else values[index + 1] if index + 1 < len(values) else ""
            if option in ("-H", "--header") and METHOD_OVERRIDE.search(header):
                return ShellVerdict(False, f"`gh api -H {word(header)}` asks for another method")
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
        if "--input" not in fields and graphql_only_queries(fields.get("query", "")):
            return read("gh api graphql (a query)")
        return ShellVerdict(False, "`gh api graphql` is a POST whose query may change something")
    if body_option:
        return ShellVerdict(False, f"`gh api {word(body_option)}` sends a body: a POST unless the method says GET")
    if method == "POST":
        return ShellVerdict(False, "`gh api -X POST` changes something")
    return read("gh api (GET)")


#: `docker exec` / `docker compose exec` options followed by a value, and their flags
_CONTAINER_EXEC_VALUES = frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--index"})
_CONTAINER_EXEC_FLAGS = frozenset(
    {"-i", "-t", "-it", "-ti", "-d", "-T", "--interactive", "--tty", "--detach", "--no-TTY", "--privileged"}
)
#: `kubectl exec` options before its `--`
_KUBECTL_EXEC_VALUES = frozenset({"-c", "--container", "-n", "--namespace", "--context", "--kubeconfig"})
_KUBECTL_EXEC_FLAGS = frozenset({"-i", "-t", "-it", "-ti", "--stdin", "--tty", "-q", "--quiet"})


def _ran_inside(what: str, command: list[str], inner: Inner) -> ShellVerdict:
    """The command a container runs (its words as given, no shell between): it decides."""
    if not command:
        return ShellVerdict(False, f"`{what}` without a command")
    return runs_script(what, shlex.join(command), inner)


def _container_exec(what: str, values: list[str], inner: Inner) -> ShellVerdict:
    """`docker exec [options] CONTAINER COMMAND…` (and `docker compose exec SERVICE …`)."""
    index = 0
    while index < len(values) and values[index].startswith("-"):
        option = values[index].split("=", 1)[0]
        if option in _CONTAINER_EXEC_VALUES:
            index += 1 if "=" in values[index] else 2
        elif option in _CONTAINER_EXEC_FLAGS:
            index += 1
        else:
            return ShellVerdict(False, f"`{what} {word(values[index])}` is an option the grammar does not read")
    return _ran_inside(what, values[index + 1 :], inner)


def _with_exec(
    grouped: Callable[[str, list[Word], Inner], ShellVerdict],
) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """docker / podman: `exec` runs a command inside a container, which decides; the rest as
    `grouped` reads it."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        if values is not None and values[:1] == ["exec"]:
            return _container_exec(f"{name} exec", values[1:], inner)
        if values is not None and values[:2] in (["compose", "exec"], ["container", "exec"]):
            return _container_exec(f"{name} {values[0]} exec", values[2:], inner)
        return grouped(name, args, inner)

    return decide


def _kubectl_exec(
    grouped: Callable[[str, list[Word], Inner], ShellVerdict],
) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """kubectl: `exec POD [options] -- COMMAND…` runs a command inside a pod, which decides."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        if values is None or values[:1] != ["exec"]:
            return grouped(name, args, inner)
        if "--" not in values:
            return ShellVerdict(False, "`kubectl exec` without `--` before the command it runs")
        end = values.index("--")
        index, pods = 1, 0
        while index < end:
            option = values[index].split("=", 1)[0]
            if option in _KUBECTL_EXEC_VALUES:
                index += 1 if "=" in values[index] else 2
            elif option in _KUBECTL_EXEC_FLAGS or not option.startswith("-"):
                pods += not option.startswith("-")
                index += 1
            else:
                return ShellVerdict(
                    False, f"`kubectl exec {word(values[index])}` is an option the grammar does not read"
                )
        if pods != 1:
            return ShellVerdict(False, "`kubectl exec` without one pod")
        return _ran_inside("kubectl exec", values[end + 1 :], inner)

    return decide


def _go(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """go: `go env` prints its settings unless `-w` or `-u` writes them (Go's flags take one dash
    or two, and a value after `=`); `go list` reads unless a build flag runs a program, writes a
    file or lets it rewrite go.mod; the rest by `GO_READ`."""
    values = known_values(args)
    if values is not None and values[:1] == ["env"]:
        if any(option_name(v) in ("w", "u") for v in values[1:] if v.startswith("-")):
            return ShellVerdict(False, "`go env -w` / `-u` changes Go's settings")
        return read("go env")
    if values is not None and values[:1] == ["list"]:
        for at, value in enumerate(values[1:], start=1):
            option = option_name(value) if value.startswith("-") else ""
            if option in GO_LIST_RUNS_OR_WRITES or option.startswith("debug-"):
                return ShellVerdict(False, f"`go list {word(value)}` runs a program or writes a file")
            given = value.split("=", 1)[1] if "=" in value else values[at + 1] if at + 1 < len(values) else ""
            if option == "mod" and given == GO_MOD_WRITES:
                return ShellVerdict(False, "`go list -mod=mod` rewrites go.mod")
    return _GO_GROUPED(name, args, inner)


_GO_GROUPED = _grouped(GO_READ, {})


def _beads(name: str, values: list[str]) -> ShellVerdict:
    """`bd`: the commands beads opens its database read-only for (`upstream.beads`), found after
    its global options; any other command, or a read-only one's sub-command or flag that writes,
    changes the issues."""
    options = {v.split("=", 1)[0] for v in values if v.startswith("-")}
    writing = sorted(options & set(BEADS.GLOBAL_WRITING_FLAGS))
    if writing:
        return ShellVerdict(False, f"`{word(name)} {writing[0]}` {BEADS.GLOBAL_WRITING_FLAGS[writing[0]]}")
    if options & {"--help", "-h"}:
        return read(f"{name} --help")
    rest = list(values)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in BEADS.GLOBAL_VALUE_FLAGS and rest:
            rest.pop(0)
    if not rest:
        return read(f"{name} {values[0] if values else ''}".strip())  # its help, or its version
    command = rest[0]
    if command in BEADS.PRINTING_COMMANDS:
        return read(f"{name} {command}")
    if command not in BEADS.READ_ONLY_COMMANDS:
        return ShellVerdict(False, f"`{word(name)} {word(command)}` is not one of the commands beads only reads with")
    writes = next((v for v in rest[1:] if v.split("=", 1)[0] in BEADS.WRITES_UNDER.get(command, ())), None)
    if writes is not None:
        return ShellVerdict(False, f"`{word(name)} {command} {word(writes)}` changes the issues")
    return read(f"{name} {command}")


#: the tools whose subcommand decides, by the name they run as
SUBCOMMANDS: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    "git": static(_git),
    "npm": _subcommands(NPM_READ, configs=True),
    "pnpm": _subcommands(PNPM_READ, configs=True),
    "yarn": _subcommands(YARN_READ, configs=True),
    "pip": _subcommands(PIP_READ, configs=True),
    "pip3": _subcommands(PIP_READ, configs=True),
    "docker": _with_exec(_grouped(DOCKER_READ, DOCKER_GROUPS)),
    "podman": _with_exec(_grouped(DOCKER_READ, DOCKER_GROUPS)),
    "kubectl": _kubectl_exec(_grouped(KUBECTL_READ, KUBECTL_GROUPS)),
    "go": _go,
    "cargo": _cargo,
    "systemctl": _grouped(SYSTEMCTL_READ, {}),
    "pm2": _grouped(PM2_READ, {}),
    "helm": _grouped(HELM_READ, HELM_GROUPS),
    "apt": _grouped(APT_READ["apt"], {}),
    "apt-cache": _grouped(APT_READ["apt-cache"], {}),
    "gh": _gh_words,
    "tmux": _tmux,
    "bd": static(_beads),
    **{name: _grouped(verbs, {}, bare_shows=True) for name, verbs in SYSTEMD_SETTINGS_READ.items()},
}
