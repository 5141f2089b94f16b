"""Tool-result truncation, the per-call context guard and the session rewrite on a working copy."""

from __future__ import annotations

import pytest

from replaylab.compaction.js_strings import weighted_length
from replaylab.compaction.recovery import is_likely_context_overflow_error
from replaylab.compaction.truncation import (
    ContextOverflowError,
    calculate_max_tool_result_chars,
    cap_tool_result_for_write,
    format_truncation_notice,
    guard_chars,
    guard_context,
    has_important_tail,
    tool_result_text_length,
    truncate_tool_result_message,
    truncate_tool_result_text,
    write_cap_chars,
)
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.openclaw_2026_4_12 import (
    MIDDLE_OMISSION_MARKER,
    PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE,
    PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER,
)
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6


def _result(text, blocks=None, details=None):
    data = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": blocks if blocks is not None else [{"type": "text", "text": text}],
    }
    if details is not None:
        data["details"] = details
    return MESSAGE_ADAPTER.validate_python(data)


def test_notice_and_max_chars():
    assert format_truncation_notice(1234) == "[... 1234 more characters truncated]"
    assert calculate_max_tool_result_chars(200_000) == 40_000  # the hard cap wins
    assert calculate_max_tool_result_chars(10_000) == 12_000  # floor(10000 × 0.3) × 4


@pytest.mark.parametrize(
    ("tail", "important"),
    [
        ("all good\n" * 10, False),
        ("step\nTraceback (most recent call last):\n  boom", True),
        ('{"items": [1, 2, 3]}\n', True),
        ("lines\nTotal: 42 files", True),
        ("exit code 2", True),
        ("errorless prose", False),  # word boundary: "errorless" is not "error"
    ],
)
def test_important_tail(tail, important):
    assert has_important_tail("x" * 5000 + "\n" + tail) is important


@pytest.mark.parametrize(
    ("text", "important"),
    [
        # OpenClaw reads the last 2,000 UTF-16 units: 1,500 emoji are 3,000 units, "fatal" is before them
        ("fatal " + "\U0001f600" * 1_500, False),
        ("fatal " + "\U0001f600" * 990, True),  # 1,980 units: the word is in
        # JavaScript's `\b` is ASCII: a word after "é" starts at a boundary
        ("x" * 100 + "\nrésumé: déjàerror", True),
        ("x" * 100 + "\nall done", True),
        ("x" * 100 + "\nundone_x", False),
    ],
)
def test_the_important_tail_is_read_as_openclaw_reads_it_in_utf16_units_with_ascii_word_boundaries(text, important):
    """The porting bug of both rule sets: code points and Unicode word boundaries before."""
    assert has_important_tail(text) is important


def test_head_only_truncation_snaps_to_newline_and_counts_removed_chars():
    text = "".join(f"line {i:05d} of plain output\n" for i in range(2000))
    out = truncate_tool_result_text(text, 10_000)
    assert len(out) <= 10_000
    head, _, notice = out.rpartition("[... ")
    assert head.endswith("output")  # cut at a line end (newline dropped by the cut)
    assert out.endswith(f"[... {len(text) - len(head)} more characters truncated]")
    assert MIDDLE_OMISSION_MARKER not in out


def test_head_and_tail_when_tail_is_important():
    text = "".join(f"compiling unit {i}\n" for i in range(3000)) + "FATAL: build failed with exit code 1\n"
    out = truncate_tool_result_text(text, 12_000)
    assert MIDDLE_OMISSION_MARKER in out
    head, tail = out.split(MIDDLE_OMISSION_MARKER)
    assert head.startswith("compiling unit 0\n")
    assert "FATAL: build failed with exit code 1" in tail
    tail_text = tail.rsplit("[... ", 1)[0]
    assert len(tail_text) <= 4_000 and tail_text.startswith("compiling unit")  # snapped to a line start
    kept = len(head) + len(MIDDLE_OMISSION_MARKER) + len(tail_text)
    assert out.endswith(f"[... {len(text) - kept} more characters truncated]")


