"""OpenClaw 2026.9.6's own compaction as the compactor under test (`compactor: openclaw`): the pinned
OpenClaw compacts a working copy through the seed contract, in its safeguard mode (its safeguard
handler, quality guard on) and in its default mode, its summaries answered on 127.0.0.1 by
replaylab's extractive summarizer; its quality-guard cancel is a finding of its own; an OpenClaw
that is not the build the driver binds to is refused with both versions named. The bundled negative
control `suites/openclaw-compaction.yaml` runs with every bundled suite (tests/integration/
test_plugin.py: each item finds the codes its comments document; tests/golden: its results).

Everything here runs the real OpenClaw under node (the `openclaw_compactions` fixture skips with the
reason when its npm install is missing, fails under CI=true), real HTTP on loopback, real files.
Compactions are shared by the module: loading OpenClaw takes seconds, so one worker serves them.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import TypeAdapter

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.compactors.contract import params_json
from replaylab.compactors.external import ExternalCompactor, SourceStates
from replaylab.compactors.openclaw import COMPACT_ENTRY, OpenClawWorker, shared_worker
from replaylab.compactors.process import run_compactor
from replaylab.compactors.spec import CompactorSetting, OpenClawCompactor, from_hook, parse_option
from replaylab.compactors.summary_endpoint import SUMMARY_BASE_URL_VARIABLE, SummaryEndpoint
from replaylab.defects import Code
from replaylab.oracles.openclaw import NODE_DIR, node_executable, oracle_unavailable
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import Expectations, load_suite
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.upstream.openclaw_2026_9_6 import QUALITY_CHECK_CANCEL_REASON
from repo_paths import REPO_ROOT

SUITE = REPO_ROOT / "suites" / "openclaw-compaction.yaml"
HELPDESK = REPO_ROOT / "recordings" / "helpdesk"
RECORDING = HELPDESK / "refund-cracked-headphones.jsonl"
#: the bundled suite's budget
BUDGET = {"context_tokens": 3200, "reserve_tokens_floor": 800, "keep_recent_tokens": 500}
#: what a summary model that says nothing answers (OpenClaw's quality guard must reject it)
BAD_SUMMARY = "Summary: the user and the assistant talked."


def _params(copy: Path, mode: str = "safeguard", **extra: object) -> CompactParams:
    return CompactParams(session_file=str(copy), compaction_mode=mode, **BUDGET, **extra)


def _copy(folder: Path, recording: Path = RECORDING) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / recording.name
    shutil.copy(recording, copy)
    return copy


@dataclass
class Run:
    copy: Path
    before: bytes
    result: object
    requests: list


@pytest.fixture(scope="module")
def openclaw_compactions(openclaw: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """refund-cracked-headphones compacted by the process's worker: in safeguard and default mode,
    and in safeguard mode with a summary model whose every answer is one line."""
    root = tmp_path_factory.mktemp("openclaw-compactor")
    runs = {}
    for name, mode, answer in (
        ("safeguard", "safeguard", None),
        ("default", "auto", None),
        ("bad-summaries", "safeguard", lambda body: BAD_SUMMARY),
    ):
        copy = _copy(root / name)
        compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), root)
        compactor.summary_answer = answer
        before = copy.read_bytes()
        runs[name] = Run(copy, before, compactor(_params(copy, mode)), compactor.summary_requests)
    return runs


# ---------------------------------------------------------------- the spec


def test_openclaw_is_a_bundled_compactor_the_suite_key_the_option_and_a_hook_name_alike() -> None:
    assert parse_option("openclaw") == OpenClawCompactor() and OpenClawCompactor().name() == "openclaw"
    setting = TypeAdapter(CompactorSetting)
    assert setting.validate_python("openclaw") == setting.validate_python({"openclaw": True}) == OpenClawCompactor()
    assert setting.validate_python({"openclaw": True, "timeout_s": 5}).timeout_s == 5
    assert from_hook("openclaw") == from_hook({"openclaw": True}) == OpenClawCompactor()
    with pytest.raises(ValueError):
        setting.validate_python({"openclaw": False})
    with pytest.raises(ValueError, match="or pi, or openclaw"):
        parse_option("openclaw2")
    assert load_suite(SUITE).scenarios[0].compactor == OpenClawCompactor()


# ---------------------------------------------------------------- compactions, through the contract


@pytest.mark.parametrize(("name", "from_hook_flag"), [("safeguard", True), ("default", False)])
def test_openclaw_appends_its_entry_and_reports_the_window_it_rebuilds(
    openclaw_compactions: dict[str, Run], name: str, from_hook_flag: bool
) -> None:
    run = openclaw_compactions[name]
    result = run.result
    assert result.success, result.error
    assert run.copy.read_bytes().startswith(run.before)  # an append, never a rewrite
    entry = orjson.loads(run.copy.read_bytes().splitlines()[-1])
    assert entry["type"] == "compaction" and entry["id"] == result.compaction_event_id
    assert entry["parentId"] == load_transcript(RECORDING).leaf_id
    assert entry["fromHook"] is from_hook_flag and entry["summary"] == result.summary_text
    assert entry["tokensAfter"] == result.compacted_token_count  # OpenClaw's estimate = replaylab's here
    assert set(entry["__openclaw"]) == {"itemId"}
    # the window OpenClaw rebuilt is the one replaylab builds from the file
    path = load_transcript(run.copy).path_to(result.compaction_event_id)
    assert [w["entryId"] for w in result.compacted_window] == [w.entry_id for w in build_window(path)]
    assert result.first_kept_entry_id == entry["firstKeptEntryId"]
    # OpenClaw makes no replay-safety claim: the contract's defaults stand for it
    assert (result.replay_safe, result.mutated_event_ids) == (True, [])
    assert any(note.startswith(f"openclaw: {name}: cut at {entry['firstKeptEntryId']}") for note in result.notes)


def test_both_modes_cut_alike_and_every_summary_came_from_the_loopback_endpoint(
    openclaw_compactions: dict[str, Run],
) -> None:
    safeguard, default = openclaw_compactions["safeguard"], openclaw_compactions["default"]
    assert safeguard.result.first_kept_entry_id == default.result.first_kept_entry_id
    # default mode: the history and the split turn's prefix, one request each; safeguard asks per chunk
    assert len(default.requests) == 2 and len(safeguard.requests) > len(default.requests)
    assert all(r["model"] == "replaylab-summary" and r["stream"] is True for r in safeguard.requests + default.requests)
    # safeguard's summary carries OpenClaw's required sections and the identifiers it audits
    for heading in ("## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks"):
        assert heading in safeguard.result.summary_text
    assert "## Exact identifiers" in safeguard.result.summary_text and "ORD-77123" in safeguard.result.summary_text
    assert safeguard.result.compacted_token_count > default.result.compacted_token_count


def test_a_warm_worker_answers_as_a_fresh_openclaw_process(
    openclaw_compactions: dict[str, Run], tmp_path: Path
) -> None:
    """The same entry id, summary and window from `node openclaw_compact.mjs` run once, cold."""
    copy = _copy(tmp_path)
    with SummaryEndpoint() as endpoint:
        finished = run_compactor(
            [str(node_executable()), str(COMPACT_ENTRY)],
            orjson.dumps(params_json(_params(copy))),
            cwd=tmp_path,
            home=tmp_path,
            timeout_s=300,
            environment={SUMMARY_BASE_URL_VARIABLE: endpoint.url},
        )
    assert finished.returncode == 0, finished.stderr[-2000:]
    fresh = json.loads(finished.stdout)
    warm = openclaw_compactions["safeguard"].result
    assert fresh["compactionEventId"] == warm.compaction_event_id
    assert fresh["summaryText"] == warm.summary_text and fresh["compactedWindow"] == warm.compacted_window
    assert fresh["openclaw"] == {"openclaw": "2026.9.6", "@openclaw/ai": "2026.9.6", "node": "v24.22.3"}


def test_a_worker_started_ahead_serves_the_first_compaction_from_that_process(
    openclaw_compactions: dict[str, Run], tmp_path: Path
) -> None:
    """`start()` runs the worker without waiting for it to load OpenClaw (seconds): its header is
    left for the first compaction, which that same process answers."""
    worker = OpenClawWorker()
    try:
        worker.start()
        started = worker._child
        assert started is not None and worker.header is None
        worker.start()  # running already: the same process
        assert worker._child is started
        with SummaryEndpoint() as endpoint:
            got = worker.compact(params_json(_params(_copy(tmp_path))), endpoint.url, 300)
        assert got.failure is None and got.result["success"] is True, got.what
        assert worker._child is started and worker.header is not None and worker.header["ready"] is True
    finally:
        worker.close()


def test_an_item_of_the_openclaw_compactor_starts_its_worker_before_its_runs(
    openclaw_compactions: dict[str, Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker runs by the time the item's baseline starts: OpenClaw loads while it runs."""
    from replaylab.qa import pipeline

    shared_worker().close()
    seen: list[bool] = []
    baseline_run = pipeline.baseline_run

    def observed(*args, **kwargs):
        seen.append(shared_worker()._running())
        return baseline_run(*args, **kwargs)

    monkeypatch.setattr(pipeline, "baseline_run", observed)
    result = run_item(load_suite(SUITE).scenarios[0], RECORDING, RunOptions(verify_with_pi="off"))
    assert result.compactor == "openclaw" and result.compaction is not None and result.compaction.success
    assert seen == [True]


