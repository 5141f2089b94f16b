"""The `scripted` model (`ScriptedModel`): a YAML script of assistant actions per user turn
(`replaylab.replay.agent.script`), for recording demo sessions against a live service."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.replay.agent.grounding import LostMarkers
from replaylab.replay.agent.model_protocol import LostRecord
from replaylab.replay.turns import Turn
from replaylab.transcript.model import AssistantMessage, TextBlock, ToolCallBlock

if TYPE_CHECKING:
    from replaylab.defects import Defect
    from replaylab.transcript.memo import ItemMemo


class ScriptedModel:
    """Plays a YAML script (`replaylab.replay.agent.script`): per user turn, the listed assistant steps.

    `${ref}` references are resolved against the tool results in the window the model is given.
    `strict=True` (recording) turns an unresolvable reference into an `InputError` naming the
    script line; otherwise (replaying on a compacted window) it becomes a `⟨lost:N⟩` marker,
    numbered over the item like the replay model's (`memo`: the item's).
    Usage is pi's chars/4 estimate (input = the window, output = the message), so a recorded
    session's token counts behave like a real one's.
    """

    name = "scripted"

    def __init__(self, script: Any, *, strict: bool = True, memo: ItemMemo | None = None):
        from replaylab.replay.agent.script import Script, load_script

        self.script: Script = script if isinstance(script, Script) else load_script(script)
        self.strict = strict
        self.turn_index = -1
        self.cursor = 0
        self.aliases: dict[str, tuple[str | None, str]] = {}  # tool call id → (alias, tool)
        self.defects: list[Defect] = []
        # shared with the item's other runs, as the replay model's: one reference, one marker
        self.markers = memo.kept(LostMarkers, LostMarkers) if memo is not None else LostMarkers()
        self.lost: list[LostRecord] = []

    def _script_turn(self, turn: Turn) -> int:
        text = turn.user_text()
        for i, scripted in enumerate(self.script.turns):
            if scripted.user is not None and scripted.user == text and i > self.turn_index:
                return i
        return turn.index

    def begin_turn(self, turn: Turn) -> None:
        self.turn_index = self._script_turn(turn)
        self.cursor = 0

    def max_steps(self, turn: Turn) -> int:
        if 0 <= self.turn_index < len(self.script.turns):
            return len(self.script.turns[self.turn_index].steps)
        return 0

    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage:
        from replaylab.replay.agent.script import Unresolved, substitute
        from replaylab.transcript.tokens import estimate_tokens

        turn = self.script.turns[self.turn_index]
        step = turn.steps[self.cursor]
        step_index = self.cursor
        self.cursor += 1
        part = ["text"]  # what is being substituted: the step's text, then its calls' arguments

        def lookup(ref: str) -> Any:
            try:
                return self._resolve(ref, window)
            except Unresolved as exc:
                if self.strict:
                    raise InputError(
                        [
                            Diagnostic(
                                code="unresolved-reference",
                                file=str(self.script.path),
                                line=step.line,
                                field=f"turns[{self.turn_index}].steps[{step_index}]",
                                message=f"{exc}; expected a result of an earlier call in the window",
                            )
                        ]
                    ) from None
                value = f"${{{ref}}}"  # what the script names: the value itself was never seen
                marker = self.markers(value)
                self.lost.append(LostRecord(self.turn_index, None, value, marker, part[0]))
                return marker

        content: list[Any] = []
        if step.say is not None:
            content.append(TextBlock(text=substitute(step.say, lookup)))
        part[0] = "arg"
        for k, call in enumerate(step.tool_calls):
            call_id = f"call_t{self.turn_index}s{step_index}c{k}"
            content.append(ToolCallBlock(id=call_id, name=call.name, arguments=substitute(call.arguments, lookup)))
            self.aliases[call_id] = (call.alias, call.name)
        message = AssistantMessage(
            content=content,
            api="replaylab-scripted",
            provider="replaylab",
            model=self.script.model or f"scripted/{self.script.name}",
            stop_reason="toolUse" if step.tool_calls else "stop",
        )
        prompt = sum(estimate_tokens(getattr(w, "message", w)) for w in window)
        output = estimate_tokens(message)
        message.usage = {
            "input": prompt,
            "output": output,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": prompt + output,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        return message

    def _resolve(self, ref: str, window: Sequence[Any]) -> Any:
        import orjson

        from replaylab.replay.agent.script import Unresolved, walk
        from replaylab.transcript.model import ToolResultMessage

        name, _, rest = ref.partition(".")
        if "[" in name:
            name, bracket = name.split("[", 1)
            rest_path = "[" + bracket + ("." + rest if rest else "")
        else:
            rest_path = ("." + rest) if rest else ""
        for item in reversed(list(window)):
            message = getattr(item, "message", item)
            if not isinstance(message, ToolResultMessage):
                continue
            alias, tool = self.aliases.get(message.tool_call_id, (None, message.tool_name or ""))
            if name not in (alias, tool):
                continue
            text = (
                message.content
                if isinstance(message.content, str)
                else "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
            )
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                if rest_path:
                    raise Unresolved(ref, f"the result of {name} is not JSON") from None
                return text
            return walk(value, rest_path, ref)
        raise Unresolved(ref, f"no result of {name!r} in the window")
