"""A wrapper's own options: where the command it runs starts (`env`, `xargs`, `sudo`, `time`,
`timeout`, `nice` …, each option that takes a value as `WRAPPER_VALUE_OPTIONS` says, spelled in
full, abbreviated as getopt_long takes it, or last in a cluster), what `xargs` replaces with the
line it reads, and what `sudo` / `doas` do on their own."""

from __future__ import annotations

import re

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_programs import ELEVATION_CHANGES, WRAPPER_VALUE_OPTIONS
from replaylab.safety.shell_words import Word, long_option, read

#: the one-letter forms of `ELEVATION_CHANGES`, which a cluster may hold (`sudo -iu root`)
_ELEVATION_LETTERS = {option[1] for option in ELEVATION_CHANGES if len(option) == 2}


def xargs_replace(own: list[Word]) -> str | None:
    """The replace string of `xargs -I R` / `-iR` / `-i` / `--replace[=R]`, or None."""
    values = [w.value or "" for w in own]
    found: str | None = None  # xargs takes the last one given (`-I x -I cat`, `-I cat -i`)
    at = 0
    while at < len(values):
        value = values[at]
        cluster = re.fullmatch(r"-[0-9a-zA-Z]*?I(.*)", value) if not value.startswith("--") else None
        if cluster is not None and not set(value[1 : value.index("I")]) & set("adEeLlnPsi"):
            if cluster.group(1):
                found = cluster.group(1)
            elif at + 1 < len(values):
                found = values[at + 1]
                at += 1
        elif value.startswith(("-i", "--r")):
            _, equals, given = value.partition("=")
            found = (given if equals else value[2:] if value.startswith("-i") and len(value) > 2 else "") or "{}"
        at += 1
    return found


def elevated(name: str, options: list[str], runs: bool) -> ShellVerdict | None:
    """`sudo` / `doas` doing something of their own (module rules): editing files, or a shell
    whose commands the command line does not show; `-l` with no command only lists. None: the
    command they run decides."""
    for option in options:
        if option in ELEVATION_CHANGES or (
            re.fullmatch(r"-[A-Za-z]+", option) and set(option[1:]) & _ELEVATION_LETTERS
        ):
            return ShellVerdict(False, f"`{word(name)} {word(option)}` edits files or runs a shell")
    if not runs and any(option in ("-l", "--list", "-ll") for option in options):
        return read(f"{name} -l")
    return None


def after_options(name: str, args: list[Word]) -> list[Word] | None:
    """The words after a wrapper's own options (its value options' values included): the command
    it runs; None when a word only known when the shell runs or `env -S` hides where they end."""
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
        if name == "env" and (
            (not value.startswith("--") and "S" in value[1:])  # `-S'…'`, `-iS…`: a command line of its own
            or (value.startswith("--s") and "--split-string".startswith(value.partition("=")[0]))  # `--split-str=`
        ):
            return None
        index += 1 + _takes_next(value, takes_value)
    return []


def _takes_next(value: str, takes_value: frozenset[str]) -> int:
    """1 when option word `value` is followed by its value: a value option itself, an
    abbreviation of a long one (getopt_long: `--arg-f FILE`, `--un NAME`), or a cluster of short
    ones whose last letter takes a value (`-rI R`, `-iu NAME`, `-0a FILE`); else 0."""
    if value in takes_value:
        return 1
    if value.startswith("--"):
        return int("=" not in value and long_option(value, takes_value))
    for at, letter in enumerate(value[1:], start=2):
        if "-" + letter in takes_value:
            return int(at == len(value))  # a value attached after it is in this word
    return 0


#: signals whose default action dumps core: `timeout -s QUIT 1 sleep 9` writes a `core` file in
#: the working directory wherever the core size limit allows it (`ulimit -c unlimited`, containers)
_CORE_SIGNALS = frozenset(
    {"QUIT", "ILL", "TRAP", "ABRT", "IOT", "BUS", "FPE", "SEGV", "SYS", "UNUSED", "XCPU", "XFSZ", "EMT"}
    | {"3", "4", "5", "6", "7", "8", "11", "24", "25", "31"}
)


def timeout_signal_dumps_core(own: list[Word]) -> bool:
    """Whether `timeout`'s own options (`-s SIG`, `-sSIG`, `-vs SIG`, `--signal=SIG`, `--sig SIG`)
    send a signal that dumps core, or one only known when the shell runs."""
    given: list[str | None] = []
    index = 0
    while index < len(own):
        value = own[index].value or ""
        following = own[index + 1].value if index + 1 < len(own) else None
        if value.startswith("--"):
            if long_option(value, ("--signal",)):
                given.append(value.split("=", 1)[1] if "=" in value else following)
            index += 1 + _takes_next(value, WRAPPER_VALUE_OPTIONS["timeout"])
            continue
        for at, letter in enumerate(value[1:], start=2):
            if letter in "sk":
                if letter == "s":
                    given.append(value[at:] if at < len(value) else following)
                break
        index += 1 + _takes_next(value, WRAPPER_VALUE_OPTIONS["timeout"])
    for signal in given:
        if signal is None:
            return True
        name = signal.upper().removeprefix("SIG")
        # a number is also read as a shell's exit status: `-s 131` (128 + 3) and `-s 259` send QUIT
        if name in _CORE_SIGNALS or (
            name.isascii() and name.isdigit() and {str(int(name)), str(int(name) & 0x7F)} & _CORE_SIGNALS
        ):
            return True
    return False
