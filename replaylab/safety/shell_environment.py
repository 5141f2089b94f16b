"""Variables a command line sets for what runs next, in the read-only shell grammar.

A read-only command stays one only in an environment that does not make it load code, run another
program or write a file: `NODE_OPTIONS=--require=./x.js node -e 1`, `LD_PRELOAD=./x.so ls`,
`GIT_EXTERNAL_DIFF=./x git diff`, `CURL_HOME=./d curl …` (a `.curlrc` that POSTs), `HOME=./d git
diff` (a config's `diff.external`), `GIT_TRACE=f git status` (a file written) each do one of those
with no sign of it on the command line. So:

* a variable set for the command (`NAME=value cmd`, `env NAME=value cmd`, `export NAME=value`,
  `declare -x`, `export NAME` of one set earlier) reads only when it is on the list of those that
  change nothing a reader does (`HARMLESS`: the locale and time zone, the terminal and its colours,
  CI and verbosity flags, an app's environment name, Python's buffering and encoding, credentials),
  or is a pager, editor or helper whose value is empty or a read-only command itself (`GIT_PAGER=cat`,
  `PAGER=less`), or is `PATH` keeping the shell's own (`$PATH` in it) with only absolute directories
  or ones under `~` / `$HOME` added (a directory put before the system's could hold a program of a
  reader's name: a risk the grammar accepts, as agents add their tool folders that way all the time);
* a variable only assigned (`NAME=value; cmd`, not exported) reaches what runs only when it was
  exported already: it keeps the line mutating when it is one a program reads to load code, find
  its configuration, or write (`CODE_LOADING`), and is the shell's own otherwise (`f=a.txt; cat $f`);
* `set -a` (every assignment exported) and `declare -n` (a name that sets another) are refused.
"""

from __future__ import annotations

import re

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Inner, Word

#: variables a program reads to load code, find its configuration, or write a file, that an
#: agent's shell may have exported already (checked when a line only assigns one)
CODE_LOADING = re.compile(
    r"LD_\w+|DYLD_\w+|NODE_OPTIONS|NODE_PATH|NODE_V8_COVERAGE|NPM_CONFIG_\w+|npm_config_\w+|BUN_\w+"
    r"|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PYTHONUSERBASE|PYTHONPYCACHEPREFIX|PYTHONWARNINGS|PYTHONINSPECT"
    r"|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|BASH_ENV|ENV"
    r"|SHELLOPTS|BASHOPTS|IFS|PROMPT_COMMAND|PS4|GCONV_PATH|GLIBC_TUNABLES|GIT_\w+|LESS\w*|MAN\w+|GROFF_\w+"
    r"|AWKPATH|AWKLIBPATH|HOME|SHELL|XDG_\w+|\w+_HOME|WGETRC|SSLKEYLOGFILE|KUBECONFIG|AWS_CONFIG_FILE"
    r"|AWS_SHARED_CREDENTIALS_FILE|DOCKER_CONFIG|DOCKER_HOST|TAR_OPTIONS|GREP_OPTIONS|OPENSSL_CONF|RUSTC_WRAPPER"
    r"|CARGO_\w+|GOFLAGS|TERMINFO|LOCPATH|JQ_LIBRARY_PATH"
    # where `sort`, `tac` … write their temporary files (`TMPDIR=. sort -S 64k big`, as `sort -T .`)
    r"|TMPDIR"
)
#: variables that change nothing a reader does, when set for what runs
HARMLESS = re.compile(
    r"LANG|LANGUAGE|LC_\w+|TZ|TERM|COLORTERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR(?:_FORCE)?|CI"
    r"|CONTINUOUS_INTEGRATION|DEBUG|VERBOSE|QUIET|LOG_LEVEL|\w+_LOG_LEVEL|RUST_LOG|RUST_BACKTRACE|NODE_ENV"
    r"|RAILS_ENV|RACK_ENV|APP_ENV|MIX_ENV|FLASK_ENV|ENVIRONMENT|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONIOENCODING"
    r"|PYTHONUTF8|PYTHONHASHSEED|GIT_TERMINAL_PROMPT|GIT_OPTIONAL_LOCKS|USER|LOGNAME|DO_NOT_TRACK"
    r"|\w+_TELEMETRY\w*|\w+_NO_UPDATE_NOTIFIER|NO_UPDATE_NOTIFIER|GH_PROMPT_DISABLED|HOMEBREW_NO_\w+"
    r"|AWS_PROFILE|AWS_REGION|AWS_DEFAULT_REGION|AWS_DEFAULT_OUTPUT"
    # credentials: they let a program in, they run nothing
    r"|\w*(?:TOKEN|API_KEY|APIKEY|SECRET|SECRET_KEY|ACCESS_KEY|ACCESS_KEY_ID|PASSWORD|PASSWD)"
    # which database a client reads from
    r"|PG(?:HOST|PORT|USER|DATABASE|SSLMODE|APPNAME)|MYSQL_(?:HOST|TCP_PORT|PWD)"
)
#: variables whose value is a command line some program runs
COMMAND_VALUED = re.compile(
    r"PAGER|MANPAGER|\w+_PAGER|EDITOR|VISUAL|\w+_EDITOR|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_ASKPASS"
    r"|SSH_ASKPASS|SUDO_ASKPASS|BROWSER"
)
_KEEPS_PATH = re.compile(r"\$(?:PATH\b|\{PATH\})")
_FIXED_DIRECTORY = re.compile(r"(?:~|\$HOME|\$\{HOME\})(?:/[^$`]*)?|/[^$`]*")


def environment_change(name: str, value: Word, inner: Inner, exported: bool = True) -> ShellVerdict | None:
    """Why setting `name` to `value` (`exported` for what runs next, or only assigned) could make
    a reader load code, run a program or write; None when it changes nothing a reader does."""
    if COMMAND_VALUED.fullmatch(name):
        if value.value is None:
            return ShellVerdict(False, f"`{word(name)}` set to a command known only when the shell runs")
        if value.value.strip():
            ran = inner(value.value)
            if not ran.read_only:
                return ShellVerdict(False, f"`{word(name)}` runs a command that is not read-only: {ran.reason}")
        return None
    if name == "PATH":
        return _path_change(value)
    if exported and not HARMLESS.fullmatch(name):
        return ShellVerdict(
            False, f"`{word(name)}` set for what runs next, which the grammar does not read as harmless"
        )
    if not exported and CODE_LOADING.fullmatch(name):
        return ShellVerdict(False, f"`{word(name)}=…` can make what runs next load code, run a program or write")
    return None


def _path_change(value: Word) -> ShellVerdict | None:
    text = value.text if value.value is None else value.value
    if not _KEEPS_PATH.search(text) or "$(" in text or "`" in text:
        return ShellVerdict(False, "`PATH=…` without the shell's own `$PATH` changes which program runs")
    # an entry is `$PATH` itself, an absolute directory, or one under `~` / `$HOME`; `$PWD`, any
    # other variable, `/proc/self/cwd` and an empty entry are where the command runs
    for entry in text.replace('"', "").replace("'", "").split(":"):
        if entry in ("$PATH", "${PATH}"):
            continue
        if not _FIXED_DIRECTORY.fullmatch(entry) or entry.startswith("/proc/"):
            return ShellVerdict(False, f"`PATH=…` adds `{word(entry or '.')}`, which is where the command runs")
    return None
