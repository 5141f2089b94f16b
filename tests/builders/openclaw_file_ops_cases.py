"""Inputs of OpenClaw 2026.9.6's compaction file lists (the conformance corpus's `fileOperations`):
the messages a compaction summarizes, shaped as OpenClaw writes them, and the compaction entry
before them. `apply_patch` results as its tool returns them (`details: {summary: {added, modified,
deleted}}`), the read / write / edit calls under every path key and tool spelling
`extractFileOpsFromMessage` reads or passes over, previous details whole and not, and lists long or
odd enough to meet `formatFileOperations`' limits and `computeFileLists`' order."""

from __future__ import annotations

import itertools
from typing import Any

from builders.transcripts import Session

Args = list[Any]


def _call(name: str, args: Any, n: int) -> dict[str, Any]:
    return {"type": "toolCall", "id": f"call_{n}", "name": name, "arguments": args}


def _assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "working"}, *calls],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-5",
        "stopReason": "toolUse",
        "timestamp": 1,
    }


def _result(name: str, details: Any = None, *, blocks: list[dict[str, Any]] | None = None, n: int = 1) -> dict:
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": f"call_{n}",
        "toolName": name,
        "content": blocks
        if blocks is not None
        else [{"type": "text", "text": "Success. Updated the following files:"}],
        "isError": False,
        "timestamp": 1,
    }
    if details is not None:
        message["details"] = details
    return message


def _patch(added=(), modified=(), deleted=(), *, name: str = "apply_patch", n: int = 1) -> dict[str, Any]:
    summary = {"added": list(added), "modified": list(modified), "deleted": list(deleted)}
    return _result(name, {"summary": summary}, n=n)


#: tool names as models and MCP servers spell them, each with what `normalizeFileToolName` makes of it
NAMES = ["read", "Read", "WRITE", "edit", "mcp__fs__read", "fs__write", "a__b__edit", "mcp__edit", "mcp__"]
NAMES += ["multiedit", "MultiEdit", "notebookedit", "apply_patch", "bash", "ls", "read_file", "x__read__y"]


