"""Route 6: the weaker gaps of the second adversarial pass, one test each, each asserting what a
user would lose.

* `record` decoded a gzip body as UTF-8 with replacement characters and wrote the garbage: a
  cassette nobody can read or scrub. Now a compressed body is kept decompressed (and scrubbed: a
  password and a session cookie in it are redacted), and a body that is not text fails the
  recording, naming the request, with nothing written.
* a `tool_classes.json` could class `send_email` read with nothing saying it overrode the mutating
  rule: now the item's report says it, and so does every classification's reason.
* a cassette that answered a call with another tool's text passed: now it is an error.
* a leaf on an abandoned branch made a session "not exercised" with no word about the abandoned
  entries: now the reason says what the file holds off the replayed path.

(The other gaps have tests of their own: a `class_for` returning None or never returning in
test_pack_out_of_process.py, escaped control and invisible characters in test_visible_text.py, a
token in a suite's file name in test_run_secrets.py.)
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from builders.transcripts import Session
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.qa.pipeline import RunOptions, run_item
from replaylab.replay.recorder import record_session
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

PASSWORD = "Hunter-" + "2-vault"
#: a session cookie as a server sets it, in the body `record` writes (it leaked there)
SESSION_COOKIE = "sid" + "9Rt4Wz8Kc1NbQx"

GZIP_PACK = textwrap.dedent(
    f"""\
    import gzip, json, urllib.request
    from loopback import BytesService
    from replaylab import ToolOutput, ToolSpec

    TICKET = {{"ticket": "TCK-5001", "password": {PASSWORD!r}, "note": "café déjà vu, naïve ünïcode",
              "login": "sessionid={SESSION_COOKIE}; Path=/; HttpOnly"}}

    def _answer(path):
        if path.startswith("/blob"):
            return {{"Content-Type": "application/octet-stream"}}, bytes(range(256)) * 4
        body = gzip.compress(json.dumps(TICKET, ensure_ascii=False).encode())
        return {{"Content-Type": "application/json", "Content-Encoding": "gzip"}}, body

    def start_service():
        return BytesService(_answer)

    def _get(url):
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        with opener.open(url, timeout=5) as response:
            data = response.read()
            if response.headers.get("Content-Encoding") == "gzip":
                data = gzip.decompress(data)
            return data

    def get_ticket(args, ctx):
        return ToolOutput(_get(f"{{ctx.base_url}}/tickets/TCK-5001").decode())

    def get_blob(args, ctx):
        return ToolOutput(f"{{len(_get(f'{{ctx.base_url}}/blob'))}} bytes")

    _schema = {{"type": "object", "properties": {{}}}}
    TOOLS = [ToolSpec("get_ticket", "a ticket", _schema, "read", get_ticket),
             ToolSpec("get_blob", "a blob", _schema, "read", get_blob)]
    """
)


def _script(folder: Path, tool: str) -> Path:
    script = folder / f"{tool}.yaml"
    steps = [{"tool_calls": [{"name": tool, "arguments": {}}]}, {"say": "done"}]
    script.write_text(yaml.safe_dump({"name": tool, "turns": [{"user": "go", "steps": steps}]}), encoding="utf-8")
    return script


@pytest.fixture()
def gzip_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"rl_gzip_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(GZIP_PACK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_record_keeps_a_gzip_body_as_its_text_scrubbed_never_as_garbage(tmp_path: Path, gzip_pack: str) -> None:
    recorded = record_session(tools=gzip_pack, out_dir=tmp_path / "out", script=_script(tmp_path, "get_ticket"))
    [interaction] = yaml.safe_load(recorded.cassette.read_text(encoding="utf-8"))["interactions"]
    body = interaction["response"]["body"]["string"]
    assert "\ufffd" not in body and "café déjà vu, naïve ünïcode" in body and "TCK-5001" in body
    assert PASSWORD not in body and SESSION_COOKIE not in body and "[REDACTED]" in body
    assert SESSION_COOKIE not in recorded.cassette.read_text(encoding="utf-8")
    assert not any(name.lower() == "content-encoding" for name in interaction["response"]["headers"])
    [turn] = recorded.trace.turns
    assert "naïve ünïcode" in turn.tool_calls[0].result  # what the tool read, as the cassette holds it


def test_record_refuses_a_body_that_is_not_text_naming_it_and_writes_nothing(tmp_path: Path, gzip_pack: str) -> None:
    with pytest.raises(InputError) as error:
        record_session(tools=gzip_pack, out_dir=tmp_path / "out", script=_script(tmp_path, "get_blob"))
    message = str(error.value)
    assert "GET http://127.0.0.1:" in message and "/blob is not UTF-8 text (1,024 bytes" in message
    assert "nothing was written" in message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ---------------------------------------------------------------- classes, cassettes, branches


def _session(folder: Path, answers: dict[str, str], calls: list[tuple[str, dict]]) -> Path:
    rec = folder / "rec"
    rec.mkdir()
    session = Session("s")
    session.user("Look up order W1001 in detail. " + "Please be thorough. " * 60)
    session.tool_turn("get_order", {"order": "W1001"}, json.dumps({"order": "W1001", "items": ["mat"] * 150}))
    session.assistant("It shipped. " + "Details follow. " * 80)
    session.user("And now the rest.")
    for tool, args in calls:
        session.tool_turn(tool, args, answers.get(tool, '{"ok": true}'))
    session.assistant("Done.")
    session.write(rec / "s.jsonl")
    return rec


def _run(folder: Path, suite_text: str):
    (folder / "suite.yaml").write_text(suite_text, encoding="utf-8")
    suite = load_suite(folder / "suite.yaml")
    [scenario] = suite.scenarios
    return run_item(scenario, suite.recordings[0], RunOptions(work_dir=folder))


def _cassette(rec: Path, calls: list[tuple[str, dict, str]]) -> None:
    first = ("get_order", {"order": "W1001"}, json.dumps({"order": "W1001", "items": ["mat"] * 150}))
    (rec / "s.cassette.yaml").unlink(missing_ok=True)  # written exclusively: a new one replaces it
    write_cassette(rec / "s.cassette.yaml", [recorded_tool_interaction(*call) for call in (first, *calls)])


SUITE = "name: s\nrecordings: rec/*.jsonl\ncompaction: {mode: auto}\ncompact_at: turn:2\n"


def test_a_declaration_that_overrides_a_mutating_rule_says_so(tmp_path: Path) -> None:
    rec = _session(tmp_path, {}, [("send_email", {"to": "mia@example.com"})])
    _cassette(rec, [("send_email", {"to": "mia@example.com"}, '{"ok": true}')])
    (rec / "tool_classes.json").write_text(json.dumps({"get_order": "read", "send_email": "read"}), encoding="utf-8")
    result = _run(tmp_path, SUITE)
    assert result.outcome == "passed", result.reason  # as declared: the user's choice stands
    [note] = [d for d in result.diagnostics if "send_email" in d]
    assert "declared read, overriding a mutating rule" in note and "`send`" in note
    assert not any("get_order" in d for d in result.diagnostics)  # a read no rule calls mutating: nothing to say


def test_a_cassette_answering_a_call_with_another_tools_text_is_an_error(tmp_path: Path) -> None:
    calls = [("get_customer", {"id": "C7"})]
    rec = _session(tmp_path, {"get_customer": '{"customer": "C7", "name": "Mia"}'}, calls)
    (rec / "tool_classes.json").write_text(json.dumps({"get_order": "read", "get_customer": "read"}), encoding="utf-8")
    _cassette(rec, [("get_customer", {"id": "C7"}, '{"customer": "C7", "name": "Mia"}')])
    assert _run(tmp_path, SUITE).outcome == "passed"  # the control: the cassette agrees with the recording
    _cassette(rec, [("get_customer", {"id": "C7"}, '{"order": "W1001", "status": "REFUNDED"}')])
    result = _run(tmp_path, SUITE)
    assert result.outcome == "error", result.reason
    [differs] = {d.message: d for d in result.defects if d.code == Code.CASSETTE_MISSING}.values()
    assert differs.detail["kind"] == "answer_differs" and differs.where.tool == "get_customer"
    assert "REFUNDED" in str(differs.actual) and "Mia" in str(differs.expected)
    answered = [c.result for run in (result.baseline, result.compacted) if run for t in run.turns for c in t.tool_calls]
    assert answered and all("REFUNDED" not in text for text in answered)  # the agent got the recording's answer


def test_a_leaf_on_an_abandoned_branch_says_what_the_file_holds_off_it(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    rec.mkdir()
    session = Session("branch")
    first = session.user("First ask. " + "Be thorough. " * 60)
    session.assistant("Answer one. " + "Details. " * 60)
    session.user("Second ask.")
    session.assistant("Answer two. " + "More. " * 60)
    session.user("Third ask.")
    session.assistant("Answer three.")
    session.last = first  # the file's last entry answers the first ask again: a branch from it
    session.assistant("A different answer to the first ask.")
    session.write(rec / "s.jsonl")
    write_cassette(rec / "s.cassette.yaml", [])
    result = _run(tmp_path, "name: s\nrecordings: rec/*.jsonl\n")
    assert result.outcome == "skipped" and result.reason.startswith("not exercised: one user turn")
    said = "the file's last entry (entry e0007, line 8) is the leaf pi resumes from; an abandoned branch leaves it at"
    assert said in result.reason and "5 entries of the file (2 user turns) are on abandoned branches" in result.reason
    assert any("abandoned branches" in d for d in result.diagnostics)


def test_an_entry_that_cannot_be_read_stays_on_the_path_and_the_item_reads_the_whole_session(tmp_path: Path) -> None:
    """An assistant entry whose content is a number: no model of replaylab reads it, but both
    agents' paths run through it (OpenClaw keeps it aside; pi holds it as written). It stays on
    the path with no message, so the earlier turns are still replayed and measured; the load's
    error names its line, id and field and says what became of it. Before, the entry was skipped
    and the path from the last entry stopped after it, losing every earlier turn."""
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import UnreadableEntry

    rec = tmp_path / "rec"
    rec.mkdir()
    session = Session("cut")
    session.user("First ask. " + "Be thorough. " * 60)
    session.assistant("Answer one. " + "Details. " * 60)
    session.user("Second ask.")
    broken, _ = session.assistant("Answer two. " + "More. " * 60)
    session.user("Third ask.")
    session.assistant("Answer three.")
    next(line for line in session.lines if line.get("id") == broken)["message"]["content"] = -1
    session.write(rec / "s.jsonl")
    write_cassette(rec / "s.cassette.yaml", [])
    path = load_transcript(rec / "s.jsonl").leaf_path()
    assert [e.id for e in path] == ["e0001", "e0002", "e0003", "e0004", "e0005", "e0006"]
    assert isinstance(path[3], UnreadableEntry) and path[3].written_type == "message"
    for agent in ("pi@0.73.1", "openclaw@2026.9.6"):
        result = _run(tmp_path, f"name: s\nrecordings: rec/*.jsonl\nagent: {agent}\n")
        # the whole session is measured (the first turn's long texts are in its largest window)
        assert "stops at" not in result.reason and "abandoned" not in result.reason, result.reason
        assert "largest turn-start window 336 tokens" in result.reason, result.reason
        [error] = [d for d in result.diagnostics if "error[" in d]
        assert ":5: error[invalid-entry] entry e0004 field 'message.content'" in error
        assert "stays on the path" in error and "aside" not in " ".join(d for d in result.diagnostics if d != error)


@pytest.mark.parametrize("agent", ["openclaw@2026.9.6", "pi@0.73.1"])
def test_entries_the_agent_keeps_aside_are_named_with_why_and_the_path_runs_through_them(
    tmp_path: Path, agent: str
) -> None:
    """Two entries whose timestamps are epoch milliseconds: pi reads them like any other entry;
    OpenClaw's entry schema keeps them aside, in none of its contexts (the path runs through them).
    Under OpenClaw the item says how many and why, and its window lacks their messages; under pi
    there is nothing to say and they are in its window."""
    rec = tmp_path / "rec"
    rec.mkdir()
    session = Session("aside")
    session.user("First ask. " + "Be thorough. " * 60)
    answer, _ = session.assistant("Answer one. " + "Details. " * 60)
    session.user("Second ask. " + "Again. " * 60)
    session.assistant("Answer two. " + "More. " * 60)
    second = session.user("Third ask.")
    session.assistant("Answer three.")
    for line in session.lines:
        if line.get("id") in (answer, second):
            line["timestamp"] = 1775811600000
    session.write(rec / "s.jsonl")
    write_cassette(rec / "s.cassette.yaml", [])
    result = _run(tmp_path, f"name: s\nrecordings: rec/*.jsonl\nagent: {agent}\n")
    notes = [d for d in result.diagnostics if "aside" in d]
    assert not any("error[" in d for d in result.diagnostics)
    if agent.startswith("openclaw"):  # without the two, too small for a compaction to gain: the reason says why
        assert notes == [
            "openclaw 2026.9.6 keeps 2 of the path's 6 entries aside as it loads the session, in no context, the "
            f"path running through them (first: entry {answer}, line 3: its timestamp is a JSON number, not a string)"
        ]
        assert result.outcome == "skipped" and notes[0] in result.reason, result.reason
    else:
        assert notes == [] and result.outcome == "passed", result.reason
        assert answer in [item.entry_id for item in result.window_before]


def _with_epoch_timestamps(name: str, wanted, folder: Path):
    """For each entry of the bundled recording `name` that `wanted(entry)` picks: a copy of the
    recording (and its cassette) in a folder of its own where that entry's timestamp is epoch
    milliseconds. Yields (line index, that entry as changed, the copy)."""
    import shutil

    from replaylab.cassette import cassette_path_for

    source = REPO_ROOT / "recordings" / "helpdesk" / name
    recorded = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = [i for i, entry in enumerate(recorded) if wanted(entry)]
    assert len(picked) > 10
    for index in picked:
        lines = json.loads(json.dumps(recorded))
        lines[index]["timestamp"] = 1775811600000
        copy = folder / str(index) / source.name
        copy.parent.mkdir()
        copy.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        shutil.copy(cassette_path_for(source), cassette_path_for(copy))
        yield index, lines[index], copy


def _openclaw_safeguard():
    suite = load_suite(REPO_ROOT / "suites" / "safeguard.yaml")
    return next(s for s in suite.scenarios if s.name == "safeguard").model_copy(update={"agent": "openclaw@2026.9.6"})


def _role(entry: dict) -> str | None:
    return (entry.get("message") or {}).get("role")


def test_a_result_the_agent_keeps_aside_is_no_pair_the_compaction_broke(tmp_path: Path) -> None:
    """Each tool result of a recording in turn carries an epoch-ms timestamp: OpenClaw keeps it
    aside as it loads the session, so its call has no result in any of OpenClaw's contexts, before
    the compaction as after it. The compaction did not part them: no PAIR_BROKEN (those in the
    turns around the cut were), and the item names the entry OpenClaw keeps aside."""
    scenario = _openclaw_safeguard()
    picked = _with_epoch_timestamps("readonly-missing-parcel.jsonl", lambda e: _role(e) == "toolResult", tmp_path)
    for index, entry, copy in picked:
        result = run_item(scenario, copy, RunOptions(work_dir=copy.parent))
        assert result.outcome == "passed", (index, result.reason, [d.message for d in result.defects])
        [aside] = [d for d in result.diagnostics if "aside" in d]
        assert f"entry {entry['id']}, line {index + 1}" in aside


def test_a_restated_entry_the_agent_keeps_aside_is_checked_where_the_agent_rebuilds(tmp_path: Path) -> None:
    """Each assistant entry in turn carries an epoch-ms timestamp. Safeguard restates the entries
    it protects or keeps byte for byte after its compaction, so OpenClaw keeps the copy aside
    too, and the working copy's leaf can be an entry OpenClaw does not know. The window check asks
    OpenClaw at the nearest entry it reads (the same window): every item is checked and equal."""
    scenario = _openclaw_safeguard()
    picked = _with_epoch_timestamps("ambiguous-customer-expedite.jsonl", lambda e: _role(e) == "assistant", tmp_path)
    for index, _, copy in picked:
        result = run_item(scenario, copy, RunOptions(work_dir=copy.parent, verify_with_pi="on"))
        assert result.outcome != "error", (index, result.reason)
        assert result.verified_windows >= 1 or result.outcome == "skipped", (index, result.reason)


@pytest.mark.parametrize("agent", ["pi@0.73.1", "openclaw@2026.9.6"])
@pytest.mark.parametrize("numbered", [True, False], ids=["call_k", "no-ids"])
def test_call_ids_a_provider_reuses_in_every_message_give_the_same_verdicts(
    tmp_path: Path, agent: str, numbered: bool
) -> None:
    """Some providers number their tool calls afresh in every message (`call_0`, `call_1` each
    time); a server that gives none leaves pi with `""` for every call. Safeguard protected every
    result sharing an id with a write, without its call, and the checks matched copies by id
    alone: false PAIR_BROKEN and MUTATION_ALTERED. A result answers the latest call of its id
    before it (parallel calls of one id in order), as the providers pair them. With the ids renamed
    so, each bundled recording gets the verdict it gets as recorded, every window verified by the
    agent."""
    import shutil

    from replaylab.cassette import cassette_path_for

    suite = load_suite(REPO_ROOT / "suites" / "safeguard.yaml")
    scenario = next(s for s in suite.scenarios if s.name == "safeguard").model_copy(update={"agent": agent})
    for name in ("cancel-two-orders", "parallel-order-overview", "long-account-review"):
        source = REPO_ROOT / "recordings" / "helpdesk" / f"{name}.jsonl"
        lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        renamed: dict[str, str] = {}
        for line in lines:
            message = line.get("message") if line.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                calls = [block for block in message["content"] if block.get("type") == "toolCall"]
                for k, block in enumerate(calls):
                    renamed[block["id"]] = f"call_{k}" if numbered else ""
                    block["id"] = renamed[block["id"]]
            elif message.get("role") == "toolResult":
                message["toolCallId"] = renamed.get(message["toolCallId"], message["toolCallId"])
        # both under a name of their own: the suite's expectations by file name hold the recorded ids
        original, recording = tmp_path / "as-recorded" / f"{name}-x.jsonl", tmp_path / "reused" / f"{name}-x.jsonl"
        for path in (original, recording):
            path.parent.mkdir(exist_ok=True)
            shutil.copyfile(cassette_path_for(source), cassette_path_for(path))
        shutil.copyfile(source, original)
        recording.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        recorded = run_item(scenario, original, RunOptions(verify_with_pi="on"))
        reused = run_item(scenario, recording, RunOptions(verify_with_pi="on"))
        assert reused.outcome == recorded.outcome, (name, reused.reason)
        assert sorted(d.code.value for d in reused.defects) == sorted(d.code.value for d in recorded.defects), name
        assert reused.verified_windows == recorded.verified_windows >= 1, name
