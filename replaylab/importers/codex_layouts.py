"""The older Codex CLI session layouts, read into the rollout lines `codex` reads.

`codex` handles the items of a session (`_Rollout`); this module only says which layout a file
is in and restates each record of an older layout as the `{timestamp, type, payload}` line the
current layout would hold, with the line it starts on, so the items are read by the same code:

* early codex-rs rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`; openai/codex 89a151f5,
  `codex-rs/core/src/rollout.rs`): the first line is `SessionMeta {id, timestamp, instructions?}`
  itself (later `SessionMetaWithGit`, the same fields and a flattened `git`), then each line a bare
  `ResponseItem` (`codex-rs/core/src/models.rs` 5248e90b, `#[serde(tag = "type")]`: `message`,
  `reasoning`, `local_shell_call`, `function_call`, `function_call_output` whose output is its
  text) or a `StateLine {record_type: "state", ...SessionStateSnapshot}`. The meta becomes a
  `session_meta` line, each item a `response_item`, a state line a `state` aside (custom entry
  `codex:state`). No line has a time: each entry takes the meta's.
* the TypeScript Codex CLI (`~/.codex/sessions/rollout-<date>-<id>.json`; openai/codex 01d69e28,
  `codex-cli/src/utils/storage/save-rollout.ts`): ONE JSON document
  `{session: {timestamp, id, instructions}, items: [ResponseItem...]}` (the OpenAI SDK's response
  items; an exec's output is `JSON.stringify({output, metadata: {exit_code, ...}})`, a
  `local_shell_call`'s answer a `local_shell_call_output`, `codex-cli/src/utils/agent/agent-loop.ts`
  50302e5a). `session` becomes the `session_meta` line, each item a `response_item` named by the
  line it starts on and its place, `items[N]`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from replaylab.diagnostics import InputError
from replaylab.importers.common import bad_input, jsonl_rows, read_bytes, read_json

CURRENT = "rollout-lines"
EARLY = "codex-rs-early"
CLI_JSON = "codex-cli-json"
#: a rollout line restated: (its line, the line, the field prefix errors name its payload's fields by)
Row = tuple[int, dict[str, Any], str]
_SPACE = re.compile(r"[ \t\n\r]+")
_DECODER = json.JSONDecoder()


def layout_of(path: Path) -> str:
    """The layout of the Codex file `path`, from its first non-blank line (a pretty-printed
    document's first line, `{`, is not JSON on its own: then the whole file says)."""
    first = b""
    try:
        with open(path, "rb") as handle:
            first = next((line.strip() for line in handle if line.strip()), b"")
    except OSError:
        return CURRENT  # reading it again names the problem
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict):
        if isinstance(record.get("session"), dict) and "type" not in record:
            return CLI_JSON  # the document written on one line
        if "type" not in record and "id" in record and "record_type" not in record:
            return EARLY
        return CURRENT
    if first.startswith(b"{") and record is None and path.suffix == ".json":
        return CLI_JSON  # its errors name the line the document breaks on
    if first.startswith(b"{") and record is None:
        try:
            document = json.loads(read_bytes(path))
        except ValueError:
            return CURRENT
        if isinstance(document, dict) and isinstance(document.get("session"), dict):
            return CLI_JSON
    return CURRENT


def current_rows(path: Path) -> tuple[list[Row], int | None]:
    """The lines of a rollout as codex-rs writes them now, each checked to be one; and the last
    line when it does not parse (`cut_off_line`)."""
    rows, unparsed = jsonl_rows(path)
    cut_off = cut_off_line(rows, unparsed)
    if not rows:
        raise bad_input(path, "holds no rollout line; expected Codex's {timestamp, type, payload} lines", line=1)
    for lineno, record in rows:
        if not isinstance(record, dict):
            raise bad_input(
                path,
                f"line is a {type(record).__name__}; expected a rollout line object",
                line=lineno,
                field_name="type",
            )
        if not isinstance(record.get("type"), str):
            raise bad_input(
                path, "line has no string 'type'; expected a Codex rollout line", line=lineno, field_name="type"
            )
        if not isinstance(record.get("payload"), dict):
            raise bad_input(
                path,
                f"{record['type']} line has no 'payload' object; expected {{timestamp, type, payload}}",
                line=lineno,
                field_name="payload",
            )
    return [(lineno, record, "payload.") for lineno, record in rows], cut_off


def cut_off_line(rows: list[tuple[int, Any]], unparsed: list[tuple[int, InputError]]) -> int | None:
    """The file's last line when it alone does not parse (a write cut off by a crash, which Codex
    skips too); a line before it that does not parse is an error naming it."""
    last_line = max([n for n, _ in rows] + [n for n, _ in unparsed], default=0)
    for lineno, error in unparsed:
        if lineno != last_line:
            raise error
    return last_line if unparsed else None


