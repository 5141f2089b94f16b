"""The overflow recovery's rewrite of the tool results: its plan under each release's rules, its
gate, and the session rewrite on a working copy."""

from __future__ import annotations

import pytest

from builders.transcripts import Session
from replaylab.compaction.js_strings import weighted_length
from replaylab.compaction.session_truncation import (
    plan_tool_result_replacements,
    recovery_budgets,
    recovery_plan,
    session_likely_has_oversized_tool_results,
    truncate_oversized_tool_results_in_session,
)
from replaylab.compaction.truncation import calculate_max_tool_result_chars, tool_result_text_length
from replaylab.transcript import build_window, file_sha256, load_transcript
from replaylab.transcript.model import MESSAGE_ADAPTER, CompactionEntry, LabelEntry
from replaylab.upstream.openclaw_2026_9_6 import AGGREGATE_ELISION_MARKER
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6


def _result(text):
    return MESSAGE_ADAPTER.validate_python(
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": text}]}
    )


def _session_with_big_results():
    s = Session()
    s.user("read the logs")
    s.tool_turn("read", {"path": "/var/log/a"}, "A" * 30_000)
    label_target = s.last
    s.raw({"type": "label", "targetId": label_target, "label": "big"})
    s.tool_turn("read", {"path": "/var/log/b"}, "B" * 30_000)
    s.assistant("both read")
    return s


def test_plan_per_result_then_aggregate_newest_first(tmp_path):
    path = load_transcript(_session_with_big_results().write(tmp_path / "s.jsonl")).leaf_path()
    plan = plan_tool_result_replacements(path, context_tokens=20_000)  # cap 24,000 chars
    lengths = {k: tool_result_text_length(v) for k, v in plan.items()}
    assert len(lengths) == 2 and sum(lengths.values()) <= 24_000 + 200
    newest = [e.id for e in path if e.id in plan][-1]
    assert lengths[newest] < min(lengths.values()) + 1  # the aggregate pass trimmed the newest first
    assert session_likely_has_oversized_tool_results([e.message for e in path if hasattr(e, "message")], 20_000)


@pytest.mark.parametrize(
    ("context_tokens", "budgets"),
    [(100, (120, 480)), (8_000, (9_600, 38_400)), (128_000, (32_000, 256_000)), (200_000, (64_000, 400_000))],
)
def test_the_2026_9_6_aggregate_budget_is_four_caps_or_half_the_window(context_tokens, budgets):
    assert recovery_budgets(context_tokens, OPENCLAW_2026_9_6) == budgets
    cap = calculate_max_tool_result_chars(context_tokens)  # 2026.4.12: the cap is the aggregate budget
    assert recovery_budgets(context_tokens, OPENCLAW_2026_4_12) == (cap, cap)


def _results(texts):
    return [(f"e{i}", _result(t)) for i, t in enumerate(texts)]


def test_a_tight_2026_9_6_aggregate_budget_takes_the_compact_notice_then_clears():
    # a 100-token window: a 480-char budget, under one full notice (71 chars) for each of 14
    # results; each is cut to the compact notice's floor (36), the rest cleared from the first
    plan = recovery_plan(_results(["n" * 100] * 14), 100, OPENCLAW_2026_9_6)
    texts = [plan.replacements[f"e{i}"].content[0].text for i in range(14)]
    compact = "[... 100 chars truncated; narrow args]"[:36]
    assert texts[1:] == [compact] * 13 and texts[0] == AGGREGATE_ELISION_MARKER[: 36 - (1_400 - 480 - 13 * 64 - 64)]
    assert sum(weighted_length(t) for t in texts) == 480
    # results no longer than that notice are not truncated: the clearing pass takes its excess
    # from the first, leaving the start of the elision marker
    cleared = recovery_plan(_results(["m" * 36] * 14), 100, OPENCLAW_2026_9_6)
    assert list(cleared.replacements) == ["e0"]
    assert cleared.replacements["e0"].content[0].text == AGGREGATE_ELISION_MARKER[: 36 - (14 * 36 - 480)]
    assert cleared.oversized_count == 0 and cleared.aggregate_reducible_chars == 14 * 36 - 480


