"""Models the agent loop can run: one protocol, three implementations, one factory.

* `replay` (`ReplayModel`, the offline default): the context-grounded replay model — the recorded
  assistant message of the current step, with every value it learned earlier that the window
  no longer shows replaced by a `⟨lost:N⟩` marker. Exact rules: `replaylab.replay.agent.grounding`.
* `litellm/<provider>/<model>` (`LiteLLMModel`): a real model through litellm, imported lazily
  with the offline switches set first; its HTTP goes through an LLM cassette.
* `scripted` (`ScriptedModel`): a YAML script of assistant actions per user turn
  (`replaylab.replay.agent.script`), for recording demo sessions against a live service.

The protocol and what every model shares: `replaylab.replay.agent.model_protocol`; each model has
a module of its own (`replay_model`, `scripted_model`, `litellm_model`); this one is the factory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.model_spec import RECORD_MODES, model_spec_problem
from replaylab.replay.agent.litellm_model import LiteLLMModel, messages_digest
from replaylab.replay.agent.model_protocol import LostRecord, Model, ModelError
from replaylab.replay.agent.recorded_prompt import recorded_tool_schemas, system_prompt_of
from replaylab.replay.agent.replay_model import ReplayModel
from replaylab.replay.agent.scripted_model import ScriptedModel
from replaylab.transcript.load import Transcript

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo


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
