"""The bundled helpdesk recordings: what each one is for, checked on the files themselves, and that
re-recording them from their scripts gives the same sessions (modulo timestamps and ids).

Budgets come from `suites/safeguard.yaml`, so a change of the suites' budget that breaks what a
recording was made to show (a cut right at a pending approval, a window exactly at the threshold)
fails here with the reason, not somewhere downstream.
"""

from __future__ import annotations

import shutil
import textwrap

import orjson
import pytest

from examples.helpdesk import db
from examples.helpdesk.tools import DEFAULT_TOKEN
from replaylab.cassette import cassette_path_for, load_cassette
from replaylab.cli import main as cli_main
from replaylab.commands.rerecord import compare_folders, recording_files, top_level_scripts
from replaylab.diagnostics import InputError
from replaylab.qa.boundaries import turn_boundaries
from replaylab.qa.setup import auto_points, budget
from replaylab.replay import split_turns
from replaylab.replay.agent.script import load_script
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.suite import load_suite
from replaylab.transcript.context import build_window
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry, ToolResultMessage, message_text
from replaylab.transcript.tokens import estimate_tokens
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS, MIDDLE_OMISSION_MARKER
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BUNDLED = REPO / "recordings" / "helpdesk"
SCRIPTS = BUNDLED / "scripts"
SAFEGUARD_SUITE = REPO / "suites" / "safeguard.yaml"


@pytest.fixture(scope="module")
def classifier() -> ToolClassifier:
    return ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))


@pytest.fixture(scope="module")
def scenario():
    return load_suite(SAFEGUARD_SUITE).scenarios[0]


def transcript(name: str):
    return load_transcript(BUNDLED / f"{name}.jsonl")


def turn_start_tokens(path: list) -> list[int]:
    """pi's estimate of the window at the start of each user turn (before its input)."""
    position = {entry.id: index for index, entry in enumerate(path)}
    return [
        sum(estimate_tokens(w.message) for w in build_window(path[: position[turn.inputs[0].id]]))
        for turn in split_turns(path)
    ]


def results_of(path: list, tool: str) -> list[ToolResultMessage]:
    return [
        e.message
        for e in path
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage) and e.message.tool_name == tool
    ]


# ---------------------------------------------------------------- the set of recordings


def test_every_script_has_its_recording_and_cassette_and_nothing_else_is_bundled():
    scripts = top_level_scripts(SCRIPTS)
    assert len(scripts) >= 12
    expected = set()
    for script in scripts:
        loaded = load_script(script)
        expected.add(f"{loaded.name}.jsonl")
        for turn in loaded.turns:
            for step in turn.steps:
                for call in step.tool_calls:
                    if call.child is not None:
                        expected.add(f"{loaded.name}.sub-{load_script(call.child).name}.jsonl")
    transcripts = {p.name for p in BUNDLED.glob("*.jsonl")}
    assert transcripts == expected
    for name in transcripts:
        assert cassette_path_for(BUNDLED / name).is_file(), name
    assert {p.name for p in recording_files(BUNDLED)} == transcripts | {
        cassette_path_for(BUNDLED / n).name for n in transcripts
    }


def test_every_bundled_recording_loads_with_no_error_diagnostics_and_names_its_script():
    for path in sorted(BUNDLED.glob("*.jsonl")):
        loaded = load_transcript(path)
        assert [d for d in loaded.diagnostics if d.severity == "error"] == [], path.name
        assert loaded.leaf_path()[-1].type == "message", path.name  # a finished session, not a compaction
        info = next(e for e in loaded.entries if getattr(e, "custom_type", None) == "replaylab.recording")
        assert info.data["toolPack"] == "examples.helpdesk", path.name
        assert info.data["script"].startswith("scripts/") and (BUNDLED / info.data["script"]).is_file(), path.name
        assert load_cassette(cassette_path_for(path)), path.name  # a valid vcrpy cassette with interactions


def test_no_secret_is_in_any_bundled_file():
    secrets = (db.FAKE_API_KEY, db.FAKE_BEARER_TOKEN, DEFAULT_TOKEN, "sk-live-")
    for path in sorted(BUNDLED.iterdir()):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            for secret in secrets:
                assert secret not in text, f"{secret!r} in {path.name}"
    for cassette in sorted(BUNDLED.glob("*.cassette.yaml")):
        for item in load_cassette(cassette):
            for side in ("request", "response"):
                names = {k.lower() for k in (item[side].get("headers") or {})}
                assert not names & {"authorization", "cookie", "set-cookie"}, cassette.name
    # the session that reads CUST-10047's note shows the note with its secrets redacted
    security = (BUNDLED / "security-lockout.jsonl").read_text(encoding="utf-8")
    assert "pasted credentials into chat" in security and "[REDACTED]" in security


