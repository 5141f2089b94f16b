"""τ²-bench results files made at random, for the importer's fuzz."""

from __future__ import annotations

import random
from typing import Any

#: tools of τ²-bench's airline domain (a read, a write, the transfer) and one no domain has
TOOLS = ("get_user_details", "cancel_reservation", "transfer_to_human_agents", "frobnicate")


def random_tau2_results(rnd: random.Random) -> dict[str, Any]:
    """A results object of one to three simulations whose messages are drawn from what τ²-bench
    writes and what it never would: roles, contents, tool calls and their arguments of every
    shape, results answering calls that exist or not, by the agent or the user."""
    calls = [f"c{n}" for n in range(3)]

    def call() -> dict[str, Any]:
        arguments = rnd.choice([{"user_id": "mia_li_3668"}, "{}", "{bad", None, [1]])
        return {"id": rnd.choice(calls), "name": rnd.choice(TOOLS), "arguments": arguments}

    def message() -> dict[str, Any]:
        role = rnd.choice(["assistant", "user", "tool", "system", None, "assistant"])
        made: dict[str, Any] = {"role": role, "content": rnd.choice([None, "hi", "", ["x"], {"a": 1}, "Let me check"])}
        if role in ("assistant", "user") and rnd.random() < 0.5:
            made["tool_calls"] = rnd.choice([None, [], [call() for _ in range(rnd.randint(1, 3))], "nope"])
            made["requestor"] = rnd.choice(["user", "assistant", None])
        if role == "tool":
            made |= {"id": rnd.choice([*calls, None]), "requestor": rnd.choice(["user", "assistant"])}
            made["error"] = rnd.choice([True, False, None])
        if rnd.random() < 0.3:
            made["timestamp"] = rnd.choice(["2025-01-01T00:00:00", "x", None, 5])
        return made

    simulations: list[Any] = []
    for n in range(rnd.randint(1, 3)):
        whole = {
            "id": f"s{n}",
            "task_id": rnd.choice(["t1", None, 3]),
            "messages": [message() for _ in range(rnd.randint(0, 10))],
        }
        simulations.append(rnd.choice([whole, whole, {"id": f"s{n}"}, None, "x"]))
    domain = rnd.choice(["airline", "retail", "telecom", "mock", None])
    info = {"environment_info": {"domain_name": domain, "policy": rnd.choice(["p", None, 3])}}
    info["agent_info"] = {"llm": rnd.choice(["gpt-4.1", None, 5])}
    return {"timestamp": "t", "info": rnd.choice([info, info, None, {}]), "tasks": [], "simulations": simulations}
