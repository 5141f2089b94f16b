r"""awk in the read-only shell grammar: it reads when its options only set how it reads and its
program prints, computes and reads, as awk's own lexer sees the program.

Options: `-F`, `-v`, `-e` / `--source` and the flags that only set how awk reads or reports; any
other could write (gawk's `-f` / `-E` run a file, `-i inplace` edits, `-l` loads an extension,
`-o` / `-p` / `-d` write files, mawk's `-W exec` runs a file). The program: no output redirected
to a file or a pipe (`print > f`, `print | cmd`, `cmd | getline`), no `system()`, `fflush`,
`close`, and no `@` (gawk's `@load`, `@include`, an indirect call `@f(…)`) — looked for in the
program as written and in its code as awk's lexer reads it, strings, regular expressions and
comments blanked and backslash-newlines joined (`print ";" > "f"` writes though a `;` stands
between `print` and `>`; `system\⏎("…")` runs). Either finding one makes the program mutating: a
lexer that took a division for a regular expression blanks no code the program as written hides.
"""

from __future__ import annotations

import re

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import read

#: what in an awk program's code writes a file, runs a command or loads code
AWK_WRITES = re.compile(r"\bsystem\s*\(|\||\bprintf?\b[^;{}]*>|\bfflush\b|\bclose\s*\(|@\s*[A-Za-z_]")
#: an operand's last character: a `/` after one divides, anywhere else it starts a regular expression
_OPERAND_END = re.compile(r"[A-Za-z0-9_$)\].]")
#: keywords after which a `/` starts a regular expression though they end in a letter
_REGEX_AFTER_WORD = re.compile(r"(?:^|[^A-Za-z0-9_])(?:print|printf|return|in|getline)$")


def awk_code(program: str) -> str:
    """The program's code as awk's lexer reads it: backslash-newlines joined, comments dropped,
    each string and regular expression literal emptied."""
    text = program.replace("\\\n", "")
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "#":
            end = text.find("\n", at)
            at = len(text) if end < 0 else end
            continue
        if char == "/":
            before = "".join(out[-16:]).rstrip(" \t")
            if not before or _REGEX_AFTER_WORD.search(before) or not _OPERAND_END.fullmatch(before[-1]):
                at = _literal_end(text, at + 1, "/")
                out.append("//")
                continue
        if char == '"':
            at = _literal_end(text, at + 1, '"')
            out.append('""')
            continue
        out.append(char)
        at += 1
    return "".join(out)


def _literal_end(text: str, at: int, closing: str) -> int:
    """Past the literal that starts before `at`: its first unescaped `closing`, or its line's end."""
    while at < len(text) and text[at] != closing and text[at] != "\n":
        at += 2 if text[at] == "\\" else 1
    return at + 1


#: awk's options that only set how it reads or reports (POSIX awk, gawk, mawk, busybox)
_AWK_FLAGS = frozenset("bcCghkMnNOPrsStV")
_AWK_LONG_FLAGS = frozenset(
    {"--characters-as-bytes", "--traditional", "--copyright", "--gen-pot", "--help", "--bignum", "--csv"}
    | {"--non-decimal-data", "--use-lc-numeric", "--optimize", "--posix", "--re-interval", "--no-optimize"}
    | {"--sandbox", "--lint-old", "--version", "--lint"}
)
#: options with a value: a variable, the field separator, program text
_AWK_VALUES = {"-v": "--assign", "-F": "--field-separator", "-e": "--source"}
#: what the other options do (gawk's manual; mawk's `-W exec`)
_AWK_REFUSED = {
    "f": "runs a program file the command does not show",
    "E": "runs a program file the command does not show",
    "i": "includes awk source (`inplace` edits files)",
    "l": "loads an extension (`rwarray` writes files)",
    "o": "writes the program's listing to a file",
    "p": "writes a profile to a file",
    "d": "writes the variables to a file",
    "D": "runs the debugger, which reads its commands from a file or the terminal",
    "W": "takes an implementation's option (mawk's `-W exec FILE` runs a program file)",
}
_AWK_LONG_REFUSED = {
    "--file": "f", "--exec": "E", "--include": "i", "--load": "l", "--pretty-print": "o", "--profile": "p",
    "--dump-variables": "d", "--debug": "D",
}  # fmt: skip


def awk(name: str, values: list[str]) -> ShellVerdict:
    """awk reads when every option only sets how it reads (a variable, the separator, program
    text with `-e`), and no program writes a file, runs a command or loads code (`AWK_WRITES`).
    Any other option could write: gawk's `-f` / `-E` run a file, `-i inplace` edits, `-l` loads an
    extension, `-o`, `-p`, `-d` write files."""
    programs: list[str] = []
    index = 0
    while index < len(values):
        value = values[index]
        index += 1
        if value == "--":
            if not programs and index < len(values):
                programs.append(values[index])
            break
        if not value.startswith("-") or value == "-":  # the program, unless `-e` gave it: then a file
            if not programs:
                programs.append(value)
            break
        option, equals, attached = value.partition("=")
        if value.startswith("--"):
            if option in _AWK_LONG_FLAGS:
                continue
            if option in _AWK_VALUES.values():
                given = attached if equals else values[index] if index < len(values) else None
                index += 0 if equals else 1
                if given is None:
                    return ShellVerdict(False, f"`{name} {word(option)}` without its value")
                if option == "--source":
                    programs.append(given)
                continue
            refused = _AWK_REFUSED.get(_AWK_LONG_REFUSED.get(option, ""))
            return ShellVerdict(False, f"`{name} {word(option)}` {refused or 'is an option the grammar does not read'}")
        for at, letter in enumerate(value[1:], start=1):
            if letter in _AWK_FLAGS:
                continue
            if f"-{letter}" in _AWK_VALUES:
                given = value[at + 1 :] or (values[index] if index < len(values) else None)
                index += 0 if value[at + 1 :] else 1
                if given is None:
                    return ShellVerdict(False, f"`{name} -{letter}` without its value")
                if letter == "e":
                    programs.append(given)
                break
            refused = _AWK_REFUSED.get(letter)
            return ShellVerdict(
                False, f"`{name} -{word(letter)}` {refused or 'is an option the grammar does not read'}"
            )
    if not programs:
        return ShellVerdict(False, f"`{name}` without a program it can read")
    for program in programs:
        if AWK_WRITES.search(program) or AWK_WRITES.search(awk_code(program)):
            return ShellVerdict(
                False, f"`{name}`'s program writes a file, runs a command or loads code (`{word(program)}`)"
            )
    return read(name)
