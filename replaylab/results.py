"""What a replaylab run produces: one `ItemResult` per (recording × scenario), one `RunReport`.

These models are the only thing the reports (HTML / JSON / markdown / JUnit) read, and they
travel between xdist workers and the controller as JSON, so they hold plain data only.
`RunReport` is the versioned JSON schema of `reports/replaylab.json`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, model_serializer, model_validator

from replaylab.causes import ItemCause
from replaylab.defects import Defect
from replaylab.replay.trace import RunTrace
from replaylab.safety.ledger import LedgerView

#: the JSON report's major version. 3: every turn number counts from 1 (`where.turn`, the traces,
#: the first divergence), as `compact_at: turn:N` does; 2 counted them from 0. 2: an item's id is its
#: pytest node id (`<suite file>::<recording>::<scenario>`), unique for any suite layout; 1 named it
#: `<suite name>::<recording stem>::<scenario>` (`replaylab report merge|render` still read both:
#: `replaylab.report.merge.load_report`)
SCHEMA_VERSION = 3

Outcome = Literal["passed", "failed", "error", "skipped", "uncompacted"]
#: how each outcome reads in every report: "uncompacted" is a finding of its own (compaction was
#: due and cannot succeed), neither a pass nor a skip
OUTCOME_LABELS: dict[str, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "not exercised",
    "uncompacted": "cannot compact",
}


class BudgetView(BaseModel):
    """The compaction budget an item ran with, and where it came from."""

    context_tokens: int
    reserve_tokens_floor: int
    keep_recent_tokens: int | None = None
    source: Literal["suite", "command line", "auto"]
    #: auto: the rule as it applied to this recording (`qa.auto_budget`)
    rule: str = ""
    #: auto: the session is too small to be worth compacting (`qa.auto_budget`): not exercised,
    #: and no compaction is attempted
    too_small: bool = False
    #: where the reserve follows the window, not reserveTokensFloor (OpenClaw 2026.9.6,
    #: `TurnStartRules.reserve`): the agent's rule in words; None: the reserve is the floor
    reserve_rule: str | None = None

    @model_serializer(mode="wrap")
    def _without_absent_rule(self, handler: Any) -> Any:
        return _without_absent(handler(self), "reserve_rule")

    @property
    def budget(self) -> int:
        return self.context_tokens - self.reserve_tokens_floor

    def head(self) -> str:
        """The numbers alone: what a reason or a finding names (the rule is printed once per item)."""
        keep = f", keepRecentTokens {self.keep_recent_tokens:,}" if self.keep_recent_tokens else ""
        reserve = (
            f"reserveTokensFloor {self.reserve_tokens_floor:,}"
            if self.reserve_rule is None
            else f"reserve {self.reserve_tokens_floor:,}, {self.reserve_rule}"
        )
        return f"budget {self.budget:,} tokens (contextTokens {self.context_tokens:,} − {reserve}{keep}; {self.source})"

    def line(self) -> str:
        """The numbers and, for auto, the rule as it applied: the item's budget paragraph."""
        return f"{self.head()}: {self.rule}" if self.rule else self.head()


def _without_absent(data: Any, name: str) -> Any:
    """A model's dump without the field `name` when it is None (optional fields a result only
    holds sometimes: an item without them reads as before)."""
    if isinstance(data, dict) and data.get(name) is None:
        data.pop(name, None)
    return data


class WindowItem(BaseModel):
    entry_id: str | None
    role: str
    text: str  # excerpt, scrubbed
    tokens: int
    protected: bool = False
    mutating: bool = False
    #: the recorded entry this one restates after a compaction (`transcript.restated`); left out
    #: of the JSON when there is none, so an item without restated entries reads as before
    restates: str | None = None

    @model_serializer(mode="wrap")
    def _without_absent_restates(self, handler: Any) -> Any:
        return _without_absent(handler(self), "restates")


class QualityGuardView(BaseModel):
    ok: bool
    attempts: int = 1
    reasons: list[str] = Field(default_factory=list)


class CompactionView(BaseModel):
    mode: str
    success: bool
    original_tokens: int = 0
    compacted_tokens: int = 0
    token_saved: int = 0
    first_kept_entry_id: str | None = None
    compaction_event_id: str | None = None
    protected_entry_ids: list[str] = Field(default_factory=list)
    summary_text: str = ""
    quality_guard: QualityGuardView | None = None
    error: str | None = None
    compactions: int = 1  # how many compactions the scenario triggered
    #: where the kept tail starts in the window before (pi's cut), when the compaction keeps
    #: nothing itself and restates it; left out of the JSON otherwise (the first kept entry is it)
    cut_entry_id: str | None = None
    #: where the summary came from when no summarizer wrote it (a fallback's, `SUMMARY_SOURCES`);
    #: left out of the JSON otherwise
    summary_source: str | None = None

    @model_serializer(mode="wrap")
    def _without_absent_cut(self, handler: Any) -> Any:
        return _without_absent(_without_absent(handler(self), "cut_entry_id"), "summary_source")


