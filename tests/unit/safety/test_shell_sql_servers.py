"""`psql` and `mysql` in the read-only shell grammar: a query that only reads, on the command line
or on standard input the command shows, reads; a statement that writes, a function the server may
define, a meta-command or client command that writes or runs something, text the grammar cannot
read the server's way, and an option or a word it does not know are mutating, each named."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.safety.shell_grammar import grammar_verdict


@pytest.mark.parametrize(
    "command",
    [
        'psql "$DATABASE_URL" -c "SELECT count(*) FROM orders WHERE status = \'open\'"',
        'psql "$DATABASE_URL" -tAc "SELECT id FROM users ORDER BY created_at DESC LIMIT 5"',
        "psql -h localhost -p 5432 -U app -d shop -c 'SELECT id, status FROM orders ORDER BY id DESC LIMIT 5'",
        'PGPASSWORD=secret psql -h "$PGHOST" -U postgres -c "SELECT version()"',
        'psql -d "$DATABASE_URL" -c "\\dt"',
        "psql shop -c '\\d+ users'",
        "psql shop -c '\\dtS+ pg_*'",
        "psql -l",
        "psql -X --csv -P pager=off -c 'SELECT date_trunc($q$day$q$, now())' -c '\\x'".replace("$q$", "''"),
        "psql -c 'EXPLAIN (FORMAT JSON) SELECT * FROM t WHERE a = 1'",
        "psql -c 'SHOW server_version'",
        "psql -c 'WITH recent AS (SELECT * FROM runs LIMIT 3) SELECT id, coalesce(note, '''') FROM recent'",
        "psql shop <<'SQL'\nSELECT count(*) FROM users;\n\\dt\nSQL",
        "docker exec -i db psql -U postgres -c 'SELECT count(*) FROM users'",
        "mysql -u root -p\"$MYSQL_PWD\" shop -e 'SHOW TABLES'",
        "mysql -uroot -BNe 'SELECT id FROM t WHERE name LIKE \"a%\"'",
        "mysql -e 'SELECT * FROM users LIMIT 3\\G'",
        "mysql shop -e 'DESCRIBE users; SHOW CREATE TABLE users'",
        'mariadb -h db --password="$PW" -e \'SELECT json_extract(doc, "$.a") FROM t\''.replace('"$.a"', "'x'"),
        "echo 'SHOW DATABASES;' | mysql -u app",
        "psql -V",
    ],
)
def test_a_query_that_only_reads_reads(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert "`psql" in verdict.reason or "`mysql" in verdict.reason or "`mariadb" in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("psql -c 'DELETE FROM orders WHERE id = 7'", "`DELETE` changes the database"),
        ("psql -c 'SELECT 1; UPDATE t SET a = 2'", "`UPDATE` changes the database"),
        ("psql -c 'SELECT refund_order(7)'", "calls `refund_order()`, which the server may define"),
        ("psql -c \"SELECT nextval('ids')\"", "calls `nextval()`"),
        ("psql -c 'SELECT public.send_mail(1)'", "calls `send_mail()`"),
        ("psql -c 'SELECT \"Refund\"(7)'", "calls a quoted name"),
        ("psql -c 'WITH gone AS (DELETE FROM t RETURNING *) SELECT count(*) FROM gone'", "`WITH` with `DELETE`"),
        ("psql -c 'SELECT * INTO backup FROM t'", "`SELECT` with `INTO`"),
        ("psql -c 'SELECT * FROM jobs FOR UPDATE'", "`SELECT` with `UPDATE`"),
        ("psql -c 'EXPLAIN ANALYZE DELETE FROM t'", "`EXPLAIN` with `ANALYZE`"),
        ("psql -c 'SELECT $$x$$'", "a string or name the grammar does not read"),
        ("psql -c '\\copy t TO out.csv'", "the meta-command `\\copy`"),
        ("psql -c '\\dt \\! rm -rf x'", "the meta-command `\\!`"),
        ("psql -c 'SELECT 1 \\g out.txt'", "the meta-command `\\g`"),
        ("psql -c '\\echo `rm -rf x`'", "in backticks, which psql runs as a shell command"),
        ("psql -f migrate.sql", "`psql -f`: an option the grammar does not read"),
        ("psql -o out.txt -c 'SELECT 1'", "`psql -o`: an option the grammar does not read"),
        ("psql -Atqo out.txt -c 'SELECT 1'", "`psql -o`: an option the grammar does not read"),
        ("psql -L log.txt -c 'SELECT 1'", "`psql -L`"),
        ("psql $DATABASE_URL -c 'SELECT 1'", "a word known only when the shell runs"),  # split into words
        ('psql -c "$QUERY"', "a value known only when it runs"),
        ('psql -tAo"$F" -c "SELECT 1"', "an option known only when the shell runs"),
        ("psql shop < migrate.sql", "reads its SQL from standard input, which the command does not show"),
        ("psql", "reads its SQL from standard input"),
        ("mysql -e \"SELECT 'it\\\\'s'; DELETE FROM t\"", "a backslash"),
        ("mysql -e 'SELECT 1 /*! ; DROP TABLE t */'", "`DROP` changes the database"),
        ("mysql -e 'SELECT 1 --1; DROP TABLE t'", "`DROP` changes the database"),  # `--1` is no comment
        ("mysql -e 'SELECT 1 INTO OUTFILE \"/tmp/x\"'", "`SELECT` with `INTO`"),
        ("mysql -e 'source dump.sql'", "`SOURCE` changes the database or runs something"),
        ("mysql -e 'system rm -rf x'", "`SYSTEM` changes the database or runs something"),
        ("mysql -e 'CALL close_account(3)'", "`CALL` changes the database"),
        ("mysql --tee=log.txt -e 'SELECT 1'", "`mysql --tee`: an option the grammar does not read"),
        ("mysql --pager=less -e 'SELECT 1'", "`mysql --pager`"),
        ("mysql --init-command='DELETE FROM t' -e 'SELECT 1'", "`mysql --init-command`"),
        ("mysql shop < dump.sql", "reads its SQL from standard input"),
        ("mysql -p shop extra -e 'SELECT 1'", "more operands than it takes"),
        ("echo 'DROP DATABASE shop' | mysql", "`DROP` changes the database"),
    ],
)
def test_what_makes_psql_or_mysql_mutating_is_named(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


_READS = [
    "SELECT count(*) FROM orders",
    "SELECT id, lower(name) FROM users WHERE id IN (1, 2)",
    "SHOW TABLES",
    "EXPLAIN SELECT * FROM t",
]
_CHANGES = [
    "DELETE FROM t",
    "UPDATE t SET a = 1",
    "INSERT INTO t VALUES (1)",
    "DROP TABLE t",
    "SELECT refund(1)",
    "TRUNCATE t",
    "CALL p()",
    "GRANT ALL ON t TO x",
    "SELECT * INTO t2 FROM t",
    "EXPLAIN ANALYZE DELETE FROM t",
]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["psql", "mysql"]),
    st.lists(st.sampled_from(_READS) | st.text(max_size=20), max_size=4),
    st.sampled_from(_CHANGES),
    st.integers(min_value=0, max_value=4),
)
def test_no_query_raises_and_a_change_among_reads_is_never_read(
    client: str, statements: list[str], change: str, at: int
) -> None:
    """Whatever else the query holds, a statement that changes something, on a line of its own,
    keeps the client mutating, on the command line and on standard input (on the line of a `--`
    comment it is part of the comment)."""
    flag = "-c" if client == "psql" else "-e"
    assert grammar_verdict(f"{client} {flag} {shlex.quote('; '.join(statements))}").reason
    with_change = [*statements[:at], change, *statements[at:]]
    query = ";\n".join(with_change)
    assert not grammar_verdict(f"{client} {flag} {shlex.quote(query)}").read_only, query
    assert not grammar_verdict(f"{client} shop <<'SQL'\n{query}\nSQL").read_only, query
