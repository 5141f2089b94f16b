"""OpenClaw 2026.9.6's rules as replaylab ports them (`replaylab.agents.openclaw_2026_9_6`), on
small transcripts whose answers were measured by running OpenClaw's own code (the conformance
tests in tests/oracles/ compare every real and bundled session with it)."""

from __future__ import annotations

import orjson

from replaylab.agents import memo_rules, rules_of
from replaylab.agents.openclaw_2026_9_6.context import indexed_path, walked_path
from replaylab.transcript import loads_transcript
from replaylab.transcript.context import path_facts
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.profiles import profile_named

RULES = rules_of("openclaw@2026.9.6")
PI = rules_of("pi@0.73.1")
HEADER = {"type": "session", "version": 4, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}


def session(*entries: dict) -> list:
    """The leaf path of a linear session of `entries` (ids e1, e2, … unless given)."""
    lines, parent = [HEADER], None
    for n, entry in enumerate(entries, 1):
        entry = {"id": f"e{n}", "parentId": parent, "timestamp": "2026-12-01T12:00:00.000Z", **entry}
        parent = entry["id"]
        lines.append(entry)
    return loads_transcript(b"".join(orjson.dumps(line) + b"\n" for line in lines)).leaf_path()


def message(role: str, content, **extra) -> dict:
    return {"type": "message", "message": {"role": role, "content": content, **extra}}


def call(call_id: str, name: str = "get_order") -> dict:
    return message("assistant", [{"type": "toolCall", "id": call_id, "name": name, "arguments": {"id": 1}}])


def result(call_id: str, text: str = "ok") -> dict:
    return message(
        "toolResult", [{"type": "text", "text": text}], toolCallId=call_id, toolName="get_order", isError=False
    )


def tokens(data: dict) -> int:
    return RULES.tokens(MESSAGE_ADAPTER.validate_python(data))


def test_estimate_weights_cjk_not_emoji() -> None:
    # 30 UTF-16 units + 3 for each of 8 common CJK characters = 54 chars
    assert tokens({"role": "user", "content": "我的订单在哪里？ 🎧 Where is my order?"}) == 14
    assert tokens({"role": "user", "content": "🎧🎧"}) == 1


def test_estimate_counts_the_sender_images_and_omissions() -> None:
    sender = {"senderId": " u-42 ", "senderName": "Dana"}
    assert tokens({"role": "user", "content": "thanks", "__openclaw": sender}) == 11  # (6 + 35) / 4
    image = {"type": "image", "data": "x", "mimeType": "image/png"}
    assert tokens({"role": "user", "content": [{"type": "text", "text": "hi"}, image]}) == 2015
    assert tokens({"role": "toolResult", "toolCallId": "c", "content": [image]}) == 2014
    assert tokens({"role": "toolResult", "toolCallId": "c", "content": [{"type": "resource"}]}) == 15
    two = [{"type": "text", "text": "abc"}, {"type": "text", "text": "d"}]
    assert tokens({"role": "toolResult", "toolCallId": "c", "content": two}) == 2  # "abc\nd": 5 chars
    assert PI.tokens(MESSAGE_ADAPTER.validate_python({"role": "toolResult", "toolCallId": "c", "content": two})) == 1


def test_a_text_of_another_type_is_counted_as_javascript_joins_it() -> None:
    # `getCompactionContent` keeps a truthy `text` (an object, even `{}`, or `[]`) and joins it as
    # `String()` prints it: `[object Object]` is 15 chars, `[]` an empty line between its neighbours
    def counted(*texts) -> int:
        content = [{"type": "text", "text": text} for text in texts]
        (entry,) = session(message("toolResult", content, toolCallId="c", toolName="get_order", isError=False))
        return RULES.tokens(entry.message)

    assert counted({"type": 7}) == counted({}) == 4
    assert counted("abcd", [], "efg") == 3  # "abcd\n\nefg": 9 chars


def test_an_assistant_field_that_is_a_list_counts_its_length() -> None:
    # `estimateStringChars` of a list whose `String()` has no CJK reads its `.length`: items, not chars
    def counted(item: dict) -> int:
        (entry,) = session(message("assistant", [item]))
        return RULES.tokens(entry.message)

    assert counted({"type": "text", "text": [{"type": "text", "text": None}]}) == 1
    assert counted({"type": "thinking", "thinking": ["a"] * 5}) == 2
    assert counted({"type": "toolCall", "name": ["ab"], "arguments": {}}) == 1  # 1 + len("{}") chars
    assert counted({"type": "text", "text": 5}) == 0  # NaN upstream: replaylab counts nothing


def test_an_excluded_message_counts_nothing_and_is_not_in_the_context() -> None:
    assert tokens({"role": "user", "content": "a long internal note", "excludeFromContext": True}) == 0
    path = session(message("user", "hi"), message("user", "note", excludeFromContext=True), message("assistant", []))
    assert [w.entry_id for w in RULES.window(path)] == ["e1", "e3"]
    assert [w.entry_id for w in PI.window(path)] == ["e1", "e2", "e3"]