def test_the_worker_refuses_a_summary_model_off_loopback_and_writes_nothing(
    openclaw_compactions: dict[str, Run], tmp_path: Path
) -> None:
    copy = _copy(tmp_path)
    before = copy.read_bytes()
    got = shared_worker().compact(params_json(_params(copy)), "http://10.255.255.1:8080/v1", 60)
    assert got.failure is None and got.result["success"] is False
    assert "loopback only: refused a connection to 10.255.255.1" in got.result["error"]
    assert copy.read_bytes() == before


def test_a_compaction_openclaw_raises_on_is_a_crash_and_the_worker_serves_the_next(
    openclaw_compactions: dict[str, Run], tmp_path: Path
) -> None:
    """A leaf the file does not hold makes OpenClaw's `SessionManager.branch` throw. That compaction
    is the `crashed` failure a process of its own dying would give (as the pi compactor's), with
    OpenClaw's stack; the copy is untouched and the same worker compacts the next one."""
    compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)
    copy = _copy(tmp_path / "crash")
    before = copy.read_bytes()
    result = compactor(_params(copy, leaf_id="no-such-entry"))
    (finding,) = result.findings
    assert finding.code == Code.COMPACTION_FAILED and finding.detail["kind"] == "crashed"
    assert "compactor openclaw raised Error: Entry no-such-entry not found" in finding.message
    assert "SessionManager.branch" in finding.detail["stderrTail"]
    assert copy.read_bytes() == before
    assert compactor(_params(_copy(tmp_path / "next"))).success


