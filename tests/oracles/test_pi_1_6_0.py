"""The pi@1.6.0 profile against pi 1.6.0's own code, on what only pi 1.6.0 writes.

The recordings and the real sessions hold none of pi 1.6.0's new content (the conformance tests
check them for every profile). These sessions do: pi 1.6.0's own SessionManager writes them at test
time (`pi16_sessions.mjs`: system messages, context edits, usage entries, compactions carrying a
system message, a retain-none compaction, a compaction inside a newer one's kept range,
bashExecution / custom / branch-summary turn starts, user images, all-zero usage, null content),
and replaylab's rules must rebuild, estimate, measure and cut them as pi 1.6.0 does. Then pi
1.6.0's own compaction runs as the compactor under test (`compactor: pi` under the profile), its
summary requests answered by replaylab's loopback endpoint.

Everything runs the real pi under node (one process per agent for the test session); without the
`npm ci` these tests skip with the command, under CI=true they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import orjson
import pytest

from agent_conformance import KEEPS, Tally, compare_file, turn_leaves
from replaylab.agents import recording_profile, rules_of
from replaylab.agents.pi_1_6_0.context import projection
from replaylab.agents.pi_1_6_0.estimate import projected_context_tokens
from replaylab.compaction import CompactParams, compact
from replaylab.compactors.external import ExternalCompactor, SourceStates
from replaylab.compactors.spec import PiCompactor
from replaylab.compactors.summary_endpoint import summary_of
from replaylab.oracles.agent import folder, node_executable
from replaylab.oracles.compare import context_mismatches
from replaylab.transcript import load_transcript
from replaylab.transcript.javascript import date_time_ms
from replaylab.transcript.memo import ItemMemo
from replaylab.upstream.pi_1_6_0 import PROFILE, TURN_PREFIX_PROMPT_START, TURN_PREFIX_SECTIONS
from replaylab.upstream.profiles import profile_named
from repo_paths import REPO_ROOT

WRITER = Path(__file__).with_name("pi16_sessions.mjs")
NAMES = ("compactions", "context-edits", "nested-compaction", "null-content", "sys-messages", "turn-starts")
RECORDING = REPO_ROOT / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
BUDGET = {"context_tokens": 3200, "reserve_tokens_floor": 800, "keep_recent_tokens": 500}
SPLIT_TURN_MARK = "\n\n---\n\n**Turn Context (split turn):**\n\n"


@pytest.fixture(scope="module")
def pi16(agent_oracles):
    return agent_oracles(PROFILE.name)


@pytest.fixture(scope="module")
def sessions(pi16, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """pi 1.6.0's own sessions, written now by its SessionManager."""
    out = tmp_path_factory.mktemp("pi16-sessions")
    subprocess.run(
        [node_executable(PROFILE), str(WRITER), str(folder(PROFILE)), str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return {name: out / f"{name}.jsonl" for name in NAMES}


def test_pi_1_6_0_sessions_rebuild_estimate_and_cut_as_pi_1_6_0_does(pi16, sessions) -> None:
    tally = Tally()
    for path in sessions.values():
        compare_file(pi16, path, tally, KEEPS)
    assert tally.counts["files"] == len(NAMES) and tally.counts["windows"] >= 40, tally.note()
    assert tally.counts["messages"] >= 550 and tally.counts["cuts"] == 3 * tally.counts["windows"]
    assert not tally.differences() and not tally.counts["agent errors"], tally.note()


def test_the_sessions_hold_what_only_pi_1_6_0_writes(sessions) -> None:
    kinds: Counter[str] = Counter()
    for path in sessions.values():
        for line in path.read_bytes().splitlines()[1:]:
            entry = orjson.loads(line)
            kinds[entry["type"]] += 1
            if entry["type"] == "message":
                kinds[f"role:{entry['message']['role']}"] += 1
            if entry["type"] == "compaction":
                kinds["compaction:systemMessage"] += "systemMessage" in entry
                kinds["compaction:retain-none"] += entry["firstKeptEntryId"] == entry["id"]
    for kind in ("context_edit", "usage", "custom_message", "branch_summary", "role:system", "role:bashExecution"):
        assert kinds[kind] >= 1, kinds
    assert kinds["compaction:systemMessage"] >= 1 and kinds["compaction:retain-none"] == 1, kinds


def test_the_context_size_and_tokens_before_are_pi_1_6_0s(pi16, sessions) -> None:
    """`estimateProjectedContextTokens`: all-zero usage ignored, usage from before the latest
    compaction or context edit ignored, the replayed system message counted once."""
    rules = rules_of(PROFILE)
    compared = fallback = 0
    for path in sessions.values():
        transcript = load_transcript(path)
        leaves = turn_leaves(transcript)
        answer = pi16.ask(
            {"file": str(path), "leaves": leaves, "settings": [{"keepRecentTokens": 500}], "messages": False}
        )
        for leaf, window in zip(leaves, answer["windows"]):
            entries = transcript.path_to(leaf)
            mine = projected_context_tokens(projection(entries), entries, rules.tokens)
            assert mine == window["estimate"]["tokens"], (path.name, leaf)
            fallback += window["estimate"]["lastUsageIndex"] is None
            result = window["prepare"][0]["result"]
            if result is not None:
                assert rules.cut(entries, 500, "", rules.tokens, rules.tokens).tokens_before == result["tokensBefore"]
            compared += 1
    assert compared >= 40 and fallback >= 5


def test_pi_1_6_0_rules_differ_from_pi_0_73_1s_where_pi_changed(sessions) -> None:
    """The profile matters: on these sessions pi 0.73.1's rules rebuild other windows and cut
    elsewhere (and the refusals of #4811 are pi 1.6.0's only)."""
    new, old = rules_of("pi@1.6.0"), rules_of("pi@0.73.1")
    path = load_transcript(sessions["compactions"]).leaf_path()
    assert [w.message.role for w in new.window(path)][:2] == ["system", "compactionSummary"]
    assert [w.message.role for w in old.window(path)][0] == "compactionSummary"
    refusals = Counter()
    for session in sessions.values():
        transcript = load_transcript(session)
        for leaf in turn_leaves(transcript):
            entries = transcript.path_to(leaf)
            refusals[new.cut(entries, 20_000, "", new.tokens, new.tokens).refused is not None] += 1
            assert old.refusal(entries) is None or entries[-1].type == "compaction"
    assert refusals[True] >= 20


def test_null_content_is_read_as_pi_1_6_0_reads_it_and_pi_0_73_1_cannot_estimate_it(agent_oracles, sessions) -> None:
    path = sessions["null-content"]
    transcript = load_transcript(path)
    assert [d.code for d in transcript.diagnostics] == ["null-content", "null-content"]
    assert all(d.severity == "warning" for d in transcript.diagnostics)
    entries = transcript.leaf_path()
    assert len(entries) == 11  # nothing skipped: the children of a null message stay on the path
    view = agent_oracles("pi@1.6.0").view(path)
    assert context_mismatches(rules_of("pi@1.6.0").window(entries), view.windows[0].context, False) == []
    # pi 0.73.1 keeps the null and its estimate throws: it cannot even prepare a compaction here
    old = agent_oracles("pi@0.73.1").view(path, keep_recent_tokens=(500,))
    assert "is not iterable" in (old.windows[0].error or "")


def test_custom_messages_carry_their_details_and_time_in_both_pis(agent_oracles, sessions) -> None:
    path = sessions["turn-starts"]
    entries = load_transcript(path).leaf_path()
    for name in ("pi@1.6.0", "pi@0.73.1"):
        window = rules_of(name).window(entries)
        custom = next(w.message for w in window if w.message.role == "custom")
        assert custom.details == {"k": 1} and isinstance(custom.timestamp, int)
        theirs = agent_oracles(name).view(path).windows[0].context
        assert context_mismatches(window, theirs, False) == [], name


# ---------------------------------------------------------------- a session pi 1.6.0 wrote in a run


RUNNER = Path(__file__).with_name("pi16_run.mjs")


@pytest.fixture(scope="module")
def run_session(pi16, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session pi 1.6.0 wrote in a real run: its SDK's `createAgentSession` prompted three times, its
    model a loopback endpoint inside the node process (`pi16_run.mjs`). The SDK's entry point
    needs a newer node than pi's session modules (node:fs `globSync`): OpenClaw's pinned node."""
    node = node_executable(profile_named("openclaw@2026.9.6"))
    if node is None:
        reason = "no node >= 24.16 for pi 1.6.0's SDK: `npm ci` in replaylab/oracles/node/openclaw-2026.9.6"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("pi16-run")
    done = subprocess.run(
        [node, str(RUNNER), str(folder(PROFILE)), str(out)], check=True, capture_output=True, text=True, timeout=120
    )
    return Path(done.stdout.strip().splitlines()[-1])


def test_a_session_pi_1_6_0_wrote_is_judged_under_pi_1_6_0_without_being_named(pi16, run_session: Path) -> None:
    """pi 1.6.0 writes header version 3, as pi 0.73.1 did, but a run writes its prompt state as a
    `system` message before the first request: that record claims the session, and the windows
    replaylab rebuilds from it are pi 1.6.0's own."""
    lines = [orjson.loads(line) for line in run_session.read_bytes().splitlines()]
    assert lines[0]["version"] == 3
    system = next(i for i, e in enumerate(lines, 1) if e.get("message", {}).get("role") == "system")
    first_user = next(i for i, e in enumerate(lines, 1) if e.get("message", {}).get("role") == "user")
    assert system < first_user
    choice = recording_profile(run_session)
    assert choice.profile.name == "pi@1.6.0", choice
    assert f"line {system} holds a system message" in choice.reason
    tally = Tally()
    compare_file(pi16, run_session, tally, KEEPS)
    assert tally.counts["windows"] >= 2 and not tally.differences() and not tally.counts["agent errors"], tally.note()
    # under pi 0.73.1's rules the prompt state weighs nothing: the profile changes the verdict's inputs
    entries = load_transcript(run_session).leaf_path()
    new, old = rules_of("pi@1.6.0"), rules_of("pi@0.73.1")
    assert sum(map(new.tokens, (w.message for w in new.window(entries)))) > sum(
        map(old.tokens, (w.message for w in old.window(entries)))
    )


def test_replaylabs_compaction_carries_the_prompt_state_pi_1_6_0s_own_compaction_does(
    pi16, run_session: Path, tmp_path: Path
) -> None:
    """pi 1.6.0's `appendCompaction` stores the replayed system message as the entry's
    `systemMessage`, and its rebuild yields it before the summary. replaylab's compaction of the
    same path under the profile carries the same one (stamped with its own entry's time), so the
    compacted window leads with it, and that window is pi 1.6.0's own rebuild of the copy."""
    theirs, ours = tmp_path / "theirs.jsonl", tmp_path / "ours.jsonl"
    shutil.copy(run_session, theirs)
    shutil.copy(run_session, ours)
    budget = {"context_tokens": 1500, "reserve_tokens_floor": 100, "keep_recent_tokens": 300}
    own = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path / "pi", PROFILE)(
        CompactParams(session_file=str(theirs), compaction_mode="auto", **budget)
    )
    assert own.success, own.error
    mine = compact(
        CompactParams(
            session_file=str(ours), compaction_mode="auto", working_copy=str(tmp_path / "copy.jsonl"), **budget
        ),
        memo=ItemMemo(rules=rules_of(PROFILE)),
    )
    assert mine.success, mine.error
    entries = {
        side: next(
            e for e in map(orjson.loads, reversed(Path(path).read_bytes().splitlines())) if e["type"] == "compaction"
        )
        for side, path in (("pi", theirs), ("replaylab", mine.working_copy))
    }
    carried = {side: entry["systemMessage"] for side, entry in entries.items()}
    for side, entry in entries.items():
        assert carried[side]["timestamp"] == date_time_ms(entry["timestamp"]), side
        assert carried[side]["sections"]["preamble"].startswith("You are a test assistant")
    assert {**carried["replaylab"], "timestamp": 0} == {**carried["pi"], "timestamp": 0}
    assert mine.compacted_window[0]["role"] == "system" and mine.compacted_window[1]["role"] == "compactionSummary"
    context = [m.entry_id for m in pi16.view(Path(mine.working_copy)).windows[0].context]
    assert [w["entryId"] for w in mine.compacted_window] == context
    # the window's tokens count the prompt state it leads with
    assert mine.compacted_token_count == sum(w["tokens"] for w in mine.compacted_window)


# ---------------------------------------------------------------- pi 1.6.0's own compaction


def _params(copy: Path, **extra: object) -> CompactParams:
    return CompactParams(session_file=str(copy), compaction_mode="auto", **BUDGET, **extra)


def test_pi_1_6_0_compacts_through_the_contract_with_summaries_from_the_loopback_endpoint(pi16, tmp_path: Path) -> None:
    copy = tmp_path / RECORDING.name
    shutil.copy(RECORDING, copy)
    before = copy.read_bytes()
    own = pi16.view(RECORDING, keep_recent_tokens=(500,), reserve_tokens=800).windows[0].cuts[0]
    assert own.refused is None and own.is_split_turn and own.turn_prefix
    compactor = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path, profile_named("pi@1.6.0"))
    result = compactor(_params(copy))
    assert result.success, result.error
    assert copy.read_bytes().startswith(before)  # an append, never a rewrite
    assert result.first_kept_entry_id == own.first_kept_entry_id
    entry = orjson.loads(copy.read_bytes().splitlines()[-1])
    assert entry["type"] == "compaction" and "usage" in entry and entry["fromHook"] is False
    # the history first, then the turn's prefix: one request after the other
    history, prefix = compactor.summary_requests
    prompt = prefix["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(b.get("text", "") for b in prompt)
    assert (
        prompt.startswith("# Conversation\n") and TURN_PREFIX_PROMPT_START in prompt and "<conversation>" not in prompt
    )
    assert all(f"## {section}" in prompt for section in TURN_PREFIX_SECTIONS)
    # the endpoint read the prefix's messages: its answer quotes the turn's request, not an empty one
    answered = summary_of(prefix)
    assert "I'll keep it for now" in answered and "None captured" not in answered
    assert result.summary_text.startswith(summary_of(history) + SPLIT_TURN_MARK + answered)
    # pi 1.6.0's own rebuild of the compacted copy is the window the compactor reported
    context = [m.entry_id for m in pi16.view(copy).windows[0].context]
    assert [w["entryId"] for w in result.compacted_window] == context


def test_compactor_pi_follows_the_items_pi_and_the_fallback_pi_for_another_agent() -> None:
    from replaylab.oracles.pi import compact_entry, compactor_profile

    assert compactor_profile(profile_named("pi@1.6.0")).name == "pi@1.6.0"
    assert compactor_profile(profile_named("pi@0.73.1")).name == "pi@0.73.1"
    assert compactor_profile(profile_named("openclaw@2026.9.6")).name == "pi@0.73.1"
    assert compactor_profile(None).name == "pi@0.73.1"
    assert compact_entry(profile_named("pi@1.6.0")).parent.name == "pi-1.6.0"
    assert compact_entry(profile_named("pi@1.6.0")).is_file() and compact_entry(None).is_file()


def test_the_file_lists_read_nested_calls_as_each_pis_own_compaction_does(pi16, tmp_path: Path) -> None:
    """pi 1.6.0's `codemode` records the calls its script made on the script's tool result
    (`nestedCalls`), and its compaction's file lists read them (`extractFileOpsFromMessage`); pi
    0.73.1's read assistants' calls only. The same session compacted by each pi's own code and by
    replaylab under that pi's profile carries the same `readFiles` / `modifiedFiles`."""
    from builders.pi16_codemode import codemode_turn, pi16_session

    session = pi16_session()
    session.user("tidy the notes " + "n" * 3_000)
    session.tool_turn("read", {"path": "todo.md"}, "1. notes")
    nested = [("read", {"path": "notes.txt"}), ("write", {"path": "b.txt", "content": "x"}), ("read", None)]
    codemode_turn(session, "...", [*nested, ("edit", {"path": "c.txt", "edits": []}), ("read", {"path": "todo.md"})])
    codemode_turn(session, "return 1", [])
    session.assistant("Done.")
    session.user("and now? " + "q" * 3_000)
    session.assistant("done")
    recording = session.write(tmp_path / "codemode.jsonl")
    lists = {}
    for name in ("pi@1.6.0", "pi@0.73.1"):
        theirs, ours = tmp_path / f"{name}-pi.jsonl", tmp_path / f"{name}-ours.jsonl"
        shutil.copy(recording, theirs)
        own = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path / name, profile_named(name))(
            CompactParams(session_file=str(theirs), compaction_mode="auto", **BUDGET)
        )
        assert own.success, own.error
        mine = compact(
            CompactParams(session_file=str(recording), compaction_mode="auto", working_copy=str(ours), **BUDGET),
            memo=ItemMemo(rules=rules_of(name)),
        )
        assert mine.success, mine.error
        assert mine.first_kept_entry_id == own.first_kept_entry_id
        details = [orjson.loads(path.read_bytes().splitlines()[-1])["details"] for path in (theirs, ours)]
        found = [(d["readFiles"], d["modifiedFiles"]) for d in details]
        assert found[0] == found[1], name
        lists[name] = found[0]
    assert lists == {
        "pi@1.6.0": (["notes.txt", "todo.md"], ["b.txt", "c.txt"]),
        "pi@0.73.1": (["todo.md"], []),
    }


def test_the_file_lists_are_in_javascripts_sort_order_as_each_pis_own_compaction_writes_them(
    pi16, tmp_path: Path
) -> None:
    """Both pis' `computeFileLists` order each list with `.sort()`, by UTF-16 units: a name with a
    supplementary character (a surrogate pair) before one with a character of U+E000–U+FFFF, where
    code points put it after. Each pi's own compaction and replaylab's under its profile agree."""
    from builders.transcripts import Session

    session = Session()
    session.user("tidy the notes " + "n" * 3_000)
    for n, name in enumerate(("\uff21.txt", "\U0001f600.txt", "a.txt")):
        session.tool_turn("read", {"path": name}, f"text {n}")
    for name in ("w/\ufb01le.txt", "w/\U00010000.txt"):
        session.tool_turn("write", {"path": name, "content": "x"}, "ok")
    session.assistant("Done.")
    session.user("and now? " + "q" * 3_000)
    session.assistant("done")
    recording = session.write(tmp_path / "odd-names.jsonl")
    for name in ("pi@1.6.0", "pi@0.73.1"):
        theirs, ours = tmp_path / f"{name}-pi.jsonl", tmp_path / f"{name}-ours.jsonl"
        shutil.copy(recording, theirs)
        own = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path / name, profile_named(name))(
            CompactParams(session_file=str(theirs), compaction_mode="auto", **BUDGET)
        )
        assert own.success, own.error
        mine = compact(
            CompactParams(session_file=str(recording), compaction_mode="auto", working_copy=str(ours), **BUDGET),
            memo=ItemMemo(rules=rules_of(name)),
        )
        assert mine.success, mine.error
        details = [orjson.loads(path.read_bytes().splitlines()[-1])["details"] for path in (theirs, ours)]
        found = [(d["readFiles"], d["modifiedFiles"]) for d in details]
        assert (
            found[0]
            == found[1]
            == (
                ["a.txt", "\U0001f600.txt", "\uff21.txt"],
                ["w/\U00010000.txt", "w/\ufb01le.txt"],
            )
        ), name


