"""System and infrastructure tools in the read-only shell grammar: each reads in its query mode.

Agents look at the machines and the infrastructure they work on as often as they change them, and
these tools do both, by mode:

* `terraform` / `tofu`: `show`, `output`, `version`, `validate`, `graph`, `providers` (no `lock`
  or `mirror`), `state list|show|pull`, `workspace list|show`, and `fmt` with `-check` or
  `-write=false` (a bare `fmt`, or `fmt -diff`, rewrites files); never `plan` (its data sources
  may run programs, `-out` writes a plan), `apply`, `init`, `import`, `console` …, never an
  option that writes (`-out`, `-state-out`, `-backup`);
* `rpm -q…`: queries of the package database, with the query options only (never `--eval`,
  `--define`, `--pipe` or a query format that runs a macro); `-V` runs the packages' verify
  scripts, and stays mutating;
* `launchctl list|print|blame|getenv|version …` (never `load`, `bootstrap`, `kickstart`, `limit`
  …);
* `firewall-cmd` whose every option asks (`--state`, `--list-…`, `--get-…`, `--query-…`,
  `--info-…`, with `--zone` / `--permanent`);
* `openssl` inspecting or computing (`x509 -noout -text`, `req -text`, `dgst`, `rand`, `version`
  …) to standard output, never `-out`, `-keyout`, a serial file (`-CA`, `-CAcreateserial`), an
  engine, a provider or a configuration (which may load either); `s_client` only with a blank
  standard input the command shows (`echo | openssl s_client -connect host:443`), as it sends
  its input to the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Inner, Word, dynamic, known_values, option_name, read, static

# ---------------------------------------------------------------- terraform / tofu

#: subcommands that only show the configuration, the state or the workspace
_TERRAFORM_READ = frozenset({"show", "output", "version", "validate", "graph", "providers", "help"})
#: groups whose second word decides, and the second words that read
_TERRAFORM_GROUPS = {
    "state": frozenset({"list", "show", "pull"}),
    "workspace": frozenset({"list", "show"}),
    "providers": frozenset({"schema"}),
}
#: options that write a file, whatever the subcommand
_TERRAFORM_WRITES = frozenset({"out", "state-out", "backup"})


def _terraform(name: str, values: list[str]) -> ShellVerdict:
    rest = list(values)
    while rest and rest[0].startswith("-chdir="):
        rest = rest[1:]
    if not rest:
        return ShellVerdict(False, f"`{word(name)}` without a subcommand")
    subcommand = rest[0]
    if subcommand.startswith("-"):  # the global flags that answer at once, or none
        if option_name(subcommand) not in ("version", "help", "v", "h"):
            return ShellVerdict(False, f"`{word(name)} {word(subcommand)}` is an option the grammar does not read")
        subcommand = "version" if option_name(subcommand) in ("version", "v") else "help"
    options = {option_name(v): v for v in rest[1:] if v.startswith("-")}
    written = next((given for option, given in options.items() if option in _TERRAFORM_WRITES), None)
    if written is not None:
        return ShellVerdict(False, f"`{word(name)} {word(subcommand)} {word(written)}` writes a file")
    operands = [v for v in rest[1:] if not v.startswith("-")]
    if subcommand in _TERRAFORM_GROUPS and operands:
        if operands[0] in _TERRAFORM_GROUPS[subcommand]:
            return read(f"{name} {subcommand} {operands[0]}")
        return ShellVerdict(False, f"`{word(name)} {word(subcommand)} {word(operands[0])}` changes something")
    if subcommand == "fmt":
        write = options.get("write", "").split("=", 1)[-1]
        if ("check" in options or write == "false") and write != "true":
            return read(f"{name} fmt -check")
        return ShellVerdict(False, f"`{word(name)} fmt` rewrites files (only `-check` or `-write=false` reads)")
    if subcommand in _TERRAFORM_READ:
        return read(f"{name} {subcommand}")
    return ShellVerdict(False, f"`{word(name)} {word(subcommand)}` changes something or runs programs")


# ---------------------------------------------------------------- rpm

#: `rpm` options a query may take (long, without dashes), and the letters of a `-q…` cluster
_RPM_QUERY_OPTIONS = frozenset(
    {"query", "all", "info", "list", "file", "configfiles", "docfiles", "requires", "provides", "whatprovides"}
    | {"whatrequires", "changelog", "scripts", "triggers", "last", "package", "state", "dump", "conflicts"}
    | {"obsoletes", "recommends", "suggests", "supplements", "enhances", "qf", "queryformat", "nodigest"}
    | {"nosignature", "nofiles", "nodeps", "quiet", "verbose", "noplugins", "group", "fileprovide"}
)
_RPM_QUERY_LETTERS = frozenset("qailfcdRpsgv")
_RPM_VALUE_OPTIONS = frozenset({"qf", "queryformat"})
#: what makes a query format run something: a shell command or a Lua macro
_RPM_RUNNING_FORMAT = re.compile(r"%\(|%\{?\s*lua|%\{expand", re.IGNORECASE)


def _rpm(name: str, values: list[str]) -> ShellVerdict:
    if values in (["--version"], ["--help"]):
        return read(f"{name} {values[0]}")
    first = next((v for v in values if v.startswith("-")), "")
    if not (first.startswith("-q") or first == "--query"):  # the first option is the mode
        return ShellVerdict(False, f"`{word(name)}` installs, removes or verifies packages (only `-q` reads)")
    at = 0
    while at < len(values):
        value = values[at]
        at += 1
        if not value.startswith("-"):
            continue  # a package, a file or a capability asked about
        if value.startswith("--"):
            option, _, given = value[2:].partition("=")
            if option not in _RPM_QUERY_OPTIONS:
                return ShellVerdict(False, f"`{word(name)} {word(value)}` is no query option")
            if option in _RPM_VALUE_OPTIONS:
                if not given and at < len(values):
                    given, at = values[at], at + 1
                if _RPM_RUNNING_FORMAT.search(given):
                    return ShellVerdict(False, f"`{word(name)} --{option}` with a format that runs a macro")
        elif not set(value[1:]) <= _RPM_QUERY_LETTERS:
            return ShellVerdict(False, f"`{word(name)} {word(value)}` is no query option")
    return read(f"{name} -q")


# ---------------------------------------------------------------- launchctl

_LAUNCHCTL_READ = frozenset(
    {"list", "print", "print-cache", "print-disabled", "blame", "getenv", "version", "help", "managerpid"}
    | {"manageruid", "managername", "hostinfo", "dumpstate"}
)


def _launchctl(name: str, values: list[str]) -> ShellVerdict:
    if not values:
        return ShellVerdict(False, f"`{word(name)}` without a subcommand reads commands from its input")
    if values[0] in _LAUNCHCTL_READ:
        return read(f"{name} {values[0]}")
    return ShellVerdict(False, f"`{word(name)} {word(values[0])}` manages services")


# ---------------------------------------------------------------- firewall-cmd

_FIREWALL_ASKS = re.compile(r"--(?:state|version|help|check-config|(?:get|list|query|info)-[a-z0-9-]+)(?:=.*)?", re.S)
_FIREWALL_SCOPE = frozenset({"--zone", "--policy", "--permanent", "--direct", "-q", "--quiet"})
_FIREWALL_SCOPE_VALUES = frozenset({"--zone", "--policy"})


def _firewall_cmd(name: str, values: list[str]) -> ShellVerdict:
    asked = False
    at = 0
    while at < len(values):
        value = values[at]
        at += 1
        option = value.split("=", 1)[0]
        if _FIREWALL_ASKS.fullmatch(value) or value in ("-V", "-h"):
            asked = True
        elif option in _FIREWALL_SCOPE:
            if option in _FIREWALL_SCOPE_VALUES and "=" not in value:
                at += 1
        else:
            return ShellVerdict(False, f"`{word(name)} {word(value)}` changes the firewall")
    if not asked:
        return ShellVerdict(False, f"`{word(name)}` without a question (`--state`, `--list-…`, `--get-…`)")
    return read(name)


# ---------------------------------------------------------------- openssl

_OPENSSL_READ = frozenset(
    {"version", "x509", "req", "rsa", "ec", "pkey", "dgst", "sha1", "sha256", "sha384", "sha512", "md5", "rand"}
    | {"base64", "asn1parse", "ciphers", "list", "errstr", "prime", "passwd", "pkcs7", "crl", "crl2pkcs7"}
    | {"verify", "pkcs12", "help"}
)
#: options that write a file (a key, a serial file, random state, session data) or load code
_OPENSSL_REFUSED = frozenset(
    {"out", "keyout", "ca", "cacreateserial", "caserial", "writerand", "engine", "provider", "provider-path"}
    | {"config", "sess_out", "keylogfile", "newkey", "msgfile", "ssl_config"}
)


def openssl(name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    """`openssl`: a command that inspects or computes (`_OPENSSL_READ`); `s_client` only with
    standard input the command shows and that is blank (`echo | openssl s_client …`), as it sends
    that input to the server."""
    values = known_values(args)
    if values is None:
        return dynamic(name)
    subcommand = values[0] if values else ""
    if not subcommand:
        return ShellVerdict(False, f"`{word(name)}` without a command reads commands from its input")
    if subcommand not in _OPENSSL_READ and subcommand != "s_client":
        return ShellVerdict(False, f"`{word(name)} {word(subcommand)}` is not a command the grammar reads")
    options = {option_name(v).lower(): v for v in values[1:] if v.startswith("-")}
    refused = next((given for option, given in options.items() if option in _OPENSSL_REFUSED), None)
    if refused is not None:
        return ShellVerdict(False, f"`{word(name)} {word(subcommand)} {word(refused)}` writes a file or loads code")
    if subcommand == "s_client" and (stdin is None or stdin.strip()):
        return ShellVerdict(False, f"`{word(name)} s_client` sends its standard input to the server")
    if subcommand == "req" and ("new" in options or "x509" in options) and "key" not in options:
        # without a key of its own, a new request or certificate makes one and writes it to a file
        return ShellVerdict(False, f"`{word(name)} req -new` without `-key` writes the key it makes")
    return read(f"{name} {subcommand}")


#: the tools whose query mode reads, by the name they run as
ADMIN_TOOLS: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    "terraform": static(_terraform),
    "tofu": static(_terraform),
    "rpm": static(_rpm),
    "launchctl": static(_launchctl),
    "firewall-cmd": static(_firewall_cmd),
}
