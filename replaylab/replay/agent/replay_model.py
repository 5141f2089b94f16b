"""The `replay` model, the offline default (`ReplayModel`): the recorded assistant message of the
current step, grounded in the window it is given (rules: `replaylab.replay.agent.grounding`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.candidate import VALUES, Candidate, GroundingRules, select
from replaylab.replay.agent.grounding import Grounded, LostMarkers, ground
from replaylab.replay.agent.grounding_text import SEP
from replaylab.replay.agent.learned_candidates import all_candidates
from replaylab.replay.agent.model_protocol import LostRecord, ModelError
from replaylab.replay.agent.recorded_prompt import system_prompt_of
from replaylab.replay.agent.recording_text import RecordingText
from replaylab.replay.agent.window_text import VisibleText, WindowText
from replaylab.replay.turns import Turn, step_message
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import identity
from replaylab.transcript.model import AnyEntry, AssistantMessage, MessageEntry

if TYPE_CHECKING:
    from replaylab.defects import Defect
    from replaylab.transcript.memo import ItemMemo


class ReplayModel:
    """The context-grounded replay model (DESIGN §7). Pure and deterministic: it models
    information loss, not reasoning.

    At each step it returns the recorded assistant message of that step, grounded in the window
    it is given (rules in `replaylab.replay.agent.grounding`, in short):

    1. candidates = argument leaves of the message's tool calls (strings ≥ 3 chars, numbers with
       ≥ 3 digits) and the opaque tokens of text it composed (its text blocks, argument strings
       not learned whole) — per tool and argument as `grounding` says (`off`, `values`, `strict`);
    2. a candidate is *learned* when its text occurs in the window the original agent saw at
       that step (`build_window` of the recording up to the entry before the step; system
       prompt and tool schemas are not part of it) — and, past a recorded compaction after the
       replay's first turn, also in what the replay could show (not in that summary alone);
    3. a learned value is *visible* when its text occurs in the replay window (all messages,
       summary, protected entries, tool results the replay produced) or in the tool schemas /
       system prompt the model always sees;
    4. every learned value that is not visible is replaced by `⟨lost:N⟩` (N numbers the distinct
       lost values of the item, `LostMarkers`), so the call no longer matches the cassette.

    On the recording's own window nothing is lost and the recorded message object is returned
    unchanged. `lost` lists every replacement made (`LostRecord`: the turn's recording index, the
    step's entry id, value, marker, and the entry where the original agent last saw the value).

    `memo`: the pipeline item's; the models of one item share the recording's text and the
    markers through it (one value, one marker in the baseline and the compacted run).
    `grounding`: the suite's levels per tool / argument (`match.args.<tool>.grounding`).
    """

    name = "replay"

    def __init__(
        self,
        recording: Transcript | Sequence[AnyEntry],
        *,
        system_prompt: str | None = None,
        memo: ItemMemo | None = None,
        grounding: GroundingRules | None = None,
    ):
        path = recording.leaf_path(memo) if isinstance(recording, Transcript) else list(recording)
        self.memo = memo
        self.rules = grounding if grounding is not None else VALUES
        self._plans: dict[str, list[Candidate]] = {}  # the shared plans as `self.rules` select them
        self.history = RecordingText.shared(path, memo)  # the baseline's, when this is the compacted run's model
        self.system_prompt = system_prompt if system_prompt is not None else system_prompt_of(path)
        self._window_text = WindowText(self.history.message_texts, memo)
        self._tools_text: tuple[Sequence[dict], str] | None = None
        self.turn: Turn | None = None
        self.cursor = 0
        #: the path index of the first replayed turn's first entry (`LearnedCheck`'s `start`)
        self.start: int | None = None
        self.markers = memo.kept(LostMarkers, LostMarkers) if memo is not None else LostMarkers()
        self.lost: list[LostRecord] = []
        self.defects: list[Defect] = []

    # loop hooks
    def begin_turn(self, turn: Turn) -> None:
        self.turn, self.cursor = turn, 0
        if self.start is None:
            first = (turn.inputs or turn.steps or [None])[0]
            self.start = self.history.index_of.get(first.id) if first is not None else None
            self._plans.clear()  # a plan made before the start was known is the plain rule's

    def max_steps(self, turn: Turn) -> int:
        return len(turn.steps)

    def rewind(self) -> None:
        """The agent discarded the last answer (a silent overflow) and asks for the step again."""
        self.cursor = max(0, self.cursor - 1)

    def complete(self, window: list[Any], tools: list[dict]) -> AssistantMessage:
        if self.turn is None or self.cursor >= len(self.turn.steps):
            raise ModelError("replay model: no recorded step left in this turn (call begin_turn(turn) first)")
        entry = self.turn.steps[self.cursor]
        self.cursor += 1
        grounded = self.ground_step(entry, window, tools)
        step_index = self.history.index_of.get(entry.id)
        for c in grounded.lost:
            seen = None if step_index is None else self.history.last_seen(c.value, step_index)
            self.lost.append(
                LostRecord(
                    turn_index=self.turn.index,
                    entry_id=entry.id,
                    value=c.value,
                    marker=grounded.markers[c.value],
                    kind=c.kind,
                    seen_entry_id=None if seen is None else self.history.path[seen].id,
                )
            )
        return grounded.message

    # the rule itself, usable without the loop
    def plan(self, entry: MessageEntry) -> list[Candidate]:
        """Learned candidates of a recorded step that this model grounds. Every candidate is
        cached with the recording's text (independent of any replay window and of the levels, so
        every model over the same recording shares them); the selection by levels per model."""
        selected = self._plans.get(entry.id)
        if selected is not None:
            return selected
        key = (self.start, entry.id)
        plan = self.history.plans.get(key)
        if plan is None:
            if entry.id not in self.history.index_of:
                raise ModelError(f"replay model: entry {entry.id} is not on the recording's leaf path")
            plan = all_candidates(step_message(entry), self.history.learned_at(entry.id, self.memo, self.start))
            self.history.plans[key] = plan
        selected = self._plans[entry.id] = select(plan, step_message(entry), self.rules)
        return selected

    def ground_step(self, entry: MessageEntry, window: Sequence[Any], tools: Sequence[dict] = ()) -> Grounded:
        if self._nothing_lost(entry, window):
            return Grounded(step_message(entry))
        plan = self.plan(entry)
        if not plan:
            return Grounded(step_message(entry))
        # window text + SEP + always-visible text, tested piece by piece instead of copied per step
        pieces = self._window_text.blocks(window)  # the window's items (or messages) as they are
        return ground(
            step_message(entry), plan, VisibleText.of_window(pieces, self._always_visible(tools)), self.markers
        )

    def _nothing_lost(self, entry: MessageEntry, window: Sequence[Any]) -> bool:
        """True when `ground` is sure to lose nothing, found without the step's plan: the window
        still holds, as whole message texts, the text of every entry the original agent saw
        before the step (no compaction on the recording's path before it) — the baseline on
        the recording's own window, step after step.

        Why that suffices: every candidate value is a substring of the step message's grounding
        text; when that text has no SEP, a value is learned exactly when it occurs in one
        entry's text before the step (the recording's text is those texts joined by SEP), and
        visible when it occurs in one message text of the window (`VisibleText`); an entry text
        that is a window message text carries every such occurrence over. Anything else takes
        the full rule (`plan` + `ground`), which the compacted run needs anyway — and half the
        pipeline's items have no compacted run, so their plans are never computed at all."""
        index = self.history.index_of.get(entry.id)
        if index is None or self.history.compacted_before(index):
            return False
        own = self.history.message_texts.get(identity(entry.message))
        if own is None or own[0] is not entry.message or self.history.path[index] is not entry or SEP in own[1]:
            return False
        return self._window_text.covers(window, self.history, index)

    def _always_visible(self, tools: Sequence[dict]) -> str:
        """SEP + tool schemas + SEP + system prompt: what the model sees besides the window."""
        # keyed on the tools object itself (kept alive here), not its id: a freed list's id can
        # come back for a different list
        if self._tools_text is None or self._tools_text[0] is not tools:
            import orjson

            text = orjson.dumps(list(tools or [])).decode() if tools else ""
            self._tools_text = (tools, SEP + text + SEP + (self.system_prompt or ""))
        return self._tools_text[1]