def test_the_2026_9_6_plan_weighs_cjk_and_skips_string_content():
    # 1,000 CJK characters weigh 4,000: over a 1,000-token window's 1,200-char cap
    plan = recovery_plan(_results(["中" * 1_000, "ok"]), 1_000, OPENCLAW_2026_9_6)
    assert list(plan.replacements) == ["e0"] and weighted_length(plan.replacements["e0"].content[0].text) <= 1_200
    legacy = MESSAGE_ADAPTER.validate_python({"role": "toolResult", "toolCallId": "c", "content": "x" * 50_000})
    assert recovery_plan([("s", legacy), ("t", _result("y" * 10))], 1_000, OPENCLAW_2026_9_6).replacements == {}
    assert not session_likely_has_oversized_tool_results([legacy, _result("y" * 10)], 1_000, OPENCLAW_2026_9_6)
    assert session_likely_has_oversized_tool_results([_result("y" * 700)] * 8, 1_000, OPENCLAW_2026_9_6)
    assert not session_likely_has_oversized_tool_results([_result("y" * 700)] * 6, 1_000, OPENCLAW_2026_9_6)


def test_session_truncation_branches_on_a_working_copy(tmp_path):
    recording = _session_with_big_results().write(tmp_path / "rec.jsonl")
    before = file_sha256(recording)
    result = truncate_oversized_tool_results_in_session(recording, 20_000, working_copy=tmp_path / "copy.jsonl")
    assert result.truncated and result.truncated_count == 2
    assert file_sha256(recording) == before  # the recording is never written
    copy = load_transcript(tmp_path / "copy.jsonl")
    assert copy.leaf_id == result.leaf_id
    old_ids = {e.id for e in load_transcript(recording).entries}
    assert old_ids <= {e.id for e in copy.entries}  # old entries stay as an abandoned branch
    path = copy.leaf_path()
    assert path[0].id == "e0001" and path[1].id == "e0002"  # unchanged prefix, branch from the parent
    results = [e.message for e in path if getattr(getattr(e, "message", None), "role", "") == "toolResult"]
    assert sum(tool_result_text_length(m) for m in results) <= 24_200
    label = next(e for e in path if isinstance(e, LabelEntry))
    assert label.target_id == result.id_map["e0003"] and label.target_id in {e.id for e in path}
    assert copy.diagnostics == []


def test_session_truncation_remaps_compaction_boundary(tmp_path):
    """A compaction as safeguard writes it: its protected entries kept from firstKeptEntryId on (the
    second read and its result). Both ids are remapped onto the truncated branch, and pi's window
    of the copy is the summary, then everything from the remapped first kept entry, truncated."""
    s = _session_with_big_results()
    s.raw(
        {
            "type": "compaction",
            "summary": "## Decisions\nread logs",
            "firstKeptEntryId": "e0005",
            "tokensBefore": 100,
            "details": {"replaylab": {"protectedEntryIds": ["e0005", "e0006"]}},
        }
    )
    s.user("more")
    recording = s.write(tmp_path / "rec.jsonl")
    result = truncate_oversized_tool_results_in_session(recording, 20_000, working_copy=tmp_path / "copy.jsonl")
    ids = result.id_map
    assert "e0002" not in ids and {"e0005", "e0006", "e0009"} <= set(ids)  # the branch starts at the first big result
    path = load_transcript(tmp_path / "copy.jsonl").leaf_path()
    compaction = next(e for e in path if isinstance(e, CompactionEntry))
    assert compaction.first_kept_entry_id == ids["e0005"]
    assert compaction.details["replaylab"]["protectedEntryIds"] == [ids["e0005"], ids["e0006"]]
    window = build_window(path)
    assert window[0].message.role == "compactionSummary"
    assert [w.entry_id for w in window][1:] == [ids["e0005"], ids["e0006"], ids["e0007"], ids["e0009"]]
    assert tool_result_text_length(window[2].message) < 30_000  # the protected result was truncated too


def test_nothing_to_truncate_writes_nothing(tmp_path):
    s = Session()
    s.user("hi")
    s.assistant("hello")
    recording = s.write(tmp_path / "rec.jsonl")
    result = truncate_oversized_tool_results_in_session(recording, 20_000, working_copy=tmp_path / "copy.jsonl")
    assert not result.truncated and result.reason and not (tmp_path / "copy.jsonl").exists()