#: what each fallback a compaction may write its summary with says of it
SUMMARY_SOURCES = {
    "fallback:no-real-conversation": "OpenClaw's fixed fallback: the summarized span holds no real conversation "
    "(no user or assistant text), so no summarizer was asked",
    "fallback:turn-prefix-only": "the fixed fallback: only a split turn's prefix was summarized",
    "fallback": "the fallback summary: every summarizer call failed",
}


class SummarizedEvent(BaseModel):
    """A mutating event a recorded compaction summarized away: its call, and whether the summary
    still names its arguments (a path, an id) — the words, never the call."""

    tool_call_id: str
    tool: str
    entry_id: str | None = None
    turn: int | None = None
    #: argument values (scrubbed where a report shows them) the summary text holds
    named_in_summary: list[str] = Field(default_factory=list)


class RecordedCompactionView(BaseModel):
    """A compaction the recording itself holds (`checks.recorded`), audited like replaylab's own:
    what the window after it no longer shows verbatim."""

    entry_id: str
    #: the turn (1-based) it happened in: the turn of the last message before it
    turn: int | None = None
    tokens_before: int | None = None
    #: written by a hook (OpenClaw `fromHook`), not by the agent's own compaction
    from_hook: bool = False
    #: what triggered it, where the recording says (Claude Code's `auto` / `manual`)
    trigger: str | None = None
    summary_chars: int = 0
    #: `ok`, or why the summary wipes the memory: `empty`, `unavailable` (a placeholder such as
    #: "Summary unavailable due to size limits"), `skeleton` (sections without content)
    summary: Literal["ok", "empty", "unavailable", "skeleton"] = "ok"
    #: messages the window showed before it and no longer shows after it
    summarized_messages: int = 0
    summarized_events: list[SummarizedEvent] = Field(default_factory=list)
    #: identifiers of the summarized messages visible nowhere in the window after it
    lost_identifiers: int = 0

    def line(self) -> str:
        """One line for the terminal, the markdown and `replaylab inspect`."""
        how = [f"turn {self.turn}" if self.turn is not None else None, "fromHook" if self.from_hook else None]
        how += [f"trigger {self.trigger}" if self.trigger else None]
        how += [f"tokensBefore {self.tokens_before:,}" if self.tokens_before is not None else None]
        tools: dict[str, int] = {}
        for event in self.summarized_events:
            tools[event.tool] = tools.get(event.tool, 0) + 1
        events = ", ".join(f"{tool} {n}" for tool, n in tools.items())
        summary = "ok" if self.summary == "ok" else f"{self.summary.upper()}"
        return (
            f"compaction {self.entry_id} ({', '.join(h for h in how if h)}): summarized "
            f"{self.summarized_messages:,} messages, {len(self.summarized_events)} mutating events"
            + (f" ({events})" if events else "")
            + f", {self.lost_identifiers:,} identifiers lost; summary {self.summary_chars:,} chars, {summary}"
        )


class Divergence(BaseModel):
    turn: int
    step: int | None = None
    what: str  # "tool call", "answer", ...
    baseline: Any = None
    compacted: Any = None


