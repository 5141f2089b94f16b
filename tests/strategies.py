"""Hypothesis strategies for replaylab's inputs: v3 transcripts (valid and mutated), suites, cassettes.

Reusable by any test (`from strategies import ...`; pytest puts `tests/` on sys.path). Why these
shapes: the fuzz properties must reach the loader's and the tools' real code paths, not bounce off
the first `json.loads`. So the generators start from *coherent* sessions (header, a parentId
chain, tool calls answered by results) and then break them the ways real files break: a field
with the wrong type, an unknown entry type or role, a parent link to nowhere or into a cycle, a
duplicated id, an entry dropped or moved, two lines glued together, a truncated last line, a
line of random bytes, invalid UTF-8, a byte-order mark, NaN, nesting deeper than a parser allows.
Ids come from a tiny alphabet so collisions happen by chance too.

Why a seeded `random.Random` inside each strategy instead of one hypothesis draw per field: a
draw per field makes generation many times slower than the code under test, so a CI budget would
hold only a few hundred examples. Each strategy draws a few
structural choices and one seed; a failure replays from them and hypothesis shrinks the choices
(turns, mutation count) and the seed, not the individual texts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson
import yaml
from hypothesis import strategies as st

# ---------------------------------------------------------------- random building blocks

#: characters that break things: quotes, escapes, newlines, non-ASCII, NUL, an emoji, U+2028
ALPHABET = "ab xyz019_-.:/{}[]\"'\\\n\t\r\x00éß€😀\u2028"
IDS = ["u1", "a1", "r1", "a2", "x", "y", "z", "c1", "c2", "0", "e0000001", "e0000002", "e0000003"]
TOOLS = [
    "read",
    "write",
    "exec",
    "message",
    "get_ticket",
    "refund_order",
    "web_search",
    "sessions_spawn",
    "cron",
    "weird tool",
]
KEYS = ["id", "path", "order_id", "action", "text", "é", "", "type"]
ROLES = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "hookMessage",
    "compactionSummary",
    "branchSummary",
    "system",
    "robot",
]
ENTRY_TYPES = [
    "message",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
    "session",
    "future_entry_type",
]
STAMP = "2026-01-01T00:00:00.000Z"


def rand_text(rnd: random.Random, size: int = 12) -> str:
    return "".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(size)))


def rand_json(rnd: random.Random, depth: int = 0) -> Any:
    """Any JSON value (no NaN / Infinity), at most three levels deep."""
    kind = rnd.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rnd.random() < 0.5
    if kind == 2:
        return rnd.choice([0, -1, 2**31, -(2**63), 2**63 - 1, rnd.randint(-1000, 1000)])
    if kind == 3:
        return rnd.choice([0.5, -0.0, 1e300, 1e-300, rnd.uniform(-1e6, 1e6)])
    if kind == 4:
        return rand_text(rnd)
    if kind == 5:
        return [rand_json(rnd, depth + 1) for _ in range(rnd.randrange(3))]
    return {rnd.choice(KEYS): rand_json(rnd, depth + 1) for _ in range(rnd.randrange(3))}


def maybe(rnd: random.Random, make: Callable[[], Any], wrong: float = 0.12) -> Any:
    """The field's usual value, or (sometimes) a JSON value of any type: wrong types reach the validator."""
    return rand_json(rnd) if rnd.random() < wrong else make()


def rand_block(rnd: random.Random) -> Any:
    kind = rnd.randrange(7)
    if kind == 0:
        return {"type": "text", "text": maybe(rnd, lambda: rand_text(rnd))}
    if kind == 1:
        return {
            "type": "toolCall",
            "id": maybe(rnd, lambda: rnd.choice(IDS)),
            "name": maybe(rnd, lambda: rnd.choice(TOOLS)),
            "arguments": maybe(rnd, lambda: {rnd.choice(KEYS): rand_json(rnd, 1)}),
        }
    if kind == 2:
        block = {"type": "thinking", "thinking": maybe(rnd, lambda: rand_text(rnd))}
        if rnd.random() < 0.5:
            block["thinkingSignature"] = rand_text(rnd)
        return block
    if kind == 3:
        return {
            "type": "image",
            "data": maybe(rnd, lambda: "iVBORw0KGgo="),
            "mimeType": maybe(rnd, lambda: "image/png"),
        }
    if kind == 4:
        return {"type": rnd.choice(["toolUse", "audio", ""]), "x": rand_json(rnd, 1)}
    return rand_json(rnd, 1)


