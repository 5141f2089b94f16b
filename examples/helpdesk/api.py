"""The helpdesk's business logic: routes, validation and the SQL behind every endpoint.

Kept apart from the HTTP plumbing (`service.py`) so the rules (refund limits, what can be
cancelled, which ticket can be escalated) read in one place. Every method takes an open
connection and returns `(status, payload)`, or raises `ApiError` for a 4xx.

Determinism: the clock is logical. "Now" is `db.CLOCK_START` plus one minute per committed write
(the `audit_log` row count), and new ids are the next number after the largest existing one. The
same requests in the same order give the same answers, so re-recording a script is reproducible.
One lock serialises database access, which keeps ids and timestamps deterministic under parallel
requests too.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from examples.helpdesk import db

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_PRIORITIES = ("low", "normal", "high", "urgent")
_ORDER_STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "refunded")

Payload = dict[str, Any]
Query = dict[str, list[str]]


class ApiError(Exception):
    """A 4xx answer: HTTP status, a machine code and a message that says what and why."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details

    def payload(self) -> Payload:
        return {"error": self.code, "message": self.message, "status": self.status, **self.details}


def _money(cents: int) -> float:
    return round(cents / 100, 2)


def _fmt(cents: int) -> str:
    return f"{cents / 100:.2f}"


def _parse_ts(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")


def _require_str(body: Payload, name: str, *, max_len: int = 5000) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(
            400, "invalid_argument", f"field {name!r} is required and must be a non-empty string", field=name
        )
    if len(value) > max_len:
        raise ApiError(400, "invalid_argument", f"field {name!r} is longer than {max_len} characters", field=name)
    return value.strip()


def _optional_str(body: Payload, name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError(400, "invalid_argument", f"field {name!r} must be a string", field=name)
    return value.strip() or None


def _amount_cents(body: Payload) -> int:
    amount = body.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)):
        raise ApiError(
            400, "invalid_argument", "field 'amount' is required and must be a number (e.g. 12.50)", field="amount"
        )
    cents = round(amount * 100)
    if cents <= 0:
        raise ApiError(400, "invalid_argument", f"refund amount must be positive, got {amount}", field="amount")
    if abs(amount * 100 - cents) > 1e-6:
        raise ApiError(400, "invalid_argument", f"amount {amount} has more than 2 decimals", field="amount")
    return cents


def _next_id(conn: sqlite3.Connection, table: str, prefix: str, first: int) -> str:
    """Next id `<prefix><n>` after the largest numeric suffix in `table` (deterministic)."""
    numbers = [
        int(row[0][len(prefix) :])
        for row in conn.execute(f"SELECT id FROM {table}")
        if row[0].startswith(prefix) and row[0][len(prefix) :].isdigit()
    ]
    return f"{prefix}{max(numbers, default=first - 1) + 1}"


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: str  # name of a HelpdeskApi method


def _route(method: str, template: str, handler: str) -> _Route:
    regex = re.sub(r"<(\w+)>", r"(?P<\1>[^/]+)", template)
    return _Route(method, re.compile(f"^{regex}$"), handler)


ROUTES: tuple[_Route, ...] = (
    _route("GET", "/customers", "find_customers"),
    _route("GET", "/customers/<customer_id>", "get_customer"),
    _route("GET", "/customers/<customer_id>/orders", "list_orders"),
    _route("POST", "/customers/<customer_id>/address", "update_address"),
    _route("GET", "/orders/<order_id>", "get_order"),
    _route("POST", "/orders/<order_id>/refund", "issue_refund"),
    _route("POST", "/orders/<order_id>/cancel", "cancel_order"),
    _route("GET", "/kb", "search_kb"),
    _route("GET", "/kb/<article_id>", "get_kb_article"),
    _route("POST", "/tickets", "create_ticket"),
    _route("GET", "/tickets/<ticket_id>", "get_ticket"),
    _route("POST", "/tickets/<ticket_id>/escalate", "escalate_ticket"),
    _route("GET", "/tickets/<ticket_id>/notes", "list_notes"),
    _route("POST", "/tickets/<ticket_id>/notes", "add_note"),
    _route("GET", "/tickets/<ticket_id>/notes/<note_id>", "get_note"),
    _route("POST", "/tickets/<ticket_id>/notes/<note_id>/delete", "delete_note"),
    _route("POST", "/emails", "send_email"),
    _route("GET", "/policy/refund", "refund_policy"),
)


