"""A tool pack as data: what the runner knows of a pack without ever importing it.

The runner (the pytest process, `replaylab inspect`, `replaylab init`) needs a pack's tool names,
schemas and declared classes, and for a tool whose class depends on its arguments the answer of
its `class_for(args)`. None of that may run the pack's code in the runner's process: a module can
do anything when it is imported or called — log in to its service, start a thread, a daemon or an
exit hook, patch replaylab's executor, call `os._exit(0)` and leave a green gate that tested
nothing. So the pack is imported in a tool process of its own (mode `describe`: the contained,
network-isolated child of `process.ToolProcess`), which answers with the tools as data, then with
each `class_for` answer, each within a time limit.

Whatever goes wrong there is a `PackFailure` naming the pack (and the tool, for a `class_for`):
an import that fails, exits, hangs or leaves code to run later, a `class_for` that raises, exits,
hangs, returns something other than a class name, or leaves a thread or process behind. The item
is an error (`TOOL_FAILED`), the run goes on, and its exit status and reports say so.

Where no network namespace can be made, the process still runs outside the runner, contained as
far as the machine allows and under the socket guard, and `PackData.unisolated` says why.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from replaylab import children
from replaylab.errors import ReplaylabError
from replaylab.replay.tools.pack import ToolContext, ToolOutput, ToolPack, ToolSpec
from replaylab.replay.tools.process import ToolFailure, ToolProcess

#: starting the process and importing the pack
DESCRIBE_TIMEOUT_S = 60.0
#: one `class_for(args)` answer
CLASS_FOR_TIMEOUT_S = 10.0
#: answers kept per pack, and the longest arguments (as JSON) whose answer is kept
MAX_ANSWERS = 50_000
MAX_ARGS_BYTES = 4_096


class PackFailure(ReplaylabError, RuntimeError):
    """The pack's code misbehaved in its process (see module docstring)."""

    def __init__(self, pack: str, kind: str, detail: str, tool: str | None = None, *, code: str | None = None):
        self.pack, self.kind, self.detail, self.tool, self.code = pack, kind, detail, tool, code
        where = f"tool pack {pack!r}" + (f", tool {tool!r}" if tool else "")
        #: what was wrong, naming the pack (and the tool)
        self.message = (
            detail if kind == "setup" and detail.startswith(("tool pack", "the tool pack")) else f"{where}: {detail}"
        )
        super().__init__(self.message)


def _never_here(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    raise RuntimeError("a tool's code never runs in replaylab's own process")


@dataclass
class PackData(ToolPack):
    """A `ToolPack` whose specs are data from the pack's process; `class_for` asks that process."""

    #: why the pack's process has no network namespace of its own (None: it has one)
    unisolated: str | None = None
    _process: ToolProcess | None = field(default=None, repr=False)
    _answers: dict[tuple[str, bytes], str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def class_for(self, tool: str, args: dict[str, Any]) -> str:
        """The pack's `class_for(args)` for `tool`, from its process (cached by arguments)."""
        key = _answer_key(tool, args)
        if key is not None and key in self._answers:
            return self._answers[key]
        with self._lock:
            answer = self._ask(tool, args)
        if key is not None and len(self._answers) < MAX_ANSWERS:
            self._answers[key] = answer
        return answer

    def _ask(self, tool: str, args: dict[str, Any]) -> str:
        assert self._process is not None
        try:
            if not self._process.ready:
                _started(self._process, self.name)  # again, after a failure ended it
            reply = self._process.request(
                tool, {"op": "class_for", "tool": tool, "args": args}, timeout_s=CLASS_FOR_TIMEOUT_S
            )
        except ToolFailure as failure:
            raise PackFailure(self.name, failure.kind, f"class_for {failure.detail}", tool) from None
        except PackFailure as failure:
            raise PackFailure(self.name, failure.kind, failure.detail, tool, code=failure.code) from None
        value = reply.get("class")
        if isinstance(value, str) and value.strip():
            return value
        raise PackFailure(self.name, "class_for", str(reply.get("error") or f"answered {reply!r}"), tool)

    def close(self) -> None:
        if self._process is not None:
            self._process.close()


def load_pack_data(import_path: str, *, sys_path: Sequence[str] | None = None) -> PackData:
    """The pack `import_path` as data, from a process of its own (see module docstring).
    Raises `PackFailure` naming the pack."""
    isolated = children.containment(True).network
    process = ToolProcess(
        import_path,
        mode="describe",
        isolate_network=isolated,
        call_timeout_s=CLASS_FOR_TIMEOUT_S,
        start_timeout_s=DESCRIBE_TIMEOUT_S,
        sys_path=sys_path,
    )
    ready = _started(process, import_path)
    pack = PackData(
        name=import_path,
        unisolated=None if isolated else children.containment(True).why or "no network namespace",
        _process=process,
    )
    try:
        for tool in ready["tools"]:
            name = str(tool["name"])
            decides = bool(tool.get("has_class_for"))
            pack.tools[name] = ToolSpec(
                name=name,
                description=str(tool.get("description") or ""),
                parameters=tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {},
                tool_class=str(tool["tool_class"]),
                call=_never_here,
                class_for=_decider(pack, name) if decides else None,
            )
    except (KeyError, TypeError, AttributeError) as exc:
        process.close()
        why = f"its process described it in a shape replaylab cannot read ({exc})"
        raise PackFailure(import_path, "protocol", why) from None
    if not pack.tools:
        process.close()  # nothing to ask it: no process kept for the run
    return pack


def pack_data_or_input_error(import_path: str, *, source: str) -> PackData:
    """`load_pack_data` for a command's option: a failure is an `InputError` naming the option."""
    from replaylab.diagnostics import Diagnostic, InputError

    try:
        return load_pack_data(import_path)
    except PackFailure as failure:
        code = failure.code or "toolpack-failed"
        raise InputError([Diagnostic(code=code, file=source, field="tools", message=failure.message)]) from None


def _started(process: ToolProcess, pack: str) -> dict[str, Any]:
    try:
        ready = process.start(pack)
    except ToolFailure as failure:
        if failure.said is not None:  # the process said what was wrong with the pack, naming it
            raise PackFailure(pack, failure.kind, failure.said, code=failure.code) from None
        raise PackFailure(pack, failure.kind, f"its module {failure.detail}") from None
    if not isinstance(ready.get("tools"), list):
        process.close()
        raise PackFailure(pack, "protocol", "its process did not describe its tools")
    return ready


def _decider(pack: PackData, tool: str) -> Any:
    def class_for(args: dict[str, Any]) -> str:
        return pack.class_for(tool, args)

    return class_for


def _answer_key(tool: str, args: dict[str, Any]) -> tuple[str, bytes] | None:
    try:
        text = orjson.dumps(args, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    return (tool, text) if len(text) <= MAX_ARGS_BYTES else None
