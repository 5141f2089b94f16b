"""Summaries: the extractive summarizer, identifiers, the quality guard, fallback and caps."""

from __future__ import annotations

from dataclasses import replace

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.transcripts import TOOL_CLASSES, helpdesk_session, late_writes_session
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.identifiers import extract_identifiers, extract_opaque_identifiers
from replaylab.compaction.summary.cap import cap_summary, cap_summary_preserving_suffix
from replaylab.compaction.summary.extractive import ExtractiveSummarizer, extractive_summary_floor
from replaylab.compaction.summary.fallback import FallbackSummarizer, build_structured_fallback_summary
from replaylab.compaction.summary.file_ops import format_file_operations
from replaylab.compaction.summary.guard import FailureInjector, GuardSettings, call_with_retries, summarize_with_guard
from replaylab.compaction.summary.llm import serialize_conversation
from replaylab.compaction.summary.quality import audit_summary_quality, has_ask_overlap
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.sections import is_empty_skeleton
from replaylab.compaction.summary.suffix import split_preserved_recent_turns
from replaylab.compaction.summary.summarizer import SummarizationError, Summarizer
from replaylab.transcript import load_transcript
from replaylab.transcript.model import MESSAGE_ADAPTER, message_text
from replaylab.upstream.openclaw_2026_4_12 import REQUIRED_SUMMARY_SECTIONS, SUMMARY_TRUNCATED_MARKER
from repo_paths import REPO_ROOT


def _messages(tmp_path, session):
    return [e.message for e in load_transcript(session.write(tmp_path / "s.jsonl")).leaf_path()]


def test_opaque_identifiers_follow_openclaw_rules():
    text = (
        "see (/src/app.ts), https://x.com/a?b=1. Hash deadbeef12 host api.example.com:8443 "
        'order 1234567 and C:\\tmp\\x; short /a/b ok 12345 "quoted/not" ab:1'
    )
    ids = extract_opaque_identifiers(text)
    # "/a/b" (a 1-char first segment), "12345" (< 6 digits) and "ab:1" (no dot) are not identifiers
    assert ids == ["/src/app.ts", "https://x.com/a?b=1", "DEADBEEF12", "api.example.com:8443", "1234567", "C:\\tmp\\x"]
    many = " ".join(f"/pp/{i:03d}" for i in range(30))
    assert len(extract_opaque_identifiers(many)) == 12 and len(extract_identifiers(many)) == 30
    assert extract_identifiers("deadbeef12 DEADBEEF12") == ["deadbeef12"]  # one hex value, original case


def test_extractive_summary_has_sections_every_identifier_and_the_latest_ask(tmp_path):
    messages = _messages(tmp_path, helpdesk_session(4))
    text = ExtractiveSummarizer().summarize(SummaryRequest(messages=messages))
    lines = {line.strip() for line in text.splitlines()}
    assert all(section in lines for section in REQUIRED_SUMMARY_SECTIONS)
    span = "\n".join(message_text(m) for m in messages)
    assert all(i in text for i in extract_identifiers(span))
    assert "#W1000003" in text and "mia_garcia_4503" in text  # id-like values replay needs verbatim
    asks = text.split("## Pending user asks\n")[1].split("\n\n")[0]
    assert "Turn 3: please look at order #W1000003" in asks
    assert "- Do not refund without approval." in text.split("## Constraints/Rules\n")[1].split("\n\n")[0]
    outcomes = text.split("## Tool outcomes\n")[1].splitlines()
    assert len(outcomes) == 4 + 4 + 2  # get_order ×4, cancel ×2, refund + search ×2
    assert any(
        line.startswith('- cancel_order {"order_id":"#W1000000"') and "→ ok: cancelled" in line for line in outcomes
    )
    ok, reasons = audit_summary_quality(
        text, extract_opaque_identifiers(span), "Turn 3: please look at order", "strict"
    )
    assert ok, reasons