# ---------------------------------------------------------------- what each recording is for


def test_read_only_session_is_replay_safe(classifier):
    ledger = build_ledger(transcript("readonly-missing-parcel"), classifier)
    assert ledger.replay_safe is True and ledger.mutated_event_ids == []
    # the argument-dependent tool is used, in its read modes only
    calls = [
        c
        for e in transcript("readonly-missing-parcel").leaf_path()
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
        for c in e.message.tool_calls()
    ]
    assert {c.arguments["action"] for c in calls if c.name == "ticket_note"} == {"list", "read"}


def test_sub_agent_parent_ledger_includes_the_childs_writes(classifier):
    parent = transcript("security-lockout")
    child = transcript("security-lockout.sub-security-specialist")
    assert child.header.parent_session == "security-lockout.jsonl"
    spawn = list(results_of(parent.leaf_path(), "sessions_spawn"))
    assert len(spawn) == 1
    assert spawn[0].details == {"replaylab": {"childSession": "security-lockout.sub-security-specialist.jsonl"}}
    child_ledger = build_ledger(child, classifier)
    assert [e.tool for e in child_ledger.events] == ["escalate_ticket", "ticket_note", "send_email"]
    ledger = build_ledger(parent, classifier)
    qualified = [f"{child.header.id}:{e.event_id}" for e in child_ledger.events]
    assert all(q in ledger.mutated_event_ids for q in qualified)
    # the child's events follow the spawning call, then the parent's own later write
    spawn_index = ledger.mutated_event_ids.index("call_t2s0c0")
    assert ledger.mutated_event_ids[spawn_index + 1 : spawn_index + 4] == qualified
    assert [e.tool for e in ledger.events if not e.session] == ["sessions_spawn", "update_address"]
    assert ledger.replay_safe is False


def test_long_session_has_40_user_turns_and_needs_at_least_two_compactions(scenario):
    path = transcript("long-account-review").leaf_path()
    turns = split_turns(path)
    assert sum(1 for t in turns if t.user_text()) >= 40
    starts = turn_start_tokens(path)
    first = auto_points(turn_boundaries(path, turns), scenario)[0]
    total = sum(estimate_tokens(w.message) for w in build_window(path))
    # what the session adds after the first compaction alone is over the budget: whatever the
    # summary keeps, the window must be compacted again
    assert total - starts[first] > budget(scenario)


def test_big_tool_result_is_live_over_60k_and_capped_head_and_tail_on_disk():
    path = transcript("handbook-damaged-in-transit").leaf_path()
    persisted = [message_text(r) for r in results_of(path, "get_kb_article")]
    assert len(persisted) == 1
    text = persisted[0]
    assert len(text) <= DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS  # OpenClaw's persist-time cap, 40,000 chars
    assert MIDDLE_OMISSION_MARKER in text and "more characters truncated]" in text
    assert db.HANDBOOK_HEAD_MARKER in text and db.HANDBOOK_TAIL_MARKER in text  # head + important tail
    assert "DMG-OVR-2291" not in text  # the middle is what head + tail truncation loses
    live = [
        i["response"]["body"]["string"]
        for i in load_cassette(cassette_path_for(BUNDLED / "handbook-damaged-in-transit.jsonl"))
        if i["request"]["uri"].endswith(f"/kb/{db.HANDBOOK_ID}")
    ]
    assert len(live) == 1 and len(live[0]) > 60_000
    assert "DMG-OVR-2291" in live[0]  # the cassette keeps the live answer whole


def test_pending_approval_is_confirmed_in_the_first_turn_after_the_cut(scenario):
    path = transcript("refund-approval-pending").leaf_path()
    turns = split_turns(path)
    cut = auto_points(turn_boundaries(path, turns), scenario)[0]
    assert turns[cut].user_text() == "Yes, go ahead."
    assert (
        turns[cut - 1]
        .answer()
        .rstrip()
        .endswith("Shall I go ahead and refund the full 698.00 on ORD-77144 to your card?")
    )
    refunds = results_of(path, "issue_refund")
    assert [r.is_error for r in refunds] == [True, False]
    assert orjson.loads(message_text(refunds[0]))["error"] == "approval_required"
    # the refund that needs the approval is the first call after the cut
    assert turns[cut].steps[0].message.tool_calls()[0].name == "issue_refund"


def test_threshold_session_sits_exactly_on_the_budget_one_turn_before_it_crosses(scenario):
    path = transcript("threshold-exact-budget").leaf_path()
    turns = split_turns(path)
    starts = turn_start_tokens(path)
    limit = budget(scenario)
    at = starts.index(limit)  # exactly at the budget: pi compacts only when tokens > budget
    assert auto_points(turn_boundaries(path, turns), scenario) == [at + 1]
    assert starts[at + 1] > limit and at + 2 < len(turns)  # turns remain to replay after the cut


def test_overflow_turn_is_replayed_after_the_cut_and_its_live_result_overflows_the_context(scenario):
    path = transcript("overflow-handbook-midturn").leaf_path()
    turns = split_turns(path)
    cut = auto_points(turn_boundaries(path, turns), scenario)[0]
    handbook_turn = next(
        i
        for i, t in enumerate(turns)
        if any(
            c.name == "get_kb_article" and c.arguments.get("article_id") == db.HANDBOOK_ID
            for s in t.steps
            for c in s.message.tool_calls()
        )
    )
    assert cut <= handbook_turn  # the overflowing turn is part of the replay
    live = next(
        i["response"]["body"]["string"]
        for i in load_cassette(cassette_path_for(BUNDLED / "overflow-handbook-midturn.jsonl"))
        if i["request"]["uri"].endswith(f"/kb/{db.HANDBOOK_ID}")
    )
    # one tool result alone is several times the whole context window (pi: 4 chars per token)
    assert len(live) / 4 > 4 * scenario.compaction.context_tokens
    # and the model call after it, in the same turn, is the one that overflows
    step_after = turns[handbook_turn].steps[-1].message
    assert not step_after.tool_calls() and step_after.text()


def test_identifier_from_turn_one_is_needed_only_after_the_cut(scenario, classifier):
    path = transcript("early-identifier-address-change").leaf_path()
    turns = split_turns(path)
    cut = auto_points(turn_boundaries(path, turns), scenario)[0]
    customer = "CUST-10046"
    mentions = [
        i
        for i, t in enumerate(turns)
        if any(customer in message_text(e.message) for e in [*t.steps, *t.results.values()])
    ]
    assert mentions[0] == 0 and all(i >= cut for i in mentions[1:]) and len(mentions) >= 2
    update = next(c for t in turns[cut:] for s in t.steps for c in s.message.tool_calls() if c.name == "update_address")
    assert update.arguments["customer_id"] == customer
    # nothing the model always sees holds it (the tool schemas' examples name CUST-10042, not this one)
    schemas = orjson.dumps([s.openai_schema() for s in load_tool_pack("examples.helpdesk").tools.values()]).decode()
    assert customer not in schemas
    assert build_ledger(transcript("early-identifier-address-change"), classifier).mutated_event_ids == ["call_t9s0c0"]


def test_parallel_session_has_parallel_reads_and_parallel_writes(classifier):
    path = transcript("parallel-order-overview").leaf_path()
    messages = [e.message for e in path if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)]
    widths = [[classifier.is_mutating(c.name, c.arguments) for c in m.tool_calls()] for m in messages]
    assert any(len(w) >= 4 and not any(w) for w in widths)  # four reads in one message
    assert any(len(w) >= 2 and all(w) for w in widths)  # two writes in one message


def test_every_recording_is_compacted_at_least_once_under_the_suites_budget(scenario):
    for path in sorted(BUNDLED.glob("*.jsonl")):
        if ".sub-" in path.name:
            continue  # sub-agents are replayed through their parent, never on their own
        leaf = load_transcript(path).leaf_path()
        assert auto_points(turn_boundaries(leaf, split_turns(leaf)), scenario), f"{path.name} never crosses the budget"


