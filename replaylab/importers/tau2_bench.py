"""τ²-bench simulation results → v3 sessions.

A file is `{timestamp, info, tasks, simulations}` (or one simulation, or a list of them, as a
harness writes a run on its own); each simulation's `messages` are flat assistant / user / tool
messages. One session per simulation, named
`tau2-<domain>-<agent llm>-sim-<simulation id>`.

* The agent's system prompt is not in the messages: the domain policy
  (`info.environment_info.policy`) becomes the `system-prompt` custom entry.
* Tool messages carry no tool name and parallel calls are answered in any order, so results
  are paired to calls by `id`.
* In telecom the simulated *user* runs tools on its own phone (`role: user` with `tool_calls`,
  `requestor: user`). Those stay user messages holding toolCall blocks, and their results carry
  `"actor": "user"`, so the ledger shows them as the user's own side effects.
* A simulation's own `policy` (`SimulationRun.policy`, the knowledge domains') is its system
  prompt, before the run's.
* A tool of a domain τ²-bench has gets the class its code declares (`upstream/tau_bench.py`);
  any other tool an evaluated action names gets the `ToolType` τ²-bench's evaluator wrote beside
  it (`reward_info.action_checks[].tool_type`: the type the domain's own code declares) — unless
  a `tool_classes.json` declares it.
* τ²-bench's "dir" format (`Results.save(format="dir")`, the default of voice runs): a results
  file with a `simulations/` folder beside it holds the run's metadata, and each simulation is
  `simulations/<id>.json` (read as τ²-bench's `Results.load` reads them, in name order); those
  files are imported with their results file, not on their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    each_source,
    find_tool_classes,
    json_source_files,
    parse_arguments,
    provider_for_model,
    read_json,
    safe_name,
    with_benchmark_classes,
)
from replaylab.importers.openai_chat import add_model_fields, tool_call_objects
from replaylab.upstream import tau_bench as TAU


def import_tau2_bench(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    files = json_source_files(src, "τ²-bench results file")
    runs = {path.parent for path in files if _simulations_folder(path) is not None}
    files = [path for path in files if not (path.parent.name == SIMULATIONS_DIR and path.parent.parent in runs)]
    yield from each_source(files, lambda path: _import_file(path, tool_classes_path, problems), problems)


#: τ²-bench's folder of a "dir"-format run's simulation files (`tau2.data_model.simulation.SIMULATIONS_DIR`)
SIMULATIONS_DIR = "simulations"


def _simulations_folder(path: Path) -> Path | None:
    """The `simulations/` folder beside a results file, which makes it a "dir"-format run's
    metadata for τ²-bench (`Results._detect_format`)."""
    folder = path.parent / SIMULATIONS_DIR
    return folder if path.parent.name != SIMULATIONS_DIR and folder.is_dir() else None


def _import_file(
    path: Path, tool_classes_path: Path | None, problems: list[Diagnostic] | None
) -> Iterator[ImportedSession]:
    """The file's sessions, one per simulation (with `problems`, a simulation that cannot be read
    is listed there and the file's other simulations still imported)."""
    raw = read_json(path)
    data = _results(raw)
    folder = _simulations_folder(path) if data is None or "info" in data else None
    if folder is not None:
        data = _dir_format(path, raw, folder)
    if data is None:
        raise bad_input(
            path,
            "expected a τ²-bench results object {timestamp, info, tasks, simulations: [...]}, or one "
            "simulation {id, task_id, messages, ...} or a list of them",
            field_name="simulations",
        )
    info = _object(data.get("info"))
    env = _object(info.get("environment_info"))
    agent = _object(info.get("agent_info"))
    user = _object(info.get("user_info"))
    domain = str(env.get("domain_name") or path.parent.name)
    model = agent.get("llm") if isinstance(agent.get("llm"), str) else None
    provider = provider_for_model(model)
    policy = env.get("policy")
    declared, _ = find_tool_classes(path, tool_classes_path)
    known = TAU.tau2_tool_classes(domain)
    evaluated = {tool: cls for tool, cls in _evaluated_tool_classes(data["simulations"]).items() if tool not in known}
    whose = f"τ²-bench's {domain} domain ({TAU.tau2_source(domain)})" if known else ""
    if evaluated:
        whose += (" and " if whose else "") + "the tool types τ²-bench's evaluator recorded (reward_info.action_checks)"
    classes, note = with_benchmark_classes(declared, {**evaluated, **known}, whose)
    named: set[str] = set()
    noted = False

    def session_of(numbered: tuple[int, Any]) -> list[ImportedSession]:
        nonlocal noted
        index, sim = numbered
        if isinstance(sim, InputError):  # a "dir"-format run's simulation file it could not read
            raise sim
        if not isinstance(sim, dict) or not isinstance(sim.get("messages"), list):
            raise bad_input(
                path,
                f"simulation [{index}] has no 'messages' list; expected a τ²-bench simulation",
                field_name=f"simulations[{index}].messages",
            )
        sim_id = str(sim.get("id") or index)
        name = safe_name(f"tau2-{domain}-{model or 'agent'}-sim-{sim_id}")
        if name in named:  # a simulation id the file holds twice: its index tells the two apart
            name = safe_name(f"{name}-{index}")
        named.add(name)
        reward = sim.get("reward_info", {}).get("reward") if isinstance(sim.get("reward_info"), dict) else None
        source = {
            "kind": "tau2-bench",
            "file": str(path),
            "index": index,
            "simulationId": sim_id,
            "taskId": sim.get("task_id"),
            "trial": sim.get("trial"),
            "domain": domain,
            "agentLlm": model,
            "userLlm": user.get("llm"),
            "reward": reward,
            "terminationReason": sim.get("termination_reason"),
        }
        builder = SessionBuilder(
            name,
            session_id=sim_id,
            source=source,
            tool_classes=classes,
            timestamp=sim.get("start_time") or sim.get("timestamp"),
        )
        own_policy = sim.get("policy")
        if isinstance(own_policy, str) and own_policy:
            builder.system_prompt(own_policy, source_id=f"simulations[{index}].policy", timestamp=sim.get("start_time"))
        elif isinstance(policy, str) and policy:
            builder.system_prompt(policy, source_id="info.environment_info.policy", timestamp=sim.get("start_time"))
        if note and not noted:  # once per file, with its first session
            builder.notes.append(f"{path}: {note}")
            noted = True
        _add_messages(builder, sim["messages"], path, index, model, provider)
        return [builder.finish()]

    yield from each_source(enumerate(data["simulations"]), session_of, problems)


