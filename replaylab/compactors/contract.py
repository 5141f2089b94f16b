"""The seed contract as a compactor under test speaks it: `AgentHarnessCompactParams` out (the
JSON of `CompactParams`), `AgentHarnessCompactResult` back, read strictly.

Only the contract's own fields are taken from a compactor's answer. replaylab's extras
(`findings`, `failure`, `protectedEntryIds`, ...) are what replaylab itself works out: a
compactor under test cannot hand the pipeline findings about itself, nor excuse a failure as
"nothing to gain". Unknown keys are left out (a real compactor may say more than the seed), and
the types are checked strictly (`"replaySafe": "yes"` is not a flag).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from replaylab.compaction.params import CompactParams, CompactResult
from replaylab.errors import ReplaylabError

#: `AgentHarnessCompactResult`'s fields, by their JSON names
RESULT_FIELDS = (
    "success",
    "originalTokenCount",
    "compactedTokenCount",
    "tokenSaved",
    "replaySafe",
    "mutatedEventIds",
    "compactedWindow",
    "compactionEventId",
    "summaryText",
    "error",
)


class ContractError(ReplaylabError, ValueError):
    """The answer is not an `AgentHarnessCompactResult`; `field` names the first wrong field."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def params_json(params: CompactParams) -> dict[str, Any]:
    """What a compactor under test receives: the params in the contract's camelCase JSON."""
    return params.model_dump(by_alias=True, mode="json")


def read_result(answer: Any) -> tuple[CompactResult, list[str]]:
    """The contract's fields of `answer` (a `CompactResult` or a dict in its JSON shape) as a
    `CompactResult`, and the keys that were left out."""
    if isinstance(answer, CompactResult):
        answer = answer.model_dump(by_alias=True, mode="json")
    if not isinstance(answer, dict):
        raise ContractError(f"returned {type(answer).__name__}; expected an AgentHarnessCompactResult object")
    alias_of = {name: field.alias for name, field in CompactResult.model_fields.items()}
    taken: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in answer.items():
        name = key if key in RESULT_FIELDS else alias_of.get(key)  # a Python compactor may use snake_case
        if name in RESULT_FIELDS:
            taken[name] = value
        else:
            ignored.append(str(key))
    if "success" not in taken:
        raise ContractError("field 'success' is missing; expected true or false", "success")
    try:
        result = CompactResult.model_validate(taken, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        got = f" (got {first['input']!r:.80})" if "input" in first else ""
        raise ContractError(f"field {field!r}: {first['msg']}{got}", field) from None
    return result, ignored
