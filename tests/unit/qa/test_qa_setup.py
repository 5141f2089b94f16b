"""Working-folder set-up of the QA pipeline: sub-agent transcripts follow their parent."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.qa.setup import copy_children
from repo_paths import REPO_ROOT


def test_children_are_copied_and_a_child_added_later_is_seen(tmp_path: Path) -> None:
    """The folder listing is reused between items, but a file added to the folder since (its
    mtime moves) is found; other sessions' children and look-alike names are not copied."""
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "a.jsonl").write_text("{}\n")
    (rec / "a.sub-1.jsonl").write_text("child 1\n")
    (rec / "ab.sub-9.jsonl").write_text("another session's child\n")
    (rec / "b.jsonl").write_text("{}\n")
    first, second = tmp_path / "w1", tmp_path / "w2"
    first.mkdir(), second.mkdir()
    copy_children(rec / "a.jsonl", first)
    listed_at = rec.stat().st_mtime_ns
    assert sorted(os.listdir(first)) == ["a.sub-1.jsonl"]
    (rec / "a.sub-2.cassette.yaml").write_text("child 2 cassette\n")
    # a coarse clock: the folder's mtime did not move (and the change is recent)
    os.utime(rec, ns=(rec.stat().st_atime_ns, listed_at))
    copy_children(rec / "a.jsonl", second)
    assert sorted(os.listdir(second)) == ["a.sub-1.jsonl", "a.sub-2.cassette.yaml"]
    assert (second / "a.sub-2.cassette.yaml").read_text() == "child 2 cassette\n"


#: a bundled session that safeguard compacts again, successfully, in its compacted run: the later
#: compaction keeps from a replayed entry on, so it summarizes replayed turns (a session that writes
#: from its start, like long-account-review, can only keep everything after a later cut)
RECORDING = "handbook-damaged-in-transit.jsonl"


def _spied_run(compact_at: str) -> tuple[list[tuple[str, set[str], object, str]], list[str]]:
    """Run the bundled RECORDING with `compact_at`. Returns, for every compact() call, the leaf it
    was given, the entry ids then in the working copy, its result and the trigger it was given;
    and every entry id appended to the working copy during the run, in order."""
    from replaylab.compaction import compact
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    root = REPO_ROOT
    suite = load_suite(root / "suites" / "safeguard.yaml")
    recording = next(r for r in suite.recordings if r.name == RECORDING)
    scenario = suite.scenarios[0].model_copy(update={"compact_at": compact_at})
    calls: list[tuple[str, set[str], object, str]] = []
    appended: list[str] = []

    def spy(params, *, classifier, writer):
        if not calls:  # the real appends run (`append` is one of `append_many`); the spy only notes the ids
            real_append_many = writer.append_many

            def append_many(entries):
                entries = list(entries)
                appended.extend(entry["id"] for entry in entries)
                return real_append_many(entries)

            writer.append_many = append_many
        entries = {e.id for e in writer.transcript().entries}
        result = compact(params, classifier=classifier, writer=writer)
        calls.append((params.leaf_id, entries, result, params.trigger))
        return result

    result = run_item(scenario, recording, RunOptions(compactor=spy))
    assert result.outcome == "passed", result.reason
    return calls, appended


def test_replayed_turns_reach_the_working_copy_before_a_later_compaction_and_only_then() -> None:
    """A later compaction summarizes the replayed run, so the replayed turns are written (chained
    from the previous compaction) before it starts; with no later compaction nothing is written."""
    calls, appended = _spied_run("auto")
    assert len(calls) >= 2  # the bundled session compacts again in its compacted run
    for leaf, entries, _, _ in calls[1:]:
        assert leaf in entries and leaf in appended  # the chain it is given was written before it ran
    # a later compaction that succeeded kept from a replayed entry on: replayed turns were summarized
    assert any(r.success and r.first_kept_entry_id in appended for _, _, r, _ in calls[1:])
    assert len(appended) > 2 * len(calls)  # compaction entries and replayed messages
    # pi's reason: under `auto` each compaction is one the window crossing the budget triggered
    assert {trigger for *_, trigger in calls} == {"threshold"}

    calls, appended = _spied_run(f"turn:{_first_auto_turn()}")
    assert len(calls) == 1 and calls[0][2].success
    assert appended == [calls[0][2].compaction_event_id]  # the replayed turns had no reader
    assert calls[0][3] == "manual"  # a fixed point: the compaction was asked for


