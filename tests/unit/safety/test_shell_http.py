"""The HTTP clients of the read-only shell grammar: `curl`, `wget`, HTTPie and xh read when they only
GET a web page to standard output; a method that changes, a body, a file written, an option read from a
file, a scheme other than the web's, or a URL that names a change make them mutating, each named."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.safety.shell_grammar import grammar_verdict

FETCHES = [
    'curl -s "wttr.in/London?format=3"',
    "curl -fsSL https://api.github.com/repos/a/b/releases/latest",
    "curl -sS --max-time 5 -H 'Accept: application/json' http://localhost:8080/api/v1/users?page=2",
    'curl -s -o /dev/null -w "%{http_code}" http://localhost:3000/health',
    "curl -G --data-urlencode 'q=big data' https://api.example.com/search",
    "curl --url https://example.com/a -X GET",
    "wget -qO- https://example.com",
    "wget --spider -q https://example.com",
    "http GET https://api.github.com/repos/a/b Accept:application/json",
    "https GET api.example.com/search q==hello per_page==5",
    "http --ignore-stdin :3000/health",
    "http -I -h example.com",
    "xh GET localhost:8080/api/v1/users -b",
    "http GET example.com -o /dev/null --check-status",
]


@pytest.mark.parametrize("command", FETCHES)
def test_a_get_to_standard_output_reads(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert "(GET)" in verdict.reason


#: requests whose one body only asks, by its protocol's own rules
ASKING_BODIES = [
    ("""curl -s -X POST https://api.github.com/graphql -H "Authorization: bearer $T" -d '{"query": "{ viewer { login } }"}'""", "a GraphQL query"),
    ("""curl -s https://x.example/graphql --json '{"query": "# mutation\\nquery Q($id: ID!) { node(id: $id) { id } }", "variables": {"id": 1}}'""", "a GraphQL query"),
    ("""curl -s -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xab","latest"],"id":1}' https://rpc.example/eth""", "JSON-RPC `eth_getBalance`"),
    ("""curl -s https://rpc.example/eth -X POST -d '[{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},{"jsonrpc":"2.0","method":"eth_call","params":[],"id":2}]' | jq .""", "JSON-RPC `eth_blockNumber, eth_call`"),
    ("""curl --user u:p --data-binary '{"jsonrpc":"1.0","id":"x","method":"getblockchaininfo","params":[]}' http://127.0.0.1:8332/""", "JSON-RPC `getblockchaininfo`"),
    ("""curl -s localhost:3000/mcp --json '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'""", "JSON-RPC `tools/list`"),
    ("""curl -s 'localhost:9200/logs-*/_search?size=5' -H 'Content-Type: application/json' -d '{"query":{"match_all":{}}}'""", "a search (`_search`)"),
    ("""curl -XGET localhost:9200/logs/_count -d '{"query":{"term":{"level":"error"}}}'""", "a search (`_count`)"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "asks"), ASKING_BODIES)
