"""OpenClaw 2026.9.6's error-text classifiers beside 2026.4.12's: where the releases part
(the conformance test checks every case against OpenClaw itself)."""

from __future__ import annotations

import pytest

from replaylab.compaction.identifiers import extract_opaque_identifiers
from replaylab.compaction.recovery import (
    extract_observed_overflow_token_count,
    is_billing_error,
    is_context_overflow_error,
    is_likely_context_overflow_error,
    is_rate_limit_error,
)
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6

GROQ_413 = (
    "413 Request too large for model `openai/gpt-oss-120b` in organization `org_x` service tier `on_demand` on tokens "
    "per minute (TPM): Limit 8000, Requested 8098, please reduce your message size and try again."
)


@pytest.mark.parametrize(
    ("check", "text", "before", "after"),
    [
        # a TPM request-size ceiling is an overflow from 2026.9.6 on
        (is_context_overflow_error, GROQ_413, False, True),
        (is_context_overflow_error, "Codex ran out of room in the model's context window.", False, True),
        (
            is_likely_context_overflow_error,
            "You can override the prompt template: input too long, max 4096",
            True,
            False,
        ),
        (is_rate_limit_error, "ThrottlingException: Too many concurrent requests", False, True),
        (is_rate_limit_error, "concurrency limit has been reached", False, True),
        (is_rate_limit_error, "Resource has been exhausted", True, False),
        (is_billing_error, "Monthly spend limit reached.", False, True),
        (
            extract_observed_overflow_token_count,
            "input length and max_tokens exceed context limit (i.e 156321 + 48384 > 200000)",
            None,
            204705,
        ),
    ],
)
def test_the_releases_classify_error_texts_as_each_did(check, text, before, after) -> None:
    assert check(text) == before
    assert check(text, OPENCLAW_2026_9_6) == after


def test_2026_9_6_takes_whole_tokens_and_leaves_numbers_out() -> None:
    text = "order ID100000 and mixed_case_id_ABC123456; shift +1.5e-3 Hz; path x/yy/zz and /tmp/a/b"
    assert extract_opaque_identifiers(text) == ["ABC123456", "/yy/zz", "/tmp/a/b"]
    assert extract_opaque_identifiers(text, rules=OPENCLAW_2026_9_6) == [
        "ID100000",
        "mixed_case_id_ABC123456",
        "/tmp/a/b",
    ]
