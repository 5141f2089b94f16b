"""Request bodies that only ask: GraphQL documents of queries, JSON-RPC methods that read by their
spec or their verb, and the search APIs' paths; anything else may change something."""

from __future__ import annotations

import pytest

from replaylab.safety.request_bodies import body_asks, graphql_only_queries, rpc_method_reads


@pytest.mark.parametrize(
    ("document", "only_queries"),
    [
        ("{ viewer { login } }", True),
        ("query Q($id: ID!) { node(id: $id) { ...F } }\nfragment F on Node { id }", True),
        ('# a mutation is not asked here\n{ search(text: "mutation subscription") { id } }', True),
        ('{ a(note: """a\nmutation""") }', True),
        ("mutation { deleteUser(id: 1) { id } }", False),
        ("query A { a }\nmutation B { b }", False),
        ("subscription { onEvent { id } }", False),
        ("", False),
        ("delete everything", False),  # not a GraphQL document at all
    ],
)
def test_a_graphql_document_only_queries_when_no_operation_changes_anything(document: str, only_queries: bool) -> None:
    assert graphql_only_queries(document) is only_queries


@pytest.mark.parametrize(
    ("method", "reads"),
    [
        ("eth_getBalance", True),
        ("eth_getTransactionReceipt", True),
        ("eth_call", True),  # by Ethereum's execution API, no read verb
        ("eth_estimateGas", True),
        ("net_version", True),
        ("getAccountInfo", True),
        ("getblockchaininfo", True),  # Bitcoin Core glues its words
        ("listunspent", True),
        ("tools/list", True),
        ("resources/read", True),
        ("eth_sendRawTransaction", False),
        ("eth_newFilter", False),
        ("personal_unlockAccount", False),
        ("getnewaddress", False),  # adds a key to the wallet
        ("getrawchangeaddress", False),
        ("sendtoaddress", False),
        ("tools/call", False),
        ("initialize", False),
        ("get_or_create_wallet", False),
        ("eth", False),
    ],
)
def test_a_json_rpc_method_reads_by_its_spec_or_its_read_verb(method: str, reads: bool) -> None:
    assert rpc_method_reads(method) is reads


def test_a_body_asks_only_when_every_part_of_it_does() -> None:
    assert body_asks('{"jsonrpc": "2.0", "method": "eth_chainId", "id": 1}', ["https://rpc.example"])
    assert (
        body_asks(
            '[{"jsonrpc": "2.0", "method": "eth_call"}, {"jsonrpc": "2.0", "method": "eth_sendTransaction"}]', ["x"]
        )
        is None
    )
    assert body_asks('{"method": "getBalance"}', ["x"]) is None  # no `jsonrpc`: some other API's body
    assert body_asks("[]", ["x"]) is None
    assert body_asks('{"query": "{ a }", "file": "x"}', ["x"]) is None  # not a GraphQL request's keys
    assert body_asks("not json", ["https://x.example/graphql"]) is None
    assert body_asks("[" * 100_000 + "]" * 100_000, ["https://rpc.example"]) is None  # too deep to parse
    # a search API's path: its body is a query whatever it holds, `_msearch` lines of JSON
    assert body_asks('{"index": "a"}\n{"query": {}}\n', ["localhost:9200/_msearch"]) == "a search (`_msearch`)"
    assert body_asks("{}", ["localhost:9200/logs/_search", "localhost:9200/logs/_doc"]) is None
    assert body_asks("{}", ["localhost:9200/logs/_update_by_query"]) is None