def test_extractive_summary_carries_the_identifiers_of_json_results_and_arguments_one_by_one():
    """An API's JSON result and a call's arguments: each identifier in the summary as written, not
    the run of JSON OpenClaw's regex reads as one (`https://…","path":"…","id":"…"}`)."""
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cd /srv/app\nls"}}
    result = '{"url":"https://x.org/b","path":"/srv/app/config.yml","id":"a1b2c3d4e5f6"}'
    messages = [
        MESSAGE_ADAPTER.validate_python({"role": "user", "content": "find the config"}),
        MESSAGE_ADAPTER.validate_python({"role": "assistant", "content": [call]}),
        MESSAGE_ADAPTER.validate_python(
            {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": result, "isError": False}
        ),
    ]
    text = ExtractiveSummarizer().summarize(SummaryRequest(messages=messages))
    exact = text.split("## Exact identifiers\n")[1].split("\n\n")[0].splitlines()
    for identifier in ("https://x.org/b", "/srv/app/config.yml", "a1b2c3d4e5f6", "/srv/app"):
        assert f"- {identifier}" in exact, exact
    assert not any('","' in line or "\\n" in line for line in exact), exact


def test_extractive_summary_stays_within_budget_and_says_what_it_left_out(tmp_path):
    messages = _messages(tmp_path, helpdesk_session(12))
    text = ExtractiveSummarizer().summarize(SummaryRequest(messages=messages, budget_chars=1_500))
    assert len(text) <= 1_500 and "omitted" in text
    assert all(section in text for section in REQUIRED_SUMMARY_SECTIONS)


def test_quality_guard_reasons():
    good = "\n".join(f"{s}\n- x" for s in REQUIRED_SUMMARY_SECTIONS) + "\nrefund order DEADBEEF12 today"
    assert audit_summary_quality(good, ["deadbeef12"], "please refund the order", "strict") == (True, [])
    ok, reasons = audit_summary_quality("## Decisions\n- x", ["/src/a.ts"], "deploy the payments service", "strict")
    assert not ok and "missing_section:## Open TODOs" in reasons and "missing_identifiers:/src/a.ts" in reasons
    assert "latest_user_ask_not_reflected" in reasons
    assert "missing_identifiers:/src/a.ts" not in audit_summary_quality("x", ["/src/a.ts"], None, "off")[1]


def test_ask_overlap_needs_two_tokens_when_the_ask_has_three():
    ask = "please cancel the pending invoice quickly"  # cancel, pending, invoice, quickly: 4 meaningful
    assert has_ask_overlap("we will cancel the invoice", ask)
    assert not has_ask_overlap("we will cancel", ask)
    assert has_ask_overlap("we will refund", "please refund my order now")  # refund, order: 1 of 2 is enough
    assert has_ask_overlap("refund", "refund")  # fewer than 3 meaningful tokens: one is enough
    assert has_ask_overlap("anything", None)


def test_fallback_never_writes_an_empty_skeleton_over_a_previous_summary():
    previous = "\n".join(f"{s}\n- kept fact {i}" for i, s in enumerate(REQUIRED_SUMMARY_SECTIONS))
    assert build_structured_fallback_summary(previous) == previous
    free_text = "We migrated the DB to /srv/db and chose Postgres 16."
    fallback = build_structured_fallback_summary(free_text)
    assert free_text in fallback.split("## Open TODOs")[0] and not is_empty_skeleton(fallback)
    skeleton = build_structured_fallback_summary(None)
    assert "No prior history." in skeleton and is_empty_skeleton(skeleton)
    pinned = build_structured_fallback_summary(None, latest_ask="ship it", identifiers=["/a/b"])
    assert "- ship it" in pinned and "- /a/b" in pinned and not is_empty_skeleton(pinned)


def test_summary_cap_and_suffix_preserving_cap():
    capped = cap_summary("a" * 20_000, 16_000)
    assert len(capped) == 16_000 and capped.endswith(SUMMARY_TRUNCATED_MARKER)
    kept = cap_summary_preserving_suffix("b" * 20_000, "\n\n## Tool Failures\n- x", 16_000)
    assert len(kept) == 16_000 and kept.endswith("## Tool Failures\n- x") and SUMMARY_TRUNCATED_MARKER in kept
    assert cap_summary_preserving_suffix("body", "s" * 20_000, 16_000) == "s" * 16_000


def test_failures_are_retried_then_fall_back(tmp_path):
    messages = _messages(tmp_path, helpdesk_session(3))
    request = SummaryRequest(messages=messages, previous_summary="## Decisions\n- earlier decision about #W42")
    settings = GuardSettings(quality_guard=True, max_retries=1, call_retries=3, retry_delay_s=0)

    retried = summarize_with_guard(
        ExtractiveSummarizer(), request, settings, fallback=FallbackSummarizer(), injector=FailureInjector(2)
    )
    assert retried.source == "extractive" and retried.calls == 3 and len(retried.errors) == 2
    assert retried.errors == [f"Summarization failed: injected failure {i}/2" for i in (1, 2)]
    failed = summarize_with_guard(
        ExtractiveSummarizer(), request, settings, fallback=FallbackSummarizer(), injector=FailureInjector(99)
    )
    assert failed.source == "fallback" and failed.calls == 6 and not failed.guard_ok
    assert "earlier decision about #W42" in failed.text and not is_empty_skeleton(failed.text)


class Scripted(Summarizer):
    """A summarizer that calls a model, scripted: its answers in turn (None: the call fails)."""

    name = "scripted"
    deterministic = False
    calls_model = True

    def __init__(self, answers):
        self.answers, self.requests = list(answers), []

    def summarize(self, request):
        self.requests.append(request)
        answer = self.answers.pop(0)
        if answer is None:
            raise SummarizationError("Summarization failed: provider down")
        return answer


def test_the_guard_retries_with_feedback_only_a_summarizer_that_can_answer_differently():
    good = "\n".join(f"{s}\n- refund order /srv/a.txt" for s in REQUIRED_SUMMARY_SECTIONS)
    request = SummaryRequest(messages=[], pinned_identifiers=["/srv/a.txt"], guard_ask="refund the order")
    settings = GuardSettings(max_retries=1, retry_delay_s=0)
    model = Scripted(["## Decisions\n- x", good])
    outcome = summarize_with_guard(model, request, settings, fallback=FallbackSummarizer())
    assert outcome.text == good and outcome.guard_ok and outcome.guard_rounds == 2 and outcome.source == "scripted"
    assert model.requests[0].feedback is None and "missing_section:## Open TODOs" in model.requests[1].feedback
    # a deterministic summarizer would write the same again: one round, the audit's reasons kept
    missing = SummaryRequest(messages=[], guard_ask="cancel the subscription renewal now")
    outcome = summarize_with_guard(ExtractiveSummarizer(), missing, settings, fallback=FallbackSummarizer())
    assert outcome.guard_rounds == 1 and not outcome.guard_ok
    assert outcome.reasons == ["latest_user_ask_not_reflected"]
    # the guard's identifiers are carried as the guard reads them, whatever the span's scans give
    pinned = SummaryRequest(messages=[], pinned_identifiers=['https://x.org/p"}'])
    outcome = summarize_with_guard(ExtractiveSummarizer(), pinned, settings, fallback=FallbackSummarizer())
    assert outcome.guard_ok and '- https://x.org/p"}' in outcome.text.splitlines()


def test_the_guard_audits_the_summary_as_it_will_be_written():
    """OpenClaw 2026.9.6 audits its finalized artifact: an identifier the file lists after the
    answer carry is kept; one the cap cuts off the answer is lost; the headings count in the
    answer alone."""
    body = "\n".join(f"{s}\n- refund the order" for s in REQUIRED_SUMMARY_SECTIONS)
    suffix = "\n\n<read-files>\n/srv/orders/W42.json\n</read-files>"
    settings = GuardSettings(max_retries=1, retry_delay_s=0)
    listed = SummaryRequest(
        messages=[], pinned_identifiers=["/srv/orders/W42.json"], audit_suffix=suffix, audit_chars=16_000
    )
    outcome = summarize_with_guard(Scripted([body]), listed, settings, fallback=FallbackSummarizer())
    assert outcome.guard_ok and outcome.guard_rounds == 1
    # without the file lists the same answer misses it, and is asked again with the reason
    bare = replace(listed, audit_suffix="")
    outcome = summarize_with_guard(Scripted([body, body]), bare, settings, fallback=FallbackSummarizer())
    assert not outcome.guard_ok and outcome.reasons == ["missing_identifiers:/srv/orders/W42.json"]
    # an identifier at the end of an answer the cap cuts is not in the summary written
    tail = body + "\n- order #W42-ZZ9-0000001"
    capped = replace(listed, pinned_identifiers=["W42-ZZ9-0000001"], audit_chars=len(body) + len(suffix))
    outcome = summarize_with_guard(Scripted([tail, tail]), capped, settings, fallback=FallbackSummarizer())
    assert outcome.reasons == ["missing_identifiers:W42-ZZ9-0000001"]
    # a heading only the file lists would carry is still missing from the answer
    headings = replace(listed, audit_suffix=suffix + "\n## Open TODOs")
    outcome = summarize_with_guard(
        Scripted([body.replace("## Open TODOs", "## Todo")] * 2), headings, settings, fallback=FallbackSummarizer()
    )
    assert outcome.reasons == ["missing_section:## Open TODOs"]


def test_only_a_models_own_failures_wait_before_the_next_attempt():
    settings = GuardSettings(call_retries=3, retry_delay_s=0.5)
    waits, errors = [], []
    text, calls = call_with_retries(
        Scripted([None, None, "ok"]),
        SummaryRequest(messages=[]),
        settings,
        FailureInjector(),
        errors,
        sleep=waits.append,
    )
    assert (text, calls) == ("ok", 3) and errors == ["Summarization failed: provider down"] * 2
    assert len(waits) == 2 and 0.4 <= waits[0] <= 0.6 and 0.8 <= waits[1] <= 1.2  # doubling, ± the jitter
    waits.clear()
    text, calls = call_with_retries(
        Scripted(["ok"]), SummaryRequest(messages=[]), settings, FailureInjector(1), errors, sleep=waits.append
    )
    assert (text, calls) == ("ok", 2) and waits == [] and errors[-1] == "Summarization failed: injected failure 1/1"
    text, _ = call_with_retries(
        ExtractiveSummarizer(),
        SummaryRequest(messages=[], turn_prefix=True),
        settings,
        FailureInjector(1),
        errors,
        sleep=waits.append,
    )
    assert text.startswith("## Original Request") and waits == []


def test_compact_with_injected_failures_reports_attempts_and_falls_back(tmp_path):
    # writes from turn 4: safeguard has turns 0-3 to summarize before its cut
    recording = late_writes_session().write(tmp_path / "rec.jsonl")
    base = dict(
        session_file=str(recording),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=800,
        tool_classes=TOOL_CLASSES,
    )
    two = compact(CompactParams(**base, summarizer_failures=2))
    assert two.success and two.summarizer == "extractive" and two.summary_attempts >= 3
    many = compact(CompactParams(**base, summarizer_failures=50))
    assert many.success and many.summarizer == "fallback" and not many.quality_guard.ok
    assert many.protected_entry_ids  # the cut moved back before the first write
    assert "summarizer_failed" in many.quality_guard.reasons
    assert "## Decisions" in many.summary_text and "No prior history." in many.summary_text
    assert many.findings == []  # the mutating events are still all there


def test_chained_summary_carries_the_previous_ones_identifiers(tmp_path):
    """A session that only reads: safeguard keeps nothing back, so the second compaction
    summarizes the first one's kept tail over the first summary."""
    from replaylab.transcript import TranscriptWriter

    recording = late_writes_session(first_write=10).write(tmp_path / "rec.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    params = CompactParams(
        session_file=str(writer.path),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=800,
        tool_classes=TOOL_CLASSES,
    )
    first = compact(params, writer=writer)
    leaf = first.compaction_event_id
    for i in range(3):
        writer.append(
            {
                "type": "message",
                "id": f"u{i}",
                "parentId": leaf,
                "timestamp": "2026-04-10T12:00:00.000Z",
                "message": {"role": "user", "content": f"new topic {i} " + "t" * 900},
            }
        )
        writer.append(
            {
                "type": "message",
                "id": f"a{i}",
                "parentId": f"u{i}",
                "timestamp": "2026-04-10T12:00:01.000Z",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "ok " + "o" * 900}],
                    "stopReason": "stop",
                },
            }
        )
        leaf = f"a{i}"
    second = compact(params, writer=writer)
    assert first.success and second.success
    assert second.first_kept_entry_id in {f"{role}{i}" for role in "ua" for i in range(3)}
    first_ids = [
        line[2:]
        for line in first.summary_text.split("## Exact identifiers\n")[1].split("\n\n")[0].splitlines()
        if line.startswith("- ") and "omitted" not in line
    ]
    assert first_ids and all(i in second.summary_text for i in first_ids)


