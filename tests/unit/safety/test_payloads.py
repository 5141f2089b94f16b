"""A read verb in a tool's name against what its arguments send (`safety/payloads.py`): SQL that
writes, a GraphQL mutation, an HTTP method that sends a change make the call mutating; a query, a
search's words and a read statement of another dialect leave it read."""

from __future__ import annotations

import pytest

from replaylab.safety.classify import ToolClassifier
from replaylab.safety.payloads import payload_writes

WRITES = [
    ("mcp__mysql__mysql_query", {"sql": "DELETE FROM users WHERE id = 1"}, "`DELETE`"),
    ("mcp__postgres__query", {"sql": "DROP TABLE users"}, "`DROP`"),
    ("mcp__mssql__query", {"query": "TRUNCATE TABLE t"}, "`TRUNCATE`"),
    ("mcp__bigquery__query", {"query": "-- backfill\nINSERT INTO t VALUES (1)"}, "`INSERT`"),
    ("mcp__sqlite__read_query", {"query": "WITH x AS (SELECT 1) UPDATE t SET a = 1"}, "writes"),
    ("query-graphql", {"query": "# remove\nmutation { deleteUser(id: 1) { id } }"}, "GraphQL mutation"),
    ("query-graphql", {"query": "query A { a }\nmutation B { deleteUser(id: 1) { id } }"}, "GraphQL mutation"),
    ("mcp__fetch__fetch", {"url": "https://api.example.com/users/1", "method": "delete"}, "`method: DELETE`"),
    # a file the call writes what it got to (chrome-devtools-mcp under a key of the user's own)
    ("mcp__devtools__take_screenshot", {"filePath": "/tmp/shot.png"}, "`filePath` names a file the call writes"),
    ("mcp__devtools__get_network_request", {"reqid": 4, "responseFilePath": "r.json"}, "names a file the call writes"),
    # a key with `sql` among its words (AgentBench's `sql_cmd`)
    ("query_database", {"sql_cmd": "DELETE FROM users"}, "`DELETE`"),
    ("get_rows", {"rawSql": "DROP TABLE users"}, "`DROP`"),
]
READS = [
    ("mcp__mysql__mysql_query", {"sql": "SELECT * FROM users"}),
    ("mcp__mysql__mysql_query", {"sql": "SHOW TABLES"}),
    ("mcp__postgres__query", {"query": "/* how many */ SELECT count(*) FROM users"}),
    ("query-graphql", {"query": "query { users { id } }"}),
    ("query-graphql", {"query": '{ users(filter: "mutation") { id } } # no mutation'}),
    ("mcp__fetch__fetch", {"url": "https://example.com", "method": "GET"}),
    ("search_docs", {"query": "delete old files"}),  # a search's words, not a statement
    ("mcp__db__query", {"query": "how many users signed up"}),
    ("read_file", {"path": "notes/DELETE FROM.txt"}),
    # a database server's search takes words: only a tool that runs statements takes SQL
    ("mcp__neon__search", {"query": "delete old branches"}),
    ("read_file", {"filePath": "/tmp/shot.png"}),  # the file a tool reads, not one it writes
    ("query_database", {"sql_cmd": "SELECT name FROM users"}),
    ("get_status", {"mySqlHost": "db.internal"}),  # `sql` in a key whose value is no statement
]


@pytest.mark.parametrize(("name", "args", "why"), WRITES)
def test_a_read_verb_call_that_sends_a_change_is_mutating(name: str, args: dict, why: str) -> None:
    assert why in (payload_writes(args, name) or "")
    explained = ToolClassifier().explain(name, args)
    assert explained.mutating and explained.rule == "tool-name-verb" and why in explained.reason


@pytest.mark.parametrize(("name", "args"), READS)
def test_a_read_verb_call_that_sends_no_change_reads(name: str, args: dict) -> None:
    assert payload_writes(args, name) is None
    assert not ToolClassifier().explain(name, args).mutating
