"""`replaylab import` over folders that hold more than sessions: every session that can be
imported is, and each file that cannot is printed as its problem (file, line, field), the exit
status 2. A user points it at the folder their agent writes to, which holds whatever else was
kept there: an empty log of a session that never started, another tool's JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.claude_code_logs import SESSION, Log
from builders.transcripts import message_chain_jsonl
from replaylab.cli import main
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.importers import import_sessions
from replaylab.transcript.load import load_transcript


def _claude_session(session_id: str, command: str) -> str:
    """A Claude Code session of one Bash call and its result, as the CLI writes it."""
    base = {"sessionId": session_id, "version": "2.1.38", "isSidechain": False, "cwd": "/work"}
    records = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "go"}},
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-x",
                "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "parentUuid": "u2",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        },
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.fixture
def claude_folder(tmp_path: Path) -> Path:
    """Two sessions with, sorted between them, an empty log and a hook's log (not Claude Code records)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a-session.jsonl").write_text(_claude_session("a", "ls"), encoding="utf-8")
    (folder / "b-empty.jsonl").write_text("", encoding="utf-8")
    (folder / "c-hooks.jsonl").write_text('{"hook": "PreToolUse", "ms": 3}\n', encoding="utf-8")
    (folder / "d-session.jsonl").write_text(_claude_session("d", "git status"), encoding="utf-8")
    return folder


