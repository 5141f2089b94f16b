"""What `replaylab init` finds in a folder of recordings: usable transcripts with their facts,
files that need `replaylab import` first, and files it cannot use (each with file and line).

A usable recording is a pi / OpenClaw transcript with its cassette (`<name>.cassette.yaml`):
replay answers every tool from it, so a transcript without one would only give infrastructure
errors. Such a transcript, a Claude Code session and a τ / τ²-bench results file are listed with
the import kind that converts them (`replaylab import --from pi` synthesizes the cassette from
the recorded results). An OpenClaw state folder's files are named for what they are — a session
store (`openclaw-agent.sqlite`), a reset's or a deleted session's archive (`<id>.jsonl.reset.<time>`,
`.deleted.`), a zstd archive, a legacy transcript — each to import with `--from openclaw`; none is
ever skipped in silence. A Claude Code file of session titles alone (no user or assistant record)
holds nothing to import: it is named as skipped. Sub-agent transcripts (`<name>.sub-*.jsonl`) and Claude Code sub-agent
logs next to their main session are folded into that session by the pipeline or the importer,
so they are never recordings of their own.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab.agents import item_memo, profile_of_recording
from replaylab.cassette import RECORDED_TOOL_PATH, cassette_path_for, load_cassette
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.importers import openclaw, openclaw_store
from replaylab.input_files import REGULAR, kind_of, phrase
from replaylab.replay.loop import window_tokens
from replaylab.replay.turns import replies_after_tools, split_turns
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import UNRESOLVED_SUBAGENT_CLASS, Ledger, build_ledger, calls_that_ran
from replaylab.transcript.context import build_window
from replaylab.transcript.foreign import CLAUDE_CODE, ForeignFormat, detect_foreign
from replaylab.transcript.load import load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MessageEntry
from replaylab.upstream.profiles import FALLBACK, AgentProfile

TOOL_CLASSES_FILE = "tool_classes.json"
SUB_AGENT_MARK = ".sub-"
#: no folder of recordings is this deep; a bound keeps a link loop or a huge tree from hanging init
MAX_DEPTH = 8
MAX_FILES = 100_000
#: a file in none of these formats is not looked at (notes, licences, stats, cassettes) — except
#: OpenClaw's stores and archives (`is_openclaw_file`)
RECORDING_SUFFIXES = (".jsonl", ".json")
#: a session header is one short line; a longer first line is not one
HEADER_BYTES = 64 * 1024


@dataclass
class ToolTally:
    """One tool's calls across the recordings and what the default classification made of them."""

    calls: int = 0
    mutating: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)


@dataclass
class Recording:
    """A usable transcript and the figures the suite's comments quote."""

    path: Path
    #: its turns as the replay splits them (a first one may have no prompt: a greeting)
    turns: int
    #: the turns a user's prompt starts (what the summaries count)
    user_turns: int
    tool_calls: int
    mutating_calls: int
    context_tokens: int
    sub_agents: int
    diagnostics: list[Diagnostic]
    #: the cassette holds HTTP of a tool pack's service rather than recorded tool results
    needs_tool_pack: bool
    #: the agent profile its session gets (`upstream.profiles`: OpenClaw's sessions are OpenClaw's)
    agent: str = FALLBACK
    #: replies after the agent's tool results: where a session of one user turn compacts within its run
    replies_after_tools: int = 0
    #: of `tool_calls` and `mutating_calls`, those its sub-agents made (in their own transcripts,
    #: named by a call or by none: the ledger's children), and its sub-agents no file here holds
    sub_agent_calls: int = 0
    sub_agent_mutating: int = 0

    @property
    def nothing_to_compact(self) -> bool:
        """One user turn and no reply after a tool result: no point to compact at."""
        return self.turns < 2 and not self.replies_after_tools


@dataclass
class NeedsImport:
    path: Path
    kind: str
    why: str


