"""A compactor under test through the seed contract: a Python callable and a node command, honest
ones that pass a safeguard-like helpdesk item, seeded mutants replaylab catches, every way a
compactor can fail as a finding (never a traceback), the pytest hook and the option's precedence.

The compactors are in tests/compactors/: `compactor.mjs` (node; `--mode` seeds a bug or a
failure) and `python_compactors.py`. Each item runs on a copy of a bundled recording, so a
compactor that writes to its recording cannot touch the bundled one.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import orjson
import pytest

from builders.pytest_runs import run_pytest
from replaylab.compactors.contract import ContractError, read_result
from replaylab.compactors.spec import CommandCompactor, PythonCompactor, parse_option
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from replaylab.transcript import TranscriptWriter
from replaylab.transcript.writer import NotOwnedError
from repo_paths import REPO_ROOT, TESTS

ROOT = REPO_ROOT
BUNDLED = ROOT / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
NODE_COMPACTOR = TESTS / "compactors" / "compactor.mjs"
WRITES = "issue_refund,update_address,create_ticket,send_email,escalate_ticket,cancel_order,ticket_note"
NODE = ["node", str(NODE_COMPACTOR), "--writes", WRITES, "--read-actions", "list,read"]
# the refund (call_t4s0c0) and its ticket note are in turn 5, the email in turn 6: compacting
# before turn 7 summarizes turns 1-4 and must keep all three verbatim
SUITE = """\
name: external
recordings: ../recordings/refund-cracked-headphones.jsonl
tools: examples.helpdesk
compaction: {{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}}
compact_at: turn:7
expect: {{defects: [], replaySafe: false}}
compactor: {compactor}
"""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


BUNDLED_SHA256 = _sha256(BUNDLED)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "recordings").mkdir()
    (tmp_path / "suites").mkdir()
    for name in (BUNDLED.name, BUNDLED.name.replace(".jsonl", ".cassette.yaml")):
        shutil.copy(BUNDLED.parent / name, tmp_path / "recordings" / name)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the tool pack the suites name
    return tmp_path


def _node(*extra: str) -> str:
    return orjson.dumps({"command": [*NODE, *extra]}).decode()


def _run(project: Path, compactor: str, **options):
    suite = project / "suites" / "external.yaml"
    suite.write_text(SUITE.format(compactor=compactor), encoding="utf-8")
    scenario = load_suite(suite).scenarios[0]
    recording = project / "recordings" / BUNDLED.name
    before = _sha256(recording)
    result = run_item(scenario, recording, RunOptions(**options))
    return result, scenario, before == _sha256(recording)


# ---------------------------------------------------------------- honest compactors pass


def test_an_honest_node_compactor_passes_a_safeguard_like_item(project: Path) -> None:
    result, scenario, untouched = _run(project, _node())
    assert result.outcome == "passed", result.reason
    assert result.defects == [] and untouched
    # the report names the compactor its findings are about
    assert result.compactor == scenario.compactor.name() and result.compactor.startswith("command:")
    from replaylab.report.story import failure_story

    assert f"   compactor: {result.compactor}" in failure_story(result).splitlines()[1]
    # node's own entry: its summary, its cut at the refund's turn (pi shows what follows it)
    assert result.compaction.success and result.compaction.summary_text.startswith("## Conversation so far")
    assert result.compaction.first_kept_entry_id == "98a92c4d"
    assert {"9aeedeeb", "d338427b", "21f27b81"} <= {item.entry_id for item in result.window_after}
    assert result.ledger_after.mutated_event_ids == ["call_t4s0c0", "call_t4s1c0", "call_t5s0c0"]
    # the token counts are replaylab's, measured on pi's windows (node counts JSON characters)
    compaction = result.compaction
    assert compaction.original_tokens == sum(w.tokens for w in result.window_before)
    assert compaction.compacted_tokens == sum(w.tokens for w in result.window_after)
    assert compaction.token_saved == compaction.original_tokens - compaction.compacted_tokens > 0
    from replaylab.oracles.pi import oracle_unavailable

    if oracle_unavailable() is None:  # the real pi rebuilds the same window from node's entry
        assert result.verified_windows == 1


@pytest.mark.parametrize("callable_name", ["delegating", "as_dict"])
def test_an_honest_python_compactor_passes_a_safeguard_like_item(project: Path, callable_name: str) -> None:
    result, _, untouched = _run(project, f"{{python: 'compactors.python_compactors:{callable_name}'}}")
    assert result.outcome == "passed", result.reason
    assert result.compactor == f"python:compactors.python_compactors:{callable_name}"
    assert result.defects == [] and untouched
    assert result.compaction.success and result.compaction.token_saved > 0


# ---------------------------------------------------------------- seeded mutants are caught


def test_a_node_mutant_that_drops_a_write_is_caught_with_mutation_dropped(project: Path) -> None:
    result, _, untouched = _run(project, _node("--mode", "drop-writes"))
    assert result.outcome == "failed" and untouched
    dropped = {d.where.tool_call_id for d in result.defects if d.code == Code.MUTATION_DROPPED}
    assert {"call_t4s0c0", "call_t4s1c0"} <= dropped


def test_a_mutant_whose_compacted_window_claims_the_dropped_write_is_named_so(project: Path) -> None:
    result, _, _ = _run(project, _node("--mode", "drop-writes-claiming-kept"))
    refund = next(
        d for d in result.defects if d.code == Code.MUTATION_DROPPED and d.where.tool_call_id == "call_t4s0c0"
    )
    assert "compactedWindow claims it kept" in refund.message
    assert set(refund.detail["claimedKept"]) == {"9aeedeeb", "d338427b"}


def test_a_node_mutant_that_lies_about_replay_safe_is_caught_with_replay_flag_wrong(project: Path) -> None:
    result, _, untouched = _run(project, _node("--mode", "lie-replay-safe"))
    assert result.outcome == "failed" and untouched
    flags = [d for d in result.defects if d.code == Code.REPLAY_FLAG_WRONG]
    assert flags and all(d.expected is False and d.actual is True for d in flags)
    # its compaction itself is honest: nothing dropped
    assert not [d for d in result.defects if d.code == Code.MUTATION_DROPPED]


def test_an_external_compactor_compacts_again_at_each_later_point(project: Path) -> None:
    """Each later compaction summarizes the replayed turns the pipeline appended after node's
    previous entry: the writer takes node's appends as the file's own every time."""
    suite = project / "suites" / "external.yaml"
    suite.write_text(
        SUITE.format(compactor=_node("--mode", "drop-writes")).replace("turn:7", "every:3"), encoding="utf-8"
    )
    result = run_item(load_suite(suite).scenarios[0], project / "recordings" / BUNDLED.name, RunOptions())
    assert result.outcome == "failed" and result.compaction.compactions == 3, result.reason
    assert not [d for d in result.defects if d.severity == "error"]
    assert Code.MUTATION_DROPPED in {d.code for d in result.defects}
    from replaylab.oracles.pi import oracle_unavailable

    if oracle_unavailable() is None:
        assert result.verified_windows == 3


def test_an_external_compactor_is_told_why_it_compacts(project: Path) -> None:
    """The contract's `trigger`: `manual` at the scenario's fixed point, `overflow` when the
    recovery chain compacts after the agent's model refused a request over its context window
    (node writes down each trigger it got)."""
    triggers = project / "triggers.txt"
    suite = project / "suites" / "external.yaml"
    text = SUITE.format(compactor=_node("--triggers", str(triggers))).replace("turn:7", "turn:3")
    text += "agent: openclaw@2026.9.6\ncontext_window: {tokens: 2400}\n"
    suite.write_text(text.replace("expect: {defects: [], replaySafe: false}", "expect: {defects: []}"), "utf-8")
    result = run_item(load_suite(suite).scenarios[0], project / "recordings" / BUNDLED.name, RunOptions())
    assert result.outcome == "passed", result.reason
    compactions = [s for c in result.compacted.recovery for s in c.steps if s.kind == "overflow_compaction"]
    assert [s.trigger for s in compactions] == ["overflow"]
    assert triggers.read_text(encoding="utf-8").splitlines() == ["manual", "overflow"]


# ---------------------------------------------------------------- failures are findings


FAILURES = [
    # (compactor, kind, what the message says, the stderr tail it carries)
    (_node("--mode", "crash"), "crashed", "exited with status 3", "ENOENT model.bin"),
    (
        orjson.dumps({"command": [*NODE, "--mode", "hang"], "timeout_s": 1}).decode(),
        "timed_out",
        "was still running after 1 s",
        "waiting for the summary model",
    ),
    (_node("--mode", "garbage"), "invalid_json", "printed no JSON on stdout", "printing the result"),
    (_node("--mode", "bad-field"), "contract", "field 'replaySafe'", "mode bad-field"),
    (_node("--mode", "rewrite"), "rewrote_working_copy", "rewrote the working copy", "mode rewrite"),
    (
        _node("--mode", "write-recording", "--recording", "../recordings/" + BUNDLED.name),
        "wrote_recording",
        f"wrote to {BUNDLED.name}",
        "mode write-recording",
    ),
    ("{command: [no-such-compactor-xyz, --fast]}", "not_found", "cannot be started", None),
    ("{python: 'no_such_module_xyz:compact'}", "not_found", "no module named 'no_such_module_xyz'", None),
    ("{python: 'compactors.python_compactors:nope'}", "not_found", "has no attribute 'nope'", None),
    ("{python: 'compactors.python_compactors:NOT_CALLABLE'}", "not_found", "not a callable", None),
    (
        "{python: 'compactors.python_compactors:crashing'}",
        "crashed",
        "raised RuntimeError: summary service unavailable",
        "the summary service said 503",
    ),
    (
        "{python: 'compactors.python_compactors:appending_nothing'}",
        "contract",
        "compactionEventId names 'nowhere1', which is no entry of the working copy",
        "claiming a compaction it did not write",
    ),
    (
        "{python: 'compactors.python_compactors:refusing'}",
        "reported_failure",
        "reported success: false (contextTokens below 4096 is not supported)",
        "budget below my minimum",
    ),
    (
        "{python: 'compactors.python_compactors:wrong_fields'}",
        "contract",
        "field 'mutatedEventIds'",
        "answering a list as a string",
    ),
]


@pytest.mark.parametrize(
    ("compactor", "kind", "what", "stderr"), FAILURES, ids=[f"{i}-{f[1]}" for i, f in enumerate(FAILURES)]
)
def test_each_failure_of_a_compactor_is_an_infrastructure_error_naming_it(
    project: Path, compactor: str, kind: str, what: str, stderr: str | None
) -> None:
    result, scenario, untouched = _run(project, compactor)
    assert result.outcome == "error", result.reason
    failed = [d for d in result.defects if d.code == Code.COMPACTION_FAILED]
    assert len(failed) == 1
    finding = failed[0]
    name = scenario.compactor.name()
    assert finding.detail["kind"] == kind and finding.detail["compactor"] == name
    assert name in finding.message and what in finding.message, finding.message
    assert name in result.reason  # the item's reason, what pytest prints
    if stderr is not None:
        assert stderr in finding.message and stderr in finding.detail["stderrTail"]
    if kind == "wrote_recording":  # the item's copy of the recording was written: that is the finding
        assert not untouched and Code.TRANSCRIPT_REWRITTEN in {d.code for d in result.defects}
    else:
        assert untouched
    assert _sha256(BUNDLED) == BUNDLED_SHA256


def test_a_crashed_compactor_sees_no_secret_of_the_run_and_its_stderr_is_scrubbed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLAYLAB_TEST_API_KEY", "not-for-the-compactor")
    result, _, _ = _run(project, _node("--mode", "crash"))
    finding = next(d for d in result.defects if d.code == Code.COMPACTION_FAILED)
    environment = next(line for line in finding.detail["stderrTail"].splitlines() if "environment" in line)
    assert "PATH" in environment.split() and "HOME" in environment.split()
    assert "REPLAYLAB_TEST_API_KEY" not in environment
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in finding.message
    assert "[REDACTED]" in finding.detail["stderrTail"]


# ---------------------------------------------------------------- the writer sees the new bytes


def test_the_working_copy_writer_adopts_an_append_by_another_program_and_refuses_a_rewrite(tmp_path: Path) -> None:
    writer = TranscriptWriter.working_copy(BUNDLED, tmp_path / "copy.jsonl")
    leaf = writer.transcript().leaf_id
    entry = {"type": "custom", "id": "ext00001", "parentId": leaf, "timestamp": "2026-01-01T00:00:00Z"}
    with open(writer.path, "ab") as handle:
        handle.write(orjson.dumps(entry) + b"\n")
    writer.adopt_appended()
    assert writer.transcript().leaf_id == "ext00001"
    assert writer.sealed_state() is not None  # sealed again: later reads need no parse
    writer.append({**entry, "id": "own00001", "parentId": "ext00001"})
    assert writer.transcript().leaf_id == "own00001"
    data = writer.path.read_bytes()
    writer.path.write_bytes(data.replace(b'"type":"session"', b'"type": "session"', 1))
    with pytest.raises(NotOwnedError):
        writer.adopt_appended()


# ---------------------------------------------------------------- specs and usage errors


def test_the_option_form_is_lexed_as_the_suite_form_reads() -> None:
    assert parse_option("python:pkg.mod:compact") == PythonCompactor(python="pkg.mod:compact")
    assert parse_option("command:node 'my compactor.mjs' --fast") == CommandCompactor(
        command=["node", "my compactor.mjs", "--fast"]
    )
    for bad in ("pkg.mod:compact", "python:pkg mod", "command:", "command:'unclosed"):
        with pytest.raises(ValueError):
            parse_option(bad)


def test_only_the_contract_fields_of_an_answer_count_and_strictly() -> None:
    answer = {
        "success": True,
        "replay_safe": False,  # a Python compactor's snake_case is the same field
        "compactionEventId": "c1",
        "findings": [{"code": "MUTATION_DROPPED"}],  # replaylab's extras are not the compactor's to give
        "failure": "nothing_to_gain",
        "details": {"engine": "ts"},
    }
    result, ignored = read_result(answer)
    assert (result.success, result.replay_safe, result.compaction_event_id) == (True, False, "c1")
    assert result.findings == [] and result.failure is None
    assert ignored == ["findings", "failure", "details"]
    with pytest.raises(ContractError) as wrong:
        read_result({"success": True, "replaySafe": "yes"})
    assert wrong.value.field == "replaySafe"
    with pytest.raises(ContractError) as missing:
        read_result({"replaySafe": False})
    assert missing.value.field == "success"


@pytest.mark.parametrize(
    ("setting", "field", "message"),
    [
        ("compactor: {python: 'not a path'}", "compactor.python", "expected package.module:callable"),
        ("compactor: {command: []}", "compactor.command", "at least 1 item"),
        ("compactor: {command: [node], timeout_s: 0}", "compactor.timeout_s", "greater than 0"),
        ("compactor: {shell: ls}", "compactor", "expected {python: package.module:callable} or {command:"),
        ("compactor: 'perl:x'", "compactor", "expected python:package.module:callable or command:ARGV"),
        (
            "scenarios:\n  - name: x\n    compactor: {command: [node], retries: 2}",
            "scenarios.0.compactor.retries",
            "unknown key",
        ),
    ],
)
def test_bad_compactor_settings_are_usage_errors_naming_file_line_and_field(
    project: Path, setting: str, field: str, message: str
) -> None:
    suite = project / "suites" / "bad.yaml"
    suite.write_text(f"name: bad\nrecordings: ../recordings/*.jsonl\ntools: examples.helpdesk\n{setting}\n")
    line = 4 + setting.count("\n")
    run = run_pytest(project, "--replaylab", str(suite), "-q")
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{suite}:{line}: error[suite-invalid] field {field!r}:" in run.stderr, run.stderr
    assert message in run.stderr


def test_a_bad_compactor_option_is_a_usage_error_and_help_names_the_option(project: Path) -> None:
    run = run_pytest(project, "--replaylab", str(project), "--replaylab-compactor", "node x.mjs")
    assert run.returncode == 4
    assert "--replaylab-compactor 'node x.mjs': expected python:package.module:callable or command:ARGV" in run.stderr
    shown = run_pytest(project, "--help")
    assert "--replaylab-compactor=SPEC" in shown.stdout and "pytest_replaylab_compactor" in shown.stdout


# ---------------------------------------------------------------- the hook, through the real plugin

CONFTEST = """\
import tempfile
from pathlib import Path

