"""Tools for `replaylab record`: the tool pack's own implementations against the live service.

Each call runs in the tool process (`tool_process`, mode `record`), not in replaylab's: a tool
that exits, hangs or leaves a thread running fails the recording with a `ToolFailure` naming
it (nothing is written), instead of ending `replaylab record` with exit 0 and no files, or
leaving a side effect to fire later. The process captures the call's HTTP with vcrpy (record
mode all); each interaction comes back tagged with the call that made it (`interaction_tags`),
so replay knows a call's HTTP without running it again. A call the socket guard stopped from
leaving the machine fails the recording too: only the pack's loopback service may answer.
"""

from __future__ import annotations

from typing import Any

from replaylab.defects import Defect
from replaylab.replay.cassettes.interaction_tags import tagged
from replaylab.replay.tools.pack import ToolPack, result_message
from replaylab.replay.tools.process import DEFAULT_CALL_TIMEOUT_S, ToolFailure, ToolProcess
from replaylab.replay.trace import ToolCallTrace
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock, ToolResultMessage


class LiveToolExecutor:
    """The pack's implementations against the live service at `base_url` (see module docstring).
    `process`: a tool process to share (a session and its sub-agents); else one of its own,
    ended by `close()`."""

    def __init__(
        self,
        tool_pack: ToolPack,
        classifier: ToolClassifier,
        *,
        base_url: str,
        session_id: str = "",
        process: ToolProcess | None = None,
        tool_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    ):
        self.tool_pack = tool_pack
        self.classifier = classifier
        self.base_url, self.session_id = base_url, session_id
        self.defects: list[Defect] = []
        self._owned = process is None
        self.process = process or ToolProcess(tool_pack.name, mode="record", call_timeout_s=tool_timeout_s)
        #: the HTTP interactions the calls made, in order, each tagged with its call
        self.interactions: list[dict[str, Any]] = []

    def __enter__(self) -> LiveToolExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def close(self) -> None:
        if self._owned:
            self.process.close()

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
        if call.name not in self.tool_pack.tools:
            text, is_error = f"unknown tool {call.name!r}: the tool pack {self.tool_pack.name} has no such tool", True
        else:
            text, is_error = self._run(call, args)
        trace.result, trace.is_error = text, is_error
        return result_message(call, text, is_error), trace

    def _run(self, call: ToolCallBlock, args: dict[str, Any]) -> tuple[str, bool]:
        reply = self.process.call(call.name, args, {"base_url": self.base_url, "session_id": self.session_id})
        interactions = reply.get("interactions")
        if not isinstance(interactions, list) or not all(isinstance(i, dict) for i in interactions):
            raise ToolFailure(call.name, "protocol", "answered without the HTTP interactions it made")
        self.interactions.extend(tagged(interaction, call.id, call.name) for interaction in interactions)
        blocked = reply.get("blocked") or []
        if blocked:
            event, target = (list(blocked[0]) + ["", ""])[:2]
            raise ToolFailure(
                call.name,
                "network",
                f"tried to reach {target} ({event}); the socket guard blocked it — a recording may reach only "
                "the tool pack's loopback service",
            )
        if "error" in reply:
            return f"tool {call.name!r} failed: {reply['error']}", True
        text, is_error = reply.get("text"), reply.get("is_error")
        if not isinstance(text, str) or not isinstance(is_error, bool):
            raise ToolFailure(call.name, "protocol", "answered without a text result")
        return text, is_error
