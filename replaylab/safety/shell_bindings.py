"""Variables bash sets by name outside an assignment, in the read-only shell grammar.

`NAME=value` is read by `shell_environment`. Bash also sets a variable it is given by name:
`for NAME in …` and `select NAME in …`, `read NAME`, `mapfile NAME` / `readarray NAME`,
`printf -v NAME`, `wait -p NAME`, `${NAME:=…}` / `${NAME=…}`, `(( NAME = 1 ))`. A name that
changes what a later command does is as much a change there as in an assignment: `set -x` expands
`PS4` as a prompt, which runs its `$(…)` (`for PS4 in '$(touch x)'; do set -x; :; done` runs
`touch`), `PATH` picks the program a name runs, `IFS` splits words (`shell_environment`'s lists
decide which names count). The value set is not read: where it comes from (standard input, a
file, the loop's words) is seldom on the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_environment import environment_change
from replaylab.safety.shell_words import Word

#: `${NAME:=word}` / `${NAME=word}`: bash assigns `word` to NAME when it is unset (or empty)
_DEFAULT_ASSIGNED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?:?=")
#: the option of a builtin whose value is the name it sets (`printf -v NAME`, `wait -p NAME`)
_NAME_OPTIONS = {"printf": "v", "wait": "p"}
#: builtins whose every operand may be a name they set (an option's value is taken too, which is
#: only ever more cautious: `read -p PROMPT`, `mapfile -d DELIM`)
_SETTING_OPERANDS = frozenset({"read", "mapfile", "readarray"})


def _unread(text: str) -> ShellVerdict:
    return ShellVerdict(False, "a value bash sets is not read")


def bound(name: str, how: str) -> ShellVerdict | None:
    """Why bash setting the variable `name` (by `how`) to a value the line does not show changes
    what runs next, or None when the name is the shell's own."""
    found = environment_change(name, Word(None, ""), _unread, exported=False)
    if found is None:
        return None
    return ShellVerdict(False, f"{how} sets `{word(name)}`: {found.reason}")


def builtin_binds(name: str, values: Sequence[str | None]) -> ShellVerdict | None:
    """A name `read`, `mapfile`, `printf -v` or `wait -p` sets that changes what runs next."""
    if name in _SETTING_OPERANDS:
        names = [v for v in values if v is not None and not v.startswith("-")]
    elif name in _NAME_OPTIONS:
        names = _option_values(values, _NAME_OPTIONS[name])
    else:
        return None
    for given in names:
        found = bound(given.split("[", 1)[0], f"`{name}`")
        if found is not None:
            return found
    return None


def _option_values(values: Sequence[str | None], letter: str) -> list[str]:
    """The values of `-LETTER` among `values`, in a cluster or attached (`-v NAME`, `-vNAME`)."""
    found: list[str] = []
    for at, value in enumerate(values):
        if value is None or not re.fullmatch(r"-[A-Za-z]*" + letter + r".*", value):
            continue
        attached = value[value.index(letter, 1) + 1 :]
        following = values[at + 1] if at + 1 < len(values) else None
        found.extend(v for v in (attached or following,) if v)
    return found


def expansion_binds(text: str) -> ShellVerdict | None:
    """`${NAME:=…}` / `${NAME=…}` in an expansion's text, for a name that changes what runs next."""
    for match in _DEFAULT_ASSIGNED.finditer(text):
        found = bound(match.group(1), f"`{word(match.group(0))}…}}`")
        if found is not None:
            return found
    return None


def names_bind(names: Sequence[str], how: str) -> ShellVerdict | None:
    """The first of `names` (a loop's variable, the names `(( … ))` sets) that changes what runs next."""
    for name in names:
        found = bound(name, how)
        if found is not None:
            return found
    return None