# ---------------------------------------------------------------- the quality guard's cancel


def test_a_summary_the_quality_guard_rejects_twice_is_a_cancel_finding_and_the_file_is_untouched(
    openclaw_compactions: dict[str, Run],
) -> None:
    run = openclaw_compactions["bad-summaries"]
    result = run.result
    assert not result.success and result.failure == "cancelled"
    assert run.copy.read_bytes() == run.before
    (finding,) = result.findings
    assert finding.code == Code.COMPACTION_CANCELLED and finding.severity == "regression"
    assert finding.detail["reason"] == QUALITY_CHECK_CANCEL_REASON
    assert finding.message == f"compactor openclaw cancelled the compaction: {QUALITY_CHECK_CANCEL_REASON}"
    # one corrective retry: every summary request asked again
    good = len(openclaw_compactions["safeguard"].requests)
    assert finding.detail["summaryRequests"] == len(run.requests) == 2 * good


def test_a_cancelled_first_compaction_fails_the_item_unless_the_suite_expects_it(
    openclaw_compactions: dict[str, Run], tmp_path: Path
) -> None:
    cancelling = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)
    cancelling.summary_answer = lambda body: BAD_SUMMARY
    scenario = load_suite(SUITE).scenarios[0].model_copy(update={"per_recording": {}})
    result = run_item(scenario, RECORDING, RunOptions(compactor=cancelling, verify_with_pi="off"))
    assert result.outcome == "failed" and [d.code for d in result.defects] == [Code.COMPACTION_CANCELLED]
    assert (
        result.reason
        == f"COMPACTION_CANCELLED: compactor openclaw cancelled the compaction: {QUALITY_CHECK_CANCEL_REASON}"
    )
    expected = scenario.model_copy(update={"expect": Expectations(defects=[Code.COMPACTION_CANCELLED])})
    assert run_item(expected, RECORDING, RunOptions(compactor=cancelling, verify_with_pi="off")).outcome == "passed"


