"""replaylab's answer to each input of the conformance corpus (`builders.openclaw_corpus`) under a
rule set, in the JSON shape OpenClaw's rules harness answers (openclaw_rules.mjs), and the table of
documented differences (docs/openclaw-rules.md) with what recognizes each.

`FUNCTIONS` maps the harness's function names to replaylab's. A difference is listed when one of
the table's rows for its rule set and function recognizes it (`RECOGNIZERS`, by the row's name);
any other difference fails the conformance test, and so does a row that recognizes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.compaction import identifiers, js_strings, recovery, session_truncation, truncation
from replaylab.compaction.summary import keywords, quality
from replaylab.compaction.summary.file_ops import FileOps, collect_file_ops, format_file_operations
from replaylab.replay.overflow import truncation_replacements
from replaylab.safety.openclaw_rules import is_mutating_tool_call
from replaylab.scrub import default_scrubber
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.javascript import js_truthy
from replaylab.transcript.model import MESSAGE_ADAPTER, dump_entry
from replaylab.upstream.openclaw_2026_4_12 import PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER
from replaylab.upstream.openclaw_2026_9_6 import PROFILE as OPENCLAW_PROFILE
from replaylab.upstream.runtime_rules import RuntimeRules
from repo_paths import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "openclaw-rules.md"
#: the functions each release's harness answers. 2026.4.12 has no give-up texts as functions,
#: replaylab classifies tool calls by 2026.9.6's `isMutatingToolCall` under every rule set
#: (docs/classification.md), so only that release checks it, and only 2026.9.6's harness binds the
#: recovery rewrite's plan and weighs CJK text (2026.4.12 counts UTF-16 units)
RELEASE_FUNCTIONS = {
    "2026.9.6": None,  # all of FUNCTIONS
    "2026.4.12": (
        "renderOverflowResetGuidance",
        "renderRecoverySideEffectCaution",
        "isMutatingToolCall",
        "recoveryToolResultPlan",
        "sessionLikelyHasOversizedToolResults",
        "estimateStringCharsWithMinimumRawWeight",
        # replaylab's safeguard audits what it writes as 2026.9.6 does, under every rule set
        "extractKeywords",
        "hasAskOverlap",
        "auditSummaryQuality",
        # the file lists are the openclaw@2026.9.6 profile's (`upstream.openclaw_2026_9_6_file_ops`)
        "fileOperations",
    ),
}


def _message(data: dict[str, Any]) -> Any:
    return MESSAGE_ADAPTER.validate_python(data)


def _suffix(options: dict[str, Any]) -> Callable[[int], str] | None:
    return (lambda _n, text=options["suffix"]: text) if "suffix" in options else None


def _text(rules: RuntimeRules, text: str, max_chars: int, options: dict[str, Any]) -> str:
    return truncation.truncate_tool_result_text(
        text,
        max_chars,
        min_keep_chars=options.get("minKeepChars"),
        suffix=_suffix(options),
        rules=rules,
        minimum_raw_weight=options.get("minimumRawWeight", 1),
    )


def _message_cut(rules: RuntimeRules, message: dict[str, Any], max_chars: int, options: dict[str, Any]) -> Any:
    cut = truncation.truncate_tool_result_message(
        _message(message),
        max_chars,
        min_keep_chars=options.get("minKeepChars"),
        suffix=_suffix(options),
        rules=rules,
        minimum_raw_weight=options.get("minimumRawWeight", 1),
    )
    return dump_entry(cut)


def _cap(rules: RuntimeRules, message: dict[str, Any], context_tokens: int | None) -> Any:
    return dump_entry(
        truncation.cap_tool_result_for_write(_message(message), context_tokens=context_tokens, rules=rules)
    )


def _guard(rules: RuntimeRules, messages: list[dict[str, Any]], context_tokens: int) -> Any:
    window = [WindowMessage(f"m{i}", _message(m)) for i, m in enumerate(messages)]
    try:
        out, _ = truncation.guard_context(window, context_tokens, rules=rules)
    except truncation.ContextOverflowError as error:
        return {"error": str(error)}
    return [dump_entry(w.message) for w in out]


def _recovery_plan(rules: RuntimeRules, messages: list[dict[str, Any]], context_tokens: int) -> Any:
    """The chain's truncation plan (`replay.overflow.truncation_replacements`, nothing protected)
    on the messages as entries m0, m1, …, with the budgets it used."""
    window = [WindowMessage(f"m{i}", _message(m)) for i, m in enumerate(messages)]
    max_chars, budget = session_truncation.recovery_budgets(context_tokens, rules)
    replacements = truncation_replacements(window, context_tokens, rules, skip=set())
    return {
        "maxChars": max_chars,
        "aggregateBudgetChars": budget,
        "replacements": [{"entryId": k, "message": dump_entry(v)} for k, v in replacements.items()],
    }


def _likely_oversized(rules: RuntimeRules, messages: list[dict[str, Any]], context_tokens: int) -> bool:
    return session_truncation.session_likely_has_oversized_tool_results(
        [_message(m) for m in messages], context_tokens, rules
    )


def _give_up(rules: RuntimeRules, attempt: dict[str, Any]) -> str:
    side_effects = (attempt.get("replayMetadata") or {}).get("hadPotentialSideEffects")
    return rules.give_up.overflow_user_text + (rules.give_up.side_effect_caution if side_effects else "")


def _caution(rules: RuntimeRules, attempt: dict[str, Any]) -> str:
    side_effects = (attempt.get("replayMetadata") or {}).get("hadPotentialSideEffects")
    return rules.give_up.side_effect_caution if side_effects else ""


def _quality_guard(rules: RuntimeRules) -> dict[str, Any]:
    guard = rules.quality_guard

    def clamp(value: int | None, default: int, top: int) -> int:
        return default if value is None else max(0, min(top, value))

    return {
        "qualityGuardEnabled": guard.enabled_by_default,
        "resolveQualityGuardMaxRetries": {
            str(v): clamp(v, guard.default_max_retries, guard.max_retries) for v in (None, -1, 99)
        },
        "resolveRecentTurnsPreserve": {
            str(v): clamp(v, guard.default_recent_turns_preserve, guard.max_recent_turns_preserve)
            for v in (None, -1, 99)
        },
    }


def quality_guard_of_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """The fields of the harness's `qualityGuardDefaults` answer replaylab's rules hold."""
    runtime = answer.get("runtimeFromEmptyConfig") or {}
    rename = {"undefined": "None"}
    return {
        "qualityGuardEnabled": runtime.get("qualityGuardEnabled"),
        "resolveQualityGuardMaxRetries": {
            rename.get(k, k): v for k, v in (answer.get("resolveQualityGuardMaxRetries") or {}).items()
        },
        "resolveRecentTurnsPreserve": {
            rename.get(k, k): v for k, v in (answer.get("resolveRecentTurnsPreserve") or {}).items()
        },
    }


def _audit(params: dict[str, Any]) -> dict[str, Any]:
    """`auditSummaryQuality` with the facts replaylab's safeguard audits (its answer as the one
    source summary, no unresolved request): OpenClaw's `{ok, reasons}`."""
    ok, reasons = quality.audit_summary_quality(
        params["summary"],
        params["identifiers"],
        params.get("latestAsk"),
        params.get("identifierPolicy", "strict"),
        structural=params["structuralSummary"],
    )
    return {"ok": ok, "reasons": reasons}


