"""τ-bench and τ²-bench files imported with no `tool_classes.json`: each tool of a domain the
benchmark has gets the class its code gives it (`upstream/tau_bench.py`), a `tool_classes.json`
beside the source still decides, and a domain the benchmark does not have is left to the name
rules. The real files are imported the same way, without the classes recorded beside them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from replaylab.importers import import_sessions, write_session
from replaylab.safety.classify import ToolClassifier, is_mutating_class

USER_CALLS = [("run_speed_test", "user"), ("toggle_data", "user"), ("can_send_mms", "user")]
AGENT_CALLS = [("get_customer_by_phone", "assistant"), ("transfer_to_human_agents", "assistant")]


def _tau2_file(folder: Path, domain: str, calls: list[tuple[str, str]]) -> Path:
    messages: list[dict] = []
    for n, (tool, requestor) in enumerate(calls):
        role = "user" if requestor == "user" else "assistant"
        call = {"id": f"call_{n}", "name": tool, "arguments": {}, "requestor": requestor}
        messages.append({"role": role, "content": None, "tool_calls": [call]})
        messages.append({"id": f"call_{n}", "role": "tool", "content": "ok", "requestor": requestor})
    data = {
        "info": {"environment_info": {"domain_name": domain, "policy": "Be kind."}, "agent_info": {"llm": "gpt-4.1"}},
        "simulations": [{"id": f"sim{k}", "messages": messages} for k in range(2)],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{domain}.json"
    path.write_text(json.dumps(data))
    return path


def _tau_file(folder: Path, name: str, tools: list[str]) -> Path:
    traj: list[dict] = [{"role": "system", "content": "policy"}, {"role": "user", "content": "hi"}]
    for n, tool in enumerate(tools):
        call = {"id": f"c{n}", "type": "function", "function": {"name": tool, "arguments": "{}"}}
        traj.append({"role": "assistant", "content": None, "tool_calls": [call]})
        traj.append({"role": "tool", "tool_call_id": f"c{n}", "name": tool, "content": "ok"})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "traj": traj}]))
    return path


def test_a_tau2_domain_gives_its_tools_the_classes_its_code_declares(tmp_path):
    source = _tau2_file(tmp_path / "src", "telecom", USER_CALLS + AGENT_CALLS)
    sessions = list(import_sessions("tau2-bench", source))
    classes = sessions[0].tool_classes
    # by name alone `run_speed_test` mutates (`run`), `can_send_mms` sends and `transfer_to_human_agents` is unknown
    assert {t: classes[t] for t, _ in USER_CALLS + AGENT_CALLS} == {
        "run_speed_test": "read",
        "toggle_data": "write",
        "can_send_mms": "read",
        "get_customer_by_phone": "read",
        "transfer_to_human_agents": "transfer",
    }
    notes = [note for s in sessions for note in s.notes]
    assert len(notes) == 1 and "telecom" in notes[0] and str(source) in notes[0]  # once per file, not per session
    for session in sessions:
        write_session(session, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "tool_classes.json").read_text())
    assert written["run_speed_test"] == "read" and written["toggle_data"] == "write"


def test_a_tool_classes_file_beside_the_source_decides_over_the_benchmark(tmp_path):
    folder = tmp_path / "src"
    source = _tau2_file(folder, "telecom", USER_CALLS)
    (folder / "tool_classes.json").write_text(json.dumps({"run_speed_test": "write"}))
    (session, _) = import_sessions("tau2-bench", source)
    assert session.tool_classes["run_speed_test"] == "write"
    assert session.tool_classes["can_send_mms"] == "read"  # filled in where the file is silent


def test_a_domain_the_benchmark_does_not_have_is_left_to_the_name_rules(tmp_path):
    source = _tau2_file(tmp_path / "src", "no_such_domain", USER_CALLS)
    sessions = list(import_sessions("tau2-bench", source))
    assert sessions[0].tool_classes == {} and not any(s.notes for s in sessions)
    assert ToolClassifier().classify("run_speed_test", {}) == "unknown"


@pytest.mark.parametrize(
    ("domain", "calls", "expected"),
    [
        # by name alone `request_host_decision` and `transfer_to_human_agents` are unknown, so mutating
        (
            "vacation_rental",
            [("request_host_decision", "assistant"), ("validate_issue_evidence", "assistant")],
            {
                "request_host_decision": "read",
                "validate_issue_evidence": "read",
                "submit_issue_report": "write",
                "add_reservation_note": "write",
                "transfer_to_human_agents": "transfer",
                "calculate": "compute",
            },
        ),
        # `give_discoverable_user_tool` is GENERIC with `mutates_state=True`; the user's side has tools too
        (
            "banking_knowledge",
            [("give_discoverable_user_tool", "assistant"), ("call_discoverable_user_tool", "user")],
            {
                "give_discoverable_user_tool": "write",
                "unlock_discoverable_agent_tool": "write",
                "call_discoverable_agent_tool": "write",
                "call_discoverable_user_tool": "write",
                "list_discoverable_user_tools": "read",
                "get_user_information_by_email": "read",
                "log_verification": "write",
                "transfer_to_human_agents": "transfer",
            },
        ),
    ],
)
def test_a_domain_only_the_upstream_repository_has_gets_the_types_its_code_declares(tmp_path, domain, calls, expected):
    """τ²-bench domains newer than the pinned wheel, read from sierra-research/tau2-bench's own
    `tools.py` / `user_tools.py`: each tool's class, and a note naming the commit it was read at."""
    sessions = list(import_sessions("tau2-bench", _tau2_file(tmp_path / "src", domain, calls)))
    classes = sessions[0].tool_classes
    assert {tool: classes.get(tool) for tool in expected} == expected
    assert domain in sessions[0].notes[0] and "sierra-research/tau2-bench@" in sessions[0].notes[0]
    first_tool = calls[0][0]
    assert ToolClassifier(classes).is_mutating(first_tool, {}) == is_mutating_class(expected[first_tool])