def test_a_request_whose_one_body_only_asks_reads(command: str, asks: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert f"`curl` sending only {asks}" in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        # the same protocols asked to change something
        (
            """curl -X POST https://x.example/graphql -d '{"query": "mutation { deleteUser(id: 1) { id } }"}'""",
            "`curl -X POST`",
        ),
        (
            """curl https://x.example/graphql -d '{"query": "query { a } mutation { b }"}'""",
            "`curl --data` sends a body",
        ),
        ("""curl https://x.example/graphql -d '{"query": "subscription { a }"}'""", "`curl --data` sends a body"),
        ("""curl https://x.example/graphql -d '{"query": "{ a }", "upload": 1}'""", "`curl --data` sends a body"),
        (
            """curl https://rpc.example -d '{"jsonrpc":"2.0","method":"eth_sendRawTransaction","params":["0x"],"id":1}'""",
            "sends a body",
        ),
        (
            """curl https://rpc.example -d '[{"jsonrpc":"2.0","method":"eth_call"},{"jsonrpc":"2.0","method":"personal_unlockAccount"}]'""",
            "sends a body",
        ),
        ("""curl http://127.0.0.1:8332/ --data-binary '{"jsonrpc":"1.0","method":"getnewaddress"}'""", "sends a body"),
        (
            """curl http://127.0.0.1:8332/ --data-binary '{"jsonrpc":"1.0","method":"getrawchangeaddress"}'""",
            "sends a body",
        ),
        (
            """curl localhost:3000/mcp --json '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'""",
            "sends a body",
        ),
        ("""curl localhost:9200/logs/_delete_by_query -d '{"query":{"match_all":{}}}'""", "sends a body"),
        ("""curl localhost:9200/logs/_search/../_doc -d '{}'""", "sends a body"),
        ("""curl -X PUT localhost:9200/logs/_search -d '{}'""", "`curl -X PUT`"),
        # a body the command line does not show, or two joined into one
        ("curl https://x.example/graphql -d @query.json", "sends a body"),
        ("""curl https://x.example/graphql -d '{"query":"{ a }"}' -d '{"query":"{ b }"}'""", "sends a body"),
        ("""curl localhost:9200/_search --data-urlencode '{"query":{}}'""", "sends a body"),
        # the ways out an adversarial review sent to a real server, each a change it received
        (
            """curl -d '{"query":"query Q { ok } #\\rmutation M { touch }","operationName":"M"}' https://x.example/graphql""",
            "sends a body",
        ),
        ("""curl -d '{"title":"new order"}' http://127.0.0.1:8765/orders/_search/..""", "sends a body"),
        ("""curl --json '{"title":"x"}' http://127.0.0.1:8765/orders/%5Fsearch""", "sends a body"),
        (
            """curl -G -d q=1 http://x.example/a --next -d '{"title":"via next"}' http://x.example/orders""",
            "`curl --next`",
        ),
        ("curl --url-query action=delete http://x.example/items/5", "asks `delete`"),
        ("curl --url-query @query.txt http://x.example/items", "reads the query from a file"),
        ("""curl -H @headers.txt -d '{"query":"{ ok }"}' https://x.example/graphql""", "reads its headers from a file"),
        # what else the request does still decides
        ("""curl -o hits.json localhost:9200/_search -d '{}'""", "writes a file"),
        ("""curl https://x.example/api/deleteUser/graphql -d '{"query":"{ a }"}'""", "names `deleteUser`"),
    ],
)
def test_a_body_that_may_change_something_keeps_the_request_mutating(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("curl -X POST https://x.example/a", "`curl -X POST` sends a request that changes something"),
        ("curl -d a=1 https://x.example/a", "`curl --data` sends a body"),
        ("curl --json '{}' https://x.example/a", "`curl --json` sends a body"),
        ("curl -F f=@a https://x.example/a", "`curl -F` sends a form"),
        ("curl -sT f https://x.example/a", "`curl -T` uploads a file"),
        ("curl -so page.html https://x.example/", "`curl --output page.html` writes a file"),
        ("curl -D headers.txt https://x.example/", "`curl --dump-header headers.txt` writes a file"),
        ("curl -LO https://x.example/f.tgz", "`curl -O` writes a file"),
        ("curl -K opts https://x.example/", "reads its options from a file"),
        ("curl --frobnicate https://x.example/", "`curl --frobnicate` is an option the grammar does not read"),
        ("curl dict://x.example/d:word", "the `dict` URL"),
        ("curl imap.example.com", "a protocol other than HTTP"),
        ("curl https://x.example/api/users/3/delete", "names `delete`"),
        ("curl https://x.example/api/jobs/3/run", "names `run`"),
        ("curl 'https://x.example/api?do=x&cmd=reset'", "asks `reset`"),
        ("curl -G -d op=purge https://x.example/api", "asks `purge`"),
        ("curl 'https://x.example/graphql?query=mutation{deleteUser(id:1)}'", "asks `mutation`"),
        ("curl -H 'X-HTTP-Method-Override: DELETE' https://x.example/a/1", "asks for another method"),
        ("wget -qO- --header='X-Method-Override: PUT' https://x.example/a", "asks for another method"),
        ('curl "$URL"', "a word known only when the shell runs"),
        ('curl -o "$OUT" https://x.example/', "`curl --output` with a value known only when the shell runs"),
        ("curl", "without a URL"),
        ("wget https://x.example/f.tgz", "`wget` saves what it downloads to a file"),
        ("wget -O- --method=PATCH https://x.example/a", "`wget --method PATCH`"),
        ("wget -qO- --body-data=x https://x.example/a", "sends a body"),
        ("wget -o log.txt -O- https://x.example/a", "writes its log to a file"),
        ("wget -e robots=off -O- https://x.example/a", "runs wgetrc commands"),
    ],
)
def test_what_makes_a_request_mutating_is_named(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


@pytest.mark.parametrize("command", [c for c in FETCHES[:6] if " -G " not in c])  # `-G` sends `-d` as the query
@pytest.mark.parametrize("change", ["-X POST", "-d x=1", "-o out.txt", "-O", "-c jar", "-F a=b", "--upload-file f"])
def test_any_fetch_with_an_option_that_changes_something_is_mutating(command: str, change: str) -> None:
    """Where the option stands does not matter: before the URL, after it, in a cluster or apart."""
    assert not grammar_verdict(f"{command} {change}").read_only
    assert not grammar_verdict(command.replace("curl ", f"curl {change} ", 1)).read_only


def test_an_expansion_is_read_only_inside_one_quoted_url_or_option_value() -> None:
    # the shell passes a double-quoted word whole: a URL or a header, never an option
    assert grammar_verdict('curl -H "Authorization: Bearer $TOKEN" "https://api.example/v1/me?key=$KEY"').read_only
    # a variable's name is read like the URL: the send it names is a send
    assert not grammar_verdict('curl "https://api.example/bot$TOKEN/sendMessage"').read_only
    # unquoted, the word splits and could be an option; the host itself unknown, it could be anything
    for command in ("curl -H $HEADER https://x.example/", 'curl "$HOST/api"', 'curl "https://$HOST/a"'):
        assert not grammar_verdict(command).read_only, command
    # what a command substitution inside the URL runs is checked like any other command
    assert not grammar_verdict('curl "https://x.example/$(rm -rf a)"').read_only


_WORDS = [
    "-s", "-S", "-L", "-f", "-sSL", "-G", "-I", "-H", "Accept: x", "-o", "-", "/dev/null", "out.txt", "-X", "GET",
    "POST", "-d", "q=1", "a=delete", "--json", "{}", "-F", "f=@a", "-O", "-T", "f", "-K", "cfg", "--url", "-w", "%{http_code}",
    "https://x.example/a", "https://x.example/orders/1/cancel", "smtp.example.com", "ftp://x.example/", "wttr.in/Paris",
    "-qO-", "--spider", "--method=DELETE", "--post-data=a", "-e", "-:", "--next", "-V", "--help",
]  # fmt: skip
_CURL_CHANGES = ["-X POST", "--json {}", "-F a=b", "-O", "-T f", "-K cfg", "-o out.txt", "-D h.txt", "-c jar"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["curl", "wget", "http", "xh"]),
    st.lists(st.sampled_from(_WORDS) | st.text(max_size=12), max_size=8),
    st.sampled_from(_CURL_CHANGES),
)
def test_no_command_line_of_an_http_client_raises_and_no_curl_option_that_changes_reads(
    client: str, words: list[str], change: str
) -> None:
    command = " ".join([client, *(shlex.quote(w) for w in words)])
    assert grammar_verdict(command).reason
    if client == "curl":  # whatever follows it, an option that changes something keeps curl mutating
        assert not grammar_verdict(command.replace("curl", f"curl {change}", 1)).read_only, (command, change)


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("http POST example.com/orders qty:=2", "`http POST` sends a request that changes something"),
        ("http example.com/orders qty=2", "`http … qty=2`: a request item that sends a body"),
        ("http GET example.com/upload @notes.txt", "`http … @notes.txt`: a request item that sends a body"),
        ("http example.com", "`http` with no method sends its standard input as the body of a POST"),
        ("xh example.com/users", "`xh` with no method sends its standard input"),
        ("http -d GET example.com/a.zip", "`http -d` saves what it downloads to a file"),
        ("http GET example.com -o page.html", "`http --output page.html` writes a file"),
        ("http --session=me GET example.com", "saves its session (cookies, headers) to a file"),
        ("http GET example.com X-HTTP-Method-Override:DELETE", "asks for another method"),
        ("http GET example.com/orders/7/cancel", "names `cancel`, which changes something"),
        ("http GET example.com action==delete", "asks `delete`, which changes something"),
        ('http GET example.com "Authorization:Bearer $TOKEN"', "a word known only when the shell runs"),
    ],
)
def test_what_makes_an_httpie_request_mutating_is_named(command: str, why: str | None) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why is None or why in verdict.reason, verdict.reason