def _file_operations(messages: list[dict[str, Any]], previous: dict[str, Any] | None) -> dict[str, Any]:
    """The compaction's file lists and sections under the openclaw@2026.9.6 profile (its `file_ops`,
    whatever the rule set: they are the profile's, not a runtime rule), `previous` the compaction
    entry before the messages."""
    rules = OPENCLAW_PROFILE.file_ops
    ops = FileOps()
    if previous is not None and not js_truthy(previous.get("fromHook")):
        ops.merge_previous(previous.get("details"), rules)
    collect_file_ops([_message(m) for m in messages], ops, rules=rules)
    read, modified = ops.lists(OPENCLAW_PROFILE.file_lists_order)
    return {
        "readFiles": read,
        "modifiedFiles": modified,
        "sections": format_file_operations(read, modified, rules=rules),
    }


#: harness function → replaylab's answer under a rule set
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "truncateToolResultText": _text,
    "truncateToolResultMessage": _message_cut,
    "capToolResultForContext": _cap,
    "writeCapChars": lambda rules, ctx: truncation.write_cap_chars(ctx, rules),
    "contextGuard": _guard,
    "recoveryToolResultPlan": _recovery_plan,
    "sessionLikelyHasOversizedToolResults": _likely_oversized,
    "hasImportantTail": lambda _rules, text: truncation.has_important_tail(text),
    "extractOpaqueIdentifiers": lambda rules, text: identifiers.extract_opaque_identifiers(text, rules=rules),
    "estimateStringCharsWithMinimumRawWeight": lambda _rules, text, options: js_strings.weighted_length(
        text, options.get("minimumRawWeight", 1)
    ),
    "isContextOverflowError": lambda rules, text: recovery.is_context_overflow_error(text, rules),
    "isLikelyContextOverflowError": lambda rules, text: recovery.is_likely_context_overflow_error(text, rules),
    "isCompactionFailureError": lambda rules, text: recovery.is_compaction_failure_error(text, rules),
    "extractObservedOverflowTokenCount": lambda rules, text: recovery.extract_observed_overflow_token_count(
        text, rules
    ),
    "isRateLimitErrorMessage": lambda rules, text: recovery.is_rate_limit_error(text, rules),
    "isBillingErrorMessage": lambda rules, text: recovery.is_billing_error(text, rules),
    "isContextOverflow": lambda rules, message, window: recovery.pi_is_context_overflow(
        _message(message), window, rules
    ),
    "isMutatingToolCall": lambda _rules, name, args: is_mutating_tool_call(name, args),
    "renderOverflowResetGuidance": _give_up,
    "renderRecoverySideEffectCaution": _caution,
    "qualityGuardDefaults": _quality_guard,
    "extractKeywords": lambda _rules, text: keywords.extract_keywords(text),
    "hasAskOverlap": lambda _rules, summary, ask: quality.has_ask_overlap(summary, ask),
    "auditSummaryQuality": lambda _rules, params: _audit(params),
    "fileOperations": lambda _rules, messages, previous: _file_operations(messages, previous),
}


