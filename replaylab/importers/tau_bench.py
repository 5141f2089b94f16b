"""τ-bench (v1) historical trajectories → v3 sessions.

A file is a JSON array of run records `{task_id, trial, reward, info, traj}`; `traj` is an OpenAI
chat message list whose first message is the system prompt (the domain policy). One session per
record, named `tau-<file stem>-task<task_id>-trial<trial>`. The file records no model name and no
timestamps: the model comes from the file name (`gpt-4o-airline.json`) and timestamps are
synthesized in order. τ-bench reuses tool-call ids inside a trajectory; see `common` for how
the repeats are made unique.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    find_tool_classes,
    json_source_files,
    provider_for_model,
    read_json,
    safe_name,
)
from replaylab.importers.openai_chat import add_messages

DOMAINS = ("airline", "retail")


def import_tau_bench(src: Path, *, tool_classes_path: Path | None = None) -> Iterator[ImportedSession]:
    for path in json_source_files(src, "τ-bench trajectory file"):
        yield from _import_file(path, tool_classes_path)


def _import_file(path: Path, tool_classes_path: Path | None) -> Iterator[ImportedSession]:
    data = read_json(path)
    if not isinstance(data, list):
        raise bad_input(path, "expected a JSON array of τ-bench run records {task_id, trial, reward, info, traj}")
    classes, _ = find_tool_classes(path, tool_classes_path)
    model, domain = _model_and_domain(path.stem)
    provider = provider_for_model(model)
    named: set[str] = set()
    for index, record in enumerate(data):
        if not isinstance(record, dict) or not isinstance(record.get("traj"), list):
            raise bad_input(
                path,
                f"record [{index}] has no 'traj' list; expected a τ-bench run record "
                "{task_id, trial, reward, info, traj}",
                field_name=f"[{index}].traj",
            )
        task_id, trial = record.get("task_id"), record.get("trial")
        name = safe_name(f"tau-{path.stem}-task{task_id}-trial{trial}")
        if task_id is None or name in named:  # a record of the same task and trial again: its index tells it apart
            name = safe_name(f"tau-{path.stem}-{index}")
        named.add(name)
        source: dict[str, Any] = {
            "kind": "tau-bench",
            "file": str(path),
            "index": index,
            "taskId": task_id,
            "trial": trial,
            "reward": record.get("reward"),
        }
        if domain:
            source["domain"] = domain
        builder = SessionBuilder(name, session_id=name, source=source, tool_classes=classes)
        add_messages(
            builder,
            record["traj"],
            path=path,
            where=f"record [{index}] traj",
            model=model,
            provider=provider,
            api="openai-completions" if provider == "openai" else None,
        )
        yield builder.finish()


def _model_and_domain(stem: str) -> tuple[str | None, str | None]:
    """`gpt-4o-airline` → ("gpt-4o", "airline"); the file name is the only place τ-bench names them."""
    for domain in DOMAINS:
        if stem.endswith("-" + domain):
            return stem[: -len(domain) - 1] or None, domain
    return None, None
