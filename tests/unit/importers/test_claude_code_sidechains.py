"""Claude Code sub-agents become child sessions whichever way the CLI kept them: 1.0.x inline in the
main file (`isSidechain: true`, `parentUuid: null`), 2.0.x in `agent-<id>.jsonl` beside the session,
2.1.x under `<sessionId>/subagents/` (test_importers.py). A sidechain never joins the main
conversation; each is joined to the Task call that spawned it; a 2.0.x session's results pair by
`tool_use_id`. The record shapes here are those of the real files of ../shared/data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.claude_code_logs import SESSION, Log, workflow_session
from replaylab.importers import import_sessions, write_session
from replaylab.importers.claude_code_sidechains import sidechain_beside_its_session
from replaylab.importers.writing import renamed
from replaylab.safety import ToolClassifier, build_ledger
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry, ToolResultMessage, UserMessage


def _inline_session(tmp_path: Path) -> Path:
    """1.0.x: two parallel Task calls, their sub-agents' records inline between the calls and the
    results (one writes a file), then a second user turn."""
    log = Log()
    log.user("audit the config and fix the typo")
    log.call("toolu_T1", "Task", {"description": "find configs", "prompt": "List every config file"})
    log.call("toolu_T2", "Task", {"description": "fix typo", "prompt": "Fix the typo in README.md"})
    log.user("Fix the typo in README.md", side=True, root=True)  # the second call's agent runs first
    log.call("toolu_S1", "Edit", {"file_path": "README.md", "old_string": "teh", "new_string": "the"}, side=True)
    log.result("toolu_S1", "ok", side=True)
    log.say("Fixed.", side=True)
    log.user("List every config file", side=True, root=True)
    log.call("toolu_S2", "Glob", {"pattern": "**/*.toml"}, side=True)
    log.result("toolu_S2", "pyproject.toml", side=True)
    log.say("One: pyproject.toml", side=True)
    log.result("toolu_T1", "One: pyproject.toml", {"content": [{"type": "text", "text": "One"}], "totalTokens": 9})
    log.result("toolu_T2", "Fixed.", {"content": [{"type": "text", "text": "Fixed."}], "totalTokens": 7})
    log.say("Done: one config, typo fixed.")
    log.user("thanks, now show the diff")
    log.call("toolu_M1", "Bash", {"command": "git diff", "description": "Show the diff"})
    log.result("toolu_M1", "-teh\n+the", {"stdout": "-teh\n+the", "stderr": "", "interrupted": False})
    log.say("Here it is.")
    return log.write(tmp_path / f"{SESSION}.jsonl")


def test_inline_sidechains_are_children_never_turns_of_the_main_session(tmp_path: Path) -> None:
    (session,) = import_sessions("claude-code", _inline_session(tmp_path))
    users = [e for e in session.entries if e["type"] == "message" and e["message"]["role"] == "user"]
    prompts = [u["message"]["content"] for u in users if isinstance(u["message"]["content"], str)]
    assert prompts == ["audit the config and fix the typo", "thanks, now show the diff"]
    assert not any("toolu_S" in json.dumps(e) for e in session.entries)  # no sub-agent call in the main
    children = {c.name: c for c in session.children}
    assert sorted(children) == ["sidechain-1", "sidechain-2"]  # numbered in file order, made as results come
    fix = children["sidechain-1"]
    assert [e["message"]["content"] for e in fix.entries if e["message"]["role"] == "user"][0] == (
        "Fix the typo in README.md"
    )
    assert fix.header["parentSession"] == f"{SESSION}.jsonl"
    links = {
        e["message"]["toolCallId"]: e["message"]["details"]["replaylab"]["childSession"]
        for e in session.entries
        if e["type"] == "message" and e["message"]["role"] == "toolResult" and e["message"].get("details")
    }
    # joined by the prompt each sub-agent's first record repeats, not by file order
    assert links == {"toolu_T1": f"{SESSION}.sub-sidechain-2.jsonl", "toolu_T2": f"{SESSION}.sub-sidechain-1.jsonl"}
    assert session.notes == []


def test_an_inline_sub_agents_write_is_an_event_of_the_parent_ledger(tmp_path: Path) -> None:
    (session,) = import_sessions("claude-code", _inline_session(tmp_path))
    out = tmp_path / "out"
    transcript, _ = write_session(session, out)
    assert sorted(p.name for p in out.glob("*.jsonl")) == [
        f"{SESSION}.jsonl",
        f"{SESSION}.sub-sidechain-1.jsonl",
        f"{SESSION}.sub-sidechain-2.jsonl",
    ]
    loaded = load_transcript(transcript)
    assert not [d for d in loaded.diagnostics if d.severity == "error"]
    ledger = build_ledger(loaded, ToolClassifier())
    assert [(e.tool, e.event_id.split(":")[-1]) for e in ledger.events] == [("Edit", "toolu_S1")]
    assert ledger.exempted[-1].reason.endswith("`git diff`")  # the main's own read-only Bash


def test_an_inline_sidechain_without_a_matching_prompt_joins_the_task_call_it_follows(tmp_path: Path) -> None:
    log = Log()
    log.user("explore")
    log.call("toolu_T1", "Task", {"description": "explore", "prompt": "Look around the repo"})
    log.user("You are exploring. Look around the repo carefully.", side=True, root=True)
    log.say("Nothing special.", side=True)
    log.result("toolu_T1", "Nothing special.")
    log.say("ok")
    (session,) = import_sessions("claude-code", log.write(tmp_path / "s.jsonl"))
    (link,) = [
        e["message"]["details"]["replaylab"]["childSession"]
        for e in session.entries
        if e["message"].get("role") == "toolResult" and e["message"].get("details")
    ]
    assert link == "s.sub-sidechain-1.jsonl"


def _v2(tmp_path: Path, agent_id: str | None) -> Path:
    """2.0.x: the main session and `agent-<id>.jsonl` beside it; the Task result names the agent."""
    log = Log("2.0.76")
    log.user("check the build")
    log.call("toolu_T1", "Task", {"description": "build", "prompt": "Run the build"})
    log.result("toolu_T1", "Built.", {"agentId": agent_id, "status": "completed"} if agent_id else {})
    log.say("Built fine.")
    main = log.write(tmp_path / f"{SESSION}.jsonl")
    agent = Log("2.0.76")
    agent.user("Run the build", side=True, root=True, agentId="a1b2c3d")
    agent.call("toolu_S1", "Bash", {"command": "make build"}, side=True, agentId="a1b2c3d")
    agent.result("toolu_S1", "ok", side=True, agentId="a1b2c3d")
    agent.say("Built.", side=True, agentId="a1b2c3d")
    agent.write(tmp_path / "agent-a1b2c3d.jsonl")
    return main


@pytest.mark.parametrize("named", [True, False])  # by toolUseResult.agentId, else by the prompt
def test_a_2_0_sub_agent_file_beside_the_session_is_its_child(tmp_path: Path, named: bool) -> None:
    main = _v2(tmp_path, "a1b2c3d" if named else None)
    assert sidechain_beside_its_session(tmp_path / "agent-a1b2c3d.jsonl")
    assert not sidechain_beside_its_session(main)
    (session,) = import_sessions("claude-code", main)
    (child,) = session.children
    assert child.name == "agent-a1b2c3d" and child.header["source"]["agentId"] == "a1b2c3d"
    ledger = build_ledger(load_transcript(write_session(session, tmp_path / "out")[0]), ToolClassifier())
    assert [e.tool for e in ledger.events] == ["Bash"]  # `make build`: the child's write, in the parent's ledger
    (folder_session,) = import_sessions("claude-code", tmp_path)  # a folder: the agent file is no session of its own
    assert [c.name for c in folder_session.children] == ["agent-a1b2c3d"]


@pytest.mark.realdata
def test_the_real_2_0_session_keeps_its_warm_up_sidechain_as_a_child_and_pairs_by_tool_use_id(
    shared_data: Path, tmp_path: Path
) -> None:
    sessions = shared_data / "claude-code-fasthooks" / "sessions"
    (session,) = import_sessions("claude-code", sessions / "sample_main_transcript.jsonl")
    (child,) = session.children
    assert child.name == "agent-af1ff21" and len(child.entries) == 2
    assert "spawned by no Task call" in session.notes[0]  # the CLI's own warm-up
    transcript = load_transcript(write_session(session, tmp_path)[0])
    assert not [d for d in transcript.diagnostics if d.severity == "error"]
    # 2.0.x results carry no sourceToolAssistantUUID: each pairs with its call by tool_use_id
    path = transcript.leaf_path()
    calls = [
        b.id
        for e in path
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
        for b in e.message.tool_calls()
    ]
    results = [
        e.message.tool_call_id for e in path if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]
    assert len(calls) == 10 and sorted(calls) == sorted(results)
    users = [e for e in path if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)]
    assert not any("Warmup" in str(u.message.content) for u in users)
    assert sidechain_beside_its_session(sessions / "sample_agent_sidechain.jsonl")


def _beside_a_session(folder: Path, agent: Log, name: str) -> Path:
    """A 2.1.x session of one short exchange, with `agent` written as `name` in its `subagents/`
    folder; the session's file."""
    log = Log(version=agent.version)
    log.user("look around")
    log.say("Looking.")
    main = log.write(folder / f"{SESSION}.jsonl")
    (folder / SESSION / "subagents").mkdir(parents=True)
    agent.write(folder / SESSION / "subagents" / name)
    return main


