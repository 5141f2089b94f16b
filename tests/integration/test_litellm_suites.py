"""A suite with a litellm model: recorded once against a real loopback OpenAI-compatible server,
then passing offline from its LLM cassettes with the server stopped. The server answers each
request with the recorded assistant message of its turn and step, so the baseline reproduces the
recording and the comparison after compaction means what it means with the replay model."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from loopback import ChatServer
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.qa.setup import llm_cassette_path
from replaylab.replay import split_turns
from replaylab.replay.agent.llm_format import to_openai_messages
from replaylab.replay.agent.models import make_model
from replaylab.replay.agent.recorded_prompt import recorded_tool_schemas, system_prompt_of
from replaylab.replay.cassettes.vcr_session import forget_llm_cassettes
from replaylab.suite import load_suite
from replaylab.transcript import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT
RECORDING = ROOT / "recordings" / "helpdesk" / "handbook-damaged-in-transit.jsonl"
MODEL = "litellm/openai/replaylab-test"
KEY_ENV, KEY = "REPLAYLAB_TEST_LLM_KEY", "sk-test-0123456789abcdefghijklmnop"
TEAM_ENV, TEAM = "REPLAYLAB_TEST_TEAM_TOKEN", "team-token-0123456789abcdef"


def _recorded_replies(recording: Path) -> dict[tuple[str, int], dict]:
    """(user text of a turn, step) → the recorded assistant message of that step, as OpenAI JSON."""
    transcript = load_transcript(recording)
    replies: dict[tuple[str, int], dict] = {}
    for turn in split_turns(transcript.leaf_path()):
        for step, entry in enumerate(turn.steps):
            message = to_openai_messages([entry.message])[0]  # (a call also gets a placeholder result)
            replies[(turn.user_text(), step)] = message
    return replies


def _recording_server(recording: Path) -> ChatServer:
    replies = _recorded_replies(recording)

    def reply(body: dict) -> tuple[dict, str]:
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        message = replies.get((messages[last_user]["content"], step), {"role": "assistant", "content": "unknown"})
        return message, "tool_calls" if message.get("tool_calls") else "stop"

    return ChatServer(reply)


def _suite(folder: Path, api_base: str, extra: str = "") -> Path:
    recordings = folder / "recordings"
    recordings.mkdir(exist_ok=True)
    for source in (RECORDING, RECORDING.with_name(RECORDING.name.replace(".jsonl", ".cassette.yaml"))):
        shutil.copy(source, recordings / source.name)
    if not (folder / "examples").exists():  # the pack the suite names, for a pytest run in `folder`
        shutil.copytree(ROOT / "examples", folder / "examples")
    suite = folder / "suites" / "llm.yaml"
    suite.parent.mkdir(exist_ok=True)
    suite.write_text(
        f"""name: helpdesk-llm
