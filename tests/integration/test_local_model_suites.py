"""The bundled real-model suites (suites/local-model*.yaml): helpdesk sessions recorded with the
local test model, whose re-runs replay offline from committed LLM cassettes.

What is checked here is that the sessions really are the model's (every assistant message of a
transcript is a reply in the recording's own LLM cassette), that no key or token is in any of
their cassettes, and that the suites replay with neither the model's runtime nor a network: the
runtime cannot be imported and every connection off this machine is refused in the child.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from pathlib import Path

import yaml

from builders.pytest_runs import run_pytest
from replaylab.replay.recorder import RECORDING_INFO_TYPE
from replaylab.scrub import default_scrubber
from replaylab.suite import LOCAL_MODEL_SPEC, load_suite
from replaylab.transcript import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
FOLDER = ROOT / "recordings" / "helpdesk-local"
SUITES = [ROOT / "suites" / "local-model.yaml", ROOT / "suites" / "local-model-auto.yaml"]
RECORDINGS = sorted(FOLDER.glob("*.jsonl"))

#: in the child: llama.cpp's runtime cannot be imported, and no socket may leave 127.0.0.1
OFFLINE_SITE = textwrap.dedent(
    """
    import socket, sys

    class _NoRuntime:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "xllamacpp":
                raise ImportError("the local model's runtime is blocked in this test")
            return None

    sys.meta_path.insert(0, _NoRuntime())
    _connect = socket.socket.connect

    def _loopback_only(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"network blocked in this test: {address!r}")
        return _connect(self, address)

    socket.socket.connect = _loopback_only
    """
)


def _sha256(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _replies(cassette: Path) -> list[dict]:
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    return [json.loads(i["response"]["body"]["string"])["choices"][0]["message"] for i in data["interactions"]]


def test_there_are_two_or_three_sessions_each_recorded_by_the_local_model() -> None:
    assert 2 <= len(RECORDINGS) <= 3, RECORDINGS
    for recording in RECORDINGS:
        entries = load_transcript(recording).leaf_path()
        info = next(e for e in entries if getattr(e, "custom_type", None) == RECORDING_INFO_TYPE)
        assert info.data["model"] == LOCAL_MODEL_SPEC, recording.name


def test_every_assistant_message_of_a_session_is_a_reply_of_the_model_in_its_llm_cassette() -> None:
    """Nothing in these sessions was scripted: each answer's text, and each call's tool and
    arguments, is in one of the model's replies recorded while the session was recorded."""
    for recording in RECORDINGS:
        replies = _replies(recording.with_name(recording.name.replace(".jsonl", ".llm.cassette.yaml")))
        said = [r.get("content") or "" for r in replies]
        assistant = [
            e.message
            for e in load_transcript(recording).leaf_path()
            if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
        ]
        assert assistant, recording.name
        for message in assistant:
            for block in message.content:
                if block.type == "text":
                    assert any(block.text.strip() and block.text.strip() in s for s in said), (
                        recording.name,
                        block.text,
                    )
                elif block.type == "toolCall":
                    wanted = (block.name, block.arguments)
                    made = [json.loads(s) for s in said if s.strip().startswith("{")]
                    assert any((m.get("name"), m.get("arguments")) == wanted for m in made), (recording.name, wanted)


def test_no_key_or_token_is_in_any_of_their_cassettes() -> None:
    scrubber = default_scrubber()
    cassettes = sorted(FOLDER.glob("*.cassette.yaml")) + sorted(FOLDER.glob("llm*/*.cassette.yaml"))
    assert len(cassettes) >= 3 * len(RECORDINGS), cassettes  # tools + the recording's model + the re-runs
    for cassette in cassettes:
        text = cassette.read_text(encoding="utf-8")
        assert scrubber.text(text) == text, f"{cassette.name}: the scrubber finds a secret in it"
        lowered = text.lower()
        assert "authorization" not in lowered and "api-key" not in lowered and "bearer " not in lowered, cassette