def calls() -> list[Args]:
    """Each tool spelling with each path key, and the keys' precedence and emptiness."""
    out: list[Args] = []
    keys = ["path", "file_path", "filePath", "notebook_path", "PATH", "target"]
    for n, (name, key) in enumerate(itertools.product(NAMES, keys)):
        out.append([[_assistant(_call(name, {key: f"src/{key}-{n}.py"}, n))], None])
    for args in (
        {"path": "", "file_path": "src/second.py"},
        {"path": 7, "file_path": "src/typed.py"},
        {"path": None, "filePath": "src/camel.py"},
        {"file_path": "src/b.py", "path": "src/a.py"},
        {"filePath": "src/c.py", "file_path": "src/b.py"},
        {"path": ["src/list.py"]},
        {"path": {"nested": "src/x.py"}},
        {},
    ):
        for name in ("read", "write", "edit"):
            out.append([[_assistant(_call(name, args, 1))], None])
    out.append(
        [
            [_assistant(_call("apply_patch", {"input": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"}, 1))],
            None,
        ]
    )
    return out


def patches() -> list[Args]:
    """`apply_patch` results: the summary's lists, on the message and on its blocks, under other
    names and shapes."""
    out: list[Args] = []
    for name in ("apply_patch", "APPLY_PATCH", "functions__apply_patch", "mcp__fs__apply_patch", "mcp__apply_patch"):
        out.append([[_patch(["new.txt"], ["changed.py"], ["gone.md"], name=name)], None])
    for name in ("write", "edit", "patch", "applypatch", "bash"):
        out.append([[_patch(["new.txt"], ["changed.py"], name=name)], None])
    summaries: list[Any] = [
        {"added": ["a.txt", "b.txt"], "modified": [], "deleted": []},
        {"added": [], "modified": ["docs/x.md", "docs/x.md"], "deleted": ["old.txt"]},
        {"deleted": ["only-deleted.txt"]},
        {"added": "a.txt", "modified": {"0": "b.txt"}},
        {"added": ["ok.txt", 3, None, {"path": "obj.txt"}, ""], "modified": [True, "m.txt"]},
        {"added": ["moved/to.py"], "modified": ["moved/to.py"]},
        ["added", "a.txt"],
        "added a.txt",
        None,
        {},
    ]
    for summary in summaries:
        out.append([[_result("apply_patch", {"summary": summary})], None])
    for details in ({"summary": None}, {"result": {"summary": {"added": ["no.txt"]}}}, ["summary"], "summary", 5):
        out.append([[_result("apply_patch", details)], None])
    text = {"type": "text", "text": "done"}
    block = {
        "type": "text",
        "text": "done",
        "details": {"summary": {"added": ["block-added.txt"], "modified": ["block-mod.py"]}},
    }
    image = {
        "type": "image",
        "data": "iVBORw0KGgo=",
        "mimeType": "image/png",
        "details": {"summary": {"modified": ["img.png"]}},
    }
    out.append([[_result("apply_patch", None, blocks=[text, block])], None])
    out.append([[_result("apply_patch", {"summary": {"added": ["top.txt"]}}, blocks=[block, image])], None])
    out.append([[_result("read", None, blocks=[block])], None])
    out.append([[_result("apply_patch", None, blocks=[])], None])
    return out


def sessions() -> list[Args]:
    """Calls and patches together, with the compaction entry before them: its lists whole, partial,
    of other types, or written by a hook."""
    messages = [
        {"role": "user", "content": "tidy the repo", "timestamp": 1},
        _assistant(_call("read", {"path": "README.md"}, 1), _call("read", {"path": "src/app.py"}, 2)),
        _result("read", n=1),
        _result("read", n=2),
        _assistant(_call("apply_patch", {"input": "*** Begin Patch\n*** End Patch"}, 3)),
        _patch(["src/new.py"], ["src/app.py"], ["src/old.py"], n=3),
        _assistant(
            _call("Edit", {"file_path": "README.md", "edits": []}, 4), _call("write", {"filePath": "notes.txt"}, 5)
        ),
        _result("edit", n=4),
        _result("write", n=5),
    ]
    previous_details: list[Any] = [
        {"readFiles": ["docs/a.md", "src/app.py"], "modifiedFiles": ["CHANGELOG.md"]},
        {"readFiles": ["docs/a.md"], "modifiedFiles": ["CHANGELOG.md"], "latestUnresolvedUserRequest": "go on"},
        {"readFiles": ["docs/a.md"]},
        {"readFiles": ["docs/a.md", 3], "modifiedFiles": ["CHANGELOG.md"]},
        {"readFiles": "docs/a.md", "modifiedFiles": []},
        {"readFiles": [], "modifiedFiles": []},
        ["docs/a.md"],
        None,
    ]
    out: list[Args] = [[messages, None], [[], None]]
    for details in previous_details:
        out.append([messages, {"type": "compaction", "fromHook": False, "details": details}])
    out.append([messages, {"type": "compaction", "fromHook": True, "details": previous_details[0]}])
    out.append([messages, {"type": "compaction", "details": previous_details[0]}])
    out.append([[], {"type": "compaction", "details": previous_details[0]}])
    return out


def limits() -> list[Args]:
    """Lists at and past the 900-unit limit of each section, in UTF-16 units (astral characters count
    two), names that end in blanks, and an order that differs from code points'."""
    out: list[Args] = []
    for count, width in ((10, 20), (40, 20), (44, 16), (45, 16), (60, 40), (200, 8), (1, 895), (1, 880), (2, 440)):
        names = [f"{'d' * max(1, width - 6)}{i:05d}" for i in range(count)]
        reads = [_assistant(*(_call("read", {"path": name}, i) for i, name in enumerate(names)))]
        writes = [_assistant(*(_call("write", {"path": "w/" + name}, i) for i, name in enumerate(names)))]
        out.append([reads, None])
        out.append([reads + writes, None])
    astral = [f"\U0001f600{i:03d}-{'e' * 30}.txt" for i in range(30)]
    out.append([[_assistant(*(_call("read", {"path": n}, i) for i, n in enumerate(astral)))], None])
    odd = [
        "\uff21.txt",
        "\U0001f600.txt",
        "Z.txt",
        "a.txt",
        "\u00e9.txt",
        "\ufb01le.txt",
        "\U00010000.txt",
        "10.txt",
        "9.txt",
    ]
    out.append([[_assistant(*(_call("edit", {"path": n}, i) for i, n in enumerate(odd)))], None])
    for last in ("notes.txt ", "notes.txt\t", "notes.txt\u3000", "   ", "a\nb"):
        out.append([[_assistant(_call("read", {"path": "first.txt"}, 1), _call("read", {"path": last}, 2))], None])
        out.append([[_patch([last])], None])
    return out


def file_ops_inputs() -> list[tuple[Args, str]]:
    """Every `fileOperations` input, with where it came from."""
    return [
        *((args, "generated:file-ops-calls") for args in calls()),
        *((args, "generated:file-ops-apply-patch") for args in patches()),
        *((args, "generated:file-ops-session") for args in sessions()),
        *((args, "generated:file-ops-limits") for args in limits()),
    ]


def patch_session(previous: dict[str, Any] | None = None) -> Session:
    """A session whose summarized span holds an `apply_patch` call and its result, calls OpenClaw reads
    and pi does not (`filePath`, an MCP server's `read`) and the reverse (`MultiEdit`); `previous`:
    fields of a compaction entry before the patch (its `details`, `fromHook`)."""
    s = Session()
    s.user("tidy the repo " + "n" * 3_000)
    kept, _ = s.tool_turn("read", {"path": "README.md"}, "# readme")
    if previous is not None:
        earlier = {"type": "compaction", "summary": "## Goal\nearlier work", "firstKeptEntryId": kept}
        s.raw(earlier | {"tokensBefore": 900} | previous)
    s.user("now apply the patch " + "p" * 3_000)
    _, [call_id] = s.assistant(None, [("apply_patch", {"input": "*** Begin Patch\n*** End Patch"})])
    summary = {"added": ["src/new.py"], "modified": ["README.md"], "deleted": ["old.txt"]}
    result = {"role": "toolResult", "toolCallId": call_id, "toolName": "apply_patch", "isError": False}
    s.raw({"message": result | {"content": [{"type": "text", "text": "Success."}], "details": {"summary": summary}}})
    s.tool_turn("Edit", {"file_path": "src/app.py", "edits": []}, "ok")
    s.tool_turn("MultiEdit", {"file_path": "src/multi.py", "edits": []}, "ok")
    s.tool_turn("read", {"filePath": "docs/camel.md"}, "camel")
    s.tool_turn("mcp__fs__read", {"path": "docs/mcp.md"}, "mcp")
    s.assistant("Done.")
    s.user("and now? " + "q" * 3_000)
    s.assistant("done")
    return s