# ---------------------------------------------------------------- which OpenClaw


def _fake_install(root: Path, version: str) -> Path:
    """The driver beside an `openclaw` and `@openclaw/ai` of `version` that hold no `dist/`."""
    folder = root / "node" / f"openclaw-{version}"
    for package in ("openclaw", "@openclaw/ai"):
        installed = folder / "node_modules" / package
        (installed / "dist").mkdir(parents=True)
        (installed / "package.json").write_text(json.dumps({"name": package, "version": version}))
    for shared in ("loopback_only.mjs", "bind_chunks.mjs", "compact_worker.mjs"):
        shutil.copy(NODE_DIR.parent / shared, root / "node")
    for name in ("openclaw_compact.mjs", "bind_openclaw.mjs"):
        shutil.copy(NODE_DIR / name, folder)
    return folder / "openclaw_compact.mjs"


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("2026.9.7", "found openclaw 2026.9.7, @openclaw/ai 2026.9.7."),
        ("2026.9.6", "found openclaw 2026.9.6, @openclaw/ai 2026.9.6; the 2026.9.6 build's functions are missing"),
    ],
)
def test_an_openclaw_that_is_not_the_build_the_driver_binds_to_is_refused_naming_both_versions(
    openclaw_compactions: dict[str, Run], tmp_path: Path, version: str, says: str
) -> None:
    compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)
    compactor.openclaw_worker = OpenClawWorker(entry=_fake_install(tmp_path, version))
    copy = _copy(tmp_path / "copy")
    before = copy.read_bytes()
    try:
        result = compactor(_params(copy))
    finally:
        compactor.openclaw_worker.close()
    (finding,) = result.findings
    assert finding.code == Code.COMPACTION_FAILED and finding.detail["kind"] == "refused"
    assert "replaylab binds to openclaw 2026.9.6 and @openclaw/ai 2026.9.6; " + says in finding.message
    assert copy.read_bytes() == before and compactor.summary_requests == []


@pytest.mark.parametrize("ci", ["", "true"])
def test_without_openclaw_installed_its_items_are_skipped_saying_what_to_install_but_under_ci_they_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("REPLAYLAB_OPENCLAW_NODE", str(tmp_path / "no-node"))
    monkeypatch.setenv("CI", ci)
    scenario = load_suite(SUITE).scenarios[0]
    result = run_item(scenario, RECORDING, RunOptions(verify_with_pi="off"))
    if ci:
        assert result.outcome == "error"
        assert any(d.code == Code.COMPACTION_FAILED and d.detail.get("kind") == "not_found" for d in result.defects)
    else:
        assert result.outcome == "skipped" and result.defects == []
        # what to do: the node it names is none (or, with nothing installed, the npm ci command)
        assert f"the bundled openclaw compactor cannot run here: {oracle_unavailable()}" in result.reason
        assert "REPLAYLAB_OPENCLAW_NODE=" in result.reason or "npm ci --prefix" in result.reason
    assert result.compactor == "openclaw"


# ---------------------------------------------------------------- the file lists


