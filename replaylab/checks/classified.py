"""Every finding about a mutating call says which classification rule made the call mutating.

A dropped, altered, blocked or repeated call is a finding only because the call is mutating; the
rule that said so (`replaylab.safety.classify`: declared, OpenClaw's, the shell grammar, the
name's verb, no evidence at all …) decides whether the finding is worth reading. It is kept in
`detail.classification` (class, rule, reason) and named at the end of the message, as the
ledger names it for each event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from replaylab.defects import Code, Defect
from replaylab.safety.classify import ToolClassifier

#: findings about one mutating call
CALL_FINDINGS = frozenset(
    {
        Code.MUTATION_DROPPED,
        Code.MUTATION_ALTERED,
        Code.SIDE_EFFECT_ESCAPED,
        Code.DUPLICATE_SIDE_EFFECT,
        Code.RECORDED_MUTATION_DROPPED,
    }
)
#: the longest reason a message quotes (the detail keeps it whole)
MESSAGE_REASON_CHARS = 120


def with_classification(defects: Iterable[Defect], classifier: ToolClassifier) -> list[Defect]:
    """The defects, each call finding with its call's classification added (once)."""
    out = []
    for defect in defects:
        call = _call_of(defect)
        if call is None or "classification" in defect.detail:
            out.append(defect)
            continue
        classified = classifier.explain(*call)
        reason = classified.reason
        shown = reason if len(reason) <= MESSAGE_REASON_CHARS else reason[: MESSAGE_REASON_CHARS - 1] + "…"
        detail = {
            **defect.detail,
            "classification": {"class": classified.tool_class, "rule": classified.rule, "reason": reason},
        }
        message = f"{defect.message} [mutating by `{classified.rule}`: {shown}]"
        out.append(defect.model_copy(update={"detail": detail, "message": message}))
    return out


def _call_of(defect: Defect) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments a call finding is about: the attempted call of a blocked one, the
    recorded call of a dropped or altered one."""
    if defect.code not in CALL_FINDINGS or not defect.where.tool:
        return None
    if defect.code in (Code.SIDE_EFFECT_ESCAPED, Code.DUPLICATE_SIDE_EFFECT):
        arguments = defect.actual.get("arguments") if isinstance(defect.actual, dict) else None
    else:
        arguments = defect.detail.get("arguments")
    return defect.where.tool, arguments if isinstance(arguments, dict) else {}