@dataclass
class Scan:
    recordings: list[Recording] = field(default_factory=list)
    needs_import: list[NeedsImport] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    folded: list[Path] = field(default_factory=list)
    #: files of a known kind that hold no session, each with why (named, never counted as a problem)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    tools: dict[str, ToolTally] = field(default_factory=dict)
    tool_classes_files: list[Path] = field(default_factory=list)

    def absorb(self, other: Scan) -> None:
        """Add what `other` found (another folder) to this scan."""
        self.recordings += other.recordings
        self.needs_import += other.needs_import
        self.problems += other.problems
        self.folded += other.folded
        self.skipped += other.skipped
        for tool, tally in other.tools.items():
            mine = self.tools.setdefault(tool, ToolTally())
            mine.calls += tally.calls
            mine.mutating += tally.mutating
            mine.reasons.update(tally.reasons)
            mine.rules.update(tally.rules)
        self.tool_classes_files += [p for p in other.tool_classes_files if p not in self.tool_classes_files]


PI_WITHOUT_CASSETTE = ForeignFormat(
    "pi", "a pi / OpenClaw transcript without a cassette (the import synthesizes one from its recorded results)"
)


def check_folder(folder: Path) -> None:
    """DIR must be a folder that can be listed; anything else is a usage error naming it."""
    if not folder.exists():
        raise InputError([Diagnostic(code="missing-folder", file=str(folder), message="no such folder")])
    if not folder.is_dir():
        raise InputError(
            [
                Diagnostic(
                    code="not-a-folder", file=str(folder), message="is not a folder; expected a folder of recordings"
                )
            ]
        )
    try:
        with os.scandir(folder) as entries:
            next(entries, None)
    except OSError as exc:
        raise InputError(
            [Diagnostic(code="unreadable-folder", file=str(folder), message=f"cannot be listed: {exc.strerror or exc}")]
        ) from None


def scan(folder: Path, base: ToolClassifier, *, skip: Path | None = None) -> Scan:
    """Every recording under `folder` (sorted, hidden folders and `skip` left out)."""
    result = Scan()
    for path in candidate_files(folder, result.problems, skip=skip):
        classify_file(path, base, result)
    return result


def candidate_files(folder: Path, problems: list[Diagnostic], *, skip: Path | None = None) -> list[Path]:
    """The .jsonl / .json files under `folder`, sorted per folder, linked folders followed once;
    a sub-folder that cannot be listed is a problem in `problems`, not a silent gap."""
    found: list[Path] = []
    skip_abs = os.path.abspath(skip) if skip is not None else None

    def unlistable(error: OSError) -> None:
        problems.append(
            Diagnostic(
                code="unreadable-folder",
                file=str(error.filename or folder),
                message=f"cannot be listed: {error.strerror or error}",
            )
        )

    seen: set[tuple[int, int]] = set()  # folders walked, by device and inode: a link back is not walked again

    def first_visit(path: str) -> bool:
        try:
            info = os.stat(path)
        except OSError:
            return False
        key = (info.st_dev, info.st_ino)
        if key in seen:
            return False
        seen.add(key)
        return True

    first_visit(str(folder))
    for top, dirs, files in os.walk(folder, onerror=unlistable, followlinks=True):
        depth = len(Path(top).relative_to(folder).parts)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and depth < MAX_DEPTH
            and os.path.abspath(os.path.join(top, d)) != skip_abs
            and first_visit(os.path.join(top, d))
        )
        for name in sorted(files):
            if (name.endswith(RECORDING_SUFFIXES) or is_openclaw_file(name)) and not name.startswith("."):
                found.append(Path(top) / name)
        if len(found) > MAX_FILES:
            raise InputError(
                [
                    Diagnostic(
                        code="too-many-files",
                        file=str(folder),
                        message=f"holds more than {MAX_FILES:,} .jsonl / .json files; point init at a smaller folder",
                    )
                ]
            )
    return found


def is_openclaw_file(name: str) -> bool:
    """A name OpenClaw gives a session store or a transcript archive."""
    return (
        name == openclaw_store.STORE_NAME
        or name.endswith(openclaw.ZSTD_TRANSCRIPT)
        or bool(openclaw.ARCHIVE.match(name))
    )


