"""A validator of transcript entries that checks the models' schema but returns plain dicts.

Why: the lazy load's pass must validate every entry (an invalid one changes the tree and the
diagnostics) but keeps none of them, and building a model per entry only to free it would be a large
part of that pass. `skeleton_validator()` is `ENTRY_ADAPTER`'s pydantic-core schema with every
model turned into a typed dict (same fields, aliases, defaults, union tags and config). If
pydantic's core-schema shape ever changes so that the conversion fails, it is the model
validator instead (slower, same result).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import SchemaValidator

from replaylab import caches
from replaylab.transcript import model


@caches.lru("transcript.skeleton_validator", maxsize=1)
def skeleton_validator() -> Callable[[Any], Any]:
    """`validate_python` of the typed-dict schema: field names as keys, defaults applied. Built
    once per process, on first use: the conversion walks the whole schema."""
    try:
        return SchemaValidator(_as_typed_dicts(model.ENTRY_ADAPTER.core_schema, _tag_keys())).validate_python
    except Exception:
        return model.ENTRY_ADAPTER.validate_python


def _tag_keys() -> dict[Any, str]:
    """The model's union discriminators (Python functions, one call per union per entry) → the
    key each reads. In the skeleton schema pydantic-core reads the key itself; a tag the
    function would map to `unknown` (an unknown or non-string value) then fails the skeleton
    validation, and the model validator decides — same result, only slower for such entries."""
    return {model._entry_tag: "type", model._block_tag: "type", model._role_tag: "role"}


def _as_typed_dicts(schema: Any, tag_keys: dict[Any, str]) -> Any:
    if isinstance(schema, list):
        return [_as_typed_dicts(s, tag_keys) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "tagged-union" and schema.get("discriminator") in tag_keys:
        return {
            **_as_typed_dicts({k: v for k, v in schema.items() if k != "discriminator"}, tag_keys),
            "discriminator": tag_keys[schema["discriminator"]],
        }
    if schema.get("type") != "model":
        return {k: _as_typed_dicts(v, tag_keys) for k, v in schema.items()}
    fields_schema = schema["schema"]
    if fields_schema.get("type") != "model-fields" or fields_schema.get("computed_fields"):
        raise ValueError(f"unexpected model schema {fields_schema.get('type')!r}")
    fields = {}
    for name, spec in fields_schema["fields"].items():
        field_schema: dict[str, Any] = {
            "type": "typed-dict-field",
            "schema": _as_typed_dicts(spec["schema"], tag_keys),
            "required": spec["schema"].get("type") != "default",
        }
        if "validation_alias" in spec:
            field_schema["validation_alias"] = spec["validation_alias"]
        fields[name] = field_schema
    out: dict[str, Any] = {"type": "typed-dict", "fields": fields, "extra_behavior": "allow"}
    for key in ("config", "ref"):
        if key in schema:
            out[key] = schema[key]
    return out