recordings: ../recordings/*.jsonl
tools: examples.helpdesk
model: {MODEL}
model_settings:
  api_base: {api_base}
  api_key_env: {KEY_ENV}
  seed: 7
  max_tokens: 64
  headers: {{X-Team-Token: "${{{TEAM_ENV}}}"}}
llm_cassettes: ../cassettes
compaction: {{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}}
{extra}""",
        encoding="utf-8",
    )
    return suite


@pytest.fixture()
def env_secrets(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv(TEAM_ENV, TEAM)
    forget_llm_cassettes()
    yield
    forget_llm_cassettes()


def test_suite_records_once_then_passes_offline_from_its_cassettes(tmp_path, env_secrets):
    server = _recording_server(RECORDING)
    try:
        suite = load_suite(_suite(tmp_path, server.url))
        [scenario] = suite.scenarios
        [recording] = suite.recordings
        recorded = run_item(scenario, recording, RunOptions(record_mode="once", verify_with_pi="off"))
    finally:
        server.stop()
    assert recorded.outcome == "passed", (recorded.reason, [d.message for d in recorded.defects])
    assert recorded.compaction is not None and recorded.compaction.success
    sent = len(server.requests)
    assert sent >= 2

    # the recording's system prompt and the tool pack's schemas reach the model
    system = system_prompt_of(load_transcript(RECORDING).leaf_path())
    assert system and all(r["messages"][0] == {"role": "system", "content": system} for r in server.requests)
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {"search_kb"}
    assert server.requests[0]["seed"] == 7 and server.requests[0]["max_tokens"] == 64
    assert server.auth[0] == f"Bearer {KEY}"

    # one cassette per run, in the suite's folder; no key or configured header in either
    cassettes = {run: llm_cassette_path(recording, scenario, run) for run in ("baseline", "compacted")}
    assert cassettes["baseline"].parent == tmp_path / "cassettes"
    assert cassettes["baseline"].name == "handbook-damaged-in-transit.llm.safeguard.baseline.cassette.yaml"
    for path in cassettes.values():
        text = path.read_text(encoding="utf-8")
        assert "uri: " in text
        assert KEY not in text and TEAM not in text
        assert "authorization" not in text.lower() and "x-team-token" not in text.lower()

    # the server is gone, no key in the environment, record mode none: the same verdict offline
    forget_llm_cassettes()
    os.environ.pop(KEY_ENV)
    os.environ.pop(TEAM_ENV)
    replayed = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
    assert replayed.outcome == "passed", (replayed.reason, [d.message for d in replayed.defects])
    assert replayed.baseline.model_dump() == recorded.baseline.model_dump()
    assert replayed.compacted.model_dump() == recorded.compacted.model_dump()
    assert len(server.requests) == sent


def test_a_request_missing_from_the_cassette_is_cassette_missing_naming_it(tmp_path, env_secrets):
    server = _recording_server(RECORDING)
    server.stop()  # nothing may be sent: record mode none answers from the cassette only
    suite = load_suite(_suite(tmp_path, server.url))
    [scenario] = suite.scenarios
    [recording] = suite.recordings
    cassette = llm_cassette_path(recording, scenario, "baseline")
    cassette.parent.mkdir()
    cassette.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    result = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
    assert result.outcome == "error"
    missing = next(d for d in result.defects if d.code == Code.CASSETTE_MISSING and "has no response" in d.message)
    assert missing.severity == "error"
    assert f"model {MODEL.removeprefix('litellm/')}, turn " in missing.message
    assert missing.detail["model"] == MODEL.removeprefix("litellm/")
    assert isinstance(missing.detail["turn"], int) and len(missing.detail["messages_digest"]) == 12
    assert missing.detail["messages_digest"] in missing.message
    assert server.requests == []


def test_no_cassette_at_all_is_cassette_missing_and_sends_nothing(tmp_path, env_secrets):
    server = _recording_server(RECORDING)
    server.stop()
    suite = load_suite(_suite(tmp_path, server.url))
    result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="off"))
    assert result.outcome == "error"
    misses = [d for d in result.defects if d.code == Code.CASSETTE_MISSING]
    assert misses and all("does not exist" in d.message for d in misses)
    assert {d.code for d in result.defects} == {Code.CASSETTE_MISSING}  # not a drift from the recording
    assert "--replaylab-record-mode once" in misses[0].message
    assert server.requests == []


def test_plugin_records_with_the_record_mode_option_then_replays_offline(tmp_path):
    server = _recording_server(RECORDING)
    suite = _suite(tmp_path, server.url)
    env = {KEY_ENV: KEY, TEAM_ENV: TEAM, "CI": "true"}
    try:
        first = run_pytest(tmp_path, "--replaylab", str(suite), "--replaylab-record-mode", "once", "-q", env=env)
    finally:
        server.stop()
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert "1 passed" in first.stdout
    assert sorted(p.name for p in (tmp_path / "cassettes").iterdir()) == [
        "handbook-damaged-in-transit.llm.safeguard.baseline.cassette.yaml",
        "handbook-damaged-in-transit.llm.safeguard.compacted.cassette.yaml",
    ]
    second = run_pytest(tmp_path, "--replaylab", str(suite), "-q", env={"CI": "true"})
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    assert "1 passed" in second.stdout


@pytest.mark.parametrize(
    ("setting", "field", "message"),
    [
        ("model_settings: {temperature: hot}", "model_settings.temperature", "valid number"),
        ("model_settings: {api_base: ftp://x}", "model_settings.api_base", "is not an http(s) URL"),
        ("model_settings: {api_key_env: 'not a name'}", "model_settings.api_key_env", "environment variable name"),
        ("model_settings: {headers: {Authorization: Bearer sk-abc}}", "model_settings.headers", "from the environment"),
        ("model_settings: {colour: red}", "model_settings.colour", "unknown key 'colour'"),
        ("model_settings: {local_tool_calls: true}", "model_settings", "loopback api_base"),
        (
            "model_settings: {local_model: true, api_base: 'http://127.0.0.1:1/v1'}",
            "model_settings",
            "local_model serves its own endpoint on 127.0.0.1 for the run; expected no api_base",
        ),
        ("record_mode: sometimes", "record_mode", "'none', 'once', 'new_episodes' or 'all'"),
    ],
)
def test_bad_model_settings_are_usage_errors_naming_file_line_and_field(tmp_path, setting, field, message):
    suite = tmp_path / "suites" / "bad.yaml"
    suite.parent.mkdir()
    shutil.copy(RECORDING, tmp_path / RECORDING.name)
    suite.write_text(f"name: bad\nrecordings: ../*.jsonl\nmodel: {MODEL}\n{setting}\n", encoding="utf-8")
    run = run_pytest(tmp_path, "--replaylab", str(suite), "-q")
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{suite}:4: error[suite-invalid] field {field!r}:" in run.stderr, run.stderr
    assert message in run.stderr


@pytest.mark.parametrize(
    ("suite_text", "where", "message"),
    [
        ("model: litellm/gpt-4o\n", ":3: error[suite-invalid] field 'model':", "expected litellm/<provider>/<model>"),
        ("model: gpt-4o\n", ":3: error[suite-invalid] field 'model':", "unknown model"),
        ("model: scripted\n", ":3: error[suite-invalid] field 'model':", "expected scripted:<script.yaml>"),
        (
            "model: replay\nmodel_settings: {seed: 1}\n",
            ":4: error[suite-invalid] field 'model_settings':",
            "litellm model",
        ),
        (
            f"model: {MODEL}\nmodel_settings: {{local_model: true}}\n",
            ":3: error[suite-invalid] field 'model':",
            f"{MODEL!r} is another model; expected model: litellm/openai/qwen2.5-coder-0.5b-instruct-q4_k_m",
        ),
    ],
)
def test_bad_model_specs_in_suites_are_usage_errors(tmp_path, suite_text, where, message):
    suite = tmp_path / "suites" / "bad.yaml"
    suite.parent.mkdir()
    shutil.copy(RECORDING, tmp_path / RECORDING.name)
    suite.write_text(f"name: bad\nrecordings: ../*.jsonl\n{suite_text}", encoding="utf-8")
    run = run_pytest(tmp_path, "--replaylab", str(suite), "-q")
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{suite}{where}" in run.stderr and message in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("litellm/gpt-4o", "'litellm/gpt-4o': expected litellm/<provider>/<model>"),
        ("scripted", "'scripted': the scripted model needs its script; expected scripted:<script.yaml>"),
    ],
)
def test_a_bad_model_option_is_a_usage_error_before_collection(tmp_path, spec, message):
    run = run_pytest(tmp_path, "--replaylab", str(tmp_path), "--replaylab-model", spec)
    assert run.returncode == 4
    assert f"--replaylab-model {message}" in run.stderr


def test_a_session_without_a_tool_pack_sends_the_tools_its_agent_called(tmp_path):
    transcript = load_transcript(RECORDING)
    schemas = recorded_tool_schemas(transcript.leaf_path())
    called = {
        call.name: set(call.arguments)
        for entry in transcript.leaf_path()
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
        for call in entry.message.tool_calls()
    }
    assert {s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in schemas} == called
    model = make_model(MODEL, recording=transcript, llm_cassette=tmp_path / "c.yaml")
    request = model.request([], [])
    assert request["tools"] == schemas
    assert request["messages"] == [{"role": "system", "content": system_prompt_of(transcript.leaf_path())}]


def test_local_tool_calls_ask_llama_cpp_for_declared_calls_without_its_prompt_cache(tmp_path):
    from replaylab.local_model.tool_calls import request_fields

    tools = recorded_tool_schemas(load_transcript(RECORDING).leaf_path())
    model = make_model(MODEL, llm_cassette=tmp_path / "c.yaml", api_base="http://127.0.0.1:9/v1", local_tool_calls=True)
    request = model.request([], tools)
    assert request["extra_body"] == {**request_fields(tools), "cache_prompt": False}
    assert json.dumps(request["extra_body"])  # it travels as JSON


@pytest.mark.slow
def test_the_local_model_records_one_turn_and_replays_it_offline(tmp_path, replaylab_local_model):
    """The real local model, one turn, a few tokens: recorded once, then the same reply offline."""
    from replaylab.replay import ToolExecutor, Turn, run_turns
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.model import UserMessage

    forget_llm_cassettes()
    cassette = tmp_path / "local.cassette.yaml"
    turn = Turn(index=0, inputs=[MessageEntry(id="u1", message=UserMessage(content="Say hello in one word."))])

    def run(record_mode: str):
        model = make_model(
            replaylab_local_model.litellm_model,
            llm_cassette=cassette,
            record_mode=record_mode,
            api_base=replaylab_local_model.base_url,
            system_prompt="You are terse.",
            max_tokens=8,
            local_tool_calls=True,
        )
        executor = ToolExecutor(tmp_path / "none.cassette.yaml", ToolClassifier(declared={}))
        return run_turns([], [turn], model, executor, label="baseline")

    recorded = run("once")
    assert recorded.error is None, recorded.error
    assert recorded.turns[0].answer
    forget_llm_cassettes()
    replayed = run("none")
    assert replayed.error is None, replayed.error
    assert replayed.turns[0].answer == recorded.turns[0].answer


def test_recording_without_the_key_in_the_environment_is_a_usage_error(tmp_path):
    suite = _suite(tmp_path, "http://127.0.0.1:9/v1")
    run = run_pytest(tmp_path, "--replaylab", str(suite), "--replaylab-record-mode", "once", "-q")
    assert run.returncode == 4, run.stdout + run.stderr
    assert f"{suite}: error[secret-unset] field 'model_settings':" in run.stderr, run.stderr
    assert f"${KEY_ENV}, which is not set" in run.stderr and f"${TEAM_ENV}, which is not set" in run.stderr
    assert not (tmp_path / "cassettes").exists()


@pytest.mark.parametrize(
    ("answer_rule", "drifts"),
    [("normalized", False), ("exact", True)],
)
def test_a_real_models_baseline_drifts_only_by_the_suites_match_rules(tmp_path, env_secrets, answer_rule, drifts):
    """A real model words its answers afresh: its baseline is held to what the suite compares
    after compaction (here the answers, upper-cased by the model), not to the recording's bytes.
    The item says which model produced its runs."""
    from replaylab.report.story import failure_story

    replies = _recorded_replies(RECORDING)

    def shouting(body: dict) -> tuple[dict, str]:
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        message = dict(replies.get((messages[last_user]["content"], step), {"role": "assistant", "content": "?"}))
        if not message.get("tool_calls"):
            message["content"] = (message.get("content") or "").upper()
        return message, "tool_calls" if message.get("tool_calls") else "stop"

    server = ChatServer(shouting)
    try:
        extra = f"match: {{tools: unordered, args: exact, answer: {answer_rule}}}\n"
        suite = load_suite(_suite(tmp_path, server.url, extra))
        [scenario] = suite.scenarios
        [recording] = suite.recordings
        result = run_item(scenario, recording, RunOptions(record_mode="once", verify_with_pi="off"))
    finally:
        server.stop()
    drift = [d for d in result.defects if d.code == Code.BASELINE_DRIFT]
    assert bool(drift) is drifts, [d.message for d in result.defects]
    if drifts:
        assert "by the suite's match rules (unordered calls, exact answers)" in drift[0].message
        assert result.outcome == "error"
    else:
        assert result.outcome == "passed", (result.reason, [d.message for d in result.defects])
    assert result.model == MODEL
    assert f"model: {MODEL}" in failure_story(result)


@pytest.mark.parametrize("args_rule", ["exact", "ignore"])
def test_a_real_model_refunding_another_amount_is_never_taken_for_another_sessions_cassette(
    tmp_path, env_secrets, args_rule
):
    """The model refunds 599.0 where the recording refunded 597.0: no cassette of the recording
    answers that call. It is the baseline's drift where the suite compares arguments; where it
    ignores them, a call the recording never made, named by where it differs."""
    replies = _recorded_replies(RECORDING)

    def another_amount(body: dict) -> tuple[dict, str]:
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        message = json.loads(json.dumps(replies.get((messages[last_user]["content"], step), {"role": "assistant"})))
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] == "issue_refund":
                call["function"]["arguments"] = json.dumps(
                    {**json.loads(call["function"]["arguments"]), "amount": 599.0}
                )
        return message, "tool_calls" if message.get("tool_calls") else "stop"

    server = ChatServer(another_amount)
    try:
        suite = load_suite(_suite(tmp_path, server.url, f"match: {{tools: strict, args: {args_rule}}}\n"))
        result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(record_mode="once", verify_with_pi="off"))
    finally:
        server.stop()
    assert result.outcome == "error"
    gaps = [d for d in result.defects if d.code == Code.CASSETTE_MISSING]
    assert not any("another session" in d.message for d in gaps), [d.message for d in gaps]
    drift = [d for d in result.defects if d.code == Code.BASELINE_DRIFT]
    if args_rule == "exact":
        assert drift and gaps == []
    else:
        [gap] = gaps
        assert not drift
        assert "the baseline made 1 call(s) the recording never made with those arguments" in gap.message
        assert "(first: issue_refund in turn 5, differs from the recorded call at amount)" in gap.message


def test_repeats_of_a_real_model_each_record_their_own_cassettes_and_replay_their_variance(tmp_path, env_secrets):
    """`repeats: 2` with a real model: each repeat records its own LLM cassettes (`.r2`), so the
    model's variance is kept — here the second repeat words its answers differently, so its
    baseline drifts, pass^2 fails (1/2) and the failure is put down to the model, not to compaction;
    replayed offline from the cassettes the verdict is the same."""
    replies = _recorded_replies(RECORDING)
    seen: dict[str, int] = {}

    def varying(body: dict) -> tuple[dict, str]:
        messages = body["messages"]
        key = json.dumps(messages, sort_keys=True)
        seen[key] = seen.get(key, 0) + 1  # a baseline request comes again only in the next repeat
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        message = dict(replies.get((messages[last_user]["content"], step), {"role": "assistant", "content": "?"}))
        if not message.get("tool_calls") and seen[key] > 1:
            message["content"] = f"{message.get('content') or ''} Anything else?"
        return message, "tool_calls" if message.get("tool_calls") else "stop"

    server = ChatServer(varying)
    try:
        suite = load_suite(_suite(tmp_path, server.url, "repeats: 2\n"))
        [scenario] = suite.scenarios
        [recording] = suite.recordings
        recorded = run_item(scenario, recording, RunOptions(record_mode="once", verify_with_pi="off"))
    finally:
        server.stop()
    first = llm_cassette_path(recording, scenario, "baseline")
    second = llm_cassette_path(recording, scenario, "baseline", repeat=1)
    assert second.name == "handbook-damaged-in-transit.llm.safeguard.baseline.r2.cassette.yaml"
    assert first.is_file() and second.is_file()
    assert llm_cassette_path(recording, scenario, "compacted", repeat=1).is_file()
    assert "Anything else?" in second.read_text(encoding="utf-8")
    assert "Anything else?" not in first.read_text(encoding="utf-8")
    stats = recorded.repeats
    assert stats["k"] == 2 and stats["passes"] == 1 and stats["pass_k"] is False
    assert stats["baseline_variants"] == 2
    assert stats["failure_attribution"] == "model variance (baseline repeats differ)"
    # a baseline that does not reproduce the recording makes its run untrustworthy: an error
    assert recorded.outcome == "error" and Code.BASELINE_DRIFT in {d.code for d in recorded.defects}

    forget_llm_cassettes()
    sent = len(server.requests)
    replayed = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
    assert replayed.repeats == stats
    assert replayed.outcome == "error"
    assert len(server.requests) == sent


def test_a_local_call_it_may_not_make_is_asked_again_for_a_plain_answer(tmp_path):
    """The local model writes calls as text and often repeats the call it just made instead of
    answering: that reply is not run, the same conversation is asked again for prose only (no
    tools, llama.cpp's grammar), and both requests are in the LLM cassette for the replay."""
    from replaylab.local_model.tool_calls import PROSE_GRAMMAR
    from replaylab.replay import ToolExecutor, Turn, run_turns
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.model import UserMessage

    call = json.dumps({"name": "get_ticket", "arguments": {"ticket_id": "TCK-5001"}})

    def reply(body: dict) -> tuple[dict, str]:
        if "grammar" in body:
            return {"role": "assistant", "content": "Ticket TCK-5001 is open."}, "stop"
        return {"role": "assistant", "content": call}, "stop"  # the call, and then the same call again

    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_ticket",
                "parameters": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
            },
        }
    ]
    turn = Turn(index=0, inputs=[MessageEntry(id="u1", message=UserMessage(content="Show ticket TCK-5001."))])
    cassette = tmp_path / "local.cassette.yaml"

    def run(record_mode: str, api_base: str):
        forget_llm_cassettes()
        model = make_model(
            MODEL, llm_cassette=cassette, record_mode=record_mode, api_base=api_base, local_tool_calls=True
        )
        executor = ToolExecutor(tmp_path / "none.cassette.yaml", ToolClassifier(declared={}))
        return run_turns([], [turn], model, executor, label="baseline", tools=tools)

    server = ChatServer(reply)
    try:
        recorded = run("once", server.url)
    finally:
        server.stop()
    assert recorded.error is None, recorded.error
    [made] = recorded.turns[0].tool_calls  # the first call ran (from no cassette: fail closed), the repeat did not
    assert made.tool == "get_ticket"
    assert recorded.turns[0].answer == "Ticket TCK-5001 is open."
    first, repeat, retry = server.requests
    assert "tools" in repeat and repeat["json_schema"]
    assert "tools" not in retry and "json_schema" not in retry
    assert retry["grammar"] == PROSE_GRAMMAR and retry["cache_prompt"] is False
    assert retry["messages"] == repeat["messages"]

    replayed = run("none", "http://127.0.0.1:9/v1")
    assert replayed.turns[0].answer == recorded.turns[0].answer
    assert len(server.requests) == 3