def test_preserved_recent_turns_leave_the_summarizer_input(tmp_path):
    messages = _messages(tmp_path, helpdesk_session(5))
    summarizable, preserved = split_preserved_recent_turns(messages, 3)
    users = [m for m in preserved if m.role == "user"]
    assert [m.content[0].text[:6] for m in users] == ["Turn 2", "Turn 3", "Turn 4"]
    assert all(m not in summarizable for m in preserved)
    result_ids = {m.tool_call_id for m in preserved if m.role == "toolResult"}
    call_ids = {c.id for m in preserved if m.role == "assistant" for c in m.tool_calls()}
    assert result_ids == call_ids


def test_serialize_conversation_like_pi():
    messages = [
        MESSAGE_ADAPTER.validate_python(m)
        for m in (
            {"role": "user", "content": "fix it"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "ok"},
                    {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "/a"}},
                ],
            },
            {"role": "toolResult", "toolCallId": "c", "content": "z" * 2_500},
        )
    ]
    text = serialize_conversation(messages)
    assert text.startswith(
        "[User]: fix it\n\n[Assistant thinking]: hmm\n\n[Assistant]: ok\n\n"
        '[Assistant tool calls]: read(path="/a")\n\n[Tool result]: '
    )
    assert text.endswith("z" * 2_000 + "\n\n[... 500 more characters truncated]")


