"""Compare two runs: tool-call sequences (four match modes, per-tool argument rules) and answers.

Volatile fields (tool call ids, timestamps, token counts) are dropped first, equal things are
compared with `==`, and only what is unequal is taken apart into its differing leaves
(`replaylab.differences`), which the findings name by human path and show windowed.
"""

from __future__ import annotations

import difflib
import re
from itertools import repeat
from typing import Any

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Code, Defect
from replaylab.differences import Differences, differences
from replaylab.replay.trace import RunTrace, ToolCallTrace
from replaylab.results import Divergence
from replaylab.suite import MatchSettings

_WS = re.compile(r"\s+")
_PUNCT_END = re.compile(r"[\s.!?]+$")


def normalize_answer(text: str) -> str:
    return _PUNCT_END.sub("", _WS.sub(" ", text or "").strip().lower())


def answer_identifiers(text: str) -> set[str]:
    """The identifiers an answer names (`values.identifier_tokens`: `REF-9003`, `ORD-77138`,
    `CUST-10042`), as a set: the facts a customer acts on, whatever words surround them."""
    from replaylab.values import identifier_tokens

    return set(identifier_tokens(text or ""))


def answers_match(baseline: str, compacted: str, match: MatchSettings) -> bool:
    if match.answer == "ignore":
        return True
    if baseline == compacted:  # equal texts normalize alike, and their similarity ratio is 1.0
        return match.answer != "similarity" or match.similarity <= 1.0
    if match.answer == "exact":
        return baseline == compacted
    if match.answer == "normalized":
        return normalize_answer(baseline) == normalize_answer(compacted)
    if match.answer == "identifiers":
        return answer_identifiers(baseline) == answer_identifiers(compacted)
    ratio = difflib.SequenceMatcher(None, normalize_answer(baseline), normalize_answer(compacted)).ratio()
    return ratio >= match.similarity


def call_key(call: ToolCallTrace, match: MatchSettings) -> tuple[str, Any]:
    """What identifies a call for comparison: name and the compared arguments (canonical)."""
    from replaylab.cassette import canonical_json

    if match.args == "ignore":
        return call.tool, None
    args = dict(call.arguments)
    if isinstance(match.args, dict) and call.tool in match.args:
        for key in match.args[call.tool].ignore:
            args.pop(key, None)
    return call.tool, canonical_json(args)


def sequences_match(baseline: list[ToolCallTrace], compacted: list[ToolCallTrace], match: MatchSettings) -> bool:
    if match.tools == "strict":  # `[call_key(c) for c in baseline] == [... compacted]`, pair by pair
        return len(baseline) == len(compacted) and all(map(_same_key, baseline, compacted, repeat(match)))
    a = [call_key(c, match) for c in baseline]
    b = [call_key(c, match) for c in compacted]
    if match.tools == "unordered":
        return sorted(a, key=repr) == sorted(b, key=repr)
    if match.tools == "subset":  # compacted calls ⊆ baseline calls (multiset)
        return _multiset_le(b, a)
    return _multiset_le(a, b)  # superset: baseline calls ⊆ compacted calls


def _same_key(left: ToolCallTrace, right: ToolCallTrace, match: MatchSettings) -> bool:
    """`call_key(left, match) == call_key(right, match)`, without serializing the arguments of
    the usual pair — a replayed call whose arguments are the very values of the other run's."""
    if left.tool != right.tool:
        return False
    if match.args == "ignore":
        return True
    if not (isinstance(match.args, dict) and left.tool in match.args):
        try:
            if _same_json(left.arguments, right.arguments):
                return True
        except RecursionError:  # nested deeper than Python recurses: `canonical_json` still can
            pass
    return call_key(left, match) == call_key(right, match)


