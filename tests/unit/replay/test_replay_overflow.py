"""The overflow recovery chain in the agent loop (replaylab/replay/overflow.py): a replayed session
whose model has a context window (`ContextLimitedModel`) meets the request-time guard, the
provider's overflow error, 2026.9.6's mid-turn precheck or a silent overflow, and the chain
compacts (through the hook the pipeline gives it), truncates once, or gives up — per the OpenClaw
runtime rules of the item."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from builders.transcripts import message_chain_jsonl
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.checks.overflow import chain_violations
from replaylab.compaction.recovery import StepOutcome
from replaylab.compaction.truncation import tool_result_text_length
from replaylab.replay import ToolExecutor, make_model, run_turns, split_turns
from replaylab.replay.agent.context_limit import ContextLimitedModel
from replaylab.replay.loop import window_tokens
from replaylab.replay.overflow import OverflowRecovery, mutating_result_ids, truncate_window
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import load_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import TextBlock, ToolResultMessage, UserMessage, message_text
from replaylab.upstream import openclaw_2026_9_6 as OC96
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6

#: 2026.9.6's chain with pi's compact-and-retry of a silent overflow: the in-attempt path, which no
#: named rule set reaches on a replayed window (2026.4.12's guard raises before the model is asked,
#: 2026.9.6 keeps the reply)
PI_SILENT = replace(OPENCLAW_2026_9_6, silent_overflow="compact-and-retry")

CODE = "SECRET-CODE-7731"
#: a handbook of ~2,000 tokens: over every per-result cap of the small windows below
HANDBOOK = "\n".join(f"row {i}: handbook filler text" for i in range(300)) + f"\n{CODE} at the end"
CLASSES = {"get_doc": "read", "get_note": "read", "issue_refund": "mutating"}


def _note(n: int, chars: int) -> str:
    return (f"note {n}: " + " ".join(f"w{n}x{i}" for i in range(chars)))[:chars]


def _call(call_id: str, name: str, args: dict) -> dict:
    content = [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}]
    return {"role": "assistant", "stopReason": "toolUse", "content": content}


def _result(call_id: str, name: str, text: str) -> dict:
    content = [{"type": "text", "text": text}]
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "isError": False, "content": content}


def _answer(text: str) -> dict:
    return {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": text}]}


def _session(
    tmp_path: Path, *, first: int = 4, second: int = 0, note_chars: int = 480, paste: int = 0, doc: str = "short page"
) -> Path:
    """Turn 1 reads `first` notes; turn 2 (its message with `paste` chars pasted) issues a refund,
    reads `second` more notes and the document `doc`, and answers (no `doc`: turn 2 only answers)."""
    messages: list[dict] = [{"role": "user", "content": "Read the notes."}]
    interactions = []

    def read(n: int) -> None:
        text = _note(n, note_chars)
        messages.extend([_call(f"n{n}", "get_note", {"n": n}), _result(f"n{n}", "get_note", text)])
        interactions.append(recorded_tool_interaction("get_note", {"n": n}, text))

    for n in range(first):
        read(n)
    messages += [
        _answer("Read them."),
        {"role": "user", "content": "Refund ORD-1, then read on." + " pasted" * (paste // 7)},
    ]
    if doc is not None:
        messages += [_call("r1", "issue_refund", {"order": "ORD-1"}), _result("r1", "issue_refund", "REF-1 issued")]
        interactions.append(recorded_tool_interaction("issue_refund", {"order": "ORD-1"}, "REF-1 issued"))
    for n in range(first, first + second):
        read(n)
    if doc is not None:
        messages += [_call("d1", "get_doc", {"doc": "handbook"}), _result("d1", "get_doc", doc)]
        interactions.append(recorded_tool_interaction("get_doc", {"doc": "handbook"}, doc))
    messages.append(_answer("Refunded: REF-1." if doc is not None else "Noted."))
    path = tmp_path / "s.jsonl"
    path.write_bytes(message_chain_jsonl(messages, "overflow"))
    write_cassette(tmp_path / "s.cassette.yaml", interactions)
    return path


def _summary_compactor(calls: list[tuple[str, int]], *, succeed: bool = True, helps: bool = True):
    """A compaction hook as the pipeline's is one: everything before the turn's user message
    becomes one summary message (the run's last user message and what follows are kept)."""

    def compact(trigger: str, window: list[WindowMessage], info: dict) -> StepOutcome:
        calls.append((trigger, len(window)))
        if not succeed:
            return StepOutcome(False, reason="nothing to compact")
        if not helps:  # compacted, and the window is as large as before
            return StepOutcome(True, window=list(window))
        last_user = max(i for i, w in enumerate(window) if isinstance(w.message, UserMessage))
        summary = WindowMessage(None, UserMessage(content="Summary: four notes were read."))
        return StepOutcome(True, window=[summary, *window[last_user:]])

    return compact


def _run(
    path: Path,
    tokens: int,
    rules,
    compact,
    *,
    overflow: str = "error",
    protect: bool = True,
    provider: str = "anthropic",
    faults: frozenset[str] = frozenset(),
    compaction_timeout: bool = False,
    restore_session=None,
    precheck: bool = False,
):
    transcript = load_transcript(path)
    classifier = ToolClassifier(declared=CLASSES)
    executor = ToolExecutor(path.with_name("s.cassette.yaml"), classifier)
    model = ContextLimitedModel(
        make_model("replay", recording=transcript),
        tokens=tokens,
        estimate=window_tokens,
        overflow=overflow,
        provider=provider,
    )
    recovery = OverflowRecovery(
        context_tokens=tokens,
        rules=rules,
        compact=compact,
        estimate=window_tokens,
        is_mutating=classifier.is_mutating,
        protect_mutating=protect,
        diag_id_factory=lambda: "cmp-test-0000",
        faults=faults,
        compaction_timeout=compaction_timeout,
        restore_session=restore_session,
        mid_turn_precheck=precheck,
    )
    turns = split_turns(transcript.leaf_path())
    trace, window = run_turns([], turns, model, executor, label="compacted", return_window=True, recovery=recovery)
    # whatever the chain did, it kept its release's rules (checks.overflow judges them on their own),
    # unless it was given faults: then what the checks say is what the test asserts
    if not faults:
        assert _violations(trace, rules) == []
    return trace, window


def _violations(trace, rules) -> list[str]:
    by_turn = {t.turn: t for t in trace.turns}
    return [v.message.split(": ", 2)[-1] for c in trace.recovery for v in chain_violations(c, rules, by_turn[c.turn])]


def _kinds(trace, turn: int) -> list[str]:
    return [s.kind for chain in trace.recovery if chain.turn == turn for s in chain.steps]


@pytest.mark.parametrize("rules", [OPENCLAW_2026_4_12, OPENCLAW_2026_9_6], ids=str)
def test_a_window_that_fits_meets_no_chain(tmp_path, rules):
    calls: list = []
    trace, _ = _run(_session(tmp_path), 100_000, rules, _summary_compactor(calls))
    assert trace.error is None and trace.recovery == [] and calls == []
    assert [t.answer for t in trace.turns] == ["Read them.", "Refunded: REF-1."]
    assert "recovery" not in trace.model_dump()  # a run without a chain reports none


def test_an_over_long_single_result_meets_the_request_time_guard_first(tmp_path):
    calls: list = []
    # 2026.9.6's guard cuts a result over the window's tokens x 1 chars: the handbook, for this
    # call only; the request then fits, so no provider error, no compaction
    trace, window = _run(_session(tmp_path, doc=HANDBOOK), 3_000, OPENCLAW_2026_9_6, _summary_compactor(calls))
    assert trace.error is None
    guard = [s for chain in trace.recovery for s in chain.steps if s.kind == "guard"]
    assert guard and guard[0].entry_ids == ["compacted:e13:d1"] and guard[0].tokens_after < guard[0].tokens_before
    assert all(s.kind == "guard" for chain in trace.recovery for s in chain.steps) and calls == []
    # the run's own window still holds the whole result (the guard cuts the call's copy)
    assert any(CODE in message_text(w.message) for w in window)


def test_a_provider_overflow_is_compacted_and_the_call_retried(tmp_path):
    calls: list = []
    # turn 2's first request (the pasted text on top of turn 1's notes) is over the window
    trace, window = _run(_session(tmp_path, paste=2_400), 1_000, OPENCLAW_2026_9_6, _summary_compactor(calls))
    assert trace.error is None and trace.turns[1].answer == "Refunded: REF-1."
    chain = trace.recovery[0]
    overflow = chain.steps[0]
    assert overflow.kind == "overflow" and overflow.detail.startswith('400 {"type":"error"')
    assert f"prompt is too long: {overflow.tokens_before} tokens > 1000 maximum" in overflow.detail
    assert overflow.step == 0 and chain.turn == 2
    compaction = chain.steps[1]
    assert compaction.kind == "overflow_compaction" and compaction.trigger == "overflow"
    assert compaction.tokens_after < compaction.tokens_before and compaction.diag_id == "cmp-test-0000"
    assert chain.gave_up is None and chain.overflow_compactions == 1 and calls[0][0] == "overflow"
    assert message_text(window[0].message) == "Summary: four notes were read."


def test_mid_turn_2026_9_6_prechecks_by_openclaw_s_pressure_when_enabled_2026_4_12_guard_replaces_older(tmp_path):
    """Turn 2's notes, each under every cap, grow the window after tool results. With its mid-turn
    precheck enabled, 2026.9.6 stops a request before the provider once OpenClaw's token pressure
    exceeds the window less its reserve (a quarter of it): earlier than the request the provider
    refuses, which is where it stops with the precheck off (OpenClaw's default). 2026.4.12's guard
    replaces the older results with its placeholder for the call, and the request fits."""
    from replaylab.agents.openclaw_2026_9_6.pressure import attempt_reserve_tokens, prompt_budget

    path = _session(tmp_path, first=1, second=8)
    calls: list = []
    trace, _ = _run(path, 1_000, OPENCLAW_2026_9_6, _summary_compactor(calls), precheck=True)
    failed = [(c.turn, s) for c in trace.recovery for s in c.steps if s.kind == "precheck"]
    assert failed and failed[0][1].detail == OC96.MID_TURN_PRECHECK_ERROR_TEXT and failed[0][1].step > 0
    assert failed[0][1].tokens_before > prompt_budget(1_000, attempt_reserve_tokens(None)) == 750
    assert not [s for chain in trace.recovery for s in chain.steps if s.kind == "overflow"] and calls
    trace, _ = _run(path, 1_000, OPENCLAW_2026_9_6, _summary_compactor([]))
    refused = [(c.turn, s) for c in trace.recovery for s in c.steps if s.kind == "overflow"]
    assert refused and not [s for c in trace.recovery for s in c.steps if s.kind == "precheck"]
    assert (failed[0][0], failed[0][1].step) < (refused[0][0], refused[0][1].step)
    older: list = []
    trace, _ = _run(path, 1_000, OPENCLAW_2026_4_12, _summary_compactor(older), precheck=True)
    assert _kinds(trace, 2) and set(_kinds(trace, 2)) == {"guard"} and older == []
    assert trace.turns[1].answer == "Refunded: REF-1."


@pytest.mark.parametrize(
    ("rules", "session", "caution"),
    [
        # 2026.4.12: the pasted text alone is over its guard's preemptive ratio
        (OPENCLAW_2026_4_12, {"paste": 4_000}, ""),
        # 2026.9.6: turn 2's notes after the refund, over the window mid-turn, and together over
        # the recovery's aggregate budget (4 x the 1,200-char cap), which its gate asks for
        (OPENCLAW_2026_9_6, {"first": 1, "second": 8, "note_chars": 700}, OC96.SIDE_EFFECT_CAUTION),
    ],
    ids=["openclaw@2026.4.12", "openclaw@2026.9.6"],
)
def test_no_compaction_then_truncation_once_then_give_up_with_the_release_text(tmp_path, rules, session, caution):
    calls: list = []
    trace, _ = _run(_session(tmp_path, **session), 1_000, rules, _summary_compactor(calls, succeed=False))
    chain = next(c for c in trace.recovery if c.gave_up)
    kinds = [s.kind for s in chain.steps]
    # compaction asked for (and refused), truncation once, then the give-up
    truncations = [k for k in kinds if k in ("truncate_tool_results", "truncation_failed")]
    assert len(truncations) == 1 and kinds.index("compaction_failed") < kinds.index(truncations[0])
    assert kinds[-1] == "give_up" and chain.gave_up == "context_overflow"
    assert chain.user_text == rules.give_up.overflow_user_text + caution
    assert trace.turns[chain.turn - 1].answer == chain.user_text
    assert chain.diag_id == "cmp-test-0000" and calls


def test_compaction_up_to_the_maximum_then_give_up(tmp_path):
    """A compaction that compacts but never makes the turn fit: three times, no fourth."""
    calls: list = []
    trace, _ = _run(_session(tmp_path, first=1, second=8), 1_000, OPENCLAW_2026_9_6, _summary_compactor(calls))
    chain = next(c for c in trace.recovery if c.gave_up)
    assert [s.kind for s in chain.steps].count("overflow_compaction") == 3 == chain.overflow_compactions
    assert len(calls) == 3


def test_safeguard_truncation_never_cuts_a_mutating_result(tmp_path):
    path = _session(tmp_path, doc=HANDBOOK)
    transcript = load_transcript(path)
    classifier = ToolClassifier(declared=CLASSES)
    from replaylab.transcript import build_window

    window = build_window(transcript.leaf_path())
    big_refund = [
        WindowMessage(w.entry_id, w.message.model_copy(update={"content": [TextBlock(text="REF-1 " * 2000)]}))
        if isinstance(w.message, ToolResultMessage) and w.message.tool_name == "issue_refund"
        else w
        for w in window
    ]
    mutating = mutating_result_ids(big_refund, classifier.is_mutating)
    assert len(mutating) == 1
    _, cut = truncate_window(big_refund, 2_000, OPENCLAW_2026_9_6, skip=mutating)
    assert cut and not set(cut) & mutating
    _, unprotected = truncate_window(big_refund, 2_000, OPENCLAW_2026_9_6, skip=set())
    assert mutating <= set(unprotected)


def _notes(count: int, chars: int = 480) -> list[WindowMessage]:
    return [
        WindowMessage(
            f"w{n}",
            ToolResultMessage(
                tool_call_id=f"c{n}", tool_name="get_note", content=[TextBlock(text=_note(n, chars))], is_error=False
            ),
        )
        for n in range(count)
    ]


def test_the_aggregate_budget_is_the_cap_under_2026_4_12_and_four_caps_or_half_the_window_under_2026_9_6():
    # a 1,000-token window: a 1,200-char cap; 2026.9.6's aggregate budget max(4 x 1,200, 2,000)
    four = _notes(4)  # 1,920 chars: over one cap, under four
    _, newer = truncate_window(four, 1_000, OPENCLAW_2026_9_6, skip=set())
    _, older = truncate_window(four, 1_000, OPENCLAW_2026_4_12, skip=set())
    assert newer == [] and older  # no note is over the cap alone; together they are over one cap
    assert "w3" in older and "w0" not in older  # 2026.4.12 trims the newest first


def test_2026_9_6_trims_results_together_over_its_aggregate_budget_oldest_first():
    twelve = _notes(12)  # 5,760 chars, none over the 1,200-char cap, together over 4,800
    window, cut = truncate_window(twelve, 1_000, OPENCLAW_2026_9_6, skip=set())
    assert cut == ["w0", "w1", "w2"]  # in order: the oldest cut down until the total fits
    lengths = [tool_result_text_length(w.message) for w in window]
    assert sum(lengths) <= 4_800 < sum(tool_result_text_length(w.message) for w in twelve)
    assert lengths[3:] == [480] * 9
    # cut to the floor, one notice's length: the notice for the whole note, cut to fit
    notice = "[... 480 more characters truncated; rerun with narrower args if needed]"
    assert window[0].message.content[0].text == notice[: len(notice.replace("480", "1"))]


def test_2026_9_6_keeps_a_protected_result_in_the_aggregate_total_but_never_cuts_it():
    notes = _notes(12)
    _, free = truncate_window(notes, 1_000, OPENCLAW_2026_9_6, skip=set())
    _, kept = truncate_window(notes, 1_000, OPENCLAW_2026_9_6, skip={"w0"})
    assert "w0" in free and "w0" not in kept
    assert kept == ["w1", "w2", "w3"]  # w0 still counts: as much is taken from the others


@pytest.mark.parametrize(
    ("fault", "overflow", "caught"),
    [
        ("compact_past_limit", "error", "4 overflow compaction attempts, openclaw@2026.9.6 allows 3"),
        ("compact_twice", "usage", "compacted again in an attempt that had already compacted (in-attempt)"),
    ],
)
def test_a_chain_with_a_seeded_fault_is_caught_by_the_checks(tmp_path, fault, overflow, caught):
    path = _session(tmp_path, first=1, second=8) if overflow == "error" else _session(tmp_path, paste=2_400, doc=None)
    compactor = _summary_compactor([], helps=False)
    rules = PI_SILENT if overflow == "usage" else OPENCLAW_2026_9_6
    trace, _ = _run(path, 1_000, rules, compactor, overflow=overflow, faults=frozenset({fault}))
    assert caught in _violations(trace, rules)


# ---------------------------------------------------------------- truncation rewrites the working copy


def test_the_session_rewrite_branches_from_the_first_cut_entry_and_appends_the_rest_again(tmp_path):
    """OpenClaw's rewriteTranscriptEntriesInSessionManager on an append-only file: the new branch
    starts at the cut entry's parent, the entries after it come again with new ids (a compaction's
    firstKeptEntryId and a restatement's source follow them), the old ones stay in the file."""
    from replaylab.compaction.session_truncation import rewrite_branch
    from replaylab.transcript import TranscriptWriter, build_window

    path = _session(tmp_path, doc=HANDBOOK)
    writer = TranscriptWriter.working_copy(path, tmp_path / "copy.jsonl")
    branch = writer.transcript().leaf_path()
    leaf = branch[-1].id
    # a compaction keeping from the handbook's result on, and an entry restating the refund's result
    refund = next(e for e in branch if e.type == "message" and getattr(e.message, "tool_name", "") == "issue_refund")
    doc = next(e for e in branch if e.type == "message" and getattr(e.message, "tool_name", "") == "get_doc")
    writer.append({"type": "compaction", "id": "c1", "parentId": leaf, "summary": "S", "firstKeptEntryId": doc.id})
    writer.append(
        {
            **refund.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "id": "x1",
            "parentId": "c1",
            "restates": refund.id,
        }
    )
    branch = writer.transcript().leaf_path()
    assert rewrite_branch(writer.append, branch, {}, set(writer.transcript().by_id)) == (None, {})  # nothing written
    window = build_window(branch)
    replacements = truncation_replacements_for(window, {doc.id})
    new_leaf, _ = rewrite_branch(writer.append, branch, replacements, set(writer.transcript().by_id))
    after = writer.transcript()
    path_after = after.path_to(new_leaf)
    cut_at = [e.id for e in branch].index(doc.id)
    assert [e.id for e in path_after[:cut_at]] == [e.id for e in branch[:cut_at]]  # the prefix is shared
    rewritten = path_after[cut_at:]
    assert len(rewritten) == len(branch) - cut_at and not {e.id for e in rewritten} & {e.id for e in branch}
    assert rewritten[0].message == replacements[doc.id] and CODE not in message_text(rewritten[0].message)
    compaction = next(e for e in rewritten if e.type == "compaction")
    assert compaction.first_kept_entry_id == rewritten[0].id  # the kept range starts at the cut result
    assert after.by_id[doc.id].message == doc.message  # the old entry stays, off the new path
    # the window rebuilt from the copy shows the cut result, and the refund's restatement still is it
    rebuilt = build_window(path_after)
    assert [w.entry_id for w in rebuilt if w.message == replacements[doc.id]] == [rewritten[0].id]
    assert [w.source_id for w in rebuilt if w.entry_id == rewritten[-1].id] == [refund.id]


def truncation_replacements_for(window, ids):
    from replaylab.replay.overflow import truncation_replacements

    planned = truncation_replacements(window, 2_000, OPENCLAW_2026_9_6, skip=set())
    assert set(planned) == ids
    return planned


def test_the_chain_truncates_the_working_copy_never_the_recording(tmp_path):
    """In the pipeline, with a compactor that declines every overflow compaction (nothing to gain):
    the chain's truncation rewrites the item's working copy — the next compaction reads the cut
    result on the leaf's path, the full one stays in the file off it — and the recording's bytes
    are what they were."""
    import hashlib
    import shutil

    from replaylab.compaction import CompactResult, compact
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite
    from repo_paths import REPO_ROOT

    name = "overflow-handbook-midturn"
    (tmp_path / "recordings").mkdir()
    for suffix in (".jsonl", ".cassette.yaml"):
        shutil.copy(REPO_ROOT / "recordings" / "helpdesk" / f"{name}{suffix}", tmp_path / "recordings")
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    (tmp_path / "suite.yaml").write_text(
        f"name: s\nrecordings: recordings/{name}.jsonl\ntools: examples.helpdesk\nmodel: replay\n"
        "agent: openclaw@2026.9.6\ncompaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, "
        "keepRecentTokens: 500}\ncompact_at: turn:4\ncontext_window: {tokens: 2600}\n",
        encoding="utf-8",
    )
    recording = tmp_path / "recordings" / f"{name}.jsonl"
    digest = hashlib.sha256(recording.read_bytes()).hexdigest()
    seen = []

    def declining(params, *, classifier, writer):
        if params.trigger != "overflow":
            return compact(params, classifier=classifier, writer=writer)
        seen.append(writer.transcript())
        return CompactResult(success=False, failure="nothing_to_gain", error="nothing to gain", mode="safeguard")

    result = run_item(load_suite(tmp_path / "suite.yaml").scenarios[0], recording, RunOptions(compactor=declining))
    assert hashlib.sha256(recording.read_bytes()).hexdigest() == digest
    steps = [s for c in result.compacted.recovery for s in c.steps]
    (truncation,) = [s for s in steps if s.kind == "truncate_tool_results"]
    (cut,) = truncation.entry_ids
    assert truncation.tokens_after < truncation.tokens_before // 3
    # the compaction asked for after the truncation reads the rewritten copy
    later = next(t for t in seen if cut not in {e.id for e in t.leaf_path()})
    before = next(t for t in seen if cut in {e.id for e in t.leaf_path()})
    full = before.by_id[cut].message
    assert later.by_id[cut].message == full  # still in the file, off the path
    (shown,) = [
        e.message
        for e in later.leaf_path()
        if e.type == "message" and getattr(e.message, "tool_call_id", None) == full.tool_call_id
    ]
    assert len(message_text(shown)) < len(message_text(full)) // 5
    assert message_text(shown).endswith(OC96.TRUNCATION_NOTICE.split("} ")[1])  # OpenClaw's notice


def _reused_id_window(block: str = "toolCall") -> list[WindowMessage]:
    """`call_0` is a `bash rm -rfv build` (a long listing), then — the provider numbering its calls
    afresh — a `read`; the rm's call in the block type `block`."""
    from replaylab.transcript.model import MESSAGE_ADAPTER

    def assistant(name, args, kind="toolCall"):
        key = "input" if kind == "toolUse" else "arguments"
        return MESSAGE_ADAPTER.validate_python(
            {
                "role": "assistant",
                "content": [{"type": kind, "id": "call_0", "name": name, key: args}],
                "stopReason": "toolUse",
                "timestamp": 1,
            }
        )

    def result(name, text):
        return ToolResultMessage(tool_call_id="call_0", tool_name=name, content=[TextBlock(text=text)], is_error=False)

    return [
        WindowMessage("u1", UserMessage(content=[TextBlock(text="clean the build, verbosely")])),
        WindowMessage("a1", assistant("bash", {"command": "rm -rfv build"}, block)),
        WindowMessage("r1", result("bash", "removed 'build/obj/module.o'\n" * 2_000)),
        WindowMessage("u2", UserMessage(content=[TextBlock(text="now read the config")])),
        WindowMessage("a2", assistant("read", {"path": "config.json"})),
        WindowMessage("r2", result("read", '{"debug": false}')),
    ]


@pytest.mark.parametrize("block", ["toolCall", "toolUse"])
def test_safeguard_truncation_never_cuts_a_mutating_result_whose_call_id_is_used_again(block):
    """A result answers the latest call of its id before it: a later `read` with the same id does
    not make the `rm` result cuttable; nor does a legacy `toolUse` block hide the call."""
    window = _reused_id_window(block)
    mutating = mutating_result_ids(window, ToolClassifier().is_mutating)
    assert mutating == {"r1"}
    _, cut = truncate_window(window, 2_000, OPENCLAW_2026_9_6, skip=mutating)
    assert "r1" not in cut


def test_safeguard_truncation_never_cuts_a_mutating_result_whose_call_the_window_lost():
    """A result kept without its call (a recorded compaction kept from it) is judged by its tool."""
    window = [w for w in _reused_id_window() if w.entry_id in ("u1", "r1")]
    assert mutating_result_ids(window, ToolClassifier().is_mutating) == {"r1"}


def test_safeguard_truncation_never_cuts_a_result_whose_call_cannot_be_read_behind_a_read_of_its_id():
    """The `read` of `call_0` and its result, then a second result of `call_0` (a `bash`) whose call's
    message could not be read: that result stands for a call of its own, as the ledger counts it,
    not for the read."""
    rows = _reused_id_window()
    read_first = [rows[3], rows[4], rows[5], rows[0], rows[2]]  # u2 a2(read) r2, u1 r1(bash)
    mutating = mutating_result_ids(read_first, ToolClassifier().is_mutating)
    assert mutating == {"r1"}
    _, cut = truncate_window(read_first, 2_000, OPENCLAW_2026_9_6, skip=mutating)
    assert "r1" not in cut


@pytest.mark.parametrize("restated", [False, True])
def test_safeguard_truncation_never_cuts_the_result_of_a_spawn_whose_sub_agent_mutated(restated):
    """A `Task` call (class subagent, safe by itself) whose sub-agent ran `rm` or cannot be loaded:
    safeguard protects its call and result (the harness's `unresolved_spawns`), so overflow
    recovery does not cut that result either — also a restated copy of it."""
    from replaylab.transcript.model import MESSAGE_ADAPTER

    call = MESSAGE_ADAPTER.validate_python(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "t1", "name": "Task", "arguments": {"prompt": "clean"}}],
            "stopReason": "toolUse",
            "timestamp": 1,
        }
    )
    answer = ToolResultMessage(
        tool_call_id="t1", tool_name="Task", content=[TextBlock(text="removed build/obj\n" * 2_000)], is_error=False
    )
    ids = ("c1", "c2") if restated else ("a1", "r1")
    window = [
        WindowMessage("u1", UserMessage(content=[TextBlock(text="delegate the cleanup")])),
        WindowMessage(ids[0], call, restates="a1" if restated else None),
        WindowMessage(ids[1], answer, restates="r1" if restated else None),
    ]
    classifier = ToolClassifier(declared={"Task": "subagent"})
    assert mutating_result_ids(window, classifier.is_mutating) == set()
    mutating = mutating_result_ids(window, classifier.is_mutating, frozenset({"a1"}))
    assert mutating == {ids[1]}
    _, cut = truncate_window(window, 2_000, OPENCLAW_2026_9_6, skip=mutating)
    assert ids[1] not in cut
