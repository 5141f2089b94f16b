"""One candidate value of a recorded assistant message (`Candidate`), and the levels that select
which candidates a suite grounds (`GroundingRules`, `select`). Rules: `replaylab.replay.agent.grounding`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from replaylab.transcript.model import AssistantMessage, TextBlock, ToolCallBlock
from replaylab.values import GroundingLevel

DEFAULT_LEVEL: GroundingLevel = "values"


@dataclass(frozen=True)
class GroundingRules:
    """How each tool's arguments are grounded: `tools` maps a tool name to one level for all its
    arguments or to levels per top-level argument (others: `default`)."""

    tools: Mapping[str, GroundingLevel | Mapping[str, GroundingLevel]] = field(default_factory=dict)
    default: GroundingLevel = DEFAULT_LEVEL

    def level(self, tool: str, key: Any) -> GroundingLevel:
        rule = self.tools.get(tool, self.default)
        if isinstance(rule, Mapping):
            return rule.get(key, self.default) if isinstance(key, str) else self.default
        return rule


VALUES = GroundingRules()


@dataclass(frozen=True)
class Candidate:
    """One value of a recorded message that may have been learned from context."""

    kind: str  # "arg" (a whole argument leaf), "arg-token" (a token inside one), "text" (a token in text)
    value: str
    call: int | None = None  # index of the tool call in the message's content
    path: tuple = ()  # JSON path inside the call's arguments
    block: int | None = None  # content index of the text block
    opaque: bool = True  # a token the agent cannot have produced itself (`is_opaque_token`)
    word: bool = False  # a whole leaf that is one word of letters (`is_vocabulary_word`)
    #: a whole leaf, not opaque, that the original window held only in the agent's own messages
    #: (a command it ran before, a description it wrote): its own composition, not learned
    own: bool = False
    #: a whole leaf the agent chooses by the argument's name (`timeout`, `limit`, `description`)
    chosen: bool = False
    #: the ids a whole leaf wraps in words of the agent's own (`user:<id>`): visible ids are enough
    parts: tuple[str, ...] = ()


def _call_block(message: AssistantMessage, candidate: Candidate) -> ToolCallBlock:
    """The tool call an argument candidate (`arg`, `arg-token`) was found in."""
    assert candidate.call is not None, "an argument candidate names its call"
    block = message.content[candidate.call]
    assert isinstance(block, ToolCallBlock), "an argument candidate's call is a tool call block"
    return block


def _text_block(message: AssistantMessage, candidate: Candidate) -> TextBlock:
    """The text block a `text` candidate was found in."""
    assert candidate.block is not None, "a text candidate names its block"
    block = message.content[candidate.block]
    assert isinstance(block, TextBlock), "a text candidate's block is a text block"
    return block


def select(plan: list[Candidate], message: AssistantMessage, rules: GroundingRules = VALUES) -> list[Candidate]:
    """The candidates of `all_candidates` that `rules` ground: whole leaves unless `off`, tokens of
    composed text when opaque (`values`) or always (`strict`); text tokens when opaque."""
    out: list[Candidate] = []
    whole: set[tuple[int | None, tuple]] = set()  # (call, path) of whole leaves kept at `strict`
    for c in plan:
        if c.kind == "text":
            keep = c.opaque
        else:
            level = rules.level(_call_block(message, c).name, c.path[0] if c.path else None)
            if level == "strict":
                # every learned leaf, whatever composed it; a token inside a leaf kept whole is that leaf's
                keep = c.kind == "arg" or (c.call, c.path) not in whole
                if c.kind == "arg":
                    whole.add((c.call, c.path))
                    c = replace(c, parts=()) if c.parts else c
            elif c.kind == "arg":
                # values: a whole learned leaf unless the agent composes it (one word of letters, its
                # own earlier text, a value it chooses by the argument's name)
                keep = level == "values" and not (c.word or c.own or c.chosen)
            else:  # a token inside a leaf: when opaque
                keep = level == "values" and c.opaque
        if keep:
            out.append(c)
    return out
