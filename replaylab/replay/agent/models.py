"""Models the agent loop can run: one protocol, three implementations, one factory.

* `replay` (`ReplayModel`, the offline default): the context-grounded replay model — the recorded
  assistant message of the current step, with every value it learned earlier that the window
  no longer shows replaced by a `⟨lost:N⟩` marker. Exact rules: `replaylab.replay.agent.grounding`.
* `litellm/<provider>/<model>` (`LiteLLMModel`): a real model through litellm, imported lazily
  with the offline switches set first; its HTTP goes through an LLM cassette.
* `scripted` (`ScriptedModel`): a YAML script of assistant actions per user turn
  (`replaylab.replay.agent.script`), for recording demo sessions against a live service.

Optional hooks the loop uses when a model has them: `begin_turn(turn)` (called after the turn's
inputs are in the window), `max_steps(turn)` (how many model calls the turn may take) and
`rewind()` (the last answer was discarded: the next call answers the same step again).
Every model has `defects` (findings of its own, e.g. an LLM cassette miss).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from replaylab.defects import Code, Defect
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.errors import ReplaylabError
from replaylab.litellm_import import import_litellm
from replaylab.model_spec import RECORD_MODES, model_spec_problem
from replaylab.replay.agent.grounding import (
    SEP,
    VALUES,
    Candidate,
    Grounded,
    GroundingRules,
    LostMarkers,
    RecordingText,
    VisibleText,
    WindowText,
    all_candidates,
    ground,
    select,
)
from replaylab.replay.turns import Turn, step_message
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import identity
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    CustomEntry,
    MessageEntry,
    TextBlock,
    ToolCallBlock,
)

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

#: custom entry types that hold a session's system prompt (importers: `system-prompt`; recorder: the same)
SYSTEM_PROMPT_TYPES = frozenset({"system-prompt", "replaylab.system-prompt"})


class Model(Protocol):
    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage: ...


@dataclass(frozen=True)
class LostRecord:
    """One value a model's message lost (replaced by `marker`): what the item's legend is made of."""

    turn_index: int  # the recording's 0-based turn index of the step
    entry_id: str | None  # the recorded step whose replay lost it (None: a scripted step)
    value: str  # the recorded value (a scripted model: its `${ref}`)
    marker: str
    kind: str  # "arg", "arg-token" (in a tool call), "text" (in the text it wrote): `Candidate.kind`
    seen_entry_id: str | None = None  # the last recording entry before the step that holds the value


class ModelError(ReplaylabError):
    """A model call that failed in a way the run must report (carries the defect)."""

    def __init__(self, message: str, defect: Defect | None = None):
        super().__init__(message)
        self.defect = defect


def system_prompt_of(path: Sequence[AnyEntry]) -> str | None:
    """The system prompt a recording keeps in a `system-prompt` custom entry, if any."""
    for entry in path:
        if isinstance(entry, CustomEntry) and entry.custom_type in SYSTEM_PROMPT_TYPES:
            data = entry.data
            if isinstance(data, dict):
                text = data.get("content", data.get("text"))
                if isinstance(text, str):
                    return text
                if isinstance(text, list):
                    return "\n".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
            if isinstance(data, str):
                return data
    return None


# ---------------------------------------------------------------- replay


class ReplayModel:
    """The context-grounded replay model (DESIGN §7). Pure and deterministic: it models
    information loss, not reasoning.

    At each step it returns the recorded assistant message of that step, grounded in the window
    it is given (rules in `replaylab.replay.agent.grounding`, in short):

    1. candidates = argument leaves of the message's tool calls (strings ≥ 3 chars, numbers with
       ≥ 3 digits) and the opaque tokens of text it composed (its text blocks, argument strings
       not learned whole) — per tool and argument as `grounding` says (`off`, `values`, `strict`);
    2. a candidate is *learned* when its text occurs in the window the original agent saw at
       that step (`build_window` of the recording up to the entry before the step; system
       prompt and tool schemas are not part of it) — and, past a recorded compaction after the
       replay's first turn, also in what the replay could show (not in that summary alone);
    3. a learned value is *visible* when its text occurs in the replay window (all messages,
       summary, protected entries, tool results the replay produced) or in the tool schemas /
       system prompt the model always sees;
    4. every learned value that is not visible is replaced by `⟨lost:N⟩` (N numbers the distinct
       lost values of the item, `LostMarkers`), so the call no longer matches the cassette.

    On the recording's own window nothing is lost and the recorded message object is returned
    unchanged. `lost` lists every replacement made (`LostRecord`: the turn's recording index, the
    step's entry id, value, marker, and the entry where the original agent last saw the value).

    `memo`: the pipeline item's; the models of one item share the recording's text and the
    markers through it (one value, one marker in the baseline and the compacted run).
    `grounding`: the suite's levels per tool / argument (`match.args.<tool>.grounding`).
    """

    name = "replay"

    def __init__(
        self,
        recording: Transcript | Sequence[AnyEntry],
        *,
        system_prompt: str | None = None,
        memo: ItemMemo | None = None,
        grounding: GroundingRules | None = None,
    ):
        path = recording.leaf_path(memo) if isinstance(recording, Transcript) else list(recording)
        self.memo = memo
        self.rules = grounding if grounding is not None else VALUES
        self._plans: dict[str, list[Candidate]] = {}  # the shared plans as `self.rules` select them
        self.history = RecordingText.shared(path, memo)  # the baseline's, when this is the compacted run's model
        self.system_prompt = system_prompt if system_prompt is not None else system_prompt_of(path)
        self._window_text = WindowText(self.history.message_texts, memo)
        self._tools_text: tuple[Sequence[dict], str] | None = None
        self.turn: Turn | None = None
        self.cursor = 0
        #: the path index of the first replayed turn's first entry (`LearnedCheck`'s `start`)
        self.start: int | None = None
        self.markers = memo.kept(LostMarkers, LostMarkers) if memo is not None else LostMarkers()
        self.lost: list[LostRecord] = []
        self.defects: list[Defect] = []

    # loop hooks
    def begin_turn(self, turn: Turn) -> None:
        self.turn, self.cursor = turn, 0
        if self.start is None:
            first = (turn.inputs or turn.steps or [None])[0]
            self.start = self.history.index_of.get(first.id) if first is not None else None
            self._plans.clear()  # a plan made before the start was known is the plain rule's

    def max_steps(self, turn: Turn) -> int:
        return len(turn.steps)

    def rewind(self) -> None:
        """The agent discarded the last answer (a silent overflow) and asks for the step again."""
        self.cursor = max(0, self.cursor - 1)

    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage:
        if self.turn is None or self.cursor >= len(self.turn.steps):
            raise ModelError("replay model: no recorded step left in this turn (call begin_turn(turn) first)")
        entry = self.turn.steps[self.cursor]
        self.cursor += 1
        grounded = self.ground_step(entry, window, tools)
        step_index = self.history.index_of.get(entry.id)
        for c in grounded.lost:
            seen = None if step_index is None else self.history.last_seen(c.value, step_index)
            self.lost.append(
                LostRecord(
                    turn_index=self.turn.index,
                    entry_id=entry.id,
                    value=c.value,
                    marker=grounded.markers[c.value],
                    kind=c.kind,
                    seen_entry_id=None if seen is None else self.history.path[seen].id,
                )
            )
        return grounded.message

    # the rule itself, usable without the loop
    def plan(self, entry: MessageEntry) -> list[Candidate]:
        """Learned candidates of a recorded step that this model grounds. Every candidate is
        cached with the recording's text (independent of any replay window and of the levels, so
        every model over the same recording shares them); the selection by levels per model."""
        selected = self._plans.get(entry.id)
        if selected is not None:
            return selected
        key = (self.start, entry.id)
        plan = self.history.plans.get(key)
        if plan is None:
            if entry.id not in self.history.index_of:
                raise ModelError(f"replay model: entry {entry.id} is not on the recording's leaf path")
            plan = all_candidates(step_message(entry), self.history.learned_at(entry.id, self.memo, self.start))
            self.history.plans[key] = plan
        selected = self._plans[entry.id] = select(plan, step_message(entry), self.rules)
        return selected

    def ground_step(self, entry: MessageEntry, window: Sequence[Any], tools: Sequence[dict] = ()) -> Grounded:
        if self._nothing_lost(entry, window):
            return Grounded(step_message(entry))
        plan = self.plan(entry)
        if not plan:
            return Grounded(step_message(entry))
        # window text + SEP + always-visible text, tested piece by piece instead of copied per step
        pieces = self._window_text.blocks(window)  # the window's items (or messages) as they are
        return ground(
            step_message(entry), plan, VisibleText.of_window(pieces, self._always_visible(tools)), self.markers
        )

    def _nothing_lost(self, entry: MessageEntry, window: Sequence[Any]) -> bool:
        """True when `ground` is sure to lose nothing, found without the step's plan: the window
        still holds, as whole message texts, the text of every entry the original agent saw
        before the step (no compaction on the recording's path before it) — the baseline on
        the recording's own window, step after step.

        Why that suffices: every candidate value is a substring of the step message's grounding
        text; when that text has no SEP, a value is learned exactly when it occurs in one
        entry's text before the step (the recording's text is those texts joined by SEP), and
        visible when it occurs in one message text of the window (`VisibleText`); an entry text
        that is a window message text carries every such occurrence over. Anything else takes
        the full rule (`plan` + `ground`), which the compacted run needs anyway — and half the
        pipeline's items have no compacted run, so their plans are never computed at all."""
        index = self.history.index_of.get(entry.id)
        if index is None or self.history.compacted_before(index):
            return False
        own = self.history.message_texts.get(identity(entry.message))
        if own is None or own[0] is not entry.message or self.history.path[index] is not entry or SEP in own[1]:
            return False
        return self._window_text.covers(window, self.history, index)

    def _always_visible(self, tools: Sequence[dict]) -> str:
        """SEP + tool schemas + SEP + system prompt: what the model sees besides the window."""
        # keyed on the tools object itself (kept alive here), not its id: a freed list's id can
        # come back for a different list
        if self._tools_text is None or self._tools_text[0] is not tools:
            import orjson

            text = orjson.dumps(list(tools or [])).decode() if tools else ""
            self._tools_text = (tools, SEP + text + SEP + (self.system_prompt or ""))
        return self._tools_text[1]


