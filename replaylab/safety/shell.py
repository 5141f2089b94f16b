"""OpenClaw's read-only shell exemption: which `exec` / `bash` commands do not mutate.

A mirror of `isPlainReadOnlyShellCommand` and its helpers in OpenClaw's
`src/agents/tool-mutation.ts` (constants: `replaylab.upstream.openclaw_2026_9_6`). OpenClaw
does not parse shell: it refuses any command holding an operator, a redirection, a line break, a
backtick, a backslash or an expansion character, splits the rest on whitespace and quotes, and
exempts only a short list of executables. Mirroring that exactly, instead of lexing with a real
shell grammar, is what keeps replaylab's answer equal to OpenClaw's: pipelines, `&&`, subshells,
`$(…)`, globs, `sudo`, `env`, `find -exec`, `sed -i` and `git` all end up mutating, because none
is a plain command of the list, and anything the rules do not understand is refused.

Every verdict carries the reason a person reads (`replaylab inspect`, the ledger): which
executable made it read-only, or what refused the exemption. The reason is descriptive; the
boolean alone is OpenClaw's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replaylab import caches
from replaylab.upstream import openclaw_2026_9_6 as OC96

#: the longest executable or subcommand a reason quotes (a command is agent text of any length)
MAX_REASON_WORD = 40

_SED_PRINT = re.compile(r"([0-9]+|\$)(,([0-9]+|\$))?p")
#: JavaScript's `.` matches anything but a line terminator
_GH_WEB_SHORT = re.compile(r"-[a-z]*w[a-z]*(?:=[^\n\r\u2028\u2029]*)?")

_OPERATOR_NAMES = {
    ";": "`;` command separator",
    "<": "`<` redirection",
    ">": "`>` redirection",
    "\n": "line break (a second command)",
    "\r": "line break (a second command)",
    "`": "`` ` `` command substitution",
}
_EXPANSION_NAMES = {
    "$": "`$` expansion",
    "*": "`*` glob",
    "?": "`?` glob",
    "[": "`[` glob",
    "]": "`]` glob",
    "{": "`{` brace expansion",
    "}": "`}` brace expansion",
    "~": "`~` home expansion",
}


@dataclass(frozen=True)
class ShellVerdict:
    """OpenClaw's answer for one command (`read_only`) and why, in words."""

    read_only: bool
    reason: str
    #: the suite's extra read-only commands made it read-only (OpenClaw would not)
    by_override: bool = False


def js_trim(text: str) -> str:
    """`String.prototype.trim`: strips ECMAScript whitespace, which is not Python's `str.strip()`."""
    return text.strip(OC96.JS_WHITESPACE)


def js_lower_or_empty(value: object) -> str:
    """`normalizeLowercaseStringOrEmpty`: a trimmed, lower-cased string, or "" for anything else."""
    return js_trim(value).lower() if isinstance(value, str) else ""


def word(text: str) -> str:
    """`text` shortened for a reason."""
    return text if len(text) <= MAX_REASON_WORD else text[: MAX_REASON_WORD - 1] + "…"


def tokenize(command: str) -> list[str] | str:
    """`tokenizeSimpleShellCommand`: the words of a plain command, else why it is not plain."""
    refusal = _refusal(command)
    if refusal is not None:
        return refusal
    tokens: list[str] = []
    current = ""
    quote: str | None = None
    for char in command:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current += char
            continue
        if char in ("'", '"'):
            quote = char
            continue
        if char in OC96.JS_WHITESPACE:
            if current:
                tokens.append(current)
                current = ""
            continue
        current += char
    if quote is not None:
        return f"unterminated {quote} quote"
    if current:
        tokens.append(current)
    return tokens if tokens else "no words (only empty quotes)"


def _refusal(command: str) -> str | None:
    """What makes a command not plain, in OpenClaw's order: operators first (the earliest one
    named), then a backslash, then expansion characters in OpenClaw's order."""
    for at, char in enumerate(command):
        if char in OC96.SHELL_OPERATOR_CHARS:
            return _operator_name(command, at)
    if "\\" in command:
        return "`\\` escape"
    for char in OC96.SHELL_EXPANSION_CHARS:
        if char in command:
            if char == "$" and "$(" in command:
                return "`$(…)` command substitution"
            return _EXPANSION_NAMES[char]
    return None


def _operator_name(command: str, at: int) -> str:
    char, after = command[at], command[at + 1 : at + 2]
    if char == "|":
        return "`||` operator" if after == "|" else "`|` pipe"
    if char == "&":
        if after == "&":
            return "`&&` operator"
        return "`&>` redirection" if after == ">" else "`&` background job"
    return _OPERATOR_NAMES[char]


