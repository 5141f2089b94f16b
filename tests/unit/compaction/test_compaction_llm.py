"""The litellm summarizer, offline, through litellm's own `mock_response` (the only compaction test
module that imports litellm). A mock value such as 'litellm.InternalServerError' makes litellm
raise that error, so failures go through litellm's real error path.

The helpdesk session here looks orders up for four turns before its first write: safeguard never
summarizes across a mutating event, so its cut moves back to the first cancel (a split turn) and
the summarizer gets the read-only history before it, the turn prefix and nothing protected."""

from __future__ import annotations

import orjson
import pytest

from builders.transcripts import TOOL_CLASSES, late_writes_session
from replaylab.compaction import CompactParams, SummarizerOptions, compact
from replaylab.upstream.openclaw_2026_4_12 import REQUIRED_SUMMARY_SECTIONS

FAIL = "litellm.InternalServerError"
TURNS = 10
FIRST_WRITE = 4


def good_summary(extra: str = "") -> str:
    body = {
        "## Decisions": "- Cancelled even orders, refunded odd ones (#W1000000 … #W1000009).",
        "## Open TODOs": "- None.",
        "## Constraints/Rules": "- Do not refund without approval.",
        "## Pending user asks": "- Turn 0: please look at order #W1000000 for user mia_garcia_4500.",
        "## Exact identifiers": "\n".join(
            [
                "- #W1000000",
                "- https://help.example.com/t/0",
                "- https://help.example.com/t/1",
                "- https://help.example.com/t/2",
                "- https://help.example.com/t/3",
            ]
        ),
    }
    return "\n\n".join(f"{k}\n{v}" for k, v in body.items()) + extra


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return late_writes_session().write(tmp_path_factory.mktemp("llm") / "rec.jsonl")


def written_messages(recording) -> dict[str, dict]:
    """The recording's messages with a write call and the results of all their calls (a parallel
    read beside a write included), by entry id, as recorded."""
    lines = [orjson.loads(line) for line in recording.read_bytes().splitlines()]
    messages = [line for line in lines if line.get("type") == "message"]
    calls = {
        block["id"]
        for line in messages
        if any(b.get("type") == "toolCall" and TOOL_CLASSES[b["name"]] != "read" for b in line["message"]["content"])
        for block in line["message"]["content"]
        if block.get("type") == "toolCall"
    }
    return {
        line["id"]: line["message"]
        for line in messages
        if line["message"].get("toolCallId") in calls
        or any(block.get("id") in calls for block in line["message"]["content"])
    }


def assert_writes_kept_verbatim(recording, result) -> None:
    """Every write call and result is in the compacted window after the summary, as recorded and in
    order: pi's cut summarizes some of them, and those are restated right after the summary."""
    written = written_messages(recording)
    window = result.compacted_window
    assert window[0]["role"] == "compactionSummary"

    def source(item):
        return item.get("restates") or item["entryId"]

    kept = [source(item) for item in window[1:] if source(item) in written]
    assert kept == list(written)
    for item in window[1:]:
        if source(item) in written:
            assert item["message"] == written[source(item)], item["entryId"]
    assert result.protected_entry_ids and set(result.protected_entry_ids) <= set(written)
    assert result.first_kept_entry_id == result.compaction_event_id  # it keeps nothing itself: it restates


def _run(recording, responses, *, failures=0, max_retries=1, **extra):
    options = SummarizerOptions(mock_responses=responses, retry_delay_s=0, max_retries=max_retries)
    return compact(
        CompactParams(
            session_file=str(recording),
            context_tokens=6_000,
            reserve_tokens_floor=1_000,
            keep_recent_tokens=800,
            tool_classes=TOOL_CLASSES,
            model_provider="openai/gpt-4o-mini",
            summarizer=options,
            summarizer_failures=failures,
            **extra,
        )
    )


def test_llm_summary_is_used_and_passes_the_guard(recording):
    prefix = "## Original Request\nTurn 4\n\n## Early Progress\n- looked up #W1000004"
    result = _run(recording, [prefix, good_summary()])
    assert result.success and result.summarizer == "litellm:openai/gpt-4o-mini"
    assert result.quality_guard.ok and result.summary_attempts == 2
    assert result.summary_text.startswith(good_summary()[:200])
    assert "**Turn Context (split turn):**\n\n" + prefix in result.summary_text
    assert result.findings == []
    assert_writes_kept_verbatim(recording, result)


def test_summarizer_failing_twice_then_succeeding(recording):
    prefix = "## Original Request\nTurn 4"
    result = _run(recording, [FAIL, FAIL, prefix, good_summary()])
    assert result.success and result.summarizer.startswith("litellm:")
    assert result.summary_attempts == 4 and result.quality_guard.ok
    assert any("InternalServerError" in note for note in result.notes)


