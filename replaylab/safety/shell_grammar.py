"""replaylab's read-only shell grammar: which commands OpenClaw refuses to exempt still only read.

OpenClaw exempts a command only when it is one plain word list of a short executable list
(`shell.py`), so `git status`, `ls *.md | grep x`, `ps aux | grep node`, `tail -10 log; echo`
and `cd repo && git log` are all mutating there. This grammar reads the command with a real
shell parser (tree-sitter's bash grammar) and calls it read-only when every command it would run
only reads, and nothing writes a file:

* pipelines, `;` / `&&` / `||` / `&` lists, subshells, `{ …; }` groups, `if` / `for` / `while` /
  `case`, `!`, `[[ … ]]`: read-only when every command in them is;
* `$(…)`, backticks and `<(…)` run commands too: each is checked the same way;
* redirections: input (`<`, here-documents, here-strings) and descriptor copies (`2>&1`) are
  read-only; output to `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/1|2` too; **output to
  any other file writes** (`>`, `>>`, `&>`, `>|`, `<>`), whatever the command; and what else a
  redirection opens that writes (`shell_redirects`: sockets, a reopened descriptor);
* a command's standard input, when the command line shows it: the text of a here-document with a
  quoted delimiter (or nothing to expand), of a here-string, or of a literal `echo` or here-document
  `cat` before it in a pipeline. An interpreter that reads its program there (`python3 -
  <<'EOF'`, `sqlite3 db <<'SQL'`, `bash -s`) is decided by that text;
* variable assignments and `cd`, `export`, `set`: the shell's own state, gone with the command;
* each simple command by its executable and words (`shell_commands.py`): the read-only
  commands, git's / npm's / … read-only subcommands, PowerShell's `Get-*` / `Test-*` verbs, the
  wrappers whose inner command is checked (`env`, `xargs`, `timeout`, `bash -c`,
  `powershell -Command`), known writers and program runners always mutating.

Anything the parser cannot read (a syntax error, an unterminated quote), an executable that is
itself an expansion (`$CMD`), a function definition, or a construct not listed here is mutating:
unknown is unsafe, as everywhere in `safety/`. The parser is loaded on the first shell command
a run classifies (`import replaylab` never loads it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from replaylab import caches
from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_commands import command_verdict
from replaylab.safety.shell_environment import environment_change
from replaylab.safety.shell_evaluated import compound_header, evaluates_text
from replaylab.safety.shell_heredocs import heredoc_ends_exactly, heredoc_text, quoted_heredoc
from replaylab.safety.shell_redirects import descriptor, misread_expansion, opened_verdict
from replaylab.safety.shell_words import PLAIN_READ, Inner, Word, brace_expands, glob_word, globbed

#: the longest command the grammar reads; an agent's command is seldom a tenth of this
MAX_COMMAND_CHARS = 100_000
#: how deep commands may nest (`$(…)` in `bash -c` in `xargs` …) before the grammar gives up
MAX_DEPTH = 12

#: output redirections that write nothing anyone keeps (while no redirection opened a file on
#: descriptor 1 or 2, which `shell_redirects.opened_verdict` refuses)
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_OUTPUT_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>"})
#: nodes whose children are commands joined by operators: read-only when every child is
_SEQUENCES = frozenset({"program", "list", "pipeline", "subshell", "compound_statement", "do_group", "negated_command"})
#: compound commands: their conditions and bodies are commands, the rest words or keywords
_COMPOUNDS = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "case_statement",
        "case_item",
        "test_command",
    }
)
#: nodes that only change the shell's own variables
_SHELL_STATE = frozenset({"variable_assignment", "variable_assignments", "declaration_command", "unset_command"})
_SKIPPED = frozenset({"comment", ";", ";;", "&", "&&", "||", "|", "|&", "\n", "(", ")", "{", "}", "!"})
#: words, names and test expressions: they run nothing but the commands substituted into them
_WORDS = frozenset(
    {"word", "string", "raw_string", "concatenation", "number", "variable_name", "special_variable_name"}
    | {"test_operator", "unary_expression", "binary_expression", "parenthesized_expression", "postfix_expression"}
    | {"ternary_expression", "regex", "extglob_pattern", "array", "subscript", "string_content", "file_descriptor"}
)
_WORD_PARTS_DYNAMIC = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "ansi_c_string",
        "translated_string",
    }
)


@dataclass(frozen=True)
class _Parser:
    parser: Any


@caches.lru("safety.shell_parser", maxsize=1)
def _parser() -> _Parser:
    import tree_sitter
    import tree_sitter_bash

    return _Parser(tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())))


@caches.lru("safety.grammar_verdict", maxsize=8192)
def grammar_verdict(command: str | None, extra_read_only: frozenset[tuple[str, ...]] = frozenset()) -> ShellVerdict:
    """Whether a shell command only reads, and why (module rules). `extra_read_only`: a suite's
    read-only commands (word prefixes such as `("bd", "ready")`), read-only wherever they stand
    in the command. Cached by command."""
    if not command:
        return ShellVerdict(False, "no `command` / `cmd` string to read")
    if len(command) > MAX_COMMAND_CHARS:
        return ShellVerdict(False, f"a command of {len(command):,} characters is not read")
    return _Reader(extra_read_only).script(command, 0)


class _Reader:
    """One verdict's walk over the parse tree; `inner` re-enters it for `bash -c` strings.
    `read` collects why each command it met only reads, for the verdict's reason."""

    def __init__(self, extra_read_only: frozenset[tuple[str, ...]] = frozenset()) -> None:
        self.read: list[str] = []
        self.extra = extra_read_only

    def script(self, command: str, depth: int) -> ShellVerdict:
        if depth > MAX_DEPTH:
            return ShellVerdict(False, "commands nested too deep to read")
        # no shell passes a NUL on: only a broken or hostile transcript holds one
        if "\x00" in command:
            return ShellVerdict(False, "holds a NUL character, which no shell passes on: not read")
        try:
            source = command.encode("utf-8")
        except UnicodeEncodeError:
            return ShellVerdict(False, "holds a character with no UTF-8 form (a lone surrogate): not read")
        tree = _parser().parser.parse(_untimed(_parsable(source)))
        root = tree.root_node
        if root.has_error:
            return ShellVerdict(False, f"does not parse as shell{_where_error(root, source)}")
        misread = misread_expansion(root, source)
        if misread is not None:
            return misread
        reading = _SOURCE.set(source)
        try:
            found = self.node(root, depth)
        finally:
            _SOURCE.reset(reading)
        if found is not None:
            return found
        if depth:
            return ShellVerdict(True, "")
        reasons = list(dict.fromkeys(r.removeprefix(PLAIN_READ) for r in self.read))
        shown = ", ".join(reasons[:4]) + (f" and {len(reasons) - 4} more" if len(reasons) > 4 else "")
        return ShellVerdict(True, f"read-only shell: {shown or 'only assignments'}")

    def node(self, node: Any, depth: int) -> ShellVerdict | None:
        """None when `node` only reads; else the mutating verdict with its reason."""
        kind = node.type
        if kind in _SKIPPED or not node.is_named and kind not in ("command",):
            return None
        if kind == "pipeline":
            return self.pipeline(node, depth)
        if kind in _SEQUENCES or kind in _COMPOUNDS:
            return compound_header(node, _text) or self.children(node, depth)
        if kind == "redirected_statement":
            return self.redirected(node, depth)
        if kind == "command":
            return self.command(node, depth)
        if kind in _SHELL_STATE:
            return evaluates_text(node, _text) or self.environment(node, depth) or self.substitutions(node, depth)
        if kind in _REDIRECTS:
            return self.redirect(node, depth)
        if kind in ("command_substitution", "process_substitution"):
            return self.children(node, depth + 1)
        if kind == "function_definition":
            return ShellVerdict(False, "defines a shell function (what it runs is read only where it is called)")
        if kind in _WORD_PARTS_DYNAMIC or kind in _WORDS:
            return evaluates_text(node, _text) or self.substitutions(node, depth)
        return ShellVerdict(False, f"a `{kind}` construct is not one the read-only grammar knows")

    def children(self, node: Any, depth: int) -> ShellVerdict | None:
        for child in node.children:
            found = self.node(child, depth)
            if found is not None:
                return found
        return None

    def pipeline(
        self, node: Any, depth: int, given: str | None = None, last_redirects: Sequence[Any] = ()
    ) -> ShellVerdict | None:
        """A pipeline's commands in turn. `given` is what flows into the first (the here-document
        of `cat <<'EOF' | …`), and a command that prints literal text (`echo 'SELECT 1'`) gives it
        to the next as its standard input. `last_redirects` belong to the last command (the parser
        puts `a | b <<'EOF'`'s here-document around the whole pipeline)."""
        commands = [child for child in node.children if child.is_named]  # not `|`, `|&`
        for at, child in enumerate(commands):
            redirects = last_redirects if at == len(commands) - 1 else ()
            if child.type == "command":
                found = self.command(child, depth, redirects, given)
            elif child.type == "pipeline":
                found = self.pipeline(child, depth, given, redirects)
            else:
                found = self.node(child, depth)
            if found is not None:
                return found
            given = _echoed(child) if child.type == "command" else None
        return None

    def substitutions(self, node: Any, depth: int) -> ShellVerdict | None:
        """The commands `$(…)`, backticks and `<(…)` in or under `node` run: each must only read."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("command_substitution", "process_substitution"):
                found = self.children(current, depth + 1)
                if found is not None:
                    return found
            else:
                stack.extend(current.children)
        return None

    def environment(self, node: Any, depth: int, exported: bool = False) -> ShellVerdict | None:
        """What the variables an assignment (`exported` when it is set for the command it comes
        before), `export` or `declare` sets do to what runs next (`shell_environment`)."""
        inner = lambda text: self.script(text, depth + 1)  # noqa: E731
        stack = [(node, exported)]
        while stack:
            current, outward = stack.pop()
            if current.type == "variable_assignment":
                name, value = current.child_by_field_name("name"), current.child_by_field_name("value")
                if name is not None:
                    given = _word(value) if value is not None else Word("", "")
                    found = environment_change(_text(name).decode("utf-8", "replace"), given, inner, outward)
                    if found is not None:
                        return found
            elif current.type == "declaration_command":
                found = self.declaration(current, depth, inner)
                if found is not None:
                    return found
            elif current.type not in ("command_substitution", "process_substitution"):
                stack.extend((child, outward) for child in current.children)
        return None

    def declaration(self, node: Any, depth: int, inner: Inner) -> ShellVerdict | None:
        """`export` / `declare -x` / `local` / `readonly`: each name it sets, exported or not; a
        quoted `'NAME=value'` is an assignment to bash too; `export NAME` exports what an earlier
        `read`, `for` or `${NAME:=…}` set; `declare -n` makes a name that sets another."""
        keyword = _text(node.children[0]).decode("utf-8", "replace") if node.children else ""
        words = [glob_word(_word(c)) for c in node.named_children if c.type != "variable_assignment"]
        flags = "".join((w.value or "")[1:] for w in words if (w.value or "").startswith("-"))
        if "n" in flags:
            return ShellVerdict(False, f"`{keyword} -n` makes a name that sets another variable")
        exported = keyword == "export" or "x" in flags
        for child in node.named_children:
            if child.type == "variable_assignment":
                found = self.environment(child, depth, exported)
            elif child.type == "variable_name":
                bare = _text(child).decode("utf-8", "replace")
                found = environment_change(bare, Word(None, bare), inner, exported) if exported else None
            else:
                given = glob_word(_word(child))
                if given.value is None:
                    return ShellVerdict(False, f"`{keyword}` of a word known only when the shell runs")
                if given.value.startswith("-"):
                    continue
                name, equals, value = given.value.partition("=")
                found = environment_change(name, Word(value if equals else None, given.text), inner, exported)
            if found is not None:
                return found
        return None

    def suite_command(self, words: list[Word]) -> str | None:
        """The suite's read-only command these words start with, if any."""
        if not self.extra or any(w.value is None for w in words):
            return None
        values = tuple(w.value or "" for w in words)
        lowered = (values[0].lower(), *values[1:])
        for prefix in sorted(self.extra):
            if lowered[: len(prefix)] == prefix:
                return " ".join(prefix)
        return None

    def redirected(self, node: Any, depth: int) -> ShellVerdict | None:
        body = node.child_by_field_name("body")
        redirects = [child for child in node.children if child != body and child.type in _REDIRECTS]
        # `cat <<'EOF' | sqlite3 db`: the parser puts the rest of the pipeline inside the redirect
        printed = _standard_input(redirects) if _runs(body, b"cat") and _literal_words(body) == ["cat"] else None
        for child in node.children:
            if child != body:
                found = self.redirect(child, depth, printed)
            elif child.type == "command":
                found = self.command(child, depth, redirects)
            elif child.type == "pipeline":
                found = self.pipeline(child, depth, last_redirects=redirects)
            else:
                found = self.node(child, depth)
            if found is not None:
                return found
        return None

    def redirect(self, node: Any, depth: int, printed: str | None = None) -> ShellVerdict | None:
        """A redirection; `printed` is what the command before a here-document's pipeline prints."""
        if node.type == "heredoc_redirect":
            if not heredoc_ends_exactly(node, _SOURCE.get(), _operator(node)):
                return ShellVerdict(False, "a here-document whose end line bash would not take as its end")
            # `cat <<EOF > file`: the output redirection sits inside the here-document's node
            for child in node.children:
                if child.type == "pipeline":
                    found = self.pipeline(child, depth, printed)
                    if found is not None:
                        return found
                elif child.type in ("file_redirect", "list", "command", "redirected_statement"):
                    found = self.node(child, depth)
                    if found is not None:
                        return found
                elif child.type == "heredoc_body":
                    found = self.substitutions(child, depth)
                    if found is not None:
                        return found
            if not quoted_heredoc(node, _SOURCE.get()):
                # bash expands it as a double-quoted string, which the parser does not do for a line
                # that starts with a blank (`cat <<EOF⏎\t$(cmd)⏎EOF`): read as such (`"` → `_`)
                body = heredoc_text(node, _SOURCE.get()).replace('"', "_")
                before = len(self.read)
                again = self.script(f': "{body}\n"', depth + 1)
                if not again.read_only:
                    return again
                self.read[before:] = [r for r in self.read[before:] if r != f"{PLAIN_READ}`:`"]
            return None
        if node.type == "herestring_redirect":
            return evaluates_text(node, _text) or self.substitutions(node, depth)
        if node.type != "file_redirect":
            return self.node(node, depth)
        operator = _operator(node)
        destination = node.child_by_field_name("destination") or (
            node.named_children[-1] if node.named_children else None
        )
        found = evaluates_text(node, _text) or self.substitutions(node, depth)  # `< "${a[x]}"`, `< ${!x}`
        if found is not None:
            return found
        target = _word(destination) if destination is not None else Word(None, "")
        opened = opened_verdict(operator, descriptor(node, _SOURCE.get()), target.value, destination, _SOURCE.get())
        if opened is not None:
            return opened
        if operator not in _OUTPUT_OPERATORS:
            return None  # `<` reads a file; `<&` copies a descriptor
        if operator in (">&", "<>") and target.value is not None and re.fullmatch(r"[0-9]+|-", target.value):
            return None  # `2>&1`, `>&-`: descriptors, no file
        if target.value in HARMLESS_TARGETS:
            return None
        shown = word(target.value) if target.value is not None else target.text
        return ShellVerdict(False, f"`{operator}` redirection writes the file `{word(shown)}`")

    def command(
        self, node: Any, depth: int, outer_redirects: Sequence[Any] = (), piped: str | None = None
    ) -> ShellVerdict | None:
        """One simple command; `outer_redirects` are the statement's redirections around it (a
        here-document sits there), which may give it its standard input, else `piped` does."""
        words: list[Word] = []
        redirects = list(outer_redirects)
        source = _SOURCE.get()
        for before, after in zip(node.children, node.children[1:]):
            # `-\⏎delete`: bash joins the two halves into one word, the parser reads two
            if source[before.end_byte : after.start_byte] == b"\\\n":
                return ShellVerdict(False, "a line continuation inside a word (bash joins what the parser splits)")
        for child in node.children:
            if child.type == "variable_assignment":  # what it sets for the command, and its value's commands
                found = self.environment(child, depth, exported=True) or self.substitutions(child, depth)
                if found is not None:
                    return found
                continue
            if child.type in ("file_redirect", "herestring_redirect"):
                found = self.node(child, depth)
                if found is not None:
                    return found
                redirects.append(child)
                continue
            found = evaluates_text(child, _text) or self.substitutions(child, depth)
            if found is not None:
                return found
            if child.type == "command_name":
                words.append(_word(child.named_children[0] if child.named_children else child))
            elif child.is_named:
                words.append(_word(child))
        if not words:
            return None  # assignments only: the shell's own variables
        suite = self.suite_command(words)
        if suite is not None:
            self.read.append(f"`{word(suite)}` (suite)")
            return None
        stdin = _standard_input(redirects, piped) if redirects else piped
        verdict = command_verdict(globbed(words), lambda text: self.script(text, depth + 1), stdin)
        if not verdict.read_only:
            return verdict
        if verdict.reason:
            self.read.append(verdict.reason)
        return None