def test_file_operation_lists_are_bounded():
    files = [f"/very/long/path/number/{i:04d}/file.ts" for i in range(100)]
    section = format_file_operations(files, files[:3])
    assert "<read-files>" in section and "<modified-files>" in section and "...and" in section
    assert len(section) <= 2_000


def test_history_share_pruning_drops_oldest_chunks_and_repairs_pairs(tmp_path):
    from replaylab.compaction.safeguard import prune_history_for_context_share, split_messages_by_token_share
    from replaylab.transcript.tokens import estimate_tokens

    messages = _messages(tmp_path, helpdesk_session(10))
    chunks = split_messages_by_token_share(messages, 2)
    assert len(chunks) == 2 and [m for c in chunks for m in c] == messages
    first_calls = {c.id for m in chunks[0] if m.role == "assistant" for c in m.tool_calls()}
    assert all(m.tool_call_id in first_calls for m in chunks[0] if m.role == "toolResult")  # never split a pair
    total = sum(estimate_tokens(m) for m in messages)
    pruned = prune_history_for_context_share(messages, max_context_tokens=total, max_history_share=0.3)
    assert pruned.dropped_chunks >= 1 and sum(estimate_tokens(m) for m in pruned.kept) <= total * 0.3
    assert pruned.dropped == messages[: len(pruned.dropped)]
    kept_calls = {c.id for m in pruned.kept if m.role == "assistant" for c in m.tool_calls()}
    assert all(m.tool_call_id in kept_calls for m in pruned.kept if m.role == "toolResult")


