"""The helpdesk tool pack against its real loopback service and real SQLite database (no mocks).

Every read tool must return what the database holds and leave it alone; every write tool must
change the database (checked through a separate sqlite3 connection) and count as a write request.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from examples.helpdesk import TOOLS, start_service
from examples.helpdesk import db as hdb
from examples.helpdesk.service import Service
from examples.helpdesk.tools import DEFAULT_TOKEN, TOKEN_ENV, auth_header
from replaylab.replay.tools.pack import ToolContext, ToolOutput, load_tool_pack
from replaylab.safety.classify import ToolClassifier
from replaylab.scrub import scrub_text
from repo_paths import REPO_ROOT

#: a planted token, assembled at run time so no literal secret sits in the repository
ENV_TOKEN = "hd-env-" + "token-1234567890"

REPO = REPO_ROOT
SPECS = {spec.name: spec for spec in TOOLS}
SEED_COUNTS = {
    "customers": 25,
    "orders": 60,
    "order_items": 78,
    "payments": 61,
    "refunds": 2,
    "tickets": 15,
    "ticket_notes": 12,
    "kb_articles": 12,
    "outbox": 0,
    "address_changes": 0,
    "audit_log": 0,
}


@pytest.fixture()
def service() -> Iterator[Service]:
    with start_service() as svc:
        yield svc


def call(svc: Service, name: str, args: dict[str, Any], *, validate: bool = True) -> ToolOutput:
    """Call a tool of the pack the way an agent loop would; valid calls are checked against the schema."""
    spec = SPECS[name]
    if validate:
        jsonschema.validate(args, spec.parameters)
    return spec.call(args, ToolContext(base_url=svc.url))


def ok(out: ToolOutput) -> Any:
    assert not out.is_error, out.text
    return json.loads(out.text)


def sql(svc: Service, query: str, *params: Any) -> list[sqlite3.Row]:
    """Read the service's database through a separate connection."""
    conn = sqlite3.connect(svc.db_path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def one(svc: Service, query: str, *params: Any) -> sqlite3.Row:
    rows = sql(svc, query, *params)
    assert len(rows) == 1, rows
    return rows[0]


# --- seed ---------------------------------------------------------------------------------------


def test_seed_sizes_and_interesting_rows(service: Service) -> None:
    assert service.row_counts() == SEED_COUNTS
    assert one(service, "SELECT name FROM customers WHERE id='CUST-10042'")["name"] == "Dana Whitfield"
    rows = sql(service, "SELECT id, status FROM orders WHERE customer_id='CUST-10042'")
    statuses = {r["id"]: r["status"] for r in rows}
    assert statuses == {
        "ORD-77123": "delivered",
        "ORD-77131": "shipped",
        "ORD-77138": "paid",
        "ORD-77146": "delivered",
        "ORD-77152": "pending",
    }
    assert len(one(service, "SELECT body FROM kb_articles WHERE id='KB-108'")["body"]) > 70_000


def test_seed_is_deterministic(tmp_path: Path) -> None:
    dumps = []
    for name in ("a.sqlite3", "b.sqlite3"):
        conn = sqlite3.connect(hdb.create_database(tmp_path / name))
        dumps.append(list(conn.iterdump()))
        conn.close()
    assert dumps[0] == dumps[1]


def test_fake_secrets_are_seeded_and_scrubbable(service: Service) -> None:
    text = call(service, "get_customer", {"customer_id": "CUST-10047"}).text
    assert hdb.FAKE_API_KEY in text and f"Bearer {hdb.FAKE_BEARER_TOKEN}" in text
    scrubbed = scrub_text(text)
    assert hdb.FAKE_API_KEY not in scrubbed and hdb.FAKE_BEARER_TOKEN not in scrubbed
    assert "Marcus Oyelaran" in scrubbed  # scrubbing removes the secrets, not the data


def test_default_database_lives_outside_the_repo(service: Service) -> None:
    assert not service.db_path.resolve().is_relative_to(REPO)


# --- read tools ---------------------------------------------------------------------------------


def test_every_read_tool_returns_the_right_data_and_writes_nothing(service: Service) -> None:
    before = service.row_counts()

    found = ok(call(service, "find_customer", {"email": "Dana.Whitfield@example.com"}))
    assert [c["id"] for c in found["customers"]] == ["CUST-10042"]
    by_name = ok(call(service, "find_customer", {"name": "dana"}))
    assert [c["id"] for c in by_name["customers"]] == ["CUST-10042", "CUST-10055"]

    customer = ok(call(service, "get_customer", {"customer_id": "CUST-10042"}))
    row = one(service, "SELECT * FROM customers WHERE id='CUST-10042'")
    assert (customer["email"], customer["address"]["line1"], customer["address"]["postcode"]) == (
        row["email"],
        row["line1"],
        row["postcode"],
    )
    assert customer["open_tickets"] == ["TCK-5001"] and customer["order_count"] == 5

    order = ok(call(service, "get_order", {"order_id": "ORD-77140"}))
    assert order["customer_id"] == "CUST-10035" and order["total"] == 91.0
    assert (order["paid"], order["refunded"], order["refundable"]) == (91.0, 24.0, 67.0)
    assert [r["id"] for r in order["refunds"]] == ["REF-9001"]
    assert [i["sku"] for i in order["items"]] == [
        r["sku"] for r in sql(service, "SELECT sku FROM order_items WHERE order_id='ORD-77140' ORDER BY line")
    ]
    split = ok(call(service, "get_order", {"order_id": "ORD-77150"}))
    assert [(p["method"], p["amount"]) for p in split["payments"]] == [("gift_card", 50.0), ("card", 299.0)]

    orders = ok(call(service, "list_orders", {"customer_id": "CUST-10042"}))
    assert sorted(o["id"] for o in orders["orders"]) == sorted(
        r["id"] for r in sql(service, "SELECT id FROM orders WHERE customer_id='CUST-10042'")
    )
    shipped = ok(call(service, "list_orders", {"customer_id": "CUST-10042", "status": "shipped"}))
    assert [o["id"] for o in shipped["orders"]] == ["ORD-77131"]

    hits = ok(call(service, "search_kb", {"query": "cancel order"}))
    assert hits["results"][0]["id"] == "KB-104"
    assert all(len(hit["snippet"]) <= 160 for hit in hits["results"])  # search never returns whole bodies

    article = ok(call(service, "get_kb_article", {"article_id": "KB-111"}))
    assert article["body"] == one(service, "SELECT body FROM kb_articles WHERE id='KB-111'")["body"]

    ticket = ok(call(service, "get_ticket", {"ticket_id": "TCK-5003"}))
    assert (ticket["status"], ticket["escalation"]["team"], ticket["order_id"], ticket["note_count"]) == (
        "escalated",
        "billing",
        "ORD-77157",
        2,
    )

    policy = ok(call(service, "get_refund_policy", {}))
    assert policy["window_days"] == 30 and policy["auto_approval_limit"] == 500.0

    notes = ok(call(service, "ticket_note", {"action": "list", "ticket_id": "TCK-5001"}))
    assert [n["id"] for n in notes["notes"]] == ["NOTE-8001", "NOTE-8002"]
    note = ok(call(service, "ticket_note", {"action": "read", "ticket_id": "TCK-5001", "note_id": "NOTE-8002"}))
    assert "3 cm" in note["body"]

    assert service.write_requests == 0
    assert service.read_requests == 13
    assert service.authorized_requests == 13  # the pack always sends Authorization (recorders must scrub it)
    assert service.row_counts() == before


def test_long_kb_article_comes_back_whole(service: Service) -> None:
    out = call(service, "get_kb_article", {"article_id": hdb.HANDBOOK_ID})
    assert len(out.text) > 60_000
    body = ok(out)["body"]
    assert body == one(service, "SELECT body FROM kb_articles WHERE id=?", hdb.HANDBOOK_ID)["body"]
    assert body.startswith("RETURNS & REFUNDS HANDBOOK") and hdb.HANDBOOK_HEAD_MARKER in body[:200]
    assert hdb.HANDBOOK_TAIL_MARKER in body[-200:]
    middle = body.index(hdb.HANDBOOK_MIDDLE_FACT)
    assert 20_000 < middle < len(body) - 20_000  # the fact a head+tail truncation would lose


def test_stats_endpoint_matches_counters(service: Service) -> None:
    call(service, "get_ticket", {"ticket_id": "TCK-5001"})
    call(service, "create_ticket", {"customer_id": "CUST-10031", "subject": "s", "body": "b"})
    with urllib.request.urlopen(service.url + "/_stats") as response:
        stats = json.loads(response.read())
    assert stats == {"read_requests": 1, "write_requests": 1, "authorized_requests": 2}
    assert service.stats() == stats  # /_stats itself is not counted


# --- write tools --------------------------------------------------------------------------------


def _write(service: Service, name: str, args: dict[str, Any]) -> tuple[Any, dict[str, int]]:
    """Call a write tool; check it counted as exactly one write request and no read; return its
    JSON and the row-count deltas."""
    before, reads, writes = service.row_counts(), service.read_requests, service.write_requests
    data = ok(call(service, name, args))
    assert (service.write_requests, service.read_requests) == (writes + 1, reads)
    after = service.row_counts()
    delta = {t: after[t] - before[t] for t in after if after[t] != before[t]}
    return data, delta


def test_issue_refund_creates_refund_and_updates_order(service: Service) -> None:
    data, delta = _write(service, "issue_refund", {"order_id": "ORD-77140", "amount": 30.5, "reason": "mat torn"})
    assert delta == {"refunds": 1, "audit_log": 1}
    refund = one(service, "SELECT * FROM refunds WHERE id=?", data["refund"]["id"])
    assert (refund["order_id"], refund["amount_cents"], refund["reason"]) == ("ORD-77140", 3050, "mat torn")
    order = one(service, "SELECT * FROM orders WHERE id='ORD-77140'")
    assert (order["refunded_cents"], order["status"]) == (2400 + 3050, "delivered")
    assert data["order"]["refundable"] == 36.5
    full, _ = _write(service, "issue_refund", {"order_id": "ORD-77140", "amount": 36.5, "reason": "rest"})
    assert one(service, "SELECT status FROM orders WHERE id='ORD-77140'")["status"] == "refunded"
    assert full["refund"]["id"] != data["refund"]["id"]


def test_update_address_changes_customer_and_logs_it(service: Service) -> None:
    args = {
        "customer_id": "CUST-10042",
        "line1": "77 Birch Road",
        "city": "Eugene",
        "region": "OR",
        "postcode": "97401",
        "country": "us",
    }
    data, delta = _write(service, "update_address", args)
    assert delta == {"address_changes": 1, "audit_log": 1}
    row = one(service, "SELECT * FROM customers WHERE id='CUST-10042'")
    assert (row["line1"], row["line2"], row["city"], row["postcode"], row["country"]) == (
        "77 Birch Road",
        "",
        "Eugene",
        "97401",
        "US",
    )
    change = one(service, "SELECT * FROM address_changes WHERE id=?", data["change_id"])
    assert json.loads(change["old_address"])["line1"] == "1180 Alder Street"
    assert data["previous_address"]["line2"] == "Apt 4B"


def test_create_ticket_inserts_a_row(service: Service) -> None:
    args = {
        "customer_id": "CUST-10042",
        "subject": "Second crack",
        "body": "Another crack appeared",
        "order_id": "ORD-77123",
        "priority": "high",
    }
    data, delta = _write(service, "create_ticket", args)
    assert delta == {"tickets": 1, "audit_log": 1} and data["id"] == "TCK-5016"
    row = one(service, "SELECT * FROM tickets WHERE id='TCK-5016'")
    assert (row["customer_id"], row["order_id"], row["status"], row["priority"]) == (
        "CUST-10042",
        "ORD-77123",
        "open",
        "high",
    )


def test_send_email_queues_in_outbox(service: Service) -> None:
    args = {
        "to": "dana.whitfield@example.com",
        "subject": "Your refund",
        "body": "Refund REF-9003 is on its way.",
        "customer_id": "CUST-10042",
    }
    data, delta = _write(service, "send_email", args)
    assert delta == {"outbox": 1, "audit_log": 1}
    row = one(service, "SELECT * FROM outbox WHERE id=?", data["id"])
    assert (row["to_email"], row["subject"], row["customer_id"]) == (
        "dana.whitfield@example.com",
        "Your refund",
        "CUST-10042",
    )


def test_escalate_ticket_updates_the_ticket(service: Service) -> None:
    data, delta = _write(service, "escalate_ticket", {"ticket_id": "TCK-5001", "team": "tier2", "reason": "crack"})
    assert delta == {"audit_log": 1}
    row = one(service, "SELECT * FROM tickets WHERE id='TCK-5001'")
    assert (row["status"], row["escalated"], row["escalation_team"], row["priority"]) == (
        "escalated",
        1,
        "tier2",
        "high",
    )
    assert data["escalation"]["reason"] == "crack"


def test_cancel_paid_order_cancels_and_refunds(service: Service) -> None:
    data, delta = _write(service, "cancel_order", {"order_id": "ORD-77138", "reason": "ordered twice"})
    assert delta == {"refunds": 1, "audit_log": 1}
    order = one(service, "SELECT * FROM orders WHERE id='ORD-77138'")
    assert (order["status"], order["cancel_reason"], order["refunded_cents"]) == ("cancelled", "ordered twice", 11900)
    assert data["refund"]["amount"] == 119.0


def test_cancel_pending_order_voids_the_authorization(service: Service) -> None:
    data, delta = _write(service, "cancel_order", {"order_id": "ORD-77152", "reason": "changed mind"})
    assert delta == {"audit_log": 1} and data["refund"] is None
    assert one(service, "SELECT status FROM payments WHERE order_id='ORD-77152'")["status"] == "voided"


def test_ticket_note_add_and_delete_change_the_notes(service: Service) -> None:
    data, delta = _write(service, "ticket_note", {"action": "add", "ticket_id": "TCK-5001", "body": "Refund issued"})
    assert delta == {"ticket_notes": 1, "audit_log": 1}
    assert one(service, "SELECT body FROM ticket_notes WHERE id=?", data["id"])["body"] == "Refund issued"
    _, delta = _write(service, "ticket_note", {"action": "delete", "ticket_id": "TCK-5001", "note_id": "NOTE-8001"})
    assert delta == {"ticket_notes": -1, "audit_log": 1}
    assert sql(service, "SELECT * FROM ticket_notes WHERE id='NOTE-8001'") == []


def test_refund_above_limit_needs_billing_escalation(service: Service) -> None:
    refused = call(service, "issue_refund", {"order_id": "ORD-77144", "amount": 698, "reason": "both desks bent"})
    assert refused.is_error and json.loads(refused.text)["error"] == "approval_required"
    ticket, _ = _write(
        service,
        "create_ticket",
        {"customer_id": "CUST-10032", "subject": "Bent desks", "body": "Both frames bent", "order_id": "ORD-77144"},
    )
    _write(service, "escalate_ticket", {"ticket_id": ticket["id"], "team": "billing", "reason": "698.00 refund"})
    data, delta = _write(service, "issue_refund", {"order_id": "ORD-77144", "amount": 698, "reason": "both desks bent"})
    assert delta == {"refunds": 1, "audit_log": 1} and data["order"]["status"] == "refunded"


def test_logical_clock_and_ids_are_reproducible() -> None:
    """The same writes in the same order give byte-identical answers on two fresh services."""
    script = [
        ("issue_refund", {"order_id": "ORD-77123", "amount": 129.99, "reason": "cracked"}),
        ("create_ticket", {"customer_id": "CUST-10042", "subject": "s", "body": "b"}),
        ("send_email", {"to": "dana.whitfield@example.com", "subject": "s", "body": "b"}),
    ]
    answers = []
    for _ in range(2):
        with start_service() as svc:
            answers.append([call(svc, name, args).text for name, args in script])
    assert answers[0] == answers[1]
    assert json.loads(answers[0][0])["refund"]["created_at"] == hdb.CLOCK_START
    assert json.loads(answers[0][2])["created_at"] == "2025-06-02T09:02:00Z"


def test_parallel_writes_get_distinct_ids(service: Service) -> None:
    results: list[ToolOutput] = []
    lock = threading.Lock()

    def create(n: int) -> None:
        out = call(service, "create_ticket", {"customer_id": "CUST-10033", "subject": f"parallel {n}", "body": "b"})
        with lock:
            results.append(out)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = sorted(ok(out)["id"] for out in results)
    assert ids == [f"TCK-{n}" for n in range(5016, 5024)]
    assert service.write_requests == 8 and service.row_counts()["tickets"] == 15 + 8


# --- error paths --------------------------------------------------------------------------------


def _error(service: Service, name: str, args: dict[str, Any], code: str, *phrases: str) -> dict[str, Any]:
    before = service.row_counts()
    out = call(service, name, args)
    assert out.is_error, out.text
    data = json.loads(out.text)
    assert data["error"] == code
    for phrase in phrases:
        assert phrase in data["message"], data["message"]
    assert service.row_counts() == before  # a refused write changes nothing
    return data


def test_unknown_ids_are_clear_errors(service: Service) -> None:
    _error(service, "get_customer", {"customer_id": "CUST-99999"}, "not_found", "customer CUST-99999 not found")
    _error(service, "list_orders", {"customer_id": "CUST-99999"}, "not_found", "CUST-99999")
    _error(service, "get_order", {"order_id": "ORD-00000"}, "not_found", "order ORD-00000 not found")
    _error(service, "get_kb_article", {"article_id": "KB-999"}, "not_found", "KB-999")
    _error(service, "get_ticket", {"ticket_id": "TCK-0001"}, "not_found", "TCK-0001")
    _error(
        service,
        "ticket_note",
        {"action": "read", "ticket_id": "TCK-5001", "note_id": "NOTE-8003"},
        "not_found",
        "NOTE-8003",
        "TCK-5001",
    )
    _error(service, "issue_refund", {"order_id": "ORD-00000", "amount": 1, "reason": "x"}, "not_found", "ORD-00000")


def test_over_refund_is_refused(service: Service) -> None:
    data = _error(
        service,
        "issue_refund",
        {"order_id": "ORD-77123", "amount": 200, "reason": "x"},
        "refund_exceeds_paid",
        "200.00",
        "paid 129.99",
        "refundable 129.99",
    )
    assert data["status"] == 409
    _error(
        service,
        "issue_refund",
        {"order_id": "ORD-77140", "amount": 67.01, "reason": "x"},
        "refund_exceeds_paid",
        "already refunded 24.00",
    )
    assert service.write_requests == 2  # refused writes still reached the service


def test_cancel_shipped_order_is_refused(service: Service) -> None:
    _error(
        service,
        "cancel_order",
        {"order_id": "ORD-77131", "reason": "x"},
        "cannot_cancel",
        "shipped",
        "refunded instead",
    )
    assert one(service, "SELECT status FROM orders WHERE id='ORD-77131'")["status"] == "shipped"


def test_other_business_rules(service: Service) -> None:
    _error(
        service,
        "issue_refund",
        {"order_id": "ORD-77146", "amount": 10, "reason": "x"},
        "refund_window_expired",
        "2025-02-13",
        "30 days",
    )
    _error(
        service,
        "issue_refund",
        {"order_id": "ORD-77152", "amount": 10, "reason": "x"},
        "not_refundable",
        "no captured payment",
    )
    _error(
        service, "issue_refund", {"order_id": "ORD-77119", "amount": 1, "reason": "x"}, "already_refunded", "ORD-77119"
    )
    _error(
        service, "escalate_ticket", {"ticket_id": "TCK-5007", "team": "tier2", "reason": "x"}, "ticket_closed", "closed"
    )
    _error(
        service,
        "escalate_ticket",
        {"ticket_id": "TCK-5003", "team": "tier2", "reason": "x"},
        "already_escalated",
        "billing",
    )
    _error(
        service,
        "create_ticket",
        {"customer_id": "CUST-10042", "subject": "s", "body": "b", "order_id": "ORD-77140"},
        "order_mismatch",
        "does not belong",
    )
    _error(service, "send_email", {"to": "not-an-address", "subject": "s", "body": "b"}, "invalid_argument", "'to'")
    _error(
        service,
        "update_address",
        {"customer_id": "CUST-10042", "line1": "x", "city": "y", "postcode": "1", "country": "U1"},
        "invalid_argument",
        "country",
    )
    _error(
        service,
        "issue_refund",
        {"order_id": "ORD-77123", "amount": 1.234, "reason": "x"},
        "invalid_argument",
        "2 decimals",
    )


def test_bad_arguments_fail_before_any_request(service: Service) -> None:
    out = call(service, "get_order", {}, validate=False)
    assert out.is_error and "order_id" in json.loads(out.text)["message"]
    out = call(service, "ticket_note", {"action": "archive", "ticket_id": "TCK-5001"}, validate=False)
    assert out.is_error and "archive" in json.loads(out.text)["message"]
    assert service.stats() == {"read_requests": 0, "write_requests": 0, "authorized_requests": 0}


def _raw(url: str, *, method: str = "GET", data: bytes | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_http_level_errors_are_json(service: Service) -> None:
    assert _raw(service.url + "/tickets", method="POST", data=b"{not json")[1]["error"] == "bad_json"
    assert _raw(service.url + "/tickets", method="POST", data=b"[1]")[0] == 400
    assert _raw(service.url + "/nowhere") == (
        404,
        {"error": "no_route", "message": "no endpoint GET /nowhere", "status": 404},
    )
    status, data = _raw(service.url + "/orders/ORD-77123/refund")
    assert status == 405 and "POST" in data["message"]
    assert _raw(service.url + "/customers")[1]["error"] == "invalid_argument"
    assert service.row_counts() == SEED_COUNTS


# --- classes and the pack -----------------------------------------------------------------------


def test_ticket_note_class_depends_on_action() -> None:
    spec = SPECS["ticket_note"]
    assert spec.tool_class == "args"
    actions = ("read", "list", "add", "delete")
    assert [spec.classify({"action": a}) for a in actions] == ["read", "read", "write", "write"]
    assert spec.classify({}) == "write" and spec.classify({"action": "archive"}) == "write"  # unknown ⇒ unsafe
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
    assert not classifier.is_mutating("ticket_note", {"action": "list", "ticket_id": "TCK-5001"})
    assert classifier.is_mutating("ticket_note", {"action": "delete", "ticket_id": "TCK-5001"})


def test_load_tool_pack_declares_reads_and_writes() -> None:
    pack = load_tool_pack("examples.helpdesk")
    classes = pack.declared_classes()
    reads = sorted(n for n, c in classes.items() if c == "read")
    writes = sorted(n for n, c in classes.items() if c == "write")
    assert reads == sorted(
        [
            "find_customer",
            "get_customer",
            "get_order",
            "list_orders",
            "search_kb",
            "get_kb_article",
            "get_ticket",
            "get_refund_policy",
        ]
    )
    assert writes == sorted(
        ["issue_refund", "update_address", "create_ticket", "send_email", "escalate_ticket", "cancel_order"]
    )
    assert [n for n, c in classes.items() if c == "args"] == ["ticket_note"]
    classifier = ToolClassifier.from_tool_pack(pack)
    assert all(classifier.is_mutating(n) for n in writes) and not any(classifier.is_mutating(n) for n in reads)
    assert callable(pack.module.start_service)


def test_every_schema_is_a_valid_json_schema() -> None:
    for spec in TOOLS:
        jsonschema.Draft202012Validator.check_schema(spec.parameters)
        params = spec.parameters
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"]), spec.name
        assert spec.openai_schema()["function"]["name"] == spec.name


# --- lifecycle ----------------------------------------------------------------------------------


def test_two_services_do_not_interfere(tmp_path: Path) -> None:
    with start_service(tmp_path / "a.sqlite3") as a, start_service(tmp_path / "b.sqlite3") as b:
        assert a.port != b.port and a.db_path != b.db_path
        ok(call(a, "create_ticket", {"customer_id": "CUST-10042", "subject": "only on A", "body": "b"}))
        ok(call(b, "get_ticket", {"ticket_id": "TCK-5001"}))
        assert a.row_counts()["tickets"] == 16 and b.row_counts()["tickets"] == 15
        assert (a.write_requests, a.read_requests) == (1, 0) and (b.write_requests, b.read_requests) == (0, 1)
        assert call(b, "get_ticket", {"ticket_id": "TCK-5016"}).is_error


def test_given_database_is_kept_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "kept.sqlite3"
    with start_service(path) as first:
        ok(call(first, "send_email", {"to": "a@example.com", "subject": "s", "body": "b"}))
    assert path.is_file()  # a given path is never deleted
    with start_service(path) as second:
        assert second.row_counts()["outbox"] == 1  # used as it is, not re-seeded


def test_stop_releases_the_port_and_the_temp_db() -> None:
    svc = start_service()
    port, db_path = svc.port, svc.db_path
    ok(call(svc, "get_refund_policy", {}))
    svc.stop()
    svc.stop()  # idempotent
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with pytest.raises(urllib.error.URLError):  # a dead service is an exception, not a recorded tool error
        call(svc, "get_refund_policy", {})
    assert not db_path.exists()


def test_environment_proxy_is_ignored(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy from the environment must not divert loopback calls (nothing listens on port 9)."""
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert ok(call(service, "get_ticket", {"ticket_id": "TCK-5001"}))["id"] == "TCK-5001"
    assert service.read_requests == 1


def test_importing_the_pack_stays_light() -> None:
    code = (
        "import sys, examples.helpdesk; heavy = {'litellm', 'vcr', 'requests', 'httpx', 'deepdiff'} & "
        "set(sys.modules); print(sorted(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert result.stdout.strip() == "[]"


# --- recording compatibility --------------------------------------------------------------------


def test_vcrpy_records_and_replays_the_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack's urllib calls are what vcrpy intercepts: record live, replay with the service gone.
    Recorded without a header filter, the cassette carries the token (why recorders must scrub it)."""
    import vcr

    monkeypatch.setenv(TOKEN_ENV, ENV_TOKEN)
    assert auth_header() == "Bearer " + ENV_TOKEN
    recorder = vcr.VCR(match_on=["method", "path", "query", "body"], decode_compressed_response=True)
    scrubbed = tmp_path / "scrubbed.yaml"
    raw = tmp_path / "raw.yaml"
    calls = [
        ("get_order", {"order_id": "ORD-77123"}),
        ("issue_refund", {"order_id": "ORD-77123", "amount": 10, "reason": "scuff"}),
    ]
    with start_service() as svc:
        with recorder.use_cassette(str(scrubbed), record_mode="once", filter_headers=["authorization"]):
            live = [call(svc, n, a) for n, a in calls]
        with recorder.use_cassette(str(raw), record_mode="once"):
            call(svc, "get_ticket", {"ticket_id": "TCK-5001"})
        url, writes = svc.url, svc.write_requests
    assert writes == 1 and not live[1].is_error
    assert ENV_TOKEN in raw.read_text()
    assert ENV_TOKEN not in scrubbed.read_text() and DEFAULT_TOKEN not in scrubbed.read_text()

    with recorder.use_cassette(str(scrubbed), record_mode="none"):
        replayed = [SPECS[n].call(a, ToolContext(base_url=url)) for n, a in calls]
    assert replayed == live  # answered from the cassette; the service is stopped
