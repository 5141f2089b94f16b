"""The litellm model against a loopback OpenAI-compatible server: a tool-call round trip recorded
to an LLM cassette, replayed with the server stopped, a cassette miss reported as
CASSETTE_MISSING; and proof that importing replaylab / loading the plugin never imports litellm
nor sets its environment variables (they are set at litellm's lazy import)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from loopback import ChatServer
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.defects import Code
from replaylab.litellm_import import import_litellm
from replaylab.replay import ToolExecutor, Turn, make_model, run_turns
from replaylab.replay.cassettes.vcr_session import forget_llm_cassettes
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import MessageEntry, UserMessage

API_KEY = "sk-test-abcdefghijklmnopqrstuvwx"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def _weather(body: dict) -> tuple[dict, str]:
    """Asks for the weather tool, then answers with what the tool said."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"It is {last['content']} in Paris."}, "stop"
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    }, "tool_calls"


def _turn(text: str) -> Turn:
    return Turn(index=0, inputs=[MessageEntry(id="u1", message=UserMessage(content=text))])


def _run(model, tool_cassette, text="What's the weather in Paris?"):
    executor = ToolExecutor(tool_cassette, ToolClassifier(declared={"get_weather": "read"}))
    return run_turns([], [_turn(text)], model, executor, label="baseline", tools=TOOLS)


@pytest.fixture()
def tool_cassette(tmp_path):
    return write_cassette(
        tmp_path / "tools.cassette.yaml", [recorded_tool_interaction("get_weather", {"city": "Paris"}, "sunny")] * 2
    )


@pytest.mark.slow
def test_litellm_tool_call_round_trip_recorded_then_replayed_offline(tmp_path, tool_cassette):
    forget_llm_cassettes()
    llm_cassette = tmp_path / "llm.cassette.yaml"
    server = ChatServer(_weather)
    try:
        model = make_model(
            "litellm/openai/gpt-4o-mini",
            llm_cassette=llm_cassette,
            record_mode="once",
            api_base=server.url,
            api_key=API_KEY,
        )
        recorded = _run(model, tool_cassette)
    finally:
        server.stop()
    assert recorded.error is None, recorded.error
    turn = recorded.turns[0]
    assert [(c.tool, c.arguments, c.result, c.source) for c in turn.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "sunny", "cassette")
    ]
    assert turn.answer == "It is sunny in Paris."
    assert turn.assistant_messages[0]["usage"]["totalTokens"] == 28
    assert len(server.requests) == 2 and server.auth[0] == f"Bearer {API_KEY}"
    assert server.requests[0]["tools"] == TOOLS
    assert server.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_w1", "content": "sunny"}
    text = llm_cassette.read_text(encoding="utf-8")
    assert text.count("uri: ") == 2 and API_KEY not in text and "authorization" not in text.lower()

    # the server is gone: the same run is answered from the cassette, without a key
    forget_llm_cassettes()
    replayed = _run(
        make_model("litellm/openai/gpt-4o-mini", llm_cassette=llm_cassette, api_base=server.url), tool_cassette
    )
    assert replayed.error is None, replayed.error
    assert replayed.turns[0].model_dump() == turn.model_dump()
    assert len(server.requests) == 2

    # a request the cassette never saw: litellm wraps vcrpy's exception; it is reported, not raised
    forget_llm_cassettes()
    model = make_model("litellm/openai/gpt-4o-mini", llm_cassette=llm_cassette, api_base=server.url)
    missed = _run(model, tool_cassette, text="And in Rome?")
    assert missed.error and "has no response for the request" in missed.error
    [defect] = missed.defects
    assert defect.code == Code.CASSETTE_MISSING and defect.severity == "error"
    assert defect.actual["method"] == "POST" and defect.actual["uri"].endswith("/v1/chat/completions")
    assert "And in Rome?" in defect.actual["body"]
    assert defect.detail["wrapped_by"] != "CannotOverwriteExistingCassetteException"