def test_short_text_untouched_and_min_keep_respected():
    assert truncate_tool_result_text("short", 100) == "short"
    out = truncate_tool_result_text("z" * 10_000, 500)  # below MIN_KEEP_CHARS: keeps 2000 anyway
    assert out.startswith("z" * 2000) and not out.startswith("z" * 2001)


def test_multi_block_budget_split_in_proportion_and_images_untouched():
    blocks = [
        {"type": "text", "text": "a" * 30_000},
        {"type": "image", "data": "QUJD", "mimeType": "image/png"},
        {"type": "text", "text": "b" * 10_000},
    ]
    out = truncate_tool_result_message(_result("", blocks), 8_000)
    texts = [b for b in out.content if getattr(b, "type", "") == "text"]
    assert out.content[1].type == "image" and out.content[1].data == "QUJD"
    # 3:1 split of 8000 → 6000 and 2000 (the min keep); each minus its notice where there is room
    head_a, head_b = (t.text.rsplit("[... ", 1)[0] for t in texts)
    assert head_a == "a" * (6_000 - len(format_truncation_notice(24_000)))
    assert head_b == "b" * 2_000
    assert texts[0].text.endswith(f"[... {30_000 - len(head_a)} more characters truncated]")


def test_a_cut_counts_utf16_units_as_openclaw_does_in_both_rule_sets():
    """The porting bug of both rule sets: code points before (an emoji is 2 units in JavaScript)."""
    text = "\U0001f600" * 3_000  # 6,000 units
    assert truncate_tool_result_text(text, 4_000) == "\U0001f600" * 1_982 + "[... 2036 more characters truncated]"
    assert tool_result_text_length(_result(text)) == 6_000
    assert truncate_tool_result_text("\U0001f600" * 1_500, 2_000) != "\U0001f600" * 1_500  # 3,000 units: over


def test_the_2026_9_6_cut_never_exceeds_its_budget_and_says_how_to_narrow_it():
    text = "".join(f"row {i}: 中文测试内容\n" for i in range(3_000))
    cut = truncate_tool_result_text(text, 1_500, rules=OPENCLAW_2026_9_6)
    assert weighted_length(cut) <= 1_500 < len(truncate_tool_result_text(text, 1_500))  # 2026.4.12 keeps 2,000
    assert cut.endswith("more characters truncated; rerun with narrower args if needed]")
    # CJK weighs 4: a text shorter than the cap in characters may still be over it
    assert truncate_tool_result_text("中" * 500, 1_000, rules=OPENCLAW_2026_9_6) != "中" * 500
    assert truncate_tool_result_text("中" * 500, 1_000) == "中" * 500
    # a content of one string is left as it is; a block is cut
    assert truncate_tool_result_message(_result("", blocks="q" * 50_000), 1_000, rules=OPENCLAW_2026_9_6).content == (
        "q" * 50_000
    )
    assert (
        len(truncate_tool_result_message(_result("q" * 50_000), 1_000, rules=OPENCLAW_2026_9_6).content[0].text)
        <= 1_000
    )


@pytest.mark.parametrize(
    ("context_tokens", "cap"),
    [(None, 16_000), (8_000, 9_600), (99_999, 16_000), (100_000, 32_000), (199_999, 32_000), (2_000_000, 64_000)],
)
def test_the_2026_9_6_write_cap_grows_with_the_window(context_tokens, cap):
    assert write_cap_chars(context_tokens, OPENCLAW_2026_9_6) == cap
    assert write_cap_chars(context_tokens) == 40_000
    capped = cap_tool_result_for_write(_result("q" * 100_000), context_tokens=context_tokens, rules=OPENCLAW_2026_9_6)
    assert tool_result_text_length(capped) <= cap