def _same_json(left: Any, right: Any) -> bool:
    """True only when `canonical_json(left) == canonical_json(right)` is sure without writing
    either: the same structure of plain JSON types (exactly dict with str keys, list, str, int,
    bool, None, float), equal leaf by leaf. False means "not known": the caller serializes.
    Why so strict: `==` alone also holds for values JSON spells apart (1, 1.0 and True; 0.0 and
    -0.0), and a subclass or another type may serialize in its own way."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is str or kind is int or kind is bool or left is None:
        return bool(left == right)
    if kind is float:
        return bool(left == right and left != 0.0)  # NaN is never equal; 0.0 and -0.0 are spelled apart
    if kind is dict:
        return len(left) == len(right) and all(
            type(key) is str and key in right and _same_json(value, right[key]) for key, value in left.items()
        )
    if kind is list:
        return len(left) == len(right) and all(map(_same_json, left, right))
    return False


def _multiset_le(small: list[Any], big: list[Any]) -> bool:
    remaining = list(big)
    for item in small:
        if item not in remaining:
            return False
        remaining.remove(item)
    return True


def diff_runs(baseline: RunTrace, compacted: RunTrace, match: MatchSettings) -> tuple[list[Defect], Divergence | None]:
    """TOOL_SEQUENCE_DIVERGED / ANSWER_DIVERGED per turn, and the first divergence."""
    defects: list[Defect] = []
    first: Divergence | None = None
    compacted_turns = {t.turn: t for t in compacted.turns}
    for turn in baseline.turns:
        other = compacted_turns.get(turn.turn)
        if other is None:
            defects.append(
                Defect.of(
                    Code.TOOL_SEQUENCE_DIVERGED,
                    f"turn {turn.turn} was not replayed after compaction",
                    turn=turn.turn,
                    expected="turn replayed",
                    actual="missing",
                )
            )
            first = first or Divergence(turn=turn.turn, what="turn missing", baseline=turn.answer, compacted=None)
            continue
        if not sequences_match(turn.tool_calls, other.tool_calls, match):
            step, base_call, comp_call = _first_call_difference(turn.tool_calls, other.tool_calls, match)
            diffs = call_differences(base_call, comp_call, match)
            named = comp_call or base_call
            defects.append(
                Defect.of(
                    Code.TOOL_SEQUENCE_DIVERGED,
                    f"turn {turn.turn}: tool calls differ ({match.tools} match)"
                    + (f": {_call_summary(base_call, comp_call, diffs)}" if step is not None else ""),
                    turn=turn.turn,
                    tool_call_id=named.tool_call_id if named else None,
                    tool=named.tool if named else None,
                    expected=[_show(c) for c in turn.tool_calls],
                    actual=[_show(c) for c in other.tool_calls],
                    detail=diffs.as_detail(),
                )
            )
            first = first or Divergence(
                turn=turn.turn,
                step=step,
                what="tool call",
                baseline=_show(base_call) if base_call else None,
                compacted=_show(comp_call) if comp_call else None,
            )
        if not answers_match(turn.answer, other.answer, match):
            defects.append(
                Defect.of(
                    Code.ANSWER_DIVERGED,
                    f"turn {turn.turn}: final answer differs ({match.answer})",
                    turn=turn.turn,
                    expected=turn.answer,
                    actual=other.answer,
                    detail=differences(turn.answer, other.answer).as_detail(),
                )
            )
            first = first or Divergence(turn=turn.turn, what="answer", baseline=turn.answer, compacted=other.answer)
    return defects, first


def _first_call_difference(
    a: list[ToolCallTrace], b: list[ToolCallTrace], match: MatchSettings
) -> tuple[int | None, ToolCallTrace | None, ToolCallTrace | None]:
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else None
        right = b[index] if index < len(b) else None
        if left is None or right is None or call_key(left, match) != call_key(right, match):
            return index, left, right
    return None, None, None


def call_differences(
    expected: ToolCallTrace | None, actual: ToolCallTrace | None, match: MatchSettings | None = None
) -> Differences:
    """The differing leaves of two calls: of their compared arguments when the tool is the same
    (paths read `old_string`), else of tool and arguments (`tool`, `arguments.command`); a call
    missing on one side is the whole value. Arguments the suite ignores are left out."""
    if expected is not None and actual is not None and expected.tool == actual.tool:
        return differences(_compared(expected, match), _compared(actual, match))
    return differences(_call(expected, match), _call(actual, match))


def _compared(call: ToolCallTrace, match: MatchSettings | None) -> dict[str, Any]:
    if match is None or not isinstance(match.args, dict) or call.tool not in match.args:
        return call.arguments
    ignored = set(match.args[call.tool].ignore)
    return {key: value for key, value in call.arguments.items() if key not in ignored}


def _call(call: ToolCallTrace | None, match: MatchSettings | None) -> dict[str, Any] | None:
    return None if call is None else {"tool": call.tool, "arguments": _compared(call, match)}


def _call_summary(expected: ToolCallTrace | None, actual: ToolCallTrace | None, diffs: Differences) -> str:
    """What differs at the first differing step, in words (the leaves themselves are in `detail`)."""
    if expected is None:
        return f"{actual.tool if actual else 'a call'} was not in the other run"
    if actual is None:
        return f"{expected.tool} was not made"
    if expected.tool != actual.tool:
        return f"{actual.tool} instead of {expected.tool}"
    return f"{expected.tool} arguments differ at {diffs.paths()}" if diffs else f"{expected.tool} arguments differ"


def _show(call: ToolCallTrace | None) -> dict[str, Any] | None:
    if call is None:
        return None
    return {"tool": call.tool, "arguments": call.arguments, "source": call.source}


#: how the baseline of a model that replays the recording must match it: exactly
EXACT = MatchSettings(tools="strict", args="exact", answer="exact")


def drift_from_recording(baseline: RunTrace, recorded: RunTrace, match: MatchSettings = EXACT) -> list[Defect]:
    """BASELINE_DRIFT: the baseline run on the full window must reproduce the recording — exactly
    for a model that replays it, by the suite's own match rules for a real model (which words
    its answer afresh: only what the suite compares after compaction can meaningfully drift)."""
    defects, first = diff_runs(recorded, baseline, match)
    if not defects:
        return []
    assert first is not None
    rules = "exactly" if match == EXACT else f"by the suite's match rules ({match.tools} calls, {match.answer} answers)"
    return [
        Defect.of(
            Code.BASELINE_DRIFT,
            f"the baseline run does not reproduce the recording {rules} (turn {first.turn}, {first.what}); "
            "the comparison after compaction would be meaningless",
            turn=first.turn,
            expected=first.baseline,
            actual=first.compacted,
            detail=differences(first.baseline, first.compacted).as_detail(),
        )
    ]


def run_divergences(item: AfterRuns) -> list[Defect]:
    """Where the compacted run parts from the baseline, turn by turn (`diff_runs`)."""
    return diff_runs(item.baseline, item.compacted, item.scenario.match)[0]


def first_divergence_of(baseline: RunTrace, compacted: RunTrace, match: MatchSettings) -> Divergence | None:
    """The first place the compacted run parts from the baseline, for the report's side by side."""
    return diff_runs(baseline, compacted, match)[1]
