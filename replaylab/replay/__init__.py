"""The replay engine: re-run an agent on a window, with tools served from a cassette.

`split_turns` (turns.py) → `make_model` (agent/models.py: replay / scripted / litellm) →
`ToolExecutor` (tools/fail_closed.py: tools answered from the recording, failing closed) →
`run_turns` (loop.py). `replaylab record` (recorder.py) runs the same loop live
(`LiveToolExecutor`, tools/live.py: each call in the tool process, tools/process.py) to make new
recordings; cassettes/ holds the vcrpy glue and the play state.

Importing this package is cheap: vcrpy, litellm and deepdiff are imported only when a replay,
an LLM call or an argument diff actually happens.
"""

from replaylab.replay.agent.litellm_model import LiteLLMModel
from replaylab.replay.agent.model_protocol import Model, ModelError
from replaylab.replay.agent.models import make_model
from replaylab.replay.agent.replay_model import ReplayModel
from replaylab.replay.agent.scripted_model import ScriptedModel
from replaylab.replay.guard import NetworkBlockedError, socket_guard
from replaylab.replay.loop import WindowTokenCount, recorded_run_trace, run_turns
from replaylab.replay.tools.fail_closed import ToolExecutor
from replaylab.replay.tools.live import LiveToolExecutor
from replaylab.replay.turns import Turn, calls_before, calls_off_path, split_turns

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
    "calls_off_path",
    "make_model",
    "recorded_run_trace",
    "run_turns",
    "WindowTokenCount",
    "socket_guard",
    "split_turns",
]