def early_rows(path: Path) -> tuple[list[Row], int | None]:
    """An early codex-rs rollout's lines, restated; and its last line when it does not parse."""
    rows, unparsed = jsonl_rows(path)
    cut_off = cut_off_line(rows, unparsed)
    if not rows:
        raise bad_input(path, "holds no line; expected Codex's session meta line first", line=1)
    first_line, meta = rows[0]
    restated = [_meta_row(path, meta, first_line, "")]
    for lineno, record in rows[1:]:
        if not isinstance(record, dict):
            raise bad_input(
                path,
                f"line is a {type(record).__name__}; expected a response item or a state line object",
                line=lineno,
                field_name="type",
            )
        if record.get("record_type") == "state":
            state = {key: value for key, value in record.items() if key != "record_type"}
            restated.append((lineno, {"timestamp": None, "type": "state", "payload": state}, ""))
        elif isinstance(record.get("type"), str):
            restated.append((lineno, {"timestamp": None, "type": "response_item", "payload": record}, ""))
        else:
            raise bad_input(
                path,
                "line has no string 'type' and is no {record_type: state} line; expected a Codex response item "
                "(message, function_call, function_call_output, reasoning, local_shell_call)",
                line=lineno,
                field_name="type",
            )
    return restated, cut_off


def cli_rows(path: Path) -> list[Row]:
    """A TypeScript Codex CLI session's document, restated as rollout lines."""
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("session"), dict):
        raise bad_input(
            path,
            "has no 'session' object; expected the Codex CLI's {session: {timestamp, id, instructions}, items}",
            line=1,
            field_name="session",
        )
    items = document.get("items", [])
    if not isinstance(items, list):
        raise bad_input(path, "'items' is not a list; expected the session's response items", field_name="items")
    session_line, item_lines = _member_lines(read_bytes(path).decode("utf-8", errors="replace"))
    restated = [_meta_row(path, document["session"], session_line, "session.")]
    for index, item in enumerate(items):
        lineno, where = item_lines[index], f"items[{index}]"
        if not isinstance(item, dict):
            raise bad_input(
                path,
                f"{where} is a {type(item).__name__}; expected a response item object",
                line=lineno,
                field_name=where,
            )
        if not isinstance(item.get("type"), str):
            raise bad_input(
                path,
                f"{where} has no string 'type'; expected a response item (message, function_call, ...)",
                line=lineno,
                field_name=f"{where}.type",
            )
        restated.append((lineno, {"timestamp": None, "type": "response_item", "payload": item}, f"{where}."))
    return restated


def _meta_row(path: Path, meta: Any, lineno: int, prefix: str) -> Row:
    if not isinstance(meta, dict) or not isinstance(meta.get("id"), str) or not meta["id"]:
        raise bad_input(
            path,
            "session meta has no string 'id'; expected Codex's {id, timestamp, instructions?}",
            line=lineno,
            field_name=f"{prefix}id",
        )
    timestamp = meta.get("timestamp")
    if timestamp is not None and not isinstance(timestamp, str):
        raise bad_input(
            path,
            f"session meta's 'timestamp' is a {type(timestamp).__name__}; expected an ISO time string",
            line=lineno,
            field_name=f"{prefix}timestamp",
        )
    return lineno, {"timestamp": timestamp, "type": "session_meta", "payload": meta}, prefix


def _member_lines(text: str) -> tuple[int, list[int]]:
    """The line the document's `session` starts on and the line each of its `items` starts on.
    The text is valid JSON (read first): this only walks its top-level object to count lines."""
    session_line, item_lines = 1, list[int]()
    counted, line = 0, 1

    def line_at(position: int) -> int:
        nonlocal counted, line
        line += text.count("\n", counted, position)
        counted = position
        return line

    at = _skip(text, 0) + 1  # past the object's `{`
    while True:
        at = _skip(text, at)
        if text[at] == "}":
            break
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at) + 1  # past the `:`
        at = _skip(text, at)
        if key == "session":
            session_line = line_at(at)
        if key == "items" and text[at] == "[":
            item_lines = []
            at += 1
            while True:
                at = _skip(text, at)
                if text[at] == "]":
                    at += 1
                    break
                item_lines.append(line_at(at))
                _, at = _DECODER.raw_decode(text, at)
                at = _skip(text, at)
                at += text[at] == ","
        else:
            _, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        at += text[at] == ","
    return session_line, item_lines


def _skip(text: str, at: int) -> int:
    """Past the white space at `at`."""
    space = _SPACE.match(text, at)
    return space.end() if space else at
