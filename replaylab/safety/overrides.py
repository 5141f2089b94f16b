"""A suite's `classification` key: what one suite knows about its tools that the rules do not.

    classification:
      read_only_commands: [git status, git log, git diff]   # shell commands also exempted
      mutating: [web_fetch]                                  # tools always mutating here
      safe: [lookup_order]                                   # tools never mutating here

`read_only_commands` are word prefixes of a plain command (the first word compared as OpenClaw
compares executables, lower-cased). They widen OpenClaw's read-only shell list; they never lift
its refusals, so `git status > out` or `git status; rm x` stay mutating. `mutating` / `safe` name
tools exactly as the transcript does and win over every other rule (a declared class included).
Each problem is a validation error that the suite loader reports with its file, line and field.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from replaylab.safety.shell import js_lower_or_empty, tokenize

#: a suite names a few commands and tools; more is not a classification but a mistake
MAX_ENTRIES = 200
MAX_ENTRY_CHARS = 200


def _plain_command(command: str) -> str:
    _check_length(command, "command")
    words = tokenize(command.strip())
    if isinstance(words, str):
        raise ValueError(f"{command!r} is not a plain command ({words}); expected words such as 'git status'")
    return command


def _tool_name(name: str) -> str:
    _check_length(name, "tool name")
    if not name.strip():
        raise ValueError("an empty tool name; expected the tool's name as the transcript spells it")
    return name


PlainCommand = Annotated[str, AfterValidator(_plain_command)]
ToolName = Annotated[str, AfterValidator(_tool_name)]


class ClassificationOverrides(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    read_only_commands: list[PlainCommand] = Field(default_factory=list, max_length=MAX_ENTRIES)
    mutating: list[ToolName] = Field(default_factory=list, max_length=MAX_ENTRIES)
    safe: list[ToolName] = Field(default_factory=list, max_length=MAX_ENTRIES)

    _words: frozenset[tuple[str, ...]] = PrivateAttr(default=frozenset())
    _forced: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _disjoint(self) -> ClassificationOverrides:
        both = sorted(set(self.mutating) & set(self.safe))
        if both:
            raise ValueError(f"tool {both[0]!r} is listed under both 'mutating' and 'safe'; expected one of them")
        return self

    def model_post_init(self, context: object) -> None:
        words = set()
        for command in self.read_only_commands:
            tokens = tokenize(command.strip())
            if isinstance(tokens, list):
                words.add((js_lower_or_empty(tokens[0]), *tokens[1:]))
        self._words = frozenset(words)
        self._forced = {**dict.fromkeys(self.safe, "read"), **dict.fromkeys(self.mutating, "write")}

    @property
    def read_only_command_words(self) -> frozenset[tuple[str, ...]]:
        return self._words

    def forced(self, name: str) -> str | None:
        """The class a suite forces on `name` (`write` or `read`), or None."""
        return self._forced.get(name)


def _check_length(text: str, what: str) -> None:
    if len(text) > MAX_ENTRY_CHARS:
        raise ValueError(f"a {what} of {len(text)} characters; expected at most {MAX_ENTRY_CHARS}")
