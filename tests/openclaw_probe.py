"""A node script run once over lines of JSON on the pinned OpenClaw build's `dist`: one answer line
per input line. Skips when the pinned OpenClaw or a node new enough is missing, and fails so under
CI=true (the oracle tests' rule)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from replaylab.oracles.openclaw import PACKAGE_DIR, node_executable, oracle_unavailable
from replaylab.oracles.openclaw_rules import RulesAnswers, ask_rules, rules_unavailable


def probe_answers(folder: Path, script: str, lines: list[Any]) -> list[Any]:
    """`script` (an ES module reading stdin, given `dist` as its argument) run on `lines`, each
    written as one JSON line; its output lines read as JSON."""
    why = oracle_unavailable()
    node = node_executable()
    if why is None and node is None:
        why = "no node new enough for OpenClaw"
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"OpenClaw's oracle is required under CI=true: {why}")
        pytest.skip(why)
    assert node is not None
    probe = folder / "probe.mjs"
    probe.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [node, str(probe), str(PACKAGE_DIR / "dist")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def rules_answers(requests: Iterable[dict[str, Any]], release: str = "2026.9.6") -> RulesAnswers:
    """`ask_rules(requests, release)` on OpenClaw's rules server; skips when that release's rules
    cannot run here, and fails so under CI=true."""
    why = rules_unavailable(release)
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"OpenClaw {release}'s rules must run under CI: {why}")
        pytest.skip(why)
    return ask_rules(requests, release)
