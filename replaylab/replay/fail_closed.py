"""Tools during replay: served from the session's cassette, failing closed (`ToolExecutor`).

Every call is answered from a `Playback` of the session's cassette (record mode none, method +
path + query + canonical body, no playback repeats), with the socket guard active. A tool the
tool pack has runs its own implementation (real HTTP through urllib to `ctx.base_url`) under
vcrpy's patches, installed over a vcrpy cassette sharing the playback's state; a tool the pack
does not have (imported sessions) is the generic recorded-tool client (`recorded_tool`), whose
request is served here by its key alone, without HTTP or vcrpy (`_serve_recorded`). Nothing can
go live: a request the cassette cannot serve raises inside vcrpy before any connection is made,
and a non-loopback connect raises in the guard.

Outcomes per call (`ToolCallTrace.source`):

* `cassette` — every HTTP request of the call was served from the cassette.
* `blocked` — a **mutating** call (classifier) asked for something the cassette does not hold.
  It is answered with an error tool result and reported: `DUPLICATE_SIDE_EFFECT` when the same
  tool + canonical arguments is in `executed_before` (its interaction was already played before
  the compaction point, so a second one would repeat the side effect), else
  `SIDE_EFFECT_ESCAPED` with the nearest recorded call and a key-order-insensitive JSON diff of
  the arguments (`nearest_call`).
* `missing` — a **read** call with no recorded response. Decision: this is *not*
  `CASSETTE_MISSING`. A read whose arguments changed (a value lost to compaction) is the agent
  behaving differently — a divergence the diff reports as `TOOL_SEQUENCE_DIVERGED` — not broken
  infrastructure; calling it an infrastructure error would turn every real regression into a
  JUnit `<error>` and hide it. The agent gets an error tool result ("no recorded response for
  this call") and the run goes on. `CASSETTE_MISSING` is reserved for a cassette file that does
  not exist (reported once, at construction), for a litellm LLM-cassette miss (`models.py`) and
  for a tool whose implementation tried to go live and was stopped by the socket guard
  (`blocked`: its non-HTTP traffic or DNS lookup can never be answered from a cassette).

Evidence check: a call of a tool the classifier calls non-mutating whose HTTP (played or
attempted) is a write — POST / PUT / PATCH / DELETE to an endpoint that is neither a query
endpoint (`QUERY_ENDPOINT_RE`) nor the recorded-tool endpoint `/tools/` — is reported
`MISLABELLED_TOOL` (once per tool).

`executed_before`: (tool, arguments) of the calls made before the replay's starting point, in
order (`turns.calls_before(path[:cut])`). Each is played against the cassette at construction,
so its interactions count as already used — the replay after the cut is then served exactly the
responses the recording got after the cut (a read repeated after a write gets the later
answer), and a repeat of an earlier *mutating* call finds nothing left: `DUPLICATE_SIDE_EFFECT`.
Passing only the mutating calls (the minimal contract) is also accepted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from replaylab.cassette import RECORDED_TOOL_PATH, REPLAY_BASE_URL, canonical_json
from replaylab.defects import Code, Defect
from replaylab.replay.guard import NetworkBlockedError, blocked_attempts, socket_guard
from replaylab.replay.nearest_call import diff_paths, nearest_call
from replaylab.replay.playback import Playback, describe_request, open_playback
from replaylab.replay.recorded_tool import recorded_tool_key, recorded_tool_output, recorded_tool_request
from replaylab.replay.toolpack import ToolContext, ToolOutput, ToolPack, result_message
from replaylab.replay.trace import ToolCallTrace
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock, ToolResultMessage

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: endpoints that answer a query even when POSTed to (search APIs, GraphQL, RPC-style getters)
QUERY_ENDPOINT_RE = re.compile(
    r"(?:^|/)(?:_?m?search|query|graphql|find|lookup|list|get|fetch|count|_count)(?:[/_.\-]|$)", re.I
)
BLOCKED_TEXT = (
    "replaylab blocked this call: no recorded response matches this call of the mutating tool "
    "{tool!r}; replay never executes a side effect live"
)
DUPLICATE_TEXT = (
    "replaylab blocked this call: {tool!r} with these arguments was already executed before the "
    "replay's starting point; executing it again would repeat a side effect"
)
MISSING_TEXT = "no recorded response for this call (tool {tool!r}); the recording never made it"
NO_CASSETTE_TEXT = "no cassette for this session; replaylab cannot answer tool {tool!r}"
NETWORK_BLOCKED_TEXT = (
    "replaylab blocked this call: tool {tool!r} tried to reach {target} during replay; replay "
    "never leaves the machine (only the cassette and loopback addresses answer)"
)


def is_write_request(method: str, path: str) -> bool:
    """HTTP evidence of a side effect: a write method to a non-query, non-recorded-tool endpoint."""
    if method.upper() not in WRITE_METHODS:
        return False
    path = path or "/"
    if path.startswith(RECORDED_TOOL_PATH):
        return False
    return not QUERY_ENDPOINT_RE.search(path)


def _args_key(name: str, args: Any) -> str:
    return name + "\x00" + canonical_json(args)


class ToolExecutor:
    """Cassette-backed tools that fail closed (see module docstring). Use as a context manager
    around a run (`run_turns` does) so vcrpy's patches are installed once, not per call."""

    def __init__(
        self,
        cassette: Path | str,
        classifier: ToolClassifier,
        *,
        tool_pack: ToolPack | None = None,
        executed_before: Sequence[tuple[str, dict[str, Any]]] = (),
        recorded_calls: Sequence[tuple[str, dict[str, Any]]] = (),
        base_url: str = REPLAY_BASE_URL,
        session_id: str = "",
        _resume: tuple | None = None,
    ):
        """`_resume`: `fresh`'s (interactions, state after construction) of an executor built with
        the same arguments; used when this one's playback has the very same parsed interactions."""
        self.cassette_path = Path(cassette)
        self._executed_before = list(executed_before)  # for `fresh`
        self.classifier = classifier
        self.tool_pack = tool_pack
        self.ctx = ToolContext(base_url=base_url, session_id=session_id)
        self.defects: list[Defect] = []
        self.recorded_calls = list(recorded_calls)
        self._stack: ExitStack | None = None
        self._patched = False
        self._depth = 0
        self._mislabelled: set[str] = set()
        self.cassette: Playback | None = None
        if not self.cassette_path.is_file():
            self.defects.append(
                Defect.of(
                    Code.CASSETTE_MISSING,
                    f"cassette {self.cassette_path} does not exist: no tool call of this "
                    "session can be answered (every mutating call is blocked)",
                    expected=str(self.cassette_path),
                )
            )
        else:
            self.cassette = open_playback(self.cassette_path)
        self._before: dict[str, int] = {}
        if _resume is not None and self.cassette is not None and self.cassette.data is _resume[0]:
            self._restore(_resume[1])
        else:
            with self:
                for name, args in self._executed_before:
                    if self.classifier.is_mutating(name, args):
                        key = _args_key(name, args)
                        self._before[key] = self._before.get(key, 0) + 1
                    self._consume(name, dict(args))
        self._initial = self._state()

    def fresh(self) -> ToolExecutor:
        """A new executor equal to this one right after its construction (same cassette file,
        classifier, pack, calls before the starting point, base URL), whatever this one ran since.

        Why: the pipeline replays an item twice (baseline, compacted run) from the same starting
        point, and constructing the second executor would play every earlier call against the
        cassette again to reach the state the first one started from. `fresh` copies that state
        instead (play counts and order, `executed_before` counts, construction findings) onto a
        new playback of the same parsed interactions. When the file changed since (size, mtime)
        or is gone, the new executor is constructed from scratch, as the constructor would."""
        return type(self)(
            self.cassette_path,
            self.classifier,
            tool_pack=self.tool_pack,
            executed_before=self._executed_before,
            recorded_calls=self.recorded_calls,
            base_url=self.ctx.base_url,
            session_id=self.ctx.session_id,
            _resume=(self.cassette.data if self.cassette is not None else None, self._initial),
        )

    def _state(self) -> tuple:
        """What construction sets up and a run changes (all copied: the state is kept unchanged)."""
        return (
            self.cassette.state() if self.cassette is not None else None,
            dict(self._before),
            list(self.defects),
            set(self._mislabelled),
            list(self.cassette.misses) if self.cassette is not None else None,
        )

    def _restore(self, state: tuple) -> None:
        cassette_state, before, defects, mislabelled, misses = state
        assert self.cassette is not None
        self.cassette.restore(cassette_state)
        self.cassette.misses[:] = misses
        self._before = dict(before)
        self.defects = list(defects)
        self._mislabelled = set(mislabelled)

    # -- context: patches + socket guard, once per run

    def __enter__(self) -> ToolExecutor:
        if self._depth == 0:
            stack = ExitStack()
            stack.enter_context(socket_guard())
            self._stack = stack
            self._patched = False
        self._depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        if self._depth == 0 and self._stack is not None:
            self._stack.close()
            self._stack = None
            self._patched = False

    def _ensure_patched(self) -> None:
        """vcrpy's patches, installed on the first pack-tool call of a run (installing them is not
        free; recorded-tool calls never need them, nor vcrpy), over a vcrpy cassette sharing the
        playback's state."""
        if not self._patched and self._stack is not None and self.cassette is not None:
            from replaylab.replay.vcr_session import IndexedCassette, patched  # imports vcrpy: heavy

            self._stack.enter_context(patched(IndexedCassette.over(self.cassette)))
            self._patched = True

    # -- running calls

    def _implementation(self, name: str):
        spec = self.tool_pack.tools.get(name) if self.tool_pack else None
        if spec is not None:

            def run_pack_tool(args: dict[str, Any]) -> ToolOutput:
                self._ensure_patched()
                return spec.call(args, self.ctx)

            return run_pack_tool
        return lambda args: self._serve_recorded(name, args)

    def _serve_recorded(self, name: str, args: dict[str, Any]) -> ToolOutput | None:
        """The recorded-tool request (`recorded_tool`'s exact POST), served from the playback by
        its `request_key` without the HTTP stack or vcrpy: same matching, same play counts, and
        far cheaper than urllib under vcrpy's patches (whose connection stub re-patches every
        client module per request).

        A miss is recorded in `cassette.misses` (the request `recorded_tool` would have sent)
        and gives None: `execute` answers every call with a miss from the misses."""
        assert self.cassette is not None
        index = self.cassette.play_key_index(recorded_tool_key(name, args))
        if index is None:
            self.cassette.misses.append(recorded_tool_request(name, args))
            return None
        text, response = self.cassette.response_text(index)  # the loaded text: no bytes round trip
        return recorded_tool_output(text, response)

    def _consume(self, name: str, args: dict[str, Any]) -> None:
        """Play an earlier call against the cassette so its interactions count as used."""
        if self.cassette is None:
            return
        spec = self.tool_pack.tools.get(name) if self.tool_pack else None
        if spec is None:  # recorded-tool endpoint: the request is known, mark it without HTTP
            self.cassette.play_key_index(recorded_tool_key(name, args))
            return
        misses = len(self.cassette.misses)
        try:
            self._implementation(name)(args)
        except Exception:
            pass
        del self.cassette.misses[misses:]

    def execute(self, call: ToolCallBlock, *, turn: int, step: int) -> tuple[ToolResultMessage, ToolCallTrace]:
        name, args = call.name, dict(call.arguments or {})
        mutating = self.classifier.is_mutating(name, args)
        trace = ToolCallTrace(turn=turn, step=step, tool_call_id=call.id, tool=name, arguments=args, mutating=mutating)
        if self.cassette is None:
            text = NO_CASSETTE_TEXT.format(tool=name)
            return self._finish(call, trace, text, True, "blocked" if mutating else "missing")
        misses_before, played_before = len(self.cassette.misses), len(self.cassette.played)
        attempts_before = len(blocked_attempts)  # the guard's record: seen even when the tool swallows the error
        error: BaseException | None = None
        output: ToolOutput | None = None
        with self:
            try:
                output = self._implementation(name)(args)
            except Exception as exc:
                error = exc
        misses = self.cassette.misses[misses_before:]
        played = self.cassette.played[played_before:]
        self._check_evidence(call, mutating, played, misses, turn)
        if len(blocked_attempts) > attempts_before:
            return self._network_blocked(call, trace, mutating, blocked_attempts[attempts_before:], turn)
        if misses or _is_cassette_miss(error):  # a recorded-tool miss (no output) always has its miss
            return self._unserved(call, trace, args, mutating, misses, turn)
        if error is not None:
            source = "blocked" if isinstance(error, NetworkBlockedError) else "cassette"
            return self._finish(call, trace, f"tool {name!r} failed: {type(error).__name__}: {error}", True, source)
        assert output is not None
        return self._finish(call, trace, output.text, output.is_error, "cassette")

    def _network_blocked(
        self, call: ToolCallBlock, trace: ToolCallTrace, mutating: bool, attempts: list[tuple[str, str]], turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """The tool's implementation tried to go live (a non-HTTP client, a DNS lookup, a client vcrpy
        does not patch) and the socket guard stopped it. Read or mutating, the cause is the tool
        pack, not compaction: the cassette cannot answer what the tool does — an infrastructure
        error (CASSETTE_MISSING), reported in the baseline run already."""
        event, target = attempts[0]
        kind = "mutating tool" if mutating else "tool"
        self.defects.append(
            Defect.of(
                Code.CASSETTE_MISSING,
                f"{kind} {call.name} tried to reach {target} ({event}) during replay; the socket guard blocked it "
                "before anything left the machine (replay may use only the cassette and loopback addresses)",
                expected="cassette or loopback only",
                actual=[f"{e} {t}" for e, t in attempts[:5]],
                turn=turn,
                tool_call_id=call.id,
                tool=call.name,
            )
        )
        return self._finish(call, trace, NETWORK_BLOCKED_TEXT.format(tool=call.name, target=target), True, "blocked")

    def _finish(
        self, call: ToolCallBlock, trace: ToolCallTrace, text: str, is_error: bool, source: str
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        trace.result, trace.is_error, trace.source = text, is_error, source  # type: ignore[assignment]
        return result_message(call, text, is_error), trace

    def _unserved(
        self, call: ToolCallBlock, trace: ToolCallTrace, args: dict[str, Any], mutating: bool, misses: list, turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        name = call.name
        if not mutating:
            return self._finish(call, trace, MISSING_TEXT.format(tool=name), True, "missing")
        key = _args_key(name, args)
        request = describe_request(misses[0]) if misses else {}
        if self._before.get(key):
            self.defects.append(
                Defect.of(
                    Code.DUPLICATE_SIDE_EFFECT,
                    f"{name} was called again with the same arguments as a call already executed before the "
                    "replay's starting point; the repeat was blocked",
                    expected="executed once",
                    actual={"tool": name, "arguments": args},
                    detail={"request": request},
                    turn=turn,
                    tool_call_id=call.id,
                    tool=name,
                )
            )
            return self._finish(call, trace, DUPLICATE_TEXT.format(tool=name), True, "blocked")
        nearest, diff = nearest_call(name, args, misses[0] if misses else None, self.cassette, self.recorded_calls)
        self.defects.append(
            Defect.of(
                Code.SIDE_EFFECT_ESCAPED,
                f"mutating call {name} has no recorded match (blocked, never executed)"
                + (
                    f"; nearest recorded call differs in {', '.join(diff_paths(diff)) or 'its arguments'}"
                    if nearest
                    else "; the recording has no call of this tool"
                ),
                expected=nearest,
                actual={"tool": name, "arguments": args},
                detail={"diff": diff, "request": request},
                turn=turn,
                tool_call_id=call.id,
                tool=name,
            )
        )
        return self._finish(call, trace, BLOCKED_TEXT.format(tool=name), True, "blocked")

    # -- evidence

    def _check_evidence(self, call: ToolCallBlock, mutating: bool, played: list[int], misses: list, turn: int) -> None:
        if mutating or call.name in self._mislabelled:
            return
        # a played interaction's method and path are in its index key as `is_write_request` reads
        # them (upper-cased, "/" for none): its vcrpy `Request` is built only when it is a write
        keys = getattr(self.cassette.data, "keys", None)
        if keys is not None:
            played = [i for i in played if is_write_request(keys[i][0], keys[i][1])]
        requests = [self.cassette.data[i][0] for i in played] + list(misses)
        writes = [r for r in requests if is_write_request(r.method, r.path)]
        if writes:
            self._mislabelled.add(call.name)
            self.defects.append(
                Defect.of(
                    Code.MISLABELLED_TOOL,
                    f"tool {call.name} is classified {self.classifier.classify(call.name, call.arguments)!r} "
                    f"({self.classifier.source(call.name)}), but its recorded HTTP is a write: "
                    f"{writes[0].method} {writes[0].path}",
                    expected="no write requests",
                    actual=[f"{r.method} {r.path}" for r in writes],
                    turn=turn,
                    tool_call_id=call.id,
                    tool=call.name,
                )
            )


def _is_cassette_miss(error: BaseException | None) -> bool:
    if error is None:
        return False
    from replaylab.replay.vcr_session import cassette_miss  # imports vcrpy: heavy, and only a failed call needs it

    return cassette_miss(error) is not None
