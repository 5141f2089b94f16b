"""Claude Code's sub-agent transcripts (sidechains): found inline in a session file (1.0.x records
with `isSidechain: true`) or beside it (2.0.x `agent-<id>.jsonl`, 2.1.x `<session>/subagents/`),
and matched to the Task call that started each; they become the session's child sessions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab.diagnostics import InputError
from replaylab.importers.claude_code_blocks import block_id
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    child_file_stem,
    read_bytes,
    safe_name,
)
from replaylab.safety.spawn_links import add_links

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
#: the tool whose call runs a skill in a sub-agent of its own when the skill's context is `fork`
#: (2.1.39 `SkillTool`: its result is `{status: "forked", agentId, ...}`, the agent's transcript
#: `subagents/agent-<agentId>.jsonl`); an inline skill's result names no agent
SKILL_TOOL = "Skill"
#: the `progress` records a running sub-agent writes into its parent's log, each with the spawning
#: call's id (`parentToolUseID`) and the agent's (`data.agentId`): 2.1.39's Task tool writes
#: `agent_progress` for the agent's prompt and each of its tool calls and results, a forked Skill
#: `skill_progress`; Claude Code itself finds a session's sub-agents by them (2.1.39 `GIA`)
PROGRESS_KINDS = frozenset({"agent_progress", "skill_progress"})
#: the folder of a 2.1.x session's sub-agent files: `<sessionId>/subagents/`
SUBAGENTS_DIR = "subagents"
#: how deep below it Claude Code keeps a sub-agent file (a Workflow run's agents are in
#: `subagents/workflows/<runId>/`: 2.1.332 reads the folder recursively)
SUBAGENT_SUBDIR_DEPTH = 3

#: the files Claude Code forks into `subagents/` for queries of its own — no Task call spawns them
#: and none is a sub-agent's session —, by the prefix of their name, with what each holds
SIDE_QUERY_FILE_PREFIXES = {
    "agent-acompact-": "the compaction call itself",
    "agent-aprompt_suggestion-": "Claude Code's prompt suggestion (the next prompt it offers the user)",
    "agent-aside_question-": "a /btw side question, answered outside the conversation",
    # 2.1.39 `J_z`: its one tool is an Edit of `<project>/<session>/session-memory/summary.md`
    # under Claude Code's own folder (`X_z` denies any other), never a file of the workspace
    "agent-asession_memory-": "Claude Code's session-memory notes (an Edit of its own summary.md, no workspace file)",
}


def side_query_kind(path: Path) -> str | None:
    """What a file of one of Claude Code's own side queries holds (`SIDE_QUERY_FILE_PREFIXES`),
    or None for any other file."""
    return next((what for prefix, what in SIDE_QUERY_FILE_PREFIXES.items() if path.name.startswith(prefix)), None)


def subagents_folder(path: Path) -> Path | None:
    """The `<sessionId>/subagents` folder a 2.1.x sub-agent file is in, directly or in a folder of
    its own below it (`subagents/workflows/<runId>/agent-<id>.jsonl`); None for any other file."""
    for parent in list(path.parents)[: SUBAGENT_SUBDIR_DEPTH + 1]:
        if parent.name == SUBAGENTS_DIR:
            return parent
    return None


def beside_its_session(path: Path) -> bool:
    """Whether `path` is in the `subagents` folder of a session whose own file is there
    (`<project>/<sessionId>.jsonl` beside `<project>/<sessionId>/subagents/`)."""
    folder = subagents_folder(path)
    return folder is not None and (folder.parent.parent / f"{folder.parent.name}.jsonl").is_file()


def subagent_files(folder: Path) -> list[Path]:
    """The sub-agent files of a `subagents` folder, those of its sub-folders included, in order."""
    return sorted(
        p for p in folder.rglob("agent-*.jsonl") if len(p.relative_to(folder).parts) <= SUBAGENT_SUBDIR_DEPTH + 1
    )


def sidechain_beside_its_session(path: Path) -> bool:
    """Whether `path` is a 2.0.x sub-agent file whose session is beside it: the importer reads it
    with that session, as a child."""
    records = sidechain_file(path)
    if records is None:
        return False
    session_id = records_session_id(records)
    for other in path.parent.glob("*.jsonl"):
        if other != path and first_session_id(other) == session_id and sidechain_file(other) is None:
            return True
    return False


def _head(path: Path) -> Iterator[Any]:
    """Each non-blank line's value from the top of the file, read as `read_records` reads a line;
    None for a line that does not parse. Stops at the end, or where the file cannot be read."""
    import orjson

    try:
        with path.open("rb") as handle:
            for line in handle:
                line = _cleaned(line)
                if not line.strip():
                    continue
                try:
                    yield parse_line(line)
                except orjson.JSONDecodeError:
                    yield None
    except OSError:
        return


def _cleaned(line: bytes) -> bytes:
    """A line as Claude Code reads it (2.1.332 `nhr`, `xmr`): leading NUL bytes and a byte-order
    mark dropped."""
    return line.lstrip(b"\x00").removeprefix(b"\xef\xbb\xbf")


def parse_line(line: bytes) -> Any:
    """One line's JSON value. Claude Code reads its log as UTF-8 text, so a byte sequence that is
    no UTF-8 (a tool's binary output) is U+FFFD and the line still parses: so here."""
    import orjson

    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return orjson.loads(line.decode("utf-8", "replace"))
        raise


def first_session_id(path: Path, lines: int = 50) -> str | None:
    """The `sessionId` of the first records of a file (a main session names it at once)."""
    for _, record in zip(range(lines), _head(path)):
        if record is None:
            return None
        if isinstance(record, dict) and record.get("sessionId"):
            return str(record["sessionId"])
    return None


def holds_no_conversation(path: Path) -> bool:
    """Whether a file is Claude Code records none of which is a user or assistant record: Claude
    Code also keeps files of nothing but `summary` records (the titles of sessions kept in other
    files). Reads up to the first conversation record; an empty file or a line that is not a
    Claude Code record is False, for the import to name."""
    seen = False
    for record in _head(path):
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return False
        if record["type"] in ("user", "assistant"):
            return False
        seen = True
    return seen


Records = list[tuple[int, dict[str, Any]]]


def read_records(path: Path, unreadable: list[int] | None = None) -> Records:
    """The file's records. As Claude Code reads its logs (2.1.332 `nhr`, `xmr`), a line's leading
    NUL bytes and byte-order mark are dropped and a line that does not parse is skipped (a write
    cut off by a crash), its number added to `unreadable`; a line that parses but is not a Claude
    Code record means the file is not a Claude Code log."""
    import orjson

    records: Records = []
    skipped: list[int] = []
    for lineno, line in enumerate(read_bytes(path).split(b"\n"), 1):
        line = _cleaned(line)
        if not line.strip():
            continue
        try:
            records.append((lineno, parse_line(line)))
        except orjson.JSONDecodeError:
            skipped.append(lineno)
    if not records and skipped:
        raise bad_input(
            path,
            f"no line parses as JSON ({len(skipped)} lines); expected a Claude Code session log",
            line=skipped[0],
        )
    if not records:
        raise bad_input(path, "is empty; expected a Claude Code session log (one JSON record per line)")
    if unreadable is not None:
        unreadable.extend(skipped)
    for lineno, record in records:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise bad_input(
                path,
                "is not a Claude Code record; expected a JSON object with a string 'type'",
                line=lineno,
                field_name="type",
            )
        if record["type"] in ("user", "assistant"):
            _check_message(path, lineno, record)
    return records


def _check_message(path: Path, lineno: int, record: dict[str, Any]) -> None:
    """A conversation record's `message` is an object whose `content` is text or a list of
    blocks: anything else is not what Claude Code writes, and guessing at it would import a
    conversation nobody had."""
    message = record.get("message")
    if message is None:
        return
    if not isinstance(message, dict):
        raise bad_input(
            path,
            f"the {record['type']} record's message is {type(message).__name__}; expected a JSON object",
            line=lineno,
            field_name="message",
        )
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise bad_input(
            path,
            f"the {record['type']} record's message content is {type(content).__name__}; "
            "expected a string or a list of content blocks",
            line=lineno,
            field_name="message.content",
        )


def is_sidechain(records: Records) -> bool:
    """A sub-agent's own transcript: its conversation records are all sidechain records."""
    talk = [r for _, r in records if r.get("type") in ("user", "assistant")]
    return bool(talk) and all(r.get("isSidechain") is True for r in talk)


def records_session_id(records: Records) -> str | None:
    return next((str(r["sessionId"]) for _, r in records if r.get("sessionId")), None)


def session_id_of(path: Path) -> str | None:
    """The file's `sessionId`, from its first lines when they name it (a main session does at
    once), else from all its records."""
    found = first_session_id(path)
    if found is not None:
        return found
    try:
        return records_session_id(read_records(path))
    except InputError:
        return None


def sidechain_file(path: Path) -> Records | None:
    """The records of a 2.0.x sub-agent file beside its session, else None. A file whose first
    user or assistant record is not a sidechain's is no such file, and is not read whole."""
    if not _may_be_sidechain(path):
        return None
    try:
        records = read_records(path)
    except InputError:
        return None
    return records if is_sidechain(records) else None


def _may_be_sidechain(path: Path) -> bool:
    """Whether the first user or assistant record of the file is a sidechain's (True when the
    scan cannot tell: the whole read decides)."""
    for record in _head(path):
        if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
            return record.get("isSidechain") is True
    return True


def sidechains_beside(path: Path, session_id: str | None) -> list[tuple[Path, Records]]:
    """2.0.x sub-agent files in the session's folder that belong to it (same `sessionId`)."""
    if session_id is None:
        return []
    found = []
    for other in sorted(path.parent.glob("*.jsonl")):
        if other == path or side_query_kind(other) is not None:
            continue
        records = sidechain_file(other)
        if records is not None and records_session_id(records) == session_id:
            found.append((other, records))
    return found


def split_sidechains(records: Records) -> tuple[Records, list[tuple[Path | None, Records]]]:
    """(the main conversation, the inline sidechains): 1.0.x writes a sub-agent's records into the
    session file (`isSidechain: true`), each chain starting at a record with `parentUuid: null`."""
    main: Records = []
    chains: list[Records] = []
    chain_of: dict[str, int] = {}
    for lineno, record in records:
        if record.get("isSidechain") is not True:
            main.append((lineno, record))
            continue
        parent = record.get("parentUuid")
        index = chain_of.get(parent) if isinstance(parent, str) else None
        if index is None:
            index = len(chains)
            chains.append([])
        chains[index].append((lineno, record))
        if isinstance(record.get("uuid"), str):
            chain_of[record["uuid"]] = index
    return main, [(None, chain) for chain in chains]


@dataclass
class Sidechain:
    name: str
    path: Path | None  # its own file (2.0.x), or None: inline in the session's file (1.0.x)
    records: Records
    call_id: str | None = None


def match_sidechains(main: Records, sidechains: list[tuple[Path | None, Records]], path: Path) -> list[Sidechain]:
    """Each sidechain with the Task call that spawned it (module rules), in file order."""
    calls: list[tuple[int, str, str]] = []  # (line, call id, prompt)
    agent_of: dict[str, str] = {}  # call id → agentId its result names
    for lineno, record in main:
        content = (record.get("message") or {}).get("content") if isinstance(record.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") in SUBAGENT_TOOLS:
                prompt = (block.get("input") or {}).get("prompt") if isinstance(block.get("input"), dict) else None
                call_id = block_id(block.get("id"))
                if call_id is not None:  # a call without an id is answered by no result
                    calls.append((lineno, call_id, prompt if isinstance(prompt, str) else ""))
            elif block.get("type") == "tool_result" and (answered := block_id(block.get("tool_use_id"))):
                result = record.get("toolUseResult")
                # the result's own agentId, else the one on its record (some 2.0.x records carry it there)
                agent = result.get("agentId") if isinstance(result, dict) else None
                agent = agent if isinstance(agent, str) else record.get("agentId")
                if isinstance(agent, str):
                    agent_of[answered] = agent
    agents: list[str | None] = []
    prompts: list[str] = []
    for _file, records in sidechains:
        root = records[0][1]
        agents.append(root.get("agentId") if isinstance(root.get("agentId"), str) else None)
        prompts.append(plain_text((root.get("message") or {}).get("content")).strip())
    # the surest evidence first, for every sidechain: a result naming its agent, then the prompt
    # its first record repeats, then (inline) the Task call it follows — so that file order never
    # takes a call a later sidechain's agent id names
    joined: dict[int, str] = {}

    def by_agent(n: int, call: tuple[int, str, str]) -> bool:
        return agents[n] is not None and agent_of.get(call[1]) == agents[n]

    def by_prompt(n: int, call: tuple[int, str, str]) -> bool:
        return bool(prompts[n]) and call[2].strip() == prompts[n]

    for rule in (by_agent, by_prompt):
        for n in range(len(sidechains)):
            if n not in joined:
                taken = set(joined.values())
                call = next((c for c in calls if c[1] not in taken and rule(n, c)), None)
                if call is not None:
                    joined[n] = call[1]
    for n, (file, records) in enumerate(sidechains):
        if n not in joined and file is None:  # inline: the Task call it follows
            taken = set(joined.values())
            call = next((c for c in reversed(calls) if c[1] not in taken and c[0] < records[0][0]), None)
            if call is not None:
                joined[n] = call[1]
    return [
        Sidechain(
            safe_name(f"agent-{agent}" if agent else (file.stem if file is not None else f"sidechain-{n + 1}")),
            file,
            records,
            joined.get(n),
        )
        for n, ((file, records), agent) in enumerate(zip(sidechains, agents))
    ]


def progress_agents(records: Records) -> dict[str, tuple[str, int]]:
    """Spawning call id → (the agent id, the line of the first `progress` record naming both):
    the link Claude Code writes while the sub-agent runs, there even when the call's result names
    no agent (an interrupted or failed Task) or never came (a log cut while the agent ran)."""
    found: dict[str, tuple[str, int]] = {}
    for lineno, record in records:
        data = record.get("data")
        if record.get("type") != "progress" or not isinstance(data, dict) or not isinstance(data.get("type"), str):
            continue
        if data["type"] not in PROGRESS_KINDS:
            continue
        call, agent = record.get("parentToolUseID"), data.get("agentId")
        if isinstance(call, str) and call and isinstance(agent, str) and agent:
            found.setdefault(call, (agent, lineno))
    return found


def spawns_agents(tool_name: str | None) -> bool:
    """Whether a call of this Claude Code tool may start a sub-agent of its own."""
    return tool_name in SUBAGENT_TOOLS or tool_name == SKILL_TOOL


def spawned_agent(
    tool_name: str | None, call_id: str, result: Any, progress: dict[str, tuple[str, int]], path: Path
) -> tuple[str | None, str | None]:
    """(the agent a Task / Agent call, or a forked Skill call, started, a note when its result
    does not name it): the result's `agentId`, else the one its `progress` records name — an
    interrupted or failed Task's result is an error text (2.1.39: `toolUseResult: "Error:
    [Request interrupted by user for tool use]"`) that names none."""
    if not spawns_agents(tool_name):
        return None, None
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        return str(result["agentId"]), None
    if call_id not in progress:
        return None, None
    agent, line = progress[call_id]
    return agent, (
        f"{path}:{line}: {tool_name} call {call_id}'s result names no agent (interrupted or failed); "
        f"joined to agent {agent} by the progress records it wrote"
    )


def plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


@dataclass
class SubAgentLinks:
    """What a session's header says of its sub-agents that no entry of it says (`safety.spawn_links`):
    the imported ids of spawning calls no result answers, and the children no call names, each
    with where it came from."""

    unanswered: list[str] = field(default_factory=list)
    unlinked: list[tuple[ImportedSession, str]] = field(default_factory=list)

    def add(self, child: ImportedSession | None, source: Path | str) -> None:
        """A child no call names (None: none was made)."""
        if child is not None:
            self.unlinked.append((child, str(source)))

    def written(self, session: ImportedSession) -> ImportedSession:
        """`session` with the links in its header. Each child's `at` is the first message of the
        session after the child's last record — 2.1.39 writes a forked slash command's text and
        output once its agent has ended (`NVY`): where its work shows —, else its last message."""
        messages = [e for e in session.entries if e.get("type") == "message"]
        links = []
        for child, source in self.unlinked:
            ended = max((str(e["timestamp"]) for e in child.entries if e.get("timestamp")), default="")
            at = next(
                (e for e in messages if str(e.get("timestamp") or "") >= ended), messages[-1] if messages else None
            )
            link = {"childSession": f"{child_file_stem(session.name, child.name)}.jsonl", "source": source}
            links.append({**link, "at": at["id"]} if at is not None else link)
        add_links(session.header, spawns=self.unanswered, unlinked=links)
        return session


def unanswered_spawns(
    builder: SessionBuilder,
    progress: dict[str, tuple[str, int]],
    child: Callable[[str], ImportedSession | None],
    path: Path,
    links: SubAgentLinks,
) -> None:
    """A spawning call no result answers (the log ends while its agent runs) whose progress
    records name its agent: the agent's file is its child (`child`), the header names the call
    (a forked Skill's too: its class loads a prompt), and a note says what is unknown."""
    for call_id, (agent, line) in progress.items():
        if not spawns_agents(tool := builder.pending_call_name(call_id)):
            continue
        links.unanswered.append(builder.pending_call_id(call_id) or call_id)
        kept = f"kept as child {c.name}" if (c := child(agent)) is not None else "its file is not here"
        builder.notes.append(
            f"{path}:{line}: {tool} call {call_id} has no result (the log ends while its sub-agent runs); its "
            f"progress names agent {agent} ({kept}): the ledger counts the call as a mutating event of its own"
        )