@pytest.mark.parametrize("mode", ["safeguard", "auto"])
@pytest.mark.parametrize("previous", ["none", "whole", "partial"])
def test_the_file_lists_and_their_sections_are_openclaws_own(
    openclaw: None, tmp_path: Path, mode: str, previous: str
) -> None:
    """A span with an `apply_patch` call and its result (`details.summary`), calls OpenClaw reads
    and pi does not, and a previous compaction's lists (whole, or one not all strings): OpenClaw's
    own compaction, in its safeguard and its default mode, and replaylab's under
    openclaw@2026.9.6 cut alike and write the same `readFiles` / `modifiedFiles`, each summary
    ending in the same `formatFileOperations` sections."""
    from builders.openclaw_file_ops_cases import patch_session
    from replaylab.agents import rules_of
    from replaylab.compaction import compact
    from replaylab.compaction.summary.file_ops import format_file_operations
    from replaylab.transcript.memo import ItemMemo
    from replaylab.upstream.openclaw_2026_9_6_file_ops import FILE_OPS

    details = {
        "none": None,
        "whole": {"details": {"readFiles": ["docs/old.md"], "modifiedFiles": ["CHANGELOG.md"]}, "fromHook": False},
        "partial": {"details": {"readFiles": ["docs/old.md"], "modifiedFiles": [None]}},
    }[previous]
    recording = patch_session(details).write(tmp_path / "patch.jsonl")
    theirs, ours = _copy(tmp_path / "openclaw", recording), tmp_path / "ours.jsonl"
    own = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)(_params(theirs, mode))
    assert own.success, own.error
    mine = compact(_params(recording, mode, working_copy=str(ours)), memo=ItemMemo(rules=rules_of("openclaw@2026.9.6")))
    assert mine.success, mine.error
    # replaylab's safeguard may restate entries after its compaction entry
    entries = [
        next(e for e in map(orjson.loads, reversed(path.read_bytes().splitlines())) if e["type"] == "compaction")
        for path in (theirs, ours)
    ]
    assert entries[0]["firstKeptEntryId"] == entries[1]["details"]["replaylab"]["cutPoint"]["piFirstKeptEntryId"]
    found = [(e["details"]["readFiles"], e["details"]["modifiedFiles"]) for e in entries]
    assert found[0] == found[1]
    old = (["docs/old.md"], ["CHANGELOG.md"]) if previous == "whole" else ([], [])
    assert found[0] == (
        sorted(["docs/camel.md", "docs/mcp.md", *old[0]]),
        sorted(["README.md", "src/app.py", "src/new.py", *old[1]]),
    )
    sections = format_file_operations(*found[0], rules=FILE_OPS)
    assert all(e["summary"].endswith(sections) for e in entries), [e["summary"][-400:] for e in entries]


def _ours(recording: Path, mode: str, **extra: Any) -> Any:
    """replaylab's compaction of `recording` under openclaw@2026.9.6."""
    from replaylab.agents import rules_of
    from replaylab.compaction import compact
    from replaylab.transcript.memo import ItemMemo

    return compact(_params(recording, mode, **extra), memo=ItemMemo(rules=rules_of("openclaw@2026.9.6")))


def _own_and_ours(tmp_path: Path, recording: Path, mode: str, trigger: str = "manual") -> list[dict]:
    """The compaction entries OpenClaw's own compaction (its agent session's, which its compactor
    worker runs: it reads no trigger) and replaylab's under openclaw@2026.9.6 append to copies of
    `recording`."""
    theirs, ours = _copy(tmp_path / f"openclaw-{mode}", recording), tmp_path / f"ours-{mode}.jsonl"
    own = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)(_params(theirs, mode))
    assert own.success, own.error
    mine = _ours(recording, mode, working_copy=str(ours), trigger=trigger)
    assert mine.success, mine.error
    return [
        next(e for e in map(orjson.loads, reversed(path.read_bytes().splitlines())) if e["type"] == "compaction")
        for path in (theirs, ours)
    ]


@pytest.mark.parametrize("mode", ["safeguard", "auto"])
def test_with_no_real_conversation_the_safeguard_writes_no_file_lists_as_openclaw(
    openclaw: None, tmp_path: Path, mode: str
) -> None:
    """Heartbeats and silent replies around reads, and a runtime-context message, which OpenClaw's
    compaction run counts and its safeguard strips: OpenClaw's safeguard writes its fixed fallback
    with no `details`, and so does replaylab's (its own account aside); its default mode's threshold
    compaction (agent-core's plain `compact`, outside that run) summarizes and lists the reads in both."""
    from builders.transcripts import Session

    s = Session()
    s.user("HEARTBEAT_OK")
    if mode == "safeguard":
        s.raw(
            {"type": "custom_message", "customType": "openclaw.runtime-context", "content": "Facts.", "display": True}
        )
    for n in range(6):
        s.tool_turn("read", {"path": f"src/f{n}.py"}, "x" * 1_500, text="NO_REPLY")
    s.assistant("NO_REPLY")
    s.user("HEARTBEAT_OK")
    s.assistant("NO_REPLY")
    theirs, ours = _own_and_ours(tmp_path, s.write(tmp_path / "quiet.jsonl"), mode, "threshold")
    lists = {k: v for k, v in ours["details"].items() if k != "replaylab"}
    fallback = ours["details"]["replaylab"]["summarizer"] == "fallback:no-real-conversation"
    if mode == "safeguard":
        assert "details" not in theirs and lists == {}
        assert fallback and theirs["summary"] == ours["summary"]
    else:
        assert theirs["details"] == lists and lists["readFiles"]
        # agent-core's summary of the split turn's prefix, never the safeguard's fixed text
        assert not fallback and "Turn Context (split turn)" in theirs["summary"]