def test_a_domain_the_benchmark_does_not_have_takes_the_types_its_evaluator_recorded(tmp_path):
    """τ²-bench writes the `ToolType` of each expected action beside it
    (`reward_info.action_checks[].tool_type`, from the domain's own code): a domain replaylab
    does not know gets them, `verify_identity` a write though its name reads, a generic
    `transfer_to_human_agents` a transfer; a tool recorded with two types is left to the name
    rules, and a known domain keeps its pinned classes."""
    source = _tau2_file(tmp_path / "src", "banking_ru", [("verify_identity", "assistant"), ("lookup", "assistant")])
    data = json.loads(source.read_text())
    checks = [
        {"action": {"name": "verify_identity", "arguments": {}}, "tool_type": "write"},
        {"action": {"name": "transfer_to_human_agents", "arguments": {}}, "tool_type": "generic"},
        {"action": {"name": "give_discoverable_user_tool", "arguments": {}}, "tool_type": "generic"},
        {"action": {"name": "lookup", "arguments": {}}, "tool_type": "read"},
    ]
    data["simulations"][0]["reward_info"] = {"reward": 1.0, "action_checks": checks}
    data["simulations"][1]["reward_info"] = {"action_checks": [{**checks[3], "tool_type": "write"}]}
    source.write_text(json.dumps(data))
    sessions = list(import_sessions("tau2-bench", source))
    assert sessions[0].tool_classes == {"verify_identity": "write", "transfer_to_human_agents": "transfer"}
    assert "evaluator recorded" in sessions[0].notes[0]
    assert ToolClassifier(sessions[0].tool_classes).classify("verify_identity", {}) == "write"
    # a known domain: its pinned code decides, whatever a file records
    known = _tau2_file(tmp_path / "known", "telecom", USER_CALLS)
    data = json.loads(known.read_text())
    data["simulations"][0]["reward_info"] = {
        "action_checks": [{"action": {"name": "run_speed_test"}, "tool_type": "write"}]
    }
    known.write_text(json.dumps(data))
    assert next(iter(import_sessions("tau2-bench", known))).tool_classes["run_speed_test"] == "read"


@pytest.mark.parametrize(
    ("name", "tools", "expected"),
    [
        # the file name gives the domain: every tool of it, called or not
        ("gpt-4o-retail.json", ["think"], {"think": "think", "modify_user_address": "write"}),
        # no domain in the name: the only domain with every called tool
        ("run.json", ["get_order_details", "calculate"], {"get_order_details": "read", "calculate": "compute"}),
        # tools both domains have, and agree on
        ("run.json", ["get_user_details", "transfer_to_human_agents"], {"transfer_to_human_agents": "transfer"}),
    ],
)
def test_a_tau_bench_file_gets_the_classes_of_its_domain(tmp_path, name, tools, expected):
    (session,) = import_sessions("tau-bench", _tau_file(tmp_path / "src", name, tools))
    assert {t: session.tool_classes.get(t) for t in expected} == expected
    assert len(session.notes) == 1


def test_a_tau_bench_file_calling_a_tool_no_domain_has_is_left_to_the_name_rules(tmp_path):
    (session,) = import_sessions("tau-bench", _tau_file(tmp_path / "src", "run.json", ["get_order_details", "ping"]))
    assert session.tool_classes == {} and not session.notes


@pytest.mark.realdata
@pytest.mark.parametrize("benchmark", ["tau-bench", "tau2-bench"])
def test_the_real_files_need_no_recorded_classes(shared_data, tmp_path, benchmark):
    """Every call of the real files, imported with an empty `tool_classes.json` instead of the one
    recorded beside them, gets the recorded class: the benchmark's code alone is enough."""
    empty = tmp_path / "none.json"
    empty.write_text("{}")
    compared: Counter[bool] = Counter()
    for source in sorted((shared_data / benchmark).rglob("*.json")):
        if source.name.startswith("tool_classes") or source.name == "stats.json":
            continue
        recorded = json.loads((source.parent / "tool_classes.json").read_text())
        for session in import_sessions(benchmark, source, tool_classes=empty):
            for entry in session.entries:
                for block in entry.get("message", {}).get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "toolCall" and block["name"] in recorded:
                        got = session.tool_classes.get(block["name"])
                        assert got == recorded[block["name"]], (source.name, block["name"], got)
                        compared[is_mutating_class(got)] += 1
    assert compared[True] > 200 and compared[False] > 500, compared
