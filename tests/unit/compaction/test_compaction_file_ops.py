"""The compaction's file lists and their sections (`compaction.summary.file_ops`) under each agent's
profile: pi's `extractFileOpsFromMessage` by default, OpenClaw 2026.9.6's own rules under its
profile (`upstream.openclaw_2026_9_6_file_ops`: `apply_patch` results, tool names past a server
prefix, `filePath`, previous lists whole or not at all, bounded sections in every mode).
tests/oracles/test_openclaw_conformance.py checks the same rules against OpenClaw's own functions."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from builders.openclaw_file_ops_cases import patch_session
from builders.transcripts import Session
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.summary.file_ops import FileOps, collect_file_ops, format_file_operations, tool_name
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MESSAGE_ADAPTER
from replaylab.upstream.openclaw_2026_9_6_file_ops import FILE_LISTS_ORDER, FILE_OPS
from replaylab.upstream.profiles import profile_named

OPENCLAW = "openclaw@2026.9.6"


def _m(data: dict[str, Any]) -> Any:
    return MESSAGE_ADAPTER.validate_python(data)


def _assistant(*calls: tuple[str, dict[str, Any]]) -> Any:
    blocks = [
        {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls)
    ]
    return _m({"role": "assistant", "content": blocks})


def _patch_result(details: Any, *, name: str = "apply_patch", blocks: list[dict[str, Any]] | None = None) -> Any:
    content = blocks if blocks is not None else [{"type": "text", "text": "Success. Updated the following files:"}]
    return _m({"role": "toolResult", "toolCallId": "c0", "toolName": name, "content": content, "details": details})


def test_only_openclaw_2026_9_6_has_its_own_file_ops_rules() -> None:
    assert profile_named(OPENCLAW).file_ops is FILE_OPS
    assert profile_named("pi@0.73.1").file_ops is None and profile_named("pi@1.6.0").file_ops is None


def test_an_apply_patch_result_names_the_files_it_added_and_modified_never_the_deleted() -> None:
    """`extractFileOpsFromMessage`: `details.summary.added` are written and `.modified` edited, on the
    result and on each of its content blocks; `deleted` counts nowhere; the call's patch text is
    never read; pi's reading sees none of it."""
    block = {"type": "text", "text": "ok", "details": {"summary": {"added": ["blk.txt"], "modified": ["blk.py", 3]}}}
    messages = [
        _assistant(("apply_patch", {"input": "*** Begin Patch\n*** Add File: call.txt\n+x\n*** End Patch"})),
        _patch_result({"summary": {"added": ["new.txt"], "modified": ["app.py"], "deleted": ["gone.md"]}}),
        _patch_result({"summary": {"added": "str.txt", "modified": ["x.py"]}}, name="mcp__fs__APPLY_PATCH"),
        _patch_result(None, blocks=[block]),
        _patch_result({"summary": {"added": ["other.txt"]}}, name="write"),
        _patch_result({"summary": {"added": ["other.txt"]}}, name="mcp__apply_patch"),
    ]
    ops = collect_file_ops(messages, rules=FILE_OPS)
    assert ops == FileOps(set(), {"new.txt", "blk.txt"}, {"app.py", "x.py", "blk.py"})
    assert collect_file_ops(messages).lists() == ([], [])


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("read", "read"),
        ("Read", "read"),
        ("mcp__fs__read", "read"),
        ("fs__write", "write"),
        ("a__b__edit", "b__edit"),
        ("mcp__edit", "mcp__edit"),
        ("mcp__", "mcp__"),
        ("x__", ""),
        ("MultiEdit", "multiedit"),
    ],
)
def test_tool_names_are_read_past_a_server_prefix_as_normalize_file_tool_name_reads_them(name: str, tool: str) -> None:
    assert tool_name(name, FILE_OPS) == tool


def test_openclaw_reads_file_path_and_filepath_of_read_write_edit_only() -> None:
    """`filePath` names a path and an MCP server's `read` reads; Claude Code's `MultiEdit` /
    `NotebookEdit` and `notebook_path` (replaylab's additions for pi's lists) count nowhere."""
    messages = [
        _assistant(
            ("read", {"filePath": "camel.md"}),
            ("mcp__fs__read", {"path": "mcp.md"}),
            ("Edit", {"file_path": "claude.py"}),
            ("MultiEdit", {"file_path": "multi.py"}),
            ("NotebookEdit", {"notebook_path": "nb.ipynb"}),
            ("write", {"path": "", "file_path": "skipped.txt"}),
            ("write", {"path": 7, "filePath": "typed.txt"}),
        )
    ]
    assert collect_file_ops(messages, rules=FILE_OPS).lists(FILE_LISTS_ORDER) == (
        ["camel.md", "mcp.md"],
        ["claude.py", "typed.txt"],
    )
    assert collect_file_ops(messages).lists() == ([], ["claude.py", "multi.py", "nb.ipynb"])


