"""`reports/replaylab.json`: the versioned, machine-readable report.

The whole report is scrubbed (`replaylab.scrub`, the same scrubber as the cassettes, the HTML
and the markdown): a secret scrubbed from the HTML but left in the JSON is still leaked
(promptfoo#9698).

Schema versioning: `schema_version` is the major version (an int). A reader refuses another major
version with a clear error instead of guessing; fields added within a major version are ignored
by older readers (pydantic ignores unknown fields), so minor additions need no bump.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from replaylab import __version__
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.results import SCHEMA_VERSION, ItemResult, RunReport
from replaylab.scrub import default_scrubber, scrub_data

#: at most this many validation problems are listed for one file (the rest are counted)
MAX_VALIDATION_DIAGNOSTICS = 20


def dump_json(report: RunReport) -> bytes:
    """The report as scrubbed UTF-8 JSON: 2-space indent, one line per item, trailing newline.

    Items are inserted as the scrubbed JSON made where they ran (`item_json`), or made now:
    scrubbing is per string and per key, so an item scrubbed alone is scrubbed as it would be
    inside the whole report."""
    head = scrub_data(report.model_dump(mode="json", exclude={"items"}))
    items = [
        orjson.Fragment(item._report_json if item._report_json is not None else item_json(item))
        for item in report.items
    ]
    data = {name: items if name == "items" else head[name] for name in RunReport.model_fields}
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def item_json(item: ItemResult) -> bytes:
    """One item as the JSON report holds it: scrubbed, compact, one line.

    Made as pydantic's own JSON of the item (the same bytes as `orjson.dumps(model_dump(mode=
    "json"))`, in one step) and written as it is when nothing in it could be a secret — nearly
    always; otherwise the item's data is scrubbed and dumped. Once per item: scrubbing and dumping
    every item is the largest of pytest's costs per item besides the item's own run."""
    return _scrubbed_item(item)[0]


def _scrubbed_item(item: ItemResult) -> tuple[bytes, dict[str, Any] | None]:
    """(`item_json`, the scrubbed data it was dumped from; None when the item's own JSON was
    clean and written as it is)."""
    try:
        blob = ItemResult.__pydantic_serializer__.to_json(item)
    except ValueError:  # text JSON cannot carry (a lone surrogate): the data's own route reports it
        blob = None
    if blob is not None and default_scrubber().json_is_clean(blob):
        return blob, None
    data = scrub_data(item.model_dump(mode="json"))
    return orjson.dumps(data), data


def item_messages(item: ItemResult) -> tuple[bytes, bytes, dict[str, str]]:
    """What an xdist worker sends for one item: its report JSON (`item_json`); the same without
    the heavy fields (windows, run traces, summary: `replaylab.report.html.HEAVY_FIELDS`, most of
    the bytes), for the controller to read instead; and its HTML sections, rendered here
    (`replaylab.report.html.item_sections`), which are the heavy fields' only reader besides the
    JSON report. The controller reads every item while the workers run, so its reading time is
    taken from theirs on a machine with as many workers as cores, and it renders the HTML alone
    at the end of the run. Scrubbing is per string and per key, so the light part scrubbed alone
    is the scrubbed item's light part."""
    full, light, light_item, sections = _item_parts(item)
    return full, orjson.dumps(light), sections


def item_kept(item: ItemResult, sections: bool = True) -> ItemResult:
    """What a run without xdist keeps of an item until the reports are written: what a worker
    sends (`item_messages`), not read back from JSON — its report JSON, its HTML sections, its
    light copy. Why not the whole result: every item's windows and traces stayed in memory to the
    end of the run, and its garbage collections scanned them once more per item. `sections`:
    False for an item the report will show brief (`SectionBudget`), made from the light copy."""
    full, _, light_item, rendered = _item_parts(item, sections)
    light_item._report_json, light_item._scrubbed, light_item._sections = full, True, rendered
    return light_item


def _item_parts(item: ItemResult, sections: bool = True) -> tuple[bytes, dict[str, Any], ItemResult, dict[str, str]]:
    """(report JSON, scrubbed light data, that data as an item, HTML sections — none when not
    `sections`) of one item."""
    from replaylab.report.html import HEAVY_FIELDS, item_sections

    full, scrubbed = _scrubbed_item(item)
    # scrubbing is per string and per key: the light part of the scrubbed item is the light part
    # scrubbed alone, without scrubbing it twice (and a part of clean JSON is clean)
    light = _without(item.model_dump(mode="json", exclude=HEAVY_FIELDS) if scrubbed is None else scrubbed, HEAVY_FIELDS)
    light_item = ItemResult.model_validate(light)
    return full, light, light_item, item_sections(item, light_item) if sections else {}


def _without(data: dict[str, Any], excluded: dict[str, Any]) -> dict[str, Any]:
    """`data` without the fields `excluded` names, as pydantic's `exclude` takes them (`True`: the
    whole field; a mapping: those fields of it)."""
    out = {}
    for key, value in data.items():
        rule = excluded.get(key)
        if rule is True:
            continue
        if isinstance(rule, dict) and isinstance(value, dict):
            value = _without(value, rule)
        out[key] = value
    return out


def item_from_report_json(
    raw: str | bytes, light: str | bytes | None = None, sections: dict[str, str] | None = None
) -> ItemResult:
    """An item sent as its report JSON (by an xdist worker): scrubbed already, and its JSON kept
    for the report as it came. `light` / `sections`: the same without the heavy fields and the
    item's HTML sections (`item_messages`), read instead when given — the object then lacks its
    windows, traces and summary, which no report reads of it besides its sections."""
    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    item = ItemResult.model_validate_json(data if light is None else light)
    item._report_json, item._scrubbed = data, True
    if light is not None:
        item._sections = dict(sections or {})
    return item


def load_json(source: str | Path | bytes) -> RunReport:
    """Read a report written by `dump_json` (a path, or the bytes themselves).

    Raises `InputError` naming the file for unreadable files, invalid JSON, another major
    `schema_version`, or data that does not match the schema (with the field path).
    """
    if isinstance(source, (bytes, bytearray)):
        name, raw = "<report bytes>", bytes(source)
    else:
        name = str(source)
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise InputError(
                [_diag(name, "REPORT_UNREADABLE", f"cannot read the report: {exc.strerror or exc}")]
            ) from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            [
                Diagnostic(
                    code="REPORT_INVALID_JSON",
                    file=name,
                    line=exc.lineno,
                    message=f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); "
                    "expected a replaylab.json written by replaylab",
                )
            ]
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            [_diag(name, "REPORT_INVALID", f"expected a JSON object (a replaylab report), found {type(data).__name__}")]
        )
    _check_schema_version(name, data.get("schema_version"))
    try:
        return RunReport.model_validate(data)
    except ValidationError as exc:
        raise InputError(_validation_diagnostics(name, exc)) from None


def _check_schema_version(name: str, version: object) -> None:
    if version is None:
        raise InputError(
            [
                Diagnostic(
                    code="REPORT_SCHEMA",
                    file=name,
                    field="schema_version",
                    message=f"missing: not a replaylab report (expected schema_version {SCHEMA_VERSION})",
                )
            ]
        )
    major: int | None = None
    if isinstance(version, int) and not isinstance(version, bool):
        major = version
    elif isinstance(version, str) and version.split(".", 1)[0].isdigit():
        major = int(version.split(".", 1)[0])
    if major != SCHEMA_VERSION:
        raise InputError(
            [
                Diagnostic(
                    code="REPORT_SCHEMA",
                    file=name,
                    field="schema_version",
                    message=f"schema_version {version!r} is not supported: replaylab {__version__} reads major "
                    f"version {SCHEMA_VERSION}; use the replaylab version that wrote the report",
                )
            ]
        )


def _validation_diagnostics(name: str, exc: ValidationError) -> list[Diagnostic]:
    errors = exc.errors()
    out = [
        Diagnostic(
            code="REPORT_INVALID",
            file=name,
            field=".".join(str(p) for p in err["loc"]) or None,
            message=f"{err['msg']} (does not match the replaylab report schema {SCHEMA_VERSION})",
        )
        for err in errors[:MAX_VALIDATION_DIAGNOSTICS]
    ]
    if len(errors) > MAX_VALIDATION_DIAGNOSTICS:
        out.append(
            _diag(name, "REPORT_INVALID", f"... and {len(errors) - MAX_VALIDATION_DIAGNOSTICS} more schema errors")
        )
    return out


def _diag(name: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(code=code, file=name, message=message)
