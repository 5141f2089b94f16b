"""What a call's arguments say against the read verb of its tool's name.

A name that starts with `query`, `read` or `fetch` reads by the verb rule, but the verb says
nothing of the statement the tool is given to run: database servers run whatever SQL they are
sent when their writes are enabled (benborla/mcp-server-mysql's `mysql_query` then annotates
`readOnlyHint: false`), GraphQL servers run a mutation sent as the query (blurrah/mcp-graphql with
`ALLOW_MUTATIONS`), and an HTTP tool sends the method it is given. So a read-verb call changes
something after all when its arguments hold

* a SQL statement that does not only query (the read-only SQL grammar of `shell_sql`: `SELECT`,
  `WITH` without a write, `EXPLAIN`, reporting `PRAGMA`s), under a key that holds SQL (`sql`,
  `statement` …), or under `query` of a database's tool whose own name says it runs statements
  (`query`, `sql`, `execute`, `run`) — a `query` elsewhere, a database's `search` too, is a
  search's words ("delete old files");
* a GraphQL document under a query key that is not queries only (a `mutation` or `subscription`
  anywhere in it, `request_bodies`);
* an HTTP `method` that sends a change (`POST`, `PUT`, `PATCH`, `DELETE`);
* a file the call writes what it got to (`responseFilePath`, `outputPath` …; `filePath` of a tool
  that takes or captures something, chrome-devtools-mcp's `take_screenshot`).

Other dialects' read statements (`SHOW`, `DESCRIBE`) read too.
"""

from __future__ import annotations

import re
from typing import Any

from replaylab.safety.request_bodies import graphql_only_queries
from replaylab.safety.shell_sql import sql_reads
from replaylab.safety.verbs import bare_tool_name

#: argument keys whose value is a SQL statement, whatever the tool
SQL_KEYS = frozenset({"sql", "statement", "stmt", "sql_query", "sqlquery"})
#: a key of which a word starts with `sql` holds a statement too (`sql_cmd`, AgentBench's; `rawSql`)
_SQL_KEY_WORD = re.compile(r"(?:^|[^a-z0-9]|(?<=[a-z0-9])(?=S))(?:sql|SQL|Sql)")
#: argument keys whose value is a statement only for a database's tool (else a search's words)
QUERY_KEYS = frozenset({"query", "querystring", "q"})
#: words of a tool's name that say it is a database's
DATABASE_WORDS = frozenset(
    {"sql", "mysql", "mariadb", "postgres", "postgresql", "pg", "sqlite", "mssql", "db", "database", "dbhub"}
    | {"bigquery", "snowflake", "duckdb", "clickhouse", "supabase", "neon", "redshift", "oracle", "athena"}
    | {"trino", "presto", "spanner", "cockroach", "cockroachdb", "turso", "planetscale", "d1"}
)
#: first words of a SQL statement: what makes a database tool's `query` a statement
SQL_FIRST_WORDS = frozenset(
    {"select", "with", "values", "explain", "pragma", "insert", "update", "delete", "replace", "upsert", "merge"}
    | {"create", "drop", "alter", "truncate", "grant", "revoke", "copy", "attach", "detach", "vacuum", "call"}
)
#: statements other SQL dialects only read with
OTHER_READ_WORDS = frozenset({"show", "describe", "desc"})
WRITE_METHODS = frozenset({"post", "put", "patch", "delete"})
#: words of a tool's own name (its namespace dropped) that say its `query` is a statement to run;
#: a database server's `search` or `fetch` takes words (`mcp__neon__search` "delete old branches")
STATEMENT_NAME_WORDS = frozenset({"query", "sql", "execute", "exec", "run", "statement", "statements"})
#: argument keys that name a file the call writes what it got to (chrome-devtools-mcp's
#: `take_screenshot` `filePath`, `get_network_request` `responseFilePath`)
OUTPUT_FILE_KEYS = frozenset(
    {"responsefilepath", "requestfilepath", "outputpath", "output_path", "outputfile", "output_file"}
    | {"savepath", "save_path", "localpath", "local_path", "downloadpath", "download_path", "target_dir"}
)
#: keys that name the output file of a tool that takes or captures something (`take_screenshot`
#: `filePath`); elsewhere such a key is as likely the file a tool reads
CAPTURE_FILE_KEYS = frozenset({"filepath", "file_path", "filename"})
CAPTURE_NAME_WORDS = frozenset({"take", "capture"})
#: how a GraphQL document starts, after its comments
_GRAPHQL_DOCUMENT = re.compile(r"\s*(?:#[^\n]*\n\s*)*(?:\{|query\b|mutation\b|subscription\b|fragment\b)")
_LEADING_COMMENTS = re.compile(r"\s*(?:--[^\n]*(?:\n|$)\s*|/\*.*?\*/\s*)*", re.S)
_NAME_WORDS = re.compile(r"[^a-z0-9]+")


def payload_writes(args: Any, name: str) -> str | None:
    """Why a call whose name reads changes something after all, from its arguments; None when
    they say nothing against the name."""
    if not isinstance(args, dict):
        return None
    method = args.get("method")
    if isinstance(method, str) and method.strip().lower() in WRITE_METHODS:
        return f"its `method: {method.strip().upper()}` sends a change"
    database = not DATABASE_WORDS.isdisjoint(_NAME_WORDS.split(name.lower()))
    own_words = set(_NAME_WORDS.split(bare_tool_name(name).lower()))
    statement_tool = database and not STATEMENT_NAME_WORDS.isdisjoint(own_words)
    capture_tool = not CAPTURE_NAME_WORDS.isdisjoint(own_words)
    for key, value in args.items():
        if isinstance(key, str) and isinstance(value, str) and value.strip():
            lowered = key.lower()
            if lowered in OUTPUT_FILE_KEYS or (capture_tool and lowered in CAPTURE_FILE_KEYS):
                return f"its `{key}` names a file the call writes"
    for key, value in args.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value.strip():
            continue
        lowered = key.lower()
        if lowered in QUERY_KEYS and _GRAPHQL_DOCUMENT.match(value) and not graphql_only_queries(value):
            return f"its `{key}` is a GraphQL mutation"
        # a key with `sql` among its words holds a statement when its value starts as one (not `mySqlHost`)
        sql_worded = lowered not in SQL_KEYS and bool(_SQL_KEY_WORD.search(key))
        if lowered not in SQL_KEYS and not sql_worded and not (lowered in QUERY_KEYS and statement_tool):
            continue
        statement = _LEADING_COMMENTS.sub("", value, count=1)
        first = statement.split(None, 1)[0].lower().rstrip(";(") if statement.strip() else ""
        if first in OTHER_READ_WORDS or ((lowered in QUERY_KEYS or sql_worded) and first not in SQL_FIRST_WORDS):
            continue
        why = sql_reads(statement)
        if why is not None:
            return f"its `{key}` holds SQL: {why}"
    return None