def test_a_2_1_sub_agent_file_no_task_result_names_is_a_child_no_call_names(tmp_path: Path) -> None:
    """Claude Code's own warm-up agents (and any agent whose call is missing) are kept as a child
    with a note, as an inline sidechain no call spawned is: their calls are not lost."""
    agent = Log(version="2.1.39")
    agent.user("Warmup", side=True, root=True)
    agent.call("toolu_W1", "Bash", {"command": "grep -rn TODO ."}, side=True)
    agent.result("toolu_W1", "a.py:1: TODO", side=True)
    agent.say("Ready.", side=True)
    (session,) = import_sessions("claude-code", _beside_a_session(tmp_path, agent, "agent-a0ad4f44.jsonl"))
    assert [c.name for c in session.children] == ["agent-a0ad4f44"]
    assert any("kept as a child no call names" in note for note in session.notes)
    written, _ = write_session(session, tmp_path / "out")
    child = load_transcript(written.with_name(f"{SESSION}.sub-agent-a0ad4f44.jsonl"))
    assert [e.message.tool_calls()[0].arguments for e in child.entries if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage) and e.message.tool_calls()] == [{"command": "grep -rn TODO ."}]  # fmt: skip


@pytest.mark.parametrize(
    "prefix", ["agent-acompact-", "agent-aprompt_suggestion-", "agent-aside_question-", "agent-asession_memory-"]
)
def test_a_query_claude_code_forks_for_itself_is_no_sub_agent(tmp_path: Path, prefix: str) -> None:
    """Claude Code logs its own side queries in `subagents/` (the compaction call, the prompt it
    suggests next, a /btw question): no Task spawned them, and none is a child of the session;
    each is skipped with a note saying what it is."""
    side = Log(version="2.1.29")
    side.user("Suggest the next prompt", side=True, root=True)
    side.say("run the tests", side=True)
    (session,) = import_sessions("claude-code", _beside_a_session(tmp_path, side, f"{prefix}221b3e.jsonl"))
    assert session.children == []
    (note,) = [n for n in session.notes if prefix in n]
    assert note.endswith("not a sub-agent session") and "kept as a child" not in note