def _first_auto_turn() -> int:
    """The 1-based turn before which `auto` compacts RECORDING first."""
    from replaylab.qa.boundaries import turn_boundaries
    from replaylab.qa.setup import auto_points
    from replaylab.replay import split_turns
    from replaylab.suite import load_suite
    from replaylab.transcript import load_transcript

    root = REPO_ROOT
    suite = load_suite(root / "suites" / "safeguard.yaml")
    path = load_transcript(root / "recordings" / "helpdesk" / RECORDING).leaf_path()
    return auto_points(turn_boundaries(path, split_turns(path)), suite.scenarios[0])[0] + 1


_NAMES = st.lists(st.text(alphabet="as.-_bjé0ZA", max_size=9).map(lambda n: n.strip(".") or "x"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(_NAMES, st.sampled_from(["a", "a.s", "a.sub", "A", "é", "a-"]), st.data())
def test_exactly_the_sub_agent_files_of_the_recording_are_copied(tmp_path_factory, names, stem, data) -> None:
    """The files `<stem>.sub-*` of the recording's folder, and nothing else: not folders with that
    prefix, not other sessions' children or look-alike names."""
    root = tmp_path_factory.mktemp("children")
    recordings = root / "recordings"
    recordings.mkdir()
    children = [f"{stem}.sub-{n}" for n in names[: len(names) // 2]] + names[len(names) // 2 :]
    for name in dict.fromkeys(children):
        if name.endswith("-") or data.draw(st.booleans()):
            (recordings / name).mkdir(exist_ok=True)
        elif not (recordings / name).exists():
            (recordings / name).write_text(name)
    recording = recordings / f"{stem}.jsonl"
    recording.write_text("")
    work = root / "work"
    work.mkdir()
    copy_children(recording, work)
    expected = sorted(n for n in os.listdir(recordings) if n.startswith(f"{stem}.sub-") and (recordings / n).is_file())
    assert sorted(os.listdir(work)) == expected
    assert all((work / n).read_text() == n for n in expected)


def test_a_pi_session_with_an_abandoned_branch_replays_its_path_on_the_paths_own_answers(tmp_path: Path) -> None:
    """The user went back and ran the checks again: the abandoned try's `npm run check` failed,
    the path's passed, and the imported cassette holds both, the abandoned one first. The replay
    of the path from before the checks is served the path's answer: no infrastructure error, no
    drift, and the same outcome as the session without its abandoned branch."""
    from builders.transcripts import Session
    from replaylab.cli import main as cli_main
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite

    def session(branch: bool) -> Session:
        s = Session("branchy")
        s.user("Look at the repo and tell me what it does. " + "Be thorough. " * 80)
        s.tool_turn("read", {"path": "README.md"}, "A tool that " + "does things. " * 200)
        answer, _ = s.assistant("It is a build tool. " + "Details. " * 120)
        if branch:
            s.user("Run the checks.")
            s.tool_turn("bash", {"command": "npm run check"}, "3 errors: lint failed")
            s.assistant("There are three errors.")
            s.last = answer
        s.user("Run the checks now, I fixed lint.")
        s.tool_turn("bash", {"command": "npm run check"}, "All checks passed")
        s.assistant("All checks pass.")
        s.user("Write the changelog.")
        s.tool_turn("write", {"path": "CHANGELOG.md", "content": "v1"}, "wrote CHANGELOG.md")
        s.assistant("Done.")
        return s

    outcomes = []
    for branch in (True, False):
        folder = tmp_path / ("branched" if branch else "linear")
        (folder / "src").mkdir(parents=True)
        session(branch).write(folder / "src" / "s.jsonl")
        assert cli_main(["import", "--from", "pi", str(folder / "src"), "--out", str(folder / "rec")]) == 0
        (folder / "suite.yaml").write_text(
            "name: s\nrecordings: rec/*.jsonl\ncompaction: {mode: safeguard}\ncompact_at: turn:2\n", encoding="utf-8"
        )
        suite = load_suite(folder / "suite.yaml")
        result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(work_dir=folder, verify_with_pi="off"))
        assert not {d.code.value for d in result.defects} & {"CASSETTE_MISSING", "BASELINE_DRIFT"}, result.reason
        [check] = [c for t in result.baseline.turns for c in t.tool_calls if c.tool == "bash"]
        assert (check.source, check.result) == ("cassette", "All checks passed")
        outcomes.append((result.outcome, [d.code for d in result.defects]))
    assert outcomes[0] == outcomes[1]


def test_replayed_tool_results_reach_the_working_copy_as_the_run_had_them(tmp_path: Path) -> None:
    """A replayed result is the one the recording persisted, so it went through the recorded
    agent's own write-time cap already (pi has none): a later compaction reads it whole, over
    OpenClaw's 40,000-char cap, exactly as the run showed it to the model."""
    from builders.transcripts import SMALL_SAFEGUARD, Session, imported_suite
    from replaylab.compaction import compact
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite
    from replaylab.transcript.model import ToolResultMessage, message_text

    big = "".join(f"line {n}: " + "lorem ipsum dolor sit amet " * 3 + "\n" for n in range(700))
    assert len(big) > 60_000
    s = Session("bigread")
    s.user("Look at the repo. " + "Be thorough. " * 60)
    s.tool_turn("read", {"path": "README.md"}, "A tool that " + "does things. " * 150)
    s.assistant("It is a build tool. " + "Details. " * 80)
    s.user("Read the log.")
    s.tool_turn("read", {"path": "build.log"}, big)
    s.assistant("The log shows 700 lines.")
    s.user("Write the changelog.")
    s.tool_turn("write", {"path": "CHANGELOG.md", "content": "v1"}, "wrote CHANGELOG.md")
    s.assistant("Done.")
    suite = load_suite(imported_suite(s, tmp_path, f"compact_at: every:1\n{SMALL_SAFEGUARD}"))
    read_by_later_compactions: list[list[int]] = []

    def spy(params, *, classifier, writer):
        results = [
            m
            for e in writer.transcript().leaf_path()
            if isinstance(m := getattr(e, "message", None), ToolResultMessage)
        ]
        read_by_later_compactions.append([len(message_text(m)) for m in results])
        return compact(params, classifier=classifier, writer=writer)

    result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(work_dir=tmp_path, compactor=spy))
    assert result.outcome != "error", result.reason
    # the first compaction reads the recording; a later one the replayed read, whole
    assert len(read_by_later_compactions) >= 2
    assert any(len(big) in lengths for lengths in read_by_later_compactions[1:])


def _results_into(results: list):
    """An observer of the compactor (`RunOptions.observe_compactor`) that keeps each result."""

    def observe(compactor):
        def watched(params, **kwargs):
            result = compactor(params, **kwargs)
            results.append(result)
            return result

        return watched

    return observe


def test_an_observer_of_the_compactor_sees_the_items_own_compactions_and_changes_nothing() -> None:
    """`RunOptions.observe_compactor` wraps whichever compactor the item compacts with — under pi
    1.6.0's rules the default one with the item's memo, which cuts by pi 1.6.0's rules — so what it
    measures is what the item did: the run is the same with it and without it."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    suite = load_suite(REPO_ROOT / "suites" / "pi-1.6.0.yaml")
    recording = next(r for r in suite.recordings if Path(r).name == "overflow-handbook-midturn.jsonl")
    scenario = suite.scenarios[0]
    results: list = []
    plain = run_item(scenario, recording, RunOptions(verify_with_pi="off"))
    watched = run_item(scenario, recording, RunOptions(verify_with_pi="off", observe_compactor=_results_into(results)))
    seen = [result.success for result in results]
    assert plain.compaction is not None and plain.compaction.compactions >= 2
    assert sum(seen) == plain.compaction.compactions == watched.compaction.compactions
    assert watched.compactor == plain.compactor == "replaylab"
    assert (watched.outcome, watched.reason) == (plain.outcome, plain.reason)
    assert [w.entry_id for w in watched.window_after] == [w.entry_id for w in plain.window_after]


def _writes_session(folder: Path) -> Path:
    """Sixteen turns that each read a part and write its notes: the writes' protected entries
    outgrow the budget after a few compactions, and stay over it."""
    from builders.transcripts import Session, imported_suite

    s = Session("writes")
    for turn in range(1, 17):
        s.user(f"Step {turn}: read part {turn} and save its notes.")
        s.tool_turn("read", {"path": f"part-{turn}.txt"}, f"part {turn}: lorem ipsum dolor\n" * 40)
        notes = {"path": f"notes-{turn}.md", "content": f"notes {turn} " * 60}
        s.tool_turn("write", notes, f"wrote notes-{turn}.md " + "ok " * 90)
        s.assistant(f"Saved notes-{turn}.md.")
    budget = "compaction: {mode: safeguard, contextTokens: 3000, reserveTokensFloor: 600, keepRecentTokens: 400}\n"
    return imported_suite(s, folder, settings=budget + "compact_at: auto\n")


def test_a_compaction_whose_protected_entries_alone_are_over_the_budget_is_not_run_again(tmp_path: Path) -> None:
    """Once replaylab's own compaction fails because what safeguard keeps verbatim is over the
    budget on its own, every later one fails alike (the window keeps those entries and gains
    more): the compacted run counts each later attempt without running it. The item is the same as
    with the very same compaction given as a compactor under test, which runs every attempt."""
    from replaylab.compaction import compact
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    suite = load_suite(_writes_session(tmp_path))
    scenario = suite.scenarios[0].model_copy(update={"agent": "pi@0.73.1"})  # plain rules: `compact` is the same

    own_results: list = []
    given_results: list = []
    options = RunOptions(verify_with_pi="off", observe_compactor=_results_into(own_results))
    skipping = run_item(scenario, suite.recordings[0], options)
    options = RunOptions(verify_with_pi="off", compactor=compact, observe_compactor=_results_into(given_results))
    running = run_item(scenario, suite.recordings[0], options)
    own = [result.failure for result in own_results]
    given = [result.failure for result in given_results]
    assert given.count("protected_too_large") >= 4 and own.count("protected_too_large") < given.count(
        "protected_too_large"
    )
    assert own == given[: len(own)]  # the same compactions, until the first one over the budget on its own
    [said] = [d.message for d in skipping.defects if d.code.value == "CANNOT_COMPACT"]
    assert said == next(d.message for d in running.defects if d.code.value == "CANNOT_COMPACT")
    assert f"(and {given.count('protected_too_large') - 1} more attempts after it)" in said
    assert (skipping.outcome, skipping.compaction.compactions) == (running.outcome, running.compaction.compactions)
    assert [w.entry_id for w in skipping.window_after] == [w.entry_id for w in running.window_after]


def test_the_budget_check_before_each_turn_sums_each_message_once_with_the_runs_count() -> None:
    """`compact_at: auto` asks before every turn whether the window crosses the budget. With the
    run's running count it answers as the whole sum does, and looks each message up once over the
    run, not the whole window again per turn (a 6,000-turn session asked 20 million lookups)."""
    from types import SimpleNamespace

    from replaylab.qa.setup import crosses_budget
    from replaylab.replay import WindowTokenCount
    from replaylab.suite import CompactionSettings
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.memo import IdentityMemo
    from replaylab.transcript.model import TextBlock, ToolResultMessage

    settings = CompactionSettings.model_validate(
        {"mode": "safeguard", "contextTokens": 1_000, "reserveTokensFloor": 100}
    )
    scenario = SimpleNamespace(compaction=settings)
    turn = SimpleNamespace(inputs=[])
    lookups = []

    class Lookups(IdentityMemo):
        def get(self, key, make):
            lookups.append(key)
            return super().get(key, make)

    count = WindowTokenCount()
    count.estimates = Lookups()
    window: list[WindowMessage] = []
    answers = []
    for n in range(40):
        text = "x" * 100  # 25 tokens each: the 37th crosses 900
        window.append(
            WindowMessage(
                f"w{n}",
                ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextBlock(text=text)], is_error=False),
            )
        )
        counted = crosses_budget(window, turn, scenario, None, count)  # type: ignore[arg-type]
        assert counted == crosses_budget(window, turn, scenario)  # type: ignore[arg-type]
        answers.append(counted)
    assert answers.index(True) == 36 and len(lookups) == 40


def test_classifiers_of_the_same_declarations_share_their_answers_and_only_they(tmp_path: Path) -> None:
    """Every item of a suite makes its own classifier (`classifier_for`); those of the same
    declarations and overrides answer from one table, with the answers a classifier of its own
    gives; a recording beside other tool classes, other overrides, or a classifier changed in place
    before its first answer (a `classifier_override` may) gets a table of its own."""
    from bench.cases.pipeline import make_sessions
    from replaylab.qa.setup import classifier_for
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.overrides import ClassificationOverrides
    from replaylab.suite import load_suite

    plain, declared = tmp_path / "plain", tmp_path / "declared"
    plain.mkdir(), declared.mkdir()
    (declared / "tool_classes.json").write_text('{"send_email": "read"}')
    scenario = load_suite(make_sessions(tmp_path / "suite", 1)).scenarios[0]
    first, second, changed = (classifier_for(scenario, plain / f"{n}.jsonl", None) for n in "abc")
    changed.declared["exec"] = "read"
    calls = [("send_email", {"to": "a@b.c"}), ("exec", {"command": "ls -la"}), ("exec", {"command": "rm x"})]
    assert [first.explain(*c) for c in calls] == [ToolClassifier().explain(*c) for c in calls]
    assert second.explain(*calls[2]) == first.explain(*calls[2]) and first._explained is second._explained
    assert changed.explain(*calls[2]).tool_class == "read" and changed._explained is not first._explained
    beside = classifier_for(scenario, declared / "a.jsonl", None)
    forced = classifier_for(
        scenario.model_copy(update={"classification": ClassificationOverrides(safe=["exec"])}), plain / "d.jsonl", None
    )
    assert beside.explain(*calls[0]).tool_class == "read" and first.explain(*calls[0]).tool_class == "write"
    assert forced.explain(*calls[2]).tool_class == "read" and first.explain(*calls[2]).tool_class == "exec"
    assert beside._explained is not first._explained and forced._explained is not first._explained


def test_a_read_only_codemode_script_safeguard_summarized_replays_as_the_read_the_ledger_counts(
    tmp_path: Path,
) -> None:
    """pi 1.6.0's `codemode` call whose result records only reads (`nestedCalls`): the ledger
    counts no change, safeguard summarizes it away, and both runs replay the same script asked for
    again after the compaction as that read — as the recording's calls of it are judged, not as
    the call alone (`exec`) — with no blocking finding, the runs agreeing."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from builders.transcripts import imported_suite
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    code = "return await tools.read({path: 'notes.txt'})"
    reads = [("read", {"path": "notes.txt"}), ("grep", {"pattern": "bank", "path": "notes.txt"})]
    s = pi16_session()
    s.user("what do the notes say? " + "n" * 3_000)
    cell, answer, _ = codemode_turn(s, code, reads, output="bank")
    s.assistant("They say: bank.")
    s.user("anything else? " + "q" * 3_000)
    s.assistant("Nothing else.")
    s.user("read the notes again")
    codemode_turn(s, code, reads, output="bank")
    s.assistant("Still: bank.")
    settings = (
        "compaction: {mode: safeguard, contextTokens: 100000, reserveTokensFloor: 1000, keepRecentTokens: 1,"
        " recentTurnsPreserve: 0}\ncompact_at: turn:3\n"
    )
    suite = load_suite(imported_suite(s, tmp_path / "codemode", settings))
    result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="off"))
    assert result.compaction is not None and result.compaction.success, result.reason
    assert result.ledger_before is not None and result.ledger_before.mutated_event_ids == []
    assert not {cell, answer} & {row.entry_id for row in result.window_after}  # summarized away
    assert not [d for d in result.defects if d.blocking], result.reason
    assert result.outcome == "passed", result.reason
    for run in (result.baseline, result.compacted):
        calls = [(c.tool, c.source, c.mutating) for turn in run.turns for c in turn.tool_calls]
        assert calls == [("codemode", "cassette", False)]