class LostValue(BaseModel):
    """One `⟨lost:N⟩` marker of an item's replay and what it stands for: the legend of the markers
    in its calls, answers and defects. `value` is the recorded value (scrubbed where a report
    shows it, like every text of a result)."""

    marker: str
    value: str
    #: where the original agent last saw it: the recording entry before the step that lost it
    #: (None: no entry holds it, e.g. a scripted model's reference) and that entry's turn (1-based)
    seen_entry_id: str | None = None
    seen_turn: int | None = None
    #: the first replayed step that lacked it: its recorded entry and turn (1-based), and whether
    #: it was in a tool call or in the text the agent wrote
    lost_entry_id: str | None = None
    lost_turn: int
    lost_in: Literal["call", "text"] = "call"
    #: the compaction after which the window no longer held it: its number among the scenario's
    #: compactions (1-based), its compaction entry id, and whether its summary lacks the value
    #: (None: no compaction took it, e.g. a value the replay itself never received)
    compaction: int | None = None
    compaction_entry_id: str | None = None
    summary_lacks: bool | None = None
    #: no compaction took it because the recording showed it only after the compaction(s) before
    #: the step: the replay never received it (e.g. from the result of a call it could not repeat)
    never_received: bool = False

    def line(self, compactions: int = 1) -> str:
        """The legend row as text (unscrubbed: each report scrubs it); `compactions`: how many the
        scenario made, so the compaction is numbered only when there is more than one."""
        seen = (
            f"last seen in entry {self.seen_entry_id}"
            + (f" (turn {self.seen_turn})" if self.seen_turn is not None else "")
            if self.seen_entry_id is not None
            else "seen in no recorded entry"
        )
        step = f"turn {self.lost_turn}" + (f", entry {self.lost_entry_id}" if self.lost_entry_id else "")
        missing = f"missing from {'a tool call' if self.lost_in == 'call' else 'the agent’s text'} at {step}"
        if self.compaction is None:
            taken = "no compaction took it" + (
                " (the recording got it after the compaction: the replay never received it)"
                if self.never_received
                else ""
            )
        else:
            number = f" {self.compaction} of {compactions}" if compactions > 1 else ""
            entry = f" ({self.compaction_entry_id})" if self.compaction_entry_id else ""
            summary = "; its summary lacks it" if self.summary_lacks else "; its summary has it"
            taken = f"taken by compaction{number}{entry}{summary}"
        value = json.dumps(self.value, ensure_ascii=False)  # quoted: a value may be blank-edged or span lines
        return f"{self.marker} = {value}: {seen}; {missing}; {taken}"


#: tool results longer than this are kept in a report as a scrubbed excerpt plus their length and
#: sha256. The results a replay serves come from the cassette, which the report names by hash; a
#: full copy would make tool output most of the JSON report.
REPORT_RESULT_CHARS = 2_000


class ItemResult(BaseModel):
    id: str  # the item's pytest node id: <suite file>::<recording>::<scenario>
    suite: str
    scenario: str
    recording: str
    #: the model that produced both runs, baseline and compacted (`replay`: the recording's own
    #: answers, served back; `litellm/…`: a real model, answering afresh)
    model: str = "replay"
    #: the compactor that compacted the working copy (`replaylab`: replaylab's own; `python:…`,
    #: `command:…`: one under test through the seed contract, its claims re-checked)
    compactor: str = "replaylab"
    outcome: Outcome
    reason: str = ""
    defects: list[Defect] = Field(default_factory=list)
    expected_defects: list[str] = Field(default_factory=list)
    missing_expected: list[str] = Field(default_factory=list)
    #: the recording's ledger (every mutating event), and the ledger of the window the first
    #: compaction left
    ledger_before: LedgerView | None = None
    ledger_after: LedgerView | None = None
    #: the events of `ledger_before` the recording holds after the first compaction point: the
    #: compacted run replays them, so the window at the cut never holds them (not missing)
    ledger_after_point: list[str] = Field(default_factory=list)
    window_before: list[WindowItem] = Field(default_factory=list)
    window_after: list[WindowItem] = Field(default_factory=list)
    compaction: CompactionView | None = None
    budget: BudgetView | None = None
    #: why it was not exercised or could not compact (`replaylab.causes`); None for the other outcomes
    cause: ItemCause | None = None
    #: the compactions the recording itself holds, each audited (`checks.recorded`), for every item
    recorded_compactions: list[RecordedCompactionView] = Field(default_factory=list)
    baseline: RunTrace | None = None
    compacted: RunTrace | None = None
    first_divergence: Divergence | None = None
    #: the legend of the `⟨lost:N⟩` markers of this item's runs, one per marker in marker order
    lost_values: list[LostValue] = Field(default_factory=list)
    repeats: dict[str, Any] = Field(default_factory=dict)  # k, pass_k, baseline_failures, ...
    diagnostics: list[str] = Field(default_factory=list)  # problems in the recording (file:line: ...)
    recording_sha256: str = ""
    cassette_sha256: str = ""
    duration_s: float = 0.0
    #: the agent profile whose rules judged it (`upstream.profiles`: `openclaw@2026.9.6`, `pi@0.73.1`)
    agent: str = "pi@0.73.1"
    #: the agent its compacted windows were compared with, as reports name it (`openclaw 2026.9.6`;
    #: None: not compared — the oracle is not installed or the check is off), and how many of
    #: them equal that agent's own context
    verified_against: str | None = None
    verified_windows: int = 0
    #: this item's scrubbed JSON as the JSON report holds it, made once where the item ran
    #: (`replaylab.report.jsonio.item_json`): the report inserts it as is instead of dumping and
    #: scrubbing every item again at the end of the run, on the one process that writes it
    _report_json: bytes | None = PrivateAttr(default=None)
    #: True when this object holds scrubbed data — the light copy kept of an item (read back from
    #: an xdist worker's scrubbed JSON, or made in-process: `replaylab.report.jsonio.item_kept`):
    #: the HTML report need not scrub it again
    _scrubbed: bool = PrivateAttr(default=False)
    #: this item's HTML sections rendered where it ran, by detail level, its index still
    #: `replaylab.report.html.INDEX_MARK` (`item_sections`): the report only places them
    _sections: dict[str, str] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _pi_fields(cls, data: Any) -> Any:
        """A report written before agent profiles names the pi its windows were checked with."""
        old = _pi_fields(data)
        if old is None:
            return data
        data, against, windows = old
        data.setdefault("verified_against", against)
        data.setdefault("verified_windows", windows)
        return data

    def excerpt_tool_results(self, limit: int = REPORT_RESULT_CHARS) -> None:
        """Keep long tool results of both traces as excerpts (in place; see `REPORT_RESULT_CHARS`).
        Runs once the item is judged: the diff and the repeats compare the full traces."""
        import hashlib

        from replaylab.scrub import scrub_prefix
        from replaylab.transcript.memo import identity

        done: dict[int, tuple[str, str, str]] = {}  # both runs are served the same result objects
        for trace in (self.baseline, self.compacted):
            for call in (c for turn in (trace.turns if trace else []) for c in turn.tool_calls):
                result = call.result
                if result is not None and len(result) > limit and call.result_chars is None:
                    seen = done.get(identity(result))
                    if seen is None or seen[0] is not result:
                        seen = done[identity(result)] = (
                            result,
                            hashlib.sha256(result.encode()).hexdigest(),
                            scrub_prefix(result, limit),
                        )
                    call.result_sha256, call.result_chars, call.result = seen[1], len(result), seen[2]