@pytest.mark.parametrize(
    ("result", "child"),
    [
        ({"status": "completed", "agentId": "a5c0ffee"}, "agent-a5c0ffee"),  # its file is not in the folder
        ({"status": "teammate_spawned", "agent_id": "worker@team-blue", "name": "worker"}, "agent-worker-team-blue"),
    ],
    ids=["sub-agent without its file", "agent team's teammate"],
)
def test_an_agent_whose_calls_are_in_no_file_here_is_a_mutating_event(tmp_path: Path, result: dict, child: str) -> None:
    """What an agent did is unknown when its session is not here — a sub-agent whose file is
    missing, a teammate of an agent team, which runs in a session of its own: its call names the
    child all the same, the ledger counts it as an event of its own, and a note says why."""
    log = Log(version="2.1.220")
    log.user("ship the release")
    log.call("toolu_A1", "Agent", {"description": "release", "prompt": "tag and publish v2"})
    log.result("toolu_A1", "Started.", result)
    log.say("Started it.")
    (tmp_path / SESSION / "subagents").mkdir(parents=True)
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    written, _ = write_session(session, tmp_path / "out")
    ledger = build_ledger(load_transcript(written), ToolClassifier())
    assert ledger.unresolved_children == [f"{SESSION}.sub-{child}.jsonl"]
    assert [(e.tool, e.tool_class) for e in ledger.events] == [("Agent", "subagent-unresolved")]
    assert any("not in this import" in note for note in session.notes)