from replaylab.compaction import compact
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.safety.classify import ToolClassifier

HELPDESK = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))


def delegating(params, working_copy):
    scratch = Path(tempfile.mkdtemp(dir=working_copy.parent)) / working_copy.name
    result = compact(params.model_copy(update={{"working_copy": str(scratch)}}), classifier=HELPDESK)
    with open(working_copy, "ab") as handle:  # its entry and what it restates after it
        handle.write(scratch.read_bytes()[working_copy.stat().st_size :])
    return result


def pytest_replaylab_compactor(config, scenario):
    return {hook}
"""


def _hook_project(project: Path, hook: str) -> Path:
    suite = project / "suites" / "external.yaml"
    # the suite names a compactor that crashes: whatever the hook gives wins over it
    suite.write_text(
        SUITE.format(compactor=_node("--mode", "crash")) + "scenarios:\n  - name: first\n  - name: second\n",
        encoding="utf-8",
    )
    (project / "conftest.py").write_text(CONFTEST.format(hook=hook), encoding="utf-8")
    return suite


def test_a_conftest_hook_provides_the_compactor_over_the_suite_key(project: Path) -> None:
    suite = _hook_project(project, "delegating if scenario.name == 'first' else None")
    run = run_pytest(project, "--replaylab", str(suite), "-q", "-rA", "--rootdir", str(project))
    # first: the hook's honest compactor passes; second: the hook gives none, the suite's crashes
    # as an error, and the run goes on past it
    assert "1 passed, 1 error" in run.stdout, run.stdout + run.stderr
    assert re.search(r"^PASSED \S+::first$", run.stdout, re.M), run.stdout
    assert re.search(r"^ERROR \S+::second", run.stdout, re.M), run.stdout
    assert "exited with status 3" in run.stdout and "ENOENT model.bin" in run.stdout


def test_the_option_wins_over_the_hook_and_a_bad_hook_value_is_a_usage_error(project: Path) -> None:
    suite = _hook_project(project, "delegating")
    run = run_pytest(
        project,
        "--replaylab",
        str(suite),
        "-q",
        "--rootdir",
        str(project),
        "--replaylab-compactor",
        "command:no-such-compactor-xyz",
    )
    assert "2 errors" in run.stdout, run.stdout + run.stderr
    assert "compactor command:no-such-compactor-xyz cannot be started" in run.stdout
    (project / "conftest.py").write_text(CONFTEST.format(hook="42"), encoding="utf-8")
    bad = run_pytest(project, "--replaylab", str(suite), "-q", "--rootdir", str(project))
    assert bad.returncode == 4, bad.stdout + bad.stderr
    assert "pytest_replaylab_compactor for" in bad.stderr and "returned int" in bad.stderr
