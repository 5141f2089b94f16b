"""`replaylab record`: run a session live against a tool pack's service; write transcript + cassette.

The same agent loop as replay (`run_turns`), with three differences: the tools are the pack's
implementations against the live loopback service (`LiveToolExecutor`), every HTTP interaction
is captured by a vcrpy cassette in record mode `all`, and each message is written as a v3 entry.

Nothing is written until the session finished, and then only scrubbed (`replaylab.scrub`):
secret headers are dropped from requests and responses, and the configured patterns are replaced
in request bodies, response bodies and every string of the transcript. Both files are created
exclusively (an existing recording is never overwritten).

Sub-agents: a script with `parent_session:` is recorded as a child session — its header carries
`parentSession` (pi's field), so the ledger can fold its mutating events into the parent's.
Spawning a child from inside a parent run is not modelled: record the child from its own script
(the parent script can show the hand-back as a `custom_message` input, e.g. OpenClaw's
`openclaw.sessions_yield`).
"""

from __future__ import annotations

import os
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from replaylab.cassette import cassette_path_for, write_cassette
from replaylab.constants import CURRENT_SESSION_VERSION
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.qa.results import RunTrace
from replaylab.replay.executor import LiveToolExecutor
from replaylab.replay.guard import socket_guard
from replaylab.replay.loop import run_turns
from replaylab.replay.models import SYSTEM_PROMPT_TYPES, ScriptedModel, make_model
from replaylab.replay.script import Script, load_script
from replaylab.replay.toolpack import load_tool_pack
from replaylab.replay.turns import Turn
from replaylab.safety.classify import ToolClassifier
from replaylab.scrub import Scrubber, default_scrubber
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import CustomMessageEntry, MessageEntry, UserMessage
from replaylab.transcript.writer import TranscriptWriter

SYSTEM_PROMPT_TYPE = "system-prompt"  # the importers' type, so every reader finds it the same way
RECORDING_INFO_TYPE = "replaylab.recording"
assert SYSTEM_PROMPT_TYPE in SYSTEM_PROMPT_TYPES


@dataclass
class Recorded:
    transcript: Path
    cassette: Path
    trace: RunTrace
    interactions: int


def _now() -> datetime:
    return datetime.now(timezone.utc)


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
            inputs.append(CustomMessageEntry(id=log.new_id(), custom_type=custom.get("custom_type", "custom"),
                                             content=custom["content"], display=bool(custom.get("display", True))))
        if scripted.user is not None:
            inputs.append(MessageEntry(id=log.new_id(), message=UserMessage(content=scripted.user)))
        turns.append(Turn(index=index, inputs=inputs))
    return turns


def scrub_interaction(interaction: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """A vcrpy interaction with secret headers dropped and body patterns replaced."""
    request, response = dict(interaction["request"]), dict(interaction["response"])
    request["headers"] = {k: v for k, v in (request.get("headers") or {}).items() if k.lower() not in scrubber.headers}
    response["headers"] = {k: v for k, v in (response.get("headers") or {}).items()
                           if k.lower() not in scrubber.headers}
    body = request.get("body")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    request["body"] = scrubber.text(body) if isinstance(body, str) else body
    rbody = dict(response.get("body") or {})
    text = rbody.get("string")
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if isinstance(text, str):
        rbody["string"] = scrubber.text(text)
    response["body"] = rbody
    return {"request": request, "response": response}


def record_session(*, tools: str, out_dir: Path | str, script: Path | str | None = None, model: str = "scripted",
                   name: str | None = None, llm_cassette: Path | str | None = None, record_mode: str = "once",
                   model_options: dict[str, Any] | None = None, scrubber: Scrubber | None = None) -> Recorded:
    """Record one session (see module docstring). Raises `InputError` for bad input."""
    scrubber = scrubber or default_scrubber()
    pack = load_tool_pack(tools, source="--tools")
    start = getattr(pack.module, "start_service", None)
    if not callable(start):
        raise InputError([Diagnostic(code="toolpack-no-service", file="--tools", field="tools",
                                     message=f"tool pack {tools!r} has no start_service(); recording needs its live service")])
    if script is None:
        raise InputError([Diagnostic(code="missing-script", file="--script", field="script",
                                     message="a script (YAML) is needed: it holds the user turns (and, for the "
                                             "scripted model, the assistant's steps)")])
    loaded = load_script(script)
    session_name = name or loaded.name
    out_dir = Path(out_dir)
    transcript_path = out_dir / f"{session_name}.jsonl"
    cassette_path = cassette_path_for(transcript_path)
    for existing in (transcript_path, cassette_path):
        if existing.exists():
            raise InputError([Diagnostic(code="output-exists", file=str(existing),
                                         message="already exists; replaylab never overwrites a recording (choose another --out or --name)")])
    if model == "scripted":
        agent = ScriptedModel(loaded, strict=True)
    else:
        options = dict(model_options or {})
        options.setdefault("system_prompt", loaded.system)
        agent = make_model(model, llm_cassette=llm_cassette, record_mode=record_mode, **options)

    log = _EntryLog()
    header: dict[str, Any] = {"type": "session", "version": CURRENT_SESSION_VERSION, "id": str(uuid.uuid4()),
                              "timestamp": _iso(_now()), "cwd": os.getcwd()}
    if loaded.parent_session:
        header["parentSession"] = loaded.parent_session
    log.add({"type": "session_info", "name": session_name})
    if loaded.system:
        log.add({"type": "custom", "customType": SYSTEM_PROMPT_TYPE, "data": {"content": loaded.system}})
    log.add({"type": "custom", "customType": RECORDING_INFO_TYPE,
             "data": {"toolPack": tools, "model": model, "script": str(loaded.path), "session": session_name}})
    turns = _turns_of(loaded, log)
    classifier = ToolClassifier.from_tool_pack(pack)
    schemas = [spec.openai_schema() for spec in pack.tools.values()]

    input_ids = {entry.id for turn in turns for entry in turn.inputs}

    def on_message(item: WindowMessage) -> None:
        message = item.message.model_dump(mode="json", by_alias=True, exclude_none=True)
        ours = item.entry_id if item.entry_id in input_ids else None  # inputs keep the ids made for them
        if message.get("role") == "custom":
            log.add({"type": "custom_message", "customType": message.get("customType"),
                     "content": message.get("content", ""), "display": message.get("display", True)}, ours)
        else:
            log.add({"type": "message", "message": message}, ours)

    from replaylab.replay.vcr_session import open_recording, patched, recorded_interactions

    service = start()
    try:
        recording = open_recording(str(cassette_path))
        executor = LiveToolExecutor(pack, classifier, base_url=service.url, session_id=header["id"])
        with socket_guard(), patched(recording):  # tools reach only the loopback service
            trace = run_turns([], turns, agent, executor, label="baseline", tools=schemas, on_message=on_message,
                              extra_steps=8)
        interactions = recorded_interactions(recording)
    finally:
        service.stop()
    if trace.error:
        raise InputError([Diagnostic(code="recording-failed", file=str(loaded.path),
                                     message=f"the session could not be recorded: {trace.error}; nothing was written")])
    lines = [scrubber.data(header), *(scrubber.data(entry) for entry in log.entries)]
    TranscriptWriter.create_new(transcript_path, lines)
    write_cassette(cassette_path, [scrub_interaction(i, scrubber) for i in interactions])
    return Recorded(transcript=transcript_path, cassette=cassette_path, trace=trace, interactions=len(interactions))
