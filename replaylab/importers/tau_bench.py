"""τ-bench (v1) historical trajectories → v3 sessions.

A file is a JSON array of run records `{task_id, trial, reward, info, traj}`; `traj` is an OpenAI
chat message list whose first message is the system prompt (the domain policy). One session per
record, named `tau-<file stem>-task<task_id>-trial<trial>`. The file records no model name and no
timestamps: the model comes from the file name (`gpt-4o-airline.json`) and timestamps are
synthesized in order. τ-bench reuses tool-call ids inside a trajectory; see `common` for how
the repeats are made unique. A tool of τ-bench's own gets the class its code gives it
(`upstream/tau_bench.py`) unless a `tool_classes.json` declares it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    each_source,
    find_tool_classes,
    json_source_files,
    provider_for_model,
    read_json,
    safe_name,
    with_benchmark_classes,
)
from replaylab.importers.openai_chat import add_messages
from replaylab.upstream import tau_bench as TAU

DOMAINS = tuple(TAU.TAU_TOOL_CLASSES)


def import_tau_bench(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    files = json_source_files(src, "τ-bench trajectory file")
    yield from each_source(files, lambda path: _import_file(path, tool_classes_path, problems), problems)


def _import_file(
    path: Path, tool_classes_path: Path | None, problems: list[Diagnostic] | None
) -> Iterator[ImportedSession]:
    """The file's sessions, one per run record (with `problems`, a record that cannot be read is
    listed there and the file's other records still imported)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise bad_input(path, "expected a JSON array of τ-bench run records {task_id, trial, reward, info, traj}")
    model, domain = _model_and_domain(path.stem)
    declared, _ = find_tool_classes(path, tool_classes_path)
    benchmark, whose = _domain_classes(domain, data)
    classes, note = with_benchmark_classes(declared, benchmark, whose)
    provider = provider_for_model(model)
    named: set[str] = set()
    noted = False

    def session_of(numbered: tuple[int, Any]) -> list[ImportedSession]:
        nonlocal noted
        index, record = numbered
        if not isinstance(record, dict) or not isinstance(record.get("traj"), list):
            raise bad_input(
                path,
                f"record [{index}] has no 'traj' list; expected a τ-bench run record "
                "{task_id, trial, reward, info, traj}",
                field_name=f"[{index}].traj",
            )
        if not record["traj"]:  # the run failed before its first message: nothing to replay
            error = (record.get("info") or {}).get("error") if isinstance(record.get("info"), dict) else None
            raise bad_input(
                path,
                f"record [{index}] has an empty 'traj': its run recorded no message"
                + (f" (its info.error: {str(error)[:200]})" if error else ""),
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
        if note and not noted:  # once per file, with its first session
            builder.notes.append(f"{path}: {note}")
            noted = True
        add_messages(
            builder,
            record["traj"],
            path=path,
            where=f"record [{index}] traj",
            model=model,
            provider=provider,
            api="openai-completions" if provider == "openai" else None,
        )
        return [builder.finish()]

    yield from each_source(enumerate(data), session_of, problems)


def _domain_classes(domain: str | None, records: list[Any]) -> tuple[dict[str, str], str]:
    """τ-bench's classes for the file's tools: its domain's when the file name gives it, else those
    of every tool the file calls on which each domain holding all of them agrees."""
    if domain:
        return TAU.tau_tool_classes(domain), f"τ-bench's {domain} domain ({TAU.TAU_VERSION})"
    called = {
        call["function"]["name"]
        for record in records
        if isinstance(record, dict) and isinstance(record.get("traj"), list)
        for message in record["traj"]
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list)
        for call in message["tool_calls"]
        if isinstance(call, dict)
        and isinstance(call.get("function"), dict)
        and isinstance(call["function"].get("name"), str)
    }
    holding = [TAU.tau_tool_classes(d) for d in DOMAINS if called <= set(TAU.TAU_TOOL_CLASSES[d])]
    agreed = {
        tool: holding[0][tool]
        for tool in sorted(called)
        if holding and all(h[tool] == holding[0][tool] for h in holding)
    }
    return agreed, f"τ-bench's tools ({TAU.TAU_VERSION})"


def _model_and_domain(stem: str) -> tuple[str | None, str | None]:
    """`gpt-4o-airline` → ("gpt-4o", "airline"); the file name is the only place τ-bench names them."""
    for domain in DOMAINS:
        if stem.endswith("-" + domain):
            return stem[: -len(domain) - 1] or None, domain
    return None, None
