"""Summaries that lose the memory: re-summarized, emptied, replaced, or stripped of identifiers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from replaylab.compaction import CompactParams, CompactResult
from replaylab.compaction.identifiers import extract_identifiers
from replaylab.defects import Code
from replaylab.selftest import Mutant, base_compactor
from replaylab.transcript import build_window
from replaylab.transcript.model import MessageEntry, identifier_text
from replaylab.upstream.openclaw_2026_4_12 import (
    NO_PRIOR_HISTORY,
    NONE_TEXT,
    REQUIRED_SUMMARY_SECTIONS,
    SUMMARY_UNAVAILABLE_TEXT,
)
from replaylab.values import identifier_tokens

from ._kit import Ctx, describe, edited

if TYPE_CHECKING:
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import TranscriptWriter


def _double(
    params: CompactParams, *, classifier: ToolClassifier | None = None, writer: TranscriptWriter | None = None
) -> CompactResult:
    """Compact, then a second pass fires right away on the compaction itself (the "last entry is a
    compaction" guard bypassed) and re-summarizes the summary: each section keeps its first line."""
    assert writer is not None, "a mutant appends to the pipeline's working copy through its writer"
    first: CompactResult = base_compactor()(params, classifier=classifier, writer=writer)
    if not first.success:
        return first
    lines = [orjson.loads(line) for line in Path(writer.path).read_bytes().splitlines() if line.strip()]
    entry = next((e for e in reversed(lines) if e.get("id") == first.compaction_event_id), lines[-1])
    again = {
        **entry,
        "id": f"{entry['id']}2",
        "parentId": lines[-1]["id"],  # the leaf: the compaction, or the last entry it restated
        "summary": resummarized(entry["summary"]),
        "details": orjson.loads(orjson.dumps(entry.get("details") or {})),
    }
    writer.append(again)
    return describe(first, writer.path, again, f"second compaction {again['id']} re-summarized {entry['id']}")


def resummarized(summary: str) -> str:
    """A summary of a summary: headings and the first line under each survive, the rest is lost."""
    out, taken = [], False
    for line in summary.splitlines():
        if line.startswith("#"):
            out.append(line)
            taken = False
        elif line.strip() and not taken:
            out.append(line)
            taken = True
    return "\n".join(out)


DOUBLE = Mutant(
    name="double-compaction",
    issue="openclaw/openclaw#12170 (guard bypass #9282)",
    expected=(Code.COMPACTION_LOOP,),
    what="a second pass fires right after the first and summarizes the summary",
    compactor=_double,
)


def skeleton() -> str:
    """OpenClaw's empty structured fallback: every section, nothing in it."""
    bodies = [NO_PRIOR_HISTORY] + [NONE_TEXT] * (len(REQUIRED_SUMMARY_SECTIONS) - 1)
    return "\n\n".join(f"{heading}\n{body}" for heading, body in zip(REQUIRED_SUMMARY_SECTIONS, bodies))


def _skeleton(ctx: Ctx) -> str:
    ctx.entry["summary"] = skeleton()
    return "summary overwritten with the empty skeleton"


SKELETON = Mutant(
    name="empty-skeleton-summary",
    issue="openclaw/openclaw#127997",
    expected=(Code.SUMMARY_INVALID,),
    what="a prefix-only split-turn pass writes the empty skeleton (`## Decisions` / `No prior history.`) "
    "over the summary",
    compactor=edited(_skeleton),
)


def _unavailable(ctx: Ctx) -> str:
    cut = ctx.first_kept_index()
    protected = set(ctx.protected)
    messages = sum(1 for e in ctx.path[:cut] if isinstance(e, MessageEntry) and e.id not in protected)
    ctx.entry["summary"] = SUMMARY_UNAVAILABLE_TEXT.format(messages=messages, oversized=messages)
    return "summary replaced by 'Summary unavailable due to size limits'"


UNAVAILABLE = Mutant(
    name="summary-unavailable-wipe",
    issue="openclaw/openclaw#5224 (#4810)",
    expected=(Code.SUMMARY_INVALID,),
    what="the summary becomes 'Summary unavailable due to …': a total memory wipe",
    compactor=edited(_unavailable),
)

_EXACT = re.compile(r"(^## Exact identifiers\n)(.*?)(?=^## |\Z)", re.S | re.M)


def _drop_identifiers(ctx: Ctx) -> str | None:
    """The summary keeps its prose but loses every identifier of the span (and its
    `## Exact identifiers` section): ids, paths, URLs, numbers the agent learned."""
    summary = ctx.entry.get("summary", "")
    window = build_window(ctx.path)
    span = "\n".join(identifier_text(w.message) for w in window)
    values = sorted(set(extract_identifiers(span)) | set(identifier_tokens(span)), key=len, reverse=True)
    stripped = _EXACT.sub(lambda m: m.group(1) + "None.\n\n", summary)
    for value in values:
        stripped = stripped.replace(value, "")
    if stripped == summary:
        return None
    ctx.entry["summary"] = stripped
    return "identifiers removed from the summary"


IDENTIFIERS = Mutant(
    name="identifiers-dropped-from-summary",
    issue="openclaw identifierPolicy strict (quality guard `missing_identifiers`)",
    # IDENTIFIER_LOST sees OpenClaw's opaque identifiers (hex, paths, URLs, host:port, ≥ 6 digits);
    # an id like ORD-77123 is seen only when a later turn needs it: the replay then diverges
    expected=(Code.IDENTIFIER_LOST, Code.TOOL_SEQUENCE_DIVERGED),
    what="the summary paraphrases the span and drops its exact identifiers",
    compactor=edited(_drop_identifiers),
)

MUTANTS = [DOUBLE, SKELETON, UNAVAILABLE, IDENTIFIERS]