def test_the_2026_9_6_guard_cuts_single_results_only_and_never_raises():
    window = _window(*([30_000] * 6))
    old, _ = guard_context(window, context_tokens=8_000)  # 2026.4.12: older results replaced
    assert PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER in str([w.message for w in old])
    out, report = guard_context(window, context_tokens=8_000, rules=OPENCLAW_2026_9_6)
    assert report.truncated_entry_ids == [f"r{i}" for i in range(6)] and report.compacted_entry_ids == []
    assert all(weighted_length(w.message.content[0].text, 2) <= 8_000 for w in out[1:])
    assert PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER not in str([w.message for w in out])
    huge = _window(100, user="u" * 40_000)
    with pytest.raises(ContextOverflowError):
        guard_context(huge, context_tokens=8_000)  # 2026.4.12: over 90 % of the window
    assert guard_context(huge, context_tokens=8_000, rules=OPENCLAW_2026_9_6)[0] == huge


def test_write_time_cap_is_40000_chars():
    message = _result("q" * 100_000)
    capped = cap_tool_result_for_write(message)
    assert tool_result_text_length(capped) <= 40_000 and "more characters truncated" in capped.content[0].text
    assert tool_result_text_length(cap_tool_result_for_write(_result("fine"))) == 4


# ---------------------------------------------------------------- per-call guard


def _window(*sizes, user="hi"):
    items = [WindowMessage("u", MESSAGE_ADAPTER.validate_python({"role": "user", "content": user}))]
    for i, size in enumerate(sizes):
        items.append(WindowMessage(f"r{i}", _result("w" * size)))
    return items


def test_guard_chars_weights_tool_results_twice_and_counts_details():
    assert guard_chars(_result("x" * 100)) == 200
    assert guard_chars(_result("x" * 100, details={"k": "v"})) == 2 * (100 + len('{"k":"v"}'))


def test_guard_truncates_a_single_oversized_result_and_drops_details():
    window = _window(100, 30_000)
    window[2] = WindowMessage("r1", _result("w" * 30_000, details={"big": True}))
    out, report = guard_context(window, context_tokens=20_000)
    assert report.truncated_entry_ids == ["r1"] and report.max_single_chars == 20_000
    text = out[2].message.content[0].text
    assert len(text) <= 10_000 and text.endswith("more characters truncated]")
    assert out[2].message.details is None and window[2].message.details == {"big": True}  # the input is untouched


def test_guard_replaces_old_results_with_placeholder_but_keeps_the_newest():
    out, report = guard_context(_window(8_000, 8_000, 8_000, 8_000, 8_000), context_tokens=20_000)
    # 5 × 16,000 weighted chars > 75 % of 80,000: old results go, oldest first, until it fits
    assert report.compacted_entry_ids == ["r0", "r1"]
    assert [w.message.content[0].text == PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER for w in out[1:]] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert report.estimated_chars <= report.headroom_chars


def test_guard_raises_the_preemptive_overflow_recognized_by_recovery():
    with pytest.raises(ContextOverflowError) as info:
        guard_context(_window(10, user="u" * 80_000), context_tokens=20_000)
    assert str(info.value) == PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE
    assert is_likely_context_overflow_error(str(info.value))


def test_guard_skip_ids_leave_protected_results_alone():
    out, report = guard_context(
        _window(8_000, 8_000, 8_000, 8_000, 8_000), context_tokens=20_000, skip_entry_ids={"r0"}
    )
    assert "r0" not in report.compacted_entry_ids and out[1].message.content[0].text == "w" * 8_000


def test_the_2026_9_6_guard_cuts_a_result_whose_blocks_were_made_with_their_default_type():
    """A result the replay's tool executor made (`TextBlock(text=...)`, its type the default one)
    is cut and read back as a text block, not refused as an unknown one."""
    from replaylab.transcript.model import TextBlock, ToolResultMessage

    made = ToolResultMessage(tool_call_id="c1", tool_name="get_doc", content=[TextBlock(text="row\n" * 5_000)])
    out, report = guard_context([WindowMessage("r1", made)], 2_000, rules=OPENCLAW_2026_9_6)
    [block] = out[0].message.content
    assert report.truncated_entry_ids == ["r1"] and isinstance(block, TextBlock) and len(block.text) < 20_000