def _standard_input(redirects: Sequence[Any], piped: str | None = None) -> str | None:
    """The text a command reads on its standard input when one here-document or here-string gives
    it literally (`< /dev/null`: none), or with no redirection of its input, what is `piped` into
    it; None when that is unknown (a file, a second redirection, an expansion in the text)."""
    # `cmd <<EOF < file`: the parser puts what follows a here-document's start inside its node
    nested = [c for r in redirects if r.type == "heredoc_redirect" for c in r.children if c.type in _REDIRECTS]
    feeding = [r for r in [*redirects, *nested] if _feeds_standard_input(r)]
    if not feeding:
        return piped
    if len(feeding) != 1:
        return None
    redirect = feeding[0]
    if redirect.type == "file_redirect":
        return "" if _from_null_device(redirect) else None
    if redirect.type == "herestring_redirect":
        given = next((c for c in redirect.named_children if c.type != "file_descriptor"), None)
        value = _word(given).value if given is not None else None
        return None if value is None else value + "\n"
    operator = _operator(redirect)
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    end = next((c for c in redirect.children if c.type == "heredoc_end"), None)
    if operator not in ("<<", "<<-") or start is None or end is None or not _text(end):
        return None  # a shape the parser misreads (`0<<EOF`)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    text = _text(body).decode("utf-8", "replace") if body is not None else ""
    quoted = any(mark in _text(start).decode("utf-8", "replace") for mark in "'\"\\")
    if not quoted and any(mark in text for mark in "$`\\"):
        return None  # an unquoted delimiter: the shell expands the text first
    if operator == "<<-":
        text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
    return text


