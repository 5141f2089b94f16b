"""The helpdesk tool pack: schemas, declared classes and implementations (ToolSpecs).

Why urllib: vcrpy patches `urllib.request`, so `replaylab record` captures exactly these calls (and
a suite with `live_read_tools: true` can serve the read tools' HTTP from the cassette). Replay
never runs these implementations otherwise: it answers each call with the recorded result. Bodies are `canonical_json`
(the cassette matcher compares method + path + body; canonical bodies make that stable).

Every call sends `Authorization: Bearer <token>` (env `HELPDESK_TOKEN`, else a fake default) so the
recorder's header scrubbing is exercised. An HTTP 4xx/5xx answer is a tool error whose text is the
service's JSON error; a service that cannot be reached raises (an infrastructure failure must not
be recorded as if the agent had seen it).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlencode

from replaylab import ToolContext, ToolOutput, ToolSpec, canonical_json

TOKEN_ENV = "HELPDESK_TOKEN"
#: fake, documented; scrubbed from cassettes like any Authorization header
DEFAULT_TOKEN = "hd-demo-token-0000-not-a-secret"
TIMEOUT_SECONDS = 30
#: no proxies: an `http_proxy` from the environment would send loopback calls elsewhere and change
#: what the cassette records (vcrpy patches http.client, so this opener is still intercepted)
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

READ_NOTE_ACTIONS = frozenset({"read", "list"})
WRITE_NOTE_ACTIONS = frozenset({"add", "delete"})


def auth_header() -> str:
    return f"Bearer {os.environ.get(TOKEN_ENV) or DEFAULT_TOKEN}"


def _error(message: str, **details: Any) -> ToolOutput:
    """A tool error raised before any HTTP call (bad arguments), in the service's error shape."""
    return ToolOutput(text=json.dumps({"error": "invalid_argument", "message": message, **details}), is_error=True)


def _request(
    ctx: ToolContext, method: str, path: str, *, query: dict[str, Any] | None = None, body: dict[str, Any] | None = None
) -> ToolOutput:
    url = ctx.base_url.rstrip("/") + path
    clean_query = {k: v for k, v in sorted((query or {}).items()) if v is not None}
    if clean_query:
        url += "?" + urlencode(clean_query)
    headers = {"Authorization": auth_header(), "Accept": "application/json"}
    data = None
    if body is not None:
        data = canonical_json({k: v for k, v in body.items() if v is not None}).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=TIMEOUT_SECONDS) as response:
            return ToolOutput(text=response.read().decode("utf-8"), is_error=False)
    except urllib.error.HTTPError as err:
        return ToolOutput(text=err.read().decode("utf-8", errors="replace"), is_error=True)


def _seg(value: str) -> str:
    """One path segment, escaped (an id with '/' must not reach another endpoint)."""
    return quote(value, safe="")


def _missing(args: dict[str, Any], *names: str) -> ToolOutput | None:
    absent = [n for n in names if not isinstance(args.get(n), str) or not args[n].strip()]
    if absent:
        return _error(f"missing required argument(s): {', '.join(absent)}", missing=absent)
    return None


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


# --- read tools ---------------------------------------------------------------------------------


