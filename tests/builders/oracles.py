"""What the run's shared agent oracles are doing, for the tests that watch when they start."""

from __future__ import annotations


def running_oracles() -> set[str]:
    """The profiles whose shared oracle process (`replaylab.checks.agent_window`) is running."""
    from replaylab.checks import agent_window

    return {
        name
        for name, oracle in agent_window._SHARED.oracles.items()
        if oracle._process is not None and oracle._process.poll() is None
    }


def oracles_asked_ahead() -> set[str]:
    """The profiles whose shared oracle has a request in flight: sent, its answer not read yet."""
    from replaylab.checks import agent_window

    return {name for name, oracle in agent_window._SHARED.oracles.items() if oracle._in_flight is not None}