def test_flaky_summarizer_session_fails_twice_then_gets_a_real_summary(scenario, classifier, tmp_path):
    from replaylab.compaction import compact
    from replaylab.qa.setup import compact_params

    results = {}
    for failures in (0, 2):
        settings = scenario.model_copy(
            update={"compaction": scenario.compaction.model_copy(update={"summarizer_failures": failures})}
        )
        params = compact_params(
            settings, settings.compaction.mode, BUNDLED / "vat-invoice-escalation.jsonl", leaf_id=None
        )
        params = params.model_copy(update={"working_copy": str(tmp_path / f"copy-{failures}.jsonl")})
        results[failures] = compact(params, classifier=classifier)
    clean, flaky = results[0], results[2]
    assert clean.success and flaky.success
    assert [n for n in flaky.notes if "injected failure" in n] == [
        "Summarization failed: injected failure 1/2",
        "Summarization failed: injected failure 2/2",
    ]
    assert flaky.summarizer == clean.summarizer == "extractive"  # not the fallback summary
    assert flaky.summary_attempts == clean.summary_attempts + 2
    assert flaky.summary_text == clean.summary_text


# ---------------------------------------------------------------- re-recording


def test_rerecord_check_reproduces_every_bundled_session(capsys):
    status = cli_main(["rerecord", "--check", "--dir", str(BUNDLED)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"{len(top_level_scripts(SCRIPTS))} sessions re-recorded, identical" in out


def test_compare_reports_a_changed_tool_result_with_file_and_line(tmp_path):
    copy = tmp_path / "helpdesk"
    shutil.copytree(BUNDLED, copy)
    target = copy / "refund-cracked-headphones.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if '"toolName":"get_order"' in line)
    lines[index] = lines[index].replace("129.99", "129.98", 1)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (copy / "vat-invoice-escalation.cassette.yaml").unlink()
    differences = compare_folders(BUNDLED, copy)
    assert any(
        d.startswith(f"{BUNDLED / 'refund-cracked-headphones.jsonl'}:{index + 1}: ") and "129.99" in d
        for d in differences
    ), differences
    assert f"{BUNDLED / 'vat-invoice-escalation.cassette.yaml'}: missing from the fresh recording" in differences
    assert len(differences) == 2
    # ids and timestamps alone are not differences
    assert compare_folders(BUNDLED, BUNDLED) == []


TINY = """\
name: tiny
turns:
  - user: "What is the refund policy?"
    steps:
      - tool_calls:
          - {name: get_refund_policy, arguments: {}, as: policy}
      - say: "Refunds within ${policy.window_days} days."
"""


def test_rerecord_refuses_to_overwrite_and_force_swaps_the_whole_folder(tmp_path, capsys):
    folder = tmp_path / "bundle"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "tiny.yaml").write_text(TINY, encoding="utf-8")
    (folder / "NOTES.md").write_text("kept\n", encoding="utf-8")
    assert cli_main(["rerecord", "--dir", str(folder)]) == 0  # nothing recorded yet: no --force needed
    first = (folder / "tiny.jsonl").read_text(encoding="utf-8")
    assert cli_main(["rerecord", "--dir", str(folder)]) == 2
    assert "never overwrites a recording" in capsys.readouterr().err
    assert (folder / "tiny.jsonl").read_text(encoding="utf-8") == first  # untouched
    assert cli_main(["rerecord", "--dir", str(folder), "--force"]) == 0
    assert (folder / "tiny.jsonl").read_text(encoding="utf-8") != first  # new ids and timestamps...
    assert compare_folders(folder, folder) == []
    assert (folder / "NOTES.md").read_text(encoding="utf-8") == "kept\n"  # ...the rest of the folder kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]  # no staging or retired folder left
    out = tmp_path / "elsewhere"
    assert cli_main(["rerecord", "--dir", str(folder), "--out", str(out)]) == 0
    assert compare_folders(folder, out) == []
    assert cli_main(["rerecord", "--dir", str(folder), "--out", str(out)]) == 2  # --out must hold no recordings


def test_script_child_must_name_an_existing_script(tmp_path):
    script = tmp_path / "parent.yaml"
    script.write_text(
        textwrap.dedent("""\
        turns:
          - user: hi
            steps:
              - tool_calls:
                  - {name: sessions_spawn, arguments: {task: x}, child: missing.yaml}
        """),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        load_script(script)
    problem = info.value.diagnostics[0]
    assert (problem.file, problem.line, problem.field) == (str(script), 5, "turns[0].steps[0].tool_calls[0].child")
    assert "no such script file" in problem.message
