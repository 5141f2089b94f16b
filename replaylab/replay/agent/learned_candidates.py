"""The candidate values of a recorded assistant message the original agent learned from its
window: all of them (`all_candidates`, one plan per step) and those a suite's levels ground
(`candidates`). Rules: `replaylab.replay.agent.grounding`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.candidate import VALUES, Candidate, GroundingRules, select
from replaylab.replay.agent.grounding_text import leaf_text
from replaylab.transcript.model import AssistantMessage, TextBlock, ToolCallBlock
from replaylab.values import (
    IDENT_RE,
    agent_chosen,
    id_parts,
    identifier_tokens,
    is_calendar_date,
    is_opaque_token,
    is_vocabulary_word,
)

if TYPE_CHECKING:
    from replaylab.replay.agent.recording_text import LearnedCheck


def candidates(message: AssistantMessage, learned: LearnedCheck, rules: GroundingRules = VALUES) -> list[Candidate]:
    """Learned candidate values of `message` that `rules` ground (see module rules)."""
    return select(all_candidates(message, learned), message, rules)


def all_candidates(message: AssistantMessage, learned: LearnedCheck) -> list[Candidate]:
    """Every learned candidate of `message` at the `strict` level, opaque tokens marked: what any
    rules select from (one plan per step, whatever the suite's levels)."""
    out: list[Candidate] = []
    for index, block in enumerate(message.content):
        if isinstance(block, ToolCallBlock):
            _argument_candidates(block.arguments, (), index, learned, out)
        elif isinstance(block, TextBlock):
            for token in dict.fromkeys(identifier_tokens(block.text)):
                if learned(token):
                    out.append(Candidate("text", token, block=index, opaque=is_opaque_token(token)))
    return out


def _argument_candidates(value: Any, path: tuple, call: int, learned: LearnedCheck, out: list[Candidate]) -> None:
    """`all_candidates` of one tool call's arguments, leaves in `iter_leaves` order (a recursion
    that appends, not nested generators: the plan of every replayed step walks them)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _argument_candidates(item, path + (key,), call, learned, out)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _argument_candidates(item, path + (position,), call, learned, out)
    else:
        text = leaf_text(value)
        if text is None:
            return
        whole = learned(text)
        if whole:
            key = next((k for k in reversed(path) if isinstance(k, str)), None)
            chosen = agent_chosen(key, value)
            # an id the agent cannot make up counts wherever it saw it; any other text — words, a
            # command, lines it wrote in an earlier edit, a date it wrote in ISO form from another
            # spelling — only where it was told it
            opaque_id = is_opaque_token(text) and IDENT_RE.fullmatch(text) is not None and not is_calendar_date(text)
            own = not opaque_id and not learned.external(text)
            parts = id_parts(text) if isinstance(value, str) else ()
            out.append(
                Candidate(
                    "arg",
                    text,
                    call=call,
                    path=path,
                    word=is_vocabulary_word(text),
                    own=own,
                    chosen=chosen,
                    parts=parts,
                )
            )
            if not (chosen or own):
                return
        if isinstance(value, str):  # the tokens of text the agent composed: the opaque ones count
            for token in dict.fromkeys(identifier_tokens(value)):
                if token != value and learned(token):
                    out.append(Candidate("arg-token", token, call=call, path=path, opaque=is_opaque_token(token)))