def test_a_task_result_record_names_its_agent_on_the_record_itself(tmp_path: Path) -> None:
    """Some 2.0.x results carry the agent's id on the record, not in `toolUseResult`: the Task
    call is joined to the sidechain of that agent, not to another one by file order."""
    log = Log(version="2.0.50")
    log.user("research it")
    log.call("toolu_T1", "Task", {"description": "research", "prompt": "Research data-border-color"})
    log.user("Research something else", side=True, root=True)
    log.say("Nothing.", side=True)
    log.user("Research data-border-color later", side=True, root=True, agentId="e1c84ba5")
    log.say("Found it.", side=True, agentId="e1c84ba5")
    log.result("toolu_T1", "Found it.", agentId="e1c84ba5")
    log.say("Done.")
    (session,) = import_sessions("claude-code", log.write(tmp_path / f"{SESSION}.jsonl"))
    links = [
        e["message"]["details"]["replaylab"]["childSession"]
        for e in session.entries
        if e["type"] == "message" and e["message"]["role"] == "toolResult" and e["message"].get("details")
    ]
    assert links == [f"{SESSION}.sub-agent-e1c84ba5.jsonl"]


def test_a_workflow_runs_agent_in_a_folder_below_subagents_is_a_child(tmp_path: Path) -> None:
    (session,) = import_sessions("claude-code", workflow_session(tmp_path))
    assert [c.name for c in session.children] == ["agent-ag1"]
    assert any("an agent of a Workflow run" in note for note in session.notes)
    written, _ = write_session(session, tmp_path / "out")
    child = load_transcript(written.with_name(f"{SESSION}.sub-agent-ag1.jsonl"))
    calls = [c.name for e in child.entries if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage) for c in e.message.tool_calls()]  # fmt: skip
    assert calls == ["Edit"]
    # the project's folder imports it the same way, and never as a session of its own
    (again,) = import_sessions("claude-code", tmp_path)
    assert [c.name for c in again.children] == ["agent-ag1"]


def _progress(log: Log, call_id: str, agent_id: str, record: dict, kind: str = "agent_progress") -> None:
    """A `progress` record as 2.1.39 writes one into the parent's log for each step of a running
    sub-agent (`parentToolUseID`: the spawning call; `data.agentId`: the agent)."""
    log.n += 1
    data = {"message": {k: record[k] for k in ("type", "message", "uuid", "timestamp")}, "normalizedMessages": [],
            "type": kind, "prompt": "", "agentId": agent_id}  # fmt: skip
    log.records.append(
        {
            "type": "progress",
            "uuid": f"p{log.n:03d}",
            "parentUuid": log.last[False],
            "sessionId": SESSION,
            "isSidechain": False,
            "version": log.version,
            "timestamp": f"2026-02-12T16:00:{log.n:02d}.000Z",
            "data": data,
            "toolUseID": f"agent_msg_{log.n}",
            "parentToolUseID": call_id,
        }  # fmt: skip
    )


