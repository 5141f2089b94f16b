"""What a recording says of its sub-agents that no entry of it says: the links an importer writes
into the session header (`"replaylab": {...}`) for the parent's ledger (`safety.ledger`).

* `spawns`: ids of calls no result answers that started a sub-agent, whatever their class (a
  Claude Code `Skill` whose skill runs forked in a sub-agent of its own: its progress records name
  the agent, but its class is `skill`, which loads a prompt). The ledger counts such a call as an
  unresolved spawn, as it counts an unanswered call of class `subagent`: what the sub-agent did is
  unknown.
* `unlinkedChildren`: the sub-agent transcripts of the session that no call names, each
  `{"childSession": <file>, "at": <entry id>, "source": <where it came from>}`. Claude Code runs a
  forked slash command the user typed (2.1.39 `NVY`: a `prompt` command with `context: fork`) in a
  sub-agent with the session's tools (`availableTools: K.options.tools`), and records its
  transcript (`subagents/agent-<id>.jsonl`, `cR` → `E51`); its progress records only go to the
  screen (`setToolJSX`), and the parent log holds the command's text and its
  `<local-command-stdout>` alone. What such a sub-agent wrote is the session's: the ledger folds its
  events into the parent's, and `at` (the first parent entry after the sub-agent's last record:
  where its work shows) is what a safeguard compaction keeps of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the header key of the links
HEADER_KEY = "replaylab"
SPAWNS = "spawns"
UNLINKED_CHILDREN = "unlinkedChildren"


@dataclass(frozen=True)
class UnlinkedChild:
    child_session: str
    at: str | None
    source: str = ""


@dataclass(frozen=True)
class HeaderLinks:
    spawns: frozenset[str] = frozenset()
    unlinked: tuple[UnlinkedChild, ...] = field(default_factory=tuple)


NO_LINKS = HeaderLinks()


def header_links(header: Any) -> HeaderLinks:
    """The links a session header holds (none when it holds none, or not in this shape)."""
    extra = getattr(header, "model_extra", None) or {}
    links = extra.get(HEADER_KEY)
    if not isinstance(links, dict):
        return NO_LINKS
    spawns = links.get(SPAWNS)
    unlinked = links.get(UNLINKED_CHILDREN)
    return HeaderLinks(
        frozenset(s for s in spawns if isinstance(s, str)) if isinstance(spawns, list) else frozenset(),
        tuple(
            UnlinkedChild(
                item["childSession"],
                item.get("at") if isinstance(item.get("at"), str) else None,
                str(item.get("source") or ""),
            )
            for item in (unlinked if isinstance(unlinked, list) else [])
            if isinstance(item, dict) and isinstance(item.get("childSession"), str) and item["childSession"]
        ),
    )


def add_links(header: dict[str, Any], *, spawns: list[str], unlinked: list[dict[str, Any]]) -> None:
    """Write the links into an imported session's `header` (nothing when there are none)."""
    if not spawns and not unlinked:
        return
    links = header.setdefault(HEADER_KEY, {})
    if spawns:
        links[SPAWNS] = list(dict.fromkeys(spawns))
    if unlinked:
        links[UNLINKED_CHILDREN] = unlinked
