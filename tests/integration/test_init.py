"""`replaylab init DIR` as a user runs it: a subprocess on copies of bundled recordings and on the
real sessions of ../shared/data (read only, every output in a temp folder); the suite it writes
is loaded by the real loader and run by pytest in a fresh process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from builders.claude_code_logs import Log, workflow_session
from builders.pytest_runs import run_pytest
from replaylab.suite import CompactionSettings, load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BUNDLED = REPO / "recordings" / "helpdesk"
#: two short bundled sessions; the second has a sub-agent transcript the suite must not list
SMALL = ("refund-cracked-headphones", "security-lockout")


def init(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "init", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


def copy_bundled(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        for path in BUNDLED.glob(f"{name}*"):
            shutil.copy(path, folder / path.name)
    return folder


def auto_budget_landed() -> bool:
    """Whether the loader knows `contextTokens: auto` (then a suite without a budget compacts
    each recording where it is large)."""
    try:
        CompactionSettings.model_validate({"contextTokens": "auto"})
    except ValidationError:
        return False
    return True


def mutating_figures(text: str) -> tuple[int, int]:
    """(the suite header's mutating calls, the sum of its per-tool mutating lines)."""
    total = int(
        re.search(r"tool calls \(([\d,]+) mutating(?:, [\d,]+ of them by sub-agents)?\)", text)
        .group(1)
        .replace(",", "")
    )
    per_tool = re.findall(r"^#   mutating  .*?: ([\d,]+)(?: of [\d,]+)? — ", text, flags=re.M)
    return total, sum(int(n.replace(",", "")) for n in per_tool)


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ---------------------------------------------------------------- bundled recordings


def test_suite_for_bundled_recordings_loads_runs_and_exercises_items(tmp_path: Path):
    """The written suite loads with the real loader, names the recordings (not the sub-agent
    file), lists the mutating tools with why, leaves the budget to auto, and `pytest
    --replaylab` runs it: every item reaches a verdict without an error; with the budget
    lines the comments offer uncommented, every item is exercised and passes."""
    folder = copy_bundled(tmp_path / "project" / "recordings", *SMALL)
    before = tree_hashes(folder)
    result = init(folder, "--tools", "examples.helpdesk")
    assert result.returncode == 0, result.stderr
    suite_path = folder / "replaylab.yaml"
    assert f"next: pytest --replaylab {suite_path}" in result.stdout
    assert "2 recordings, 21 user turns" in result.stdout
    assert re.search(r"mutating calls safeguard keeps: .*issue_refund 1", result.stdout)

    suite = load_suite(suite_path)
    assert [p.name for p in suite.recordings] == [f"{SMALL[0]}.jsonl", f"{SMALL[1]}.jsonl"]
    assert [s.name for s in suite.scenarios] == ["safeguard"]
    scenario = suite.scenarios[0]
    assert scenario.compaction.mode == "safeguard" and scenario.tools == "examples.helpdesk"
    text = suite_path.read_text()
    assert yaml.safe_load(text)["compaction"] == {"mode": "safeguard"}  # the budget is auto's
    for knob in ("--replaylab-context-tokens", "--replaylab-reserve-tokens-floor", "--replaylab-keep-recent-tokens"):
        assert knob in text
    assert "#   mutating  issue_refund: 1 — declared write (1)" in text
    # security-lockout's sub-agent (its sessions_spawn) escalates, notes and emails: 3 of the 8
    assert mutating_figures(text) == (8, 8)
    assert "tool calls (8 mutating, 3 of them by sub-agents)." in text
    assert "#   mutating  sessions_spawn: 1 — OpenClaw: `sessions_spawn` always mutates (1)" in text
    assert re.search(r"#     get_order \(6\), get_ticket \(5\)", text)
    assert "# - name: auto-control" in text and "#   expect: {defects: [MUTATION_DROPPED]}" in text
    assert tree_hashes(folder) == {**before, "replaylab.yaml": tree_hashes(folder)["replaylab.yaml"]}

    project = folder.parent
    shutil.copytree(REPO / "examples", project / "examples")  # the pack the suite names, importable from the project
    first = run_pytest(project, "--replaylab", str(suite_path), "--replaylab-report", "reports-auto", "-rs")
    report = json.loads((project / "reports-auto" / "replaylab.json").read_text())
    totals = report["totals"]
    assert totals["items"] == 2 and totals["failed"] == totals["error"] == 0, first.stdout[-3000:]
    if auto_budget_landed():
        assert totals["passed"] == 2, first.stdout[-3000:]
    else:  # the default budget of a suite without one: these short sessions never cross it
        assert totals["skipped"] == 2 and "never crossed the budget" in first.stdout

    budget = (
        text.replace("  # contextTokens: 200000 ", "  contextTokens: 3200 ")
        .replace("  # reserveTokensFloor: 20000 ", "  reserveTokensFloor: 800 ")
        .replace("  # keepRecentTokens: 20000 ", "  keepRecentTokens: 500 ")
    )
    assert budget.count("\n  contextTokens: 3200") == budget.count("\n  keepRecentTokens: 500") == 1
    suite_path.write_text(budget)
    second = run_pytest(project, "--replaylab", str(suite_path), "--replaylab-report", "reports-fixed")
    totals = json.loads((project / "reports-fixed" / "replaylab.json").read_text())["totals"]
    assert second.returncode == 0 and totals["passed"] == 2 and totals["blocking_defects"] == 0, second.stdout[-3000:]


def test_http_cassettes_without_a_tool_pack_are_named(tmp_path: Path):
    """Cassettes of `replaylab record` hold the service's HTTP: without --tools the suite is
    written, but the user is told that no call could be answered, and the exit status says so."""
    folder = copy_bundled(tmp_path / "recordings", SMALL[0])
    result = init(folder)
    assert result.returncode == 1
    assert "pass --tools PACK" in result.stderr
    text = (folder / "replaylab.yaml").read_text()
    assert "# tools: examples.helpdesk" in text and "CASSETTE_MISSING" in text


def test_never_overwrites_without_force(tmp_path: Path):
    folder = copy_bundled(tmp_path / "recordings", SMALL[0])
    out = tmp_path / "suites" / "mine.yaml"
    assert init(folder, "--out", out, "--tools", "examples.helpdesk", "--name", "first").returncode == 0
    written = out.read_text()
    again = init(folder, "--out", out, "--tools", "examples.helpdesk", "--name", "second")
    assert again.returncode == 2
    assert f"{out}: error[output-exists]: already exists; replaylab init does not overwrite it" in again.stderr
    assert "--force" in again.stderr and out.read_text() == written
    forced = init(folder, "--out", out, "--tools", "examples.helpdesk", "--name", "second", "--force")
    assert forced.returncode == 0, forced.stderr
    assert load_suite(out).name == "second"
    assert load_suite(out).recordings[0].resolve() == (folder / f"{SMALL[0]}.jsonl").resolve()
    assert '"../recordings/refund-cracked-headphones.jsonl"' in out.read_text()  # relative to the suite
    assert not list(out.parent.glob(".replaylab-init-*"))  # no temporary file left behind


# ---------------------------------------------------------------- errors


def test_usage_errors_name_the_folder(tmp_path: Path):
    missing = init(tmp_path / "nowhere")
    assert (
        missing.returncode == 2 and f"{tmp_path / 'nowhere'}: error[missing-folder]: no such folder" in missing.stderr
    )
    a_file = tmp_path / "file.jsonl"
    a_file.write_text("{}\n")
    not_folder = init(a_file)
    assert not_folder.returncode == 2 and "error[not-a-folder]: is not a folder" in not_folder.stderr
    folder = copy_bundled(tmp_path / "recordings", SMALL[0])
    bad_name = init(folder, "--name", "x" * 201)
    assert (
        bad_name.returncode == 2 and "--name: error[bad-option]: expected a suite name of 1 to 200" in bad_name.stderr
    )
    a_folder = init(folder, "--out", folder)
    assert a_folder.returncode == 2 and f"{folder}: error[not-a-file]: is a folder" in a_folder.stderr
    under_a_file = init(folder, "--out", a_file / "suite.yaml", "--tools", "examples.helpdesk")
    assert under_a_file.returncode == 2, under_a_file.stderr
    assert (
        f"{a_file / 'suite.yaml'}: error[cannot-write]: cannot be written: {a_file} is not a folder"
        in under_a_file.stderr
    )
    no_suffix = init(folder, "--out", tmp_path / "suites", "--tools", "examples.helpdesk")
    assert no_suffix.returncode == 2 and not (tmp_path / "suites").exists()  # pytest would collect nothing
    assert f"{tmp_path / 'suites'}: error[not-a-suite-name]: --out names the suite file, which must end in .yaml" in (
        no_suffix.stderr
    )
    assert f"--out {tmp_path / 'suites.yaml'}" in no_suffix.stderr
    import_to_file = init(folder, "--out", tmp_path / "s.yaml", "--import", "--import-to", a_file)
    assert import_to_file.returncode == 2 and not (tmp_path / "s.yaml").exists()
    assert f"{a_file}: error[cannot-write]: cannot be written: {a_file} is not a folder" in import_to_file.stderr
    assert "Traceback" not in missing.stderr + not_folder.stderr + bad_name.stderr + a_folder.stderr


def test_empty_folder_and_files_that_are_not_recordings(tmp_path: Path):
    """Nothing usable: exit 1, no suite, and what was expected. Files that are not recordings are
    named with file and line and left out; a FIFO is never opened."""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = init(empty)
    assert result.returncode == 1 and not (empty / "replaylab.yaml").exists()
    assert "no usable recording in" in result.stderr and "expected pi / OpenClaw transcripts" in result.stderr

    mixed = copy_bundled(tmp_path / "mixed", SMALL[0])
    (mixed / "notes.jsonl").write_text('\n{"hello": "world"}\n')
    (mixed / "empty.jsonl").write_text("")
    (mixed / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    (mixed / "stats.json").write_text('{"sessions": 3}')  # not a recording format: not looked at
    os.mkfifo(mixed / "pipe.jsonl")
    (mixed / "loop").symlink_to(mixed)  # walked once, not until the path is too long
    (mixed / "linked").symlink_to(copy_bundled(tmp_path / "elsewhere", SMALL[1]))  # a linked folder is walked
    result = init(mixed, "--tools", "examples.helpdesk")
    assert result.returncode == 1, result.stderr
    assert (
        f"{mixed / 'notes.jsonl'}:2: error[not-a-transcript] field 'type': is not a pi / OpenClaw session header"
        in result.stderr
    )
    assert f"{mixed / 'binary.jsonl'}:1: error[not-a-transcript]" in result.stderr
    assert f"{mixed / 'empty.jsonl'}: error[empty-file]: is empty" in result.stderr
    assert f"{mixed / 'pipe.jsonl'}: error[not-a-file]: is a FIFO" in result.stderr
    assert "stats.json" not in result.stderr
    suite = load_suite(mixed / "replaylab.yaml")
    assert [str(p.relative_to(mixed)) for p in suite.recordings] == [f"{SMALL[0]}.jsonl", f"linked/{SMALL[1]}.jsonl"]


def test_values_from_file_names_stay_values(tmp_path: Path):
    """A recording's name with a line break, YAML syntax and glob characters cannot add a key to
    the suite or match another file."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    stem = 'odd[1]*\nname: "x" #'
    for suffix in (".jsonl", ".cassette.yaml"):
        shutil.copy(BUNDLED / f"{SMALL[0]}{suffix}", folder / f"{stem}{suffix}")
    shutil.copy(BUNDLED / f"{SMALL[0]}.jsonl", folder / 'odd1x\nname: "x" #.jsonl')  # what [1]* would match
    result = init(folder, "--tools", "examples.helpdesk", "--name", "odd: suite")
    assert result.returncode == 1, result.stderr  # the file without a cassette is left out
    suite = load_suite(folder / "replaylab.yaml")
    assert suite.name == "odd: suite" and [p.name for p in suite.recordings] == [f"{stem}.jsonl"]
    assert result.stderr.count("odd1x") == 2  # named, with its import command


# ---------------------------------------------------------------- foreign files, real data


@pytest.mark.realdata
def test_foreign_files_get_import_commands_then_are_imported(shared_data: Path, tmp_path: Path):
    """A folder holding a bundled recording, a Claude Code session, a τ²-bench results file and
    a pi transcript without a cassette: without --import the suite covers only the bundled one and
    each other file gets the exact `replaylab import` command (exit 1); that command works as
    printed; with --import everything is imported beside the suite and covered (exit 0)."""
    folder = copy_bundled(tmp_path / "mine", SMALL[0])
    shutil.copy(shared_data / "claude-code-spotter" / "sessions" / "short.jsonl", folder / "short.jsonl")
    tau2 = shared_data / "tau2-bench" / "airline" / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
    shutil.copy(tau2, folder / "tau2.json")
    shutil.copy(shared_data / "openclaw-fixtures" / "pi-session.jsonl", folder / "pi-session.jsonl")
    before = tree_hashes(folder)

    plain = init(folder, "--tools", "examples.helpdesk")
    assert plain.returncode == 1, plain.stderr
    assert "3 files to import first (or run init again with --import):" in plain.stderr
    commands = [line.strip() for line in plain.stderr.splitlines() if line.strip().startswith("replaylab import")]
    imported = folder / "imported"
    assert commands == [
        f"replaylab import --from pi {folder / 'pi-session.jsonl'} --out {imported}",
        f"replaylab import --from claude-code {folder / 'short.jsonl'} --out {imported}",
        f"replaylab import --from tau2-bench {folder / 'tau2.json'} --out {imported}",
    ]
    assert [p.name for p in load_suite(folder / "replaylab.yaml").recordings] == [f"{SMALL[0]}.jsonl"]

    elsewhere = tmp_path / "by-hand"
    words = shlex.split(commands[1].replace(str(imported), str(elsewhere)))
    by_hand = subprocess.run([sys.executable, "-m", "replaylab.cli", *words[1:]], capture_output=True, text=True)
    assert by_hand.returncode == 0 and (elsewhere / "short.jsonl").is_file(), by_hand.stderr

    full = init(folder, "--tools", "examples.helpdesk", "--import", "--force")
    assert full.returncode == 0, full.stderr
    assert f"imported {folder / 'tau2.json'} (tau2-bench): 20 sessions into {imported}" in full.stdout
    suite = load_suite(folder / "replaylab.yaml")
    names = {p.name for p in suite.recordings}
    assert {f"{SMALL[0]}.jsonl", "short.jsonl", "pi-session.jsonl"} <= names and len(names) == 23
    assert all(p.with_name(p.stem + ".cassette.yaml").is_file() for p in suite.recordings if p.parent == imported)
    text = (folder / "replaylab.yaml").read_text()
    assert "#   mutating  bash:" in text and "#   read from: imported/tool_classes.json" in text
    total, per_tool = mutating_figures(text)
    assert total == per_tool > 0  # each call counted once: the original beside its import is not read
    after = tree_hashes(folder)
    assert {k: v for k, v in after.items() if k in before} == before  # the originals are only read

    again = init(folder, "--tools", "examples.helpdesk", "--import", "--force")
    assert again.returncode == 0 and "0 sessions into" in again.stdout and "20 already there (kept)" in again.stdout


def test_a_results_file_with_one_bad_simulation_imports_the_others_and_names_it(tmp_path: Path):
    """`--import` of a τ²-bench results file one of whose simulations cannot be read: the others
    are imported and covered, the bad one is listed with its file and field, and the run says
    something was left out (exit 1)."""
    folder = copy_bundled(tmp_path / "mine", SMALL[0])

    def simulation(sim_id: str) -> dict:
        messages = [{"role": "user", "content": "no data"}, {"role": "assistant", "content": "Checking."}]
        return {"id": sim_id, "task_id": "t", "messages": messages}

    results = {
        "info": {"environment_info": {"domain_name": "telecom"}, "agent_info": {"llm": "gpt-4.1"}},
        "tasks": [],
        "simulations": [simulation("s1"), {"id": "s2"}, simulation("s3")],
    }
    (folder / "tau2.json").write_text(json.dumps(results), encoding="utf-8")
    done = init(folder, "--tools", "examples.helpdesk", "--import")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"imported {folder / 'tau2.json'} (tau2-bench): 2 sessions into" in done.stdout
    assert f"{folder / 'tau2.json'}: error[bad-import-source] field 'simulations[1].messages'" in done.stderr
    names = {p.name for p in load_suite(folder / "replaylab.yaml").recordings}
    assert len(names) == 3 and f"{SMALL[0]}.jsonl" in names


def test_a_claude_code_file_of_session_titles_is_named_as_skipped_not_as_a_problem(tmp_path: Path):
    """Claude Code keeps files of nothing but session titles (`summary` records) beside its
    sessions: there is nothing to import in one, so init names it and is not held back by it."""
    folder = copy_bundled(tmp_path / "mine", SMALL[0])
    titles = folder / "0b1c2d3e-titles.jsonl"
    titles.write_text(json.dumps({"type": "summary", "summary": "Fix the login bug", "leafUuid": "x1"}) + "\n")
    done = init(folder, "--tools", "examples.helpdesk")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"skipped {titles}: no user or assistant record" in done.stderr
    assert "import" not in done.stderr and "problem" not in done.stderr
    assert [p.name for p in load_suite(folder / "replaylab.yaml").recordings] == [f"{SMALL[0]}.jsonl"]


@pytest.mark.realdata
def test_real_data_folder_is_read_only_and_fully_covered_with_import(shared_data: Path, tmp_path: Path):
    """The whole of ../shared/data: nothing usable as it is (every file is foreign or has no
    cassette: exit 1, the command to run with --import); with --import into a temp folder every
    session is covered, through globs (more than a list should hold), and the data is unchanged."""
    before = tree_hashes(shared_data)
    out = tmp_path / "suite" / "replaylab.yaml"
    plain = init(shared_data, "--out", out)
    assert plain.returncode == 1 and not out.exists()
    assert f"replaylab init {shared_data} --out {out} --import" in plain.stderr
    assert "a pi / OpenClaw transcript without a cassette" in plain.stderr
    assert "agent-acompact" not in plain.stderr  # Claude Code's compaction call is no session
    assert "/subagents/agent-afc096d.jsonl: a Claude Code session" in plain.stderr  # one without its main

    full = init(shared_data, "--out", out, "--import")
    # every session is covered; the one file left out is fasthooks' hook log, which is no transcript
    assert full.returncode == 1, full.stderr[-3000:]
    (left_out,) = [line for line in full.stderr.splitlines() if "error[" in line]
    assert "sample_hook_logs.jsonl:1: error[not-a-transcript]" in left_out
    assert "sample_agent_sidechain.jsonl" not in full.stdout  # a 2.0.x sub-agent file: its session's child
    suite = load_suite(out)
    transcripts = sorted(p for p in (out.parent / "imported").glob("*.jsonl") if ".sub-" not in p.name)
    assert sorted(p.resolve() for p in suite.recordings) == [p.resolve() for p in transcripts]
    assert (out.parent / "imported" / "sample_main_transcript.sub-agent-af1ff21.jsonl").is_file()
    assert len(transcripts) > 400
    text = out.read_text()
    assert '  - "imported/*.jsonl"' in text
    assert re.search(r"#   mutating  Bash: [\d,]+ of [\d,]+ — declared exec; `mix` runs programs", text)
    # every program the data's shell calls run is one the grammar decides (beads' `bd` was the last)
    assert "# Shell programs the read-only grammar does not know" not in text
    assert tree_hashes(shared_data) == before


def test_the_suggested_overrides_never_offer_a_write_as_safe(tmp_path: Path):
    """A custom domain with no tool_classes file (the shape of a τ²-bench run of one's own): the
    lookups are read-only by their names, the writes have no evidence either way and stay
    mutating; the suite offers no write under `safe:` — it names them as unproven and offers the
    name-only reads to move under `mutating:` if one writes."""
    folder = tmp_path / "mine"
    folder.mkdir()
    messages = [{"role": "user", "content": "book room 12 for Ana, and the order"}]
    for n, (tool, args) in enumerate(
        [
            ("check_room_availability", {"room": "12"}),
            ("get_order_details", {"order_id": "#W1001"}),
            ("search_products", {"q": "towels"}),
            ("identificar_paciente", {"nombre": "Ana"}),
            ("create_reservation", {"room": "12", "guest": "Ana"}),
            ("create_order", {"items": ["towels"]}),
            ("register_order", {"order_id": "#W1001"}),
            ("bash", {"command": "acme next --json"}),
            ("bash", {"command": "acme close 12"}),
        ]
    ):
        call = {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    messages += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "thanks"}]
    messages.append({"role": "assistant", "content": "Bye."})
    source = tmp_path / "hotel.json"
    source.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    imported = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "import", "--from=openai-chat", f"--out={folder}", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    result = init(folder)
    assert result.returncode == 0, result.stderr
    text = (folder / "replaylab.yaml").read_text(encoding="utf-8")
    safe_line = next(line for line in text.splitlines() if line.startswith("#   safe:"))
    for write in ("create_reservation", "create_order", "register_order"):
        assert write not in safe_line
        assert re.search(rf"#   mutating  {write}: 1 — no declared class, no OpenClaw rule, no read verb", text)
    assert "# No evidence either way, so mutating: create_order, create_reservation, register_order." in text
    suggestion = next(line for line in text.splitlines() if line.startswith("#   mutating: ["))
    for read in ("check_room_availability", "get_order_details", "search_products", "identificar_paciente"):
        assert f'"{read}"' in suggestion
    assert "read-only by their name only" in suggestion
    assert "# Shell programs the read-only grammar does not know, by calls: acme (2)" in text


def test_two_sources_with_one_session_name_are_both_imported_under_names_of_their_own(tmp_path: Path):
    """Test fixtures keep a session per case as `<case>/transcript.jsonl`: the second is never taken
    for an earlier import of the first, nor left out; it is named after its folder, and a run
    again finds each under the name it was given."""
    folder = tmp_path / "mine"
    for case, command in (("hello", "ls"), ("cleanup", "rm -rf build")):
        log = Log(version="2.1.14")
        log.user(f"run {command}")
        log.call("toolu_1", "Bash", {"command": command})
        log.result("toolu_1", "ok")
        log.say("Done.")
        (folder / "tests" / case).mkdir(parents=True)
        log.write(folder / "tests" / case / "transcript.jsonl")
    result = init(folder, "--import")
    assert result.returncode == 0, result.stdout + result.stderr
    covered = sorted(p.name for p in load_suite(folder / "replaylab.yaml").recordings)
    assert covered == ["hello-transcript.jsonl", "transcript.jsonl"]  # the folders are walked in name order
    commands = {
        name: json.loads((folder / "imported" / name).read_text(encoding="utf-8").splitlines()[2])["message"]["content"][0]["arguments"]["command"]
        for name in covered
    }  # fmt: skip
    assert commands == {"transcript.jsonl": "rm -rf build", "hello-transcript.jsonl": "ls"}
    again = init(folder, "--import", "--force")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "2 already there (kept)" not in again.stdout and again.stdout.count("1 already there (kept)") == 2
    assert sorted(p.name for p in load_suite(folder / "replaylab.yaml").recordings) == covered


def test_a_workflow_runs_journal_among_a_sessions_sub_agents_is_skipped_by_name(tmp_path: Path):
    """Claude Code keeps a Workflow run's agents and its journal in the session's `subagents`
    folder: the agents are imported with the session, the journal is no recording and no problem."""
    folder = tmp_path / "mine"
    folder.mkdir()
    workflow_session(folder)
    done = init(folder, "--import")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "journal.jsonl: not a sub-agent transcript" in done.stderr
    assert "problem" not in done.stderr
    assert (folder / "imported" / "5e55-1000.sub-agent-ag1.jsonl").is_file()


def test_a_greeting_before_the_first_prompt_is_not_counted_as_a_user_turn(tmp_path: Path):
    """A session an agent opens with a greeting (τ²-bench's agent, an OpenClaw channel) has one
    turn more than its prompts as the replay splits it; the figures count the prompts, and the
    recording's comment says that `turn:N` (and every report) counts the greeting's turn too."""
    from builders.transcripts import Session

    session = Session("greeting")
    session.assistant("Hi! How can I help you today?")
    for prompt in ("where is order 7?", "and order 8?"):
        session.user(prompt)
        session.assistant("On its way.")
    folder = tmp_path / "mine"
    (folder / "src").mkdir(parents=True)
    session.write(folder / "src" / "greeting.jsonl")
    done = init(folder, "--import")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 recording, 2 user turns" in done.stdout
    suite = (folder / "replaylab.yaml").read_text()
    assert "# 2 user turns after the agent's opening turn (turn:N counts it), " in suite


def test_sessions_of_one_user_turn_are_told_apart_by_whether_they_have_a_run_to_compact(tmp_path: Path):
    """A session of one prompt and a run of tool calls compacts within the run; one whose only
    turn has no reply after a tool result has nothing to compact. init says which is which, in
    its summary and in the suite's comments."""
    from builders.transcripts import Session
    from replaylab.cassette import write_cassette

    folder = tmp_path / "rec"
    folder.mkdir()
    run = Session("one-run")
    run.user("Check the three logs.")
    for part in range(3):
        run.tool_turn("read", {"path": f"{part}.log"}, "all fine\n" * 40)
    run.assistant("All fine.")
    run.write(folder / "one-run.jsonl")
    chat = Session("one-answer")
    chat.user("Hello?")
    chat.assistant("Hello.")
    chat.write(folder / "one-answer.jsonl")
    for name in ("one-run", "one-answer"):
        write_cassette(folder / f"{name}.cassette.yaml", [])
    result = init(folder, "--out", tmp_path / "s.yaml")
    assert "1 recording with one user turn or none: compacted within the run" in result.stdout, result.stdout
    assert "1 recording with one user turn or none and no reply after a tool result: reported not exercised" in (
        result.stdout
    )
    assert "(1 of these recordings have nothing to compact)" in (tmp_path / "s.yaml").read_text(encoding="utf-8")


def test_a_call_of_a_failed_reply_that_never_ran_is_not_counted(tmp_path: Path):
    """A reply cut off by an error holds a call nothing answered: it never ran, and the agent
    asked again. init counts the calls the ledger counts — the run protects the one that ran."""
    from builders.transcripts import Session

    session = Session("retried")
    session.user("restart the web service")
    session.assistant(calls=[("exec", {"command": "systemctl restart web"})], stop="error")
    session.tool_turn("exec", {"command": "systemctl restart web"}, "restarted")
    session.assistant("Restarted.")
    folder = tmp_path / "mine"
    folder.mkdir()
    session.write(folder / "retried.jsonl")
    done = init(folder, "--import", "--out", tmp_path / "suite.yaml")
    text = (tmp_path / "suite.yaml").read_text(encoding="utf-8")
    assert "1 tool calls (1 mutating)" in text or "1 tool call (1 mutating)" in text, text[:1500]
    assert mutating_figures(text) == (1, 1), done.stdout