def test_each_run_of_each_item_has_its_own_llm_cassette() -> None:
    from replaylab.qa.setup import llm_cassette_path

    for suite_file in SUITES:
        suite = load_suite(suite_file)
        for scenario in suite.scenarios:
            assert scenario.model_settings.local_model and scenario.record_mode is None
            for recording in suite.recordings:
                for run in ("baseline", "compacted"):
                    assert llm_cassette_path(recording, scenario, run).is_file(), (scenario.name, recording.name, run)


def test_the_suites_replay_offline_without_the_models_runtime_and_change_no_file(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(OFFLINE_SITE, encoding="utf-8")
    import subprocess
    import sys

    from builders.pytest_runs import pytest_env

    blocked = subprocess.run(
        [sys.executable, "-c", "import xllamacpp"],
        env=pytest_env(pythonpath=[site, ROOT]),
        capture_output=True,
        text=True,
    )
    assert blocked.returncode != 0 and "blocked in this test" in blocked.stderr  # the block holds in a child
    files = sorted(p for p in FOLDER.rglob("*") if p.is_file())
    before = _sha256(files)
    run = run_pytest(
        ROOT,
        "--replaylab",
        *map(str, SUITES),
        "--replaylab-report",
        str(tmp_path / "reports"),
        "-q",
        pythonpath=[site, ROOT],
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    report = json.loads((tmp_path / "reports" / "replaylab.json").read_text(encoding="utf-8"))
    items = report["items"]
    assert len(items) == len(SUITES) * len(RECORDINGS)
    assert {i["model"] for i in items} == {LOCAL_MODEL_SPEC}
    assert all(i["outcome"] == "passed" for i in items), [(i["id"], i["outcome"], i["reason"]) for i in items]
    assert not any(d["code"] == "CASSETTE_MISSING" for i in items for d in i["defects"])
    assert _sha256(files) == before


#: in the child: the local-model extra looks uninstalled (its runtime's metadata is missing)
NO_EXTRA_SITE = textwrap.dedent(
    """
    import importlib.metadata as metadata

    _version = metadata.version

    def _without_runtime(name):
        if name == "xllamacpp":
            raise metadata.PackageNotFoundError(name)
        return _version(name)

    metadata.version = _without_runtime
    """
)


def _site(tmp_path: Path, text: str) -> Path:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(text, encoding="utf-8")
    return site


def test_recording_the_suite_without_the_extra_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    run = run_pytest(
        ROOT,
        "--replaylab",
        str(SUITES[0]),
        "--replaylab-record-mode",
        "all",
        "--replaylab-report",
        str(tmp_path / "reports"),
        pythonpath=[_site(tmp_path, NO_EXTRA_SITE), ROOT],
    )
    assert run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"{SUITES[0]}: error[local-model-missing] field 'model_settings.local_model':" in run.stderr
    assert "xllamacpp is not installed" in run.stderr and "requirements-local-model.txt" in run.stderr
    assert not (tmp_path / "reports").exists()


def test_record_with_the_local_model_checks_its_options_first(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = FOLDER / "scripts" / "ticket-notes-local.yaml"
    base = [sys.executable, "-m", "replaylab.cli", "record", "--tools", "examples.helpdesk", "--script", str(script)]

    def record(*extra: str, site: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {"PYTHONPATH": os.pathsep.join([*([site] if site else []), str(ROOT)]), "PATH": os.environ["PATH"]}
        return subprocess.run(
            [*base, "--out", str(tmp_path / "out"), *extra], cwd=ROOT, env=env, capture_output=True, text=True
        )

    both = record("--local-model", "--api-base", "http://127.0.0.1:1/v1")
    assert both.returncode == 2 and "--local-model serves its own endpoint; leave out --api-base" in both.stderr
    scripted = record("--local-model", "--model", "scripted")
    assert scripted.returncode == 2 and "leave out --model scripted" in scripted.stderr
    missing = record("--local-model", site=str(_site(tmp_path, NO_EXTRA_SITE)))
    assert missing.returncode == 2 and "xllamacpp is not installed" in missing.stderr, missing.stderr
    assert not (tmp_path / "out").exists()


def test_the_live_tier_is_a_nightly_job_running_the_script_that_re_records(tmp_path: Path) -> None:
    """The live tier is too slow for every PR: the nightly workflow runs it, with the hash-checked
    model install, and the script it runs is valid bash whose commands exist as written."""
    import subprocess

    script = ROOT / "examples" / "local-model-live.sh"
    job = yaml.safe_load((ROOT / "examples" / "nightly.yml").read_text(encoding="utf-8"))["jobs"]["local-model-live"]
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert any("--require-hashes" in r and "requirements-local-model.txt" in r for r in runs)
    assert any(r.strip().startswith("examples/local-model-live.sh") for r in runs)
    assert os.access(script, os.X_OK)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text(encoding="utf-8")
    assert "replaylab record --local-model" in text and "--replaylab-record-mode once" in text
    assert "recordings/helpdesk-local/scripts/*.yaml" in text
    assert all(f"suites/{suite.name}" in text for suite in SUITES)  # both suites, re-recorded and replayed


OVERFLOW_SUITE = ROOT / "suites" / "local-model-overflow.yaml"


def _responses(cassette: Path) -> list[dict]:
    data = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    return [i["response"] for i in data["interactions"]]


def test_the_real_model_refused_a_request_too_long_for_its_window_and_the_cassette_keeps_it() -> None:
    """The refusal in the overflow suite's cassette is llama.cpp's own: a 400 with its error type,
    the prompt's tokens and the context it ran with — the suite's window, rounded as llama.cpp
    rounds it."""
    from replaylab.qa.setup import llm_cassette_path

    suite = load_suite(OVERFLOW_SUITE)
    (scenario,) = suite.scenarios
    assert scenario.context_window is not None and scenario.context_window.overflow == "model"
    (recording,) = suite.recordings
    refusals = [
        json.loads(r["body"]["string"])["error"]
        for r in _responses(llm_cassette_path(recording, scenario, "compacted"))
        if r["status"]["code"] == 400
    ]
    assert len(refusals) == 1
    (refusal,) = refusals
    assert refusal["type"] == "exceed_context_size_error"
    assert refusal["n_ctx"] == scenario.context_window.tokens < refusal["n_prompt_tokens"]
    baseline = _responses(llm_cassette_path(recording, scenario, "baseline"))
    assert all(r["status"]["code"] == 200 for r in baseline)  # the baseline has no window


def test_the_recovery_chain_runs_on_the_real_refusal_offline(tmp_path: Path) -> None:
    """Replayed offline, the refusal reaches the agent as the provider's text, the agent's rules
    take it for a context overflow and compact (trigger overflow) before a second attempt."""
    run = run_pytest(
        ROOT,
        "--replaylab",
        str(OVERFLOW_SUITE),
        "--replaylab-report",
        str(tmp_path / "reports"),
        "-q",
        pythonpath=[_site(tmp_path, OFFLINE_SITE), ROOT],
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    (item,) = json.loads((tmp_path / "reports" / "replaylab.json").read_text(encoding="utf-8"))["items"]
    (chain,) = item["compacted"]["recovery"]
    kinds = [step["kind"] for step in chain["steps"]]
    assert kinds[:2] == ["overflow", "overflow_compaction"], kinds
    refusal = chain["steps"][0]["detail"]
    assert refusal.startswith("400 request (") and "exceeds the available context size (2560 tokens)" in refusal
    assert chain["steps"][1]["trigger"] == "overflow"
    assert chain["attempts"] == 2 and chain["gave_up"] is None
    assert not any(d["code"] == "RECOVERY_CHAIN_WRONG" for d in item["defects"])
