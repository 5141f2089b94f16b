"""OpenClaw's own runtime rules, asked of OpenClaw: the conformance harness's client.

``node/openclaw-<release>/openclaw_rules.mjs`` answers JSON lines — ``{"id", "fn", "args"}`` in,
``{"id", "ok"}`` (or ``{"id", "error"}``) out — with the pinned release's own functions
(`truncateToolResultText`, the context guard, `extractOpaqueIdentifiers`, the overflow / rate-limit
/ billing classifiers, ...), bound by file and name in its build. replaylab's rule sets
(`upstream.runtime_rules`) are checked against these answers (tests/oracles/
test_openclaw_conformance.py); nothing else runs them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.oracles.openclaw import NODE_DIR, OracleError, run_lines

RULES_ENTRY = NODE_DIR / "openclaw_rules.mjs"
#: seconds one batch may take (loading OpenClaw takes seconds; thousands of answers a few more)
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RulesAnswers:
    """The versions that answered and one answer per request, in order."""

    versions: dict[str, Any]
    answers: list[dict[str, Any]]


def ask_rules(requests: Iterable[dict[str, Any]], entry: Path = RULES_ENTRY) -> RulesAnswers:
    """OpenClaw's answer to each request (`{"id", "fn", "args"}`), in one node process."""
    # ASCII JSON: node's readline also ends a line at U+2028 / U+2029, which must stay escaped
    lines = [json.dumps(request, ensure_ascii=True, allow_nan=False) for request in requests]
    rows = run_lines(entry, lines, TIMEOUT_S)
    if not rows or len(rows) != len(lines) + 1:
        raise OracleError(f"OpenClaw's rules harness answered {max(0, len(rows) - 1)} of {len(lines)} requests")
    return RulesAnswers(rows[0], rows[1:])
