"""The helpdesk service's SQLite database: schema and a fixed, deterministic seed.

Why fixed data (no randomness, no wall clock): recordings made against this service must be
reproducible. Re-recording a script must give the same tool results, so the seed is pure data
plus arithmetic, and the service's clock is logical (see `api.py`).

Interesting seed rows (for script writers; README.md lists them too):

* CUST-10042 Dana Whitfield (dana.whitfield@example.com): the main demo customer, 5 orders —
  ORD-77123 delivered, refundable (129.99); ORD-77131 shipped (cannot cancel); ORD-77138 paid, not
  shipped (cancellable); ORD-77146 delivered in February (outside the refund window);
  ORD-77152 pending (payment only authorized, nothing to refund). Tickets TCK-5001 (open) and
  TCK-5007 (closed).
* CUST-10055 Dana Whitman: a second "Dana" so a search by name is ambiguous.
* CUST-10047 Marcus Oyelaran: his customer note holds FAKE secrets — an `sk-live-…` API key and a
  `Bearer …` token he pasted into chat — so scrubbing has something to find.
* ORD-77144 (CUST-10032, 698.00) is above the 500.00 auto-approval limit with no billing
  escalation: a refund is refused until a ticket for it is escalated to billing. ORD-77157
  (CUST-10053, 597.00) already has one (TCK-5003), so it can be refunded in full.
* KB-108: the returns handbook, a body over 70,000 characters (a tool result over 60,000).
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from pathlib import Path

#: every table, in creation order (row_counts() reports these)
TABLES: tuple[str, ...] = (
    "customers",
    "orders",
    "order_items",
    "payments",
    "refunds",
    "tickets",
    "ticket_notes",
    "kb_articles",
    "outbox",
    "address_changes",
    "audit_log",
)

SCHEMA = """
CREATE TABLE customers (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, phone TEXT NOT NULL,
    tier TEXT NOT NULL CHECK (tier IN ('standard', 'gold', 'platinum')),
    line1 TEXT NOT NULL, line2 TEXT NOT NULL DEFAULT '', city TEXT NOT NULL, region TEXT NOT NULL,
    postcode TEXT NOT NULL, country TEXT NOT NULL, created_at TEXT NOT NULL, notes TEXT NOT NULL DEFAULT ''
);
CREATE TABLE orders (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded')),
    currency TEXT NOT NULL DEFAULT 'USD', total_cents INTEGER NOT NULL, refunded_cents INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, shipped_at TEXT, delivered_at TEXT, cancelled_at TEXT, cancel_reason TEXT,
    tracking_number TEXT
);
CREATE TABLE order_items (
    order_id TEXT NOT NULL REFERENCES orders(id), line INTEGER NOT NULL, sku TEXT NOT NULL,
    name TEXT NOT NULL, qty INTEGER NOT NULL, unit_cents INTEGER NOT NULL, PRIMARY KEY (order_id, line)
);
CREATE TABLE payments (
    id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), method TEXT NOT NULL,
    amount_cents INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('captured', 'authorized', 'voided')),
    created_at TEXT NOT NULL
);
CREATE TABLE refunds (
    id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(id), amount_cents INTEGER NOT NULL,
    reason TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE tickets (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id), order_id TEXT REFERENCES orders(id),
    subject TEXT NOT NULL, body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'pending', 'escalated', 'closed')),
    priority TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    escalated INTEGER NOT NULL DEFAULT 0, escalation_team TEXT, escalation_reason TEXT, escalated_at TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE ticket_notes (
    id TEXT PRIMARY KEY, ticket_id TEXT NOT NULL REFERENCES tickets(id), author TEXT NOT NULL,
    body TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE kb_articles (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, tags TEXT NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE outbox (
    id TEXT PRIMARY KEY, to_email TEXT NOT NULL, customer_id TEXT REFERENCES customers(id),
    subject TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE address_changes (
    id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id),
    old_address TEXT NOT NULL, new_address TEXT NOT NULL, changed_at TEXT NOT NULL
);
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY, method TEXT NOT NULL, path TEXT NOT NULL, body TEXT NOT NULL, at TEXT NOT NULL
);
"""

#: the service's logical clock starts here; every committed write advances it by one minute
CLOCK_START = "2025-06-02T09:00:00Z"

REFUND_POLICY: dict[str, object] = {
    "policy_id": "POL-REFUND-v3",
    "window_days": 30,
    "window_starts": "delivery date (orders not yet delivered can be refunded any time once paid)",
    "auto_approval_limit": 500.00,
    "over_limit": "refunds above the auto-approval limit need an escalated ticket to the billing team first",
    "max_refund": "the captured payment amount minus refunds already issued",
    "non_refundable": ["gift cards", "orders whose payment is only authorized (not captured)"],
    "cancellation": "pending or paid orders can be cancelled; a paid order is refunded in full on cancel; "
    "shipped or delivered orders cannot be cancelled, refund them instead",
    "currency": "USD",
}

#: seed escalation teams (escalate_ticket validates against these)
ESCALATION_TEAMS: tuple[str, ...] = ("billing", "logistics", "security", "tier2")

# --- customers --------------------------------------------------------------------------------
# (id, name, tier, street, city, region, postcode)
_CUSTOMERS: tuple[tuple[str, str, str, str, str, str, str], ...] = (
    ("CUST-10031", "Alice Moreno", "standard", "Hawthorne Blvd", "Portland", "OR", "97214"),
    ("CUST-10032", "Benjamin Okafor", "gold", "Congress Ave", "Austin", "TX", "78701"),
    ("CUST-10033", "Chloe Tanaka", "standard", "Pine St", "Seattle", "WA", "98101"),
    ("CUST-10034", "Diego Alvarez", "standard", "Larimer St", "Denver", "CO", "80202"),
    ("CUST-10035", "Elena Petrova", "platinum", "Wacker Dr", "Chicago", "IL", "60601"),
    ("CUST-10036", "Farid Haddad", "standard", "Beacon St", "Boston", "MA", "02108"),
    ("CUST-10037", "Grace Lindqvist", "gold", "Nicollet Mall", "Minneapolis", "MN", "55401"),
    ("CUST-10038", "Hiro Nakamura", "standard", "Santa Clara St", "San Jose", "CA", "95113"),
    ("CUST-10039", "Isabel Ferreira", "standard", "Brickell Ave", "Miami", "FL", "33130"),
    ("CUST-10040", "Jamal Carter", "gold", "Peachtree St", "Atlanta", "GA", "30303"),
    ("CUST-10041", "Katarzyna Nowak", "standard", "Water St", "Milwaukee", "WI", "53202"),
    ("CUST-10042", "Dana Whitfield", "gold", "Alder Street", "Portland", "OR", "97209"),
    ("CUST-10043", "Liam O'Connell", "standard", "Walnut St", "Philadelphia", "PA", "19103"),
    ("CUST-10044", "Mei Chen", "platinum", "Valencia St", "San Francisco", "CA", "94103"),
    ("CUST-10045", "Nikolai Ivanov", "standard", "Woodward Ave", "Detroit", "MI", "48226"),
    ("CUST-10046", "Olivia Brennan", "standard", "Broadway", "Nashville", "TN", "37203"),
    ("CUST-10047", "Marcus Oyelaran", "gold", "High St", "Columbus", "OH", "43215"),
    ("CUST-10048", "Priya Raman", "standard", "Fayetteville St", "Raleigh", "NC", "27601"),
    ("CUST-10049", "Quentin Dubois", "standard", "Magazine St", "New Orleans", "LA", "70112"),
    ("CUST-10050", "Rosa Jiménez", "gold", "Roosevelt St", "Phoenix", "AZ", "85004"),
    ("CUST-10051", "Samuel Adeyemi", "standard", "Main St", "Houston", "TX", "77002"),
    ("CUST-10052", "Tamar Cohen", "standard", "Court St", "Brooklyn", "NY", "11201"),
    ("CUST-10053", "Umar Siddiqui", "platinum", "Elm St", "Dallas", "TX", "75201"),
    ("CUST-10054", "Valentina Russo", "standard", "State St", "Salt Lake City", "UT", "84101"),
    ("CUST-10055", "Dana Whitman", "standard", "J St", "Sacramento", "CA", "95814"),
)

#: FAKE credentials (not real keys) so the recorder's and reports' scrubbing is exercised
FAKE_API_KEY = "sk-live-4f9a8c2e7b1d6f3a9e8c7b2d"
FAKE_BEARER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJDVVNULTEwMDQ3In0.ZmFrZS1zaWduYXR1cmU"

_CUSTOMER_NOTES: dict[str, str] = {
    "CUST-10042": "Prefers email over phone. Long-time customer; moved from Seattle in 2024.",
    "CUST-10047": (
        "2025-04-11: customer pasted credentials into chat while asking for help with our API: "
        f"api key {FAKE_API_KEY} and header 'Authorization: Bearer {FAKE_BEARER_TOKEN}'. "
        "Told him to rotate both immediately; see TCK-5004."
    ),
    "CUST-10053": "Business account; orders in bulk. Refunds over the auto-approval limit go to billing.",
    "CUST-10044": "Pays with gift card + card; check split payments before refunding.",
    "CUST-10043": "Name contains an apostrophe: O'Connell.",
}

# --- products and orders ----------------------------------------------------------------------
_PRODUCTS: tuple[tuple[str, str, int], ...] = (
    ("P-1001", "Aero Wireless Headphones", 12999),
    ("P-1002", "Trail Running Shoes", 8950),
    ("P-1003", "Ceramic Pour-Over Set", 3450),
    ("P-1004", "Merino Wool Beanie", 2400),
    ("P-1005", "Smart Desk Lamp", 5900),
    ("P-1006", "Insulated Water Bottle", 2200),
    ("P-1007", "Mechanical Keyboard", 11900),
    ("P-1008", "Yoga Mat Pro", 4500),
    ("P-1009", "Cast Iron Skillet", 3999),
    ("P-1010", "Standing Desk Frame", 34900),
    ("P-1011", "Noise-Cancelling Earbuds", 19900),
    ("P-1012", "Gift Card $50", 5000),
)
_PRODUCT = {sku: (name, cents) for sku, name, cents in _PRODUCTS}

_SEED_DAY = date(2025, 6, 2)  # the day the logical clock starts
_FIRST_ORDER = 77101
_ORDER_COUNT = 60


def _ts(day: date, hour: int = 10, minute: int = 0) -> str:
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}:00Z"


# Hand-made orders (the rest are generated): id -> (customer, status, created, [(sku, qty)], payments)
# payments: list of (method, cents or None = order total, status)
_SPECIAL_ORDERS: dict[str, tuple[str, str, date, list[tuple[str, int]], list[tuple[str, int | None, str]]]] = {
    "ORD-77123": ("CUST-10042", "delivered", date(2025, 5, 15), [("P-1001", 1)], [("card", None, "captured")]),
    "ORD-77131": (
        "CUST-10042",
        "shipped",
        date(2025, 5, 29),
        [("P-1002", 1), ("P-1006", 1)],
        [("card", None, "captured")],
    ),
    "ORD-77138": ("CUST-10042", "paid", date(2025, 6, 1), [("P-1007", 1)], [("paypal", None, "captured")]),
    "ORD-77146": ("CUST-10042", "delivered", date(2025, 2, 9), [("P-1009", 1)], [("card", None, "captured")]),
    "ORD-77152": ("CUST-10042", "pending", date(2025, 6, 1), [("P-1005", 1)], [("card", None, "authorized")]),
    "ORD-77140": (
        "CUST-10035",
        "delivered",
        date(2025, 5, 5),
        [("P-1008", 1), ("P-1004", 1), ("P-1006", 1)],
        [("card", None, "captured")],
    ),
    "ORD-77150": (
        "CUST-10044",
        "delivered",
        date(2025, 5, 20),
        [("P-1010", 1)],
        [("gift_card", 5000, "captured"), ("card", 29900, "captured")],
    ),
    "ORD-77144": ("CUST-10032", "delivered", date(2025, 5, 22), [("P-1010", 2)], [("card", None, "captured")]),
    "ORD-77157": ("CUST-10053", "delivered", date(2025, 5, 23), [("P-1011", 3)], [("card", None, "captured")]),
    "ORD-77119": ("CUST-10031", "refunded", date(2025, 4, 20), [("P-1003", 2)], [("card", None, "captured")]),
}

#: seeded refunds: (id, order, cents, reason, day)
_SEED_REFUNDS: tuple[tuple[str, str, int, str, date], ...] = (
    ("REF-9001", "ORD-77140", 2400, "beanie returned unworn", date(2025, 5, 14)),
    ("REF-9002", "ORD-77119", 6900, "customer changed mind; both items returned", date(2025, 4, 30)),
)

_STATUS_CYCLE = (
    "delivered",
    "delivered",
    "shipped",
    "delivered",
    "paid",
    "delivered",
    "shipped",
    "pending",
    "cancelled",
    "delivered",
)
_METHODS = ("card", "card", "paypal", "card", "apple_pay")


def _generated_order(
    index: int, others: list[str]
) -> tuple[str, str, date, list[tuple[str, int]], list[tuple[str, int | None, str]]]:
    """Order number `index` (0-based) that is not hand-made: pure arithmetic, no randomness."""
    status = _STATUS_CYCLE[index % len(_STATUS_CYCLE)]
    recent = status in ("shipped", "paid", "pending")
    created = _SEED_DAY - timedelta(days=(1 + index % 6) if recent else (8 + (index * 11) % 120))
    items = [(_PRODUCTS[(index * 5) % 11][0], 1)]  # never the gift card as first item
    if index % 3 == 0:
        items.append((_PRODUCTS[(index * 5 + 3) % 11][0], 1 + index % 2))
    pay_status = {"pending": "authorized", "cancelled": "voided"}.get(status, "captured")
    return (
        others[(index * 7 + 3) % len(others)],
        status,
        created,
        items,
        [(_METHODS[index % len(_METHODS)], None, pay_status)],
    )


def _orders() -> list[tuple[str, tuple[str, str, date, list[tuple[str, int]], list[tuple[str, int | None, str]]]]]:
    others = [c[0] for c in _CUSTOMERS if c[0] != "CUST-10042"]
    result = []
    for index in range(_ORDER_COUNT):
        oid = f"ORD-{_FIRST_ORDER + index}"
        result.append((oid, _SPECIAL_ORDERS.get(oid) or _generated_order(index, others)))
    return result


# --- tickets and notes ------------------------------------------------------------------------
# (id, customer, order, subject, body, status, priority, escalation team, created day)
_TICKETS: tuple[tuple[str, str, str | None, str, str, str, str, str | None, date], ...] = (
    (
        "TCK-5001",
        "CUST-10042",
        "ORD-77123",
        "Headphones arrived with a cracked headband",
        "The Aero headphones from ORD-77123 arrived with a crack across the headband. I would like a refund.",
        "open",
        "normal",
        None,
        date(2025, 5, 31),
    ),
    (
        "TCK-5002",
        "CUST-10035",
        "ORD-77140",
        "Return of beanie: refund received?",
        "I returned the beanie. Has the refund gone through?",
        "closed",
        "low",
        None,
        date(2025, 5, 12),
    ),
    (
        "TCK-5003",
        "CUST-10053",
        "ORD-77157",
        "Refund for three earbuds on one order",
        "All three earbuds have a faulty left channel. Please refund the whole order.",
        "escalated",
        "high",
        "billing",
        date(2025, 5, 30),
    ),
    (
        "TCK-5004",
        "CUST-10047",
        None,
        "Locked out after password reset",
        "I reset my password and now I cannot log in or use the API.",
        "open",
        "high",
        None,
        date(2025, 4, 11),
    ),
    (
        "TCK-5005",
        "CUST-10044",
        "ORD-77150",
        "Gift card portion of a refund",
        "If I return the desk frame, does the gift card part come back as a gift card?",
        "pending",
        "normal",
        None,
        date(2025, 5, 27),
    ),
    (
        "TCK-5006",
        "CUST-10031",
        "ORD-77119",
        "Where is my refund?",
        "I sent the pour-over sets back two weeks ago.",
        "closed",
        "normal",
        None,
        date(2025, 4, 28),
    ),
    (
        "TCK-5007",
        "CUST-10042",
        "ORD-77146",
        "Skillet handle is loose",
        "The handle of the skillet wobbles.",
        "closed",
        "low",
        None,
        date(2025, 2, 20),
    ),
    (
        "TCK-5008",
        "CUST-10036",
        None,
        "Change email address on account",
        "Please change my account email.",
        "open",
        "low",
        None,
        date(2025, 5, 18),
    ),
    (
        "TCK-5009",
        "CUST-10039",
        None,
        "Package marked delivered but not received",
        "Tracking says delivered, nothing at my door.",
        "open",
        "urgent",
        None,
        date(2025, 6, 1),
    ),
    (
        "TCK-5010",
        "CUST-10040",
        None,
        "Invoice for business expenses",
        "Can I get a VAT invoice for my last order?",
        "pending",
        "low",
        None,
        date(2025, 5, 22),
    ),
    (
        "TCK-5011",
        "CUST-10044",
        None,
        "Desk frame missing screws",
        "The hardware bag for the standing desk is missing two screws.",
        "open",
        "normal",
        None,
        date(2025, 5, 28),
    ),
    (
        "TCK-5012",
        "CUST-10050",
        None,
        "Pedido llegó tarde",
        "Mi pedido llegó una semana tarde. ¿Hay compensación?",
        "open",
        "normal",
        None,
        date(2025, 5, 26),
    ),
    (
        "TCK-5013",
        "CUST-10043",
        None,
        "Duplicate charge on card",
        "I see two charges for the same order.",
        "escalated",
        "urgent",
        "billing",
        date(2025, 5, 29),
    ),
    (
        "TCK-5014",
        "CUST-10051",
        None,
        "Warranty for keyboard",
        "Some keys stopped working after 8 months.",
        "open",
        "normal",
        None,
        date(2025, 5, 24),
    ),
    (
        "TCK-5015",
        "CUST-10055",
        None,
        "Update phone number",
        "New phone number is +1-555-0199.",
        "closed",
        "low",
        None,
        date(2025, 5, 2),
    ),
)

# (id, ticket, author, body, day)
_NOTES: tuple[tuple[str, str, str, str, date], ...] = (
    ("NOTE-8001", "TCK-5001", "agent:kim", "Asked customer for a photo of the crack.", date(2025, 5, 31)),
    ("NOTE-8002", "TCK-5001", "customer", "Photo attached to the email thread; crack is 3 cm long.", date(2025, 6, 1)),
    ("NOTE-8003", "TCK-5002", "agent:lee", "Refund REF-9001 issued for the beanie (24.00).", date(2025, 5, 14)),
    (
        "NOTE-8004",
        "TCK-5003",
        "agent:kim",
        "Total 597.00 is above the auto-approval limit; escalated to billing.",
        date(2025, 5, 30),
    ),
    (
        "NOTE-8005",
        "TCK-5003",
        "billing:ana",
        "Reviewing; need warehouse confirmation of the faulty units.",
        date(2025, 6, 1),
    ),
    (
        "NOTE-8006",
        "TCK-5004",
        "agent:raj",
        "Customer pasted an API key in chat; told him to rotate it.",
        date(2025, 4, 11),
    ),
    (
        "NOTE-8007",
        "TCK-5005",
        "agent:lee",
        "Policy: gift-card portions are refunded as store credit.",
        date(2025, 5, 27),
    ),
    ("NOTE-8008", "TCK-5006", "agent:kim", "Refund REF-9002 issued in full.", date(2025, 4, 30)),
    ("NOTE-8009", "TCK-5009", "agent:raj", "Opened a trace with the carrier.", date(2025, 6, 1)),
    (
        "NOTE-8010",
        "TCK-5013",
        "billing:ana",
        "Second charge is an authorization hold; it will drop off.",
        date(2025, 5, 30),
    ),
    (
        "NOTE-8011",
        "TCK-5014",
        "agent:lee",
        "Keyboard has a 12-month warranty; asked for the order number.",
        date(2025, 5, 25),
    ),
    (
        "NOTE-8012",
        "TCK-5007",
        "agent:kim",
        "Sent tightening instructions; customer satisfied. Closed.",
        date(2025, 2, 21),
    ),
)

# --- knowledge base ---------------------------------------------------------------------------
_KB: tuple[tuple[str, str, str, str], ...] = (
    (
        "KB-101",
        "Refund policy overview",
        "refund,policy,money back",
        "Refunds are allowed within 30 days of delivery, up to the captured payment minus earlier refunds. "
        "Refunds above 500.00 need an escalated ticket to billing first. Gift cards are not refundable. "
        "Use the refund tool with the order id and the amount; partial refunds are allowed.",
    ),
    (
        "KB-102",
        "Shipping times and carriers",
        "shipping,delivery,carrier,tracking",
        "Standard shipping takes 3-5 business days, express 1-2. Tracking numbers start with 1Z. A parcel marked "
        "delivered but not received: wait 48 hours, then open a ticket and escalate to logistics.",
    ),
    (
        "KB-103",
        "Changing a delivery address",
        "address,shipping,account",
        "The address on the customer record can be changed any time. Orders that already shipped keep the old "
        "address; only new orders use the new one. Confirm the full address (street, city, postcode, country).",
    ),
    (
        "KB-104",
        "Cancelling an order",
        "cancel,order,refund",
        "Pending and paid orders can be cancelled; a paid order is refunded in full automatically. Shipped or "
        "delivered orders cannot be cancelled: offer a return and refund instead.",
    ),
    (
        "KB-105",
        "Damaged or defective items",
        "damaged,defective,broken,refund,replacement",
        "Ask for a photo, then refund the item price or send a replacement. Items damaged in transit are always "
        "refundable within the refund window. Note the damage on the ticket.",
    ),
    (
        "KB-106",
        "Warranty claims",
        "warranty,repair,defective",
        "Electronics carry a 12-month warranty from delivery. Warranty claims after the refund window are handled "
        "by tier2: escalate the ticket with the order id and a description of the fault.",
    ),
    (
        "KB-107",
        "Escalation process and teams",
        "escalation,billing,logistics,security,tier2",
        "Escalate a ticket to billing (refunds above the limit, charges), logistics (lost parcels), security "
        "(account compromise, leaked credentials) or tier2 (warranty, technical faults). Escalation sets the "
        "ticket status to escalated; closed tickets cannot be escalated, open a new ticket instead.",
    ),
    (
        "KB-108",
        "Returns & Refunds Handbook (complete, internal)",
        "refund,returns,handbook,policy,internal",
        "",
    ),  # body generated by _handbook()
    (
        "KB-109",
        "Payment methods and split payments",
        "payment,gift card,paypal,card,split",
        "We accept card, PayPal, Apple Pay and gift cards. A split payment refunds to each method in proportion; "
        "the gift-card part comes back as store credit.",
    ),
    (
        "KB-110",
        "Gift cards",
        "gift card,store credit",
        "Gift cards never expire and cannot be refunded for cash. Lost gift card codes can be reissued by billing.",
    ),
    (
        "KB-111",
        "Account security: leaked credentials",
        "security,api key,password,credentials",
        "If a customer shares a password or an API key in a ticket or chat, tell them to rotate it at once, "
        "escalate the ticket to security, and never repeat the key back in an email.",
    ),
    (
        "KB-112",
        "International shipping",
        "shipping,international,customs",
        "We ship to the US and Canada only. Customs fees for Canada are prepaid at checkout.",
    ),
)

HANDBOOK_ID = "KB-108"
HANDBOOK_HEAD_MARKER = "HB-HEAD-0001"
HANDBOOK_MIDDLE_FACT = "override code DMG-OVR-2291"
HANDBOOK_TAIL_MARKER = "HB-TAIL-9999"

_HANDBOOK_CHAPTERS = (
    "Eligibility",
    "Return shipping",
    "Inspection on arrival",
    "Partial refunds",
    "Split payments",
    "Damaged in transit",
    "Exceptions and overrides",
    "Warranty versus refund",
    "Fraud signals",
    "Business accounts",
    "International returns",
    "Record keeping",
)


def _handbook() -> str:
    """KB-108's body: over 70,000 characters, head and tail markers, one fact in the middle.

    Why: a tool result over 60,000 characters exercises the write-time cap and head+tail
    truncation; a fact only in the middle shows what truncation loses."""
    lines = [
        f"RETURNS & REFUNDS HANDBOOK, internal edition 7 ({HANDBOOK_HEAD_MARKER}).",
        "Read chapter 1 before issuing any refund. Every clause below is numbered; cite it in ticket notes.",
        "",
    ]
    for chapter_no, chapter in enumerate(_HANDBOOK_CHAPTERS, start=1):
        lines.append(f"CHAPTER {chapter_no}. {chapter.upper()}")
        for clause in range(1, 15):
            days = 7 + (chapter_no * 3 + clause * 5) % 24
            limit = 50 * (1 + (chapter_no + clause) % 9)
            lines.append(
                f"{chapter_no}.{clause} {chapter}, case {clause}: when a customer asks about {chapter.lower()} "
                f"for an order older than {days} days, check the order status, the captured payments and any "
                f"refunds already issued before answering. Amounts up to {limit}.00 may be settled by the agent "
                f"on the spot; larger amounts follow the escalation rules of chapter 7. Record the order id, the "
                f"amount and the clause number ({chapter_no}.{clause}) in a ticket note so the next agent can see "
                f"what was decided and why."
            )
            if chapter_no == 7 and clause == 7:
                lines.append(
                    f"7.7a Damaged-in-transit refunds above the auto-approval limit may be approved by a "
                    f"team lead with the {HANDBOOK_MIDDLE_FACT}; quote it in the escalation reason."
                )
        lines.append("")
    lines.append(f"END OF HANDBOOK ({HANDBOOK_TAIL_MARKER}). Questions go to the tier2 team.")
    return "\n".join(lines)


# --- building the database --------------------------------------------------------------------


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection with named-column rows and foreign keys enforced."""
    conn = sqlite3.connect(str(path), timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def create_database(path: str | Path) -> Path:
    """Create the schema and the seed at `path` (which must not hold a database yet)."""
    path = Path(path)
    with connect(path) as conn:
        conn.executescript(SCHEMA)
        seed(conn)
    conn.close()
    return path


def is_initialized(path: str | Path) -> bool:
    """Whether `path` already holds a helpdesk database (all tables present)."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return False
    conn = sqlite3.connect(str(path))
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    return set(TABLES) <= names


def seed(conn: sqlite3.Connection) -> None:
    """Insert the fixed seed rows (see the module docstring for the interesting ones)."""
    for index, (cid, name, tier, street, city, region, postcode) in enumerate(_CUSTOMERS):
        first, _, last = name.partition(" ")
        email = f"{first.lower()}.{last.lower().replace(chr(39), '')}@example.com".replace("é", "e")
        line1 = "1180 Alder Street" if cid == "CUST-10042" else f"{100 + index * 37} {street}"
        line2 = "Apt 4B" if cid == "CUST-10042" else ""
        conn.execute(
            "INSERT INTO customers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                cid,
                name,
                email,
                f"+1-555-01{index + 10:02d}",
                tier,
                line1,
                line2,
                city,
                region,
                postcode,
                "US",
                _ts(date(2021, 1, 4) + timedelta(days=index * 41)),
                _CUSTOMER_NOTES.get(cid, ""),
            ),
        )

    for oid, (cid, status, created, items, payments) in _orders():
        total = sum(_PRODUCT[sku][1] * qty for sku, qty in items)
        shipped = _ts(created + timedelta(days=1), 16) if status in ("shipped", "delivered", "refunded") else None
        delivered = _ts(created + timedelta(days=4), 14) if status in ("delivered", "refunded") else None
        cancelled = _ts(created + timedelta(hours=26)) if status == "cancelled" else None
        tracking = f"1ZHD{oid[4:]}US" if shipped else None
        conn.execute(
            "INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                oid,
                cid,
                status,
                "USD",
                total,
                0,
                _ts(created, 9, 30),
                shipped,
                delivered,
                cancelled,
                "customer request" if cancelled else None,
                tracking,
            ),
        )
        for line, (sku, qty) in enumerate(items, start=1):
            conn.execute(
                "INSERT INTO order_items VALUES (?,?,?,?,?,?)",
                (oid, line, sku, _PRODUCT[sku][0], qty, _PRODUCT[sku][1]),
            )
        for pay_no, (method, cents, pay_status) in enumerate(payments, start=1):
            conn.execute(
                "INSERT INTO payments VALUES (?,?,?,?,?,?)",
                (
                    f"PAY-{oid[4:]}-{pay_no}",
                    oid,
                    method,
                    total if cents is None else cents,
                    pay_status,
                    _ts(created, 9, 31),
                ),
            )

    for rid, oid, cents, reason, day in _SEED_REFUNDS:
        conn.execute("INSERT INTO refunds VALUES (?,?,?,?,?)", (rid, oid, cents, reason, _ts(day)))
        conn.execute("UPDATE orders SET refunded_cents = refunded_cents + ? WHERE id = ?", (cents, oid))

    for tid, cid, oid, subject, body, status, priority, team, day in _TICKETS:
        escalated = team is not None
        conn.execute(
            "INSERT INTO tickets VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                tid,
                cid,
                oid,
                subject,
                body,
                status,
                priority,
                int(escalated),
                team,
                "seeded escalation" if escalated else None,
                _ts(day, 12) if escalated else None,
                _ts(day, 11),
                _ts(day, 12),
            ),
        )
    for nid, tid, author, body, day in _NOTES:
        conn.execute("INSERT INTO ticket_notes VALUES (?,?,?,?,?)", (nid, tid, author, body, _ts(day, 13)))

    for aid, title, tags, body in _KB:
        conn.execute(
            "INSERT INTO kb_articles VALUES (?,?,?,?,?)", (aid, title, tags, body or _handbook(), _ts(date(2025, 3, 1)))
        )