@pytest.mark.parametrize(
    ("details", "read", "modified"),
    [
        ({"readFiles": ["a.md"], "modifiedFiles": ["b.md"]}, ["a.md"], ["b.md"]),
        ({"readFiles": ["a.md"]}, [], []),
        ({"readFiles": ["a.md", 3], "modifiedFiles": ["b.md"]}, [], []),
        ({"readFiles": "a.md", "modifiedFiles": ["b.md"]}, [], []),
        (["a.md"], [], []),
    ],
)
def test_previous_lists_count_whole_or_not_at_all(details: Any, read: list[str], modified: list[str]) -> None:
    """`parseCompactionDetails`: both lists arrays of strings, else neither counts (pi reads each
    array it finds, keeping its strings)."""
    ops = FileOps()
    ops.merge_previous(details, FILE_OPS)
    assert ops.lists(FILE_LISTS_ORDER) == (read, modified)


def test_pi_reads_each_previous_list_it_finds() -> None:
    ops = FileOps()
    ops.merge_previous({"readFiles": ["a.md", 3], "modifiedFiles": "b.md"})
    assert ops.lists() == (["a.md"], [])


def test_openclaw_orders_the_lists_by_utf16_units_as_to_sorted_does() -> None:
    """JavaScript's `toSorted()` compares UTF-16 units: a supplementary character (a surrogate pair,
    from U+D800) sorts before U+E000–U+FFFF, where code points put it after."""
    ops = FileOps(read={"\uff21.txt", "\U0001f600.txt", "a.txt"})
    assert ops.lists(FILE_LISTS_ORDER) == (["a.txt", "\U0001f600.txt", "\uff21.txt"], [])
    assert ops.lists() == (["a.txt", "\uff21.txt", "\U0001f600.txt"], [])


def _odd_names_session() -> Session:
    """A summarized span that reads a file named with a supplementary character and one with a
    character of U+E000–U+FFFF, and writes two such."""
    s = Session()
    s.user("tidy the repo " + "n" * 3_000)
    for n, name in enumerate(("\uff21.txt", "\U0001f600.txt", "a.txt")):
        s.tool_turn("read", {"path": name}, f"text {n}")
    for name in ("w/\ufb01le.txt", "w/\U00010000.txt"):
        s.tool_turn("write", {"path": name, "content": "x"}, "ok")
    s.assistant("Done.")
    s.user("and now? " + "q" * 3_000)
    s.assistant("done")
    return s


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", OPENCLAW])
@pytest.mark.parametrize("mode", ["auto", "safeguard"])
def test_every_profile_orders_the_lists_as_javascripts_default_sort(tmp_path, agent: str, mode: str) -> None:
    """pi 0.73.1's and 1.6.0's `computeFileLists` (`.sort()`) and OpenClaw's (`.toSorted()`) order
    by UTF-16 units, in the entry's lists and in the summary's sections alike."""
    assert profile_named(agent).file_lists_order == "utf16-units"
    entry = _compacted(tmp_path, _odd_names_session(), agent, mode)
    read, modified = ["a.txt", "\U0001f600.txt", "\uff21.txt"], ["w/\U00010000.txt", "w/\ufb01le.txt"]
    assert (entry["details"]["readFiles"], entry["details"]["modifiedFiles"]) == (read, modified)
    # the sections end the summary: the last mention of each name is in them
    assert entry["summary"].rindex("\U0001f600.txt") < entry["summary"].rindex("\uff21.txt")


def test_openclaw_sections_trim_each_lists_end_and_count_utf16_units() -> None:
    """2026.9.6's `formatFileOperations`: no blank line before a closing tag (`trimEnd`), which
    2026.4.12's bounded lists and pi's whole ones do not trim; sizes in UTF-16 units."""
    assert format_file_operations(["a.md", "b.md "], ["c.py"], rules=FILE_OPS) == (
        "\n\n<read-files>\na.md\nb.md\n</read-files>\n\n<modified-files>\nc.py\n</modified-files>"
    )
    assert (
        format_file_operations(["a.md"], [], rules=FILE_OPS, bounded=False) == "\n\n<read-files>\na.md\n</read-files>"
    )
    assert format_file_operations(["a.md"], []) == "\n\n<read-files>\na.md\n\n</read-files>"
    # 30 names of 29 units each (the pair counts two): 28 fit in 900 units beside the tags and the
    # overflow line; counted by code points, all 30 would
    astral = [f"\U0001f600{i:03d}-{'e' * 19}.txt" for i in range(30)]
    section = format_file_operations(astral, [], rules=FILE_OPS)
    assert section.endswith("...and 2 more\n</read-files>") and section.count("\U0001f600") == 28
    assert format_file_operations(astral, []).count("\U0001f600") == 30


def _compacted(tmp_path, session: Session, agent: str, mode: str, **extra: Any) -> dict[str, Any]:
    folder = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    path, copy = session.write(folder / "s.jsonl"), folder / "compacted.jsonl"
    params = CompactParams(
        session_file=str(path),
        compaction_mode=mode,
        context_tokens=3_200,
        reserve_tokens_floor=800,
        keep_recent_tokens=500,
        tool_classes={},
        working_copy=str(copy),
        **extra,
    )
    result = compact(params, memo=ItemMemo(rules=rules_of(agent)))
    assert result.success, result.error
    entries = [orjson.loads(line) for line in copy.read_bytes().splitlines()]
    return next(e for e in reversed(entries) if e.get("type") == "compaction")


