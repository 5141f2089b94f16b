"""`replaylab record`: run a session live against a tool pack's service; write transcript + cassette.

The same agent loop as replay (`run_turns`), with three differences: the tools are the pack's
implementations against the live loopback service (`LiveToolExecutor`, each call in the tool
process, where vcrpy captures its HTTP in record mode `all`), every interaction is tagged with the
tool call that made it (`interaction_tags`: replay's evidence, since replay never runs the tool
again), and each message is written as a v3 entry.

Nothing is written until the session finished, and then only scrubbed (`replaylab.scrub`):
secret headers are dropped from requests and responses, URIs, bodies, every string of the
transcript and the file names themselves are scrubbed. Both files are created exclusively (an
existing recording is never overwritten) and private to the user (0600).

Write-time cap: like OpenClaw's persist-time guard (`session-tool-result-guard.ts`,
openclaw-internals §4.1), every tool result is capped to OpenClaw's limit
(`DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS` text chars: head, or head + tail when the tail matters)
*before it is written*; the run itself keeps the full result in memory, as OpenClaw's agent
does, and the cassette keeps the live HTTP answer whole. So an oversized tool result is on disk
exactly as OpenClaw would have persisted it, and replay still serves the live answer. The cap is
the truncation module's (`cap_tool_result_for_write`), not a copy.

Sub-agents: a script call with `child: other.yaml` (see `replaylab.replay.agent.script`) spawns a
child session at that point of the run, against the same live service (so the parent sees the
child's writes afterwards, as it would live). The child is recorded with its own cassette — vcrpy's
patches nest, the child's win while it runs — into `<parent>.sub-<child>.jsonl` next to the
parent, with `parentSession` in its header (pi's field). The spawning call's result is the
child's final answer, with `details.replaylab.childSession` naming the child file so the ledger
folds the child's mutating events into the parent's; its cassette entry is a recorded-tool
interaction (`POST /tools/<name>`), so replay answers it without running the child again.
A script with `parent_session:` alone is recorded as a child session on its own.
"""

from __future__ import annotations

import os
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from replaylab.cassette import canonical_json, cassette_path_for, recorded_tool_interaction, write_cassette
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.errors import ReplaylabError
from replaylab.replay.agent.models import make_model
from replaylab.replay.agent.recorded_prompt import SYSTEM_PROMPT_TYPES
from replaylab.replay.agent.script import Script, load_script
from replaylab.replay.agent.scripted_model import ScriptedModel
from replaylab.replay.cassettes.interaction_tags import TAG_KEY, tagged
from replaylab.replay.guard import socket_guard
from replaylab.replay.loop import run_turns
from replaylab.replay.tools.live import LiveToolExecutor
from replaylab.replay.tools.pack import load_tool_pack, result_message
from replaylab.replay.tools.process import DEFAULT_CALL_TIMEOUT_S, ToolProcess
from replaylab.replay.trace import RunTrace, ToolCallTrace
from replaylab.replay.turns import Turn
from replaylab.safety.classify import ToolClassifier
from replaylab.scrub import Scrubber, default_scrubber
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import CustomMessageEntry, MessageEntry, ToolCallBlock, ToolResultMessage, UserMessage
from replaylab.transcript.writer import TranscriptWriter
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION

SYSTEM_PROMPT_TYPE = "system-prompt"  # the importers' type, so every reader finds it the same way
RECORDING_INFO_TYPE = "replaylab.recording"
assert SYSTEM_PROMPT_TYPE in SYSTEM_PROMPT_TYPES


#: separator between a parent session's name and its sub-agent's (`<parent>.sub-<child>.jsonl`)
CHILD_SEPARATOR = ".sub-"


@dataclass
class Recorded:
    transcript: Path
    cassette: Path
    trace: RunTrace
    interactions: int
    #: sub-agent sessions recorded during this one (depth first, in spawn order)
    children: list[Recorded] = field(default_factory=list)


