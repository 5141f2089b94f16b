"""Tools for `replaylab record`: the tool pack's own implementations against the live service.

The recorder wraps the run in a recording cassette (record mode all), so every HTTP interaction
is captured; this executor only runs the calls and traces them.
"""

from __future__ import annotations

from typing import Any

from replaylab.defects import Defect
from replaylab.replay.toolpack import ToolContext, ToolPack, result_message
from replaylab.replay.trace import ToolCallTrace
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock, ToolResultMessage


class LiveToolExecutor:
    """The pack's implementations against the live service at `base_url` (see module docstring)."""

    def __init__(self, tool_pack: ToolPack, classifier: ToolClassifier, *, base_url: str, session_id: str = ""):
        self.tool_pack = tool_pack
        self.classifier = classifier
        self.ctx = ToolContext(base_url=base_url, session_id=session_id)
        self.defects: list[Defect] = []

    def __enter__(self) -> LiveToolExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def execute(self, call: ToolCallBlock, *, turn: int, step: int) -> tuple[ToolResultMessage, ToolCallTrace]:
        args = dict(call.arguments or {})
        trace = ToolCallTrace(
            turn=turn,
            step=step,
            tool_call_id=call.id,
            tool=call.name,
            arguments=args,
            mutating=self.classifier.is_mutating(call.name, args),
            source="live",
        )
        spec = self.tool_pack.tools.get(call.name)
        if spec is None:
            text, is_error = f"unknown tool {call.name!r}: the tool pack {self.tool_pack.name} has no such tool", True
        else:
            try:
                output = spec.call(args, self.ctx)
                text, is_error = output.text, output.is_error
            except Exception as exc:
                text, is_error = f"tool {call.name!r} failed: {type(exc).__name__}: {exc}", True
        trace.result, trace.is_error = text, is_error
        return result_message(call, text, is_error), trace
