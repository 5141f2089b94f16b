"""`sqlite3` in the read-only shell grammar: a query on the command line reads; a statement that
writes, a pragma that sets, a dot command or function that writes or runs something, and SQL the
command does not show (standard input from a file or a pipe, `-init`, an expansion) are mutating,
each named; SQL a here-document gives is on the command line and reads the same way."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict


@pytest.mark.parametrize(
    "command",
    [
        'sqlite3 app.db "SELECT count(*) FROM users"',
        'sqlite3 -header -column state.db "select id, title from sessions order by updated_at desc limit 5" | head',
        "sqlite3 -json app.db '.tables'",
        "sqlite3 app.db '.schema users' '.indexes'",
        "sqlite3 app.db 'PRAGMA table_info(users); PRAGMA user_version'",
        "sqlite3 app.db \"SELECT replace(name, 'delete', '') FROM t -- drop nothing\"",
        "sqlite3 app.db 'WITH recent AS (SELECT * FROM runs LIMIT 3) SELECT id FROM recent'",
        "sqlite3 app.db -readonly 'EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1'",
        "sqlite3 --version",
        "sqlite3 app.db <<'SQL'\n.headers on\nSELECT id, name\nFROM users\nLIMIT 5;\nSQL",
        "sqlite3 app.db <<< 'SELECT count(*) FROM t'",
        "echo '.tables' | sqlite3 app.db | head",
        "echo -n 'SELECT 1;' | sqlite3 -json app.db",
        "cat <<'SQL' | sqlite3 app.db\nSELECT id FROM runs;\nSQL",
    ],
)
def test_a_query_on_the_command_line_reads(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert "`sqlite3" in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ('sqlite3 app.db "DELETE FROM users WHERE id = 3"', "`DELETE` changes the database"),
        ("sqlite3 app.db 'SELECT 1; DROP TABLE users'", "`DROP` changes the database"),
        ("sqlite3 app.db 'INSERT OR REPLACE INTO t VALUES (1)'", "`INSERT` changes the database"),
        ("sqlite3 app.db 'WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x'", "`WITH` with a statement that writes"),
        ("sqlite3 app.db 'ATTACH DATABASE \"b.db\" AS b'", "`ATTACH` changes the database or its connection"),
        ("sqlite3 app.db 'PRAGMA user_version = 3'", "a `PRAGMA` that sets or changes something"),
        ("sqlite3 app.db 'PRAGMA journal_mode(WAL)'", "a `PRAGMA` that sets or changes something"),
        ("sqlite3 app.db 'PRAGMA optimize'", "a `PRAGMA` that sets or changes something"),
        ("sqlite3 app.db \"SELECT writefile('x.bin', data) FROM t\"", "a function that writes a file"),
        ("sqlite3 app.db \"SELECT load_extension('./evil')\"", "loads code"),
        ("sqlite3 app.db '.output out.txt' 'SELECT 1'", "the dot command `.output`"),
        ("sqlite3 app.db '.shell rm -rf x'", "the dot command `.shell`"),
        ("sqlite3 app.db < migrate.sql", "reads its SQL from standard input"),
        ("echo 'DELETE FROM t' | sqlite3 app.db", "(SQL on standard input): `DELETE`"),
        ("cat migrate.sql | sqlite3 app.db", "reads its SQL from standard input"),
        ('echo "$SQL" | sqlite3 app.db', "reads its SQL from standard input"),
        ("echo -e 'SELECT 1' | sqlite3 app.db", "reads its SQL from standard input"),  # escapes expanded
        ("echo 'SELECT 1\\x3b DROP TABLE t' | sqlite3 app.db", "reads its SQL from standard input"),
        ("cat <<'SQL' | grep -v '^--' | sqlite3 app.db\nSELECT 1;\nSQL", "reads its SQL from standard input"),
        # the parser hangs a here-document or `<` after a pipeline on the whole pipeline; it is the
        # last command's input, not what the `echo` before it prints
        ("echo 'SELECT 1' | sqlite3 app.db <<'SQL'\nDELETE FROM t;\nSQL", "(SQL on standard input): `DELETE`"),
        ("echo 'SELECT 1' | sqlite3 app.db < migrate.sql", "reads its SQL from standard input"),
        ("sqlite3 -init setup.sql app.db 'SELECT 1'", "`sqlite3 -init` is an option the grammar does not read"),
        ("sqlite3 -cmd 'DELETE FROM t' app.db 'SELECT 1'", "`sqlite3 -cmd`: `DELETE`"),
        ('sqlite3 app.db "SELECT * FROM t WHERE id = $ID"', "a word known only when the shell runs"),
        ("sqlite3 app.db <<'SQL'\nSELECT 1;\nUPDATE t SET a = 2;\nSQL", "(SQL on standard input): `UPDATE`"),
        ("sqlite3 app.db <<SQL\nSELECT * FROM t WHERE id = $ID;\nSQL", "reads its SQL from standard input"),
        ('sqlite3 app.db <<< "$QUERY"', "reads its SQL from standard input"),
    ],
)
def test_what_makes_sqlite3_mutating_is_named(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason
