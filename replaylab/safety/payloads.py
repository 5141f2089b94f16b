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
  that takes or captures something, chrome-devtools-mcp's `take_screenshot`; `file_name` of an
  `echo`, BFCL's Gorilla file system);
* a graph database's statement that writes (Cypher, AQL: a `CREATE`, `MERGE`, `SET`, `DELETE`,
  `REMOVE`, `INSERT` … clause), under `cypher` / `aql`, or under `query` of a graph database's tool
  whose own name runs statements (FalkorDB's `query_graph`, Kuzu's `query`, ArangoDB's
  `arango_query`);
* a MongoDB aggregation `pipeline` with a `$out` or `$merge` stage, which writes a collection
  (mongodb-mcp-server's `aggregate`);
* SQL under `query` of a database's tool that is no statement runner, when it has the shape of a
  statement (`DELETE FROM`, `INSERT INTO`, `UPDATE … SET`, `DROP TABLE` …): crewAI's
  `Snowflake Database Search` runs "SQL queries or semantic search";
* an operation argument (`operation`, `mode`, `op`, `action`) whose one word is a verb that changes
  something: cyanheads/git-mcp-server's `git_branch` `operation: create`, `git_tag` `mode: delete`,
  `git_remote` `mode: set-url` (their names read as `git branch`, `git tag`, `git remote`);
* a flag that marks what it reads (`mark_as_read`, `update_history`, `auto_ack` …) set true.

Other dialects' read statements (`SHOW`, `DESCRIBE`) read too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from replaylab.safety.request_bodies import graphql_only_queries
from replaylab.safety.shell_sql import sql_reads
from replaylab.safety.verbs import bare_tool_name, verb_verdict

#: argument keys whose value is a SQL statement, whatever the tool
SQL_KEYS = frozenset({"sql", "statement", "stmt", "sql_query", "sqlquery"})
#: a key of which a word starts with `sql` holds a statement too (`sql_cmd`, AgentBench's; `rawSql`)
_SQL_KEY_WORD = re.compile(r"(?:^|[^a-z0-9]|(?<=[a-z0-9])(?=S))(?:sql|SQL|Sql)")
#: argument keys whose value is a statement only for a database's tool (else a search's words)
QUERY_KEYS = frozenset({"query", "querystring", "q"})
#: words of a tool's name that say it is a graph database's (its statements are Cypher or AQL)
GRAPH_DATABASE_WORDS = frozenset(
    {"neo4j", "memgraph", "falkordb", "kuzu", "arango", "arangodb", "cypher", "graphdb", "neptune"}
)
#: argument keys whose value is a graph query, whatever the tool
GRAPH_KEYS = frozenset({"cypher", "cypher_query", "cypherquery", "aql", "aql_query"})
#: first words of a Cypher or AQL statement that SQL's table does not have
GRAPH_FIRST_WORDS = frozenset({"match", "optional", "unwind", "return", "for", "let", "load", "foreach", "detach"})
#: clauses of Cypher (Neo4j, Memgraph, FalkorDB, Kuzu) and AQL (ArangoDB) that write or may write
GRAPH_WRITE_CLAUSES = frozenset(
    {"create", "merge", "set", "delete", "detach", "remove", "drop", "insert", "update", "replace", "upsert"}
    | {"load", "copy", "foreach", "call", "alter", "install", "import", "export", "truncate"}
)
#: argument keys of an operation a tool of many performs (`git_branch` `operation: create`)
OPERATION_KEYS = frozenset({"operation", "mode", "op", "action"})
#: flags that make a read mark what it read, normalized (`mark_as_read`, `updateHistory`)
MARKING_FLAGS = frozenset(
    {"markasread", "markread", "markasseen", "markseen", "updatehistory", "autoack", "ack", "acknowledge"}
    | {"consume", "deleteafterread", "removeafterread"}
)
#: aggregation stages that write a collection
MONGO_WRITE_STAGES = ("$out", "$merge")
#: SQL with the shape of a statement that writes or a query, not a search's words
_SQL_SHAPED = re.compile(
    r"\s*(?:select\b.+\bfrom\b|insert\s+into\b|update\s+[\w.\"`\[\]]+\s+set\b|delete\s+from\b"
    r"|(?:drop|alter)\s+(?:table|view|index|schema|database|function|procedure)\b"
    r"|create\s+(?:or\s+replace\s+)?(?:temp\w*\s+)?(?:table|view|index|schema|database|function|procedure)\b"
    r"|truncate\s+table\b|merge\s+into\b|with\s+\w+\s+as\s*\()",
    re.IGNORECASE | re.DOTALL,
)
_GRAPH_STRINGS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)
#: a clause word: not a property (`n.set`), not a map key (`{set: 1}`)
_GRAPH_WORD = re.compile(r"(?<![\w.$])([A-Za-z]+)\b(?!\s*:)")
_OPERATION_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: words of a tool's name that say it is a database's
DATABASE_WORDS = frozenset(
    {"sql", "mysql", "mariadb", "postgres", "postgresql", "pg", "sqlite", "mssql", "db", "database", "dbhub"}
    | {"bigquery", "snowflake", "duckdb", "clickhouse", "supabase", "neon", "redshift", "oracle", "athena"}
    | {"trino", "presto", "spanner", "cockroach", "cockroachdb", "turso", "planetscale", "d1"}
    | {"motherduck", "databricks", "tidb", "starrocks", "singlestore", "teradata", "vertica", "cassandra"}
    | GRAPH_DATABASE_WORDS
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
CAPTURE_FILE_KEYS = frozenset({"filepath", "file_path", "filename", "file_name"})
CAPTURE_NAME_WORDS = frozenset({"take", "capture", "echo"})
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
    marked = _marks_or_operates(args)
    if marked is not None:
        return marked
    for key, value in args.items():
        if isinstance(key, str) and key.lower() == "pipeline":
            stage = _mongo_write_stage(value)
            if stage is not None:
                return f"its `{key}` has a `{stage}` stage, which writes a collection"
    graph_tool = not GRAPH_DATABASE_WORDS.isdisjoint(_NAME_WORDS.split(name.lower()))
    for key, value in args.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value.strip():
            continue
        lowered = key.lower()
        if lowered in QUERY_KEYS and _GRAPHQL_DOCUMENT.match(value) and not graphql_only_queries(value):
            return f"its `{key}` is a GraphQL mutation"
        statement = _LEADING_COMMENTS.sub("", value, count=1)
        first = statement.split(None, 1)[0].lower().rstrip(";(") if statement.strip() else ""
        if lowered in GRAPH_KEYS or (
            lowered in QUERY_KEYS and statement_tool and (graph_tool or first in GRAPH_FIRST_WORDS)
        ):
            clause = _graph_write_clause(statement)
            if clause is not None:
                return f"its `{key}` is a graph query with `{clause.upper()}`, which writes or may write"
            continue
        # a key with `sql` among its words holds a statement when its value starts as one (not `mySqlHost`)
        sql_worded = lowered not in SQL_KEYS and bool(_SQL_KEY_WORD.search(key))
        shaped = lowered in QUERY_KEYS and database and not statement_tool and bool(_SQL_SHAPED.match(statement))
        if lowered not in SQL_KEYS and not sql_worded and not (lowered in QUERY_KEYS and statement_tool) and not shaped:
            continue
        if first in OTHER_READ_WORDS or ((lowered in QUERY_KEYS or sql_worded) and first not in SQL_FIRST_WORDS):
            continue
        why = sql_reads(statement)
        if why is not None:
            return f"its `{key}` holds SQL: {why}"
    return None


def _marks_or_operates(args: dict[str, Any]) -> str | None:
    """Why a call's flags or its operation argument change something: a flag that marks what it
    reads set true, or an operation whose one word is a verb that changes something."""
    for key, value in args.items():
        if not isinstance(key, str):
            continue
        flag = key.lower().replace("_", "").replace("-", "")
        if flag in MARKING_FLAGS and (value is True or (isinstance(value, str) and value.strip().lower() == "true")):
            return f"its `{key}: true` marks what it reads"
        if key.lower() in OPERATION_KEYS and isinstance(value, str) and _OPERATION_WORD.fullmatch(value.strip()):
            verdict = verb_verdict(value.strip())
            if verdict.changes:
                return f"its `{key}: {value.strip()}` names an operation that changes something"
    return None


def _mongo_write_stage(pipeline: Any) -> str | None:
    """The first `$out` / `$merge` stage of an aggregation pipeline (a list, or its JSON text)."""
    if isinstance(pipeline, str):
        try:
            pipeline = json.loads(pipeline)
        except ValueError:
            return next((stage for stage in MONGO_WRITE_STAGES if f'"{stage}"' in pipeline), None)
    if not isinstance(pipeline, list):
        return None
    for stage in pipeline:
        if isinstance(stage, dict):
            found = next((name for name in MONGO_WRITE_STAGES if name in stage), None)
            if found is not None:
                return found
    return None


def _graph_write_clause(statement: str) -> str | None:
    """The first clause of a Cypher or AQL statement that writes or may write (a procedure's
    `CALL`), its strings, quoted names and comments blanked; None when it only reads."""
    text = _GRAPH_STRINGS.sub(" ", statement)
    for match in _GRAPH_WORD.finditer(text):
        if match.group(1).lower() in GRAPH_WRITE_CLAUSES:
            return match.group(1).lower()
    return None
