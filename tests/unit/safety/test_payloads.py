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
    # BFCL's Gorilla file system: `echo` writes its content to `file_name`
    ("echo", {"content": "hello", "file_name": "notes.txt"}, "`file_name` names a file the call writes"),
    # graph databases: Cypher (FalkorDB, Kuzu) and AQL (ArangoDB) that write
    ("mcp__falkordb__query_graph", {"graphName": "g", "query": "CREATE (:Person {name: 'Ann'})"}, "`CREATE`"),
    ("mcp__falkordb__query_graph", {"graphName": "g", "query": "MATCH (n) DETACH DELETE n"}, "`DETACH`"),
    ("mcp__kuzu__query", {"cypher": "MATCH (u:User) WHERE u.age > 30 SET u.senior = true"}, "`SET`"),
    ("mcp__arangodb__arango_query", {"query": "FOR u IN users FILTER u.old REMOVE u IN users"}, "`REMOVE`"),
    ("mcp__arangodb__arango_query", {"query": "INSERT {name: 'x'} INTO users"}, "`INSERT`"),
    # mongodb-mcp-server's `aggregate` with a stage that writes a collection
    (
        "mcp__mongodb__aggregate",
        {"database": "d", "collection": "c", "pipeline": [{"$match": {}}, {"$out": "x"}]},
        "`$out`",
    ),
    ("mcp__mongodb__aggregate", {"pipeline": '[{"$merge": {"into": "archive"}}]'}, "`$merge`"),
    # crewAI's `Snowflake Database Search` runs SQL it is sent under `query`
    ("Snowflake Database Search", {"query": "DELETE FROM orders WHERE status = 'X'"}, "`DELETE`"),
    # an operation argument that names a change (cyanheads/git-mcp-server)
    ("mcp__git__git_branch", {"path": ".", "operation": "create", "name": "feat"}, "`operation: create`"),
    ("mcp__git__git_tag", {"path": ".", "mode": "delete", "tagName": "v1"}, "`mode: delete`"),
    ("mcp__git__git_remote", {"path": ".", "mode": "set-url", "name": "o", "url": "u"}, "`mode: set-url`"),
    # a flag that marks what the call reads
    ("mcp__email__get_emails_content", {"account_name": "w", "email_ids": ["1"], "mark_as_read": True}, "marks"),
    ("mcp__atlassian__jira_get_issue", {"issue_key": "P-1", "update_history": "true"}, "marks"),
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
    ("echo", {"content": "hello"}),
    ("cat", {"file_name": "notes.txt"}),
    ("mcp__falkordb__query_graph", {"graphName": "g", "query": "MATCH (n:Person) RETURN n.name LIMIT 5"}),
    ("mcp__falkordb__query_graph", {"graphName": "g", "query": "MATCH (n {note: 'set me; delete'}) RETURN n.set"}),
    ("mcp__kuzu__query", {"cypher": "MATCH (u:User) RETURN u.name"}),
    ("mcp__arangodb__arango_query", {"query": "FOR u IN users FILTER u.update > 1 RETURN u"}),
    ("mcp__mongodb__aggregate", {"database": "d", "collection": "c", "pipeline": [{"$match": {"status": "A"}}]}),
    ("Snowflake Database Search", {"query": "SELECT * FROM orders LIMIT 10"}),
    ("Snowflake Database Search", {"query": "customers who churned, delete candidates"}),
    ("mcp__git__git_branch", {"path": ".", "operation": "list"}),
    ("mcp__git__git_branch", {"path": ".", "operation": "show-current"}),
    ("mcp__git__git_remote", {"path": ".", "mode": "get-url", "name": "o"}),
    ("wc", {"file_name": "a.txt", "mode": "l"}),
    ("mcp__email__get_emails_content", {"account_name": "w", "email_ids": ["1"], "mark_as_read": False}),
]


@pytest.mark.parametrize(("name", "args", "why"), WRITES)
def test_a_read_verb_call_that_sends_a_change_is_mutating(name: str, args: dict, why: str) -> None:
    assert why in (payload_writes(args, name) or "")
    explained = ToolClassifier().explain(name, args)
    assert explained.mutating and explained.rule == "tool-payload" and why in explained.reason


@pytest.mark.parametrize(("name", "args"), READS)
def test_a_read_verb_call_that_sends_no_change_reads(name: str, args: dict) -> None:
    assert payload_writes(args, name) is None
    assert not ToolClassifier().explain(name, args).mutating