def rand_content(rnd: random.Random) -> Any:
    kind = rnd.randrange(5)
    if kind < 2:
        return rand_text(rnd)
    if kind < 4:
        return [rand_block(rnd) for _ in range(rnd.randrange(4))]
    return rand_json(rnd, 1)


def rand_message(rnd: random.Random) -> Any:
    """A message of any role (known or not), with fields that may have the wrong type."""
    if rnd.random() < 0.08:
        return rand_json(rnd, 1)
    role = rnd.choice(ROLES)
    message: dict[str, Any] = {"role": role}
    if role == "assistant":
        message["content"] = [rand_block(rnd) for _ in range(rnd.randrange(4))]
        message["stopReason"] = rnd.choice(["stop", "toolUse", "error", "aborted", 7])
        if rnd.random() < 0.5:
            message["usage"] = maybe(rnd, lambda: {"input": rnd.randrange(100), "output": 5, "totalTokens": 9})
    elif role == "toolResult":
        message.update(
            toolCallId=maybe(rnd, lambda: rnd.choice(IDS)),
            content=rand_content(rnd),
            toolName=maybe(rnd, lambda: rnd.choice(TOOLS)),
            isError=maybe(rnd, lambda: rnd.random() < 0.3),
        )
    elif role == "bashExecution":
        message.update(
            command=maybe(rnd, lambda: rand_text(rnd)),
            output=maybe(rnd, lambda: rand_text(rnd)),
            exitCode=maybe(rnd, lambda: rnd.randrange(3)),
            excludeFromContext=rnd.random() < 0.3,
        )
    elif role in ("compactionSummary", "branchSummary"):
        message["summary"] = maybe(rnd, lambda: rand_text(rnd))
    else:
        message["content"] = rand_content(rnd)
        if role in ("custom", "hookMessage"):
            message.update(customType=rand_text(rnd), display=rnd.random() < 0.5)
    return message


def rand_entry(rnd: random.Random) -> dict[str, Any]:
    """One entry of any type (random entry types and fields, ids from the small pool)."""
    entry: dict[str, Any] = {
        "type": maybe(rnd, lambda: rnd.choice(ENTRY_TYPES), 0.05),
        "id": maybe(rnd, lambda: rnd.choice(IDS), 0.05),
        "parentId": maybe(rnd, lambda: rnd.choice([None, *IDS]), 0.05),
    }
    optional: dict[str, Callable[[], Any]] = {
        "timestamp": lambda: maybe(rnd, lambda: STAMP),
        "message": lambda: rand_message(rnd),
        "summary": lambda: maybe(rnd, lambda: rand_text(rnd)),
        "firstKeptEntryId": lambda: maybe(rnd, lambda: rnd.choice(IDS)),
        "firstKeptEntryIndex": lambda: rnd.randint(-2, 20),
        "tokensBefore": lambda: maybe(rnd, lambda: rnd.randrange(10**6)),
        "details": lambda: maybe(
            rnd, lambda: {"replaylab": {"protectedEntryIds": [rnd.choice(IDS)], "mutatedEventIds": rand_json(rnd, 2)}}
        ),
        "customType": lambda: rand_text(rnd),
        "data": lambda: rand_json(rnd),
        "content": lambda: rand_content(rnd),
        "replayMark": lambda: rnd.choice(["safe", "unsafe", "maybe", 1]),
        "targetId": lambda: rnd.choice(IDS),
        "fromId": lambda: rnd.choice(IDS),
        "label": lambda: maybe(rnd, lambda: rand_text(rnd)),
    }
    for key in rnd.sample(sorted(optional), rnd.randrange(4)):
        entry[key] = optional[key]()
    if entry["type"] == "message" and "message" not in entry and rnd.random() < 0.8:
        entry["message"] = rand_message(rnd)
    return entry


# ---------------------------------------------------------------- sessions