def _session_cases() -> list[Any]:
    from builders.real_conversation_cases import SESSIONS

    return [pytest.param(*c, id=c[0]) for c in SESSIONS]


@pytest.mark.parametrize(("name", "extra", "ask_last", "summarized"), _session_cases())
def test_the_safeguard_finds_real_conversation_where_openclaws_code_does(
    openclaw: None, tmp_path: Path, name: str, extra: dict[str, Any] | None, ask_last: bool, summarized: bool
) -> None:
    """A span of custom, bash, summary or image messages, punctuated tokens, a real kept tail or a
    previous summary around a quiet span: OpenClaw's safeguard summarizes exactly where its
    `containsRealConversation` finds a real message (its entry then holds `details`), and so does
    replaylab's (its file lists then written). Where the whole context holds nothing real (its
    runtime-context messages included), OpenClaw's compaction run never reaches the safeguard that
    its compactor worker calls: its own `containsRealConversationMessages` of the session's context
    says so, and replaylab does not compact."""
    from builders.real_conversation_cases import RUN_SKIPS, quiet_session

    recording = quiet_session(tmp_path, extra, ask_last=ask_last)
    if name in RUN_SKIPS:
        skipped = _ours(recording, "safeguard", working_copy=str(tmp_path / "ours.jsonl"))
        assert (skipped.success, skipped.failure) == (False, "agent_refuses"), name
        assert _run_finds_real_conversation(recording) is False
        return
    if name == "runtime-context":  # real to the run, stripped by the safeguard: its fallback
        assert _run_finds_real_conversation(recording) is True
    theirs, ours = _own_and_ours(tmp_path, recording, "safeguard")
    assert ("details" in theirs) is summarized, name
    assert ("readFiles" in ours["details"]) is summarized, name


#: OpenClaw's compaction run's check (compact-lmmQAHsq.mjs `testing.containsRealConversationMessages`)
#: of a session's context as its `buildSessionContext` projects it
RUN_PROBE = """
import { readFileSync } from "node:fs";
const [folder, dist, file] = process.argv.slice(2);
const { bindOpenClaw } = await import(`${folder}/bind_openclaw.mjs`);
const oc = await bindOpenClaw(["parseSessionEntries", "SessionManager"]);
const { r: testing } = await import(`${dist}/compact-lmmQAHsq.mjs`);
const sm = oc.SessionManager.fromEntries(oc.parseSessionEntries(readFileSync(file, "utf8")));
console.log(JSON.stringify(testing.containsRealConversationMessages(sm.buildSessionContext().messages)));
"""