def test_missing_llm_cassette_is_reported(tmp_path, tool_cassette):
    model = make_model("litellm/openai/gpt-4o-mini", llm_cassette=tmp_path / "absent.yaml")
    trace = _run(model, tool_cassette)
    assert [d.code for d in trace.defects] == [Code.CASSETTE_MISSING] and trace.error


LITELLM_VARIABLES = ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE")


@pytest.mark.slow
def test_importing_replaylab_and_loading_the_plugin_never_import_litellm(tmp_path):
    (tmp_path / "test_empty.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    code = (
        "import os, sys, pytest\n"
        "import replaylab, replaylab.replay, replaylab.pytest_plugin\n"
        "assert 'litellm' not in sys.modules and 'vcr' not in sys.modules, 'import replaylab'\n"
        f"rc = pytest.main(['-q', '-p', 'no:cacheprovider', '--replaylab', {str(tmp_path)!r}])\n"
        "loaded = [m for m in ('litellm', 'openai') if m in sys.modules]\n"
        f"set_ = [v for v in {LITELLM_VARIABLES!r} if v in os.environ]\n"
        "print('PLUGIN', 'replaylab.pytest_plugin' in sys.modules, 'LOADED', loaded, 'SET', set_)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in LITELLM_VARIABLES and not k.startswith("PYTEST_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    assert "PLUGIN True LOADED [] SET []" in out.stdout


def test_litellm_is_imported_with_its_offline_switches_set(monkeypatch):
    for name in LITELLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    litellm = import_litellm()
    assert litellm.__name__ == "litellm" and hasattr(litellm, "completion")
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True" and os.environ["LITELLM_OFFLINE_MODE"] == "true"


#: llama.cpp's server refusing a prompt longer than its context, as it answers (status and body)
LLAMA_CPP_REFUSAL = {
    "error": {
        "code": 400,
        "message": "request (830 tokens) exceeds the available context size (512 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 830,
        "n_ctx": 512,
    }
}


@pytest.mark.slow
def test_a_provider_refusal_reaches_the_agent_as_its_text_recorded_then_replayed_offline(tmp_path, tool_cassette):
    """A request the provider refuses (a full context) is what the agent's recovery chain reads:
    the status and the provider's own message, as the OpenAI client words it — and the cassette
    keeps the refusal, so the replay offline refuses the same way."""
    from replaylab.replay.agent.context_limit import ProviderRefusedRequest

    forget_llm_cassettes()
    llm_cassette = tmp_path / "llm.cassette.yaml"
    server = ChatServer(_weather, refuse=lambda body: (400, LLAMA_CPP_REFUSAL))
    expected = "400 request (830 tokens) exceeds the available context size (512 tokens), try increasing it"
    try:
        model = make_model("litellm/openai/local", llm_cassette=llm_cassette, record_mode="once", api_base=server.url)
        with pytest.raises(ProviderRefusedRequest) as live:
            model.complete([], TOOLS)
    finally:
        server.stop()
    assert (live.value.text, live.value.tokens, live.value.limit) == (expected, 830, 512)
    forget_llm_cassettes()
    replayed = make_model("litellm/openai/local", llm_cassette=llm_cassette, api_base=server.url)
    with pytest.raises(ProviderRefusedRequest) as offline:
        replayed.complete([], TOOLS)
    assert (offline.value.text, offline.value.tokens, offline.value.limit) == (expected, 830, 512)


@pytest.mark.slow
def test_a_server_error_is_no_refusal_the_agent_reads(tmp_path):
    """A 500 (or a 400 without the provider's message) is a run error, never taken for a refusal."""
    from replaylab.replay.agent.context_limit import ProviderRefusedRequest

    forget_llm_cassettes()
    server = ChatServer(_weather, refuse=lambda body: (500, {"error": {"message": "boom"}}))
    try:
        model = make_model(
            "litellm/openai/local", llm_cassette=tmp_path / "llm.cassette.yaml", record_mode="once", api_base=server.url
        )
        with pytest.raises(Exception) as error:
            model.complete([], TOOLS)
    finally:
        server.stop()
    assert not isinstance(error.value, ProviderRefusedRequest)
