"""Context grounding: which values of a recorded assistant message the current window supports.

This module holds the rules of the `replay` model (DESIGN §7) and the replacement of lost
values (`ground`). The modules next to it hold the parts: the text of a message
(`grounding_text`), the candidates and levels (`candidate`, `learned_candidates`), the learned
check (`recording_text`), the visible check (`window_text`); `ReplayModel` (`replay_model`) only
feeds them the recording and the replay window.

Rules (all comparisons are plain substring tests on text, case-sensitive):

* **Text of a message** (`grounding_text`): what a model reads from it — text and thinking
  blocks, tool-call names and arguments (as JSON and as the raw leaf values), tool-result and
  custom-message text, compaction / branch summaries, bash command and output.
* **Candidate values** of a recorded assistant message (`candidates`):
  - every leaf of every tool call's `arguments`: strings of ≥ 3 characters, numbers with ≥ 3
    digits (compared through their JSON text, e.g. `1234`, `12.5`); booleans, null and shorter
    values never count (they carry no learned identity), and neither does a leaf that is one word
    of letters (`one_way`, `basic_economy`, `USA`: an enum or a word the agent writes from the
    request or the schema, `replaylab.values.is_vocabulary_word`);
  - tokens inside text the agent composed: text blocks, and argument strings that were not
    learned as a whole (file contents, markdown, prose, commands). Only tokens the agent cannot
    have produced itself count (`replaylab.values.is_opaque_token`: `M05KNL`, `C1001`,
    `mia_li_3668`, `555-123-2002`, `credit_card_8003957`, hashes); its own vocabulary does not
    (markdown anchors like `#custom-tools`, acronyms like `JFK`, snake_case names, colours,
    quantities, round numbers) — counting it made a compaction look as if it lost what the agent
    could simply write again.
  Thinking blocks are never changed (they are not actions, and their signatures must stay valid).
* **Levels** (`GroundingRules`, from a suite's `match.args.<tool>.grounding`, per tool or per
  top-level argument): `values` (the default, the rule above), `strict` (every identifier-like
  token of composed text counts too: `IDENT_RE`, ≥ 3 characters, with a digit, one of `_ @ #`,
  or all upper-case; and so does a whole leaf of one word), `off` (the argument is never
  grounded: its recorded value is kept).
  Text blocks always follow `values`.
* **Learned**: a candidate is learned at a step when its text occurs in the window the *original*
  agent saw at that step — `build_window(path[:i])` of the recording, where `i` is the step's
  index on the leaf path, rebuilt by the item's agent's rules (OpenClaw 2026.9.6 starts that
  window afresh at a `reset`: what lies before it, outside its kept range, was not learned).
  A plain number (`274`, `12.5`) occurs only where it stands as a number,
  not inside a longer number or identifier (`HAT274`, `12745`, `1.274`): a substring there is a
  coincidence, and the agent computed the value itself. The system prompt and tool schemas are not
  part of that window. Past a recorded compaction that lies after the replay's start, the original
  window holds that compaction's summary, which no replay shows (turns skip compaction entries): a
  value counts as learned there only if it also occurs in what the replay could show — the window
  at the replay's start and the entries since, compaction entries left out. A value that summary
  alone holds is text its summarizer wrote, as the agent's own text is, and is kept in both runs
  (else the baseline, which has no such summary, would drift on it).
  Values the agent produced itself (a computed total, a composed message) are not learned and are
  always kept.
* **Visible**: its text occurs in the replay window's text, or in what the model always sees
  (tool schemas passed to `complete`, the system prompt).
* A learned value that is not visible is **lost**: it is replaced by the marker `⟨lost:N⟩`
  (N = 1, 2, … numbering the distinct lost values in order of first loss, once for every message
  grounded with the same `LostMarkers` — the replay model keeps one per pipeline item, so the
  same value has the same N in every call and answer of the item and one legend explains them
  all; the marker never contains the value). A whole argument leaf is replaced when the leaf itself was
  learned; otherwise only the lost tokens inside it. The changed call no longer matches the
  cassette, so the loss shows up as a divergence (and, for a mutating tool, as a blocked call).
* On the recording's own window every learned value is visible by construction, so the
  recorded message is returned unchanged (the same object): zero drift.

Speed: the original windows are never materialised per step. The path's message texts are
joined once (`\\x00`-separated, with offsets); "learned at step i" is a `find` from the start of
the window segment (after the latest compaction, whose summary/kept text is joined once) with
the hit required to end before step i's offset. The replay window's text is cached and extended
incrementally while the window only grows.

Sharing (the pipeline replays one recording twice, baseline and compacted): with the item's memo,
`RecordingText.shared` keeps the joined text, the per-message texts and the learned candidates of a
recording's path for the next model over the same path. The key is the identity of the path's
entry objects (the memo holds them, so an id cannot be reused while kept): another recording, or
the same file loaded again, is another key. Entries and messages are treated as immutable, as
everywhere in replay (grounding copies a message before changing it).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.candidate import Candidate, _call_block, _text_block
from replaylab.transcript.model import AssistantMessage
from replaylab.values import IDENT_RE

if TYPE_CHECKING:
    from replaylab.replay.agent.window_text import VisibleText

MARKER = "⟨lost:{n}⟩"
MARKER_RE = re.compile(r"⟨lost:\d+⟩")  # a marker inside any text the replay produced


class LostMarkers:
    """The marker of each lost value, numbered once in order of first loss: a marker then stands
    for one value wherever it appears, and a legend of the markers is exact."""

    def __init__(self) -> None:
        self.of: dict[str, str] = {}  # lost value → its marker

    def __call__(self, value: str) -> str:
        marker = self.of.get(value)
        if marker is None:
            marker = self.of[value] = MARKER.format(n=len(self.of) + 1)
        return marker


@dataclass
class Grounded:
    """The result of grounding one recorded message in a window."""

    message: AssistantMessage
    lost: list[Candidate] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)  # lost value of this message → marker


def ground(
    message: AssistantMessage,
    learned: list[Candidate],
    visible: str | VisibleText,
    numbering: LostMarkers | None = None,
) -> Grounded:
    """Replace every learned candidate that is not in `visible` by its marker. `numbering`: the
    markers shared with the other messages of the run (a fresh one numbers this message alone)."""
    lost = [c for c in learned if c.value not in visible and not (c.parts and all(p in visible for p in c.parts))]
    if not lost:
        return Grounded(message)
    numbering = numbering if numbering is not None else LostMarkers()
    markers = {c.value: numbering(c.value) for c in lost}
    out = message.model_copy(deep=True)
    for c in lost:
        if c.kind == "text":
            block = _text_block(out, c)
            block.text = _replace_tokens(block.text, markers)
        else:
            call = _call_block(out, c)
            call.arguments = copy.deepcopy(call.arguments)
            current = _get(call.arguments, c.path)
            if c.kind == "arg":
                _set(call.arguments, c.path, markers[c.value])
            elif isinstance(current, str):
                _set(call.arguments, c.path, _replace_tokens(current, markers))
    return Grounded(out, lost, markers)


def _replace_tokens(text: str, markers: dict[str, str]) -> str:
    return IDENT_RE.sub(lambda m: markers.get(m.group(0), m.group(0)), text)


def _get(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


def _set(data: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    if path:
        data[path[-1]] = value