def test_a_folder_imports_every_session_and_names_each_file_it_could_not(claude_folder, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["import", "--from", "claude-code", str(claude_folder), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert status == 2
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["a-session.jsonl", "d-session.jsonl"]
    assert "imported 2 sessions" in stdout and "2 problems (above)" in stdout
    problems = [line for line in stderr.splitlines() if "error[" in line]
    assert len(problems) == 2, stderr
    assert problems[0].startswith(f"{claude_folder / 'b-empty.jsonl'}: error[bad-import-source]")
    assert "is empty" in problems[0]
    assert problems[1].startswith(f"{claude_folder / 'c-hooks.jsonl'}:1: error[bad-import-source] field 'type'")
    assert "Traceback" not in stderr


def test_importing_again_writes_the_new_sessions_and_keeps_every_file_that_exists(claude_folder, tmp_path, capsys):
    out = tmp_path / "out"
    (claude_folder / "b-empty.jsonl").unlink()
    (claude_folder / "c-hooks.jsonl").unlink()
    (claude_folder / "d-session.jsonl").rename(claude_folder / "d-later.jsonl")
    assert main(["import", "--from", "claude-code", str(claude_folder / "a-session.jsonl"), "--out", str(out)]) == 0
    before = (out / "a-session.jsonl").read_bytes()
    capsys.readouterr()
    status = main(["import", "--from", "claude-code", str(claude_folder), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert status == 2 and "imported 1 sessions" in stdout
    assert (out / "d-later.jsonl").is_file() and (out / "a-session.jsonl").read_bytes() == before
    (problem,) = [line for line in stderr.splitlines() if "error[" in line]
    assert "a-session.jsonl: error[output-exists]" in problem


def test_every_source_is_tried_and_a_missing_one_is_a_problem_of_its_own(claude_folder, tmp_path, capsys):
    missing = tmp_path / "nowhere.jsonl"
    sources = [str(missing), str(claude_folder / "a-session.jsonl")]
    status = main(["import", "--from", "claude-code", *sources, "--out", str(tmp_path / "out")])
    stdout, stderr = capsys.readouterr()
    assert status == 2 and (tmp_path / "out" / "a-session.jsonl").is_file()
    assert f"{missing}: error[missing-file]" in stderr and "imported 1 sessions" in stdout


def test_an_unreadable_tool_classes_file_is_one_error_before_anything_is_written(claude_folder, tmp_path, capsys):
    classes = tmp_path / "classes.json"
    classes.write_text("[]", encoding="utf-8")
    argv = ["import", "--from", "claude-code", str(claude_folder), "--out", str(tmp_path / "out")]
    assert main([*argv, "--tool-classes", str(classes)]) == 2
    _, stderr = capsys.readouterr()
    assert stderr.count(str(classes)) == 1 and not (tmp_path / "out").exists()


def test_a_clean_folder_exits_0(claude_folder, tmp_path, capsys):
    for name in ("b-empty.jsonl", "c-hooks.jsonl"):
        (claude_folder / name).unlink()
    assert main(["import", "--from", "claude-code", str(claude_folder), "--out", str(tmp_path / "out")]) == 0
    stdout, stderr = capsys.readouterr()
    assert "imported 2 sessions" in stdout and "problem" not in stdout + stderr


def _pi_session(text: str) -> bytes:
    return message_chain_jsonl(
        [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}], "stopReason": "stop"},
        ]
    )


def test_the_importers_skip_a_bad_file_only_when_asked_to_list_it(tmp_path):
    """`import_sessions(..., problems=[...])` lists a folder's bad file and imports the rest, as
    each importer's folder does (here pi's, and τ²-bench's for a file that gives nothing); without
    the list, the first bad file raises, as the real-data sweep wants."""
    folder = tmp_path / "pi"
    folder.mkdir()
    (folder / "1.jsonl").write_bytes(_pi_session("first"))
    (folder / "2.jsonl").write_bytes(b'{"type": "message"}\n')  # no session header
    (folder / "3.jsonl").write_bytes(_pi_session("third"))
    problems: list[Diagnostic] = []
    sessions = list(import_sessions("pi", folder, problems=problems))
    assert len(sessions) == 2 and [d.file for d in problems] == [str(folder / "2.jsonl")]
    assert problems[0].line == 1 and problems[0].field == "type"
    with pytest.raises(InputError, match="2.jsonl"):
        list(import_sessions("pi", folder))

    tau2 = tmp_path / "tau2"
    tau2.mkdir()
    (tau2 / "broken.json").write_text("{", encoding="utf-8")
    (tau2 / "other.json").write_text('{"simulations": "none"}', encoding="utf-8")
    problems = []
    assert list(import_sessions("tau2-bench", tau2, problems=problems)) == []
    assert [(Path(d.file).name, d.field) for d in problems] == [("broken.json", None), ("other.json", "simulations")]


def _tau2_results(simulations: list) -> str:
    info = {"environment_info": {"domain_name": "telecom"}, "agent_info": {"llm": "gpt-4.1"}}
    return json.dumps({"info": info, "tasks": [], "simulations": simulations})


def _simulation(sim_id: str) -> dict:
    return {
        "id": sim_id,
        "task_id": "t",
        "messages": [
            {"role": "user", "content": "my phone has no data"},
            {"role": "assistant", "content": "Let me check."},
        ],
    }


@pytest.mark.parametrize(
    ("kind", "name", "text", "field"),
    [
        (
            "tau2-bench",
            "results.json",
            _tau2_results([_simulation("s1"), {"id": "s2"}, _simulation("s3")]),
            "simulations[1].messages",
        ),
        (
            "tau-bench",
            "gpt-4o-retail.json",
            json.dumps(
                [
                    {"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "hi"}]},
                    {"task_id": 2, "trial": 0, "traj": "not a list"},
                    {"task_id": 3, "trial": 0, "traj": [{"role": "user", "content": "hello"}]},
                ]
            ),
            "[1].traj",
        ),
        (  # a run that failed before its first message (τ-bench writes `traj: []` and the error)
            "tau-bench",
            "gpt-4o-airline.json",
            json.dumps(
                [
                    {"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "hi"}]},
                    {"task_id": 2, "trial": 0, "traj": [], "info": {"error": "EOF when reading a line"}},
                    {"task_id": 3, "trial": 0, "traj": [{"role": "user", "content": "hello"}]},
                ]
            ),
            "[1].traj",
        ),
        (
            "openai-chat",
            "chats.jsonl",
            "\n".join(
                json.dumps(chat)
                for chat in (
                    {"messages": [{"role": "user", "content": "a"}]},
                    {"messages": [{"role": "wizard", "content": "b"}]},
                    {"messages": [{"role": "user", "content": "c"}]},
                )
            ),
            None,
        ),
        (  # a log of one chat per line, cut off by a crash in the middle of a line
            "openai-chat",
            "cut.jsonl",
            json.dumps({"messages": [{"role": "user", "content": "a"}]})
            + '\n{"messages": [{"role": "user", "cont\n'
            + json.dumps({"messages": [{"role": "user", "content": "c"}]}),
            None,
        ),
        (  # a line holding no chat among the chats
            "openai-chat",
            "odd.jsonl",
            "\n".join(json.dumps(line) for line in ({"messages": []}, {"note": "x"}, {"messages": []})),
            "messages",
        ),
    ],
)
def test_a_file_of_many_sessions_loses_only_the_one_that_cannot_be_read(tmp_path, kind, name, text, field):
    """One bad run record, simulation or chat of a results file is its own problem: the file's
    other sessions, before and after it, are imported."""
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    problems: list[Diagnostic] = []
    sessions = list(import_sessions(kind, source, problems=problems))
    assert len(sessions) == 2, problems
    (problem,) = problems
    assert problem.file == str(source) and (field is None or problem.field == field), problem
    with pytest.raises(InputError):
        list(import_sessions(kind, source))


def test_claude_codes_folder_of_projects_imports_every_projects_sessions(tmp_path, capsys):
    """`~/.claude/projects` holds a folder per project, each with its sessions: given the whole
    folder, every project's sessions are imported (and a project's bad file is its problem alone)."""
    projects = tmp_path / "projects"
    for project, session in (("-home-ana-shop", "s1"), ("-home-ana-blog", "s2")):
        (projects / project).mkdir(parents=True)
        (projects / project / f"{session}.jsonl").write_text(_claude_session(session, "ls"), encoding="utf-8")
    (projects / "-home-ana-blog" / "broken.jsonl").write_text("", encoding="utf-8")
    out = tmp_path / "out"
    status = main(["import", "--from", "claude-code", str(projects), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["s1.jsonl", "s2.jsonl"]
    assert status == 2 and "imported 2 sessions" in stdout and "broken.jsonl" in stderr

    empty = tmp_path / "nothing"
    (empty / "notes").mkdir(parents=True)
    assert main(["import", "--from", "claude-code", str(empty), "--out", str(out)]) == 2
    assert "holds no Claude Code session" in capsys.readouterr().err


def test_help_says_what_happens_to_a_source_that_cannot_be_imported(capsys):
    with pytest.raises(SystemExit) as done:
        main(["import", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "Every session that can be imported is" in text and "2 when there was a problem" in text


def test_each_problem_is_printed_as_it_is_found(claude_folder, tmp_path):
    """A long import is not silent about a bad file until it ends: the problem comes before the
    sessions after it (stdout and stderr unbuffered, as a terminal shows them)."""
    import subprocess
    import sys

    command = ["import", "--from", "claude-code", str(claude_folder), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-u", "-m", "replaylab.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    at = {key: next(n for n, line in enumerate(lines) if key in line) for key in ("a-session", "b-empty", "c-hooks")}
    later = next(n for n, line in enumerate(lines) if line.startswith("wrote") and "d-session" in line)
    assert done.returncode == 2 and at["a-session"] < at["b-empty"] < at["c-hooks"] < later, done.stdout


def _titles(*summaries: str) -> str:
    """A Claude Code file of session titles alone, as older CLIs wrote beside the sessions."""
    return "".join(json.dumps({"type": "summary", "summary": s, "leafUuid": f"leaf-{s}"}) + "\n" for s in summaries)


def test_a_file_of_session_titles_is_skipped_by_name_and_is_no_problem(claude_folder, tmp_path, capsys):
    for name in ("b-empty.jsonl", "c-hooks.jsonl"):
        (claude_folder / name).unlink()
    titles = claude_folder / "0-titles.jsonl"
    titles.write_text(_titles("Fix the login bug", "Refactor auth"), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "--from", "claude-code", str(claude_folder), "--out", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["a-session.jsonl", "d-session.jsonl"]
    assert f"skipped {titles}: no user or assistant record" in stderr and "problem" not in stdout

    # named alone, or as a project's only file, it is a problem: nothing the user asked for is imported
    assert main(["import", "--from", "claude-code", str(titles), "--out", str(tmp_path / "alone")]) == 2
    assert f"{titles}: error[bad-import-source]: holds no conversation" in capsys.readouterr().err
    only = tmp_path / "only-titles"
    only.mkdir()
    titles.rename(only / titles.name)
    assert main(["import", "--from", "claude-code", str(only), "--out", str(tmp_path / "none")]) == 2
    assert f"{only}: error[bad-import-source]: holds no conversation" in capsys.readouterr().err


def test_a_project_of_session_titles_alone_is_skipped_within_the_folder_of_projects(tmp_path, capsys):
    projects = tmp_path / "projects"
    (projects / "-home-ana-old").mkdir(parents=True)
    (projects / "-home-ana-old" / "titles.jsonl").write_text(_titles("Old work"), encoding="utf-8")
    (projects / "-home-ana-shop").mkdir()
    (projects / "-home-ana-shop" / "s1.jsonl").write_text(_claude_session("s1", "ls"), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "--from", "claude-code", str(projects), "--out", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert [p.name for p in out.glob("*.jsonl")] == ["s1.jsonl"] and "imported 1 sessions" in stdout
    assert f"skipped {projects / '-home-ana-old'}: none of its .jsonl files" in stderr


def test_a_claude_code_line_cut_off_by_a_crash_is_skipped_as_claude_code_skips_it(tmp_path, capsys):
    """Claude Code drops a line's leading NUL bytes and byte-order mark, and skips a line that does
    not parse (its last write, cut off): the session is imported and the skipped line named."""
    folder = tmp_path / "project"
    folder.mkdir()
    lines = _claude_session("s1", "ls").splitlines()
    padded = "\x00\x00" + lines[1]  # a write after a crash's zero-filled gap
    text = "\n".join([lines[0], padded, lines[2], '{"type": "assistant", "uuid": "u4", "mess']) + "\n"
    (folder / "s1.jsonl").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "--from", "claude-code", str(folder), "--out", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert "1 tool calls" in stdout and "skipped 1 line(s) that do not parse as JSON (line 4)" in stderr

    (folder / "s1.jsonl").write_text("not json at all\n\x00\x00\n", encoding="utf-8")
    assert main(["import", "--from", "claude-code", str(folder / "s1.jsonl"), "--out", str(tmp_path / "o2")]) == 2
    assert "s1.jsonl:1: error[bad-import-source]: no line parses as JSON (1 lines)" in capsys.readouterr().err


def test_a_claude_code_line_with_bytes_that_are_no_utf8_is_read_as_claude_code_reads_it(tmp_path, capsys):
    """Claude Code reads its log as UTF-8 text: a byte that is no UTF-8 (a tool's binary output)
    is U+FFFD and the record is kept, not skipped as a line cut off."""
    lines = _claude_session("s1", "cat logo.png").encode("utf-8").splitlines()
    lines[2] = lines[2].replace(b'"content": "ok"', b'"content": "\x89PNG \xff\xfe"')
    source = tmp_path / "s1.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    (session,) = import_sessions("claude-code", source)
    assert not any("do not parse" in note for note in session.notes)
    assert session.entries[-1]["message"]["content"] == [{"type": "text", "text": "\ufffdPNG \ufffd\ufffd"}]


def test_sessions_named_alike_in_two_sources_are_each_written_under_a_name_of_their_own(tmp_path, capsys):
    """The second source's session is named after its folder, and so are its sub-agents' files,
    which its Task result still names."""
    out = tmp_path / "out"
    for case in ("first", "second"):
        log = Log(version="2.1.39")
        log.user("look into it")
        log.call("toolu_T", "Task", {"description": "look", "prompt": "Look into it"})
        log.result("toolu_T", "Nothing there.", {"agentId": "a1", "content": [], "totalTokens": 5})
        log.say("Nothing there.")
        (tmp_path / case / SESSION / "subagents").mkdir(parents=True)
        log.write(tmp_path / case / f"{SESSION}.jsonl")
        agent = Log(version="2.1.39")
        agent.user("Look into it", side=True, root=True)
        agent.say("Nothing there.", side=True)
        agent.write(tmp_path / case / SESSION / "subagents" / "agent-a1.jsonl")
    sources = [str(tmp_path / case / f"{SESSION}.jsonl") for case in ("first", "second")]
    assert main(["import", "--from", "claude-code", *sources, "--out", str(out)]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.glob("*.jsonl")) == [
        f"{SESSION}.jsonl",
        f"{SESSION}.sub-agent-a1.jsonl",
        f"second-{SESSION}.jsonl",
        f"second-{SESSION}.sub-agent-a1.jsonl",
    ]
    renamed = load_transcript(out / f"second-{SESSION}.jsonl")
    links = [e.message.details["replaylab"]["childSession"] for e in renamed.entries if getattr(e.message, "details", None)]  # fmt: skip
    assert links == [f"second-{SESSION}.sub-agent-a1.jsonl"]
    header = json.loads((out / f"second-{SESSION}.sub-agent-a1.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["parentSession"] == f"second-{SESSION}.jsonl"
