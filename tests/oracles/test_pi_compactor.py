"""pi's own compaction as the compactor under test (`compactor: pi`): the pinned pi compacts a
working copy through the seed contract, its summary request answered on 127.0.0.1 by replaylab's
extractive summarizer, and the bundled negative control `suites/pi-compaction.yaml` finds what
its comments say.

Everything here runs the real pi under node (the `pi` fixture: skips with the reason when node or
the oracle's npm install is missing, fails under CI=true), real HTTP on loopback, real files.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from pydantic import TypeAdapter

from builders.pytest_runs import run_pytest
from replaylab.compaction import CompactParams
from replaylab.compaction.summary.llm import serialize_conversation
from replaylab.compaction.summary.pi_prompt import messages_of
from replaylab.compactors.contract import params_json
from replaylab.compactors.external import ExternalCompactor, SourceStates
from replaylab.compactors.process import run_compactor
from replaylab.compactors.spec import CompactorSetting, PiCompactor, from_hook, parse_option
from replaylab.compactors.summary_endpoint import SUMMARY_BASE_URL_VARIABLE, SummaryEndpoint, summary_of
from replaylab.defects import Code
from replaylab.oracles.pi import COMPACT_ENTRY, NODE_DIR, node_executable
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from replaylab.transcript import load_transcript
from replaylab.transcript.model import AssistantMessage, ToolResultMessage
from replaylab.upstream.pi_0_73_1 import (
    PI_TURN_PREFIX_PROMPT_START,
    SUMMARY_MAX_TOKENS_SHARE,
    TURN_PREFIX_MAX_TOKENS_SHARE,
)
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
SUITE = ROOT / "suites" / "pi-compaction.yaml"
HELPDESK = ROOT / "recordings" / "helpdesk"
RECORDING = HELPDESK / "refund-cracked-headphones.jsonl"
#: the bundled suite's budget (auto.yaml's): pi's reserveTokens = max(reserveTokens, floor)
BUDGET = {"context_tokens": 3200, "reserve_tokens_floor": 800, "keep_recent_tokens": 500}
SPLIT_TURN_MARK = "\n\n---\n\n**Turn Context (split turn):**\n\n"  # pi's compact(): history, then the prefix


def _params(copy: Path, **extra: object) -> CompactParams:
    return CompactParams(session_file=str(copy), compaction_mode="auto", **BUDGET, **extra)


def _copy(tmp_path: Path, recording: Path = RECORDING) -> Path:
    copy = tmp_path / recording.name
    shutil.copy(recording, copy)
    return copy


# ---------------------------------------------------------------- the spec


def test_pi_is_a_bundled_compactor_the_suite_key_the_option_and_a_hook_name_alike() -> None:
    assert parse_option("pi") == PiCompactor() and PiCompactor().name() == "pi"
    setting = TypeAdapter(CompactorSetting)
    assert setting.validate_python("pi") == setting.validate_python({"pi": True}) == PiCompactor()
    assert setting.validate_python({"pi": True, "timeout_s": 5}).timeout_s == 5
    assert from_hook("pi") == PiCompactor()
    with pytest.raises(ValueError):
        setting.validate_python({"pi": False})
    assert load_suite(SUITE).scenarios[0].compactor == PiCompactor()


# ---------------------------------------------------------------- pi's prompt read back


def test_pis_serialized_conversation_reads_back_as_the_messages_it_shows() -> None:
    path = load_transcript(RECORDING).leaf_path()
    shown = [e.message for e in path if getattr(e, "message", None) is not None]
    back = messages_of(serialize_conversation(shown))
    calls = [(c.name, c.arguments) for m in shown if isinstance(m, AssistantMessage) for c in m.tool_calls()]
    assert [(c.name, c.arguments) for m in back if isinstance(m, AssistantMessage) for c in m.tool_calls()] == calls
    results = [m for m in back if isinstance(m, ToolResultMessage)]
    assert len(results) == sum(isinstance(m, ToolResultMessage) for m in shown)
    # each result answers the call before it, by the id the reading gave it
    call_names = {c.id: c.name for m in back if isinstance(m, AssistantMessage) for c in m.tool_calls()}
    assert all(call_names[r.tool_call_id] == r.tool_name for r in results)
    assert [m.role for m in back if m.role == "user"] == [m.role for m in shown if m.role == "user"]


# ---------------------------------------------------------------- one compaction, through the contract


def test_pi_compacts_a_working_copy_at_its_own_cut_and_writes_the_entry_as_pi_persists_it(pi, tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    before = copy.read_bytes()
    own = pi.view(RECORDING, keep_recent_tokens=BUDGET["keep_recent_tokens"], reserve_tokens=800).cut
    compactor = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path)
    result = compactor(_params(copy))
    assert result.success, result.error
    assert copy.read_bytes().startswith(before)  # an append, never a rewrite
    assert result.first_kept_entry_id == own.first_kept_entry_id
    entry = orjson.loads(copy.read_bytes().splitlines()[-1])
    assert set(entry) == {
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "fromHook",
    }
    assert entry["type"] == "compaction" and entry["id"] == result.compaction_event_id
    assert entry["parentId"] == load_transcript(RECORDING).leaf_id and entry["tokensBefore"] == own.tokens_before
    assert entry["details"] == {"readFiles": [], "modifiedFiles": []} and entry["summary"] == result.summary_text
    # the window it reports is the context pi rebuilds from the file
    context = [m.entry_id for m in pi.view(copy).context]
    assert [w["entryId"] for w in result.compacted_window] == context
    # pi makes no replay-safety claim: the contract's defaults stand for it
    assert (result.replay_safe, result.mutated_event_ids) == (True, [])


def test_pis_summary_came_from_the_loopback_endpoint_one_request_per_summary_pi_asks_for(pi, tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    own = pi.view(RECORDING, keep_recent_tokens=BUDGET["keep_recent_tokens"], reserve_tokens=800).cut
    compactor = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path)
    result = compactor(_params(copy))
    assert result.success, result.error
    # a split turn asks twice, in parallel: the history and the turn's prefix
    requests = compactor.summary_requests
    assert len(requests) == (2 if own.is_split_turn and own.turn_prefix else 1)
    prompts = {_is_prefix(r): r for r in requests}
    assert len(prompts) == len(requests)
    history = summary_of(prompts[False]) if own.summarize else "No prior history."
    expected = history + (SPLIT_TURN_MARK + summary_of(prompts[True]) if True in prompts else "")
    assert result.summary_text == expected
    # pi's own request: its system prompt, its model, its maxTokens shares of reserveTokens
    for request in requests:
        assert request["model"] == "replaylab-extractive" and request["stream"] is True
        assert request["messages"][0]["content"].startswith("You are a context summarization assistant.")
        share = TURN_PREFIX_MAX_TOKENS_SHARE if _is_prefix(request) else SUMMARY_MAX_TOKENS_SHARE
        assert request["max_completion_tokens"] == math.floor(share * 800)
    # compacting at the compaction itself, pi refuses as its agent session does, asking nothing
    again = compactor(_params(copy, leaf_id=result.compaction_event_id))
    assert not again.success and "Already compacted" in again.error
    assert len(compactor.summary_requests) == len(requests)


def _is_prefix(request: dict) -> bool:
    content = request["messages"][-1]["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    return PI_TURN_PREFIX_PROMPT_START in text


# ---------------------------------------------------------------- nothing but loopback


def test_the_pi_compactor_refuses_a_summary_model_off_loopback_before_connecting(pi, tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    before = copy.read_bytes()
    finished = run_compactor(
        [str(node_executable()), str(COMPACT_ENTRY)],
        orjson.dumps(_params(copy).model_dump(by_alias=True, mode="json")),
        cwd=tmp_path,
        home=tmp_path,
        timeout_s=60,
        environment={SUMMARY_BASE_URL_VARIABLE: "http://10.255.255.1:8080/v1"},
    )
    assert finished.returncode != 0
    assert b"loopback only: refused a connection to 10.255.255.1" in finished.stderr
    assert copy.read_bytes() == before  # nothing written


@pytest.mark.parametrize("address", ["10.255.255.1:8080", "169.254.169.254", "example.com", "[2001:db8::1]:8080"])
def test_the_node_process_opens_no_socket_to_a_non_loopback_address(pi, address: str) -> None:
    with SummaryEndpoint() as endpoint:
        script = (
            "const go = (u) => fetch(u, {method: 'POST', body: '{}', headers: {'content-length': '2'}})"
            ".then(r => 'reached ' + r.status, e => 'refused ' + (e.cause?.message ?? e.message));"
            f"Promise.all([go('http://{address}/v1/chat/completions'), go('{endpoint.url}/chat/completions')])"
            ".then(r => console.log(JSON.stringify(r)));"
        )
        done = subprocess.run(
            [str(node_executable()), "--import", str(NODE_DIR.parent / "loopback_only.mjs"), "-e", script],
            capture_output=True,
            text=True,
            timeout=60,
        )
    far, near = json.loads(done.stdout)
    host = address.rsplit(":", 1)[0] if not address.startswith("[") else address[1:].split("]")[0]
    assert far == f"refused loopback only: refused a connection to {host}"
    assert near.startswith("reached ")  # the endpoint answered (400: not pi's request)


# ---------------------------------------------------------------- the re-check and the bundled suite


def test_pis_compaction_of_one_item_is_rechecked_on_the_window_pi_itself_builds(pi) -> None:
    scenario = load_suite(SUITE).scenarios[0]
    result = run_item(scenario, RECORDING, RunOptions())
    assert result.outcome == "passed", result.reason  # the suite's expectation: exactly these codes
    assert result.verified_windows == result.compaction.compactions == 1
    assert {d.code for d in result.defects} == {Code.MUTATION_DROPPED, Code.REPLAY_FLAG_WRONG, Code.MUTATED_IDS_WRONG}
    dropped = {d.where.tool_call_id for d in result.defects if d.code == Code.MUTATION_DROPPED}
    assert dropped == {"call_t4s0c0"}  # the refund of turn 5; its note and the email are in pi's tail
    assert result.compaction.summary_text.startswith("## Decisions")  # the extractive answer to pi's prompt


def test_the_bundled_pi_compaction_suite_passes_offline_with_the_findings_it_documents(pi, tmp_path: Path) -> None:
    out = tmp_path / "report"
    run = run_pytest(ROOT, "--replaylab", str(SUITE), "-q", f"--replaylab-report={out}", env={"CI": "true"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "13 passed" in run.stdout
    items = {Path(i["recording"]).stem: i for i in json.loads((out / "replaylab.json").read_text())["items"]}
    codes = {name: {d["code"] for d in item["defects"]} for name, item in items.items()}
    clean = {"early-identifier-address-change", "handbook-damaged-in-transit", "overflow-handbook-midturn"}
    clean |= {"readonly-missing-parcel"}
    assert {name for name, found in codes.items() if not found} == clean
    assert all(
        found == {"MUTATION_DROPPED", "REPLAY_FLAG_WRONG", "MUTATED_IDS_WRONG"} for found in codes.values() if found
    )
    # where pi differs from replaylab's auto: one compaction of the handbook session, four of the long one
    assert items["handbook-damaged-in-transit"]["compaction"]["compactions"] == 1
    assert items["long-account-review"]["compaction"]["compactions"] == 4
    assert all(i["verified_windows"] == i["compaction"]["compactions"] for i in items.values())


def test_without_node_the_pi_compactor_is_a_not_found_finding_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLAYLAB_NODE", str(tmp_path / "no-node"))
    copy = _copy(tmp_path)
    result = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path)(_params(copy))
    assert not result.success
    finding = result.findings[0]
    assert finding.code == Code.COMPACTION_FAILED and finding.detail["kind"] == "not_found"
    assert (
        f"compactor pi cannot run: REPLAYLAB_NODE={tmp_path / 'no-node'} is not an executable file" in finding.message
    )


def test_pis_compaction_is_reproducible_the_same_entry_id_and_summary_on_every_run(pi, tmp_path: Path) -> None:
    results = []
    for run in ("first", "second"):
        (tmp_path / run).mkdir()
        copy = _copy(tmp_path / run)
        leaf = load_transcript(RECORDING).leaf_id
        results.append(ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path)(_params(copy, leaf_id=leaf)))
    first, second = results
    assert first.success and second.success
    assert first.compaction_event_id == second.compaction_event_id
    assert first.summary_text == second.summary_text and first.compacted_window == second.compacted_window


@pytest.mark.parametrize("ci", ["", "true"])
def test_without_pi_installed_its_items_are_skipped_saying_what_to_install_but_under_ci_they_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """`pytest --replaylab suites/` after `pip install -e .` alone has no pi: its items say so as
    skips; under CI=true, where pi must be installed, the missing compactor is an error."""
    monkeypatch.setenv("REPLAYLAB_NODE", str(tmp_path / "no-node"))
    monkeypatch.setenv("CI", ci)
    scenario = load_suite(SUITE).scenarios[0]
    result = run_item(scenario, RECORDING, RunOptions(verify_with_pi="off"))
    if ci:
        assert result.outcome == "error"
        assert any(d.code == Code.COMPACTION_FAILED and d.detail.get("kind") == "not_found" for d in result.defects)
    else:
        assert result.outcome == "skipped" and result.defects == []
        assert "the bundled pi compactor cannot run here" in result.reason
        assert f"REPLAYLAB_NODE={tmp_path / 'no-node'} is not an executable file" in result.reason
    assert result.compactor == "pi"


# ---------------------------------------------------------------- the worker


@pytest.mark.parametrize("name", ["pi@0.73.1", "pi@1.6.0"])
def test_a_warm_pi_worker_answers_as_a_fresh_pi_process(name: str, agent_oracles, tmp_path: Path) -> None:
    """Each pinned pi's worker (`compactors.pi_worker`), warm from another compaction, gives the
    entry id, summary and window that `node pi_compact.mjs` run once, cold, gives for the same
    working copy: each compaction seeds its own ids, and nothing of one is left for the next."""
    from replaylab.compactors.pi_worker import shared_worker
    from replaylab.oracles import agent
    from replaylab.oracles.pi import compact_entry
    from replaylab.upstream.profiles import profile_named

    agent_oracles(name)  # installed, else skipped (failed under CI=true)
    profile = profile_named(name)
    worker = shared_worker(profile)
    assert shared_worker(profile) is worker
    warm, fresh = tmp_path / "warm", tmp_path / "fresh"
    for folder in (warm, fresh):
        folder.mkdir()
    other = _copy(warm, HELPDESK / "long-account-review.jsonl")
    with SummaryEndpoint() as endpoint:
        first = worker.compact(params_json(_params(other)), endpoint.url, 300, cwd=str(tmp_path))
        assert first.failure is None and first.result["success"] is True, first
        got = worker.compact(params_json(_params(_copy(warm))), endpoint.url, 300, cwd=str(tmp_path))
    assert worker.header == {"ready": True, "pi": profile.version}
    assert got.failure is None and got.result["success"] is True, got
    assert got.log and got.log[0].startswith("cut at ")
    with SummaryEndpoint() as endpoint:
        finished = run_compactor(
            [str(agent.node_executable(profile)), str(compact_entry(profile))],
            orjson.dumps(params_json(_params(_copy(fresh)))),
            cwd=tmp_path,
            home=fresh,
            timeout_s=300,
            environment={SUMMARY_BASE_URL_VARIABLE: endpoint.url},
        )
    assert finished.returncode == 0, finished.stderr[-2000:]
    cold = json.loads(finished.stdout)
    # each compaction draws its ids afresh, seeded from the leaf its params name (none here)
    assert cold["compactionEventId"] == got.result["compactionEventId"] == first.result["compactionEventId"]
    assert cold["summaryText"] == got.result["summaryText"]
    assert cold["compactedWindow"] == got.result["compactedWindow"]
    # pi's own entries differ in their timestamps alone
    appended = [json.loads(line) for line in (warm / RECORDING.name).read_text().splitlines()[-1:]]
    cold_appended = [json.loads(line) for line in (fresh / RECORDING.name).read_text().splitlines()[-1:]]
    assert [{**e, "timestamp": None} for e in appended] == [{**e, "timestamp": None} for e in cold_appended]


def test_a_compaction_the_pi_worker_crashes_on_is_a_crash_and_the_worker_serves_the_next(pi, tmp_path: Path) -> None:
    """What would end a process of its own (here pi reading a folder as its session file) is that
    compaction's crash, with pi's stack; the worker goes on to the next compaction."""
    from replaylab.compactors.pi_worker import shared_worker
    from replaylab.oracles.pi import compactor_profile

    worker = shared_worker(compactor_profile(None))
    with SummaryEndpoint() as endpoint:
        crashed = worker.compact({"sessionFile": str(tmp_path)}, endpoint.url, 60)
        assert crashed.failure is None and crashed.result["crashed"] is True
        assert "EISDIR" in crashed.result["error"]
        after = worker.compact(params_json(_params(_copy(tmp_path))), endpoint.url, 300)
    assert after.failure is None and after.result["success"] is True
