"""Claude Code's folders → sessions: a project's folder (`<sessionId>.jsonl` with their
sub-agents beside them), or the folder of projects (`~/.claude/projects`), each project in turn.

A folder imports every main session with the 2.0.x sub-agent files beside it that share its
session id; sub-agent files whose parent is not in the folder are sessions of their own; files of
session titles alone and compaction calls (`agent-acompact-*`) are skipped by name. A project
that cannot be imported is a problem of its own: the others are still imported. One file is
`claude_code.import_claude_code_file`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from replaylab.diagnostics import Diagnostic
from replaylab.importers.claude_code import import_claude_code_file
from replaylab.importers.claude_code_sidechains import (
    SUBAGENTS_DIR,
    holds_no_conversation,
    records_session_id,
    session_id_of,
    side_query_kind,
    sidechain_file,
    subagent_files,
)
from replaylab.importers.common import ImportedSession, bad_input, each_source


def import_claude_code(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    if not src.is_dir():
        yield from each_source(
            [src], lambda path: [import_claude_code_file(path, tool_classes_path=tool_classes_path)], problems
        )
        return
    found = sorted(p for p in src.glob("*.jsonl"))
    files = [p for p in found if not holds_no_conversation(p)]
    sidechains = {p: r for p in files if (r := sidechain_file(p)) is not None}
    mains = [p for p in files if p not in sidechains]
    main_ids = {p: session_id_of(p) for p in mains}
    orphans = sorted(
        p
        for d in src.iterdir()
        if d.is_dir() and not (src / f"{d.name}.jsonl").exists()
        for p in subagent_files(d / SUBAGENTS_DIR)
        if side_query_kind(p) is None
    )
    orphans += [p for p, records in sidechains.items() if records_session_id(records) not in main_ids.values()]
    # compaction files next to a main session are reported with it; these have no main session
    skipped = sorted(
        p
        for d in src.iterdir()
        if d.is_dir() and not (src / f"{d.name}.jsonl").exists()
        for p in subagent_files(d / SUBAGENTS_DIR)
        if side_query_kind(p) is not None
    )
    if not mains and not orphans and found:
        raise bad_input(
            src,
            f"holds no conversation: none of its {len(found)} .jsonl file(s) has a user or assistant record "
            "(Claude Code also keeps files of session titles alone)",
        )
    if not mains and not orphans:
        # Claude Code's folder of projects (`~/.claude/projects`): each project's folder in turn
        projects = [d for d in sorted(src.iterdir()) if d.is_dir() and any(d.glob("*.jsonl"))]
        if not projects:
            raise bad_input(
                src,
                "holds no Claude Code session (<sessionId>.jsonl, <sessionId>/subagents/agent-*.jsonl, "
                "or a folder of projects holding them, as ~/.claude/projects does)",
            )
        untitled = [d for d in projects if all(holds_no_conversation(p) for p in d.glob("*.jsonl"))]
        skips = [f"skipped {d}: none of its .jsonl files has a user or assistant record" for d in untitled]
        sessions = each_source(
            [d for d in projects if d not in untitled] or untitled,
            lambda project: import_claude_code(project, tool_classes_path=tool_classes_path, problems=problems),
            problems,
        )
        for session in sessions:
            session.notes[:0] = skips  # reported once, with the first session
            skips = []
            yield session
        return
    notes = [f"skipped {p}: {side_query_kind(p)}, not a session (import it by naming the file)" for p in skipped] + [
        f"skipped {p}: no user or assistant record, nothing a model was asked or answered "
        "(Claude Code keeps files of session titles alone beside its sessions)"
        for p in found
        if p not in files
    ]

    def sessions_of(path: Path) -> list[ImportedSession]:
        beside = [(p, r) for p, r in sidechains.items() if path in mains and records_session_id(r) == main_ids[path]]
        session = import_claude_code_file(path, tool_classes_path=tool_classes_path, sidechain_files=beside)
        if path in orphans:
            session.notes.append(
                f"{path}: sub-agent transcript whose parent session is not in {src}; imported as a session of its own"
            )
        return [session]

    for session in each_source([*mains, *orphans], sessions_of, problems):
        session.notes[:0] = notes  # the skipped files are reported once, with the first session
        notes = []
        yield session