@dataclass
class _Session:
    """One recorded session in memory (nothing written yet)."""

    name: str
    header: dict[str, Any]
    log: _EntryLog
    interactions: list[dict[str, Any]]
    trace: RunTrace
    children: list[_Session] = field(default_factory=list)


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class _EntryLog:
    """Builds the transcript's entries in order, as one `parentId` chain."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.last: str | None = None
        self.ids: set[str] = set()

    def new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)  # pi: 8 hex digits
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def add(self, body: dict[str, Any], entry_id: str | None = None) -> str:
        entry_id = entry_id or self.new_id()
        self.ids.add(entry_id)
        moment = _now()
        entry = {"type": body["type"], "id": entry_id, "parentId": self.last, "timestamp": _iso(moment)}
        entry.update({k: v for k, v in body.items() if k != "type"})
        if isinstance(entry.get("message"), dict) and entry["message"].get("timestamp") is None:
            entry["message"]["timestamp"] = int(moment.timestamp() * 1000)
        self.entries.append(entry)
        self.last = entry_id
        return entry_id


def _turns_of(script: Script, log: _EntryLog) -> list[Turn]:
    turns = []
    for index, scripted in enumerate(script.turns):
        inputs: list[Any] = []
        if scripted.custom_message is not None:
            custom = scripted.custom_message
            inputs.append(
                CustomMessageEntry(
                    id=log.new_id(),
                    custom_type=custom.get("custom_type", "custom"),
                    content=custom["content"],
                    display=bool(custom.get("display", True)),
                )
            )
        if scripted.user is not None:
            inputs.append(MessageEntry(id=log.new_id(), message=UserMessage(content=scripted.user)))
        turns.append(Turn(index=index, inputs=inputs))
    return turns


def scrub_interaction(interaction: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """A vcrpy interaction with secret headers dropped (request and response), its URI scrubbed
    (query tokens, passwords in it), a JSON request body scrubbed as data (the same rules as the
    transcript's tool arguments, so the two still match on replay) and other bodies as text."""
    request, response = dict(interaction["request"]), dict(interaction["response"])
    request["headers"] = _public_headers(request.get("headers"), scrubber)
    response["headers"] = _public_headers(response.get("headers"), scrubber)
    if isinstance(request.get("uri"), str):
        request["uri"] = scrubber.text(request["uri"])
    body = _text(request.get("body"), "request", request)
    request["body"] = _scrub_body(body, scrubber) if isinstance(body, str) else body
    rbody = dict(response.get("body") or {})
    text = _text(rbody.get("string"), "response", request)
    if isinstance(text, str):
        rbody["string"] = scrubber.text(text)
    response["body"] = rbody
    return {"request": request, "response": response}


class UnreadableBody(ReplaylabError, ValueError):
    """A recorded body that is not UTF-8 text (after decompression): no scrubber can read it, so
    it is never written (decoding it with replacement characters would write garbage silently)."""


def _text(body: Any, which: str, request: dict[str, Any]) -> Any:
    """A body as text: bytes must be UTF-8 (`UnreadableBody` naming the request otherwise)."""
    if not isinstance(body, bytes):
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        what = f"{request.get('method', '?')} {request.get('uri', '?')}"
        raise UnreadableBody(
            f"the {which} body of {what} is not UTF-8 text ({len(body):,} bytes, byte {exc.start} is "
            f"{body[exc.start]:#04x}): replaylab cannot scrub it, so it writes no recording of it"
        ) from None


def _scrubbed_with_tag(interaction: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """`scrub_interaction`, keeping the interaction's tool-call tag (scrubbed like the transcript's
    ids are, so the two still name the same call)."""
    cleaned = scrub_interaction(interaction, scrubber)
    if TAG_KEY in interaction:
        cleaned[TAG_KEY] = scrubber.data(interaction[TAG_KEY])
    return cleaned


def _public_headers(headers: Any, scrubber: Scrubber) -> dict[str, Any]:
    """The headers that are not secret, their values scrubbed (a token can sit in any header)."""
    if not isinstance(headers, dict):
        return {}
    return {
        scrubber.text(k): scrubber.data(v)
        for k, v in headers.items()
        if not (isinstance(k, str) and scrubber.is_secret_key(k))
    }


def _scrub_body(body: str, scrubber: Scrubber) -> str:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return scrubber.text(body)
    scrubbed = scrubber.data(data)
    return body if scrubbed == data and scrubber.text(body) == body else canonical_json(scrubbed)


@dataclass
class _Context:
    """What every session of one recording run shares (the parent and its sub-agents)."""

    pack: Any
    tools: str
    model: str
    out_dir: Path
    #: the tool process every session of the run calls its tools in
    process: ToolProcess


def child_session_name(parent: str, child_script: Script) -> str:
    return f"{parent}{CHILD_SEPARATOR}{child_script.name}"


def script_label(script: Path, out_dir: Path) -> str:
    """How the recording names its script: relative to the output folder when the script lives
    below it (bundled recordings: `scripts/x.yaml`, the same wherever the folder is), else as given."""
    resolved, folder = Path(script).resolve(), Path(out_dir).resolve()
    return resolved.relative_to(folder).as_posix() if resolved.is_relative_to(folder) else str(script)


def planned_names(script: Script, name: str) -> list[str]:
    """Session names a script will write: its own, then its sub-agents' (recursively)."""
    names = [name]
    for turn in script.turns:
        for step in turn.steps:
            for call in step.tool_calls:
                if call.child is not None:
                    child = load_script(call.child)
                    names.extend(planned_names(child, child_session_name(name, child)))
    return names


class _ChildCalls:
    """Wraps the scripted model: remembers which produced tool call ids spawn a sub-agent.

    The model's `turn_index` / `cursor` say which script step `complete` is about to play; the
    n-th call of the message is the n-th call of that step."""

    def __init__(self, model: ScriptedModel):
        self.model = model
        self.children: dict[str, Path] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def complete(self, window: list[Any], tools: list[dict]) -> Any:
        turn_index, step_index = self.model.turn_index, self.model.cursor
        message = self.model.complete(window, tools)
        step = self.model.script.turns[turn_index].steps[step_index]
        for block, call in zip(message.tool_calls(), step.tool_calls):
            if call.child is not None:
                self.children[block.id] = call.child
        return message


class _RecordingExecutor(LiveToolExecutor):
    """Live tools, except calls that spawn a sub-agent: those record the child session."""

    def __init__(self, *args: Any, spawn: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.spawn = spawn

    def execute(self, call: ToolCallBlock, *, turn: int, step: int):
        spawned = self.spawn(call)
        if spawned is None:
            return super().execute(call, turn=turn, step=step)
        result, trace = spawned
        trace.turn, trace.step = turn, step
        return result, trace


def record_session(
    *,
    tools: str,
    out_dir: Path | str,
    script: Path | str | None = None,
    model: str = "scripted",
    name: str | None = None,
    llm_cassette: Path | str | None = None,
    record_mode: str = "once",
    model_options: dict[str, Any] | None = None,
    scrubber: Scrubber | None = None,
    tool_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    pass_env: Sequence[str] = (),
) -> Recorded:
    """Record one session (see module docstring). Raises `InputError` for bad input, and for a
    tool that failed (`ToolFailure`: it exited, hung, left threads or tried to leave the machine).
    `pass_env`: the environment variables the pack's tools may read (their tool process gets a
    minimal environment, none of the run's variables but these)."""
    scrubber = scrubber or default_scrubber()
    pack = load_tool_pack(tools, source="--tools")
    start = getattr(pack.module, "start_service", None)
    if not callable(start):
        raise InputError(
            [
                Diagnostic(
                    code="toolpack-no-service",
                    file="--tools",
                    field="tools",
                    message=f"tool pack {tools!r} has no start_service(); recording needs its live service",
                )
            ]
        )
    if script is None:
        raise InputError(
            [
                Diagnostic(
                    code="missing-script",
                    file="--script",
                    field="script",
                    message="a script (YAML) is needed: it holds the user turns (and, for the "
                    "scripted model, the assistant's steps)",
                )
            ]
        )
    loaded = load_script(script)
    session_name = name or loaded.name
    out_dir = Path(out_dir)
    for planned in planned_names(loaded, session_name):
        transcript_path = out_dir / f"{scrubber.text(planned)}.jsonl"
        for existing in (transcript_path, cassette_path_for(transcript_path)):
            if existing.exists():
                raise InputError(
                    [
                        Diagnostic(
                            code="output-exists",
                            file=str(existing),
                            message="already exists; replaylab never overwrites a recording "
                            "(choose another --out or --name)",
                        )
                    ]
                )
    if model == "scripted":
        agent: Any = ScriptedModel(loaded, strict=True)
    else:
        options = dict(model_options or {})
        options.setdefault("system_prompt", loaded.system)
        agent = make_model(model, llm_cassette=llm_cassette, record_mode=record_mode, **options)

    passed = {name: os.environ[name] for name in pass_env if name in os.environ}
    process = ToolProcess(tools, mode="record", call_timeout_s=tool_timeout_s, pass_env=passed)
    context = _Context(pack=pack, tools=tools, model=model, out_dir=out_dir, process=process)
    service = start()
    try:
        with socket_guard():  # the model reaches nothing; the tool process guards the tools itself
            session = _record(context, loaded, session_name, agent, service.url, loaded.parent_session)
    finally:
        process.close()
        service.stop()
    try:
        scrubbed = _scrubbed_cassettes(session, scrubber)  # every body readable, before any file
    except UnreadableBody as exc:
        raise not_recorded(script, exc) from None
    return _write(session, out_dir, scrubber, scrubbed)


def not_recorded(script: Path | str, why: Any) -> InputError:
    """The session could not be recorded (a tool failed, a body is unreadable): nothing was written."""
    return InputError(
        [
            Diagnostic(
                code="recording-failed",
                file=str(script),
                message=f"the session could not be recorded: {why}; nothing was written",
            )
        ]
    )


def _record(
    context: _Context, loaded: Script, session_name: str, agent: Any, base_url: str, parent_session: str | None
) -> _Session:
    """Run one session live (its sub-agents recorded on the way); nothing is written here."""
    from replaylab.compaction.truncation import cap_tool_result_for_write

    log = _EntryLog()
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": str(uuid.uuid4()),
        "timestamp": _iso(_now()),
        "cwd": os.getcwd(),
    }
    if parent_session:
        header["parentSession"] = parent_session
    log.add({"type": "session_info", "name": session_name})
    if loaded.system:
        log.add({"type": "custom", "customType": SYSTEM_PROMPT_TYPE, "data": {"content": loaded.system}})
    log.add(
        {
            "type": "custom",
            "customType": RECORDING_INFO_TYPE,
            "data": {
                "toolPack": context.tools,
                "model": context.model,
                "script": script_label(loaded.path, context.out_dir),
                "session": session_name,
            },
        }
    )
    turns = _turns_of(loaded, log)
    classifier = ToolClassifier.from_tool_pack(context.pack)
    schemas = [spec.openai_schema() for spec in context.pack.tools.values()]
    input_ids = {entry.id for turn in turns for entry in turn.inputs}

    def on_message(item: WindowMessage) -> None:
        message_model = item.message
        if isinstance(message_model, ToolResultMessage):
            message_model = cap_tool_result_for_write(message_model)  # OpenClaw's persist-time guard
        message = message_model.model_dump(mode="json", by_alias=True, exclude_none=True)
        ours = item.entry_id if item.entry_id in input_ids else None  # inputs keep the ids made for them
        if message.get("role") == "custom":
            log.add(
                {
                    "type": "custom_message",
                    "customType": message.get("customType"),
                    "content": message.get("content", ""),
                    "display": message.get("display", True),
                },
                ours,
            )
        else:
            log.add({"type": "message", "message": message}, ours)

    children: list[_Session] = []
    watcher = _ChildCalls(agent) if isinstance(agent, ScriptedModel) else None

    def spawn(call: ToolCallBlock):
        child_script = watcher.children.get(call.id) if watcher is not None else None
        if child_script is None:
            return None
        child_loaded = load_script(child_script)
        child_name = child_session_name(session_name, child_loaded)
        child = _record(
            context,
            child_loaded,
            child_name,
            ScriptedModel(child_loaded, strict=True),
            base_url,
            child_loaded.parent_session or f"{session_name}.jsonl",
        )
        children.append(child)
        answer = next((t.answer for t in reversed(child.trace.turns) if t.answer), "")
        text = canonical_json({"status": "completed", "session": child_name, "answer": answer})
        result = result_message(call, text, False).model_copy(
            update={"details": {"replaylab": {"childSession": f"{child_name}.jsonl"}}}
        )
        spawn_interaction = recorded_tool_interaction(call.name, dict(call.arguments or {}), text)
        executor.interactions.append(tagged(spawn_interaction, call.id, call.name))
        trace = ToolCallTrace(
            turn=0,
            step=0,
            tool_call_id=call.id,
            tool=call.name,
            arguments=dict(call.arguments or {}),
            mutating=classifier.is_mutating(call.name, call.arguments),
            source="live",
            result=text,
            is_error=False,
        )
        return result, trace

    executor = _RecordingExecutor(
        context.pack, classifier, base_url=base_url, session_id=header["id"], spawn=spawn, process=context.process
    )
    trace = run_turns(
        [], turns, watcher or agent, executor, label="baseline", tools=schemas, on_message=on_message, extra_steps=8
    )
    if trace.error:
        raise not_recorded(loaded.path, trace.error)
    return _Session(
        name=session_name, header=header, log=log, interactions=executor.interactions, trace=trace, children=children
    )


def _scrubbed_cassettes(session: _Session, scrubber: Scrubber) -> dict[int, list[dict[str, Any]]]:
    """Each session's (sub-agents' too) cassette interactions, scrubbed, by `id` of the session."""
    out = {id(session): [_scrubbed_with_tag(i, scrubber) for i in session.interactions]}
    for child in session.children:
        out.update(_scrubbed_cassettes(child, scrubber))
    return out


def _write(session: _Session, out_dir: Path, scrubber: Scrubber, scrubbed: dict[int, list[dict[str, Any]]]) -> Recorded:
    """Write the sub-agents first (depth first), then the session itself; each file exclusively."""
    children = [_write(child, out_dir, scrubber, scrubbed) for child in session.children]
    transcript_path = out_dir / f"{scrubber.text(session.name)}.jsonl"  # a name can hold a secret too
    cassette_path = cassette_path_for(transcript_path)
    lines = [scrubber.data(session.header), *(scrubber.data(entry) for entry in session.log.entries)]
    TranscriptWriter.create_new(transcript_path, lines)
    write_cassette(cassette_path, scrubbed[id(session)])
    return Recorded(
        transcript=transcript_path,
        cassette=cassette_path,
        trace=session.trace,
        interactions=len(session.interactions),
        children=children,
    )