def test_flags_are_read_as_written_a_custom_message_without_a_boolean_display_kept_aside() -> None:
    """`excludeFromContext` leaves a message out only when it is `true` (pi's LLM step reads its
    truth, the window keeps it); a custom message entry's `display` must be a boolean."""
    path = session(
        message("user", "hi"),
        message("bashExecution", None, command="ls", output="a", excludeFromContext="true"),
        {"type": "custom_message", "customType": "note", "content": "noted", "display": "true"},
        {"type": "custom_message", "customType": "note", "content": "noted"},
        {"type": "custom_message", "customType": "note", "content": "noted", "display": False},
    )
    assert [w.entry_id for w in RULES.window(path)] == ["e1", "e2", "e5"]
    assert [w.entry_id for w in PI.window(path)] == ["e1", "e2", "e3", "e4", "e5"]
    assert [why for _, why in RULES.kept_aside(path)] == [
        "its display is a JSON string, not a boolean",
        "a custom message needs a display (a boolean)",
    ]


def test_an_entry_replaylab_cannot_read_is_one_openclaw_keeps_aside() -> None:
    """OpenClaw's schema rejects an assistant whose content is a number, so its rules keep the
    stand-in aside like any entry it rejects: the window check asks at the nearest entry it reads,
    and the pair check reads the path without it (the item's note leaves it to the load's error)."""
    from replaylab.transcript.model import UnreadableEntry

    path = session(message("user", "hi"), message("assistant", 7), message("user", "again"))
    assert isinstance(path[1], UnreadableEntry)
    assert [entry.id for entry, _ in RULES.kept_aside(path)] == ["e2"]
    assert [w.entry_id for w in RULES.window(path)] == ["e1", "e3"]
    assert PI.kept_aside(path) == []


def test_a_tool_result_without_a_boolean_is_error_is_kept_aside() -> None:
    """`readableMessageSchema`'s tool result wants `isError: boolean()`: one without it (which the
    model reads as its default, false) or with a string is kept aside, its `apply_patch` summary
    with it (measured: OpenClaw's compaction lists none of its files); pi checks no type."""
    fields = {"toolCallId": "c1", "toolName": "get_order"}
    path = session(
        call("c1"),
        message("toolResult", [{"type": "text", "text": "ok"}], **fields),
        message("toolResult", [{"type": "text", "text": "ok"}], **fields, isError="false"),
        message("toolResult", [{"type": "text", "text": "ok"}], **fields, isError=True),
    )
    assert [entry.id for entry, _ in RULES.kept_aside(path)] == ["e2", "e3"]
    assert [w.entry_id for w in RULES.window(path)] == ["e1", "e4"]
    assert PI.kept_aside(path) == []


def test_a_reset_starts_afresh_keeping_only_paired_user_and_assistant_messages() -> None:
    path = session(
        message("user", "old"),
        message("assistant", [{"type": "text", "text": "old answer"}]),
        {"type": "reset", "reason": "reset"},
        message("user", "new"),
    )
    assert [w.entry_id for w in RULES.window(path)] == ["e4"]
    kept = session(
        message("user", "q"),  # e1
        call("c1"),  # e2
        result("c1"),  # e3
        result("orphan"),  # e4: answers no call of the kept range
        {"type": "custom_message", "customType": "hook", "content": "hint", "display": True},  # e5
        message("user", "excluded", excludeFromContext=True),  # e6: kept by the reset all the same
        {"type": "reset", "reason": "new", "firstKeptEntryId": "e1"},  # e7
        message("user", "after"),  # e8
    )
    assert [w.entry_id for w in RULES.window(kept)] == ["e1", "e2", "e3", "e6", "e8"]


def test_a_compaction_naming_itself_keeps_nothing_before_it_and_summaries_carry_epoch_ms() -> None:
    path = session(
        message("user", "q"),
        {"type": "compaction", "summary": "s", "firstKeptEntryId": "e2", "tokensBefore": 10},
        message("user", "after"),
    )
    window = RULES.window(path)
    assert [w.entry_id for w in window] == ["e2", "e3"]
    assert window[0].message.timestamp == 1796126400000


def test_the_cut_refuses_an_empty_compaction_and_a_reset_leaf() -> None:
    short = session(message("user", "q"), message("assistant", [{"type": "text", "text": "a"}]))
    assert RULES.cut(short, 20_000, "0.66.1", None, RULES.tokens).refused is not None
    assert PI.refusal(short) is None and PI.cut(short, 20_000, "0.66.1", lambda e: 1, PI.tokens).first_kept_index == 0
    reset = session(message("user", "q"), {"type": "reset", "reason": "reset"})
    assert "reset" in RULES.refusal(reset)


