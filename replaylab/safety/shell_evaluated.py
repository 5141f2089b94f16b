"""Where bash evaluates text as code that a command line does not show.

Arithmetic reads a variable's value as an expression, and an array subscript in that value is
expanded: `x='a[$(cmd)]'; echo $((x))` runs `cmd`, and so do `${a[x]}`, `${x:x}`, `a[x]=1` and
`[[ $x -eq 0 ]]`. `${x@P}` expands a value as a prompt. The builtins that take a variable's name
(`read`, `printf -v`, `test -v`, `mapfile`) expand a subscript in that name, and `mapfile -C`
evaluates its callback. The value may come from anywhere (a file, the environment), so a name in
any of these places is no read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_bindings import bound, builtin_binds, expansion_binds, names_bind
from replaylab.safety.shell_words import Word

#: bash evaluates a variable's value as arithmetic wherever it reads arithmetic (`$((x))`, `${a[x]}`,
#: `${x:x}`, `a[x]=`, `[[ x -eq 0 ]]`), and an array subscript in that value is expanded: a value
#: `a[$(cmd)]` runs `cmd`; `${x@P}` expands a value as a prompt, which runs its `$(…)`
_ARITHMETIC_NODES = frozenset({"arithmetic_expansion", "subscript"})
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: a declaration's operands that are no flags: what it sets
_NAMES = frozenset({"variable_assignment", "variable_name"})
#: an operand whose value is a number whatever the environment holds: a literal, `$?`, `$#`, `${#x}`
_NUMBER_OPERAND = re.compile(r"""-?[0-9]+|"?\$(?:[?#$!]|\{[?#$!]\}|\{#\w+\})"?""")


def evaluates_text(node: Any, text_of: Callable[[Any], bytes]) -> ShellVerdict | None:
    """A word or expression in or under `node` (a tree-sitter-bash node; `text_of` gives its text
    as written) that makes bash evaluate text as code."""
    stack = [node]
    while stack:
        current = stack.pop()
        text = text_of(current).decode("utf-8", "replace")
        index = current.child_by_field_name("index") if current.type == "subscript" else current
        shown = text_of(index).decode("utf-8", "replace") if index is not None else ""
        if current.type in _ARITHMETIC_NODES and re.search(r"[A-Za-z_]", _numbers_named(re.sub(r"^[@*]$", "", shown))):
            return ShellVerdict(
                False, f"arithmetic on a name (`{word(text)}`): bash evaluates its value, and runs a subscript's `$(…)`"
            )
        bound = expansion_binds(text) if current.type == "expansion" else None  # `${PS4:=…}`
        if bound is not None:
            return bound
        flat = _flattened(text) if current.type == "expansion" else text
        if (
            current.type == "expansion"
            and (
                re.search(r"@[PA]\}$", text)
                or re.fullmatch(r"\$\{[^}]*:[^-=?+}][^}]*\}", flat)
                # a positional parameter in an offset or length is a name (`${s:1:$2}`, `${s:($1)}`)
                and re.search(r":[^}]*[A-Za-z_]", flat[:2] + _numbers_named(flat[2:]))
            )
        ):
            return ShellVerdict(False, f"`{word(text)}` evaluates a value (as a prompt or as arithmetic)")
        if current.type == "expansion" and re.match(r"\$\{!\w+(?!\w)(?![*@]\})(?!\[[@*]\]\})", text):
            # `${!x}`, `${!x:-}`, `${!x@Q}`, `${!x#p}`: all expand the variable x's value names; only
            # `${!prefix*}` and `${!a[@]}` list names or keys
            return ShellVerdict(
                False, f"`{word(text)}` expands the variable a value names (and runs a subscript's `$(…)`)"
            )
        if current.type == "unary_expression":
            parts = [text_of(c).decode("utf-8", "replace") for c in current.children]
            if parts[:1] in (["-v"], ["-R"]) and not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts[1:]):
                return ShellVerdict(
                    False, "`[[ -v NAME ]]` with a name only known when it runs (bash expands its subscript)"
                )
        if current.type == "unset_command":
            names = [text_of(c).decode("utf-8", "replace") for c in current.children[1:]]
            if not all(re.fullmatch(r"""-[fvn]+|(['"]?)[A-Za-z_]\w*(?:\[[0-9]+\])?\1""", n) for n in names):
                return ShellVerdict(
                    False, "`unset` with a name only known when it runs, or a subscript (bash expands it)"
                )
        if current.type == "declaration_command":
            flags = [text_of(c).decode("utf-8", "replace") for c in current.named_children if c.type not in _NAMES]
            # a flag only known when bash runs (`"$f"`, `$'-i'`, a pattern `-[i]`) may be `-i` too
            if any(
                re.fullmatch(r"[-+][A-Za-z]*i[A-Za-z]*", re.sub(r"['\"\\]", "", f)) or re.search(r"[$`*?[]", f)
                for f in flags
            ):
                return ShellVerdict(False, "an integer variable (`declare -i`): bash evaluates the value as arithmetic")
        if current.type == "array" and any(
            text_of(c).startswith(b"[") and re.search(rb"[A-Za-z_$`]", text_of(c).split(b"]", 1)[0])
            for c in current.children
        ):
            return ShellVerdict(False, "an array element's subscript in `( [i]=v )` is arithmetic bash evaluates")
        if current.type == "binary_expression":
            parts = [text_of(c).decode("utf-8", "replace") for c in current.children]
            if any(p in _ARITHMETIC_TESTS for p in parts) and not all(
                p in _ARITHMETIC_TESTS or _NUMBER_OPERAND.fullmatch(p) for p in parts
            ):
                return ShellVerdict(False, "`[[ … -eq … ]]` evaluates its operands as arithmetic")
        if current.type == "variable_assignment":
            name = current.child_by_field_name("name")
            if name is not None and name.type == "subscript":
                return ShellVerdict(False, "an assignment to an array element evaluates its subscript")
        stack.extend(current.children)
    return None


def _numbers_named(text: str) -> str:
    """Arithmetic text with the parameters that always hold a number dropped (`$#`, `$?`, `$$`,
    `$!`, a length `${#x}`) and the positional ones named (`$1`, `${10}`, `$@`, `$*`, `$-`, `$0`):
    `set -- 'a[$(cmd)]'; echo $(( $1 ))` runs `cmd`, as a name's value does."""
    text = re.sub(r"\$\{#(?:\w*|\w+\[[@*]\])\}|\$\{?[#?$!]\}?", "", text)
    return re.sub(r"\$\{?[0-9@*-]+\}?", "v", text)


def _flattened(text: str) -> str:
    """An expansion with each `${…}` inside it replaced by what it stands for in arithmetic: `0`
    for a length (`${#x}`), a name for any other (`${s:${y}}` is `${s:v}`: bash evaluates y's value
    as the offset, and runs a subscript's `$(…)`)."""
    inner, before = text[2:], None
    while inner != before:
        before = inner
        inner = re.sub(r"\$\{#\w*(?:\[[@*]\])?\}", "0", inner)
        inner = re.sub(r"\$\{[^{}]*\}", "v", inner)
    return text[:2] + inner


def compound_header(node: Any, text_of: Callable[[Any], bytes]) -> ShellVerdict | None:
    """`(( … ))` and `for (( … ))` evaluate their text as arithmetic: a name there is evaluated as
    its value (`x='a[$(cmd)]'; ((x))` runs `cmd`), unless the header itself sets it to a number
    first (`for ((i=0; i<3; i++))`); a name it or `for NAME in` / `select NAME in` sets must be
    the shell's own (`shell_bindings`: `for PATH in .`, `((PATH=0))` change which program runs)."""
    variable = node.child_by_field_name("variable") if node.type == "for_statement" else None
    if variable is not None:
        return names_bind([text_of(variable).decode("utf-8", "replace")], "`for` / `select`")
    text = text_of(node).decode("utf-8", "replace")
    if node.type == "compound_statement" and not text.startswith("(("):
        return None
    if node.type not in ("compound_statement", "c_style_for_statement") or "((" not in text:
        return None
    inner = _numbers_named(_header(text))
    # a name is numbered only where its first use sets it to a number (`for ((i=0; i<3; i++))`):
    # `((x, x=0))` and `for ((; x; x=0))` evaluate `x` first
    first_uses = {m.group(1): m.start() for m in reversed(list(re.finditer(r"\b([A-Za-z_]\w*)", inner)))}
    numbered = {
        m.group(1)
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*=(?!=)\s*-?[0-9]+\b", inner)
        if first_uses.get(m.group(1)) == m.start()
    }
    named = set(re.findall(r"[A-Za-z_]\w*", inner))
    if named - numbered:
        return ShellVerdict(False, "`(( … ))` on a name: bash evaluates its value, and runs a subscript's `$(…)`")
    return names_bind(sorted(numbered), "`(( … ))`")


def _header(text: str) -> str:
    """The text between `((` and the `))` that closes it, nested parentheses included (`(( ((i=0)),
    x ))` is ` ((i=0)), x `, not ` ((i=0`); the rest of the text when nothing closes it."""
    start = text.index("((")
    depth = 0
    for at in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        if depth == 0:
            return text[start + 2 : at - 1]
    return text[start + 2 :]


#: builtins whose operands name variables: an array element's subscript is expanded (`read
#: 'a[$(cmd)]'`); `mapfile -C` evaluates its callback
_NAMING_BUILTINS = frozenset({"read", "mapfile", "readarray", "printf", "test", "[", "wait", "jobs"})
#: the option that makes a builtin's operand a variable's name (`printf -v NAME`, `wait -p NAME`)
_NAME_OPTION = {"printf": "v", "test": "v", "[": "v", "wait": "p"}


def builtin_evaluates(name: str, args: Sequence[Word]) -> ShellVerdict | None:
    """Why builtin `name` evaluates text with these operands, or None when it does not."""
    if name not in _NAMING_BUILTINS:
        return None
    values = [a.value for a in args]
    binds = builtin_binds(name, values)  # `read PS4`, `printf -v PATH .`
    if binds is not None:
        return binds
    if name in ("mapfile", "readarray") and any(v is None or (v.startswith("-") and "C" in v) for v in values):
        return ShellVerdict(False, f"`{name} -C` evaluates its callback")
    if name == "jobs":
        if any(v is None or (v.startswith("-") and "x" in v) for v in values):
            return ShellVerdict(False, "`jobs -x` runs the command it is given")
        return None
    letter = _NAME_OPTION.get(name)
    if letter is not None and _unknown_option_names(name, args):
        return ShellVerdict(
            False, f"`{name}` with a word only known when it runs, which may be `-{letter}` before a subscripted name"
        )
    if letter is not None and not any(
        v is not None and re.fullmatch(r"-[A-Za-z]*" + letter + r".*", v) for v in values
    ):
        return None
    if any(v is None or "[" in v for v in values if v is None or not v.startswith("-")):
        return ShellVerdict(
            False, f"`{name}` with a variable name whose subscript bash expands (or only known when it runs)"
        )
    return None


def _unknown_option_names(name: str, args: Sequence[Word]) -> bool:
    """A word only known when bash runs (`"$x"`, `$'-v'`, a pattern `[-]v`) where `printf` or
    `wait` takes its options (before the first operand), or anywhere in `test` / `[`, followed by
    a name with a subscript, one only known when it runs or one that changes what runs next
    (`shell_bindings`): it may be `-v` / `-p` and that name (`x=-v; printf "$x" 'a[$(cmd)]' 1` runs `cmd`)."""
    for at, arg in enumerate(args[:-1]):
        following = args[at + 1].value
        if arg.value is None and (following is None or "[" in following or bound(following, "") is not None):
            return True
        if name in ("printf", "wait") and arg.value is not None and not arg.value.startswith("-"):
            return False  # the first operand: no option after it
    return False
