"""Tool-name verbs: the last evidence before "unknown ⇒ mutating".

A tool none of the declared classes, Claude Code's built-in list or OpenClaw's rules names is
read-only by its name when the name *starts* with a read verb — `get_order_details`,
`check_room_availability`, `search_products`, `listAllAirports`, `mcp__github__get_issue`,
`identificar_paciente`, `consultar_saldo` — and no word of it is a verb that changes something
(`get_or_create_user`, `check_in_passenger`, `fetch_and_store`, `verificar_y_pagar` stay
mutating). Verbs of other languages count where the name itself is in that language: a Spanish
verb only with no English word-verb before it, and so on; each table says which language it is,
and the reason names it.

A name may name its service before its verb — `slack_list_channels`, `memory_search`,
`jira_get_issue`, as MCP servers name their tools: when the first word is no verb any table
knows, the verb stands second (and `slack_post_message`, `stripe_create_refund`,
`passenger_check_in` stay mutating). A first word that is a verb no table knows would make the
second read as the verb: the verb-position table holds the imperatives tool names start with.

The name is split into words at `_`, `-`, `.`, `:`, `/`, spaces and lower→upper case changes;
a namespace prefix is dropped first: Claude Code's `mcp__server__`, OpenClaw's `server__` (how
OpenClaw 2026.9.6 names an MCP server's tool, `upstream.openclaw_2026_9_6`), `functions.`.

A name may put qualifiers between its service and its verb — `brave_web_search`,
`google_web_search`: the verb is the first word any table knows. A name that is a command line
(`git_status`, `git_diff_unstaged`, `docker_ps`, as git and container MCP servers name their tools)
is read as that command by the read-only shell grammar: `git_log` reads, `git_checkout` does not.
A few verbs change nothing though they read nothing either: a thinking tool (`think`,
`sequentialthinking`, `think_about_…`) is class `think`, a question (`ask_question`,
`perplexity_ask`) class `interaction`, and `wait_for` only waits. A name that asks a question
(`is_refund_allowed`, `can_cancel_order`, `user_has_pending_update`) reads whatever verbs follow
the question word, unless a connector joins another verb to it. A verb that changes something
reads when its object says so: `take_screenshot`, `resolve-library-id` (a look-up of an id).
A one-word name may glue an English read verb to its object (`searchjobs`, `getweather`): it
reads when the object holds no verb that changes something (`searchreplace` does not).
A read verb joined by `and` / `then` to a second verb reads only when that verb reads too
(`fetch_and_summarize`): Home Assistant's `HassMediaSearchAndPlay` plays what it found. Home
Assistant's intents (`Hass…`, which its `mcp_server` integration serves under their own names)
call the to-do list domain `List`, a noun: `HassListCompleteItem` completes an item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replaylab import caches
from replaylab.safety.shell_grammar import grammar_verdict
from replaylab.safety.shell_subcommands import SUBCOMMANDS
from replaylab.safety.verb_words import CHANGE_VERBS, CHANGE_VERBS_IN_VERB_POSITION, QUESTION_WORDS, READ_VERBS
from replaylab.upstream import openclaw_2026_9_6 as OC96

#: verbs that change nothing outside the conversation though they read nothing either: the class
#: a call gets and what it does
INERT_VERBS: dict[str, tuple[str, str]] = {
    "think": ("think", "only thinks"),
    "thinking": ("think", "only thinks"),
    "ask": ("interaction", "asks a question and waits for its answer"),
    "wait": ("read", "only waits for something to appear"),
}
#: verbs that change something, but read when their object (the name's last word) is one of these:
#: a screenshot is taken of what is shown, an id or an address is resolved by looking it up
READING_OBJECTS: dict[str, frozenset[str]] = {
    "take": frozenset({"screenshot", "screenshots"}),
    "resolve": frozenset({"id", "ids", "uri", "url", "path", "address", "hostname"}),
}
#: the HTTP method words an OpenAPI-generated name starts with after `API` (openapi-mcp-server)
_HTTP_METHOD_WORDS = frozenset({"get", "post", "put", "patch", "delete"})
#: verbs that only say a statement or a command is run; what it does is elsewhere in the name
_GENERIC_RUNNERS = frozenset({"execute", "exec", "run"})
_CONNECTORS = frozenset({"and", "or", "then", "y", "o", "e", "ou", "et", "und", "oder"})
#: connectors that join a second verb to the read verb right before them (`search_and_play`)
_VERB_JOINERS = frozenset({"and", "then"})
#: Home Assistant's intent names (`HassTurnOn`, `HassListAddItem`): their first word, and the word
#: that is the to-do list domain there, never the verb
_HASS_INTENT = "hass"
_HASS_LIST_DOMAIN = "list"
#: a read verb followed by one of these words is a change (`check_in`, `look_up`? no: `check_out`)
_PARTICLE_CHANGES = {"check": frozenset({"in", "out"}), "sign": frozenset({"in", "out", "up"})}
#: OpenClaw's `<server>__`: a letter, then up to the server name's length of `[A-Za-z0-9_-]`
_OPENCLAW_MCP_SERVER = rf"[A-Za-z][A-Za-z0-9_-]{{0,{OC96.MCP_SERVER_NAME_MAX_CHARS - 1}}}?" + re.escape(
    OC96.MCP_TOOL_NAME_SEPARATOR
)
_NAMESPACE = re.compile(
    rf"^(?:mcp__[^_]+(?:_[^_]+)*?__|functions\.|tools?[./:]|{_OPENCLAW_MCP_SERVER}(?=[A-Za-z0-9]))", re.IGNORECASE
)
#: English read verbs a one-word name may start with, glued to its object (`searchjobs`,
#: `getweather`, as datasets spell tools): the rest is read for change verbs too
_GLUED_READ_VERBS = (
    "retrieve", "describe", "preview", "inspect", "search", "lookup", "browse", "fetch", "query", "count",
    "check", "find", "list", "show", "view", "read", "get",
)  # fmt: skip
#: the least a glued object is long (`checkin`, `getup`: a particle, not an object)
_GLUED_OBJECT_MIN = 3
#: every read verb, of any language
_ANY_READ_VERB = frozenset().union(*READ_VERBS.values())
_SPLIT = re.compile(r"[_\-.:/\s]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class VerbVerdict:
    """Whether a tool's name says it only reads, and why; `changes`: it holds a verb that changes
    something (not merely no read verb)."""

    read_only: bool
    reason: str
    changes: bool = False
    #: the class a read-only name gives: `read`, or what an inert verb says (`think`, `interaction`)
    tool_class: str = "read"


def bare_tool_name(name: str) -> str:
    """A tool's name as its server lists it: Claude Code's `mcp__server__` and OpenClaw's
    `server__` dropped (`mcp__playwright__browser_snapshot` → `browser_snapshot`)."""
    return _NAMESPACE.sub("", name.strip())


def tool_namespace(name: str) -> str:
    """What `bare_tool_name` drops: `mcp__playwright__` of `mcp__playwright__browser_snapshot`."""
    match = _NAMESPACE.match(name.strip())
    return match.group(0) if match else ""


def name_words(name: str) -> list[str]:
    """The lower-cased words of a tool name, namespace dropped (`mcp__gh__getIssue` → get, issue)."""
    return [w.lower() for w in _SPLIT.split(bare_tool_name(name)) if w]


def _inert(word: str) -> tuple[str, str] | None:
    """(class, what it does) of a verb that changes nothing; `sequentialthinking` is one word."""
    return INERT_VERBS.get(word) or (INERT_VERBS["thinking"] if word.endswith("thinking") else None)


def _known_verb(word: str) -> bool:
    return (
        word in CHANGE_VERBS
        or word in CHANGE_VERBS_IN_VERB_POSITION
        or word in _PARTICLE_CHANGES
        or word in _CONNECTORS
        or word in QUESTION_WORDS
        or _inert(word) is not None
        or any(word in verbs for verbs in READ_VERBS.values())
    )


def _verb_index(words: list[str]) -> int:
    """Where the name's verb stands: the first word a table knows as a verb, after the service and
    its qualifiers (`slack_list_channels`, `brave_web_search`); the second word when none is known."""
    known = next((at for at, word in enumerate(words) if _known_verb(word)), None)
    if known is not None:
        return known
    return 1 if len(words) > 1 else 0


def _command_verdict(words: list[str]) -> VerbVerdict | None:
    """A name that is a command line (`git_status`): the read-only shell grammar's verdict on it;
    None when the first word is no program the grammar knows the subcommands of, or a word of
    the name changes something wherever it stands (`git_create_branch`)."""
    if len(words) < 2 or words[0] not in SUBCOMMANDS or any(word in CHANGE_VERBS for word in words):
        return None
    command = " ".join(words)
    verdict = grammar_verdict(command)
    if verdict.read_only:
        return VerbVerdict(True, f"its name is the command `{command}`, which only reads")
    return VerbVerdict(
        False,
        f"its name is the command `{command}`, which the read-only grammar does not prove: {verdict.reason}",
        changes=True,
    )


@caches.lru("safety.verb_verdict", maxsize=4096)
def verb_verdict(name: str) -> VerbVerdict:
    """Read-only when the name's verb (first, or second after its service) is a read verb and the
    name holds no change verb (module rules)."""
    words = name_words(name)
    if not words:
        return VerbVerdict(False, "a tool name without words")
    if len(words) > 2 and words[0] == "api" and words[1] in _HTTP_METHOD_WORDS:
        # an OpenAPI-generated name (`API-post-search`, `API-get-users`): the HTTP method is how the
        # operation is sent, not what it does; a search or a query sent by POST still only reads
        words = [words[0], *words[2:]] if words[1] == "post" else words
    if words[0] == _HASS_INTENT and len(words) > 2:
        words = [w for w in words if w != _HASS_LIST_DOMAIN]
    command = _command_verdict(words)
    if command is not None:
        return command
    if len(words) == 1 and not _known_verb(words[0]) and grammar_verdict(words[0]).read_only:
        return VerbVerdict(True, f"its name is the command `{words[0]}`, which only reads")
    if len(words) == 1 and not _known_verb(words[0]):
        glued = _glued_read(words[0])
        if glued is not None:
            return glued
    at = _verb_index(words)
    verb = words[at]
    if verb in QUESTION_WORDS and not any(w in _CONNECTORS for w in words):
        where = (
            f"its name starts with `{verb}`" if at == 0 else f"its verb, after `{' '.join(words[:at])}`, is `{verb}`"
        )
        return VerbVerdict(True, f"{where}: it asks a question, which only reads")
    in_verb_position = {verb} | {w for before, w in zip(words, words[1:]) if before in _CONNECTORS}
    changes = [w for w in words if w in CHANGE_VERBS or (w in in_verb_position and w in CHANGE_VERBS_IN_VERB_POSITION)]
    if changes == [verb] and words[-1] in READING_OBJECTS.get(verb, ()):
        return VerbVerdict(True, f"its name's verb is `{verb}` with `{words[-1]}`, which only reads")
    if changes and words[-1] == "read" and set(changes) <= _GENERIC_RUNNERS and len(words) > 2:
        # the effect as a suffix, as servers that split one tool by effect name them
        # (`execute_sql_read` / `execute_sql_write`): running a statement that only reads
        return VerbVerdict(True, f"its name is `{changes[0]}` … `read`: a runner limited to reads")
    if changes:
        return VerbVerdict(False, f"its name holds `{changes[0]}`, a verb that changes something", changes=True)
    joined = words[at + 2] if len(words) > at + 2 and words[at + 1] in _VERB_JOINERS else None
    if joined is not None and verb in _ANY_READ_VERB and joined not in _ANY_READ_VERB and _inert(joined) is None:
        return VerbVerdict(
            False,
            f"its name joins `{verb}` `{words[at + 1]}` `{joined}`, a verb not known to only read",
            changes=True,
        )
    particles = _PARTICLE_CHANGES.get(verb)
    if particles and len(words) > at + 1 and words[at + 1] in particles:
        return VerbVerdict(False, f"its name's verb is `{verb}_{words[at + 1]}`, which changes something", changes=True)
    where = f"its name starts with `{verb}`" if at == 0 else f"its verb, after `{' '.join(words[:at])}`, is `{verb}`"
    inert = _inert(verb)
    if inert is not None:
        return VerbVerdict(True, f"{where}, a verb that {inert[1]}", tool_class=inert[0])
    for language, verbs in READ_VERBS.items():
        if verb in verbs:
            shown = "" if language == "English" else f"the {language} verb "
            return VerbVerdict(True, f"{where.replace(f'`{verb}`', shown + f'`{verb}`')}, a verb that only reads")
    if at:
        return VerbVerdict(False, f"its name starts with `{words[0]}`, then `{verb}`: no read verb")
    return VerbVerdict(False, f"its name starts with `{verb}`, no read verb")


def _glued_read(word: str) -> VerbVerdict | None:
    """A one-word name that is a read verb glued to its object (`searchjobs`): read-only when the
    object holds no verb that changes something (`searchreplace`, `getorcreate` stay mutating)
    and is no particle that makes the verb a change (`checkout`)."""
    verb = next((v for v in _GLUED_READ_VERBS if word.startswith(v)), None)
    if verb is None:
        return None
    rest = word[len(verb) :]
    if len(rest) < _GLUED_OBJECT_MIN or not rest.isalpha() or rest in _PARTICLE_CHANGES.get(verb, ()):
        return None
    if _glued_change(rest):
        return None
    return VerbVerdict(True, f"its name is `{verb}` glued to `{rest}`, a verb that only reads")


def _glued_change(rest: str) -> bool:
    """Whether the object glued to a read verb holds a change: it starts with a verb that changes
    something (`replace`, `updates`; a three-letter one only alone, so `users` is no `use`), or
    a connector joins one to it (`orcreate`, `andsave`)."""
    for change in CHANGE_VERBS | CHANGE_VERBS_IN_VERB_POSITION:
        if len(change) >= 4 and rest.startswith(change) or rest in (change, f"{change}s"):
            return True
        if any(f"{connector}{change}" in rest for connector in ("and", "or", "then")):
            return True
    return False


def action_verdict(action: str) -> VerbVerdict:
    """Whether a call's `action` (normalized as OpenClaw normalizes it) only reads: one of
    OpenClaw's read-only actions (`status`, `poll`, `runs` …), or a read verb first and no verb
    that changes something (`list_events`, `get_issue`), as a tool's name would be read."""
    if action in OC96.READ_ONLY_ACTIONS:
        return VerbVerdict(True, f"its action `{action}` is one of OpenClaw's read-only actions")
    named = verb_verdict(action)
    reason = named.reason.replace("its name", f"its action `{action}`", 1)
    return VerbVerdict(named.read_only, reason, named.changes)
