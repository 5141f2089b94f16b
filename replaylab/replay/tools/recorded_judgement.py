"""Whether a replayed call mutates (`RecordedJudgement`): as the ledger judges the recording's calls
of the same tool and canonical arguments, else by the classifier alone.

Why: the ledger, safeguard and the report judge a call whose result records the calls it made
(pi 1.6.0's `nestedCalls`, OpenClaw's nested-tool records) by those records
(`safety.nested_calls.NestedRecords.judge`): a pi `codemode` call whose record is complete and
all reads is a read, and safeguard may summarize it away. A replayed call has no result yet, and
the classifier alone calls every `codemode` call `exec`: its repeat after the starting point
would be blocked as a repeated side effect, and marked mutating in the runs' traces, where the
ledger counts none. So a call the recording made, found as its answer is found (`call_key`: the
tool and canonical arguments), is judged as every recorded call of that key is: a read only when
each is one (none unanswered, none judged mutating), mutating when one is. A call the recording
never made keeps the classifier's answer (`codemode`: `exec`).

Made once per item (`of`: from the records the pipeline read for its report already; `of_recording`:
read from the results' path) and shared by the baseline's executor and the compacted run's
(`ToolExecutor.fresh`). Only the keys whose records change the classifier's answer are kept, by
tool, so a call of any other tool costs one dict look-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replaylab.replay.tools.recorded_results import RecordedResults, call_key
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.nested_calls import NO_RECORDS, NestedRecords, path_records


class RecordedJudgement:
    """The classifier's answer, except for the calls the recording's records judge otherwise."""

    def __init__(self, classifier: ToolClassifier, verdicts: Mapping[str, Mapping[str, bool]] | None = None):
        """`verdicts`: tool → call key → mutating, for the keys whose records differ from the classifier."""
        self.classifier = classifier
        self._verdicts = dict(verdicts or {})

    @classmethod
    def of(
        cls, classifier: ToolClassifier, records: NestedRecords = NO_RECORDS, recorded: RecordedResults | None = None
    ) -> RecordedJudgement:
        """The judgement of the recorded calls (`recorded`: the leaf path's, `RecordedResults.of`) by
        what the same path records of the calls other calls made (`records`: `nested_records`)."""
        if not records or recorded is None:
            return cls(classifier)
        # a recorded call of each key its records say something of
        covered = {call_key(r.tool, r.arguments): r for r in recorded.results if records.covers(r.tool_call_id)}
        tools = {r.tool for r in covered.values()}
        mutates = dict.fromkeys(covered, False)
        for result in recorded.results:
            if result.tool not in tools or mutates.get(key := call_key(result.tool, result.arguments)) is not False:
                continue  # another key, or one a call of it already makes mutating
            # a call its records say nothing of (no result) is judged by the classifier, as the ledger's
            classified = classifier.explain(result.tool, result.arguments)
            mutates[key] = records.judge(result.tool, result.tool_call_id, classified, classifier).mutating
        verdicts: dict[str, dict[str, bool]] = {}
        for key, mutating in mutates.items():
            call = covered[key]
            if mutating != classifier.is_mutating(call.tool, call.arguments):
                verdicts.setdefault(call.tool, {})[key] = mutating
        return cls(classifier, verdicts)

    @classmethod
    def of_recording(cls, classifier: ToolClassifier, recorded: RecordedResults) -> RecordedJudgement:
        """`of` the records of the path `recorded` comes from (none when it is not known)."""
        path = recorded.path
        return cls.of(classifier, path_records(path) if path is not None else NO_RECORDS, recorded)

    def is_mutating(self, name: str, args: Mapping[str, Any] | None) -> bool:
        """Whether the call mutates."""
        keys = self._verdicts.get(name)
        found = keys.get(call_key(name, args)) if keys else None
        return self.classifier.is_mutating(name, args) if found is None else found
