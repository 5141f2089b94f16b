"""τ²-bench's own ways of writing a run that a results file alone does not show: the "dir"
format (`Results.save(format="dir")`: the run's metadata in `results.json`, each simulation in
`simulations/<id>.json`) and a simulation's own policy (the knowledge domains')."""

from __future__ import annotations

import json
from pathlib import Path

from replaylab.diagnostics import Diagnostic
from replaylab.importers import import_sessions


def _simulation(sim_id: str, **extra) -> dict:
    return {
        "id": sim_id,
        "task_id": sim_id,
        "trial": 0,
        "messages": [
            {"role": "user", "content": f"Balance of {sim_id}?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "t1", "name": "get_balance", "arguments": {}}],
            },
            {"role": "tool", "id": "t1", "content": "42.00"},
            {"role": "assistant", "content": "It is 42.00."},
        ],
        **extra,
    }


def _dir_run(folder: Path, sims: list[dict], index: list[str] | None = None) -> Path:
    """A run as τ²-bench saves it in "dir" format."""
    meta = {
        "timestamp": "2026-10-06T08:08:38",
        "info": {
            "environment_info": {"domain_name": "banking_knowledge", "policy": "Run policy."},
            "agent_info": {"llm": "m"},
        },
        "tasks": [],
        "simulation_index": [{"id": i, "task_id": i, "trial": 0} for i in (index or [s["id"] for s in sims])],
    }
    (folder / "simulations").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(meta))
    for sim in sims:
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    return folder


def test_a_dir_format_run_is_its_results_file_with_each_simulation_file(tmp_path):
    run = _dir_run(tmp_path / "run", [_simulation("b"), _simulation("a")])
    for source in (run, run / "results.json"):  # the run's folder, or its results file
        problems: list[Diagnostic] = []
        sessions = list(import_sessions("tau2-bench", source, problems=problems))
        assert problems == []
        assert [s.header["source"]["simulationId"] for s in sessions] == ["a", "b"]  # τ²-bench's order: by name
        assert {s.header["source"]["domain"] for s in sessions} == {"banking_knowledge"}
        assert all(s.tool_call_count() == 1 for s in sessions)


def test_a_dir_format_simulation_missing_or_unreadable_is_a_problem_of_its_own(tmp_path):
    run = _dir_run(tmp_path / "run", [_simulation("a"), _simulation("b")], index=["a", "b", "gone"])
    (run / "simulations" / "b.json").write_text('{"id": "b", ')
    problems: list[Diagnostic] = []
    sessions = list(import_sessions("tau2-bench", run, problems=problems))
    assert [s.header["source"]["simulationId"] for s in sessions] == ["a"]
    assert sorted(Path(p.file).name for p in problems) == ["b.json", "gone.json"]
    missing = next(p for p in problems if p.file.endswith("gone.json"))
    assert missing.field == "simulation_index" and "'gone'" in missing.message


def test_a_simulations_own_policy_is_its_system_prompt(tmp_path):
    run = _dir_run(tmp_path / "run", [_simulation("a", policy="Knowledge policy."), _simulation("b")])
    prompts = {}
    for session in import_sessions("tau2-bench", run):
        (prompt,) = [e for e in session.entries if e.get("customType") == "system-prompt"]
        prompts[session.header["source"]["simulationId"]] = prompt["data"]["content"]
    assert prompts == {"a": "Knowledge policy.", "b": "Run policy."}