def _sed(tokens: list[str]) -> ShellVerdict:
    """`isReadOnlySedCommand`: only `sed -n Np` / `-n N,Mp` (print lines), never in place."""
    args = tokens[1:]
    if any(t == "--in-place" or t.startswith("--in-place=") for t in args):
        return ShellVerdict(False, "`sed --in-place` edits files")
    if any(t.startswith("-") and t != "-" and "i" in t for t in args):
        return ShellVerdict(False, "a sed option holding `i` (`-i` edits files in place)")
    if any(t in ("-e", "--expression") for t in args):
        return ShellVerdict(False, "`sed -e`: only a single `Np` script is read-only")
    suppress = False
    expression: str | None = None
    for token in args:
        if token in ("--quiet", "--silent"):
            suppress = True
            continue
        if token.startswith("-") and token != "-":
            if "n" in token:
                suppress = True
            continue
        expression = token
        break
    if not suppress:
        return ShellVerdict(False, "sed without `-n` (it prints every line it edits)")
    if expression is None or not _SED_PRINT.fullmatch(expression):
        return ShellVerdict(False, "a sed script other than `Np` / `N,Mp`")
    return ShellVerdict(True, f"read-only shell command `sed -n {word(expression)}`")


def _unsafe_rg_flag(tokens: list[str]) -> str | None:
    for token in tokens:
        normalized = js_lower_or_empty(token)
        if normalized in OC96.UNSAFE_RG_FLAGS or any(
            normalized.startswith(f"{f}=") for f in OC96.UNSAFE_RG_VALUE_FLAGS
        ):
            return normalized.split("=", 1)[0]
    return None


def _gh(tokens: list[str]) -> ShellVerdict:
    """`isReadOnlyGhCommand`: `gh search …`, `gh pr view|list|diff|checks|status`,
    `gh issue view|list|status`, never with `--web` (it opens a browser)."""
    for token in tokens:
        normalized = js_lower_or_empty(token)
        if normalized == "--web" or normalized.startswith("--web=") or _GH_WEB_SHORT.fullmatch(normalized):
            return ShellVerdict(False, "`gh … --web` opens a browser")
    area = js_lower_or_empty(tokens[1] if len(tokens) > 1 else None)
    action = js_lower_or_empty(tokens[2] if len(tokens) > 2 else None)
    shown = word(f"gh {area} {action}".strip())
    if area == "search":
        if action:
            return ShellVerdict(True, f"read-only shell command `{shown}`")
        return ShellVerdict(False, "`gh search` without what to search")
    if (area == "pr" and action in OC96.READ_ONLY_GH_PR_SUBCOMMANDS) or (
        area == "issue" and action in OC96.READ_ONLY_GH_ISSUE_SUBCOMMANDS
    ):
        return ShellVerdict(True, f"read-only shell command `{shown}`")
    return ShellVerdict(False, f"`{shown}` is not one of OpenClaw's read-only gh commands")


def openclaw_verdict(command: str | None) -> ShellVerdict:
    """`isPlainReadOnlyShellCommand(command)`, with its reason. `command`: `readShellCommand`'s
    (trimmed, non-empty, else None)."""
    if not command:
        return ShellVerdict(False, "no `command` / `cmd` string to exempt")
    tokens = tokenize(command)
    if isinstance(tokens, str):
        return ShellVerdict(False, f"not a plain command: {tokens}")
    executable = js_lower_or_empty(tokens[0])
    if executable == "rg":
        flag = _unsafe_rg_flag(tokens)
        if flag is not None:
            return ShellVerdict(False, f"`rg {word(flag)}` runs other programs or reads archives")
    if executable in OC96.READ_ONLY_SHELL_COMMANDS:
        return ShellVerdict(True, f"read-only shell command `{executable}`")
    if executable == "sed":
        return _sed(tokens)
    if executable == "gh":
        return _gh(tokens)
    return ShellVerdict(False, f"`{word(executable)}` is not one of OpenClaw's read-only shell commands")


def read_shell_command(args: object) -> str | None:
    """`readShellCommand`: `command`, else `cmd` (only when `command` is absent or null), trimmed;
    None unless a non-empty string."""
    if not isinstance(args, dict):
        return None
    command = args.get("command")
    if command is None:
        command = args.get("cmd")
    if not isinstance(command, str):
        return None
    return js_trim(command) or None


@caches.lru("safety.shell_verdict", maxsize=8192)
def shell_verdict(command: str | None, extra_read_only: frozenset[tuple[str, ...]] = frozenset()) -> ShellVerdict:
    """OpenClaw's verdict, then the suite's extra read-only commands (`extra_read_only`: word
    prefixes such as `("git", "status")`). An extra command never lifts a refusal: a command with
    an operator or an expansion stays mutating whatever the suite lists. Cached by command: an
    agent runs the same few commands many times."""
    verdict = openclaw_verdict(command)
    if verdict.read_only or not extra_read_only or not command:
        return verdict
    tokens = tokenize(command)
    if isinstance(tokens, str):
        return verdict
    words = (js_lower_or_empty(tokens[0]), *tokens[1:])
    for prefix in sorted(extra_read_only):
        if words[: len(prefix)] == prefix:
            return ShellVerdict(True, f"read-only shell command `{word(' '.join(prefix))}` (suite)", by_override=True)
    return verdict