def _operator(redirect: Any) -> str:
    """A redirection's operator (`<`, `>>`, `<<-` …): its one unnamed child."""
    return next((c.type for c in redirect.children if not c.is_named), "")


def _from_null_device(redirect: Any) -> bool:
    """`< /dev/null`: an empty standard input, known as well as a here-document's."""
    operator = _operator(redirect)
    target = redirect.child_by_field_name("destination")
    return operator == "<" and target is not None and _word(target).value == "/dev/null"


def _runs(node: Any, program: bytes) -> bool:
    """Whether a command node's program is written `program` (a quick look before its words are read)."""
    name = node.child_by_field_name("name") if node is not None and node.type == "command" else None
    return name is not None and _text(name) == program


def _literal_words(node: Any) -> list[str] | None:
    """A command's words when each is known and it has no redirection or assignment, else None."""
    words: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            child = child.named_children[0] if child.named_children else child
        elif not child.is_named or child.type in _REDIRECTS or child.type == "variable_assignment":
            return None
        value = _word(child).value
        if value is None:
            return None
        words.append(value)
    return words


def _echoed(node: Any) -> str | None:
    """What `echo` prints when its words are literal and hold no backslash (an `echo` that expands
    escapes, as `sh`'s does, could print other text than is written); None for anything else."""
    words = _literal_words(node) if _runs(node, b"echo") else None
    if not words or words[0] != "echo":
        return None
    args = words[1:]
    newline = True
    while args and args[0] in ("-n", "-E"):
        newline = newline and args[0] != "-n"
        args = args[1:]
    text = " ".join(args)
    if (args and args[0].startswith("-") and args[0] != "-") or "\\" in text:
        return None
    return text + ("\n" if newline else "")