def test_recent_turns_section_follows_recent_turns_preserve(tmp_path):
    """Safeguard cuts where pi cuts, in turn 5: turns 0–4 are summarized (turn 4's cancel restated
    after the summary), the last of them preserved verbatim."""
    recording = late_writes_session().write(tmp_path / "rec.jsonl")
    base = dict(
        session_file=str(recording),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=800,
        tool_classes=TOOL_CLASSES,
    )
    with_turns = compact(CompactParams(**base))
    without = compact(CompactParams(**base, recent_turns_preserve=0))
    assert with_turns.success and with_turns.protected_entry_ids and without.success
    section = with_turns.summary_text.split("## Recent turns preserved verbatim\n")[1]
    # the last preserved turn, verbatim; older preserved lines give way to the small summary budget
    assert section.rstrip().endswith("- Assistant: Done with order #W1000005; see https://help.example.com/t/5.")
    assert section.startswith("- ...") and "earlier messages omitted" in section
    assert "## Recent turns preserved verbatim" not in without.summary_text
    assert with_turns.diag_id.startswith("cmp-") and with_turns.diag_id != without.diag_id


# ---------------------------------------------------------------- the extractive summary's floor

#: the required headings alone, each on a line of its own: the least any summary holds
BARE_HEADINGS = len("\n".join(REQUIRED_SUMMARY_SECTIONS))


def _message(
    role: str, text: str, *, calls: list | None = None, call_id: str = "", is_error: bool = False, stop: str = "toolUse"
):
    if role == "user":
        return MESSAGE_ADAPTER.validate_python({"role": "user", "content": text})
    if role == "assistant":
        content = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in calls or []]
        return MESSAGE_ADAPTER.validate_python({"role": "assistant", "content": content, "stopReason": stop})
    return MESSAGE_ADAPTER.validate_python(
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "lookup",
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
        }
    )


FLOOR_TEXTS = [
    "",
    "  ",
    "NO_REPLY",
    "HEARTBEAT_OK",
    "ok",
    "Please refund order #W2378156 for mia_garcia_4516.",
    "Do not cancel anything without explicit approval.",
    "no deploy today!",
    "TODO: check the invoice",
    "- [ ] call back\nremaining: two steps",
    "## Heading\n- a line",
    "see https://x.example.com/a/b?c=1 and 10.0.0.1:8080",
    "hash deadbeefcafe1234 at /srv/app/main.py",
    "日本語 naïve réservation",
    "x" * 700,
    "None.",
    "- None",
    '{"order_id": "ORD-1", "items": [1, 2], "email": "a@b.example"}',
]
PREVIOUS_SUMMARIES = [
    None,
    "",
    "Earlier: the user asked about ORD-48213.\n## Notes\nkept",
    "## Decisions\n- refunded ORD-1\n\n## Open TODOs\n- ship it\n\n## Constraints/Rules\n- never push"
    "\n\n## Pending user asks\n- refund\n\n## Exact identifiers\n- ORD-1\n\n## Tool outcomes\n- lookup"
    " {} → ok",
    build_structured_fallback_summary(None),
]


