"""The report line that says whether the windows replaylab judged are the contexts their agents
build themselves (one clause per agent: `window verified against openclaw 2026.9.6: …`)."""

from __future__ import annotations

from replaylab.results import Totals

CODE = "AGENT_CONTEXT_DIFFERS"


def agent_verification_line(totals: Totals) -> str:
    differ = totals.defects_by_code.get(CODE, 0)
    if not totals.passed and not totals.failed and not differ:
        # every item was not exercised, could not compact or erred: no window was made to check
        return "windows not verified against the agents' own code: no item compacted, so there was no window to check"
    if not totals.verified_windows and not differ:
        return "windows not verified against the agents' own code (their oracle is not installed, or the check is off)"
    clauses = [
        f"against {agent}: {count} compacted window{'s' if count != 1 else ''} equal to "
        f"{agent.split(' ', 1)[0]}'s context"
        for agent, count in totals.verified_windows.items()
    ]
    line = "window verified " + "; ".join(clauses) if clauses else "windows verified against no agent"
    return line + (f", {differ} differ ({CODE})" if differ else "")


def agents_line(totals: Totals) -> str:
    """Which agents' rules judged the items: `agents: openclaw@2026.9.6 3 items, pi@0.73.1 62 items`."""
    if not totals.agents:
        return "agents: none"
    return "agents: " + ", ".join(f"{name} {n} item{'s' if n != 1 else ''}" for name, n in totals.agents.items())