def _feeds_standard_input(redirect: Any) -> bool:
    descriptor = next((c for c in redirect.children if c.type == "file_descriptor"), None)
    if descriptor is not None and _text(descriptor) != b"0":
        return False
    if redirect.type != "file_redirect":
        return True
    return _operator(redirect) in ("<", "<&", "<>")


def _word(node: Any) -> Word:
    """A word's value as the shell would pass it (quotes removed, escapes resolved), or None
    when part of it is only known when the shell runs (`$x`, `$(…)`, `{a,b}`)."""
    text = _text(node).decode("utf-8", "replace")
    kind = node.type
    if kind in _WORD_PARTS_DYNAMIC:
        return Word(None, text)
    if kind == "raw_string":
        return Word(text[1:-1], text)
    if kind == "number":
        return Word(text, text)
    if kind == "word":
        return Word(None if brace_expands([node], _text) else _unescape(text), text)
    if kind == "string":
        # the text between the quotes, whole: the parser leaves a string's line breaks out of its
        # `string_content` parts
        if any(child.type not in ('"', "string_content") for child in node.children) or len(text) < 2:
            return Word(None, text)
        return Word(_unescape_quoted(text[1:-1]), text)
    if kind == "concatenation":
        values = [_word(child) for child in node.children]
        if any(v.value is None for v in values) or brace_expands(node.children, _text):
            return Word(None, text)
        return Word("".join(v.value or "" for v in values), text)
    return Word(None, text)


