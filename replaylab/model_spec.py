"""Model specs and LLM cassette record modes, checked the same way by the suite loader, the
pytest plugin (before collection) and the model factory, without importing any replay module."""

from __future__ import annotations

from typing import Literal, get_args

#: how an LLM cassette is used: replay only (`none`), record a new one (`once`), add what it lacks
#: (`new_episodes`), re-record everything (`all`) — vcrpy's modes
RecordMode = Literal["none", "once", "new_episodes", "all"]
RECORD_MODES: tuple[str, ...] = get_args(RecordMode)
LITELLM_PREFIX = "litellm/"


def is_litellm(spec: str | None) -> bool:
    return (spec or "").strip().startswith(LITELLM_PREFIX)


def model_spec_problem(spec: str | None, *, script_given: bool = True) -> str | None:
    """What is wrong with a model spec (None: nothing). `script_given`: whether the caller has a
    script for a bare `scripted` (a suite or `--replaylab-model` has none but the spec's own)."""
    spec = (spec or "replay").strip()
    if spec == "scripted" and not script_given:
        return f"{spec!r}: the scripted model needs its script; expected scripted:<script.yaml>"
    if spec in ("replay", "scripted") or spec.startswith("scripted:"):
        return None
    if spec.startswith(LITELLM_PREFIX):
        provider, _, name = spec.removeprefix(LITELLM_PREFIX).partition("/")
        if not provider or not name.strip("/"):
            return f"{spec!r}: expected litellm/<provider>/<model>, e.g. litellm/openai/gpt-4.1-mini"
        return None
    return f"{spec!r}: unknown model; expected replay, scripted or litellm/<provider>/<model>"