def classify_file(path: Path, base: ToolClassifier, result: Scan) -> None:
    """Put one file where it belongs in `result`."""
    if path.suffix == ".jsonl" and SUB_AGENT_MARK in path.name:
        result.folded.append(path)
        return
    kind = kind_of(path)
    if kind != REGULAR:  # a FIFO would hang the read, a device never end it: refused by stat
        result.problems.append(
            Diagnostic(code="not-a-file", file=str(path), message=f"{phrase(kind)}; expected a regular recording file")
        )
        return
    if not os.access(path, os.R_OK):
        result.problems.append(
            Diagnostic(code="unreadable-file", file=str(path), message="cannot be read (permission)")
        )
        return
    described = openclaw.describe(path) if is_openclaw_file(path.name) or path.suffix == ".jsonl" else None
    if described is not None:
        if described.kind == "cold" and _store_of_cold(path).is_file():
            result.folded.append(path)  # its store reads it: imported with the store
        else:
            result.needs_import.append(NeedsImport(path, "openclaw", described.what))
        return
    foreign = detect_foreign(path)
    if foreign is CLAUDE_CODE and _claude_code_child(path):
        result.folded.append(path)
        return
    if foreign is CLAUDE_CODE and _claude_code_titles_only(path):
        result.skipped.append(
            (path, "no user or assistant record, nothing a model was asked or answered (a file of session titles)")
        )
        return
    if foreign is not None:
        result.needs_import.append(NeedsImport(path, foreign.kind, foreign.what))
        return
    if path.suffix == ".json":  # tool_classes.json, stats, notes: not recordings
        return
    if _beside_claude_code_agents(path):
        result.skipped.append(
            (
                path,
                "not a sub-agent transcript: a file Claude Code keeps among a session's sub-agents "
                "(a Workflow run's journal)",
            )
        )
        return
    problem = _header_problem(path)
    if problem is not None:
        result.problems.append(problem)
        return
    if not cassette_path_for(path).is_file():  # the importer reads it and names any bad line
        result.needs_import.append(NeedsImport(path, PI_WITHOUT_CASSETTE.kind, PI_WITHOUT_CASSETTE.what))
        return
    recording = _read_recording(path, base, result)
    if recording is not None:
        result.recordings.append(recording)


def _store_of_cold(path: Path) -> Path:
    """`agents/<id>/sessions/cold/x.jsonl.zst` → `agents/<id>/agent/openclaw-agent.sqlite`."""
    return path.parent.parent.parent / "agent" / openclaw_store.STORE_NAME


def _claude_code_child(path: Path) -> bool:
    """A Claude Code sub-agent log whose main session is beside its folder (2.1.x) or beside it
    (2.0.x: the importer reads it with that session), or a query of its own Claude Code logs as a
    sub-agent (its compaction call, a prompt suggestion: never a session)."""
    from replaylab.importers.claude_code_sidechains import (
        beside_its_session,
        side_query_kind,
        sidechain_beside_its_session,
        subagents_folder,
    )

    if subagents_folder(path) is None:
        return sidechain_beside_its_session(path)
    return side_query_kind(path) is not None or beside_its_session(path)


def _beside_claude_code_agents(path: Path) -> bool:
    """A file of no format replaylab knows in the `subagents` folder of a Claude Code session
    that is there (Claude Code writes a Workflow run's `journal.jsonl` beside its agents)."""
    from replaylab.importers.claude_code_sidechains import beside_its_session

    return beside_its_session(path)


def _claude_code_titles_only(path: Path) -> bool:
    from replaylab.importers.claude_code_sidechains import holds_no_conversation

    return holds_no_conversation(path)


def _read_recording(path: Path, base: ToolClassifier, result: Scan) -> Recording | None:
    profile = profile_of_recording(path)
    try:
        transcript = load_transcript(path, navigation=profile.navigation)  # as its items will read it
    except InputError as exc:
        result.problems.extend(exc.diagnostics)
        return None
    classifier = _classifier_beside(path, base, result)
    leaf_path = transcript.leaf_path()
    calls = mutating = 0
    # the calls the ledger counts: a call of a failed reply that nothing answered never ran
    for call in calls_that_ran(e.message for e in leaf_path if isinstance(e, MessageEntry)):
        explained = classifier.explain(call.name, call.arguments)
        tally = result.tools.setdefault(call.name, ToolTally())
        tally.calls += 1
        calls += 1
        tally.rules[explained.rule] += 1
        if explained.mutating:
            tally.mutating += 1
            mutating += 1
            tally.reasons[explained.reason] += 1
    sub_calls, sub_mutating = _sub_agent_calls(build_ledger(transcript, classifier, path=leaf_path), result)
    turns = split_turns(leaf_path, agent=profile)
    return Recording(
        path=path,
        turns=len(turns),
        user_turns=sum(1 for turn in turns if turn.inputs),
        replies_after_tools=len(replies_after_tools(turns)),
        tool_calls=calls + sub_calls,
        mutating_calls=mutating + sub_mutating,
        sub_agent_calls=sub_calls,
        sub_agent_mutating=sub_mutating,
        context_tokens=window_tokens(*_window_and_memo(leaf_path, profile)),
        sub_agents=sum(1 for _ in path.parent.glob(f"{path.stem}{SUB_AGENT_MARK}*.jsonl")),
        diagnostics=list(transcript.diagnostics),
        needs_tool_pack=_http_cassette(cassette_path_for(path)),
        agent=profile.name,
    )


