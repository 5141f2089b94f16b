"""Code checkers in the read-only shell grammar: `tsc --noEmit`, `black --check`, `isort
--check-only`, `ruff format --check`, `ruff check --no-fix` read (also as `npx tsc`); the same
checkers in the mode that rewrites files, builds or watches, and a bare `ruff check` (a project
may configure it to fix), stay mutating, each named."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("tsc --noEmit", "`tsc --noEmit`"),
        ("npx tsc --noEmit -p tsconfig.app.json 2>&1 | head -40", "`tsc --noEmit`"),
        ("npx --no-install tsc --showConfig", "`tsc --showConfig`"),
        ("cd web && npx tsc --noEmit --pretty false", "`tsc --noEmit`"),
        ("black --check --diff src tests", "`black --check`"),
        ("isort --check-only --diff .", "`isort --check-only`"),
        ("ruff format --check .", "`ruff format --check`"),
        ("ruff format --diff src", "`ruff format --diff`"),
        ("ruff check --no-fix --output-format=concise .", "`ruff check --no-fix`"),
        ("ruff check --diff .", "`ruff check --diff`"),
        ("ruff rule E501", "`ruff rule`"),
        ("tsc --version && ruff --version", "`tsc --version`"),
        ("npx tsgo --noEmit 2>&1 | head -80", "`tsgo --noEmit`"),  # TypeScript's native port
    ],
)
def test_a_checker_asked_only_to_report_reads(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("tsc", "`tsc` compiles and writes its output"),
        ("tsc -p tsconfig.build.json", "`tsc` compiles"),
        ("tsc -b --noEmit", "`tsc` compiles"),
        ("tsc --noEmit --watch", "`tsc` compiles"),
        ("tsc --init", "`tsc` compiles"),
        ("tsc --noEmit --generateTrace trace", "`tsc` compiles"),
        ("tsc --noEmit false", "`tsc` compiles"),  # a boolean flag takes `false` after it
        ("npx tsc", "`tsc` compiles"),
        ("npx prettier --check .", "`npx` runs programs whose effects the command does not show"),
        ("npx eslint .", "`npx` runs programs"),
        ("black .", "`black` rewrites files in this mode"),
        ("isort src", "`isort` rewrites files"),
        ("ruff check .", "`ruff check` fixes files when the project's configuration sets `fix = true`"),
        ("ruff check src tests", "(only `--no-fix` or `--diff` reads)"),
        ("ruff check --fix .", "`ruff` rewrites files"),
        ("ruff check --diff --fix .", "`ruff` rewrites files"),
        ("ruff check --no-fix --add-noqa .", "`ruff` rewrites files"),
        ("ruff check --no-fix --watch", "`ruff` rewrites files"),
        ("ruff check --no-fix -o report.txt", "`ruff` rewrites files"),
        ("ruff format .", "`ruff` rewrites files"),
        ("ruff clean", "`ruff` rewrites files"),
        ('tsc "$FLAGS"', "`tsc` compiles"),
        ("tsgo -p tsconfig.build.json", "`tsgo` compiles"),
        ("npx tsgo --noEmit --watch", "`tsgo` compiles"),
    ],
)
def test_a_checker_that_may_rewrite_files_stays_mutating(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason
