"""The replay engine: re-run an agent on a window, with tools served from a cassette.

`split_turns` (turns.py) → `make_model` (models.py: replay / scripted / litellm) →
`ToolExecutor` (fail_closed.py: tools answered from the recording, failing closed) → `run_turns`
(loop.py). `replaylab record` (recorder.py) runs the same loop live (`LiveToolExecutor`,
live_tools.py: each call in the tool process, tool_process.py) to make new recordings.

Importing this package is cheap: vcrpy, litellm and deepdiff are imported only when a replay,
an LLM call or an argument diff actually happens.
"""

from replaylab.replay.fail_closed import ToolExecutor
from replaylab.replay.guard import NetworkBlockedError, socket_guard
from replaylab.replay.live_tools import LiveToolExecutor
from replaylab.replay.loop import WindowTokenCount, recorded_run_trace, run_turns
from replaylab.replay.models import LiteLLMModel, Model, ModelError, ReplayModel, ScriptedModel, make_model
from replaylab.replay.turns import Turn, calls_before, split_turns

__all__ = [
    "LiteLLMModel",
    "LiveToolExecutor",
    "Model",
    "ModelError",
    "NetworkBlockedError",
    "ReplayModel",
    "ScriptedModel",
    "ToolExecutor",
    "Turn",
    "calls_before",
    "make_model",
    "recorded_run_trace",
    "run_turns",
    "WindowTokenCount",
    "socket_guard",
    "split_turns",
]