@st.composite
def summary_requests(draw: st.DrawFn) -> SummaryRequest:
    """Any budget, previous summaries with and without the sections, pinned asks and identifiers,
    kept calls, with and without tool results, constraint / TODO / silent texts."""
    messages: list = []
    call_ids: list[str] = []
    for index in range(draw(st.integers(0, 12))):
        role = draw(st.sampled_from(["user", "assistant", "assistant", "toolResult"]))
        text = draw(st.sampled_from(FLOOR_TEXTS))
        if role == "assistant":
            calls = [
                (
                    f"call_{index}_{k}",
                    draw(st.sampled_from(["lookup", "refund", "read"])),
                    draw(st.sampled_from([{}, {"order_id": "ORD-9"}, {"path": "/a/b.txt"}, {"x": [1, "two"]}])),
                )
                for k in range(draw(st.integers(0, 2)))
            ]
            call_ids += [c[0] for c in calls]
            messages.append(
                _message(role, text, calls=calls, stop=draw(st.sampled_from(["toolUse", "stop", "error", "aborted"])))
            )
        elif role == "toolResult":
            call_id = draw(st.sampled_from(call_ids + ["orphan"])) if call_ids else "orphan"
            messages.append(_message(role, text, call_id=call_id, is_error=draw(st.booleans())))
        else:
            messages.append(_message(role, text))
    kept = draw(st.sets(st.sampled_from(call_ids))) if call_ids else set()
    return SummaryRequest(
        messages=messages,
        previous_summary=draw(st.sampled_from(PREVIOUS_SUMMARIES)),
        include_tool_results=draw(st.booleans()),
        budget_chars=draw(st.sampled_from([0, 60, 300, 1200, 6400, 16000])),
        pinned_asks=draw(st.lists(st.sampled_from(FLOOR_TEXTS[4:9]), max_size=2)),
        kept_call_ids=frozenset(kept),
        identifier_sources=draw(st.lists(st.sampled_from(messages), max_size=3)) if messages else [],
        pinned_identifiers=draw(st.lists(st.sampled_from(["ORD-9", "deadbeefcafe1234", "/a/b.txt"]), max_size=2)),
    )


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(summary_requests())
def test_the_extractive_floor_is_never_more_than_the_summary(request):
    """`extractive_summary_floor` lets compact() tell "nothing to gain" before summarizing, so it
    must never exceed what the summarizer writes; it is never less than the bare headings."""
    floor = extractive_summary_floor(request)
    assert BARE_HEADINGS <= floor <= len(ExtractiveSummarizer().summarize(request))


def test_the_extractive_floor_on_recorded_sessions(tmp_path):
    """Every third prefix of generated bench sessions and of the helpdesk recordings, small and
    large budgets: the floor holds, is exact but for the identifiers' line when there is nothing
    to summarize, and is well above the bare headings for most prefixes."""

    from bench.cases.pipeline import make_sessions
    from replaylab.transcript import build_window
    from replaylab.upstream.openclaw_2026_4_12 import NONE_CAPTURED

    make_sessions(tmp_path, 12)
    helpdesk = REPO_ROOT / "recordings" / "helpdesk"
    paths = sorted((tmp_path / "recordings").glob("s-*.jsonl")) + sorted(helpdesk.glob("*.jsonl"))
    above = total = 0
    for path in paths:
        window = [w.message for w in build_window(load_transcript(path).leaf_path())]
        for end in range(0, len(window) + 1, 3):
            for budget, include in ((16000, True), (400, True), (6400, False)):
                request = SummaryRequest(messages=window[:end], budget_chars=budget, include_tool_results=include)
                floor, text = extractive_summary_floor(request), ExtractiveSummarizer().summarize(request)
                assert floor <= len(text), (path.name, end, budget)
                if end == 0:
                    assert floor == len(text) - len(NONE_CAPTURED)
                total += 1
                above += floor > BARE_HEADINGS + 100
    assert above > total // 2, (above, total)


def test_empty_skeleton_verdicts():
    skeleton = "\n\n".join(f"{section}\n- None." for section in REQUIRED_SUMMARY_SECTIONS)
    assert is_empty_skeleton(skeleton) and is_empty_skeleton("  \n")
    assert not is_empty_skeleton(skeleton + "\n- ORD-1")
    assert not is_empty_skeleton("None.")  # no sections: not a skeleton, and not blank