OPENCLAW_SECTIONS = (
    "\n\n<read-files>\ndocs/camel.md\ndocs/mcp.md\n</read-files>"
    "\n\n<modified-files>\nREADME.md\nsrc/app.py\nsrc/new.py\n</modified-files>"
)


@pytest.mark.parametrize("mode", ["auto", "safeguard"])
def test_a_compaction_under_openclaw_lists_files_and_writes_sections_as_openclaw(tmp_path, mode: str) -> None:
    """Both of OpenClaw's modes list the files of `apply_patch` results and of the calls it reads and
    end the summary with the bounded sections; pi's profile keeps pi's lists (and, in auto mode, its
    whole sections)."""
    entry = _compacted(tmp_path, patch_session(), OPENCLAW, mode)
    lists = (["docs/camel.md", "docs/mcp.md"], ["README.md", "src/app.py", "src/new.py"])
    assert (entry["details"]["readFiles"], entry["details"]["modifiedFiles"]) == lists
    assert entry["summary"].endswith(OPENCLAW_SECTIONS)
    pi = _compacted(tmp_path, patch_session(), "pi@0.73.1", mode)
    assert (pi["details"]["readFiles"], pi["details"]["modifiedFiles"]) == (
        ["README.md"],
        ["src/app.py", "src/multi.py"],
    )


@pytest.mark.parametrize("mode", ["auto", "safeguard"])
def test_openclaw_adds_a_previous_compactions_lists_in_either_mode_when_whole(tmp_path, mode: str) -> None:
    """`prepareCompaction` merges the lists of the compaction before (not `fromHook`) into the
    `fileOps` both modes list: the safeguard's too. pi's profile leaves them out of the safeguard's."""
    whole = {"fromHook": False, "details": {"readFiles": ["docs/old.md"], "modifiedFiles": ["CHANGELOG.md"]}}
    entry = _compacted(tmp_path, patch_session(whole), OPENCLAW, mode)
    assert entry["details"]["readFiles"] == ["docs/camel.md", "docs/mcp.md", "docs/old.md"]
    assert entry["details"]["modifiedFiles"] == ["CHANGELOG.md", "README.md", "src/app.py", "src/new.py"]
    partial = {"details": {"readFiles": ["docs/old.md"], "modifiedFiles": [None]}}
    entry = _compacted(tmp_path, patch_session(partial), OPENCLAW, mode)
    assert entry["details"]["readFiles"] == ["docs/camel.md", "docs/mcp.md"]
    hook = {"fromHook": True, "details": whole["details"]}
    assert "docs/old.md" not in _compacted(tmp_path, patch_session(hook), OPENCLAW, mode)["details"]["readFiles"]
    pi = _compacted(tmp_path, patch_session(whole), "pi@0.73.1", mode)
    assert ("docs/old.md" in pi["details"]["readFiles"]) is (mode == "auto")


def _no_real_conversation(*, runtime_context: bool = False) -> Session:
    """Heartbeats and silent replies around file reads: nothing OpenClaw counts as conversation.
    With `runtime_context` a runtime-context message first, which OpenClaw 2026.9.6's compaction run
    counts (it then compacts) and its safeguard strips (it then writes its fallback)."""
    s = Session()
    s.user("HEARTBEAT_OK")
    if runtime_context:
        s.raw(
            {"type": "custom_message", "customType": "openclaw.runtime-context", "content": "Facts.", "display": True}
        )
    for n in range(6):
        s.tool_turn("read", {"path": f"src/f{n}.py"}, "x" * 1_500, text="NO_REPLY")
    s.assistant("NO_REPLY")
    s.user("HEARTBEAT_OK")
    s.assistant("NO_REPLY")
    return s


def test_openclaws_safeguard_fallback_writes_no_file_lists(tmp_path) -> None:
    """`compactionSafeguardExtension` returns its fixed fallback with no `details` when there is
    no real conversation (measured: OpenClaw's entry has no `details` key): replaylab's entry keeps
    its own account only. OpenClaw's default mode (agent-core's threshold compaction, outside
    OpenClaw's compaction run) and pi's profile keep the lists."""
    entry = _compacted(tmp_path, _no_real_conversation(runtime_context=True), OPENCLAW, "safeguard")
    assert entry["details"]["replaylab"]["summarizer"] == "fallback:no-real-conversation"
    assert set(entry["details"]) == {"replaylab"}
    files = [f"src/f{n}.py" for n in range(5)]
    default = _compacted(tmp_path, _no_real_conversation(), OPENCLAW, "auto", trigger="threshold")
    assert default["details"]["readFiles"] == files
    pi = _compacted(tmp_path, _no_real_conversation(), "pi@0.73.1", "safeguard")
    assert pi["details"]["readFiles"] == files and pi["details"]["modifiedFiles"] == []
