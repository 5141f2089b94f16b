"""Claude Code session logs (`~/.claude/projects/<proj>/<sessionId>.jsonl`) → v3 sessions.

What needs care (measured on the real files in ../shared/data/claude-code-spotter):
* Lines are read as Claude Code reads them back: leading NUL bytes and a byte-order mark
  dropped, a line that does not parse (a write cut off by a crash) skipped and named in a note.
* One API response is split over several `assistant` records sharing `message.id`, and Claude
  Code writes the tool results of parallel calls *between* those records. The records are merged
  into ONE assistant message at the position of the first record (blocks in order), so every
  result follows its call.
* `parentUuid` alone is not a usable conversation chain: it makes the records of parallel calls
  siblings (so a leaf-path walk loses tool results), and one real compaction boundary's
  `logicalParentUuid` names a record that is not in the file. The entries are therefore chained
  linearly in file order (pi's own v1 → v2 rule); Claude Code's parent is kept as
  `sourceParentId`. The exception is a rewind (`claude_code_chain`): the branch it left is
  rebuilt the way Claude Code rebuilds a session, and kept off the leaf path, as pi keeps its own.
* `compact_boundary` + the `isCompactSummary` user record after it become ONE `compaction` entry
  that keeps nothing verbatim (`firstKeptEntryId` = its own id), as Claude Code does, unless the
  boundary preserves records (2.1.x `preservedMessages` / `preservedSegment`, which Claude Code
  relinks after the summary): then it keeps the path from the first of them.
* `progress`, `file-history-snapshot`, `queue-operation` and the other `system` records become
  `custom` entries `claude-code:<type>[:<subtype>]` (kept, never sent to a model).
* Sub-agents are child sessions (`<name>.sub-<child>.jsonl`), whichever way the CLI kept them:
  2.1.x in `<sessionId>/subagents/agent-<agentId>.jsonl` (a Workflow run's agents in a folder below
  it, `subagents/workflows/<runId>/`, which 2.1.332 reads recursively), 2.0.x beside the session as
  `agent-<agentId>.jsonl` (every record `isSidechain: true`, the parent's `sessionId`), 1.0.x
  inline in the main file (`isSidechain: true` records whose chain starts at `parentUuid: null`).
  Each is joined to the Task (or forked Skill) call that spawned it through `toolUseResult.agentId`,
  else its `progress` records (`claude_code_sidechains.progress_agents`), else the Task prompt its
  first record repeats, else (1.0.x) the Task call it follows in the file; a sidechain no call
  spawned (the CLI's own "Warmup", a forked slash command) is a child no call names, with a note.
  Sidechain records never join the main conversation. `agent-acompact-*` files are the compaction
  call itself and are skipped when a folder or a main session is imported.
* `isVirtual` records (a script's calls and their results, which 2.1.332's `yu` never sends the
  model) are custom entries: no step or call of the model's; the call that ran the script is.
* An assistant message Claude Code wrote itself (model `<synthetic>`: an API error, "No response
  requested.") keeps no usage: its zeros are no context size, and Claude Code never reads them as
  one. An API error (`isApiErrorMessage`) is pi's failed call: `stopReason: "error"`, its text the
  `errorMessage` (which OpenClaw's overflow rules read, as they read a provider's own).
* Results pair with their calls by `tool_use_id` only (2.0.x records carry no
  `sourceToolAssistantUUID`); a call or a result without an id pairs with nothing, and a record
  with neither `message.id` nor `uuid` is a response of its own.
* A project's folder, or the folder of projects, is walked by `claude_code_folders`.
* The structured `toolUseResult` (Edit's `originalFile`, Bash's stdout, ...) is not copied: the
  model saw the `tool_result` content, which is kept; only a Task's `agentId` is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replaylab.diagnostics import InputError
from replaylab.importers.claude_code_blocks import (
    STOP_REASONS,
    assistant_block,
    block_id,
    content_blocks,
    is_virtual,
    message_id,
    response_groups,
    usage_of,
    user_block,
)
from replaylab.importers.claude_code_chain import abandoned_positions, preserved_uuids, root_compact_summary
from replaylab.importers.claude_code_sidechains import (
    SUBAGENT_TOOLS,
    Records,
    Sidechain,
    SubAgentLinks,
    is_sidechain,
    match_sidechains,
    plain_text,
    progress_agents,
    read_records,
    records_session_id,
    side_query_kind,
    sidechains_beside,
    spawned_agent,
    split_sidechains,
    subagent_files,
    subagents_folder,
    unanswered_spawns,
)
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    child_file_stem,
    find_tool_classes,
    safe_name,
)
from replaylab.upstream.claude_code_transcript import SYNTHETIC_MODEL

#: record fields that describe where a record sits, not what it says (left out of custom data)
ENVELOPE_FIELDS = frozenset(
    {
        "type",
        "subtype",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sessionId",
        "cwd",
        "gitBranch",
        "version",
        "isSidechain",
        "userType",
        "slug",
        "timestamp",
        "agentId",
    }
)
CUSTOM_PREFIX = "claude-code:"


def import_claude_code_file(
    path: Path,
    *,
    tool_classes_path: Path | None = None,
    with_children: bool = True,
    sidechain_files: list[tuple[Path, Records]] | None = None,
) -> ImportedSession:
    """One session file; `sidechain_files`: the 2.0.x sub-agent files beside it (found beside
    `path` when None)."""
    unreadable: list[int] = []
    records = read_records(path, unreadable)
    if not any(r["type"] in ("user", "assistant") for _, r in records):
        raise bad_input(
            path,
            "holds no conversation: no user or assistant record (Claude Code also keeps files of session titles alone)",
        )
    if is_sidechain(records):
        session = _import_records(path, records, tool_classes_path=tool_classes_path, with_children=False)
        if subagents_folder(path) is None:
            session.notes.append(
                f"{path}: a sub-agent's transcript (every user and assistant record isSidechain) imported as a "
                "session of its own; import its parent session to keep it as that session's child"
            )
    else:
        if with_children and sidechain_files is None:
            sidechain_files = sidechains_beside(path, records_session_id(records))
        session = _import_records(
            path,
            records,
            tool_classes_path=tool_classes_path,
            with_children=with_children,
            sidechain_files=sidechain_files,
        )
    if unreadable:
        lines = ", ".join(map(str, unreadable[:5])) + (" …" if len(unreadable) > 5 else "")
        session.notes.append(
            f"{path}: skipped {len(unreadable)} line(s) that do not parse as JSON (line {lines}), "
            "as Claude Code skips them when it reads the session back"
        )
    return session


def _import_records(
    path: Path,
    records: Records,
    *,
    tool_classes_path: Path | None,
    with_children: bool,
    sidechain_files: list[tuple[Path, Records]] | None = None,
    child_name: str | None = None,
) -> ImportedSession:
    classes, _ = find_tool_classes(path, tool_classes_path)
    session_id = str(_first_value(records, "sessionId") or path.stem)
    folder = subagents_folder(path)
    is_subagent = folder is not None or child_name is not None
    if child_name is not None:
        name = child_name
    else:
        name = safe_name(f"{folder.parent.name}.{path.stem}" if folder is not None else path.stem)
    source = {
        "kind": "claude-code",
        "file": str(path),
        "sessionId": session_id,
        "claudeCodeVersion": _first_value(records, "version"),
        "gitBranch": _first_value(records, "gitBranch"),
    }
    agent = child_name or path.stem
    if is_subagent:
        source["agentId"] = str(_first_value(records, "agentId") or agent.removeprefix("agent-"))
    builder = SessionBuilder(
        name,
        session_id=f"{session_id}.{agent}" if is_subagent else session_id,
        source=source,
        cwd=str(_first_value(records, "cwd") or ""),
        tool_classes=classes,
        timestamp=next((r.get("timestamp") for _, r in records if r.get("timestamp")), None),
    )
    main, inline = (records, []) if is_subagent or not with_children else split_sidechains(records)
    subagent_dir = path.parent / path.stem / "subagents"
    converter = _Converter(
        builder, path, main, subagent_dir if with_children and not is_subagent else None, tool_classes_path
    )
    if with_children and not is_subagent:
        converter.sidechains = match_sidechains(main, [*inline, *(sidechain_files or [])], path)
    converter.run()
    return converter.links.written(builder.finish())


def _first_value(records: Records, key: str) -> Any:
    """`key` of the first record that has it: the first lines may be records without it (a
    `queue-operation` starts a `claude -p` log, with no `cwd` or `version`)."""
    return next((record[key] for _, record in records if record.get(key) is not None), None)


class _Converter:
    """Walks the records of one file once, in order, feeding the builder."""

    def __init__(
        self,
        builder: SessionBuilder,
        path: Path,
        records: list[tuple[int, dict[str, Any]]],
        subagent_dir: Path | None,
        tool_classes_path: Path | None,
    ):
        self.b = builder
        self.path = path
        self.records = records
        self.subagent_dir = subagent_dir
        self.tool_classes_path = tool_classes_path
        #: each assistant record's response, and the records of each response
        self.group_of = response_groups(records)
        self.groups: dict[str, list[dict[str, Any]]] = {}
        for position, key in self.group_of.items():
            self.groups.setdefault(key, []).append(records[position][1])
        self.emitted: set[str] = set()
        self.consumed: set[int] = set()
        self.children: set[str] = set()
        #: the sub-agents kept as sidechains (2.0.x files beside the session, 1.0.x inline records)
        self.sidechains: list[Sidechain] = []
        #: the records a rewind left (a main session's: a sub-agent has no one to rewind it), and
        #: the entry each record's uuid became, to hang them from
        self.abandoned = abandoned_positions(records) if subagent_dir is not None else set()
        self.entry_of: dict[str, str] = {}
        self.first_entry_of: dict[str, str] = {}
        #: spawning call id → (agent id, line) by the `progress` records the agent wrote here
        self.progress = progress_agents(records) if subagent_dir is not None else {}
        self.links = SubAgentLinks()  # what the header says of sub-agents no entry names
        self.virtual = False  # whether an isVirtual record was imported

    def run(self) -> None:
        path_tail: str | None = None
        was_branch = False
        for position, (lineno, record) in enumerate(self.records):
            if position in self.consumed:
                continue
            on_branch = position in self.abandoned
            if self.abandoned:
                self.b.continue_from(self._parent_entry(record, path_tail, was_branch) if on_branch else path_tail)
            made = len(self.b.entries)
            kind = record["type"]
            if is_virtual(record):
                self.virtual = True
                self.custom(record, lineno)
            elif kind == "assistant":
                self.assistant(self.group_of[position])
            elif kind == "system" and record.get("subtype") == "compact_boundary" or root_compact_summary(record):
                self.compaction(position, record)
            elif kind == "user":
                self.user(record, lineno)
            else:
                self.custom(record, lineno)
            if len(self.b.entries) > made:
                self._remember(position, record, self.b.entries[made]["id"], self.b.entries[-1]["id"])
                was_branch = on_branch
            if not on_branch:
                path_tail = self.b.last_id
        if self.abandoned:
            first = min(self.abandoned)
            self.b.notes.append(
                f"{self.b.name}: a rewind left {len(self.abandoned)} records (the first at line "
                f"{self.records[first][0]}) on an abandoned branch; kept off the leaf path, as pi keeps its own"
            )
        for sidechain in self.sidechains:
            if sidechain.name not in self.children:
                where = sidechain.path if sidechain.path is not None else f"{self.path.name}, inline"
                self.links.add(self.sidechain_child(sidechain), where)
                self.b.notes.append(
                    f"{self.b.name}: sidechain {sidechain.name} ({where}) was spawned by no Task call of this "
                    "session (Claude Code's own warm-up, or its call is missing); kept as a child no call names"
                )
        unanswered_spawns(self.b, self.progress, self.child, self.path, self.links)
        if self.virtual:
            self.b.notes.append(f"{self.b.name}: isVirtual records kept as custom entries: never sent the model")
        if self.subagent_dir is not None and self.subagent_dir.is_dir():
            for extra in subagent_files(self.subagent_dir):
                agent = extra.stem.removeprefix("agent-")
                side_query = side_query_kind(extra)
                if side_query is not None:
                    self.b.notes.append(f"skipped {extra}: {side_query}, not a sub-agent session")
                elif agent not in self.children:
                    self._unnamed_child(extra, agent)

    def _parent_entry(self, record: dict[str, Any], path_tail: str | None, was_branch: bool) -> str | None:
        parent = record.get("parentUuid")
        if isinstance(parent, str) and parent in self.entry_of:
            return self.entry_of[parent]
        return self.b.last_id if was_branch else path_tail

    def _remember(self, position: int, record: dict[str, Any], first: str, last: str) -> None:
        """The entries a record became: its last to hang a branch from, its first to keep from."""
        uuids = [record.get("uuid")]
        if position in self.group_of:
            uuids += [r.get("uuid") for r in self.groups[self.group_of[position]]]
        for uuid in uuids:
            if isinstance(uuid, str):
                self.entry_of.setdefault(uuid, last)
                self.first_entry_of.setdefault(uuid, first)

    def _first_kept(self, meta: dict[str, Any], boundary: dict[str, Any]) -> str | None:
        """The entry a compaction keeps from: the first of the records its boundary preserves
        (`preservedMessages.uuids`, else the `preservedSegment` walked from its tail to its head
        along `parentUuid`, as Claude Code relinks them after the summary), when the first of
        them is on the leaf path before it; None (keeps nothing) otherwise."""
        uuids = preserved_uuids(meta, self.records)
        if not uuids:
            return None
        index = {entry["id"]: n for n, entry in enumerate(self.b.entries)}
        firsts = [index[self.first_entry_of[u]] for u in uuids if u in self.first_entry_of]
        path = self._path_before(index)
        if not firsts or min(firsts) not in path:
            self.b.notes.append(
                f"{self.b.name}: compact_boundary {boundary.get('uuid')} preserves {len(uuids)} records, the first "
                "of which is not on the leaf path before it (or not in the file); the compaction entry keeps nothing"
            )
            return None
        return str(self.b.entries[min(firsts)]["id"])

    def _path_before(self, index: dict[str, int]) -> set[int]:
        """Positions in the builder's entries (`index`: entry id → position) of the path that
        ends at the next entry's parent."""
        found: set[int] = set()
        current = self.b.last_id
        while current is not None and index[current] not in found:
            found.add(index[current])
            current = self.b.entries[index[current]]["parentId"]
        return found

    # -- records

    def assistant(self, key: str) -> None:
        """The response `key` as one assistant message, at its first record."""
        if key in self.emitted:
            return
        self.emitted.add(key)
        group = self.groups[key]
        response_id = message_id(group[0])
        content: list[dict[str, Any]] = []
        for part in group:
            for block in content_blocks(part.get("message")):
                converted = assistant_block(block)
                if converted.get("type") == "toolCall" and converted["id"] is None:
                    converted["id"] = f"no-id:{part.get('uuid') or key}:{len(content)}"
                    self.b.notes.append(
                        f"{self.b.name}: a {converted['name'] or 'tool'} call in record {part.get('uuid')} has no id; "
                        f"imported as {converted['id']}, which no result can answer"
                    )
                content.append(converted)
        api = group[-1].get("message") or {}
        has_calls = any(b.get("type") == "toolCall" for b in content)
        reason = api.get("stop_reason")
        stop = STOP_REASONS.get(reason) if reason else None
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": api.get("model"),
            "stopReason": "toolUse" if has_calls else (stop or "stop"),
        }
        # a message Claude Code wrote itself carries usage of zeros, which Claude Code never reads
        # as the context's size: no usage, so that no agent's rule reads it either
        usage = None if api.get("model") == SYNTHETIC_MODEL else usage_of(api.get("usage"))
        if usage:
            message["usage"] = usage
        if any(part.get("isApiErrorMessage") for part in group):
            message["stopReason"] = "error"  # as pi records a failed call; its rules skip it
            message["errorMessage"] = "\n".join(b["text"] for b in content if b.get("type") == "text")
        extra: dict[str, Any] = {"sourceParentId": group[0].get("parentUuid"), "sourceMessageId": response_id}
        if len(group) > 1:
            extra["sourceIds"] = [r.get("uuid") for r in group]
        self.b.message(message, source_id=group[0].get("uuid"), timestamp=group[0].get("timestamp"), extra=extra)

    def user(self, record: dict[str, Any], lineno: int) -> None:
        content = (record.get("message") or {}).get("content")
        extra: dict[str, Any] = {"sourceParentId": record.get("parentUuid")}
        for flag in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly"):
            if record.get(flag):
                extra[flag] = True
        source_id = record.get("uuid") or f"line:{lineno}"
        if not isinstance(content, list):
            self.b.message(
                {"role": "user", "content": "" if content is None else str(content)},
                source_id=source_id,
                timestamp=record.get("timestamp"),
                extra=extra,
            )
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        pending: list[dict[str, Any]] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if pending:
                    self.b.message(
                        {"role": "user", "content": pending},
                        source_id=source_id,
                        timestamp=record.get("timestamp"),
                        extra=extra,
                    )
                    pending = []
                suffix = f"#{results.index(block)}" if len(results) > 1 else ""
                self.tool_result(record, block, f"{source_id}{suffix}", extra)
            else:
                pending.append(user_block(block))
        if pending:
            self.b.message(
                {"role": "user", "content": pending},
                source_id=source_id,
                timestamp=record.get("timestamp"),
                extra=extra,
            )

    def tool_result(self, record: dict[str, Any], block: dict[str, Any], source_id: str, extra: dict[str, Any]) -> None:
        call_id = block_id(block.get("tool_use_id"))
        if call_id is None:
            call_id = f"no-id:{source_id}"
            self.b.notes.append(
                f"{self.b.name}: a tool result in record {record.get('uuid')} names no call (no tool_use_id); "
                f"imported as the answer to {call_id}, which no call made"
            )
        raw = block.get("content")
        blocks = (
            [{"type": "text", "text": raw}]
            if isinstance(raw, str)
            else [user_block(b) for b in raw or [] if isinstance(b, dict)]
        )
        if not blocks:
            blocks = [{"type": "text", "text": ""}]
        details: dict[str, Any] | None = None
        tool_name = self.b.pending_call_name(call_id)
        result = record.get("toolUseResult")
        sidechain = next((c for c in self.sidechains if c.call_id == call_id), None)
        if tool_name in SUBAGENT_TOOLS and sidechain is not None:
            child = self.sidechain_child(sidechain)
            details = {"replaylab": {"childSession": f"{child_file_stem(self.b.name, child.name)}.jsonl"}}
            if isinstance(result, dict) and isinstance(result.get("agentId"), str):
                details["claudeCode"] = {"agentId": result["agentId"]}
        elif (agent := self._spawned_agent(tool_name, call_id, result)) is not None:
            details = {"claudeCode": {"agentId": agent}}
            agent_child = self.child(agent)
            # a sub-agent whose transcript is not here is still named: what it did is unknown,
            # and the ledger counts its call as a mutating event of its own (`subagent-unresolved`)
            named = agent_child.name if agent_child is not None else f"agent-{safe_name(agent)}"
            details["replaylab"] = {"childSession": f"{child_file_stem(self.b.name, named)}.jsonl"}
        elif tool_name in SUBAGENT_TOOLS and isinstance(result, dict) and isinstance(result.get("agent_id"), str):
            # an agent team's teammate runs in a session of its own, which no file here holds
            teammate = result["agent_id"]
            details = {
                "claudeCode": {"agentId": teammate, "status": result.get("status")},
                "replaylab": {"childSession": f"{child_file_stem(self.b.name, 'agent-' + safe_name(teammate))}.jsonl"},
            }
            self.b.notes.append(
                f"{self.b.name}: {tool_name} started agent {teammate} ({result.get('status') or 'no status'}), "
                "which runs in a session of its own: its tool calls are not in this import"
            )
        entry = self.b.tool_result(
            call_id,
            blocks,
            is_error=bool(block.get("is_error")),
            source_id=source_id,
            timestamp=record.get("timestamp"),
            details=details,
        )
        entry["sourceParentId"] = extra.get("sourceParentId")

    def _spawned_agent(self, tool_name: str | None, call_id: str, result: Any) -> str | None:
        agent, note = spawned_agent(tool_name, call_id, result, self.progress, self.path)
        self.b.notes.extend([note] if note else [])
        return agent

    def child(self, agent_id: str, path: Path | None = None) -> ImportedSession | None:
        """Sub-agent `agent_id`'s child session, made once; `path`: its file, when the caller
        found it already."""
        if self.subagent_dir is None:
            return None
        path = path or self._agent_file(agent_id)
        if not path.is_file():
            self.b.notes.append(
                f"{self.b.name}: Task sub-agent {agent_id} has no transcript at {path}; "
                "its tool calls are not in this import"
            )
            return None
        if agent_id in self.children:
            return None
        self.children.add(agent_id)
        child = import_claude_code_file(path, tool_classes_path=self.tool_classes_path, with_children=False)
        child.name = safe_name(path.stem)
        child.header["parentSession"] = f"{self.b.name}.jsonl"
        self.b.children.append(child)
        return child

    def _agent_file(self, agent_id: str) -> Path:
        """Where sub-agent `agent_id`'s file is: in the session's `subagents` folder, else in a
        folder below it (a Workflow run's); the first place when it is in neither."""
        assert self.subagent_dir is not None
        direct = self.subagent_dir / f"agent-{agent_id}.jsonl"
        if direct.is_file():
            return direct
        return next((p for p in subagent_files(self.subagent_dir) if p.stem == f"agent-{agent_id}"), direct)

    def _unnamed_child(self, path: Path, agent: str) -> None:
        """A sub-agent file no Task result names: a child of its own, as an inline sidechain no
        call spawned is; one that cannot be imported is named, and the session goes on."""
        try:
            self.links.add(self.child(agent, path), path)
        except InputError as exc:
            self.b.notes.append(f"{path}: sub-agent transcript not imported: {exc.diagnostics[0].message}")
            return
        why = (
            "an agent of a Workflow run, in the run's folder"
            if self.subagent_dir is not None and path.parent != self.subagent_dir
            else "Claude Code's own warm-up, or its call is missing"
        )
        self.b.notes.append(
            f"{path}: sub-agent transcript no Task result of {self.path.name} names ({why}); "
            "kept as a child no call names"
        )

    def sidechain_child(self, sidechain: Sidechain) -> ImportedSession:
        """The child session of a sidechain, made once."""
        made = next((c for c in self.b.children if c.name == sidechain.name), None)
        if made is not None:
            return made
        self.children.add(sidechain.name)
        child = _import_records(
            sidechain.path or self.path,
            sidechain.records,
            tool_classes_path=self.tool_classes_path,
            with_children=False,
            child_name=sidechain.name,
        )
        child.header["parentSession"] = f"{self.b.name}.jsonl"
        self.b.children.append(child)
        return child

    def compaction(self, position: int, record: dict[str, Any]) -> None:
        summary_record = record if record["type"] == "user" else None
        for later in range(position + 1, len(self.records) if summary_record is None else 0):
            candidate = self.records[later][1]
            if candidate["type"] in ("user", "assistant"):
                if candidate["type"] == "user" and candidate.get("isCompactSummary"):
                    summary_record = candidate
                    self.consumed.add(later)
                break
        given = record.get("compactMetadata")
        meta = given if isinstance(given, dict) else {}
        if summary_record is None:
            summary = str(record.get("content") or "")
            which = record.get("uuid") or f"at line {self.records[position][0]}"
            self.b.notes.append(
                f"{self.path}: compact_boundary {which} has no isCompactSummary record after it; the "
                f"compaction entry holds the boundary text only ({len(summary)} characters)"
            )
        else:
            summary = plain_text((summary_record.get("message") or {}).get("content"))
        extra = {
            "sourceParentId": record.get("logicalParentUuid") or record.get("parentUuid"),
            "sourceIds": [record.get("uuid")]
            + [(summary_record or {}).get("uuid")] * (summary_record not in (None, record)),
        }
        self.b.compaction(
            summary,
            first_kept=self._first_kept(meta, record),
            tokens_before=meta.get("preTokens"),
            details={"source": "claude-code", "trigger": meta.get("trigger")},
            source_id=record.get("uuid"),
            timestamp=record.get("timestamp"),
            extra=extra,
        )

    def custom(self, record: dict[str, Any], lineno: int) -> None:
        custom_type = CUSTOM_PREFIX + record["type"]
        if record["type"] == "system" and record.get("subtype"):
            custom_type += f":{record['subtype']}"
        data = {k: v for k, v in record.items() if k not in ENVELOPE_FIELDS}
        if record.get("type") == "file-history-snapshot":
            timestamp = (
                (record.get("snapshot") or {}).get("timestamp") if isinstance(record.get("snapshot"), dict) else None
            )
        else:
            timestamp = record.get("timestamp")
        entry = self.b.custom(custom_type, data, source_id=record.get("uuid") or f"line:{lineno}", timestamp=timestamp)
        if record.get("parentUuid") or record.get("uuid"):
            entry["sourceParentId"] = record.get("parentUuid")
