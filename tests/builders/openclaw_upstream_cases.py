"""Inputs taken from OpenClaw's own tests (openclaw/openclaw on GitHub; each source names the test
file and the commit read, at or near the 2026.9.6 release) for the conformance corpus
(`builders.openclaw_corpus`). Only the inputs: the expected answers are what each OpenClaw release
itself answers (tests/oracles/test_openclaw_conformance.py asks it).
"""

from __future__ import annotations

OVERFLOW_CASES = "src/agents/failover/failover-classification.overflow.cases.ts@96147410"
RATE_CASES = "src/agents/failover/failover-classification.rate-limit-overload.cases.ts@8a627b45"
CORPUS_TEST = "src/agents/failover/failover-classification.corpus.test.ts@35bb1d17"
CONTEXT_OVERFLOW_TEST = "src/agents/failover/context-overflow.test.ts@2e49234f"
AI_OVERFLOW_TEST = "packages/ai/src/utils/overflow.test.ts@26056ed5"
HELPERS_TEST = "src/agents/embedded-agent-helpers (errors) tests (find_string excerpts)"
SAFEGUARD_TEST = "src/agents/agent-hooks/compaction-safeguard.test.ts (find_string excerpt)"
QUALITY_TEST = "src/agents/agent-hooks/compaction-safeguard-quality*.test.ts (find_string excerpt)"
TRUNCATION_TEST = "src/agents/embedded-agent-runner/tool-result-truncation.test.ts@00522cec"
GUARD_TEST = "src/agents/embedded-agent-runner/tool-result-context-guard.test.ts@0dee8e14"

LM_STUDIO = (
    "Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context "
    "length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide "
    "a shorter input."
)
GROQ_413 = (
    "413 Request too large for model `openai/gpt-oss-120b` in organization `org_x` service tier `on_demand` on tokens "
    "per minute (TPM): Limit 8000, Requested 8098, please reduce your message size and try again."
)
GROQ_429 = (
    "429 Rate limit reached for model `openai/gpt-oss-120b` in organization `org_x` service tier `on_demand` on tokens "
    "per minute (TPM): Limit 8000, Used 7500, Requested 1000, please try again in 3.5s."
)