# ---------------------------------------------------------------- scripted


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


# ---------------------------------------------------------------- litellm


class LiteLLMModel:
    """Any model through litellm (`litellm/<provider>/<model>`), its HTTP through an LLM cassette.

    `record_mode`: `none` (default: replay only; a miss is `CASSETTE_MISSING` naming the model,
    the turn and a digest of the messages, and nothing is sent), `once` (record into a cassette
    this process created), `new_episodes` (add requests the cassette lacks), `all` (re-record).
    Secret headers, the `headers` the suite configured (their values may come from the
    environment) and the key are kept out of the cassette; bodies are scrubbed before it is
    written. No retries: a miss must surface at once.

    Every request carries the recording's `system_prompt` and the tools the agent had (`tools` of
    the run, else `fallback_tools`). `local_tool_calls`: for the local model, which writes calls as
    text (`replaylab.local_model.tool_calls`): the request asks llama.cpp for a call of a declared
    tool (`request_fields`) without its prompt cache, and the reply's text call becomes a call.
    """

    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        cassette: Path | str,
        record_mode: str = "none",
        api_base: str | None = None,
        api_key: str | None = None,
        system_prompt: str | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        headers: dict[str, str] | None = None,
        local_tool_calls: bool = False,
        fallback_tools: Sequence[dict] = (),
        extra: dict[str, Any] | None = None,
    ):
        self.model = model
        self.provider = model.split("/", 1)[0] if "/" in model else None
        self.cassette_path = Path(cassette)
        self.record_mode = record_mode
        self.api_base = api_base
        self.api_key = api_key
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.headers = dict(headers or {})
        self.local_tool_calls = local_tool_calls
        self.fallback_tools = list(fallback_tools)
        self.extra = dict(extra or {})
        self.turn_index: int | None = None
        self.defects: list[Defect] = []
        self.calls: list[dict[str, Any]] = []  # per call: usage and whether it was served from the cassette

    def begin_turn(self, turn: Turn) -> None:
        self.turn_index = turn.index  # named in a cassette miss

    def request(self, window: Sequence[Any], tools: Sequence[dict]) -> dict[str, Any]:
        """The keyword arguments of `litellm.completion` for one call (the key apart)."""
        from replaylab.replay.agent.llm_format import to_openai_messages

        tools = list(tools) or self.fallback_tools
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(window, system=self.system_prompt),
            "num_retries": 0,
            **self.extra,
        }
        if tools:
            kwargs["tools"] = tools
        for name in ("temperature", "seed", "max_tokens"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.headers:
            kwargs["extra_headers"] = dict(self.headers)
        if self.local_tool_calls:
            from replaylab.local_model.tool_calls import request_fields

            body = dict(kwargs.get("extra_body") or {})
            body.update(request_fields(tools) if tools else {})
            body["cache_prompt"] = False  # llama.cpp's prompt cache changes replies to the same request
            kwargs["extra_body"] = body
        return kwargs

    def describe(self, kwargs: dict[str, Any]) -> str:
        """The request as a cassette miss names it: model, turn and a digest of its messages."""
        turn = "?" if self.turn_index is None else str(self.turn_index + 1)
        return f"model {self.model}, turn {turn}, messages {messages_digest(kwargs['messages'])}"

    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage:
        from replaylab.replay.agent.llm_format import from_openai_message

        kwargs = self.request(window, tools)
        if self.record_mode == "none" and not self.cassette_path.is_file():
            raise self._missing(
                f"LLM cassette {self.cassette_path} does not exist, so nothing answers the request "
                f"({self.describe(kwargs)}); record it once with --replaylab-record-mode once",
                kwargs,
                "missing",
            )
        response, from_cassette = self._send(kwargs)
        choice = response.choices[0]
        reply: Any = choice.message
        if self.local_tool_calls:
            from replaylab.local_model.tool_calls import adapt_message, answer_request, parse_reply, with_reply

            raw = _as_dict(reply)
            tools_sent = kwargs.get("tools") or []
            read = (
                None
                if raw.get("tool_calls")
                else parse_reply(raw.get("content"), tools_sent, history=kwargs["messages"])
            )
            if read is None:
                reply = raw
            elif read.problem is None:
                reply = with_reply(raw, read)
            else:
                # a call it may not make (a repeat, an undeclared tool): the same conversation is
                # asked for a plain answer instead, as a request of its own (recorded too)
                retry = {k: v for k, v in kwargs.items() if k not in ("tools", "tool_choice", "extra_body")}
                retry["extra_body"] = answer_request(kwargs.get("extra_body") or {})
                response, again = self._send(retry)
                from_cassette = from_cassette and again
                choice = response.choices[0]
                reply = adapt_message(_as_dict(choice.message), tools_sent, history=kwargs["messages"])
        message = from_openai_message(
            reply,
            usage=getattr(response, "usage", None),
            provider=self.provider,
            model=self.model.split("/", 1)[-1],
            finish_reason=getattr(choice, "finish_reason", None),
        )
        self.calls.append({"usage": message.usage, "from_cassette": from_cassette})
        return message

    def _send(self, kwargs: dict[str, Any]) -> tuple[Any, bool]:
        """One request through the LLM cassette: the response, and whether the cassette served it."""
        from contextlib import nullcontext

        from replaylab.replay.agent.context_limit import refused_request
        from replaylab.replay.cassettes.playback import describe_request
        from replaylab.replay.cassettes.vcr_session import cassette_miss, llm_cassette, patched
        from replaylab.replay.guard import network_allowed

        litellm = import_litellm()
        kwargs = dict(kwargs)
        # the key never reaches the cassette (its header is filtered). Without one: offline or on
        # loopback a placeholder satisfies clients that insist on a key; recording a hosted model,
        # litellm reads its provider's own variable (OPENAI_API_KEY, ...)
        key = self.api_key or (None if self.record_mode != "none" and not _loopback(self.api_base) else NO_KEY)
        if key:
            kwargs["api_key"] = key
        cassette = llm_cassette(self.cassette_path, self.record_mode, hidden_headers=tuple(self.headers))
        played = sum(cassette.play_counts.values())
        live = network_allowed("recording an LLM cassette") if self.record_mode != "none" else nullcontext()
        try:
            with patched(cassette), live:
                response = litellm.completion(**kwargs)
        except Exception as exc:
            miss = cassette_miss(exc)
            if miss is None:
                refused = refused_request(exc)
                if refused is not None:  # the agent reads the provider's refusal (a full window, say)
                    raise refused from None
                raise
            request = describe_request(getattr(miss, "failed_request", None))
            raise self._missing(
                f"LLM cassette {self.cassette_path.name} has no response for the request "
                f"({self.describe(kwargs)}; {request.get('method')} {request.get('uri')}); record it with "
                "--replaylab-record-mode once (a new cassette) or new_episodes (added to this one)",
                kwargs,
                request,
                detail={"reason": getattr(miss, "reason", None), "wrapped_by": type(exc).__name__},
            ) from None
        finally:
            if self.record_mode != "none":
                cassette._save()
        return response, sum(cassette.play_counts.values()) > played

    def _missing(self, message: str, kwargs: dict[str, Any], actual: Any, detail: dict | None = None) -> ModelError:
        defect = Defect.of(
            Code.CASSETTE_MISSING,
            message,
            expected=str(self.cassette_path),
            actual=actual,
            detail={
                **(detail or {}),
                "model": self.model,
                "turn": None if self.turn_index is None else self.turn_index + 1,
                "messages_digest": messages_digest(kwargs["messages"]),
            },
        )
        self.defects.append(defect)
        return ModelError(defect.message, defect)


NO_KEY = "replaylab-no-key"


def _loopback(url: str | None) -> bool:
    from urllib.parse import urlsplit

    return url is not None and urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


def messages_digest(messages: Sequence[dict[str, Any]]) -> str:
    """A short digest of a request's messages (canonical JSON), to tell requests apart in a message."""
    import hashlib

    import orjson

    return hashlib.sha256(orjson.dumps(list(messages), option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]


def _as_dict(message: Any) -> dict[str, Any]:
    """An OpenAI SDK message object (or a dict) as a plain dict."""
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        return dict(dump())
    return {"content": getattr(message, "content", None), "tool_calls": getattr(message, "tool_calls", None)}


# ---------------------------------------------------------------- factory


LITELLM_OPTIONS = frozenset(
    {
        "api_base",
        "api_key",
        "system_prompt",
        "temperature",
        "seed",
        "max_tokens",
        "headers",
        "local_tool_calls",
        "fallback_tools",
        "extra",
    }
)


def make_model(
    spec: str,
    *,
    recording: Transcript | None = None,
    llm_cassette: Path | str | None = None,
    record_mode: str = "none",
    script: Path | str | None = None,
    memo: ItemMemo | None = None,
    **options: Any,
) -> Model:
    """`replay` | `scripted` | `litellm/<provider>/<model>`. `options` go to the model
    (litellm: `LITELLM_OPTIONS`; replay: system_prompt, grounding); `memo` (a pipeline item's)
    to the replay and the scripted model. A litellm model without a system prompt or tools of its
    own gets the recording's (`system_prompt_of`, `recorded_tool_schemas`)."""
    spec = (spec or "replay").strip()
    problem = model_spec_problem(spec)
    if problem is not None:
        raise InputError([Diagnostic(code="bad-model", file="<model>", field="model", message=problem)])
    if spec == "replay":
        if recording is None:
            raise _bad(spec, "the replay model needs the recording it replays")
        return ReplayModel(
            recording, system_prompt=options.get("system_prompt"), memo=memo, grounding=options.get("grounding")
        )
    if spec == "scripted" or spec.startswith("scripted:"):
        script = script or (spec.split(":", 1)[1] if ":" in spec else None)
        if not script:
            raise _bad(spec, "the scripted model needs its script: scripted:<script.yaml>")
        return ScriptedModel(script, strict=options.get("strict", False), memo=memo)
    if llm_cassette is None:
        raise _bad(spec, "a litellm model needs an LLM cassette path (its HTTP is recorded and replayed)")
    if record_mode not in RECORD_MODES:
        raise _bad(spec, f"record mode {record_mode!r} is not one of {', '.join(RECORD_MODES)}")
    settings = {k: v for k, v in options.items() if k in LITELLM_OPTIONS and v is not None}
    if recording is not None:
        path = recording.leaf_path(memo)
        settings.setdefault("system_prompt", system_prompt_of(path))
        settings.setdefault("fallback_tools", recorded_tool_schemas(path))
    return LiteLLMModel(spec.removeprefix("litellm/"), cassette=llm_cassette, record_mode=record_mode, **settings)


def recorded_tool_schemas(path: Sequence[AnyEntry]) -> list[dict]:
    """OpenAI tool entries for the tools a recording's agent called, when no tool pack declares
    them (imported sessions): each tool's name, and the argument names its calls used, untyped."""
    seen: dict[str, dict[str, dict]] = {}
    for entry in path:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            for call in entry.message.tool_calls():
                properties = seen.setdefault(call.name, {})
                for key in call.arguments if isinstance(call.arguments, dict) else ():
                    properties.setdefault(str(key), {})
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
        }
        for name, properties in seen.items()
    ]


def _bad(spec: str, message: str) -> InputError:
    return InputError([Diagnostic(code="bad-model", file="<model>", field="model", message=f"{spec!r}: {message}")])


__all__ = [
    "LostRecord",
    "Model",
    "ModelError",
    "ReplayModel",
    "ScriptedModel",
    "LiteLLMModel",
    "make_model",
    "messages_digest",
    "model_spec_problem",
    "recorded_tool_schemas",
    "system_prompt_of",
]
