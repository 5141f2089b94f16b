"""pi 1.6.0's rules as replaylab ports them (`replaylab.agents.pi_1_6_0`), rule by rule on small
transcripts, each beside what pi 0.73.1's rules give there. The answers were measured by running
pi 1.6.0's own code on the same sessions; tests/oracles/test_pi_1_6_0.py and the conformance
tests compare the rules with pi 1.6.0 itself on every session pi 1.6.0 writes, every recording and
every real session."""

from __future__ import annotations

from builders.linear import linear_jsonl, message
from replaylab.agents import memo_rules, rules_of
from replaylab.transcript import loads_transcript
from replaylab.transcript.model import MESSAGE_ADAPTER, MessageEntry
from replaylab.upstream.profiles import profile_for_header, profile_named

RULES = rules_of("pi@1.6.0")
PI = rules_of("pi@0.73.1")
HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
WORDS = " ".join(f"w{i}" for i in range(100))  # 389 chars: 98 tokens


def session(*entries: dict) -> list:
    """The leaf path of a linear session of `entries` (ids e1, e2, … unless given)."""
    return loads_transcript(linear_jsonl(HEADER, *entries)).leaf_path()


def text(role: str, words: str = WORDS, **extra) -> dict:
    return message(role, [{"type": "text", "text": words}], **extra)


def tokens(rules, data: dict) -> int:
    return rules.tokens(MESSAGE_ADAPTER.validate_python(data))


def cut(rules, path, keep: int):
    def entry_tokens(entry) -> int:
        return rules.tokens(entry.message) if isinstance(entry, MessageEntry) else 0

    return rules.cut(path, keep, "0.66.1", entry_tokens, rules.tokens)


def test_the_profile_is_named_never_claimed_and_carries_its_own_rules() -> None:
    profile = profile_named("pi@1.6.0")
    assert (profile.agent, profile.version, profile.oracle_folder) == ("pi", "1.6.0", "pi-1.6.0")
    assert profile.npm_package == "@earendil-works/pi-coding-agent"
    assert profile_for_header(HEADER).name == "pi@0.73.1"  # pi 1.6.0 still writes version 3
    assert memo_rules(profile) is RULES and memo_rules(profile_named("pi@0.73.1")) is None


def test_system_messages_and_user_images_are_estimated() -> None:
    system = {
        "role": "system",
        "content": "abcd" * 10,
        "sections": {"a": "x" * 8, "b": None},
        "toolsAdded": [{"name": "t"}],
    }
    assert tokens(RULES, system) == 16  # 40 + 8 + len('[{"name":"t"}]') = 62 chars
    assert tokens(PI, system) == 0
    image = {"type": "image", "data": "x", "mimeType": "image/png"}
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}, image]}
    assert tokens(RULES, user) == 1201 and tokens(PI, user) == 1


def test_the_kept_range_loses_its_system_messages_and_a_compaction_replays_them_first() -> None:
    stored = {"role": "system", "content": "prompt", "timestamp": 1}
    path = session(
        message("system", "prompt", timestamp=1),
        text("user"),
        text("assistant"),
        message("system", "patch", timestamp=2),
        text("user"),
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "e3", "tokensBefore": 9, "systemMessage": stored},
        text("user"),
    )
    assert [(w.entry_id, w.message.role) for w in RULES.window(path)] == [
        ("e6", "system"),
        ("e6", "compactionSummary"),
        ("e3", "assistant"),
        ("e5", "user"),
        ("e7", "user"),
    ]
    assert [w.entry_id for w in PI.window(path)] == ["e6", "e3", "e4", "e5", "e7"]


def test_a_retain_none_compaction_keeps_nothing_before_it_and_the_cut_starts_after_it() -> None:
    path = session(
        text("user"),
        text("assistant"),
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "e3", "tokensBefore": 9},
        text("user"),
        text("assistant"),
        text("user"),
        text("assistant"),
    )
    assert [w.entry_id for w in RULES.window(path)] == ["e3", "e4", "e5", "e6", "e7"]
    found = cut(RULES, path, 150)
    assert (found.boundary_start, path[found.first_kept_index].id, found.summarize) == (3, "e6", (3, 4))


