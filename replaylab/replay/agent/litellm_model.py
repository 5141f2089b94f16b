"""The `litellm/<provider>/<model>` model (`LiteLLMModel`): a real model through litellm, imported
lazily with the offline switches set first; its HTTP goes through an LLM cassette."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replaylab.defects import Code, Defect
from replaylab.litellm_import import import_litellm
from replaylab.replay.agent.model_protocol import ModelError
from replaylab.replay.turns import Turn
from replaylab.transcript.model import AssistantMessage


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