def _unescape(text: str) -> str:
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            if char != "\n":  # a backslash before a line break joins the lines: both go
                out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def _unescape_quoted(text: str) -> str:
    """Inside double quotes a backslash escapes only `$`, a backtick, `"` and `\\`; before a
    line break it removes both."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in '$`"\\\n':
            if text[index + 1] != "\n":  # a backslash before a line break joins the lines
                out.append(text[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


#: the command a node's text is read from: the parser is given `_parsable`'s copy of it
_SOURCE: ContextVar[bytes] = ContextVar("replaylab_shell_source")
#: a character past U+00FF in UTF-8: its lead byte is 0xC4 or above
_PAST_LATIN_1 = re.compile(rb"[\xc4-\xff][\x80-\xbf]*")


def _parsable(source: bytes) -> bytes:
    """`source` with every character past U+00FF replaced by as many `x` bytes as it takes. The bash
    parser's scanner looks a character up in the C library's character tables, which hold 256
    entries: one far past them (`{` before U+DD058) reads memory that may not be there, and the
    process dies. A word character for a word character, byte for byte: the tree is the same
    shape, its offsets hold, and every text is read from `source` itself (`_text`)."""
    if source.isascii():
        return source
    return _PAST_LATIN_1.sub(lambda match: b"x" * len(match.group(0)), source)


#: bash's and zsh's reserved word `time [-p]` where a command may start: it times the pipeline
#: after it, which may be a compound command (`time for …; done`, `time { …; }`, `time ( … )`)
_TIME_WORD = re.compile(rb"(?:^|(?<=[;&|(){}!\n]))([ \t]*)(time(?:[ \t]+-p)?)(?=[ \t\n])(?![ \t]+-)")


def _untimed(source: bytes) -> bytes:
    """`source` with the reserved word `time [-p]` blanked where a command starts, byte for byte:
    tree-sitter's bash grammar does not know the word and reads `time for i in …` as a command
    `time` with words `for`, `i` …. Bash runs the pipeline after it unchanged (it only reports the
    time taken), so the tree of the rest decides. Another option after it stays the program `time`'s:
    `sh`, and bash in POSIX mode, run /usr/bin/time then (`time -o FILE cmd`). Only the parsed copy changes."""
    return _TIME_WORD.sub(lambda m: m.group(1) + b" " * len(m.group(2)), source)


def _text(node: Any) -> bytes:
    """A node's text, from the command as written (the parser saw `_parsable`'s copy)."""
    return _SOURCE.get()[node.start_byte : node.end_byte]


def _where_error(root: Any, source: bytes) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            at = source[: node.start_byte].decode("utf-8", "replace")
            return f" (at character {len(at) + 1})"
        stack.extend(reversed(node.children))
    return ""