def test_summarizer_failing_n_times_via_the_injection_hook(recording):
    result = _run(recording, ["## Original Request\nTurn 4", good_summary()], failures=3)
    # the prefix call fails 3× (its retry budget), falls back to the extractive prefix; the main one succeeds
    assert result.success and result.summarizer.startswith("litellm:") and result.summary_attempts == 4


def test_quality_guard_retries_with_feedback(recording):
    bad = "## Decisions\n- stuff happened"
    result = _run(recording, ["## Original Request\nTurn 4", bad, good_summary()])
    assert result.success and result.quality_guard.ok and result.quality_guard.attempts == 2
    assert bad not in result.summary_text


def test_guard_failing_after_all_retries_keeps_the_last_summary_and_reports_it(recording):
    bad = "## Decisions\n- stuff happened"
    result = _run(recording, ["## Original Request\nTurn 4", bad, bad], max_retries=1)
    assert result.success and not result.quality_guard.ok and result.quality_guard.attempts == 2
    assert any(r.startswith("missing_section:") for r in result.quality_guard.reasons)


def test_every_call_failing_falls_back_without_losing_the_mutations(recording):
    result = _run(recording, [FAIL] * 20)
    assert result.success and result.summarizer == "fallback" and not result.quality_guard.ok
    assert all(section in result.summary_text for section in REQUIRED_SUMMARY_SECTIONS)
    assert result.findings == []
    assert_writes_kept_verbatim(recording, result)


def test_empty_skeleton_is_never_written_over_a_previous_summary(tmp_path):
    """A session that only reads: safeguard keeps nothing back, so the second compaction summarizes
    the first one's kept tail over the first summary, and the model is asked for that summary."""
    from replaylab.transcript import TranscriptWriter

    recording = late_writes_session(first_write=TURNS).write(tmp_path / "rec.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    params = dict(
        session_file=str(writer.path),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=800,
        tool_classes=TOOL_CLASSES,
    )
    first = compact(CompactParams(**params), writer=writer)  # extractive: a real previous summary
    leaf = first.compaction_event_id
    for i in range(3):
        writer.append(
            {
                "type": "message",
                "id": f"u{i}",
                "parentId": leaf,
                "timestamp": "2026-04-10T12:00:00.000Z",
                "message": {"role": "user", "content": f"more {i} " + "m" * 900},
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
    skeleton = "\n\n".join(f"{s}\nNone." for s in REQUIRED_SUMMARY_SECTIONS).replace(
        "## Decisions\nNone.", "## Decisions\nNo prior history."
    )
    options = SummarizerOptions(mock_responses=[skeleton] * 10, retry_delay_s=0)
    second = compact(CompactParams(**params, model_provider="openai/gpt-4o-mini", summarizer=options), writer=writer)
    assert first.success and first.summarizer == "extractive"
    assert second.success and second.summarizer == "fallback" and second.summary_attempts >= 2
    assert second.first_kept_entry_id in {f"{role}{i}" for role in "ua" for i in range(3)}
    assert "empty_skeleton_over_previous_summary" in second.quality_guard.reasons
    assert first.summary_text.split("\n\n## Recent turns")[0][:300] in second.summary_text


def test_an_llm_summarizer_is_not_asked_when_nothing_can_be_gained(bench_compaction_points, tmp_path, monkeypatch):
    """With `modelProvider` an answer may be two words, so the lower bound counts no summary body;
    where compact() still decides "nothing to gain" before summarizing, the summarizer gets no
    request at all, and elsewhere it is asked. A loopback OpenAI-compatible server answers."""
    from loopback import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback-only-000000000000")  # the loopback server ignores it
    server = ChatServer(lambda body: ({"role": "assistant", "content": "All done."}, "stop"))
    try:
        options = SummarizerOptions(api_base=server.url, retry_delay_s=0, timeout_s=20)
        decided = asked = 0
        for index, (path, leaf) in enumerate(bench_compaction_points):
            before = len(server.requests)
            result = compact(
                CompactParams(
                    session_file=str(path),
                    leaf_id=leaf,
                    model_provider="openai/gpt-4o-mini",
                    summarizer=options,
                    working_copy=str(tmp_path / str(index) / path.name),
                    compaction_mode="safeguard",
                    context_tokens=12000,
                    reserve_tokens_floor=2000,
                    keep_recent_tokens=1500,
                )
            )
            if "decided before summarizing" in (result.error or ""):
                decided += 1
                assert len(server.requests) == before and result.summary_attempts == 0, path.name
            else:
                asked += len(server.requests) > before
    finally:
        server.stop()
    assert decided > 0 and asked > 0, (decided, asked)