def _results(data: Any) -> dict[str, Any] | None:
    """The results object a file holds: itself, or one made around the simulation or the list of
    simulations a harness wrote on its own (one per run); None for anything else."""
    if isinstance(data, dict) and isinstance(data.get("simulations"), list):
        return data
    if _is_simulation(data):
        return {"simulations": [data]}
    if isinstance(data, list) and data and all(_is_simulation(item) for item in data):
        return {"simulations": data}
    return None


def _dir_format(path: Path, meta: Any, folder: Path) -> dict[str, Any] | None:
    """A "dir"-format run: its metadata with the simulations of `folder`'s files. A file that
    cannot be read, and a simulation the run's `simulation_index` names without its file (which
    fails τ²-bench's own load), are each a problem of their own, raised where its session would
    be made."""
    if not isinstance(meta, dict):
        return None
    files = sorted(folder.glob("*.json"))
    simulations: list[Any] = []
    for file in files:
        try:
            simulations.append(read_json(file))
        except InputError as exc:
            simulations.append(exc)
    index = meta.get("simulation_index")
    on_disk = {file.stem for file in files}
    for entry in index if isinstance(index, list) else []:
        sim_id = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(sim_id, str) and sim_id not in on_disk:
            simulations.append(
                bad_input(
                    folder / f"{sim_id}.json",
                    f"is missing: {path.name}'s simulation_index names simulation {sim_id!r}",
                    field_name="simulation_index",
                )
            )
    return {**meta, "simulations": simulations}


#: τ²-bench's `ToolType` as `ActionCheck.tool_type` holds it → replaylab's class
_EVALUATED_TYPES = {"read": "read", "write": "write", "think": "think"}