def _running_agent(tmp_path: Path, tool: str, ending: str) -> Path:
    """2.1.39: a `tool` call whose sub-agent writes pyproject.toml, each of its steps mirrored by a
    progress record in the parent's log; the call's result is `ending`'s: "interrupted" (the error
    text Claude Code writes for an aborted Task, naming no agent), "forked" (a forked Skill's),
    or "cut" (none: the log ends while the agent runs)."""
    log, agent = Log(version="2.1.39"), Log(version="2.1.39")
    log.user("release it")
    log.call("toolu_T1", tool, {"skill": "bump"} if tool == "Skill" else {"description": "bump", "prompt": "Bump it"})
    kind = "skill_progress" if tool == "Skill" else "agent_progress"
    _progress(log, "toolu_T1", "a7e57ab", agent.user("Bump it", side=True, root=True, agentId="a7e57ab"), kind)
    write = {"file_path": "/w/pyproject.toml", "content": "version = 2\n"}
    _progress(log, "toolu_T1", "a7e57ab", agent.call("toolu_S1", "Write", write, side=True, agentId="a7e57ab"), kind)
    _progress(log, "toolu_T1", "a7e57ab", agent.result("toolu_S1", "File written", side=True, agentId="a7e57ab"), kind)
    if ending == "interrupted":
        interrupted = "[Request interrupted by user for tool use]"
        content = [{"type": "tool_result", "tool_use_id": "toolu_T1", "content": interrupted, "is_error": True}]
        log.add("user", {"role": "user", "content": content}, toolUseResult=f"Error: {interrupted}")
        log.user(interrupted)
        log.user("never mind")
        log.say("OK.")
    elif ending == "forked":
        log.result("toolu_T1", "Launching skill: bump", {"success": True, "commandName": "bump", "status": "forked", "agentId": "a7e57ab", "result": "Bumped."})  # fmt: skip
        log.say("Bumped.")
    (tmp_path / SESSION / "subagents").mkdir(parents=True)
    agent.write(tmp_path / SESSION / "subagents" / "agent-a7e57ab.jsonl")
    return log.write(tmp_path / f"{SESSION}.jsonl")


@pytest.mark.parametrize(("tool", "ending"), [("Task", "interrupted"), ("Skill", "forked")])
def test_a_sub_agent_whose_result_does_not_name_it_is_joined_by_its_progress_records(
    tmp_path: Path, tool: str, ending: str
) -> None:
    """An interrupted Task's result is an error text naming no agent, but the agent ran and wrote;
    a forked Skill runs its skill in a sub-agent of its own: either agent's write is an event of
    the parent's ledger, its spawning call unsafe."""
    (session,) = import_sessions("claude-code", _running_agent(tmp_path, tool, ending))
    assert [c.name for c in session.children] == ["agent-a7e57ab"]
    assert not any("no call names" in note for note in session.notes)
    ledger = build_ledger(load_transcript(write_session(session, tmp_path / "out")[0]), ToolClassifier())
    assert [(e.tool, e.event_id.split(":")[-1]) for e in ledger.events] == [("Write", "toolu_S1")]
    assert [call[:2] for call in ledger.spawn_calls] == [("toolu_T1", tool)]


@pytest.mark.parametrize("tool", ["Task", "Skill"])
def test_a_spawn_cut_while_its_sub_agent_ran_is_an_unresolved_spawn(tmp_path: Path, tool: str) -> None:
    """The log ends while the agent runs: no result names it, so its call is an event of its own,
    and a note names the progress record that ties the agent's file to the call. A forked Skill's
    agent is a spawn as a Task's is, though its class (`skill`) only loads a prompt."""
    (session,) = import_sessions("claude-code", _running_agent(tmp_path, tool, "cut"))
    assert [c.name for c in session.children] == ["agent-a7e57ab"]
    (note,) = [n for n in session.notes if "no result (the log ends" in n]
    assert note.startswith(f"{tmp_path / SESSION}.jsonl:3: {tool} call toolu_T1") and "agent a7e57ab" in note
    ledger = build_ledger(load_transcript(write_session(session, tmp_path / "out")[0]), ToolClassifier())
    assert [(e.tool, e.tool_class) for e in ledger.events] == [(tool, "subagent-unresolved")]


