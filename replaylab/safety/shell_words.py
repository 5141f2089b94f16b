"""What every check of the read-only shell grammar reads: a command's words, the verdict of a
command that only reads, and the rule that a word the shell only knows when it runs could be the
option that writes (`static`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.safety.shell import ShellVerdict, word


@dataclass(frozen=True)
class Word:
    """One word of a command: its value as the program receives it, None when only the running
    shell knows it (an expansion), and its source text."""

    value: str | None
    text: str


Inner = Callable[[str], ShellVerdict]


#: how the reason of a plain read-only command starts (the grammar lists such commands bare)
PLAIN_READ = "read-only command "


def read(what: str, kind: str = PLAIN_READ.strip()) -> ShellVerdict:
    return ShellVerdict(True, f"{kind} `{word(what)}`")


def interpreted(name: str, given: str, why: str | None) -> ShellVerdict:
    """An interpreter given a script (`python -c`, `node -e`): mutating with why its script may do
    more than compute and print, else a read."""
    if why is not None:
        return ShellVerdict(False, f"`{word(name)} {given}`: {why}")
    return read(f"{name} {given} (computes and prints)")


def only_version_or_help(args: Sequence[Word]) -> bool:
    return len(args) == 1 and args[0].value in ("--version", "-V", "--help", "-h", "version")


OptionCheck = Callable[[str, list[str]], ShellVerdict]


def static(check: OptionCheck) -> Callable[[str, list[Word], Inner], ShellVerdict]:
    """A command whose options decide: its words must all be known before they are read (an
    expansion could be the option that writes)."""

    def decide(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
        values = known_values(args)
        return dynamic(name) if values is None else check(name, values)

    return decide


def known_values(args: Sequence[Word]) -> list[str] | None:
    """The words' values, or None when one is an expansion (then options cannot be read)."""
    values = [a.value for a in args]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def long_option(value: str, names: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
    """Whether `value` is one of the long options `names`, also as `--name=value` and as any
    prefix of at least `--xy` (getopt_long and git's parser take a unique prefix: `--out=f` is
    `--output=f`, `--i` is sed's `--in-place`)."""
    given = value.split("=", 1)[0]
    if not given.startswith("--") or len(given) < 3:
        return False
    return any(name.startswith("--") and name.startswith(given) for name in names)


def option_name(value: str) -> str:
    """An option's name without its dashes and value (`-write=false` is `write`): Go's and
    OpenSSL's parsers take one dash or two, and a value after `=`."""
    return value.lstrip("-").split("=", 1)[0]


#: the quoted parts of a word: what they expand to stays in the one word
_QUOTED_PARTS = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')


def one_word(arg: Word) -> bool:
    """Whether the shell passes `arg` as one word: known, or with every expansion inside double
    quotes (`"$TOKEN"`, `"$SESSION":0.0`). An unquoted expansion may split into several (`-a $PW`
    could end in `FLUSHALL`), and so may an unquoted brace (`-{a,b}`): no option's value the grammar skips."""
    return arg.value is not None or not any(mark in _QUOTED_PARTS.sub("", arg.text) for mark in "$`{")


#: what bash's brace expansion takes: `{` … `}` around an unquoted `,` or a sequence's `..`
#: (`-{d..d}elete` is `-delete`, `-{delete,print}` two words)
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


def brace_expands(parts: Sequence[Any], text_of: Callable[[Any], bytes]) -> bool:
    """Whether bash's brace expansion changes a word given as its parser nodes (`text_of` their text):
    only the parts the parser reads as bare words count (a quoted or escaped `,` or `{` is text).
    A `{` or `}` without its partner beside a `,` counts too: the parser splits `x{\\,a,b}` in two."""
    texts = ((part.type, text_of(part).decode("utf-8", "replace")) for part in parts)
    bare = "".join(re.sub(r"\\.", "_", text) if kind == "word" else "_" for kind, text in texts)
    if _BRACE_EXPANSION.search(bare):
        return True
    return bare.count("{") != bare.count("}") and ("," in bare or ".." in bare)


def dynamic(name: str) -> ShellVerdict:
    return ShellVerdict(
        False, f"`{word(name)}` with a word known only when the shell runs (it could be an option that writes)"
    )


def runs_script(what: str, script: str, inner: Inner) -> ShellVerdict:
    """A command that runs `script` elsewhere (another host, a container): the script decides,
    read as any command line is; its readers are named with `what`."""
    ran = inner(script)
    if not ran.read_only:
        return ShellVerdict(False, f"`{word(what)}` runs a command that is not read-only: {ran.reason}")
    return read(what)


#: bash's pattern characters: `*`, `?`, and a `[` that a later `]` closes
_GLOB = re.compile(r"[*?]|\[.+?\]")
#: what is not a pattern character in a word as written: a quoted part or an escaped character
_LITERAL_PARTS = re.compile(r"\$'(?:[^'\\]|\\.)*'|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.", re.DOTALL)


def globbed(words: Sequence[Word]) -> list[Word]:
    """A command's words with each whose pathname expansion bash may make any word unknown (its
    value None), as a `$x` is: a pattern is replaced by the names of the files it matches, whatever
    they are (`glob_word`); the program's name with any pattern (`r? show x` runs `rm` where a
    file `rm` is)."""
    return [glob_word(w, program=at == 0) for at, w in enumerate(words)]


def glob_word(arg: Word, program: bool = False) -> Word:
    """`arg`, or unknown when bash's pathname expansion may make it any name: when a pattern
    character stands in its first path component (`-[d]elete` is `-delete`, `c?che` is `cache`,
    `*.txt` is `-i.txt` where such a file is). `src/*.ts` only names files under `src/`."""
    if arg.value is None:
        return arg
    # the text with its quoted and escaped parts made plain `_` (bash matches them literally)
    bare = _LITERAL_PARTS.sub(lambda m: "_" * len(m.group(0)), arg.text)
    found = _GLOB.search(bare if program else bare.split("/", 1)[0])
    return arg if found is None else Word(None, arg.text)
