"""PostgreSQL's `psql` and MySQL's / MariaDB's `mysql` in the read-only shell grammar: a query
reads when every statement in it only queries.

Agents look into the databases of the services they work on (`psql "$DATABASE_URL" -c "SELECT
count(*) FROM orders"`, `mysql -u app -e "SHOW TABLES" shop`). Unlike SQLite's shell, a server
runs functions its database defines, and a `SELECT` may call one that writes (`SELECT
refund_order(7)`, `SELECT nextval('ids')`), so a statement reads only when every function it calls
is one of the server's own that compute (`count`, `coalesce`, `date_trunc`, `json_agg` …). A
statement reads when it is:

* `SELECT`, `VALUES`, `TABLE t`, or `WITH …`, with no word that writes, no `INTO` (PostgreSQL's
  `SELECT … INTO` creates a table, MySQL's writes a file) and no `FOR UPDATE`;
* `SHOW …`, `DESCRIBE` / `DESC t`, `USE db`, or `EXPLAIN` without `ANALYZE` (which runs the
  statement it explains);
* a psql meta-command that lists, describes or sets how results print (`\\dt`, `\\d users`, `\\l`,
  `\\du`, `\\x`, `\\conninfo` …), never `\\o`, `\\w`, `\\copy`, `\\!`, `\\i`, `\\e`, `\\g`, `\\gexec`,
  `\\set` or `\\lo_…`.

Text the grammar cannot read the way the server does stays mutating: a string with a backslash
(MySQL's escapes could end it elsewhere), a dollar-quoted string, a quoted name called as a
function. Comments are read as SQL (MySQL runs `/*! … */`, and `--1` is no comment there).

The client's own options: the query (`-c` / `-e`, or standard input the command shows), how
results print (`-A`, `-t`, `-x`, `--csv`, `-B`, `-N` …) and where to connect (`-h`, `-p`, `-U`,
`-d`, `-u`, `-pPASSWORD`). A connection value may be an expansion (`-h "$PGHOST"`), and so may the
connection operand when it is one double-quoted expansion (`psql "$DATABASE_URL" …`): the shell
passes it as one word, and a connection string or database name is no option. Everything else
stays mutating: a script file (`-f`), an output or log file (`-o`, `-L`, `--tee`), a pager or an
init command, an option the module does not list, and SQL the command does not show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Word, one_word, read

#: the server's own functions (and the keywords and type names written before a parenthesis) that
#: compute and change nothing
SERVER_FUNCTIONS = frozenset(
    {"count", "sum", "avg", "min", "max", "coalesce", "nullif", "greatest", "least", "ifnull", "if", "isnull"}
    | {"lower", "upper", "length", "char_length", "character_length", "octet_length", "substring", "substr"}
    | {"trim", "ltrim", "rtrim", "btrim", "concat", "concat_ws", "replace", "left", "right", "lpad", "rpad"}
    | {"position", "strpos", "split_part", "reverse", "repeat", "initcap", "format", "regexp_replace"}
    | {"regexp_match", "regexp_matches", "regexp_substr", "md5", "sha1", "sha2", "encode", "decode", "to_hex"}
    | {"round", "floor", "ceil", "ceiling", "abs", "trunc", "truncate", "mod", "power", "sqrt", "sign"}
    | {"now", "current_timestamp", "current_date", "current_time", "localtimestamp", "date_trunc", "date_part"}
    | {"extract", "to_char", "to_date", "to_timestamp", "to_number", "age", "make_date", "make_interval"}
    | {"date_format", "str_to_date", "datediff", "timestampdiff", "date_add", "date_sub", "curdate", "curtime"}
    | {"unix_timestamp", "from_unixtime", "year", "month", "day", "hour", "minute", "second", "timezone"}
    | {"cast", "convert", "array_agg", "string_agg", "group_concat", "json_agg", "jsonb_agg", "json_object_agg"}
    | {"jsonb_object_agg", "json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array"}
    | {"row_to_json", "to_json", "to_jsonb", "jsonb_pretty", "json_extract_path_text", "jsonb_extract_path_text"}
    | {"json_array_length", "jsonb_array_length", "json_typeof", "jsonb_typeof", "json_each", "jsonb_each"}
    | {"json_array_elements", "jsonb_array_elements", "json_object_keys", "jsonb_object_keys", "json_extract"}
    | {"json_unquote", "json_object", "json_array", "json_length", "json_keys", "json_contains"}
    | {"array_length", "unnest", "cardinality", "array_to_string", "string_to_array", "generate_series"}
    | {"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "lag", "lead", "first_value"}
    | {"last_value", "nth_value", "ntile", "bool_and", "bool_or", "stddev", "variance", "percentile_cont"}
    | {"version", "current_database", "current_schema", "current_user", "database", "schema", "user"}
    | {"pg_size_pretty", "pg_total_relation_size", "pg_relation_size", "pg_table_size", "pg_indexes_size"}
    | {"pg_database_size", "pg_column_size", "pg_typeof", "pg_get_viewdef", "pg_get_indexdef"}
    | {"pg_get_constraintdef", "pg_get_functiondef", "format_type", "obj_description", "col_description"}
    | {"pg_is_in_recovery", "current_setting", "connection_id", "found_rows", "last_insert_id", "chr", "ascii"}
    | {"hex", "unhex", "quote_ident", "quote_literal", "quote_nullable", "char_length", "bit_length", "ord"}
    # keywords and type names a parenthesis follows
    | {"in", "exists", "any", "all", "some", "values", "over", "filter", "within", "as", "from", "join", "on"}
    | {"using", "and", "or", "not", "where", "select", "when", "then", "else", "by", "having", "limit"}
    | {"is", "like", "ilike", "between", "union", "except", "intersect", "lateral", "distinct", "row"}
    | {"numeric", "decimal", "varchar", "char", "character", "varying", "float", "timestamp", "time"}
    | {"interval", "int", "integer", "bigint", "text", "date", "explain"}
)
#: words that make a statement that starts as a query write or run one that does: a writing `WITH`,
#: `SELECT … INTO`, `FOR UPDATE`, `EXPLAIN ANALYZE`, `EXPLAIN EXECUTE` (any other change starts its
#: own statement, whose first word is then no query)
_WRITE_WORDS = re.compile(
    r"\b(?:insert|update|delete|merge|upsert|replace\s+into|into|analyze|analyse|execute)\b", re.I
)
#: statements that only query or describe (and `use`, which only picks the session's database)
_READ_STATEMENTS = frozenset({"select", "values", "table", "with", "show", "describe", "desc", "explain", "use"})
#: comments first, in the same left-to-right scan as strings and names: a `'` inside a comment
#: opens no string (`/* ' */; DROP …; /* ' */`); MySQL's `/*!…*/` runs and `#` comments; a nested
#: PostgreSQL `/* /* */ */` is left for the check below to refuse
_STRINGS = r"'(?:[^'\\]|'')*'|\"(?:[^\"\\]|\"\")*\"|`[^`\\]*`"
_STRINGS_AND_NAMES = {
    # PostgreSQL: `--` to the line's end, `/* */` (a nested one is refused below); `#` is an operator
    True: re.compile(r"--[^\n\r]*|/\*(?:(?!/\*).)*?\*/|" + _STRINGS, re.S),
    # MySQL: `-- ` needs a space after it, `#` to the line's end, `/* */` but not `/*!…*/`, which runs
    False: re.compile(r"--(?=[\s\x00-\x1f]|$)[^\n]*|#[^\n]*|/\*(?![!+])(?:(?!/\*).)*?\*/|" + _STRINGS, re.S),
}
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_$]*|'')\s*\(")
#: psql's meta-commands that list, describe or set how results print (`S`, system objects too, and
#: `+`, more detail, may follow)
PSQL_READ_META = frozenset(
    {"d", "da", "dA", "dAc", "dAf", "dAo", "dAp", "db", "dc", "dC", "dd", "dD", "ddp", "dE", "di", "dm", "dn"}
    | {"do", "dO", "dp", "dP", "drds", "drg", "dRp", "dRs", "ds", "dt", "dT", "du", "dg", "dv", "dx", "dX", "dy"}
    | {"des", "det", "deu", "dew", "dF", "dFd", "dFp", "dFt", "df", "dfa", "dfn", "dft", "dfw", "dl", "l", "list"}
    | {"z", "sf", "sv", "conninfo", "x", "a", "t", "H", "timing", "pset", "encoding", "echo", "qecho", "q"}
    | {"?", "h", "help", "copyright", "errverbose", "f", "C", "warn"}
)
_META = re.compile(r"\\([A-Za-z?]+)[+S]*")


def server_sql_change(sql: str, psql: bool) -> str | None:
    """None when every statement (and, for `psql`, every meta-command) of `sql` only reads, else
    why not."""
    if not psql:  # `\\G` and `\\g` end a statement, as `;` does
        sql = re.sub(r"/\*[!+][0-9]*(.*?)\*/", r" \1 ", sql, flags=re.S)  # MySQL runs `/*!…*/`: read it as SQL
        sql = re.sub(r"\\[gG]", ";", sql)
        if "\\" in sql:
            return "a backslash: a client command, or an escape the grammar does not read"
    statements: list[str] = []
    for line in sql.split("\n"):
        if psql and "\\" in line:
            before, _, meta = line.partition("\\")
            why = _meta_change("\\" + meta)
            if why is not None:
                return why
            line = before
        statements.append(line)
    blanked = _STRINGS_AND_NAMES[psql].sub(
        lambda m: " " if m.group(0).startswith(("-", "#", "/")) else "''", "\n".join(statements)
    )
    if re.search(r"['\"`$\\]|/\*|\*/", blanked.replace("''", "")):
        return "a string or name the grammar does not read (an escape, a dollar quote)"
    for statement in blanked.split(";"):
        if statement.strip():
            why = _statement_change(statement)
            if why is not None:
                return why
    return None


def _statement_change(statement: str) -> str | None:
    first = statement.split(None, 1)[0].lower()
    if first not in _READ_STATEMENTS:
        return f"`{word(first.upper())}` changes the database or runs something"
    wrote = _WRITE_WORDS.search(statement)
    if wrote is not None:
        return f"`{first.upper()}` with `{word(wrote.group(0).upper())}`"
    for call in _CALL.finditer(statement):
        name = call.group(1).lower()
        if name not in SERVER_FUNCTIONS:
            shown = "a quoted name" if name == "''" else f"`{word(name)}()`"
            return f"calls {shown}, which the server may define to change something"
    return None


def _meta_change(text: str) -> str | None:
    """None when each psql meta-command in `text` (from its first backslash) only lists,
    describes or sets how results print."""
    if "`" in text:
        return "a meta-command's argument in backticks, which psql runs as a shell command"
    for at in (at for at, char in enumerate(text) if char == "\\"):
        match = _META.match(text, at)
        name = match.group(1) if match is not None else ""
        if match is None or (name not in PSQL_READ_META and name.removesuffix("S") not in PSQL_READ_META):
            shown = name or text[at + 1 : at + 2]
            return f"the meta-command `\\{word(shown)}` writes, reads a file or runs something"
    return None


# ---------------------------------------------------------------- the clients' options


@dataclass(frozen=True)
class SqlClient:
    """A SQL client's command line: which options give the query, say where to connect (their
    values may be expansions), choose how results print, or take no value; what else it takes."""

    query: frozenset[str]
    connection: frozenset[str]
    settings: frozenset[str]
    flags: frozenset[str]
    #: options whose value is only ever attached (`mysql -pSECRET`; a bare `-p` asks for it)
    attached_only: frozenset[str]
    #: the most operands it takes (a database, a user)
    operands: int
    psql: bool

    def takes_value(self, option: str) -> bool:
        return option in self.query or option in self.connection or option in self.settings


PSQL = SqlClient(
    query=frozenset({"-c", "--command"}),
    connection=frozenset({"-h", "--host", "-p", "--port", "-U", "--username", "-d", "--dbname"}),
    settings=frozenset({"-F", "--field-separator", "-R", "--record-separator", "-P", "--pset", "-T"})
    | {"--table-attr", "-v", "--set", "--variable"},
    flags=frozenset({"-A", "--no-align", "-t", "--tuples-only", "-x", "--expanded", "-q", "--quiet", "-X"})
    | {"--no-psqlrc", "-w", "--no-password", "-W", "--password", "-H", "--html", "--csv", "-b", "-e"}
    | {"--echo-errors", "--echo-queries", "-E", "--echo-hidden", "-n", "--no-readline", "-z", "-0"}
    | {"--field-separator-zero", "--record-separator-zero", "-l", "--list", "-V", "--version", "-?", "--help"},
    attached_only=frozenset(),
    operands=2,
    psql=True,
)
MYSQL = SqlClient(
    query=frozenset({"-e", "--execute"}),
    connection=frozenset({"-h", "--host", "-P", "--port", "-u", "--user", "-D", "--database", "-S"})
    | {"--socket", "--protocol", "--ssl-mode", "--ssl-ca", "--default-character-set", "--connect-timeout"},
    settings=frozenset(),
    flags=frozenset({"-B", "--batch", "-N", "--skip-column-names", "--column-names", "-s", "--silent", "-t"})
    | {"--table", "-r", "--raw", "-E", "--vertical", "-X", "--xml", "-H", "--html", "-A", "--no-auto-rehash"}
    | {"-v", "--verbose", "-q", "--quick", "-n", "--unbuffered", "--ssl", "--skip-ssl", "-C", "--compress"}
    | {"-V", "--version", "-?", "--help", "--safe-updates", "-U", "--i-am-a-dummy", "--no-defaults"}
    | {"--skip-pager", "--no-beep", "--binary-mode", "--skip-reconnect"},
    attached_only=frozenset({"-p", "--password"}),
    operands=1,
    psql=False,
)


def psql(name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    """`psql [options] [DBNAME [USER]]`: reads when its `-c` queries, or with none its standard
    input the command shows, only read; `-l` alone lists the databases."""
    return _client_verdict(PSQL, name, args, stdin)


def mysql(name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    """`mysql|mariadb [options] [DB]`: reads when its `-e` queries, or with none its standard input
    the command shows, only read."""
    return _client_verdict(MYSQL, name, args, stdin)


def _client_verdict(client: SqlClient, name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    queries: list[str] = []
    options: list[str] = []
    operands = 0
    index = 0
    while index < len(args):
        current = args[index]
        if current.value is None and not current.text.startswith("-"):
            if not _QUOTED_EXPANSION.fullmatch(current.text):
                return ShellVerdict(False, f"`{word(name)}` with a word known only when the shell runs")
            operands += 1  # `"$DATABASE_URL"`: one word, and no connection string is an option
            index += 1
            continue
        if current.value is None:  # `-p"$PW"`, `--host="$H"`: a connection value, attached
            prefix = _OPTION_PREFIX.match(current.text)
            parsed = _options(client, (prefix.group(0) if prefix else "-") + "x")
            *leading, (option, _) = parsed or [("", None)]
            if (
                not one_word(current)
                or any(flag not in client.flags for flag, _ in leading)
                or (option not in client.connection and option not in client.attached_only)
            ):
                return ShellVerdict(False, f"`{word(name)}` with an option known only when the shell runs")
            index += 1
            continue
        parsed = _options(client, current.value)
        if not parsed:
            operands += 1
        for option, attached in parsed:
            if option not in client.flags and not client.takes_value(option) and option not in client.attached_only:
                return ShellVerdict(False, f"`{word(name)} {word(option)}`: an option the grammar does not read")
            options.append(option)
            if not client.takes_value(option) or attached is not None:
                value: str | None = attached
            else:
                index += 1
                following = args[index] if index < len(args) else None
                value = following.value if following is not None else None
                if following is None:
                    return ShellVerdict(False, f"`{word(name)} {word(option)}` without its value")
                if value is None and (option not in client.connection or not one_word(following)):
                    return ShellVerdict(False, f"`{word(name)} {word(option)}` with a value known only when it runs")
            if option in client.query and value is not None:
                queries.append(value)
        index += 1
    if operands > client.operands:
        return ShellVerdict(False, f"`{word(name)}` with more operands than it takes")
    if not queries:
        if "-l" in options or "--list" in options:
            return read(f"{name} -l")
        if options in (["-V"], ["--version"], ["-?"], ["--help"]) and not operands:
            return read(f"{name} {options[0]}")
        if stdin is None:
            return ShellVerdict(
                False, f"`{word(name)}` reads its SQL from standard input, which the command does not show"
            )
        if any(option in client.settings and option.lstrip("-") in ("v", "set", "variable") for option in options):
            return ShellVerdict(
                False, f"`{word(name)} -v` with SQL on standard input: psql puts the variable's value in the SQL"
            )
        queries.append(stdin)
    for query in queries:
        why = server_sql_change(query, client.psql)
        if why is not None:
            return ShellVerdict(False, f"`{word(name)}`: {why}")
    return read(f"{name} (query)")


def _options(client: SqlClient, value: str) -> list[tuple[str, str | None]]:
    """The options a word holds, each with its attached value (None: none, or the next word's):
    `--host=db`, `-tAc` (three), `-uroot`; no options for an operand."""
    if not value.startswith("-") or value == "-":
        return []
    if value.startswith("--"):
        option, equals, attached = value.partition("=")
        return [(option, attached if equals else None)]
    parsed: list[tuple[str, str | None]] = []
    for at, letter in enumerate(value[1:], start=2):
        option = "-" + letter
        if client.takes_value(option) or option in client.attached_only:
            parsed.append((option, value[at:] or None))
            break
        parsed.append((option, None))
    return parsed


_QUOTED_EXPANSION = re.compile(r'"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)"')
_OPTION_PREFIX = re.compile(r"-[^\"'$`]*")