def openclaw_answer(case: Any, answer: dict[str, Any]) -> Any:
    """What OpenClaw answered, in the shape `FUNCTIONS` give (a throw is `{"error": message}`)."""
    if "error" in answer:
        return {"error": answer["error"]}
    value = None if answer.get("undefined") else answer.get("ok")
    if case.fn == "qualityGuardDefaults":
        return quality_guard_of_answer(value or {})
    return value


def replaylab_answer(case: Any, rules: RuntimeRules) -> Any:
    try:
        return FUNCTIONS[case.fn](rules, *case.args)
    except Exception as error:  # a difference to report, not a crash of the comparison
        return {"raised": f"{type(error).__name__}: {error}"}


# ---------------------------------------------------------------- the documented differences


@dataclass(frozen=True)
class Difference:
    """One differing input: the case, both answers."""

    case: Any
    ours: Any
    theirs: Any

    @property
    def text(self) -> str:
        first = self.case.args[0] if self.case.args else ""
        return first if isinstance(first, str) else ""


def _secret_masked(difference: Difference) -> bool:
    """replaylab finds no identifier in what its scrubber would redact; OpenClaw scans secrets too."""
    text = difference.text
    masked = default_scrubber().mask(text)
    theirs = difference.theirs if isinstance(difference.theirs, list) else []
    return masked != text and any(value not in masked for value in theirs)


def _placeholder_pass(difference: Difference) -> bool:
    """replaylab replaced older results with the placeholder where OpenClaw raised at once."""
    raised = isinstance(difference.theirs, dict) and "Context overflow" in str(difference.theirs.get("error"))
    return raised and PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER in str(difference.ours)


def _bare_429(difference: Difference) -> bool:
    """ "429" in the text, but never as a word of its own (a token count such as 142931)."""
    return "429" in difference.text and not re.search(r"\b429\b", difference.text)


def _throttling(difference: Difference) -> bool:
    return "throttl" in difference.text.lower() and difference.theirs is True and difference.ours is False


def _billing_head(difference: Difference) -> bool:
    head = re.match(r"^(?:error[:\s-]+)?billing(?:\s+error)?(?:[:\s-]+|$)", difference.text, re.I)
    return bool(head) and difference.theirs is True and difference.ours is False


#: a row's name (its first cell in docs/openclaw-rules.md) → what recognizes its differences
RECOGNIZERS: dict[str, Callable[[Difference], bool]] = {
    "secrets-masked": _secret_masked,
    "placeholder-pass": _placeholder_pass,
    "bare-429": _bare_429,
    "throttling-wordings": _throttling,
    "billing-head": _billing_head,
}


@dataclass(frozen=True)
class Row:
    name: str
    rules: str
    functions: tuple[str, ...]
    reason: str


def documented_differences(path: Path = DOCS) -> list[Row]:
    """The rows of the table after `<!-- differences -->` in docs/openclaw-rules.md."""
    text = path.read_text(encoding="utf-8")
    section = text.split("<!-- differences -->", 1)[1]
    rows: list[Row] = []
    header: list[str] = []
    for line in section.splitlines():
        if not line.startswith("|"):
            if rows or header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif not set(cells[0]) <= {"-", " ", ":"}:
            cell = dict(zip(header, cells))
            functions = tuple(re.findall(r"`([^`]+)`", cell["functions"]))
            rows.append(Row(cell["name"].strip("`"), cell["rules"].strip("`"), functions, cell["reason"]))
    return rows


def explained(difference: Difference, rules: RuntimeRules, rows: list[Row]) -> Row | None:
    """The first documented row of `rules` and this function that recognizes `difference`."""
    for row in rows:
        if row.rules == rules.name and difference.case.fn in row.functions:
            if RECOGNIZERS[row.name](difference):
                return row
    return None


def functions_of(release: str) -> set[str]:
    """The functions the conformance test compares for `release`."""
    return set(FUNCTIONS) - set(RELEASE_FUNCTIONS[release] or ())
