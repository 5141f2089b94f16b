"""Diagnostics of a transcript file: the one way they are made, and pydantic's errors in the file's terms.

A user fixes a transcript in an editor, so a validation error names the line, the entry id and
the JSON path as written in the line, not pydantic's location with its union tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replaylab.diagnostics import Diagnostic

#: problems after which nothing of the file was lost (glued objects recovered on request, a newer
#: version read as the newest known, a version that is no number read as pi reads it, a compaction
#: that names itself as first kept: pi's way to keep nothing before it, a null content read as empty
#: as pi reads it, a content item kept as written as the agents keep it, a header field of another
#: type, the header read as it is, an assistant's usage of another type, read as written): warnings;
#: every other code is an error
WARNING_CODES = frozenset(
    {
        "glued-lines-recovered",
        "unknown-version",
        "bad-version",
        "first-kept-itself",
        "null-content",
        "parent-not-string",
        "opaque-content",
        "pi-unestimable",
        "header-field-type",
        "usage-type",
        "v1-relinked",
    }
)


def diagnostic(
    name: Path, line: int | None, code: str, message: str, *, entry_id: str | None = None, field: str | None = None
) -> Diagnostic:
    return Diagnostic(
        code=code,
        file=str(name),
        line=line,
        entry_id=entry_id,
        field=field,
        message=message,
        severity="warning" if code in WARNING_CODES else "error",
    )


def validation_diagnostics(
    exc: ValidationError,
    name: Path,
    lineno: int,
    entry_id: str | None,
    *,
    code: str = "invalid-entry",
    outcome: str = "entry skipped",
    tagged: bool = True,
) -> list[Diagnostic]:
    """One diagnostic per field pydantic rejected (at most 3), each saying what became of the
    object (`outcome`); `tagged`: the object was validated through the entry union, whose tag
    pydantic puts first in each location."""
    errors = exc.errors()
    # `content: str | list[...]` reports one error per union member; the `str` one, and the
    # instance check of an `ObjectContent` (never made from JSON), are noise when another got further
    real = [e for e in errors if "str" not in e["loc"] and e["type"] != "is_instance_of"] or errors
    out = []
    for err in real[:3]:
        out.append(
            diagnostic(
                name,
                lineno,
                code,
                f"{err['msg']} (got {_short(err.get('input'))}); {outcome}",
                entry_id=entry_id,
                field=json_path(err["loc"], tagged=tagged) or None,
            )
        )
    return out


def json_path(loc: tuple[Any, ...], *, tagged: bool = True) -> str:
    """pydantic's error location as the JSON path a user can find in the line: drop the union
    tags pydantic inserts (entry type at [0] when `tagged`, role after `message`, block type
    after a list index) and union member labels (`str`, `list[...]`)."""
    parts: list[str] = []
    skip_next = tagged  # loc[0] is the entry-type tag
    for part in loc:
        if skip_next:
            skip_next = False
            continue
        if isinstance(part, str) and (part == "str" or "[" in part):
            continue
        parts.append(str(part))
        skip_next = (part == "message" and len(parts) == 1) or isinstance(part, int)
    return ".".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
