"""Variables a command line sets for what runs next: one that makes a program load code or run
another keeps a reader mutating, however it is set (`NAME=… cmd`, `env NAME=… cmd`, `export NAME=…;
cmd`); a pager or editor reads when its command does; `PATH` when it keeps the shell's own and adds
no relative directory; any other variable changes nothing a reader does."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict

MUTATING = [
    ("NODE_OPTIONS=--require=./x.js node -e 1", "`NODE_OPTIONS=…` makes what runs next load code"),
    ("env NODE_OPTIONS=--require=./x.js node -p 1", "`NODE_OPTIONS=…`"),
    ("export NODE_OPTIONS=--require=./x.js; node -p 1", "`NODE_OPTIONS=…`"),
    ("LD_PRELOAD=./hook.so ls", "`LD_PRELOAD=…`"),
    ("BASH_ENV=./x.sh bash -c 'ls'", "`BASH_ENV=…`"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./x git log", "`GIT_CONFIG_COUNT=…`"),
    ("GIT_EXTERNAL_DIFF=./x git diff", "`GIT_EXTERNAL_DIFF` runs a command that is not read-only"),
    ("PAGER=./pager.sh git log", "`PAGER` runs a command that is not read-only"),
    ('GIT_PAGER="$P" git log', "`GIT_PAGER` set to a command known only when the shell runs"),
    ("PATH=./bin:$PATH ls", "adds the relative directory `./bin`"),
    ("PATH=.:$PATH ls", "adds the relative directory `.`"),
    ("PATH=/tmp/tools ls", "without the shell's own `$PATH`"),
    ("env -i PATH=/usr/bin ls", "without the shell's own `$PATH`"),
]
READS = [
    "GIT_PAGER=cat git log --oneline -5",
    "PAGER= git log",
    "PAGER='less -R' git log",
    'export PATH="$HOME/.local/bin:$PATH" && which mytool',
    "export PATH=$PATH:/usr/local/go/bin; go version",
    "LANG=C sort notes.txt",
    "TZ=UTC date",
    "NO_COLOR=1 CI=1 git status",
    "env LANG=C ls",
]


@pytest.mark.parametrize(("command", "why"), MUTATING)
def test_a_variable_that_makes_what_runs_load_code_keeps_it_mutating(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason


@pytest.mark.parametrize("command", READS)
def test_a_variable_that_changes_nothing_a_reader_does_leaves_it_read_only(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
