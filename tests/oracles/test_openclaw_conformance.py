"""Each OpenClaw rule set of replaylab (`upstream.runtime_rules`) against its own OpenClaw release
(npm `openclaw@2026.9.6` and `openclaw@2026.4.12`, each pinned by its own lockfile).

The corpus (`builders.openclaw_corpus`: generated inputs and the inputs of OpenClaw's own tests)
goes through the pinned release's functions (`replaylab/oracles/node/openclaw-<release>/
openclaw_rules.mjs`, one node process) and through replaylab's rules of that release. Every
difference fails the test unless a row of docs/openclaw-rules.md's table names it (with its
reason) and recognizes it; a row that recognizes nothing fails too. Skips with the reason only when
the release's oracle cannot run, and never under CI=true."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from builders.openclaw_corpus import build_corpus
from openclaw_conformance import (
    FUNCTIONS,
    Difference,
    documented_differences,
    explained,
    functions_of,
    openclaw_answer,
    replaylab_answer,
)
from replaylab.oracles.openclaw_rules import ask_rules, rules_unavailable
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6, RuntimeRules

#: fewest inputs per function: the corpus must exercise each rule
MIN_INPUTS = {
    "writeCapChars": 8,
    "qualityGuardDefaults": 1,
    "renderOverflowResetGuidance": 2,
    "renderRecoverySideEffectCaution": 2,
}


@pytest.fixture(scope="module")
def corpus() -> list:
    return [case for case in build_corpus() if case.fn in FUNCTIONS]


def _answers(corpus: list, release: str) -> dict:
    why = rules_unavailable(release)
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"OpenClaw {release}'s rules must run under CI: {why}")
        pytest.skip(why)
    wanted = functions_of(release)
    asked = ask_rules((case.request() for case in corpus if case.fn in wanted), release)
    assert asked.versions["openclaw"] == release
    return {answer["id"]: answer for answer in asked.answers}


def conformance(corpus: list, answers: dict, rules: RuntimeRules) -> tuple[dict, list, set]:
    """(per function: [inputs, differing, documented]), the undocumented differences, and the
    documented rows that explained any."""
    rows = documented_differences()
    table: dict[str, list[int]] = {}
    unexplained: list[Difference] = []
    used: set[str] = set()
    for case in corpus:
        if case.id not in answers:
            continue
        theirs = openclaw_answer(case, answers[case.id])
        ours = replaylab_answer(case, rules)
        counts = table.setdefault(case.fn, [0, 0, 0])
        counts[0] += 1
        if json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True):
            continue
        counts[1] += 1
        difference = Difference(case, ours, theirs)
        row = explained(difference, rules, rows)
        if row is None:
            unexplained.append(difference)
        else:
            counts[2] += 1
            used.add(row.name)
    return table, unexplained, used


def _report(rules: RuntimeRules, table: dict) -> str:
    lines = [f"{rules.name}: function — inputs, differing, documented"]
    lines += [f"  {fn}: {n} inputs, {d} differ, {k} documented" for fn, (n, d, k) in sorted(table.items())]
    return "\n".join(lines)


def _failure(unexplained: list[Difference]) -> str:
    by_function = Counter(d.case.fn for d in unexplained)
    lines = [f"{len(unexplained)} undocumented differences: {dict(by_function)}"]
    for difference in unexplained[:8]:
        lines.append(f"{difference.case.id} ({difference.case.origin}): {str(difference.case.args)[:160]}")
        lines.append(f"  replaylab: {str(difference.ours)[:300]}")
        lines.append(f"  OpenClaw:  {str(difference.theirs)[:300]}")
    return "\n".join(lines)


@pytest.mark.parametrize("rules", [OPENCLAW_2026_9_6, OPENCLAW_2026_4_12], ids=str)
def test_each_rule_set_answers_as_its_openclaw_release_but_for_the_documented_differences(
    corpus: list, rules: RuntimeRules
) -> None:
    answers = _answers(corpus, rules.release)
    table, unexplained, used = conformance(corpus, answers, rules)
    print(_report(rules, table))
    assert not unexplained, _failure(unexplained)
    rows = {row.name for row in documented_differences() if row.rules == rules.name}
    assert rows <= used, f"documented differences nothing showed: {sorted(rows - used)}"
    assert set(table) == functions_of(rules.release)
    assert all(n >= MIN_INPUTS.get(fn, 40) for fn, (n, _, _) in table.items()), table