# ---------------------------------------------------------------- the texts the scans read

SCAN_TEXTS = st.text(alphabet="0123456789abcdefABCDEF:/.-_@#\\ \t\n\xa0\u2003é", max_size=40) | st.sampled_from(
    ["ORD-48213", "deadbeef01 ", " C:\\tmp\\x ", "a@b.co.", "\n http://h.io:8080/p \n"]
)
PADDED = st.tuples(
    st.sampled_from(["", " ", "\n", "\t ", "\xa0"]), SCAN_TEXTS, st.sampled_from(["", " ", "\n\n", "\u2003"])
).map("".join)


@st.composite
def scanned_messages(draw):
    """A user, assistant (text, thinking, calls), tool-result, bash or custom message."""
    kind = draw(st.sampled_from(["user", "user-blocks", "assistant", "tool", "tool-blocks", "bash", "custom"]))
    blocks = [{"type": "text", "text": t} for t in draw(st.lists(PADDED, max_size=3))]
    if kind == "user":
        data: dict = {"role": "user", "content": draw(PADDED)}
    elif kind == "user-blocks":
        data = {"role": "user", "content": blocks}
    elif kind == "assistant":
        extra = [{"type": "thinking", "thinking": draw(SCAN_TEXTS)}] if draw(st.booleans()) else []
        extra += [
            {"type": "toolCall", "id": f"c{i}", "name": "get_order", "arguments": {"order_id": draw(SCAN_TEXTS)}}
            for i in range(draw(st.integers(0, 2)))
        ]
        data = {"role": "assistant", "content": blocks + extra}
    elif kind == "tool":
        data = {"role": "toolResult", "toolCallId": "c0", "toolName": "get_order", "content": draw(PADDED)}
    elif kind == "tool-blocks":
        data = {"role": "toolResult", "toolCallId": "c0", "toolName": "get_order", "content": blocks}
    elif kind == "bash":
        data = {"role": "bashExecution", "command": draw(SCAN_TEXTS), "output": draw(PADDED)}
    else:
        data = {"role": "custom", "customType": "note", "content": draw(PADDED)}
    return MESSAGE_ADAPTER.validate_python(data)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(scanned_messages())
def test_the_scanned_text_finds_what_the_trimmed_text_holds(message):
    """`scan_text` skips `text_of`'s trimming: no identifier or value token spans whitespace, so
    both give the same; for text-only messages it is the very string `message_text` gives."""
    from replaylab.compaction.identifiers import extract_value_tokens
    from replaylab.compaction.summary.messages import scan_text, text_of
    from replaylab.transcript.model import TextBlock

    scanned, trimmed = scan_text(message), text_of(message)
    assert extract_identifiers(scanned) == extract_identifiers(trimmed)
    assert extract_value_tokens(scanned) == extract_value_tokens(trimmed)
    content = getattr(message, "content", None)
    if isinstance(content, str) or isinstance(content, list) and all(isinstance(b, TextBlock) for b in content):
        assert scanned == message_text(message)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.lists(scanned_messages(), max_size=14))
def test_the_identifier_seed_is_that_of_the_last_messages_joined_text(batch):
    """OpenClaw's guard seed: the opaque identifiers of the last `IDENTIFIER_SEED_MESSAGES`
    messages' texts, joined by newlines — with or without a memo that scanned some of them before."""
    from replaylab.compaction.identifiers import TextScans
    from replaylab.compaction.summary.messages import identifier_seed, scan_text, text_of
    from replaylab.upstream.openclaw_2026_4_12 import IDENTIFIER_SEED_MESSAGES

    joined = "\n".join(t for m in batch[-IDENTIFIER_SEED_MESSAGES:] if (t := text_of(m)))
    assert identifier_seed(batch) == extract_opaque_identifiers(joined)
    scans = TextScans()
    for message in batch[::2]:
        scans.identifiers(scan_text(message))
    assert identifier_seed(batch, scans) == extract_opaque_identifiers(joined)


