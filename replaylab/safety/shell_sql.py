"""SQLite's shell of the read-only shell grammar: `sqlite3 DB "SQL"` reads when every statement of
its SQL only queries.

Agents look into databases with it (`sqlite3 app.db "SELECT count(*) FROM users"`, `sqlite3 -json
app.db ".tables"`). It reads when the SQL is on the command line and each statement is one of:

* `SELECT`, `VALUES` or `EXPLAIN …` (SQLite's `EXPLAIN` only shows the plan), or `WITH …` whose
  text holds no `INSERT`, `UPDATE`, `DELETE` or `REPLACE`;
* `PRAGMA name` or `PRAGMA name(arg)` for a pragma that only reports (`table_info`,
  `integrity_check` …); `PRAGMA name = value` sets it;
* a dot command that only prints (`.tables`, `.schema`, `.mode json`, `.headers on` …).

Everything else is mutating: a statement that writes, `ATTACH`, a CLI function that writes a file
or runs an editor (`writefile`, `edit`) or loads code (`load_extension`), a dot command that writes
or runs something (`.output`, `.once`, `.save`, `.import`, `.shell`, `.read` …), `-init FILE`, and
SQL read from standard input that the command does not show (`sqlite3 db < migrate.sql`, `cat
migrate.sql | sqlite3 db`, `echo "$SQL" | sqlite3 db`). SQL a here-document, a here-string or a
literal `echo` gives (`sqlite3 db <<'SQL'`, `echo '.tables' | sqlite3 db`) is on the command line,
and is read like an operand's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Word, dynamic, known_values, read

#: options that only choose how results print
_FLAGS = frozenset(
    {"-readonly", "-header", "-noheader", "-column", "-csv", "-json", "-line", "-list", "-table", "-box"}
    | {"-markdown", "-html", "-quote", "-tabs", "-ascii", "-bail", "-batch", "-echo", "-safe", "-nofollow"}
    | {"-version", "-help", "-stats", "-interactive", "-no-rowid-in-view", "-memtrace"}
)
#: options followed by a value that only formats what prints
_VALUE_OPTIONS = frozenset({"-separator", "-newline", "-nullvalue", "-escape", "-vfs", "-maxsize", "-pagecache"})
#: dot commands that only print or set how the CLI prints
_READ_DOT = frozenset(
    {"tables", "table", "schema", "indexes", "indices", "databases", "dbinfo", "dump", "fullschema", "help"}
    | {"mode", "headers", "header", "width", "nullvalue", "separator", "show", "timer", "changes", "eqp"}
    | {"echo", "print", "stats", "dbconfig", "lint", "expert", "explain", "bail", "version", "quit", "exit"}
)
#: pragmas whose argument names what to report (`PRAGMA table_info(users)`)
_QUERY_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
    | {"foreign_key_check", "integrity_check", "quick_check"}
)
#: pragmas that report without an argument and set with one (`PRAGMA user_version = 5`)
_SETTING_PRAGMAS = frozenset(
    {"database_list", "collation_list", "function_list", "module_list", "pragma_list", "compile_options"}
    | {"data_version", "freelist_count", "page_count", "page_size", "user_version", "schema_version"}
    | {"application_id", "journal_mode", "foreign_keys", "encoding", "auto_vacuum", "cache_size"}
    | {"busy_timeout", "synchronous"}
)
_WRITE_WORDS = re.compile(r"\b(?:insert|update|delete|replace\s+into|create|drop|alter|attach|detach|vacuum)\b", re.I)
_WRITE_FUNCTIONS = re.compile(r"\b(?:writefile|edit|load_extension|fts3_tokenizer)\s*\(", re.I)
#: comments, strings and quoted names, in one left-to-right scan: a `'` inside `[x']`, a comment or
#: a `"…"` name opens no string; SQLite takes `"name"`, `[name]` and `` `name` `` as a name, also
#: a function's (`[writefile](…)`)
_COMMENTS_AND_STRINGS = re.compile(
    r"--[^\n]*|/\*.*?(?:\*/|$)|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\[[^\]]*\]|`(?:[^`]|``)*`", re.S
)
_PRAGMA = re.compile(r"pragma\s+(?:\w+\.)?(\w+)\s*(\(\s*[^()]*\))?", re.I)


def _statement_reads(statement: str) -> str | None:
    """None when one SQL statement (comments and literals blanked) only queries, else why not."""
    first = statement.split(None, 1)[0].lower()
    if _WRITE_FUNCTIONS.search(statement):
        return "calls a function that writes a file, runs an editor or loads code"
    if first in ("select", "values", "explain", "with"):
        if _WRITE_WORDS.search(statement):
            return f"`{first.upper()}` with a statement that writes"
        return None
    if first == "pragma":
        match = _PRAGMA.fullmatch(statement.strip())
        pragma = match.group(1).lower() if match is not None else ""
        if pragma in _QUERY_PRAGMAS or (pragma in _SETTING_PRAGMAS and match is not None and not match.group(2)):
            return None
        return "a `PRAGMA` that sets or changes something"
    return f"`{word(first.upper())}` changes the database or its connection"


def _blanked(match: re.Match[str]) -> str:
    """A comment as a space, a string as `''`, a quoted name as its bare text (a name of letters,
    digits and `_` only, else `"x"`), so the checks see `[writefile](` as `writefile(`."""
    text = match.group(0)
    if text.startswith(("-", "/")):
        return " "
    if text.startswith("'"):
        return "''"
    name = text[1:-1]
    return name if re.fullmatch(r"\w+", name) else "x"


def _pending(sql: str) -> bool:
    """Whether `sql` ends inside a string, a quoted name, a comment or an unfinished statement."""
    blanked = _COMMENTS_AND_STRINGS.sub(_blanked, sql)
    if re.search(r"['\"`\[]|/\*", blanked.replace("''", " ")):
        return True
    return bool(blanked.rsplit(";", 1)[-1].strip())


#: a line sqlite3 takes for `;` (`line_is_command_terminator`): `go` or `/`, then only blanks and
#: comments (`go -- end`, `/ /* x */`)
_TERMINATOR = re.compile(r"(?:/|go)(?:\s|--.*|/\*.*?\*/)*", re.IGNORECASE)


def sql_reads(sql: str) -> str | None:
    """None when every statement or dot command of `sql` only reads, else why not."""
    lines = sql.split("\n")
    statements: list[str] = []
    for line in lines:
        stripped = line.strip()
        if _TERMINATOR.fullmatch(stripped) and not _pending("\n".join(statements) + ";"):
            statements.append(";")  # the shell's SQL Server / Oracle terminators end the statement
            continue
        # a line is a dot command only between statements: inside a string or an unfinished
        # statement (`SELECT 'a⏎.tables x'; DELETE …`) it is SQL
        if stripped.startswith(".") and not _pending("\n".join(statements)):
            command = stripped[1:].split(None, 1)[0].lower() if stripped[1:].strip() else ""
            if command not in _READ_DOT:
                return f"the dot command `.{word(command)}` writes, reads a file or runs something"
            continue
        statements.append(line)
    text = _COMMENTS_AND_STRINGS.sub(_blanked, "\n".join(statements))
    for statement in text.split(";"):
        if statement.strip():
            why = _statement_reads(statement)
            if why is not None:
                return why
    return None


def sqlite3(name: str, values: list[str], stdin: str | None = None) -> ShellVerdict:
    """`sqlite3 [options] DB [SQL …]`: reads when the SQL on the command line only queries, or
    with none there, the SQL `stdin` gives (a here-document, known before it runs)."""
    operands: list[str] = []
    index = 0
    while index < len(values):
        value = values[index]
        option = "-" + value.lstrip("-") if value.startswith("-") and value != "-" else None
        if option is None:
            operands.append(value)
        elif option in _VALUE_OPTIONS:
            index += 1
        elif option == "-cmd" and index + 1 < len(values):
            why = sql_reads(values[index + 1])
            if why is not None:
                return ShellVerdict(False, f"`{word(name)} -cmd`: {why}")
            index += 1
        elif option not in _FLAGS:
            return ShellVerdict(False, f"`{word(name)} {word(value)}` is an option the grammar does not read")
        index += 1
    if values in (["-version"], ["--version"], ["-help"], ["--help"]):
        return read(f"{name} {values[0]}")
    if len(operands) < 2 and stdin is not None:
        why = sql_reads(stdin)
        if why is not None:
            return ShellVerdict(False, f"`{word(name)}` (SQL on standard input): {why}")
        return read(f"{name} (query on standard input)")
    if len(operands) < 2:
        return ShellVerdict(False, f"`{word(name)}` reads its SQL from standard input, which the command does not show")
    for sql in operands[1:]:
        why = sql_reads(sql)
        if why is not None:
            return ShellVerdict(False, f"`{word(name)}`: {why}")
    return read(f"{name} (query)")


def sqlite3_command(name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    """`sqlite3` by its words: every word must be known (an expansion could be an option)."""
    values = known_values(args)
    return dynamic(name) if values is None else sqlite3(name, values, stdin)