def test_httpie_offline_only_prints_the_request_it_would_send() -> None:
    assert grammar_verdict("http --offline POST example.com/orders qty:=2").read_only
    assert grammar_verdict("xh --curl DELETE example.com/orders/7").read_only


def _forecasts(folder: Path, curl: str) -> Path:
    """Six turns that each fetch a city's forecast with `curl` (long JSON) and answer from it."""
    from builders.transcripts import Session, imported_suite

    s = Session("forecasts")
    for city in ("Paris", "Oslo", "Lima", "Perth", "Quito", "Seoul"):
        s.user(f"What is the weather in {city} this week?")
        forecast = "".join(f'{{"day":{d},"city":"{city}","high":{20 + d},"low":{10 + d}}}\n' for d in range(60))
        s.tool_turn("bash", {"command": curl.format(city=city)}, forecast)
        s.assistant(f"{city}: highs of 21 to 80 this week.")
    return imported_suite(s, folder)


@pytest.mark.parametrize(
    ("curl", "mutating"),
    [
        ('curl -s "https://api.weather.example/v1/forecast?city={city}&days=7" | jq -c ".[]"', False),
        ("sqlite3 -json ~/.cache/weather.db \"SELECT * FROM forecast WHERE city = '{city}'\"", False),
        ("curl -s -X POST https://api.weather.example/v1/alerts -d city={city}", True),
        (
            "python3 - <<'EOF'\nimport json\nwith open('cache/{city}.json') as f:\n    print(json.dumps(json.load(f)))\nEOF",
            False,
        ),
        ("python3 - <<'EOF'\nimport json\nwith open('cache/{city}.json', 'w') as f:\n    json.dump([], f)\nEOF", True),
    ],
)
def test_a_session_that_reads_with_curl_sqlite3_or_python_compacts_and_one_that_writes_does_not(
    tmp_path: Path, curl: str, mutating: bool
) -> None:
    """Through the whole pipeline: the fetches are reads (a GET, a query, a here-document script
    that only prints), so none is a mutating event, safeguard may summarize their outputs, and the
    compacted run's fetches are no side effects. The same session posting or writing instead holds
    six mutating events, which safeguard keeps: too many for the budget, as the fetches were when
    every `curl` and here-document script was taken for a write."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    suite = load_suite(_forecasts(tmp_path, curl))
    item = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="off"))
    assert item.ledger_before is not None
    assert len(item.ledger_before.mutated_event_ids) == (6 if mutating else 0)
    assert not [d for d in item.defects if d.blocking], item.defects
    assert item.compaction is not None
    if mutating:  # the six posts and their results are more than the budget holds: kept, nothing to compact
        assert item.outcome == "uncompacted" and "CANNOT_COMPACT" in (item.reason or "")
    else:
        assert item.outcome == "passed" and item.compaction.compactions >= 1