def test_a_call_restated_after_the_summary_keeps_one_short_outcome_line_in_its_place(tmp_path):
    """Safeguard summarizes protected calls too and restates them verbatim after the summary: the
    tool outcomes still list each of them in one line, in the order the calls were made, short (its
    bytes follow the summary), so the agent reads the history in order."""
    from builders.transcripts import Session

    s = Session()
    s.user("refund #W1 after checking it")
    s.tool_turn("get_order", {"order_id": "#W1"}, "order #W1: delivered, 120 EUR")
    s.tool_turn("refund", {"order_id": "#W1", "amount": 120, "note": "x" * 200}, "refund ok: RF-7 " + "y" * 300)
    s.tool_turn("search", {"q": "refund policy"}, "policy: 30 days")
    messages = _messages(tmp_path, s)
    kept = frozenset(c.id for m in messages if m.role == "assistant" for c in m.tool_calls() if c.name == "refund")
    text = ExtractiveSummarizer().summarize(SummaryRequest(messages=messages, kept_call_ids=kept))
    outcomes = text.split("## Tool outcomes\n", 1)[1].splitlines()
    assert [line.split()[1] for line in outcomes] == ["get_order", "refund", "search"]
    assert outcomes[1].startswith('- refund {"amount":120,"note":"xxx') and outcomes[1].endswith(
        "... → ok (kept verbatim after this summary)"
    )
    assert len(outcomes[1]) < 120 and "RF-7" not in outcomes[1]  # the result itself follows the summary
    assert outcomes[0] == '- get_order {"order_id":"#W1"} → ok: order #W1: delivered, 120 EUR'


def test_file_lists_read_a_results_nested_calls_where_the_agents_own_code_does(tmp_path):
    """pi 1.6.0's `extractFileOpsFromMessage` reads a tool result's `nestedCalls` as it reads an
    assistant's calls (a call whose arguments the record omits names no path); pi 0.73.1's and
    OpenClaw 2026.9.6's read assistants only. The profile says which, and a compaction under it
    lists the files so."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from replaylab.agents import rules_of
    from replaylab.compaction.summary.file_ops import collect_file_ops
    from replaylab.transcript.memo import ItemMemo
    from replaylab.upstream.profiles import profile_named

    session = pi16_session()
    session.user("tidy the notes " + "n" * 3_000)
    session.tool_turn("read", {"path": "todo.md"}, "1. notes")
    nested = [("read", {"path": "notes.txt"}), ("write", {"path": "b.txt", "content": "x"})]
    codemode_turn(session, "...", [*nested, ("edit", {"path": "c.txt", "edits": []}), ("write", None)])
    session.assistant("Done.")
    session.user("and now? " + "q" * 3_000)
    session.assistant("done")
    path = session.write(tmp_path / "s.jsonl")
    messages = [getattr(e, "message", None) for e in load_transcript(path).leaf_path()]
    assert collect_file_ops(messages, nested_calls=True).lists() == (["notes.txt", "todo.md"], ["b.txt", "c.txt"])
    assert collect_file_ops(messages).lists() == (["todo.md"], [])
    reads = {name: profile_named(name).file_ops_from_nested_calls for name in ("pi@1.6.0", "pi@0.73.1")}
    assert reads == {"pi@1.6.0": True, "pi@0.73.1": False}
    assert not profile_named("openclaw@2026.9.6").file_ops_from_nested_calls
    for name, read, modified in (
        ("pi@1.6.0", ["notes.txt", "todo.md"], ["b.txt", "c.txt"]),
        ("pi@0.73.1", ["todo.md"], []),
    ):
        params = CompactParams(
            session_file=str(path),
            compaction_mode="auto",
            context_tokens=3_200,
            reserve_tokens_floor=800,
            keep_recent_tokens=500,
            working_copy=str(tmp_path / f"{name}.jsonl"),
        )
        result = compact(params, memo=ItemMemo(rules=rules_of(name)))
        assert result.success, result.error
        entry = orjson.loads((tmp_path / f"{name}.jsonl").read_bytes().splitlines()[-1])
        assert (entry["details"]["readFiles"], entry["details"]["modifiedFiles"]) == (read, modified), name


def test_preserved_turns_name_non_text_items_as_openclaw_does():
    """`formatNonTextPlaceholder` (OpenClaw 2026.4.12 and 2026.9.6 alike): an item that is no
    object is not counted, and a type that is no non-blank string is "unknown" (an array item is
    an object to JavaScript). Items no block model reads are kept as written, so they reach it."""
    from replaylab.compaction.summary.suffix import format_context_lines
    from replaylab.transcript import loads_transcript

    items = [
        {"type": "text", "text": "look"},
        7,
        {"type": 7},
        {"type": "  "},
        ["x"],
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    ]
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    lines = [header, {"type": "message", "id": "e1", "parentId": None, "timestamp": "2026-12-01T12:00:01.000Z"}]
    lines[1]["message"] = {"role": "user", "content": items}
    transcript = loads_transcript(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [entry] = transcript.leaf_path()
    assert format_context_lines([entry.message]) == ["- User: look\n[non-text content: unknown x3, image]"]