ERROR_TEXTS: list[tuple[str, str]] = [
    *[
        (OVERFLOW_CASES, t)
        for t in [
            "request_too_large",
            "Request exceeds the maximum size",
            "context length exceeded",
            "Maximum context length",
            "prompt is too long: 208423 tokens > 200000 maximum",
            "Context overflow: Summarization failed",
            "413 Request Entity Too Large",
            '{"type":"error","error":{"type":"invalid_request_error","message":"Request size exceeds model context window"}}',
            '400 {"type":"error","error":{"type":"invalid_request_error","message":"Request size exceeds model context window"}}',
            "Invalid request: Your request exceeded model token limit: 262144 (requested: 291351)",
            "error, status code: 400, message: Invalid request: Your request exceeded model token limit: 262144 (requested: 291351)",
            "input length and max_tokens exceed context limit (i.e 156321 + 48384 > 200000)",
            "This request exceeds the model's maximum context length",
            "LLM request rejected: max_tokens would exceed context window",
            "input length would exceed context budget for this model",
            "input length 14295 tokens exceeds the model limit",
            "Unhandled stop reason: model_context_window_exceeded",
            "错误：上下文过长，请减少输入",
            "请压缩上下文后重试",
            "HTTP 404: INVALID_ARGUMENT: input exceeds the maximum number of tokens",
            "ValidationException: The input is too long for the model",
            "ValidationException: Input token count exceeds the maximum number of input tokens",
            "ModelStreamErrorException: Input is too long for this model",
            "INVALID_ARGUMENT: input exceeds the maximum number of tokens",
            "ollama error: context length exceeded, too many tokens",
            "mistral: input is too long for this model",
            "total tokens exceeds the model's maximum limit of 4096",
            "Context size has been exceeded.",
            "400 Context size has been exceeded.",
            "500 Context size has been exceeded.",
            "400 request (66202 tokens) exceeds the available context size (65536 tokens), try increasing it",
            "request (130000 tokens) exceeds available context size (131072 tokens)",
            "prompt (8500 tokens) exceeds the available context size (8192 tokens), try increasing it",
            "400 Prompt has 256468 tokens, but the configured context size is 256000 tokens",
            "422 Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32768. Given: 28897 `inputs` tokens and 3872 `max_new_tokens`",
            "422 Input validation error: `inputs` must have less than 32768 tokens. Given: 40000",
            "Request size exceeds model context window",
            "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
            "Your request exceeded model token limit",
            "The request size exceeds model context window limit",
            "context_window_exceeded",
            "上下文超出限制",
            "上下文长度超出模型最大限制",
            "超出最大上下文长度",
            'Context overflow: Summarization failed: 400 {"message":"prompt is too long"}',
            "Compaction failed: prompt is too long",
            "input is too long for model gpt-5.4",
            "ollama error: context length exceeded",
            "prompt is too long: 150000 tokens > 128000 maximum",
        ]
    ],
    *[
        (RATE_CASES, t)
        for t in [
            "Rate limit reached for gpt-4.1-mini in organization org_test on requests per min. Limit: 3.000000 / min. Current: 3.000000 / min.",
            "RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).",
            "429 Too Many Requests: Too many requests were sent in a given timeframe.",
            "model_cooldown: All credentials for model gpt-5 are cooling down",
            "You have hit your ChatGPT usage limit (plus plan)",
            "AWS Bedrock: Too many tokens per day. Please try again tomorrow.",
            "LLM error 1310: Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-03-06 22:19:54 (request_id: 20260303141547610b7f574d1b44cb)",
            "402 You have reached your subscription quota limit. Please wait for automatic quota refresh in the rolling time window, upgrade to a higher plan, or use a Pay-As-You-Go API Key for unlimited access.",
            "请求过于频繁，请稍后重试",
            "调用频率超限",
            "配额已用尽",
            "额度不足，请充值",
            "rate limit exceeded",
            '429 status code (exceeded limit)\n{"code":1305,"message":"The service may be temporarily overloaded, please try again later."}',
            "ThrottlingException: Too many requests",
            "ThrottlingException: Too many concurrent requests",
            "concurrency limit has been reached",
            "concurrency limit breached",
            "concurrency limit was reached",
            "workers_ai gateway error: quota limit exceeded",
            '429 {"error":{"type":"rate_limit_error","message":"Rate limit exceeded"}}',
            '429 {"error":{"code":"insufficient_quota","message":"Allocated quota exceeded, please increase your quota limit."}}',
            '429 {"error":{"code":"Throttling.AllocationQuota","message":"Allocated quota exceeded"}}',
            "invalid_api_key",
            "429 temporary provider response",
            "ResourceExhausted: Worker local total request limit reached",
            "resource exhausted",
            "quota_exceeded",
            "resource_exhausted: transient worker capacity exhausted",
            "429 You exceeded your daily request limit. Please try again in 24 hours.",
            "429 RPM limit exceeded; Retry-After: 2 hours",
            "429 RESOURCE_EXHAUSTED: Quota exceeded for quota metric requests per minute; please retry your request",
            "OpenAI API error (429): RESOURCE_EXHAUSTED: Quota exceeded for requests per minute; please retry your request",
            "Rate limit exceeded",
            "rate_limit exceeded",
            "429 Too Many Requests",
            '429 {"code":"Some resource has been exhausted","error":"Rate limit exceeded"}',
            "request reached organization TPD rate limit, current: 1506556, limit: 1500000",
            "too many requests",
            "This request would exceed your account's rate limit",
            "429 Too Many Requests: request exceeds rate limit",
            "Monthly spend limit reached.",
            "Weekly usage limit exhausted.",
            "Daily limit reached, resets tomorrow.",
            "Organization spending limit exceeded.",
            "Workspace spend limit reached.",
            "Organization limit exceeded for this billing period.",
            "402 Payment Required: Monthly spend limit reached. Please visit your billing settings.",
            "HTTP 402 Payment Required: rate limit exceeded",
            "LLM error: weekly/monthly limit reached",
            "LLM error: monthly limit reached",
            "LLM error: daily limit exceeded",
            "频率限制",
            "配额不足",
            "额度已用尽",
            "Monthly usage limit reached",
            "rate limit reached for requests. Retry after 6h.",
            "rate limit reached; Retry-After: 90 minutes",
            "429 insufficient_quota",
            "429 <!doctype html><html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1><p>Rate limit exceeded.</p></body></html>",
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_test"}',
            "503 Engine Overloaded: The server is experiencing a high volume of requests and is temporarily overloaded.",
            "503 Service Unavailable: The server is temporarily unable to handle the request due to overloading or maintenance.",
            "This model is currently experiencing high demand. Please try again later.",
            "service unavailable due to capacity limits",
            '{"error":{"code":503,"message":"The model is overloaded. Please try later","status":"UNAVAILABLE"}}',
            "529 API is busy",
            "服务过载，请稍后重试",
            "当前负载过高",
            "Selected model is at capacity. Please try a different model.",
            "The service is currently experiencing high load and cannot process your request.",
            "[1305][该模型当前访问量过大，请您稍后再试]",
            "ModelNotReadyException: model is not ready",
            "overloaded_error",
            "529 Please try again",
        ]
    ],
    *[
        (CORPUS_TEST, t)
        for t in [
            "The model is not available. Please try again later.",
            "request id req-4291 failed",
            "503 service unavailable",
            "429 Too Many Requests: model overloaded",
            "403 Forbidden: insufficient permissions",
            "Something went wrong while processing your request. Please try again.",
            "ThrottlingException: Rate exceeded",
            "throttling disabled for this account",
            "Unknown model: openai/gpt-5.3-codex",
            "Failed to download gemma4:e2b: pull stream ended before success",
            "SSE stream ended before next event",
        ]
    ],
    *[
        (CONTEXT_OVERFLOW_TEST, t)
        for t in [
            'Error rendering prompt with jinja template: "Cannot apply filter upper to type UndefinedValue". You can override the prompt template in model settings.',
            LM_STUDIO,
            f'400 " {LM_STUDIO} Error Data: n/a, Additional Data: n/a"',
            GROQ_413,
            GROQ_429,
            "429 Rate limit reached on requests per minute (RPM): Limit 30, Used 30. Also tokens per minute (TPM) Requested 5000",
            "429 Rate limit reached for model `openai/gpt-oss-120b` in organization `org_x` on requests per minute (RPM): Limit 30, Used 30, Requested 100, please try again in 2s. See the tokens per minute (TPM) guidance for details.",
            "429 Rate limit reached on requests per minute (RPM): Limit 30, Requested 1. Also on tokens per minute (TPM): Limit 8000, Requested 8098.",
            "413 Request too large: Limit 8000, Requested 8098",
            "tokens per minute (TPM): Limit 8000, please reduce",
            "413 request too large: 203557 tokens per minute (TPM)",
            "413 Request too large on tokens per minute (TPM): Limit 8000, please reduce your message size.",
        ]
    ],
    *[
        (AI_OVERFLOW_TEST, t)
        for t in [
            "Prompt has 5,958,968 tokens, but the configured context size is 256,000 tokens",
            "Error: 400 Input length (265330) exceeds model's maximum context length (262144).",
            "Provider returned error: Input length 131393 exceeds the maximum allowed input length of 131,040 tokens.",
            "Input length 131393 exceeds maximum allowed input length of 131040 token",
            "code 1210: tokens in request more than max tokens allowed",
        ]
    ],
    *[
        (HELPERS_TEST, t)
        for t in [
            '400 {"type":"error","error":{"message":"prompt is too long: 277403 tokens > 200000 maximum"}}',
            "Context window exceeded: requested 12000 tokens",
            "prompt is too long: 1234 tokens > 2048 maximum",
            "requested 5678 tokens",
            "no token info here",
        ]
    ],
]

