"""Variables a command line sets for what runs next, in the read-only shell grammar.

A read-only command stays one only in an environment that does not make it load code or run
another program. `NODE_OPTIONS=--require=./x.js node -e 1`, `LD_PRELOAD=./x.so ls`, `BASH_ENV=./x
bash -c 'ls'`, `GIT_EXTERNAL_DIFF=./x git diff` and `PAGER=./x git log` each run code the command
line does not show, whether the variable is set before the command (`NAME=value cmd`), through
`env NAME=value cmd`, or earlier in the same line (`export NAME=value; cmd`). So:

* a variable that makes a program load code or change how it runs (`LD_*`, `DYLD_*`,
  `NODE_OPTIONS`, `PYTHONPATH`, `PERL5OPT`, `RUBYOPT`, `JAVA_TOOL_OPTIONS`, `BASH_ENV`, `ENV`,
  `SHELLOPTS`, `IFS`, `GIT_CONFIG_*`, `GIT_EXEC_PATH`, `LESSOPEN` …) makes the line mutating;
* a variable whose value is a command a program runs (`PAGER`, `GIT_PAGER`, `MANPAGER`, any
  `*_PAGER`, `EDITOR`, `VISUAL`, `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, the askpass helpers) reads
  when its value is empty or a read-only command itself (`GIT_PAGER=cat`, `PAGER=less`);
* `PATH` reads when it keeps the shell's own (`$PATH` in it) and adds no relative directory
  (`./bin`, `.`): a program of a read-only command's name in a directory put before the system's
  is a risk the grammar accepts, as agents add their tool folders that way all the time.

Any other variable (`LANG=C`, `TZ=UTC`, `NO_COLOR=1`, `CI=1`) changes nothing a reader does.
"""

from __future__ import annotations

import re

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Inner, Word

#: variables that make a program load code or change what or how it runs
CODE_LOADING = re.compile(
    r"LD_\w+|DYLD_\w+|NODE_OPTIONS|NODE_PATH|PYTHONPATH|PYTHONHOME|PYTHONSTARTUP|PERL5OPT|PERL5LIB|PERLLIB"
    r"|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|IFS"
    r"|PROMPT_COMMAND|PS4|GCONV_PATH|GLIBC_TUNABLES|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|LESSOPEN"
    r"|LESSCLOSE|AWKPATH|AWKLIBPATH|BUN_\w+|NODE_REPL_EXTERNAL_MODULE"
)
#: variables whose value is a command line some program runs
COMMAND_VALUED = re.compile(
    r"PAGER|MANPAGER|\w+_PAGER|EDITOR|VISUAL|\w+_EDITOR|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_ASKPASS"
    r"|SSH_ASKPASS|SUDO_ASKPASS|BROWSER"
)
_KEEPS_PATH = re.compile(r"\$(?:PATH\b|\{PATH\})")


def environment_change(name: str, value: Word, inner: Inner) -> ShellVerdict | None:
    """Why setting `name` to `value` for what runs next could make a reader run code; None when
    it changes nothing a reader does."""
    if CODE_LOADING.fullmatch(name):
        return ShellVerdict(False, f"`{word(name)}=…` makes what runs next load code or run a program")
    if COMMAND_VALUED.fullmatch(name):
        if value.value is None:
            return ShellVerdict(False, f"`{word(name)}` set to a command known only when the shell runs")
        if value.value.strip():
            ran = inner(value.value)
            if not ran.read_only:
                return ShellVerdict(False, f"`{word(name)}` runs a command that is not read-only: {ran.reason}")
        return None
    if name == "PATH":
        text = value.text if value.value is None else value.value
        if not _KEEPS_PATH.search(text) or "$(" in text or "`" in text:
            return ShellVerdict(False, "`PATH=…` without the shell's own `$PATH` changes which program runs")
        # an entry that is not absolute is relative to where the command runs (an empty one: `.`)
        relative = [e for e in text.replace('"', "").replace("'", "").split(":") if not e.startswith(("$", "~", "/"))]
        if relative:
            return ShellVerdict(False, f"`PATH=…` adds the relative directory `{word(relative[0] or '.')}`")
    return None
