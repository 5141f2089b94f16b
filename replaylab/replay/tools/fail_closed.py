"""Tools during replay: answered from the recording, failing closed (`ToolExecutor`).

Decisions, and why:

* **No tool pack code runs in replay, unless a suite opts read tools in.** A tool's code can do
  anything — append to a file, open a raw socket, `asyncio.open_connection`, call libc through
  `ctypes`, run `curl` or `os.system`, start a thread that fires after the call returned — and
  vcrpy sees only the HTTP of the clients it patches, the socket guard only what goes through
  Python's `socket` module in this process. So a call of a pack tool is answered with the result
  the recording holds for the same tool and canonical arguments (`recorded_results`: the
  transcript's tool results on the leaf path, each once, in recorded order), as an imported
  session's calls are. A mutating tool's code never runs in any replay, baseline or compacted.
* **Tools the pack does not have** (imported sessions, a recorded sub-agent spawn) are answered
  from the cassette's recorded-tool interactions (`recorded_tool`), by request key, without HTTP.
* **Live read tools** (suite `live_read_tools: true`): a read tool's own code runs, in the tool
  process (`tool_process`) inside a network namespace of its own, its HTTP served by vcrpy from
  the cassette at this replay's play state, with the socket guard there as a second line. Where
  no namespace can be made, the call is refused, never run with the guard alone: the suite asked
  for isolation. Mutating tools are answered from the recording all the same.
* **Calls before the replay's starting point** (`executed_before`) are marked played from the
  recording — their recorded results and the HTTP interactions the recorder tagged with them —
  never executed: the replay after the cut is served what the recording got after the cut (a
  read repeated after a write gets the later answer), and a repeat of an earlier mutating call
  finds nothing left (`DUPLICATE_SIDE_EFFECT`). Passing only the mutating calls is accepted.
* **Calls off the leaf path** (an abandoned branch of the file, `file_calls`) are marked played
  too: an imported cassette holds every answered call of the file in file order, so a call the
  path repeats from an abandoned branch would else be served the branch's answer, and a repeat of
  it the path's own.

Outcomes per call (`ToolCallTrace.source`). A call mutates as the ledger judges the recording's calls
of the same tool and arguments where their results record what they called (`recorded_judgement`: a
pi `codemode` call whose recorded nested calls only read is a read), else as the classifier says:

* `cassette` — answered from what was recorded: the transcript's result, the cassette's
  recorded-tool interaction, or (live read tools) every HTTP request served from the cassette.
* `blocked` — a **mutating** call with no recorded answer left. It is answered with an error tool
  result and reported: `DUPLICATE_SIDE_EFFECT` when the same tool + canonical arguments is in
  `executed_before`, else `SIDE_EFFECT_ESCAPED`. Either is reported against the call the recorded
  agent made at the same turn and step (EXPECTED, with the differing leaves), never against
  whichever recorded call looks most alike: that one, `nearest_call`, is a separately labelled
  hint saying what differs (method, arguments, result). Also a live read tool
  stopped by the guard, or one that failed (below).
* `missing` — a **read** call with no recorded answer. Decision: this is *not*
  `CASSETTE_MISSING`. A read whose arguments changed (a value lost to compaction) is the agent
  behaving differently — a divergence the diff reports as `TOOL_SEQUENCE_DIVERGED` — not broken
  infrastructure; calling it an infrastructure error would turn every real regression into a
  JUnit `<error>` and hide it. The agent gets an error tool result ("no recorded response for
  this call") and the run goes on. `CASSETTE_MISSING` is reserved for a cassette file that does
  not exist (reported once, at construction), for a litellm LLM-cassette miss (`litellm_model.py`) and
  for a live read tool the socket guard stopped from going live (its non-HTTP traffic or DNS
  lookup can never be answered from a cassette).

`TOOL_FAILED` (infrastructure): a live read tool that ended its process, hung past its time limit,
left threads running, answered outside the protocol, or could not be isolated; or whose cassette
has HTTP but no tool-call tags (its earlier calls' HTTP cannot be marked played, so it could be
served an answer the recording gave before the cut). The item is an error naming the tool; the
run goes on and its reports are written.

Evidence check (`evidence`): a call of a tool the classifier calls non-mutating whose recorded
HTTP is a write is reported `MISLABELLED_TOOL` (once per tool). The HTTP is the recording's: the
interactions the recorder tagged with the recorded call that answered it (`interaction_tags`),
plus what a live read tool's code asked for. A cassette without tags gives no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

from replaylab.cassette import REPLAY_BASE_URL
from replaylab.defects import Code, Defect
from replaylab.differences import Differences, differences
from replaylab.replay.cassettes.playback import Playback, describe_request, open_playback
from replaylab.replay.guard import socket_guard
from replaylab.replay.tools.evidence import mislabelled
from replaylab.replay.tools.live_read_reply import reply_traffic
from replaylab.replay.tools.nearest_call import Nearest, hint_summary, nearest_call
from replaylab.replay.tools.off_path import off_path_interactions
from replaylab.replay.tools.pack import ToolOutput, ToolPack, result_message
from replaylab.replay.tools.process import DEFAULT_CALL_TIMEOUT_S, ToolFailure, ToolProcess
from replaylab.replay.tools.recorded_judgement import RecordedJudgement
from replaylab.replay.tools.recorded_results import RecordedResult, RecordedResults, call_key
from replaylab.replay.tools.recorded_tool import (
    is_recorded_tool_key,
    recorded_tool_key,
    recorded_tool_output,
    recorded_tool_request,
    same_recorded_text,
)
from replaylab.replay.trace import ToolCallTrace
from replaylab.safety.classify import ToolClassifier
from replaylab.scrub import scrub_text
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id()
from replaylab.transcript.model import ToolCallBlock, ToolResultMessage
from replaylab.upstream.pi_0_73_1 import ORPHAN_TOOL_RESULT_TEXT

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
FAILED_TEXT = "replaylab could not run tool {tool!r}: {detail}"
_Answer = RecordedResult | None


class _Sent(NamedTuple):
    """A recorded request as the evidence check reads it."""

    method: str
    path: str


class ToolExecutor:
    """Tools answered from the recording, failing closed (see module docstring). Use as a context
    manager around a run (`run_turns` does): the socket guard is active inside. `close()` ends the
    tool process of live read tools, shared with every `fresh` copy."""

    def __init__(
        self,
        cassette: Path | str,
        classifier: ToolClassifier,
        *,
        tool_pack: ToolPack | None = None,
        recorded: RecordedResults | None = None,
        executed_before: Sequence[tuple[str, dict[str, Any]]] = (),
        recorded_calls: Sequence[tuple[str, dict[str, Any]]] = (),
        file_calls: Sequence[tuple[str, dict[str, Any], bool]] = (),
        base_url: str = REPLAY_BASE_URL,
        session_id: str = "",
        live_read_tools: bool = False,
        tool_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        judged: RecordedJudgement | None = None,
        _shared: tuple | None = None,
    ):
        """`recorded`: the recording's results (`RecordedResults.of(leaf path)`), which answer the
        pack's tools (this executor plays its own copy). `_shared`: `fresh`'s (interactions,
        recorded results, state after construction, tool process, result messages) of an executor
        built with the same arguments. `file_calls`: the answered calls of the recording's file, in file order, of
        every request a call off the leaf path made, each with whether it is on the path
        (`calls_off_path`). `judged`: whether a call mutates, by the recording's records of the calls
        the same call made (`RecordedJudgement.of`; None: by those of `recorded`'s path)."""
        self.cassette_path = Path(cassette)
        self._executed_before = list(executed_before)  # for `fresh`
        self._file_calls = list(file_calls)
        self.classifier = classifier
        self.tool_pack = tool_pack
        self.base_url, self.session_id = base_url, session_id
        self.live_read_tools = live_read_tools
        self.tool_timeout_s = tool_timeout_s
        # a play state of its own over the recorded results, whatever the caller's has played
        self.recorded = (recorded if recorded is not None else RecordedResults(())).restored(frozenset())
        self.recorded_calls = list(recorded_calls) or self.recorded.calls()
        self.judged = judged if judged is not None else RecordedJudgement.of_recording(classifier, self.recorded)
        self._calls_by_tool: dict[str, list[tuple[str, dict[str, Any]]]] | None = None
        self.defects: list[Defect] = []
        self._stack: ExitStack | None = None
        self._depth = 0
        self._mislabelled: set[str] = set()
        self._refusal_reported = False
        # (turn, step) → calls executed there so far: which recorded call of the step a call stands for
        self._positions: dict[tuple[int, int], int] = {}
        self._at: tuple[int, int, int] = (0, 0, 0)
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
        self._process: ToolProcess | None = None
        # the result messages made, by call and answer, shared with `fresh` copies (never changed)
        self._messages: dict[tuple, ToolResultMessage] = {} if _shared is None else _shared[4]
        if _shared is not None:
            self._process = _shared[3]
        if self.live_read_tools and self.tool_pack is not None and self.cassette is not None and self._process is None:
            self._process = ToolProcess(
                self.tool_pack.name,
                mode="replay",
                cassette=str(self.cassette_path),
                isolate_network=True,
                call_timeout_s=tool_timeout_s,
            )
        if _shared is not None and self.cassette is not None and self.cassette.data is _shared[0]:
            self.recorded = _shared[1]
            self._restore(_shared[2])
        else:
            if self.cassette is not None:
                for index in off_path_interactions(self.cassette.index, self._file_calls, self._is_pack_tool):
                    if self.cassette.play_counts[index] == 0:
                        self.cassette.mark_played(index)
            for name, args in self._executed_before:
                if self.judged.is_mutating(name, args):
                    key = call_key(name, args)
                    self._before[key] = self._before.get(key, 0) + 1
                self._mark_played(name, dict(args))
        self._initial = self._state()

    def fresh(self) -> ToolExecutor:
        """A new executor equal to this one right after its construction (same cassette file,
        classifier, pack, recorded results, calls before the starting point, base URL), whatever
        this one ran since.

        Why: the pipeline replays an item twice (baseline, compacted run) from the same starting
        point; `fresh` copies the state construction reached (play counts and order, recorded
        results played, `executed_before` counts, construction findings) onto a new playback of
        the same parsed interactions instead of marking every earlier call again, and shares the
        tool process (it keeps no play state: each call brings it). When the file changed since
        (size, mtime) or is gone, the new executor is constructed from scratch."""
        return type(self)(
            self.cassette_path,
            self.classifier,
            tool_pack=self.tool_pack,
            recorded=self.recorded,
            executed_before=self._executed_before,
            recorded_calls=self.recorded_calls,
            file_calls=self._file_calls,
            base_url=self.base_url,
            session_id=self.session_id,
            live_read_tools=self.live_read_tools,
            tool_timeout_s=self.tool_timeout_s,
            judged=self.judged,
            _shared=(
                self.cassette.data if self.cassette is not None else None,
                self.recorded,
                self._initial,
                self._process,
                self._messages,
            ),
        )

    def close(self) -> None:
        """End the tool process of live read tools (and whatever it started), if one runs."""
        if self._process is not None:
            self._process.close()

    def _state(self) -> tuple:
        """What construction sets up and a run changes (all copied: the state is kept unchanged)."""
        return (
            self.cassette.state() if self.cassette is not None else None,
            self.recorded.state(),
            dict(self._before),
            list(self.defects),
            set(self._mislabelled),
            list(self.cassette.misses) if self.cassette is not None else None,
        )

    def _restore(self, state: tuple) -> None:
        cassette_state, recorded_state, before, defects, mislabelled, misses = state
        assert self.cassette is not None
        self.cassette.restore(cassette_state)
        self.cassette.misses[:] = misses
        self.recorded = self.recorded.restored(recorded_state)
        self._before = dict(before)
        self.defects = list(defects)
        self._mislabelled = set(mislabelled)

    # -- context: the socket guard, once per run

    def __enter__(self) -> ToolExecutor:
        if self._depth == 0:
            stack = ExitStack()
            stack.enter_context(socket_guard())
            self._stack = stack
        self._depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        if self._depth == 0 and self._stack is not None:
            self._stack.close()
            self._stack = None

    # -- answering calls

    def _is_pack_tool(self, name: str) -> bool:
        return self.tool_pack is not None and name in self.tool_pack.tools

    def _mark_played(self, name: str, args: dict[str, Any]) -> None:
        """An earlier call, marked played from the recording: its recorded result and the HTTP
        the recorder tagged with it (pack tools), or its recorded-tool interaction."""
        result = self.recorded.play(name, args)
        if result is not None and not result.answered:
            return  # it never ran: nothing of it is in the cassette
        if self._is_pack_tool(name):
            if result is not None and self.cassette is not None:
                self.cassette.mark_made_by(result.tool_call_id)
        elif self.cassette is not None:
            self.cassette.play_key_index(recorded_tool_key(name, args))

    def execute(self, call: ToolCallBlock, *, turn: int, step: int) -> tuple[ToolResultMessage, ToolCallTrace]:
        name, args = call.name, dict(call.arguments or {})
        mutating = self.judged.is_mutating(name, args)
        trace = ToolCallTrace(turn=turn, step=step, tool_call_id=call.id, tool=name, arguments=args, mutating=mutating)
        position = self._positions.get((turn, step), 0)
        self._positions[(turn, step)] = position + 1
        self._at = (turn, step, position)
        if self.cassette is None:
            text = NO_CASSETTE_TEXT.format(tool=name)
            return self._finish(call, trace, text, True, "blocked" if mutating else "missing")
        key = call_key(name, args)  # name, NUL, canonical arguments: made once for the lookups below
        upcoming = self.recorded.upcoming(name, args, key)
        if upcoming is not None and not upcoming.answered:  # it never ran in the recording: as pi shows it
            self.recorded.play(name, args, key)
            return self._finish(call, trace, ORPHAN_TOOL_RESULT_TEXT, True, "unanswered")
        if not self._is_pack_tool(name):
            return self._recorded_tool(call, trace, args, mutating, turn, key)
        if self.live_read_tools and not mutating and not self.classifier.is_mutating(name, args):
            return self._live_read(call, trace, args, turn)  # a read by the records alone: never run
        return self._from_recording(call, trace, args, mutating, turn, key)

    def _from_recording(
        self, call: ToolCallBlock, trace: ToolCallTrace, args: dict[str, Any], mutating: bool, turn: int, key: str
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """A pack tool's call answered with the recording's result for it; its code never runs."""
        assert self.cassette is not None
        result = self.recorded.play(call.name, args, key)
        if result is None:
            return self._unserved(call, trace, args, mutating, [], turn)
        made = self.cassette.mark_made_by(result.tool_call_id)
        self._check_evidence(call, mutating, self._sent(made), turn)
        return self._finish(call, trace, result.text, result.is_error, "cassette", result)

    def _recorded_tool(
        self, call: ToolCallBlock, trace: ToolCallTrace, args: dict[str, Any], mutating: bool, turn: int, key: str
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """A tool the pack does not have: the cassette's recorded-tool interaction for the call."""
        assert self.cassette is not None
        misses_before = len(self.cassette.misses)
        output = self._serve_recorded(call.name, args, key[len(call.name) + 1 :])  # `call_key`'s canonical JSON
        misses = self.cassette.misses[misses_before:]
        if output is None:
            return self._unserved(call, trace, args, mutating, misses, turn)
        recorded = self.recorded.play(call.name, args, key)  # the recorded order of equal calls, as the cassette's
        if recorded is not None and recorded.answered and not same_recorded_text(recorded.text, output.text):
            self._answered_otherwise(call, recorded.text, output.text, turn)
            return self._finish(call, trace, recorded.text, recorded.is_error, "cassette", recorded)
        return self._finish(call, trace, output.text, output.is_error, "cassette", recorded)

    def _answered_otherwise(self, call: ToolCallBlock, recorded: str, served: str, turn: int) -> None:
        """CASSETTE_MISSING: the cassette answers this call with a text the recording never gave
        it (another call's answer, an edited file). The agent gets the recording's own result; the
        item is an infrastructure error, never a pass over answers nobody recorded."""
        self.defects.append(
            Defect.of(
                Code.CASSETTE_MISSING,
                f"{self.cassette_path.name} answers {call.name} with a text the recording did not give this call "
                "(another call's answer, or an edited cassette); the recording's own result was used",
                expected=scrub_text(_excerpt(recorded)),
                actual=scrub_text(_excerpt(served)),
                detail={"kind": "answer_differs"},
                turn=turn,
                tool_call_id=call.id,
                tool=call.name,
            )
        )

    def _serve_recorded(self, name: str, args: dict[str, Any], canonical: str | None = None) -> ToolOutput | None:
        """The recorded-tool request (`recorded_tool`'s exact POST), served from the playback by
        its `request_key` without the HTTP stack or vcrpy: same matching, same play counts.

        A miss is recorded in `cassette.misses` (the request `recorded_tool` would have sent)
        and gives None."""
        assert self.cassette is not None
        index = self.cassette.play_key_index(recorded_tool_key(name, args, canonical))
        if index is None:
            self.cassette.misses.append(recorded_tool_request(name, args))
            return None
        text, response = self.cassette.response_text(index)  # the loaded text: no bytes round trip
        return recorded_tool_output(text, response)

    def _live_read(
        self, call: ToolCallBlock, trace: ToolCallTrace, args: dict[str, Any], turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """An opted-in read tool's own code, run in the isolated tool process (module docstring)."""
        assert self.cassette is not None and self._process is not None
        if not self.cassette.tagged and any(not is_recorded_tool_key(key) for key in self._keys()):
            failure = ToolFailure(
                call.name,
                "untagged",
                "could not be run: its cassette does not say which call made which HTTP interaction (it was "
                "recorded before replaylab tagged them), so the calls before the replay's starting point cannot "
                "be marked played and the tool could be served an earlier answer; re-record it",
            )
            return self._tool_failed(call, trace, failure, turn)
        try:
            reply = self._process.call(
                call.name,
                args,
                {"base_url": self.base_url, "session_id": self.session_id},
                played=list(self.cassette.played),
            )
            played, misses, blocked = reply_traffic(call.name, reply, len(self.cassette.data))
        except ToolFailure as failure:
            return self._tool_failed(call, trace, failure, turn)
        for index in played:
            if self.cassette.play_counts[index] == 0:
                self.cassette.mark_played(index)
        self.cassette.misses.extend(misses)
        self._check_evidence(call, False, [*self._sent(played), *misses], turn)
        if blocked:
            return self._network_blocked(call, trace, blocked, turn)
        if misses or reply.get("cassette_miss"):
            return self._unserved(call, trace, args, False, misses, turn)
        if "error" in reply:
            return self._finish(call, trace, f"tool {call.name!r} failed: {reply['error']}", True, "cassette")
        return self._finish(call, trace, reply["text"], reply["is_error"], "cassette")

    def _keys(self) -> list:
        assert self.cassette is not None
        keys = getattr(self.cassette.data, "keys", None)
        return keys if keys is not None else [("", request.path or "/") for request, _ in self.cassette.data]

    def _tool_failed(
        self, call: ToolCallBlock, trace: ToolCallTrace, failure: ToolFailure, turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """TOOL_FAILED: the item cannot be judged. A refusal (no isolation, no tags) is reported once."""
        refusal = failure.kind in ("isolation", "untagged")
        if not refusal or not self._refusal_reported:
            self._refusal_reported = self._refusal_reported or refusal
            self.defects.append(
                Defect.of(
                    Code.TOOL_FAILED,
                    f"live read tool {call.name} {failure.detail}",
                    expected="the tool's call returns an answer and leaves nothing running",
                    actual=failure.kind,
                    turn=turn,
                    tool_call_id=call.id,
                    tool=call.name,
                )
            )
        return self._finish(call, trace, FAILED_TEXT.format(tool=call.name, detail=failure.detail), True, "blocked")

    def _network_blocked(
        self, call: ToolCallBlock, trace: ToolCallTrace, attempts: list[tuple[str, str]], turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """A live read tool tried to go live (a non-HTTP client, a DNS lookup, a client vcrpy does
        not patch) and the socket guard stopped it. The cause is the tool pack, not compaction:
        the cassette cannot answer what the tool does — an infrastructure error
        (CASSETTE_MISSING), reported in the baseline run already."""
        event, target = attempts[0]
        self.defects.append(
            Defect.of(
                Code.CASSETTE_MISSING,
                f"tool {call.name} tried to reach {target} ({event}) during replay; the socket guard blocked it "
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
        self, call: ToolCallBlock, trace: ToolCallTrace, text: str, is_error: bool, source: str, by: _Answer = None
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        """`by`: the recording's result answering the call; what of it the call's judgement reads goes
        with the message (`kept_fields`), so a compaction of the working copy judges it alike."""
        trace.result, trace.is_error, trace.source = text, is_error, source  # type: ignore[assignment]
        kept = by.kept if by is not None else None
        found = identity(by) if kept is not None else None  # equal texts, different records: two messages
        message = self._messages.get(key := (call.id, call.name, text, type(is_error), is_error, found))
        if message is None:
            message = self._messages[key] = result_message(call, text, is_error, kept)
        return message, trace

    def _unserved(
        self, call: ToolCallBlock, trace: ToolCallTrace, args: dict[str, Any], mutating: bool, misses: list, turn: int
    ) -> tuple[ToolResultMessage, ToolCallTrace]:
        name = call.name
        if not mutating:
            return self._finish(call, trace, MISSING_TEXT.format(tool=name), True, "missing")
        key = call_key(name, args)
        request = describe_request(misses[0]) if misses else {}
        attempted = {"tool": name, "arguments": args}
        here, said, diffs = self._recorded_here(attempted)
        if self._before.get(key):
            self.defects.append(
                Defect.of(
                    Code.DUPLICATE_SIDE_EFFECT,
                    f"{name} was called again with the same arguments as a call already executed before the "
                    f"replay's starting point; the repeat was blocked ({said})",
                    expected=here,
                    actual=attempted,
                    detail={**diffs.as_detail(), "request": request},
                    turn=turn,
                    tool_call_id=call.id,
                    tool=name,
                )
            )
            return self._finish(call, trace, DUPLICATE_TEXT.format(tool=name), True, "blocked")
        nearest = nearest_call(
            name, args, misses[0] if misses else None, self.cassette, self._calls_of(name) or self.recorded_calls
        )
        hint = self._hint(nearest, name)
        self.defects.append(
            Defect.of(
                Code.SIDE_EFFECT_ESCAPED,
                f"mutating call {name} has no recorded match (blocked, never executed); {said}"
                + (
                    f"; {hint['label']}: {hint_summary(hint, here)}"
                    if hint
                    else "; the recording has no call to compare"
                ),
                expected=here,
                actual=attempted,
                detail={**diffs.as_detail(), "nearest": hint, "request": request},
                turn=turn,
                tool_call_id=call.id,
                tool=name,
            )
        )
        return self._finish(call, trace, BLOCKED_TEXT.format(tool=name), True, "blocked")

    def _recorded_here(self, attempted: dict[str, Any]) -> tuple[dict[str, Any] | str | None, str, Differences]:
        """EXPECTED for the call being executed: the call the recorded agent made at this turn,
        step and position (or a sentence saying there was none), how it compares, in words, and
        the differences (none without a recorded call): made once, the defect's detail shows them."""
        turn, step, position = self._at
        calls = self.recorded.at_step(turn, step)
        if calls is None:
            return None, "which call the recording made at this step is not known", Differences()
        if position >= len(calls):
            made = f"{len(calls)} call{'' if len(calls) == 1 else 's'}" if calls else "no call"
            said = f"no recorded call: the recorded agent made {made} at turn {turn}, step {step}"
            return said, "the recording has no call at this step", Differences()
        tool, arguments = calls[position]
        here = {"tool": tool, "arguments": arguments}
        diffs = _call_differences(here, attempted)
        if diffs:
            return here, f"the recorded call at this step ({tool}) differs at {diffs.paths()}", diffs
        result = self.recorded.result_of(tool, arguments)
        return here, f"the recorded call at this step is this very call; its result: {result}", diffs

    def _hint(self, nearest: Nearest | None, name: str) -> dict[str, Any] | None:
        """`detail["nearest"]`, with what the recording holds as the nearest call's result."""
        if nearest is None:
            return None
        result = self.recorded.result_of(nearest.tool, nearest.arguments) if nearest.tool is not None else None
        return nearest.detail(result)

    def _calls_of(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """The recorded calls of tool `name`, in order (`nearest_call` looks at those, at every
        recorded call only when the tool has none): by tool, made
        once, so each blocked call of a long replay does not scan every recorded call."""
        if self._calls_by_tool is None:
            self._calls_by_tool = {}
            for call in self.recorded_calls:
                self._calls_by_tool.setdefault(call[0], []).append(call)
        return self._calls_by_tool.get(name, [])

    # -- evidence

    def _sent(self, indices: Sequence[int]) -> list[_Sent]:
        """The recorded requests of these interactions as the evidence check reads them (from the
        index keys when the playback has them: no vcrpy `Request` is built for a read)."""
        assert self.cassette is not None
        keys = getattr(self.cassette.data, "keys", None)
        if keys is not None:
            return [_Sent(keys[i][0], keys[i][1]) for i in indices]
        return [_Sent(self.cassette.data[i][0].method, self.cassette.data[i][0].path) for i in indices]

    def _check_evidence(self, call: ToolCallBlock, mutating: bool, requests: Sequence[Any], turn: int) -> None:
        if mutating or call.name in self._mislabelled:
            return
        defect = mislabelled(call, self.classifier, requests, turn=turn)
        if defect is not None:
            self._mislabelled.add(call.name)
            self.defects.append(defect)


def _excerpt(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_differences(expected: dict[str, Any], actual: dict[str, Any]) -> Differences:
    """Of the arguments when the tool is the same (paths read `command`), else of the whole call."""
    if expected["tool"] == actual["tool"]:
        return differences(expected["arguments"], actual["arguments"])
    return differences(expected, actual)