def _evaluated_tool_classes(simulations: list[Any]) -> dict[str, str]:
    """{tool: class} from the `ToolType` τ²-bench's evaluator recorded beside each expected
    action (`reward_info.action_checks[].tool_type`, which it takes from the domain's code); a
    `generic` tool gets the class `GENERIC_TOOL_CLASSES` names, and a tool recorded with two
    types none."""
    seen: dict[str, set[str]] = {}
    for sim in simulations:
        reward = sim.get("reward_info") if isinstance(sim, dict) else None
        checks = reward.get("action_checks") if isinstance(reward, dict) else None
        for check in checks if isinstance(checks, list) else []:
            action = check.get("action") if isinstance(check, dict) else None
            name = action.get("name") if isinstance(action, dict) else None
            if not isinstance(name, str):
                continue
            kind = str(check.get("tool_type") or "").lower()
            cls = _EVALUATED_TYPES.get(kind) or (TAU.GENERIC_TOOL_CLASSES.get(name) if kind == "generic" else None)
            if cls is not None:
                seen.setdefault(name, set()).add(cls)
    return {name: next(iter(classes)) for name, classes in seen.items() if len(classes) == 1}


def _is_simulation(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list) and "task_id" in value


def _add_messages(
    builder: SessionBuilder, messages: list[Any], path: Path, sim_index: int, model: str | None, provider: str | None
) -> None:
    for index, msg in enumerate(messages):
        where = f"simulations[{sim_index}].messages[{index}]"
        if not isinstance(msg, dict) or msg.get("role") not in ("assistant", "user", "tool"):
            raise bad_input(
                path,
                f"{where} is not a τ²-bench message; expected role assistant, user or tool",
                field_name=f"{where}.role",
            )
        role, timestamp = msg["role"], msg.get("timestamp")
        extra = {"sourceErrors": msg["errors"]} if msg.get("errors") else None
        if role == "tool":
            call_id = msg.get("id")
            if not isinstance(call_id, str):
                raise bad_input(
                    path,
                    f"{where} (role tool) has no string 'id'; expected the id of its tool call",
                    field_name=f"{where}.id",
                )
            actor = "user" if msg.get("requestor") == "user" else None
            builder.tool_result(
                call_id,
                _text(msg.get("content")),
                is_error=bool(msg.get("error")),
                source_id=index,
                timestamp=timestamp,
                actor=actor,
            )
            continue
        content: list[dict[str, Any]] = []
        text = _text(msg.get("content"))
        if text:
            content.append({"type": "text", "text": text})
        if role == "assistant" and isinstance(msg.get("reasoning"), str) and msg["reasoning"]:
            content.insert(0, {"type": "thinking", "thinking": msg["reasoning"]})
        for call in tool_call_objects(msg.get("tool_calls"), path, where, f"{where}.tool_calls"):
            arguments, problem = parse_arguments(call.get("arguments"))
            if problem:
                builder.notes.append(f"{builder.name}: {where} call {call.get('id')!r}: {problem}")
            content.append(
                {
                    "type": "toolCall",
                    "id": str(call.get("id")),
                    "name": str(call.get("name", "")),
                    "arguments": arguments,
                }
            )
        has_calls = any(b["type"] == "toolCall" for b in content)
        if role == "user":
            message: dict[str, Any] = {"role": "user", "content": content if has_calls else text}
            if has_calls:
                extra = {**(extra or {}), "actor": "user"}
        else:
            message = {"role": "assistant", "content": content}
            if has_calls:
                message["stopReason"] = "toolUse"
            elif content:
                message["stopReason"] = "stop"
            else:  # qwen's agent_error runs end with an empty message
                message["stopReason"] = "error"
                message["errorMessage"] = "the agent produced an empty message (no text, no tool call)"
            add_model_fields(message, provider=provider, model=model, usage=msg.get("usage"))
        builder.message(message, source_id=index, timestamp=timestamp, extra=extra)


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else str(content)


def _object(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: how an optional object of the results reads."""
    return value if isinstance(value, dict) else {}