def find_customer(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    if not args.get("email") and not args.get("name"):
        return _error("give 'email' (exact) or 'name' (part of a name)")
    return _request(ctx, "GET", "/customers", query={"email": args.get("email"), "name": args.get("name")})


def get_customer(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "customer_id") or _request(ctx, "GET", f"/customers/{_seg(args['customer_id'])}")


def get_order(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "order_id") or _request(ctx, "GET", f"/orders/{_seg(args['order_id'])}")


def list_orders(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "customer_id") or _request(
        ctx, "GET", f"/customers/{_seg(args['customer_id'])}/orders", query={"status": args.get("status")}
    )


def search_kb(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "query") or _request(
        ctx, "GET", "/kb", query={"q": args["query"], "limit": args.get("limit")}
    )


def get_kb_article(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "article_id") or _request(ctx, "GET", f"/kb/{_seg(args['article_id'])}")


def get_ticket(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "ticket_id") or _request(ctx, "GET", f"/tickets/{_seg(args['ticket_id'])}")


def get_refund_policy(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _request(ctx, "GET", "/policy/refund")


# --- write tools --------------------------------------------------------------------------------


def issue_refund(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "order_id", "reason") or _request(
        ctx,
        "POST",
        f"/orders/{_seg(args['order_id'])}/refund",
        body={"amount": args.get("amount"), "reason": args["reason"]},
    )


def update_address(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    fields = ("line1", "line2", "city", "region", "postcode", "country")
    return _missing(args, "customer_id", "line1", "city", "postcode", "country") or _request(
        ctx, "POST", f"/customers/{_seg(args['customer_id'])}/address", body={f: args.get(f) for f in fields}
    )


def create_ticket(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    fields = ("customer_id", "subject", "body", "order_id", "priority")
    return _missing(args, "customer_id", "subject", "body") or _request(
        ctx, "POST", "/tickets", body={f: args.get(f) for f in fields}
    )


def send_email(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    fields = ("to", "subject", "body", "customer_id")
    return _missing(args, "to", "subject", "body") or _request(
        ctx, "POST", "/emails", body={f: args.get(f) for f in fields}
    )


def escalate_ticket(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "ticket_id", "team", "reason") or _request(
        ctx,
        "POST",
        f"/tickets/{_seg(args['ticket_id'])}/escalate",
        body={"team": args["team"], "reason": args["reason"]},
    )


def cancel_order(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    return _missing(args, "order_id", "reason") or _request(
        ctx, "POST", f"/orders/{_seg(args['order_id'])}/cancel", body={"reason": args["reason"]}
    )


# --- the tool whose class depends on its arguments ----------------------------------------------


def ticket_note_class(args: dict[str, Any]) -> str:
    """`read`/`list` only look; `add`/`delete` change the ticket. Anything else (missing, unknown
    action) is `write`: an action we cannot name is unsafe until someone says otherwise."""
    action = args.get("action")
    return "read" if isinstance(action, str) and action in READ_NOTE_ACTIONS else "write"


def ticket_note(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    action = args.get("action")
    if action not in READ_NOTE_ACTIONS | WRITE_NOTE_ACTIONS:
        return _error(f"action must be one of list, read, add, delete; got {action!r}", field="action")
    missing = _missing(
        args,
        "ticket_id",
        *(("note_id",) if action in ("read", "delete") else ()),
        *(("body",) if action == "add" else ()),
    )
    if missing:
        return missing
    notes = f"/tickets/{_seg(args['ticket_id'])}/notes"
    if action == "list":
        return _request(ctx, "GET", notes)
    if action == "read":
        return _request(ctx, "GET", f"{notes}/{_seg(args['note_id'])}")
    if action == "add":
        return _request(ctx, "POST", notes, body={"body": args["body"], "author": args.get("author")})
    return _request(ctx, "POST", f"{notes}/{_seg(args['note_id'])}/delete", body={})


_ORDER_ID = _s("Order id, e.g. ORD-77123")
_CUSTOMER_ID = _s("Customer id, e.g. CUST-10042")
_TICKET_ID = _s("Ticket id, e.g. TCK-5001")

TOOLS: list[ToolSpec] = [
    ToolSpec(
        "find_customer",
        "Find customers by exact email address or by part of their name.",
        _schema({"email": _s("Exact email address"), "name": _s("Part of the customer's name")}, []),
        "read",
        find_customer,
    ),
    ToolSpec(
        "get_customer",
        "Get a customer's profile: contact details, address, tier, open tickets, notes.",
        _schema({"customer_id": _CUSTOMER_ID}, ["customer_id"]),
        "read",
        get_customer,
    ),
    ToolSpec(
        "get_order",
        "Get an order: status, items, payments, refunds, what is still refundable.",
        _schema({"order_id": _ORDER_ID}, ["order_id"]),
        "read",
        get_order,
    ),
    ToolSpec(
        "list_orders",
        "List a customer's orders, newest first, optionally only those with one status.",
        _schema(
            {
                "customer_id": _CUSTOMER_ID,
                "status": _s(
                    "Only orders with this status",
                    enum=["pending", "paid", "shipped", "delivered", "cancelled", "refunded"],
                ),
            },
            ["customer_id"],
        ),
        "read",
        list_orders,
    ),
    ToolSpec(
        "search_kb",
        "Search the knowledge base; returns article ids, titles and snippets.",
        _schema(
            {
                "query": _s("Search words"),
                "limit": {"type": "integer", "minimum": 1, "maximum": 12, "description": "Max results (5)"},
            },
            ["query"],
        ),
        "read",
        search_kb,
    ),
    ToolSpec(
        "get_kb_article",
        "Get the full text of a knowledge-base article (some are very long).",
        _schema({"article_id": _s("Article id, e.g. KB-101")}, ["article_id"]),
        "read",
        get_kb_article,
    ),
    ToolSpec(
        "get_ticket",
        "Get a support ticket: status, priority, escalation, linked order.",
        _schema({"ticket_id": _TICKET_ID}, ["ticket_id"]),
        "read",
        get_ticket,
    ),
    ToolSpec(
        "get_refund_policy",
        "Get the current refund policy (window, limits, what is not refundable).",
        _schema({}, []),
        "read",
        get_refund_policy,
    ),
    ToolSpec(
        "issue_refund",
        "Refund money on an order (partial or full). Moves real money: check the order first.",
        _schema(
            {
                "order_id": _ORDER_ID,
                "amount": {"type": "number", "exclusiveMinimum": 0, "description": "Amount in USD, e.g. 129.99"},
                "reason": _s("Why the refund is issued"),
            },
            ["order_id", "amount", "reason"],
        ),
        "write",
        issue_refund,
    ),
    ToolSpec(
        "update_address",
        "Replace a customer's address on file.",
        _schema(
            {
                "customer_id": _CUSTOMER_ID,
                "line1": _s("Street and number"),
                "line2": _s("Apartment, suite (optional)"),
                "city": _s("City"),
                "region": _s("State or region code, e.g. OR"),
                "postcode": _s("Postal code"),
                "country": _s("2-letter country code, e.g. US"),
            },
            ["customer_id", "line1", "city", "postcode", "country"],
        ),
        "write",
        update_address,
    ),
    ToolSpec(
        "create_ticket",
        "Open a new support ticket for a customer.",
        _schema(
            {
                "customer_id": _CUSTOMER_ID,
                "subject": _s("Short subject"),
                "body": _s("What happened"),
                "order_id": _s("Related order id (optional)"),
                "priority": _s("Priority", enum=["low", "normal", "high", "urgent"]),
            },
            ["customer_id", "subject", "body"],
        ),
        "write",
        create_ticket,
    ),
    ToolSpec(
        "send_email",
        "Send an email to a customer (queued in the outbox; cannot be unsent).",
        _schema(
            {
                "to": _s("Recipient email address"),
                "subject": _s("Subject"),
                "body": _s("Plain-text body"),
                "customer_id": _s("Customer id the email is about (optional)"),
            },
            ["to", "subject", "body"],
        ),
        "write",
        send_email,
    ),
    ToolSpec(
        "escalate_ticket",
        "Escalate a ticket to a specialist team.",
        _schema(
            {
                "ticket_id": _TICKET_ID,
                "team": _s("Team", enum=["billing", "logistics", "security", "tier2"]),
                "reason": _s("Why it needs the team"),
            },
            ["ticket_id", "team", "reason"],
        ),
        "write",
        escalate_ticket,
    ),
    ToolSpec(
        "cancel_order",
        "Cancel a pending or paid order (a paid order is refunded in full).",
        _schema({"order_id": _ORDER_ID, "reason": _s("Why the order is cancelled")}, ["order_id", "reason"]),
        "write",
        cancel_order,
    ),
    ToolSpec(
        "ticket_note",
        "Ticket notes: action 'list' or 'read' looks at notes; 'add' or 'delete' changes them.",
        _schema(
            {
                "action": _s("What to do", enum=["list", "read", "add", "delete"]),
                "ticket_id": _TICKET_ID,
                "note_id": _s("Note id, e.g. NOTE-8001 (read, delete)"),
                "body": _s("Note text (add)"),
                "author": _s("Author label (add, optional)"),
            },
            ["action", "ticket_id"],
        ),
        "args",
        ticket_note,
        class_for=ticket_note_class,
    ),
]