class HelpdeskApi:
    """The business logic behind the routes: one method per route, each returning (status, payload)."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._lock = threading.Lock()

    # --- dispatch -------------------------------------------------------------------------
    def handle(self, method: str, path: str, query: Query, body: Payload | None) -> tuple[int, Payload]:
        allowed = []
        for route in ROUTES:
            match = route.pattern.match(path)
            if not match:
                continue
            if route.method != method:
                allowed.append(route.method)
                continue
            params = {k: unquote(v) for k, v in match.groupdict().items()}
            fn: Callable[..., tuple[int, Payload]] = getattr(self, route.handler)
            with self._lock:
                conn = db.connect(self.db_path)
                try:
                    if method == "GET":
                        return fn(conn, query, **params)
                    with conn:  # one transaction per write; rolled back on ApiError
                        status, payload = fn(conn, body or {}, **params)
                        conn.execute(
                            "INSERT INTO audit_log (method, path, body, at) VALUES (?,?,?,?)",
                            (method, path, json.dumps(body or {}, sort_keys=True), self._now(conn)),
                        )
                        return status, payload
                finally:
                    conn.close()
        if allowed:
            raise ApiError(405, "method_not_allowed", f"{method} {path} is not supported; use {' or '.join(allowed)}")
        raise ApiError(404, "no_route", f"no endpoint {method} {path}")

    @staticmethod
    def _now(conn: sqlite3.Connection) -> str:
        writes = conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0]
        start = _parse_ts(db.CLOCK_START)
        return (start + timedelta(minutes=writes)).strftime("%Y-%m-%dT%H:%M:%SZ")

    # --- lookups shared by several routes -------------------------------------------------
    @staticmethod
    def _row(conn: sqlite3.Connection, table: str, kind: str, row_id: str) -> sqlite3.Row:
        """One row by id, or the API's 404 (`table` is one of ours, never user input)."""
        row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", f"{kind} {row_id} not found", id=row_id)
        return row

    @classmethod
    def _customer_row(cls, conn: sqlite3.Connection, customer_id: str) -> sqlite3.Row:
        return cls._row(conn, "customers", "customer", customer_id)

    @classmethod
    def _order_row(cls, conn: sqlite3.Connection, order_id: str) -> sqlite3.Row:
        return cls._row(conn, "orders", "order", order_id)

    @classmethod
    def _ticket_row(cls, conn: sqlite3.Connection, ticket_id: str) -> sqlite3.Row:
        return cls._row(conn, "tickets", "ticket", ticket_id)

    @staticmethod
    def _address(row: sqlite3.Row) -> Payload:
        return {
            "line1": row["line1"],
            "line2": row["line2"],
            "city": row["city"],
            "region": row["region"],
            "postcode": row["postcode"],
            "country": row["country"],
        }

    @staticmethod
    def _paid_cents(conn: sqlite3.Connection, order_id: str) -> int:
        return conn.execute(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM payments WHERE order_id = ? AND status = 'captured'",
            (order_id,),
        ).fetchone()[0]

    def _order_summary(self, conn: sqlite3.Connection, row: sqlite3.Row) -> Payload:
        paid = self._paid_cents(conn, row["id"])
        return {
            "id": row["id"],
            "status": row["status"],
            "total": _money(row["total_cents"]),
            "paid": _money(paid),
            "refunded": _money(row["refunded_cents"]),
            "refundable": _money(max(paid - row["refunded_cents"], 0)),
            "currency": row["currency"],
        }

    @staticmethod
    def _ticket(row: sqlite3.Row, note_count: int) -> Payload:
        return {
            "id": row["id"],
            "customer_id": row["customer_id"],
            "order_id": row["order_id"],
            "subject": row["subject"],
            "body": row["body"],
            "status": row["status"],
            "priority": row["priority"],
            "escalated": bool(row["escalated"]),
            "escalation": (
                {"team": row["escalation_team"], "reason": row["escalation_reason"], "at": row["escalated_at"]}
                if row["escalated"]
                else None
            ),
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "note_count": note_count,
        }

    @staticmethod
    def _note(row: sqlite3.Row) -> Payload:
        return {
            "id": row["id"],
            "ticket_id": row["ticket_id"],
            "author": row["author"],
            "body": row["body"],
            "created_at": row["created_at"],
        }

    # --- reads ----------------------------------------------------------------------------
    def find_customers(self, conn: sqlite3.Connection, query: Query) -> tuple[int, Payload]:
        email = (query.get("email") or [""])[0].strip()
        name = (query.get("name") or [""])[0].strip()
        if not email and not name:
            raise ApiError(400, "invalid_argument", "give ?email=<address> or ?name=<part of a name>")
        if email:
            rows = conn.execute("SELECT * FROM customers WHERE lower(email) = lower(?) ORDER BY id", (email,))
        else:
            rows = conn.execute("SELECT * FROM customers WHERE lower(name) LIKE ? ORDER BY id", (f"%{name.lower()}%",))
        found = [
            {"id": r["id"], "name": r["name"], "email": r["email"], "tier": r["tier"], "city": r["city"]} for r in rows
        ]
        return 200, {"query": {"email": email} if email else {"name": name}, "count": len(found), "customers": found}

    def get_customer(self, conn: sqlite3.Connection, query: Query, customer_id: str) -> tuple[int, Payload]:
        row = self._customer_row(conn, customer_id)
        orders = conn.execute("SELECT COUNT(*) FROM orders WHERE customer_id = ?", (customer_id,)).fetchone()[0]
        tickets = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM tickets WHERE customer_id = ? AND status != 'closed' ORDER BY id", (customer_id,)
            )
        ]
        return 200, {
            "id": row["id"],
            "name": row["name"],
            "email": row["email"],
            "phone": row["phone"],
            "tier": row["tier"],
            "address": self._address(row),
            "customer_since": row["created_at"],
            "order_count": orders,
            "open_tickets": tickets,
            "notes": row["notes"],
        }

    def list_orders(self, conn: sqlite3.Connection, query: Query, customer_id: str) -> tuple[int, Payload]:
        self._customer_row(conn, customer_id)
        status = (query.get("status") or [""])[0].strip()
        if status and status not in _ORDER_STATUSES:
            raise ApiError(
                400,
                "invalid_argument",
                f"status must be one of {', '.join(_ORDER_STATUSES)}, got {status!r}",
                field="status",
            )
        sql = "SELECT * FROM orders WHERE customer_id = ?" + (" AND status = ?" if status else "")
        rows = conn.execute(sql + " ORDER BY created_at DESC, id", (customer_id, status) if status else (customer_id,))
        orders = [
            {"id": r["id"], "status": r["status"], "total": _money(r["total_cents"]), "created_at": r["created_at"]}
            for r in rows
        ]
        return 200, {"customer_id": customer_id, "count": len(orders), "orders": orders}

    def get_order(self, conn: sqlite3.Connection, query: Query, order_id: str) -> tuple[int, Payload]:
        row = self._order_row(conn, order_id)
        items = [
            {"sku": r["sku"], "name": r["name"], "qty": r["qty"], "unit_price": _money(r["unit_cents"])}
            for r in conn.execute("SELECT * FROM order_items WHERE order_id = ? ORDER BY line", (order_id,))
        ]
        payments = [
            {"id": r["id"], "method": r["method"], "amount": _money(r["amount_cents"]), "status": r["status"]}
            for r in conn.execute("SELECT * FROM payments WHERE order_id = ? ORDER BY id", (order_id,))
        ]
        refunds = [
            {"id": r["id"], "amount": _money(r["amount_cents"]), "reason": r["reason"], "created_at": r["created_at"]}
            for r in conn.execute("SELECT * FROM refunds WHERE order_id = ? ORDER BY id", (order_id,))
        ]
        return 200, {
            **self._order_summary(conn, row),
            "customer_id": row["customer_id"],
            "created_at": row["created_at"],
            "shipped_at": row["shipped_at"],
            "delivered_at": row["delivered_at"],
            "cancelled_at": row["cancelled_at"],
            "tracking_number": row["tracking_number"],
            "items": items,
            "payments": payments,
            "refunds": refunds,
        }

    def search_kb(self, conn: sqlite3.Connection, query: Query) -> tuple[int, Payload]:
        text = (query.get("q") or [""])[0].strip()
        terms = [t for t in re.split(r"[^\w$]+", text.lower()) if len(t) >= 2]
        if not terms:
            raise ApiError(400, "invalid_argument", "give ?q=<search words> (at least one word of 2+ characters)")
        limit_text = (query.get("limit") or ["5"])[0]
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= 12:
            raise ApiError(400, "invalid_argument", f"limit must be 1..12, got {limit_text!r}", field="limit")
        scored = []
        for row in conn.execute("SELECT * FROM kb_articles ORDER BY id"):
            title, tags, body = row["title"].lower(), row["tags"].lower(), row["body"].lower()
            score = sum(5 * title.count(t) + 3 * tags.count(t) + min(body.count(t), 10) for t in terms)
            if score:
                first = min((body.find(t) for t in terms if t in body), default=0)
                start = max(first - 40, 0)
                snippet = row["body"][start : start + 160].replace("\n", " ")
                scored.append(
                    (
                        -score,
                        row["id"],
                        {
                            "id": row["id"],
                            "title": row["title"],
                            "tags": row["tags"].split(","),
                            "score": score,
                            "chars": len(row["body"]),
                            "snippet": snippet,
                        },
                    )
                )
        scored.sort(key=lambda item: (item[0], item[1]))
        results = [item[2] for item in scored[: int(limit_text)]]
        return 200, {"query": text, "count": len(results), "results": results}

    def get_kb_article(self, conn: sqlite3.Connection, query: Query, article_id: str) -> tuple[int, Payload]:
        row = conn.execute("SELECT * FROM kb_articles WHERE id = ?", (article_id,)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", f"knowledge-base article {article_id} not found", id=article_id)
        return 200, {
            "id": row["id"],
            "title": row["title"],
            "tags": row["tags"].split(","),
            "updated_at": row["updated_at"],
            "chars": len(row["body"]),
            "body": row["body"],
        }

    def get_ticket(self, conn: sqlite3.Connection, query: Query, ticket_id: str) -> tuple[int, Payload]:
        row = self._ticket_row(conn, ticket_id)
        notes = conn.execute("SELECT COUNT(*) FROM ticket_notes WHERE ticket_id = ?", (ticket_id,)).fetchone()[0]
        return 200, self._ticket(row, notes)

    def list_notes(self, conn: sqlite3.Connection, query: Query, ticket_id: str) -> tuple[int, Payload]:
        self._ticket_row(conn, ticket_id)
        notes = [
            self._note(r)
            for r in conn.execute(
                "SELECT * FROM ticket_notes WHERE ticket_id = ? ORDER BY created_at, id", (ticket_id,)
            )
        ]
        return 200, {"ticket_id": ticket_id, "count": len(notes), "notes": notes}

    def get_note(self, conn: sqlite3.Connection, query: Query, ticket_id: str, note_id: str) -> tuple[int, Payload]:
        self._ticket_row(conn, ticket_id)
        row = conn.execute("SELECT * FROM ticket_notes WHERE id = ? AND ticket_id = ?", (note_id, ticket_id)).fetchone()
        if row is None:
            raise ApiError(404, "not_found", f"note {note_id} not found on ticket {ticket_id}", id=note_id)
        return 200, self._note(row)

    def refund_policy(self, conn: sqlite3.Connection, query: Query) -> tuple[int, Payload]:
        return 200, dict(db.REFUND_POLICY)

    # --- writes ---------------------------------------------------------------------------
    def issue_refund(self, conn: sqlite3.Connection, body: Payload, order_id: str) -> tuple[int, Payload]:
        cents = _amount_cents(body)
        reason = _require_str(body, "reason", max_len=500)
        order = self._order_row(conn, order_id)
        paid = self._paid_cents(conn, order_id)
        refundable = paid - order["refunded_cents"]
        if paid == 0:
            raise ApiError(
                409,
                "not_refundable",
                f"order {order_id} has no captured payment (status {order['status']}); there is nothing to refund",
                id=order_id,
            )
        if refundable <= 0:
            raise ApiError(
                409,
                "already_refunded",
                f"order {order_id} is already refunded in full ({_fmt(order['refunded_cents'])})",
                id=order_id,
            )
        if cents > refundable:
            raise ApiError(
                409,
                "refund_exceeds_paid",
                f"refund of {_fmt(cents)} exceeds what order {order_id} can refund: paid {_fmt(paid)}, "
                f"already refunded {_fmt(order['refunded_cents'])}, refundable {_fmt(refundable)}",
                id=order_id,
                refundable=_money(refundable),
            )
        now = self._now(conn)
        window = int(db.REFUND_POLICY["window_days"])  # type: ignore[call-overload]
        if order["delivered_at"] and _parse_ts(now) - _parse_ts(order["delivered_at"]) > timedelta(days=window):
            raise ApiError(
                409,
                "refund_window_expired",
                f"order {order_id} was delivered {order['delivered_at'][:10]}, more than {window} days "
                f"before {now[:10]}; the refund window has closed (warranty: escalate to tier2)",
                id=order_id,
            )
        limit = round(float(db.REFUND_POLICY["auto_approval_limit"]) * 100)  # type: ignore[arg-type]
        if (
            cents > limit
            and not conn.execute(
                "SELECT 1 FROM tickets WHERE order_id = ? AND escalated = 1 AND escalation_team = 'billing'",
                (order_id,),
            ).fetchone()
        ):
            raise ApiError(
                409,
                "approval_required",
                f"refund of {_fmt(cents)} is above the auto-approval limit {_fmt(limit)}: escalate a "
                f"ticket for order {order_id} to billing first",
                id=order_id,
            )
        refund_id = _next_id(conn, "refunds", "REF-", 9001)
        conn.execute("INSERT INTO refunds VALUES (?,?,?,?,?)", (refund_id, order_id, cents, reason, now))
        refunded = order["refunded_cents"] + cents
        status = "refunded" if refunded >= paid else order["status"]
        conn.execute("UPDATE orders SET refunded_cents = ?, status = ? WHERE id = ?", (refunded, status, order_id))
        updated = self._order_row(conn, order_id)
        return 201, {
            "refund": {
                "id": refund_id,
                "order_id": order_id,
                "amount": _money(cents),
                "reason": reason,
                "created_at": now,
            },
            "order": self._order_summary(conn, updated),
        }

    def cancel_order(self, conn: sqlite3.Connection, body: Payload, order_id: str) -> tuple[int, Payload]:
        reason = _require_str(body, "reason", max_len=500)
        order = self._order_row(conn, order_id)
        if order["status"] == "cancelled":
            raise ApiError(
                409,
                "already_cancelled",
                f"order {order_id} was already cancelled at {order['cancelled_at']}",
                id=order_id,
            )
        if order["status"] not in ("pending", "paid"):
            when = order["delivered_at"] or order["shipped_at"] or order["created_at"]
            raise ApiError(
                409,
                "cannot_cancel",
                f"order {order_id} has status {order['status']} (since {when}); only pending or paid "
                f"orders can be cancelled, a shipped or delivered order must be refunded instead",
                id=order_id,
                order_status=order["status"],
            )
        now = self._now(conn)
        refund = None
        refundable = self._paid_cents(conn, order_id) - order["refunded_cents"]
        if refundable > 0:
            refund_id = _next_id(conn, "refunds", "REF-", 9001)
            conn.execute(
                "INSERT INTO refunds VALUES (?,?,?,?,?)",
                (refund_id, order_id, refundable, f"order cancelled: {reason}", now),
            )
            refund = {"id": refund_id, "amount": _money(refundable)}
        conn.execute("UPDATE payments SET status = 'voided' WHERE order_id = ? AND status = 'authorized'", (order_id,))
        conn.execute(
            "UPDATE orders SET status = 'cancelled', cancelled_at = ?, cancel_reason = ?, "
            "refunded_cents = refunded_cents + ? WHERE id = ?",
            (now, reason, max(refundable, 0), order_id),
        )
        updated = self._order_row(conn, order_id)
        return 200, {
            "order": {**self._order_summary(conn, updated), "cancelled_at": now, "cancel_reason": reason},
            "refund": refund,
        }

    def update_address(self, conn: sqlite3.Connection, body: Payload, customer_id: str) -> tuple[int, Payload]:
        row = self._customer_row(conn, customer_id)
        new = {
            "line1": _require_str(body, "line1", max_len=200),
            "line2": _optional_str(body, "line2") or "",
            "city": _require_str(body, "city", max_len=100),
            "region": _optional_str(body, "region") or "",
            "postcode": _require_str(body, "postcode", max_len=20),
            "country": _require_str(body, "country", max_len=2).upper(),
        }
        if not _COUNTRY.match(new["country"]):
            raise ApiError(
                400,
                "invalid_argument",
                f"country must be a 2-letter code like US, got {body.get('country')!r}",
                field="country",
            )
        old = self._address(row)
        now = self._now(conn)
        change_id = _next_id(conn, "address_changes", "ADDR-", 2001)
        conn.execute(
            "INSERT INTO address_changes VALUES (?,?,?,?,?)",
            (change_id, customer_id, json.dumps(old, sort_keys=True), json.dumps(new, sort_keys=True), now),
        )
        conn.execute(
            "UPDATE customers SET line1 = ?, line2 = ?, city = ?, region = ?, postcode = ?, country = ? WHERE id = ?",
            (*new.values(), customer_id),
        )
        return 200, {
            "customer_id": customer_id,
            "change_id": change_id,
            "address": new,
            "previous_address": old,
            "changed_at": now,
        }

    def create_ticket(self, conn: sqlite3.Connection, body: Payload) -> tuple[int, Payload]:
        customer_id = _require_str(body, "customer_id", max_len=40)
        subject = _require_str(body, "subject", max_len=200)
        text = _require_str(body, "body")
        priority = _optional_str(body, "priority") or "normal"
        if priority not in _PRIORITIES:
            raise ApiError(
                400,
                "invalid_argument",
                f"priority must be one of {', '.join(_PRIORITIES)}, got {priority!r}",
                field="priority",
            )
        self._customer_row(conn, customer_id)
        order_id = _optional_str(body, "order_id")
        if order_id is not None and self._order_row(conn, order_id)["customer_id"] != customer_id:
            raise ApiError(
                409, "order_mismatch", f"order {order_id} does not belong to customer {customer_id}", id=order_id
            )
        now = self._now(conn)
        ticket_id = _next_id(conn, "tickets", "TCK-", 5001)
        conn.execute(
            "INSERT INTO tickets VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (ticket_id, customer_id, order_id, subject, text, "open", priority, 0, None, None, None, now, now),
        )
        return 201, self._ticket(self._ticket_row(conn, ticket_id), 0)

    def escalate_ticket(self, conn: sqlite3.Connection, body: Payload, ticket_id: str) -> tuple[int, Payload]:
        team = _require_str(body, "team", max_len=40)
        reason = _require_str(body, "reason", max_len=1000)
        if team not in db.ESCALATION_TEAMS:
            raise ApiError(
                400,
                "invalid_argument",
                f"team must be one of {', '.join(db.ESCALATION_TEAMS)}, got {team!r}",
                field="team",
            )
        row = self._ticket_row(conn, ticket_id)
        if row["status"] == "closed":
            raise ApiError(
                409,
                "ticket_closed",
                f"ticket {ticket_id} is closed and cannot be escalated; open a new ticket instead",
                id=ticket_id,
            )
        if row["escalated"]:
            raise ApiError(
                409,
                "already_escalated",
                f"ticket {ticket_id} was already escalated to {row['escalation_team']} at {row['escalated_at']}",
                id=ticket_id,
            )
        now = self._now(conn)
        priority = "high" if row["priority"] in ("low", "normal") else row["priority"]
        conn.execute(
            "UPDATE tickets SET status = 'escalated', escalated = 1, escalation_team = ?, "
            "escalation_reason = ?, escalated_at = ?, priority = ?, updated_at = ? WHERE id = ?",
            (team, reason, now, priority, now, ticket_id),
        )
        notes = conn.execute("SELECT COUNT(*) FROM ticket_notes WHERE ticket_id = ?", (ticket_id,)).fetchone()[0]
        return 200, self._ticket(self._ticket_row(conn, ticket_id), notes)

    def add_note(self, conn: sqlite3.Connection, body: Payload, ticket_id: str) -> tuple[int, Payload]:
        text = _require_str(body, "body")
        author = _optional_str(body, "author") or "agent:assistant"
        self._ticket_row(conn, ticket_id)
        now = self._now(conn)
        note_id = _next_id(conn, "ticket_notes", "NOTE-", 8001)
        conn.execute("INSERT INTO ticket_notes VALUES (?,?,?,?,?)", (note_id, ticket_id, author, text, now))
        conn.execute("UPDATE tickets SET updated_at = ? WHERE id = ?", (now, ticket_id))
        return 201, self._note(conn.execute("SELECT * FROM ticket_notes WHERE id = ?", (note_id,)).fetchone())

    def delete_note(self, conn: sqlite3.Connection, body: Payload, ticket_id: str, note_id: str) -> tuple[int, Payload]:
        self._ticket_row(conn, ticket_id)
        deleted = conn.execute("DELETE FROM ticket_notes WHERE id = ? AND ticket_id = ?", (note_id, ticket_id))
        if deleted.rowcount == 0:
            raise ApiError(404, "not_found", f"note {note_id} not found on ticket {ticket_id}", id=note_id)
        conn.execute("UPDATE tickets SET updated_at = ? WHERE id = ?", (self._now(conn), ticket_id))
        return 200, {"deleted": note_id, "ticket_id": ticket_id}

    def send_email(self, conn: sqlite3.Connection, body: Payload) -> tuple[int, Payload]:
        to = _require_str(body, "to", max_len=254)
        if not _EMAIL.match(to):
            raise ApiError(400, "invalid_argument", f"'to' must be an email address, got {to!r}", field="to")
        subject = _require_str(body, "subject", max_len=200)
        text = _require_str(body, "body", max_len=20000)
        customer_id = _optional_str(body, "customer_id")
        if customer_id is not None:
            self._customer_row(conn, customer_id)
        now = self._now(conn)
        email_id = _next_id(conn, "outbox", "EML-", 6001)
        conn.execute("INSERT INTO outbox VALUES (?,?,?,?,?,?)", (email_id, to, customer_id, subject, text, now))
        return 201, {
            "id": email_id,
            "to": to,
            "customer_id": customer_id,
            "subject": subject,
            "status": "queued",
            "created_at": now,
        }
