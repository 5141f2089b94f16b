"""Which tool call made a recorded HTTP interaction: the tag `replaylab record` writes on each.

Why: replay never runs a pack tool's code, so the HTTP a call made can no longer be seen by
making it again. The recorder knows it — each call runs on its own, and the interactions it
captured are that call's — and writes it beside the interaction, as a key vcrpy does not read:

    {"request": …, "response": …, "replaylab": {"toolCallId": "call_t1s0c0", "tool": "get_order"}}

Replay reads it for the evidence check (`MISLABELLED_TOOL`: a tool declared read whose recorded
HTTP is a write) and to mark the HTTP of calls before the compaction point as used. A cassette
without tags (recorded before they existed, or synthesized by an importer, whose recorded-tool
interactions are the calls themselves) gives no such evidence: `replaylab rerecord` adds it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replaylab.diagnostics import Diagnostic, InputError

TAG_KEY = "replaylab"


def tagged(interaction: dict[str, Any], tool_call_id: str, tool: str) -> dict[str, Any]:
    """The interaction with the tag of the call that made it."""
    return {**interaction, TAG_KEY: {"toolCallId": tool_call_id, "tool": tool}}


def tool_call_id_of(
    item: dict[str, Any], *, file: str, index: int, line_of: Callable[[int], int | None] | None = None
) -> str | None:
    """The tool call id an interaction is tagged with (None: untagged). A tag of another shape is
    an `InputError` naming the file and field: a cassette that says something replaylab cannot
    read must not be taken as one that says nothing."""
    tag = item.get(TAG_KEY)
    if tag is None:
        return None
    if isinstance(tag, dict):
        call_id, tool = tag.get("toolCallId"), tag.get("tool")
        if isinstance(call_id, str) and isinstance(tool, str):
            return call_id
    raise InputError(
        [
            Diagnostic(
                code="cassette-invalid",
                file=file,
                line=line_of(index) if line_of is not None else None,
                field=f"interactions[{index}].{TAG_KEY}",
                message="expected {toolCallId: <string>, tool: <string>}, the tool call that made this "
                f"interaction; got {type(tag).__name__}",
            )
        ]
    )