def _run_finds_real_conversation(recording: Path) -> bool:
    import subprocess

    from replaylab.oracles.openclaw import PACKAGE_DIR

    node = node_executable()
    assert node is not None
    probe = recording.parent / "run_probe.mjs"
    probe.write_text(RUN_PROBE, encoding="utf-8")
    done = subprocess.run(
        [node, str(probe), str(NODE_DIR), str(PACKAGE_DIR / "dist"), str(recording)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer: bool = json.loads(done.stdout.splitlines()[-1])
    return answer


@pytest.mark.parametrize("drop", ["isError", "toolCallId"])
def test_an_apply_patch_result_openclaws_schema_keeps_aside_names_no_files_in_either(
    openclaw: None, tmp_path: Path, drop: str
) -> None:
    """An `apply_patch` result without `isError` (which replaylab's model would read as false) or
    without `toolCallId` (which replaylab cannot read at all): OpenClaw's entry schema keeps it aside,
    so its `details.summary` names no file, in OpenClaw's lists as in replaylab's."""
    from builders.openclaw_file_ops_cases import patch_session

    session = patch_session()
    for line in session.lines:
        message = line.get("message") or {}
        if message.get("toolName") == "apply_patch":
            del message[drop]
    theirs, ours = _own_and_ours(tmp_path, session.write(tmp_path / "patch.jsonl"), "safeguard")
    found = [(e["details"]["readFiles"], e["details"]["modifiedFiles"]) for e in (theirs, ours)]
    assert found[0] == found[1] and "src/new.py" not in found[0][1]


def test_right_after_its_safeguard_compaction_openclaw_refuses_and_so_does_replaylab(
    openclaw: None, tmp_path: Path
) -> None:
    """OpenClaw's own `preflightManualSessionCompaction` (`prepareCompaction`) finds nothing to
    compact when the leaf is its safeguard's compaction (`fromHook`), even forced. replaylab's
    safeguard leaves a restated entry as the leaf after its compaction; the same compaction asked
    again with nothing new is refused alike under openclaw@2026.9.6."""
    from replaylab.agents import rules_of
    from replaylab.compaction import compact
    from replaylab.transcript import TranscriptWriter
    from replaylab.transcript.memo import ItemMemo

    theirs = _copy(tmp_path / "openclaw")
    compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)
    assert compactor(_params(theirs)).success
    again = compactor(_params(theirs, force_compact=True))
    assert not again.success and "Already compacted" in (again.error or ""), again.error

    writer = TranscriptWriter.working_copy(RECORDING, tmp_path / "ours.jsonl")
    memo = ItemMemo(rules=rules_of("openclaw@2026.9.6"))
    writes = {"issue_refund": "write", "send_email": "write", "ticket_note": "write"}
    ours = _params(writer.path, force_compact=True, tool_classes=writes)
    first = compact(ours, writer=writer, memo=memo)
    assert first.success and first.leaf_id != first.compaction_event_id, first.error  # it restated
    mine = compact(ours, writer=writer, memo=memo)
    assert not mine.success and mine.failure == "agent_refuses", mine.error
    assert "the leaf is a compaction a hook wrote" in (mine.error or "")


# ---------------------------------------------------------------- replaylab's `manual` against `/compact`

#: the whole context fits in a tail of 500 tokens: OpenClaw's `/compact` cuts again keeping none
SMALL_SESSION = linear_jsonl(
    {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"},
    message("user", [{"type": "text", "text": "word " * 150}]),
    message("assistant", [{"type": "text", "text": "word " * 150}], stopReason="stop"),
    message("user", [{"type": "text", "text": "and the parcel?"}]),
    message("assistant", [{"type": "text", "text": "on its way"}], stopReason="stop"),
)


@pytest.mark.parametrize(
    "recording",
    [*sorted(p for p in HELPDESK.glob("*.jsonl") if ".sub-" not in p.name), "small"],  # sessions, not sub-agents
    ids=lambda r: getattr(r, "stem", str(r)),
)
def test_replaylabs_manual_mode_cuts_where_openclaws_own_compact_does(
    openclaw: None, recording: Path | str, tmp_path: Path
) -> None:
    """Under OpenClaw 2026.9.6's rules `manual` keeps the tail OpenClaw's `/compact` keeps
    (`preflightManualSessionCompaction`, again with `keepRecentTokens: 0` where its cut summarizes
    nothing). Before, replaylab moved the boundary to the leaf, as 2026.4.12's `/compact` does."""
    source = tmp_path / "small.jsonl"
    if recording == "small":
        source.write_bytes(SMALL_SESSION)
    else:
        source = Path(recording)
    budget = {**BUDGET, "context_tokens": 200_000}
    compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), tmp_path)
    copy = _copy(tmp_path / "theirs", source)
    theirs = compactor(CompactParams(session_file=str(copy), compaction_mode="auto", **budget))
    assert theirs.success, theirs.error
    ours = compact(
        CompactParams(session_file=str(_copy(tmp_path / "ours", source)), compaction_mode="manual", **budget),
        memo=ItemMemo(rules=rules_of("openclaw@2026.9.6")),
    )
    assert ours.success, ours.error
    path = load_transcript(source).leaf_path()
    assert path[ours.cut_point.first_kept_index].id == theirs.first_kept_entry_id
    # the tail OpenClaw keeps is in the compacted window, restated or not
    kept = {e.id for e in path[ours.cut_point.first_kept_index :]}
    assert kept <= {w.get("restates") or w["entryId"] for w in ours.compacted_window[1:]}