def test_a_replayed_codemode_result_keeps_the_calls_pi_1_6_0s_own_compaction_reads(pi16, tmp_path: Path) -> None:
    """A codemode call replayed from the recording, written to the working copy as the compacted
    run writes its turns (`ReplayedTurns`): pi 1.6.0's own compaction of that copy lists the files
    of the calls its script made, read from the replayed result's `nestedCalls` as from the
    recording's — the replayed result carries the record."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from replaylab.cassette import cassette_path_for
    from replaylab.importers import import_sessions, write_session
    from replaylab.qa.setup import ReplayedTurns
    from replaylab.replay import ToolExecutor
    from replaylab.replay.tools.recorded_results import RecordedResults
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript import TranscriptWriter
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.model import AssistantMessage

    session = pi16_session()
    session.user("tidy the notes " + "n" * 3_000)
    nested = [("read", {"path": "notes.txt"}), ("write", {"path": "b.txt", "content": "x"})]
    codemode_turn(session, "await tools.read({path: 'notes.txt'})", nested)
    session.assistant("Done.")
    session.user("and now? " + "q" * 3_000)
    session.assistant("done")
    for imported in import_sessions("pi", session.write(tmp_path / "codemode.jsonl")):
        write_session(imported, tmp_path / "rec")
    recording = tmp_path / "rec" / "codemode.jsonl"
    path = load_transcript(recording).leaf_path()
    executor = ToolExecutor(cassette_path_for(recording), ToolClassifier(), recorded=RecordedResults.of(path))
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy" / "codemode.jsonl")
    replayed = ReplayedTurns(writer, path[0].id)  # the replay starts after the prompt state
    with executor:
        for entry in path[1:]:
            message = entry.message
            if getattr(message, "role", None) == "toolResult":
                continue
            replayed.add_messages([WindowMessage(entry.id, message)])
            for call in message.tool_calls() if isinstance(message, AssistantMessage) else ():
                result, _ = executor.execute(call, turn=1, step=0)
                replayed.add_messages([WindowMessage(f"{entry.id}:{call.id}", result)])
    leaf = replayed.write()
    assert writer.transcript().path_to(leaf)[0].id == path[0].id
    own = ExternalCompactor(PiCompactor(), SourceStates(()), tmp_path / "pi", profile_named("pi@1.6.0"))(
        CompactParams(session_file=str(writer.path), compaction_mode="auto", leaf_id=leaf, **BUDGET)
    )
    assert own.success, own.error
    details = orjson.loads(writer.path.read_bytes().splitlines()[-1])["details"]
    assert (details["readFiles"], details["modifiedFiles"]) == (["notes.txt"], ["b.txt"])