def test_context_edits_omit_or_replace_a_message_in_context() -> None:
    path = session(
        text("user"),
        text("assistant"),
        {"type": "context_edit", "targetId": "e2", "replacement": None},
        text("user"),
        message("assistant", [{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]),
        message("toolResult", [{"type": "text", "text": WORDS}], toolCallId="c", toolName="read", isError=False),
        {"type": "context_edit", "targetId": "e6", "replacement": {"content": "[omitted]"}},
        {"type": "usage", "kind": "cache_warm", "provider": "p", "model": "m", "usage": {}},
    )
    window = RULES.window(path)
    assert [w.entry_id for w in window] == ["e1", "e4", "e5", "e6"]
    assert window[-1].message.content[0].text == "[omitted]" and RULES.tokens(window[-1].message) == 3
    assert len(PI.window(path)) == 5


def test_all_zero_usage_is_no_usage_and_the_fallback_counts_the_system_message_once() -> None:
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    messages = [
        MESSAGE_ADAPTER.validate_python(m)
        for m in (
            {"role": "system", "content": "abcd" * 4, "timestamp": 1},
            {"role": "system", "content": "efgh" * 4, "timestamp": 2},
            {"role": "user", "content": "x" * 40},
            {"role": "assistant", "content": [], "usage": zero, "stopReason": "stop"},
        )
    ]
    # 16 + 2 + 16 chars of system (joined by a blank line) = 9 tokens, once; the user's 10
    assert RULES.context_tokens(messages, RULES.tokens) == 19
    assert PI.context_tokens(messages, PI.tokens) == 0  # pi 0.73.1 took the zero usage


def test_an_empty_compaction_is_refused() -> None:
    path = session(text("user"), text("assistant"))
    assert cut(RULES, path, 20_000).refused is not None and cut(PI, path, 20_000).first_kept_index == 0
    assert RULES.refusal([*path]) is None


def test_past_the_last_cut_point_the_cut_falls_back_to_it_not_to_the_first() -> None:
    big = " ".join(f"r{i}" for i in range(2000))
    path = session(
        text("user"),
        text("assistant"),
        text("user"),
        message("assistant", [{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]),
        message("toolResult", [{"type": "text", "text": big}], toolCallId="c", toolName="read", isError=False),
    )
    assert path[cut(RULES, path, 500).first_kept_index].id == "e4"
    assert path[cut(PI, path, 500).first_kept_index].id == "e1"  # 0.73.1 keeps everything


def test_a_bash_execution_custom_message_or_branch_summary_starts_a_turn() -> None:
    for starts in (
        message("bashExecution", None, command="ls", output=WORDS, exitCode=0),
        {"type": "custom_message", "customType": "note", "content": WORDS, "display": True},
        {"type": "branch_summary", "fromId": "e1", "summary": WORDS},
    ):
        if starts.get("type") == "message":
            del starts["message"]["content"]
        path = session(text("user"), text("assistant"), starts, text("assistant"), text("assistant"))
        mine, old = cut(RULES, path, 250), cut(PI, path, 250)
        assert path[mine.first_kept_index].id == "e3" and not mine.is_split_turn, starts
        assert old.is_split_turn  # 0.73.1: only a user message starts a turn


def test_custom_messages_and_branch_summaries_count_toward_the_kept_tail() -> None:
    path = session(
        text("user"),
        text("assistant"),
        text("user"),
        text("assistant"),
        {"type": "custom_message", "customType": "note", "content": WORDS, "display": False},
        {"type": "custom_message", "customType": "note", "content": WORDS, "display": False},
    )
    assert path[cut(RULES, path, 250).first_kept_index].id == "e4"
    assert path[cut(PI, path, 250).first_kept_index].id == "e2"  # 0.73.1 counts message entries only


def test_a_message_without_content_is_sent_with_an_empty_one() -> None:
    """`sessionEntryToContextMessages` tests `content == null`, which a missing content passes too:
    pi 1.6.0 sends `[]` where pi 0.73.1 sends the message as written."""
    from replaylab.oracles.compare import message_as_pi_holds_it

    data = {"type": "message", "message": {"role": "assistant", "stopReason": "stop"}}
    path = session(text("user"), data, text("user"))
    held = [message_as_pi_holds_it(w.message) for w in RULES.window(path)]
    assert held[1]["content"] == []
    assert "content" not in message_as_pi_holds_it(PI.window(path)[1].message)
