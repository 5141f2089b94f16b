"""Variables a command line sets for what runs next: one that makes a program load code or run
another keeps a reader mutating, however it is set (`NAME=… cmd`, `env NAME=… cmd`, `export NAME=…;
cmd`); a pager or editor reads when its command does; `PATH` when it keeps the shell's own and adds
no relative directory; any other variable changes nothing a reader does."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict

HARMLESS_ONLY = "set for what runs next, which the grammar does not read as harmless"
MUTATING = [
    ("NODE_OPTIONS=--require=./x.js node -e 1", f"`NODE_OPTIONS` {HARMLESS_ONLY}"),
    ("env NODE_OPTIONS=--require=./x.js node -p 1", "`NODE_OPTIONS`"),
    ("export NODE_OPTIONS=--require=./x.js; node -p 1", "`NODE_OPTIONS`"),
    ("LD_PRELOAD=./hook.so ls", "`LD_PRELOAD`"),
    ("BASH_ENV=./x.sh bash -c 'ls'", "`BASH_ENV`"),
    ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./x git log", "`GIT_CONFIG_COUNT`"),
    # what a second adversarial review ran for real: each wrote a file, ran a program or sent a change
    ("env -S'NODE_OPTIONS=--require=./x.js' node -e 1", "known only when the shell runs"),
    ("env --split-str='NODE_OPTIONS=--require=./x.js' node -e 1", "known only when the shell runs"),
    ("export 'NODE_OPTIONS=--require=./x.js'; node -e 1", "`NODE_OPTIONS`"),
    ("declare -x 'NODE_OPTIONS=--require=./x.js'; node -e 1", "`NODE_OPTIONS`"),
    ("for NODE_OPTIONS in --require=./x.js; do export NODE_OPTIONS; node -e 1; done", "`NODE_OPTIONS`"),
    ("read NODE_OPTIONS <<< '--require=./x.js'; export NODE_OPTIONS; node -e 1", "`NODE_OPTIONS`"),
    ("declare -n r=NODE_OPTIONS; export r=--require=./x.js; node -e 1", "`declare -n`"),
    ("set -a; NODE_OPTIONS=--require=./x.js; node -e 1", "`set -a`"),
    ("NODE_OPTIONS=--require=./x.js; node -e 1", "can make what runs next load code"),  # exported already?
    ("PATH=$PWD:$PATH ls", "adds `$PWD`"),
    ("PATH=/proc/self/cwd:$PATH ls", "adds `/proc/self/cwd`"),
    ("GIT_TRACE=trace.txt git status", "`GIT_TRACE`"),
    ("HOME=./home git diff", "`HOME`"),
    ("CURL_HOME=./conf curl -s https://x.example/a", "`CURL_HOME`"),
    ("WGETRC=./rc wget -qO- https://x.example/a", "`WGETRC`"),
    ("AWS_CONFIG_FILE=./cfg aws s3 ls", "`AWS_CONFIG_FILE`"),
    ("SSLKEYLOGFILE=keys.log curl -s https://x.example/a", "`SSLKEYLOGFILE`"),
    ("TAR_OPTIONS='--checkpoint-action=exec=./x' tar tf a.tar", "`TAR_OPTIONS`"),
    ("SHELL=./x script -qc ls", "`SHELL`"),
    ("script -qc ls", "`script`"),
    ("GIT_EXTERNAL_DIFF=./x git diff", "`GIT_EXTERNAL_DIFF` runs a command that is not read-only"),
    ("PAGER=./pager.sh git log", "`PAGER` runs a command that is not read-only"),
    ('GIT_PAGER="$P" git log', "`GIT_PAGER` set to a command known only when the shell runs"),
    ("PATH=./bin:$PATH ls", "adds `./bin`, which is where the command runs"),
    ("PATH=.:$PATH ls", "adds `.`"),
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
    'PGPASSWORD=secret psql -h "$PGHOST" -U postgres -c "SELECT 1"',
    "GH_TOKEN=x gh pr list",
    "f=notes.txt; cat $f",  # the shell's own variable, exported to nothing
    "FILE=src/a.ts; wc -l $FILE",
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