def build_valid_session(rnd: random.Random, turns: int) -> list[dict[str, Any]]:
    """Header, then user → assistant (tool calls) → tool results (→ a closing answer) per turn, one
    parentId chain with unique ids, sometimes a compaction entry between turns."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "fuzz-session", "timestamp": STAMP, "cwd": "/work"}
    ]
    parent: str | None = None

    def add(entry: dict[str, Any]) -> None:
        nonlocal parent
        entry_id = f"e{len(lines):07x}"
        lines.append({**entry, "id": entry_id, "parentId": parent, "timestamp": STAMP})
        parent = entry_id

    for turn in range(turns):
        add({"type": "message", "message": {"role": "user", "content": rand_text(rnd) or "hi"}})
        calls = []
        for _ in range(rnd.choice([0, 0, 1, 1, 2, 3])):
            args = rand_json(rnd, 1)
            calls.append((rnd.choice(TOOLS), args if isinstance(args, dict) else {"value": args}))
        ids = [f"call_{turn}_{i}" for i in range(len(calls))]
        content: list[dict[str, Any]] = [{"type": "text", "text": rand_text(rnd)}]
        content += [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, (name, args) in zip(ids, calls)
        ]
        add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": content,
                    "stopReason": "toolUse" if calls else "stop",
                    "usage": {"input": 10, "output": 5},
                },
            }
        )
        for cid, (name, _) in zip(ids, calls):
            add(
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": cid,
                        "toolName": name,
                        "content": [{"type": "text", "text": rand_text(rnd) * rnd.randrange(1, 60)}],
                        "isError": rnd.random() < 0.2,
                    },
                }
            )
        if calls and rnd.random() < 0.6:
            add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "done"}],
                        "stopReason": "stop",
                    },
                }
            )
        if turn and rnd.random() < 0.2:
            add(
                {
                    "type": "compaction",
                    "summary": rand_text(rnd),
                    "firstKeptEntryId": lines[max(1, len(lines) - 2)]["id"],
                    "tokensBefore": 100,
                }
            )
    return lines


MUTATIONS = [
    "insert",
    "replace-field",
    "duplicate-id",
    "break-parent",
    "cycle",
    "drop",
    "swap",
    "header",
    "scalar-line",
    "version",
]


def mutate_session(rnd: random.Random, lines: list[Any], count: int) -> list[Any]:
    """Entry-level damage, `count` times (see MUTATIONS)."""
    lines = list(lines)
    for _ in range(count):
        kind, n = rnd.choice(MUTATIONS), len(lines)
        i, j = rnd.randrange(1, n) if n > 1 else 0, rnd.randrange(1, n) if n > 1 else 0
        target = lines[i] if n > 1 and isinstance(lines[i], dict) else None
        if kind == "insert":
            lines.insert(rnd.randrange(n + 1), rand_entry(rnd))
        elif kind == "replace-field" and target is not None:
            key = rnd.choice(["type", "id", "parentId", "message", "summary", "timestamp", "firstKeptEntryId"])
            lines[i] = {**target, key: rand_json(rnd)}
        elif kind == "duplicate-id" and target is not None and isinstance(lines[j], dict):
            lines[j] = {**lines[j], "id": target.get("id")}
        elif kind == "break-parent" and target is not None:
            lines[i] = {**target, "parentId": rnd.choice([*IDS, "nowhere"])}
        elif kind == "cycle" and target is not None and isinstance(lines[-1], dict):
            lines[i] = {**target, "parentId": lines[-1].get("id")}
        elif kind == "drop" and n > 1:
            del lines[i]
        elif kind == "swap" and n > 1:
            k = rnd.randrange(n)
            lines[i], lines[k] = lines[k], lines[i]
        elif kind == "header":
            lines[0] = rnd.choice(
                [
                    rand_entry(rnd),
                    rand_json(rnd),
                    {"type": "session", "version": 3},
                    {"type": "session", "id": "h", "version": rnd.choice([1, 2, 4, "3", None, "x", 2.5, [1]])},
                ]
            )
        elif kind == "scalar-line":
            lines.insert(rnd.randrange(n + 1), rand_json(rnd, 3))
        elif kind == "version" and isinstance(lines[0], dict):
            lines[0] = {**lines[0], "version": rnd.choice([1, 2, 4, 99, "3", None, -1, 0, 3.5, "abc", [3], {}, True])}
    return lines


def encode_lines(lines: list[Any]) -> list[bytes]:
    return [orjson.dumps(line, option=orjson.OPT_NON_STR_KEYS) for line in lines]


BYTE_DAMAGE = [
    "glue",
    "truncate-last",
    "random-line",
    "bad-utf8",
    "crlf",
    "bom",
    "blank",
    "empty",
    "nan",
    "deep",
    "surrogate",
    "huge-number",
    "controls",
]
#: numbers JSON can spell that no 64-bit float or integer holds (or only just does)
HUGE_NUMBERS = [b"1e400", b"-1e999", b"1" * 5001, b"-" + b"9" * 40, b"18446744073709551616", b"18446744073709551615"]
#: what a hostile file puts in an id or a text to forge or hide output: line breaks, ESC, NUL, C1,
#: a right-to-left override, an isolate, a line separator
CONTROLS = ["\n", "\r", "\u001b[2J", "\u0000", "\u0085", "\u202e", "\u2066", "\u2028"]


def damage_bytes(rnd: random.Random, lines: list[bytes], count: int) -> bytes:
    """File-level damage, `count` times (see BYTE_DAMAGE), then the lines joined."""
    lines = list(lines)
    for _ in range(count):
        kind, n = rnd.choice(BYTE_DAMAGE), len(lines)
        if kind == "glue" and n > 1:
            i = rnd.randrange(n - 1)
            lines[i : i + 2] = [lines[i] + rnd.choice([b"", b" ", b"\t"]) + lines[i + 1]]
        elif kind == "truncate-last" and n:
            lines[-1] = lines[-1][: rnd.randrange(max(1, len(lines[-1])))]
        elif kind == "random-line":
            lines.insert(rnd.randrange(n + 1), rnd.randbytes(rnd.randrange(60)).replace(b"\n", b" "))
        elif kind == "bad-utf8" and n:
            i = rnd.randrange(n)
            cut = rnd.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + rnd.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82"]) + lines[i][cut:]
        elif kind == "crlf":
            lines = [line + b"\r" for line in lines]
        elif kind == "bom" and n:
            lines[0] = b"\xef\xbb\xbf" + lines[0]
        elif kind == "blank":
            lines.insert(rnd.randrange(n + 1), rnd.choice([b"", b"   ", b"\t"]))
        elif kind == "empty":
            lines = []
        elif kind == "nan":
            lines.insert(
                rnd.randrange(n + 1),
                b'{"type":"custom","id":"nan","parentId":null,"data":'
                + rnd.choice([b"NaN", b"Infinity", b"-Infinity"])
                + b"}",
            )
        elif kind == "surrogate":  # a lone surrogate escape, in a text or a key
            escape = rnd.choice([rb"\ud800", rb"\udfff", rb"\ud83d", rb"\ude00x"])
            where = rnd.choice([b'"data":"x%sy"', b'"data":{"%s":1}', b'"data":["%s"]'])
            lines.insert(rnd.randrange(n + 1), b'{"type":"custom","id":"s","parentId":null,' + where % escape + b"}")
        elif kind == "huge-number":
            number = rnd.choice(HUGE_NUMBERS)
            lines.insert(rnd.randrange(n + 1), b'{"type":"custom","id":"big","parentId":null,"data":' + number + b"}")
        elif kind == "controls" and n > 1:  # control characters in the id and the text of an entry
            i = rnd.randrange(1, n)
            control = rnd.choice(CONTROLS).encode()
            lines[i] = (
                lines[i].replace(b'"id":"', b'"id":"' + control, 1).replace(b'"text":"', b'"text":"' + control, 1)
            )
        elif kind == "deep":
            depth = rnd.choice([300, 1100, 5000])  # hypothesis raises the recursion limit: 1100 is not enough
            lines.insert(
                rnd.randrange(n + 1), b'{"type":"custom","id":"deep","data":' + b"[" * depth + b"]" * depth + b"}"
            )
    if not lines:
        return b""
    return b"\n".join(lines) + rnd.choice([b"\n", b""])


def _seed() -> st.SearchStrategy[random.Random]:
    return st.integers(0, 2**32 - 1).map(random.Random)


@st.composite
def valid_sessions(draw: st.DrawFn, max_turns: int = 4) -> list[dict[str, Any]]:
    """A clean v3 session (see `build_valid_session`): loads with no diagnostic."""
    return build_valid_session(draw(_seed()), draw(st.integers(1, max_turns)))


@st.composite
def mutated_sessions(draw: st.DrawFn) -> list[Any]:
    """A valid session with 1–4 entry-level mutations (random entries inserted, fields replaced by
    values of any type, ids duplicated, parent links broken or cycled, entries dropped or moved,
    the header or its version damaged, scalar lines)."""
    rnd = draw(_seed())
    return mutate_session(rnd, build_valid_session(rnd, draw(st.integers(1, 4))), draw(st.integers(1, 4)))


@st.composite
def transcript_bytes(draw: st.DrawFn) -> bytes:
    """File bytes: a valid or mutated session, then 0–3 byte-level damages (glued lines, truncated
    last line, random-bytes lines, invalid UTF-8, CRLF, a BOM, blank lines, an empty file, NaN,
    too-deep nesting)."""
    rnd = draw(_seed())
    lines = build_valid_session(rnd, draw(st.integers(1, 4)))
    if draw(st.booleans()):
        lines = mutate_session(rnd, lines, draw(st.integers(1, 4)))
    return damage_bytes(rnd, encode_lines(lines), draw(st.integers(0, 3)))


def any_entry() -> st.SearchStrategy[dict[str, Any]]:
    """One random entry (any type, plausible or wrong fields)."""
    return _seed().map(rand_entry)


def any_message() -> st.SearchStrategy[Any]:
    return _seed().map(rand_message)


# ---------------------------------------------------------------- suites

SUITE_KEYS = [
    "name",
    "recordings",
    "tools",
    "tool_classes",
    "model",
    "compaction",
    "compact_at",
    "match",
    "expect",
    "per_recording",
    "repeats",
    "scenarios",
    "description",
]
RECORDING_GLOBS = [
    "rec/*.jsonl",
    "rec/a.jsonl",
    ["rec/*.jsonl", "rec/**/*.jsonl"],
    "nothing/*.jsonl",
    "rec/[a.jsonl",
    "/abs/*.jsonl",
    "",
    "rec/*.txt",
]


def _sections(rnd: random.Random) -> dict[str, Callable[[], Any]]:
    return {
        "compaction": lambda: {
            k: v()
            for k, v in rnd.sample(
                list(
                    {
                        "mode": lambda: rnd.choice(["safeguard", "auto", "aggressive", "manual", "wild"]),
                        "contextTokens": lambda: rnd.choice([1, 6000, 200_000, 0, -5]),
                        "reserveTokensFloor": lambda: rnd.choice([0, 1000, 50_000]),
                        "maxHistoryShare": lambda: rnd.choice([0.1, 0.5, 0.9, 1.5]),
                        "identifierPolicy": lambda: rnd.choice(["strict", "off", "custom"]),
                        "recentTurnsPreserve": lambda: rnd.randint(-1, 13),
                        "allowMutatingEventTruncate": lambda: rnd.random() < 0.5,
                    }.items()
                ),
                rnd.randrange(4),
            )
        },
        "match": lambda: {
            k: v()
            for k, v in rnd.sample(
                list(
                    {
                        "tools": lambda: rnd.choice(["strict", "unordered", "subset", "superset"]),
                        "args": lambda: rnd.choice(["exact", "ignore", {"refund_order": {"ignore": ["reason"]}}]),
                        "answer": lambda: rnd.choice(["exact", "normalized", "similarity", "ignore"]),
                        "similarity": lambda: rnd.choice([0.0, 0.9, 1.0, 2.0]),
                    }.items()
                ),
                rnd.randrange(3),
            )
        },
        "expect": lambda: {
            k: v()
            for k, v in rnd.sample(
                list(
                    {
                        "defects": lambda: rnd.sample(
                            ["MUTATION_DROPPED", "PAIR_BROKEN", "ANSWER_DIVERGED", "NOT_A_CODE"], rnd.randrange(3)
                        ),
                        "tolerate": lambda: rnd.choice(["any", ["ANSWER_DIVERGED"], []]),
                        "replaySafe": lambda: rnd.random() < 0.5,
                        "mutatedEventIds": lambda: ["e1"],
                    }.items()
                ),
                rnd.randrange(3),
            )
        },
        "compact_at": lambda: rnd.choice(["auto", "turn:2", "every:1", "every:0", "later"]),
        "model": lambda: rnd.choice(["replay", "scripted"]),
        "repeats": lambda: rnd.randint(-1, 101),
        "tools": lambda: rnd.choice(["examples.helpdesk", "no.such.pack"]),
        "per_recording": lambda: {rnd.choice(["a*", "[ab]*.jsonl"]): {"defects": []}},
        "description": lambda: rand_text(rnd),
    }


def build_suite_document(rnd: random.Random, damage: int) -> Any:
    """A suite as YAML data: the valid shape with random sections, then `damage` random keys
    added, values swapped for random JSON, keys dropped, or junk nested in a section."""
    sections = _sections(rnd)
    doc: dict[Any, Any] = {"name": rand_text(rnd) or "s", "recordings": rnd.choice(RECORDING_GLOBS)}
    for key in rnd.sample(sorted(sections), rnd.randrange(5)):
        doc[key] = sections[key]()
    if rnd.random() < 0.3:
        doc["scenarios"] = [
            {
                "name": rand_text(rnd),
                **{
                    k: sections[k]()
                    for k in rnd.sample(["compaction", "match", "expect", "compact_at"], rnd.randrange(3))
                },
            }
            for _ in range(rnd.randrange(3))
        ]
    for _ in range(damage):
        kind = rnd.choice(["add-key", "swap-value", "drop-key", "nested-junk"])
        if kind == "add-key":
            doc[rnd.choice([rand_text(rnd), 1, True, None])] = rand_json(rnd)
        elif kind == "swap-value" and doc:
            doc[rnd.choice(list(doc))] = rand_json(rnd)
        elif kind == "drop-key" and doc:
            doc.pop(rnd.choice(list(doc)))
        elif kind == "nested-junk":
            section = rnd.choice(["compaction", "match", "expect"])
            base = doc.get(section) if isinstance(doc.get(section), dict) else {}
            doc[section] = {**base, rand_text(rnd): rand_json(rnd)}
    return doc if rnd.random() < 0.9 else rand_json(rnd)


def suite_text_of(rnd: random.Random, doc: Any) -> str:
    """YAML text of a document, sometimes damaged (truncated, a tab, a repeated line, random text)."""
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    kind = rnd.choice(["as-is", "as-is", "as-is", "truncate", "tab", "duplicate-line", "random"])
    if kind == "truncate":
        text = text[: rnd.randrange(len(text) + 1)]
    elif kind == "tab":
        text = text.replace("  ", "\t", 1)
    elif kind == "duplicate-line":
        lines = text.splitlines(keepends=True)
        lines.insert(rnd.randrange(len(lines) + 1), rnd.choice(lines))
        text = "".join(lines)
    elif kind == "random":
        text = rand_text(rnd, 80)
    if rnd.random() < 0.35:
        text = hostile_yaml(rnd, text)
    return text


def hostile_yaml(rnd: random.Random, text: str) -> str:
    """YAML text with one hostile structure added: aliases (a bomb, a value holding itself, a
    merge of an anchored mapping), a numeric extreme, or control characters in a name."""
    kind = rnd.choice(["bomb", "recursive", "merge", "number", "controls", "deep"])
    if kind == "bomb":
        width, levels = rnd.choice([(9, 6), (3, 4), (10, 8)])
        rows = [f"b0: &b0 [{', '.join(['x'] * width)}]"]
        rows += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * width)}]" for i in range(1, levels)]
        return text + "\n" + "\n".join(rows) + "\n"
    if kind == "recursive":
        return (
            text
            + "\n"
            + rnd.choice(["loop: &l [1, *l]", "loop: &m {a: *m}", "scenarios: &s [{name: a, x: *s}]"])
            + "\n"
        )
    if kind == "merge":
        return text + "\nbase: &base {contextTokens: 6000}\ncompaction: {<<: *base, mode: safeguard}\n"
    if kind == "number":
        value = rnd.choice(["1" * 5001, "9" * 31, "-" + "9" * 40, "1e400", ".inf", "-.inf", ".nan", "0x" + "f" * 80])
        key = rnd.choice(["repeats", "compaction", "scenarios"])
        if key == "compaction":
            return text + f"\ncompaction: {{contextTokens: {value}}}\n"
        if key == "scenarios":
            return text + f"\nscenarios: [{{name: x, repeats: {value}}}]\n"
        return text + f"\nrepeats: {value}\n"
    if kind == "controls":
        name = "".join(rnd.choice(["a", "b", "\n", "\x1b[2J", "\x00", "\u202e", "\u2028", "::", ":"]) for _ in range(6))
        return yaml.safe_dump(
            {"name": name, "recordings": "rec/*.jsonl", "scenarios": [{"name": name}, {"name": name}]}
        )
    return text + "\nmatch: " + "[" * rnd.choice([40, 500, 5000]) + "]" * 5 + "\n"


@st.composite
def suite_documents(draw: st.DrawFn) -> Any:
    return build_suite_document(draw(_seed()), draw(st.integers(0, 3)))


@st.composite
def suite_texts(draw: st.DrawFn) -> str:
    """Suite file text: valid YAML with random keys / values, sometimes broken YAML."""
    rnd = draw(_seed())
    return suite_text_of(rnd, build_suite_document(rnd, draw(st.integers(0, 3))))


# ---------------------------------------------------------------- cassettes


def build_interaction(rnd: random.Random) -> Any:
    return {
        "request": maybe(
            rnd,
            lambda: {
                "body": maybe(rnd, lambda: rnd.choice([None, '{"a":1}', rand_text(rnd)])),
                "headers": maybe(rnd, lambda: {"Content-Type": ["application/json"]}),
                "method": maybe(rnd, lambda: rnd.choice(["GET", "POST"])),
                "uri": maybe(rnd, lambda: "http://127.0.0.1:9/tools/read"),
            },
        ),
        "response": maybe(
            rnd,
            lambda: {
                "body": maybe(rnd, lambda: {"string": maybe(rnd, lambda: rand_text(rnd))}),
                "headers": maybe(rnd, dict),
                "status": maybe(rnd, lambda: {"code": maybe(rnd, lambda: 200), "message": "OK"}),
            },
        ),
    }


@st.composite
def cassette_texts(draw: st.DrawFn) -> str:
    """vcrpy cassette YAML: right shape with wrong fields, another shape, sometimes truncated."""
    rnd = draw(_seed())
    if rnd.random() < 0.85:
        doc: Any = {"interactions": [build_interaction(rnd) for _ in range(rnd.randrange(4))]}
        if rnd.random() < 0.9:
            doc["version"] = rnd.choice([1, 1, 1, 2, "1"])
    else:
        doc = rand_json(rnd)
    if rnd.random() < 0.25 and isinstance(doc, dict):
        odd_headers(rnd, doc)
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    if rnd.random() < 0.3:
        text = hostile_yaml(rnd, text)
    return text[: rnd.randrange(len(text) + 1)] if rnd.random() < 0.3 else text


def odd_headers(rnd: random.Random, doc: dict[str, Any]) -> None:
    """Header names and values of the types YAML can give them: integers, lists of lists, None,
    mappings, empty lists, floats, booleans, control characters."""
    odd = rnd.choice([{1: ["x"]}, {"X": 5}, {"X": [["a"]]}, {"X": None}, {"X": {"a": 1}}, {"X": []}, {True: 1.5}])
    odd = {**odd, "X-Esc": ["\x1b[2J\u202e"]} if rnd.random() < 0.5 else odd
    for item in doc.get("interactions") or []:
        if isinstance(item, dict):
            side = item.get(rnd.choice(["request", "response"]))
            if isinstance(side, dict):
                side["headers"] = odd