class RunMeta(BaseModel):
    replaylab_version: str
    git_sha: str | None = None
    model: str = "replay"
    mode: str | None = None
    started_at: str = ""
    finished_at: str = ""
    python: str = ""
    argv: list[str] = Field(default_factory=list)
    shards: list[str] = Field(default_factory=list)


class CauseCount(BaseModel):
    """One cause of not being exercised (`skipped`) or not compacting (`uncompacted`) and its items."""

    outcome: Literal["skipped", "uncompacted"]
    key: str
    summary: str
    knob: str
    items: int
    #: the range of the items' largest turn-start windows and budgets (None: not measured)
    smallest_window: int | None = None
    largest_window: int | None = None
    smallest_budget: int | None = None
    largest_budget: int | None = None


class Totals(BaseModel):
    items: int = 0
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    uncompacted: int = 0
    #: unexpected blocking defects (each fails its item)
    blocking_defects: int = 0
    #: unexpected regressions (each fails its item too: the CI gate is the failed items)
    regression_defects: int = 0
    #: findings (any severity) whose code the item's suite expects — a negative control's
    #: `expect.defects` — counted apart from everything else, the same number in every report
    expected_defects: int = 0
    defects_by_code: dict[str, int] = Field(default_factory=dict)
    #: compacted windows equal to the context their agent builds itself, per agent as reports
    #: name it (`openclaw 2026.9.6`); empty: none was compared
    verified_windows: dict[str, int] = Field(default_factory=dict)
    #: the agent profiles the items were judged under, with how many items each
    agents: dict[str, int] = Field(default_factory=dict)
    #: the items not exercised or that could not compact, grouped by cause (`replaylab.causes`)
    causes: list[CauseCount] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _pi_fields(cls, data: Any) -> Any:
        """Totals written before agent profiles: the windows checked with pi."""
        old = _pi_fields(data)
        if old is None:
            return data
        data, against, windows = old
        if against:
            data.setdefault("verified_windows", {against: windows})
        return data


def _pi_fields(data: Any) -> tuple[dict[str, Any], str | None, int] | None:
    """A report of before agent profiles (`pi_version`, `pi_verified_windows`): the data without
    them, the agent they name (`pi 0.73.1`) and the windows verified; None for a newer one."""
    if not isinstance(data, dict) or ("pi_version" not in data and "pi_verified_windows" not in data):
        return None
    data = dict(data)
    version = data.pop("pi_version", None)
    windows = data.pop("pi_verified_windows", 0)
    return data, f"pi {version}" if version else None, windows


class RunReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    meta: RunMeta
    totals: Totals = Field(default_factory=Totals)
    items: list[ItemResult] = Field(default_factory=list)
    cassette_hashes: dict[str, str] = Field(default_factory=dict)
    regressions_vs_baseline: list[str] = Field(default_factory=list)
