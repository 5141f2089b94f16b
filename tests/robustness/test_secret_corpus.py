"""No planted secret leaves the process: `replaylab record`, `replaylab import` and
`pytest --replaylab --junitxml` run as real subprocesses on inputs holding a secret of every
family (tests/builders/secret_corpus.py) in request headers, query strings and bodies, response
headers and bodies, tool arguments and results, transcript text, a recording's file name, a
scenario name and a tool call id; then every file the runs wrote, every written file's name, and
their stdout and stderr are searched for each secret, raw and in its common encodings.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from builders import secret_corpus as corpus
from repo_paths import REPO_ROOT

REPO = REPO_ROOT


def _forms(secret: corpus.Secret) -> list[str]:
    """The secret as a leak could spell it: raw, JSON-escaped, URL-encoded, and its own encodings."""
    raw = secret.value
    return sorted({raw, json.dumps(raw)[1:-1], urllib.parse.quote(raw, safe=""), *secret.encoded})


def _leaks(text: str, where: str) -> list[str]:
    return [f"{secret.family} in {where}" for secret in corpus.SECRETS for form in _forms(secret) if form in text]


def _written(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Record, import and replay the corpus once; what each run wrote and printed."""
    root = tmp_path_factory.mktemp("corpus")
    inputs, outputs = root / "in", root / "out"
    inputs.mkdir()
    (inputs / "vaultpack.py").write_text(corpus.PACK_SOURCE, encoding="utf-8")
    (inputs / "vault.yaml").write_text(corpus.script_yaml("vault-session"), encoding="utf-8")
    chat = inputs / f"chat-{corpus.GITHUB}.json"  # the source file's name names the imported session
    chat.write_text(json.dumps(corpus.chat_log()), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(inputs), str(REPO)])}
    env.pop("REPLAYLAB_SCRUB_PATTERNS", None)
    cli = [sys.executable, "-m", "replaylab.cli"]
    printed: dict[str, str] = {}

    record = _run(
        [
            *cli,
            "record",
            "--tools",
            "vaultpack",
            "--script",
            str(inputs / "vault.yaml"),
            "--out",
            str(outputs / "recorded"),
            "--name",
            f"vault-{corpus.NPM}",
        ],
        inputs,
        env,
    )
    assert record.returncode == 0, record.stderr
    printed["record"] = record.stdout + record.stderr
    imported = _run(
        [*cli, "import", "--from", "openai-chat", str(chat), "--out", str(outputs / "imported")], inputs, env
    )
    assert imported.returncode == 0, imported.stderr
    printed["import"] = imported.stdout + imported.stderr

    # the recordings as a user could name them: a secret in the file name of each
    suite_recordings = inputs / "recordings"
    suite_recordings.mkdir()
    (transcript,) = (outputs / "recorded").glob("*.jsonl")
    for source in (transcript, transcript.with_name(transcript.name.removesuffix(".jsonl") + ".cassette.yaml")):
        shutil.copy(source, suite_recordings / source.name.replace(transcript.stem, f"rec-{corpus.GITHUB_PAT}"))
    (imported_transcript,) = (outputs / "imported").glob("*.jsonl")
    imported_recordings = inputs / "imported-recordings"
    shutil.copytree(outputs / "imported", imported_recordings)
    suites = inputs / "suites"
    suites.mkdir()
    (suites / "vault.yaml").write_text(
        corpus.suite_yaml("../recordings/*.jsonl", f"scenario-{corpus.GOOGLE}", "vaultpack"), encoding="utf-8"
    )
    (suites / "imported.yaml").write_text(
        corpus.suite_yaml("../imported-recordings/*.jsonl", f"import-{corpus.STRIPE}", None), encoding="utf-8"
    )
    replay = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-v",
            "-rA",
            "--replaylab",
            str(suites),
            "--replaylab-report",
            str(outputs / "reports"),
            "--junitxml",
            str(outputs / "junit.xml"),
            "--basetemp",
            str(outputs / "pytest-tmp"),
        ],
        inputs,
        env,
    )
    printed["pytest"] = replay.stdout + replay.stderr
    return {
        "outputs": outputs,
        "printed": printed,
        "replay": replay,
        "imported": imported_transcript,
        "recorded": transcript,
    }


def test_the_corpus_reaches_every_place_it_should(runs: dict) -> None:
    """The inputs do hold every secret, and the runs did what they should: a recording and an
    import were written, and pytest ran the items of both suites and wrote every report."""
    planted = corpus.user_text() + json.dumps(corpus.chat_log()) + corpus.PACK_SOURCE + corpus.script_yaml("x")
    assert [s.family for s in corpus.SECRETS if s.value not in planted and not set(s.encoded) & {corpus.BASIC}] == []
    replay, outputs = runs["replay"], runs["outputs"]
    assert replay.returncode in (0, 1), replay.stdout[-3000:] + replay.stderr[-3000:]
    assert "2 items" in replay.stdout or "items:" in replay.stdout, replay.stdout[-2000:]
    for name in ("replaylab.html", "replaylab.json", "replaylab.md"):
        assert (outputs / "reports" / name).is_file()
    junit = (outputs / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase") == 2 and "[REDACTED]" in junit
    assert "[REDACTED]" in runs["recorded"].read_text(encoding="utf-8")


def test_no_secret_in_any_written_file_or_name(runs: dict) -> None:
    leaks = []
    for path in _written(runs["outputs"]):
        leaks += _leaks(path.read_bytes().decode("utf-8", "replace"), str(path.relative_to(runs["outputs"])))
        leaks += _leaks(path.name, f"the name of {path.relative_to(runs['outputs'])}")
    assert leaks == []


def test_no_secret_on_stdout_or_stderr(runs: dict) -> None:
    leaks = [leak for command, text in runs["printed"].items() for leak in _leaks(text, command)]
    assert leaks == []


def test_written_cassettes_and_transcripts_are_private_to_the_user(runs: dict) -> None:
    """record and import create transcripts and cassettes 0600, whatever the umask."""
    outputs = runs["outputs"]
    files = [
        p for p in _written(outputs / "recorded") + _written(outputs / "imported") if p.suffix in (".jsonl", ".yaml")
    ]
    assert len(files) == 4
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: "0o600" for p in files}
