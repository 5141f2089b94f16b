"""OpenClaw's own runtime rules, asked of OpenClaw: the conformance harness's client.

``node/openclaw-<release>/openclaw_rules.mjs`` answers JSON lines — ``{"id", "fn", "args"}`` in,
``{"id", "ok"}`` (or ``{"id", "error"}``) out — with the pinned release's own functions
(`truncateToolResultText`, the context guard, `extractOpaqueIdentifiers`, the overflow / rate-limit
/ billing classifiers, ...), bound by file and name in its build. replaylab's rule sets
(`upstream.runtime_rules`) are checked against these answers (tests/oracles/
test_openclaw_conformance.py); nothing else runs them.

Each release has its own node project (``npm ci --prefix <its folder> --ignore-scripts``: a
lockfile pruned to the packages its rules reach); all run under the node of the 2026.9.6 oracle.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from replaylab.oracles.openclaw import NODE_DIR, OracleError, oracle_unavailable, run_lines

RULES_ENTRY = NODE_DIR / "openclaw_rules.mjs"
#: each pinned release's rules harness
RULES_ENTRIES = {
    "2026.9.6": RULES_ENTRY,
    "2026.4.12": NODE_DIR.parent / "openclaw-2026.4.12" / "openclaw_rules.mjs",
}
#: seconds one batch may take (loading OpenClaw takes seconds; thousands of answers a few more)
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RulesAnswers:
    """The versions that answered and one answer per request, in order."""

    versions: dict[str, Any]
    answers: list[dict[str, Any]]


def install_command(release: str) -> str:
    return f"npm ci --prefix {RULES_ENTRIES[release].parent} --ignore-scripts"


def rules_unavailable(release: str) -> str | None:
    """None when `release`'s harness can run; else why not, with what to do."""
    why = oracle_unavailable()  # its node
    if why is not None:
        return why
    installed = RULES_ENTRIES[release].parent / "node_modules" / "openclaw" / "package.json"
    if not installed.is_file():
        return f"openclaw {release} is not installed for its rules: run `{install_command(release)}`"
    version = json.loads(installed.read_text(encoding="utf-8")).get("version")
    if version != release:
        return f"the installed openclaw is {version}, not {release}: run `{install_command(release)}`"
    return None


def ask_rules(requests: Iterable[dict[str, Any]], release: str = "2026.9.6") -> RulesAnswers:
    """OpenClaw `release`'s answer to each request (`{"id", "fn", "args"}`), in one node process."""
    why = rules_unavailable(release)
    if why is not None:
        raise OracleError(why)
    entry = RULES_ENTRIES[release]
    # ASCII JSON: node's readline also ends a line at U+2028 / U+2029, which must stay escaped
    lines = [json.dumps(request, ensure_ascii=True, allow_nan=False) for request in requests]
    rows = run_lines(entry, lines, TIMEOUT_S)
    if not rows or len(rows) != len(lines) + 1:
        raise OracleError(f"OpenClaw's rules harness answered {max(0, len(rows) - 1)} of {len(lines)} requests")
    return RulesAnswers(rows[0], rows[1:])