def _sub_agent_calls(ledger: Ledger, result: Scan) -> tuple[int, int]:
    """(tool calls, mutating ones) of the session's sub-agents, as its ledger has them: every call
    of each sub-agent's transcript (a call names it or none does), and each sub-agent that cannot
    be loaded as one mutating call. Each mutating one is tallied under its tool, saying it is a
    sub-agent's."""
    calls = sum(sum(child.class_counts.values()) for child in ledger.children.values())
    mutating = 0
    for event in ledger.events:
        if not event.session and event.tool_class != UNRESOLVED_SUBAGENT_CLASS:
            continue  # a call of the session itself: counted with its calls
        mutating += 1
        tally = result.tools.setdefault(event.tool, ToolTally())
        tally.mutating += 1
        tally.reasons[f"a sub-agent's: {event.reason}"] += 1
        if event.session:  # a call in a sub-agent's transcript (an unresolved spawn is counted already)
            tally.calls += 1
            tally.rules[event.rule] += 1
    return calls, mutating


def _window_and_memo(leaf_path: list[Any], profile: AgentProfile) -> tuple[list[Any], ItemMemo]:
    """The window the recording's agent rebuilds at its leaf, and the memo that estimates it its way."""
    memo = item_memo(profile)
    return build_window(leaf_path, memo), memo


def _classifier_beside(path: Path, base: ToolClassifier, result: Scan) -> ToolClassifier:
    """The classes the pipeline will use for this recording: a `tool_classes.json` beside it,
    then the tool pack's (`qa.setup.classifier_for`, without the suite's own overrides)."""
    beside = path.parent / TOOL_CLASSES_FILE
    if not beside.is_file():
        return base
    if beside not in result.tool_classes_files:
        result.tool_classes_files.append(beside)
    return ToolClassifier.from_json(beside).merged(base)


def _http_cassette(cassette: Path) -> bool:
    """Whether the cassette recorded a service's HTTP (answered only through a tool pack's code
    paths) instead of the recorded-tool endpoint an importer writes."""
    if not cassette.is_file():
        return False
    try:
        interactions = load_cassette(cassette)
    except InputError:
        return False  # the item reports a bad cassette with its line; init only counts
    for item in interactions:
        uri = str((item.get("request") or {}).get("uri") or "")
        if RECORDED_TOOL_PATH not in uri:
            return True
    return False


def _header_problem(path: Path) -> Diagnostic | None:
    """Why the first line is not a pi session header, or None. Only that line is read: a file that
    is no transcript at all is named once, not once per line as the loader would."""
    try:
        with open(path, "rb") as handle:
            line, number = b"", 0
            for raw in handle:
                number += 1
                if raw.strip():
                    line = raw[: HEADER_BYTES + 1]
                    break
    except OSError as exc:
        return Diagnostic(code="unreadable-file", file=str(path), message=f"cannot be read: {exc.strerror or exc}")
    if not line:
        return Diagnostic(code="empty-file", file=str(path), message="is empty; expected a pi / OpenClaw transcript")
    try:
        header = json.loads(line) if len(line) <= HEADER_BYTES else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "session":
        return Diagnostic(
            code="not-a-transcript",
            file=str(path),
            line=number,
            field="type",
            message='is not a pi / OpenClaw session header (expected a JSON object with "type": "session"); '
            "not a recording replaylab knows",
        )
    return None
