"""A model with a context window: a request that does not fit is answered as the provider would.

`ContextLimitedModel` wraps any model of the loop (replay, scripted, litellm). Before each call it
weighs the window by the agent profile's token estimate (the tool schemas are not counted); a
window over the limit is answered

* `error`: with the provider's own overflow text (`upstream.provider_overflow`) as a raised
  `ProviderOverflowError` — what a provider's 400 / 413 turns into in the agent;
* `usage`: with the wrapped model's reply whose usage states the prompt's size (`input`), a
  *silent* overflow: the provider answered, and only the usage shows the window was exceeded
  (pi's and OpenClaw's `isContextOverflow` with the window recognize it).

With `model` nothing is wrapped: the model itself has the window (the local model's server runs
with it when recording) and its refusal, recorded in its LLM cassette, is what the agent reads
(`refused_request`).

A replayed answer carries the usage of the recorded session, whose window was another; with
`restate_usage` (a model that replays, not a real one) every answer states the window it was
given instead, so the agent's silent-overflow check weighs the replayed request, not the recorded.

Everything else (`begin_turn`, `max_steps`, `defects`, the lost values) is the wrapped model's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from replaylab.errors import ReplaylabError
from replaylab.transcript.model import AssistantMessage
from replaylab.upstream.provider_overflow import DEFAULT_PROVIDER, PROVIDER_OVERFLOW_TEXTS


class ProviderRefusedRequest(ReplaylabError):
    """The provider refused the request (an HTTP 400 / 413): `text` is what the agent reads — the
    status and the provider's own message, as the OpenAI client words it. The agent's classifiers,
    not the model, decide whether it is a context overflow."""

    def __init__(self, text: str, *, tokens: int | None = None, limit: int | None = None):
        super().__init__(text)
        self.text = text
        self.tokens = tokens
        self.limit = limit


class ProviderOverflowError(ProviderRefusedRequest):
    """The provider refused the request: it does not fit the model's context window."""

    def __init__(self, text: str, *, tokens: int, limit: int):
        super().__init__(text, tokens=tokens, limit=limit)


class ContextLimitedModel:
    def __init__(
        self,
        model: Any,
        *,
        tokens: int,
        estimate: Callable[[Sequence[Any]], int],
        overflow: Literal["error", "usage"] = "error",
        provider: str = DEFAULT_PROVIDER,
        restate_usage: bool = True,
    ):
        self.model = model
        self.limit = tokens
        self.estimate = estimate
        self.overflow = overflow
        self.provider = PROVIDER_OVERFLOW_TEXTS[provider]
        self.restate_usage = restate_usage
        #: how many requests did not fit (the overflows it answered)
        self.overflows = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def fits(self, window: Sequence[Any]) -> bool:
        return self.estimate(window) <= self.limit

    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage:
        tokens = self.estimate(window)
        if tokens > self.limit:
            self.overflows += 1
            if self.overflow == "error":
                raise ProviderOverflowError(self.provider.text(tokens, self.limit), tokens=tokens, limit=self.limit)
        message = self.model.complete(window, tools)
        if not (self.restate_usage or tokens > self.limit):
            return message
        recorded = message.usage if isinstance(message.usage, dict) else {}
        usage = {**recorded, "input": tokens, "cacheRead": 0, "cacheWrite": 0}
        return message.model_copy(update={"usage": usage})


def refused_request(error: BaseException) -> ProviderRefusedRequest | None:
    """A client error (litellm's, the OpenAI client's) that is the provider refusing the request
    with a 400 / 413 and a message, as the agent reads it; None for anything else. llama.cpp's
    server adds the prompt's tokens and its context size, kept when given."""
    import orjson

    status = getattr(error, "status_code", None)
    if status not in (400, 413):
        return None
    response = getattr(error, "response", None)
    try:
        body = orjson.loads(getattr(response, "text", "") or "")
    except (orjson.JSONDecodeError, TypeError):
        return None
    detail = body.get("error") if isinstance(body, dict) else None
    message = detail.get("message") if isinstance(detail, dict) else None
    if not isinstance(message, str) or not message:
        return None
    assert isinstance(detail, dict)
    tokens, limit = detail.get("n_prompt_tokens"), detail.get("n_ctx")
    return ProviderRefusedRequest(
        f"{status} {message}",
        tokens=tokens if isinstance(tokens, int) else None,
        limit=limit if isinstance(limit, int) else None,
    )


__all__ = ["ContextLimitedModel", "ProviderOverflowError", "ProviderRefusedRequest", "refused_request"]