def _forked_slash_command(tmp_path: Path) -> Path:
    """2.1.39 `NVY`: the user types `/bump`, a prompt command with `context: fork`; its agent runs
    with the session's tools and writes pyproject.toml, its transcript in `subagents/`; its progress
    records are only drawn on screen, so the parent's log holds the command and its output alone,
    written when the agent has ended."""
    log, agent = Log(version="2.1.39"), Log(version="2.1.39")
    log.user("get the release ready")
    log.say("Ready when you are.")
    agent.user("Bump the version in pyproject.toml", side=True, root=True, agentId="a1b2c3d", at=10)
    write = {"file_path": "/w/pyproject.toml", "content": "version = 2\n"}
    agent.call("toolu_S1", "Write", write, side=True, agentId="a1b2c3d", at=11)
    agent.result("toolu_S1", "File written", side=True, agentId="a1b2c3d", at=12)
    agent.say("Bumped to 2.", side=True, agentId="a1b2c3d", at=13)
    log.user("/bump", at=20)
    log.user("<local-command-stdout>\nBumped to 2.\n</local-command-stdout>", at=21)
    log.user("what is the version now?", at=30)
    log.say("2.", at=31)
    (tmp_path / SESSION / "subagents").mkdir(parents=True)
    agent.write(tmp_path / SESSION / "subagents" / "agent-a1b2c3d.jsonl")
    return log.write(tmp_path / f"{SESSION}.jsonl")


def test_a_forked_slash_commands_agent_no_call_names_writes_for_its_session(tmp_path: Path) -> None:
    """No call names the agent of a forked slash command, but it ran in the session with its
    tools: its write is an event of the parent's ledger, naming the agent's file and line, and the
    command's message (the first after the agent ended) is what a compaction keeps of it. Renamed,
    the session still names its file; gone, the agent is unknown, and unknown is unsafe."""
    (session,) = import_sessions("claude-code", _forked_slash_command(tmp_path))
    assert [c.name for c in session.children] == ["agent-a1b2c3d"]
    written, _ = write_session(session, tmp_path / "out")
    transcript = load_transcript(written)
    (command,) = [e.id for e in transcript.entries if isinstance(e, MessageEntry) and e.message.content == "/bump"]
    ledger = build_ledger(transcript, ToolClassifier())
    assert ledger.replay_safe is False
    assert [e.tool for e in ledger.events] == ["Write"]
    assert f"at {SESSION}.sub-agent-a1b2c3d.jsonl:3: sub-agent" in ledger.events[0].reason
    assert ledger.spawn_calls == [(f"unlinked:{SESSION}.sub-agent-a1b2c3d.jsonl", "sub-agent", command, None)]
    again, _ = write_session(renamed(session, "other"), tmp_path / "renamed")
    assert [e.tool for e in build_ledger(load_transcript(again), ToolClassifier()).events] == ["Write"]
    written.with_name(f"{SESSION}.sub-agent-a1b2c3d.jsonl").unlink()
    (event,) = build_ledger(load_transcript(written), ToolClassifier()).events
    assert (event.tool_class, event.entry_id) == ("subagent-unresolved", command)


def test_a_progress_record_whose_kind_is_no_string_is_no_sub_agents_progress(tmp_path: Path) -> None:
    """A progress record's `data.type` of any JSON type is read as no sub-agent's progress (a list
    is unhashable: asked whether it is one of the progress kinds, it raised)."""
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "progress", "uuid": "p1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z"},
    ]
    records[0]["message"] = {"role": "user", "content": "hi"}
    records[1].update(data={"type": ["agent_progress"], "agentId": "a"}, parentToolUseID="t1")
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    [session] = import_sessions("claude-code", source)
    assert not session.children