def test_the_cut_divides_keep_recent_tokens_by_the_recorded_usage_over_the_estimate() -> None:
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 300}
    turns = []
    for _ in range(6):
        turns += [message("user", "x" * 40), message("assistant", [{"type": "text", "text": "y" * 40}], usage=usage)]
    path = session(*turns)
    cut = RULES.cut(path, 30, "0.66.1", None, RULES.tokens)
    assert cut.scale == 300 / 120 and cut.keep_recent_tokens == 30 / cut.scale
    assert (
        cut.refused is None
        and cut.first_kept_index > PI.cut(path, 30, "0.66.1", lambda e: 10, PI.tokens).first_kept_index
    )


def test_only_pi_0_73_1_items_run_the_plain_functions() -> None:
    assert memo_rules(profile_named("pi@0.73.1")) is None
    assert memo_rules(profile_named("openclaw@2026.9.6")) is RULES
    memo = ItemMemo(rules=RULES)
    assert memo.tokens(MESSAGE_ADAPTER.validate_python({"role": "user", "content": "我的"})) == 2


def test_a_walk_reads_once_what_indexed_path_and_path_facts_read() -> None:
    path = session(
        message("user", "q"),  # e1
        {"type": "custom"},  # e2: no customType, kept opaque by OpenClaw
        {**message("user", "q"), "restates": "e1"},  # e3: a byte copy of e1
        message("assistant", []),  # e4
    )
    for walked_from in (path, [*path, path[0]]):  # the second holds an id twice: no facts
        walked = walked_path(walked_from)
        assert walked.entries == indexed_path(walked_from)
        assert all(walked_from[i] is entry for i, entry in zip(walked.positions, walked.entries, strict=True))
        assert walked.facts == path_facts(walked.entries)
    walked = walked_path(path)
    assert [e.id for e in walked.entries] == ["e1", "e3", "e4"] and walked.positions == [0, 2, 3]
    assert walked.facts is not None and walked.facts.sources == {"e3": "e1"}
    assert walked_path([*path, path[0]]).facts is None


def test_a_copy_continued_before_the_files_last_reset_holds_the_file_up_to_there() -> None:
    """OpenClaw's load attaches an entry that follows a reset and branches off before it to the
    file's last entry (measured: tests/integration/test_openclaw_sessions.py), so a working copy
    continued from before the file's last reset is the file up to its leaf's line; pi follows
    every `parentId`, so its copies are whole. A reset starts OpenClaw's context afresh, never pi's."""
    lines, parent = [HEADER], None
    kinds = ["user", "assistant", "reset", "user", "assistant", "reset", "user"]
    for n, kind in enumerate(kinds, 1):
        body = {"type": "reset", "reason": "new"} if kind == "reset" else message(kind, f"m{n}")
        lines.append({"id": f"e{n}", "parentId": parent, "timestamp": "2026-12-01T12:00:00.000Z", **body})
        parent = f"e{n}"
    lines.append({**message("user", "a branch"), "id": "b1", "parentId": "e1", "timestamp": "t"})
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        # file lines: the header is line 1, e1 line 2
        assert RULES.lines_to_copy(transcript, "e2") == 3  # resets after it, on no path to it
        assert RULES.lines_to_copy(transcript, "e5") == 6  # the last reset (e6) is after it
        assert RULES.lines_to_copy(transcript, "e7") is None  # the last reset is on its path
        assert RULES.lines_to_copy(transcript, "b1") is None  # after the last reset in the file
        assert PI.lines_to_copy(transcript, "e2") is None
    path = loads_transcript(data).path_to("e7")
    assert [e.id for e in path if RULES.starts_afresh(e)] == ["e3", "e6"]
    assert not any(PI.starts_afresh(e) for e in path)
    # a reset whose reason OpenClaw's schema rejects is kept aside: no reset to its load
    aside = [{**line, "reason": "because"} if line.get("id") == "e6" else line for line in lines]
    odd = loads_transcript(b"".join(orjson.dumps(line) + b"\n" for line in aside))
    assert RULES.lines_to_copy(odd, "e5") is None and RULES.lines_to_copy(odd, "e2") == 3
    assert [e.id for e in odd.path_to("e7") if RULES.starts_afresh(e)] == ["e3"]


def test_a_custom_message_without_a_custom_type_is_a_hook_message() -> None:
    """OpenClaw's file reader gives a `custom` message written without a customType (not a null
    one) the customType "hook" before its schema check (`normalizePersistedLegacyHookMessage`):
    it stays in the context as a hook's message; a null customType is kept aside."""
    from replaylab.oracles.compare import message_as_pi_holds_it

    path = session(
        message("user", "hi"),
        message("custom", [{"type": "text", "text": "from a hook"}]),
        message("custom", "noted", customType=None),
        message("custom", [{"type": "text", "text": "again"}], customType="note"),
    )
    window = RULES.window(path)
    assert [w.entry_id for w in window] == ["e1", "e2", "e4"]
    assert message_as_pi_holds_it(window[1].message)["customType"] == "hook"
    assert "customType" not in orjson.loads(orjson.dumps(path[1].message.model_dump(by_alias=True, exclude_unset=True)))
    assert [entry.id for entry, _ in RULES.kept_aside(path)] == ["e3"]