IDENTIFIER_TEXTS: list[tuple[str, str]] = [
    (
        SAFEGUARD_TEST,
        "Track id a1b2c3d4e5f6 plus A1B2C3D4E5F6 and URL https://example.com/a and /tmp/x.log plus port host.local:18789",
    ),
    (QUALITY_TEST, "Change -5%; capacity +512 MB; ambient -23 °C; shift +1.5e-3 Hz."),
    (QUALITY_TEST, "task-5% ID_+512 MB path/-23 °C;"),
    (
        "openclaw-go port test (find_string excerpt)",
        "Working on commit abc123def456. File at /usr/local/bin/tool.\n\tVisit https://example.com/api. Server at 192.168.1.1:8080. ID 12345678.",
    ),
]

# (text, maxChars, options) for truncateToolResultText
TRUNCATE_TEXT: list[tuple[str, str, int, dict]] = [
    (TRUNCATION_TEST, "hello world", 1000, {}),
    (TRUNCATION_TEST, "a" * 10_000, 5_000, {}),
    (TRUNCATION_TEST, "x" * 50_000, 3_000, {}),
    (TRUNCATION_TEST, "\n".join(f"line {i}: {'x' * 50}" for i in range(100)), 3000, {}),
    (TRUNCATION_TEST, "x" * 5_000, 300, {"suffix": "\n\n[custom-truncated]", "minKeepChars": 250}),
]
TRUNCATE_MESSAGE: list[tuple[str, str, int, dict]] = [
    (TRUNCATION_TEST, "x" * 50_000, 10_000, {"suffix": "\n\n[persist-truncated]", "minKeepChars": 2_000}),
]


# guard windows: (source, messages, contextWindowTokens)
def guard_cases(tool_result, user) -> list[tuple[str, list, int]]:
    hint = {"type": "text", "text": "Inspect src/fixture.ts before retrying."}
    out = []
    for size in (64, 8_192):
        msg = tool_result("blocks", "")
        msg["content"] = [{"type": "text", "text": "x" * 6_000}, {"type": "custom", "value": "m" * size}, hint]
        msg["details"] = {"privateReference": "not model context"}
        out.append((GUARD_TEST, [msg], 8_192))
    small = tool_result("small", "x" * 100)
    small["details"] = {"d": "d" * 80_000}
    out.append((GUARD_TEST, [user("u" * 50_000), small, tool_result("recent", "small output")], 1_000))
    legacy = tool_result("legacy", "")
    legacy["content"] = "y" * 5_000
    out.append((GUARD_TEST, [legacy], 1_000))
    out.append((GUARD_TEST, [tool_result("utf16", "a" * 439 + "\U0001f600" + "b" * 1_000)], 1_000))
    preamble = "progress output\n" * 400
    out.append(
        (
            GUARD_TEST,
            [
                user("Read the diagnostic"),
                tool_result("diag", preamble + "Error: missing import; Inspect src/fixture.ts before retrying."),
            ],
            8_192,
        )
    )
    return out
