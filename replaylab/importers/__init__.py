"""Importers: other recorded-session formats → v3 transcripts + synthesized cassettes.

`import_sessions(kind, src)` yields one `ImportedSession` per source session; `write_session`
writes it (never overwriting; `writing`). Each source has its own small module; the rules they
all share (ids, pairing, cassette) live in `common`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

from replaylab.diagnostics import Diagnostic
from replaylab.importers.common import ImportedSession, bad_input, child_file_stem
from replaylab.importers.writing import SessionNames, write_session

#: CLI name → (module, function)
IMPORTERS: dict[str, tuple[str, str]] = {
    "tau-bench": ("replaylab.importers.tau_bench", "import_tau_bench"),
    "tau2-bench": ("replaylab.importers.tau2_bench", "import_tau2_bench"),
    "claude-code": ("replaylab.importers.claude_code_folders", "import_claude_code"),
    "pi": ("replaylab.importers.pi", "import_pi"),
    "openai-chat": ("replaylab.importers.openai_chat", "import_openai_chat"),
    "openclaw": ("replaylab.importers.openclaw", "import_openclaw"),
    "codex": ("replaylab.importers.codex", "import_codex"),
    "openhands": ("replaylab.importers.openhands", "import_openhands"),
}
KINDS = tuple(IMPORTERS)

__all__ = [
    "IMPORTERS",
    "KINDS",
    "ImportedSession",
    "SessionNames",
    "child_file_stem",
    "import_sessions",
    "write_session",
]


def import_sessions(
    kind: str,
    src: Path | str,
    *,
    tool_classes: Path | str | None = None,
    problems: list[Diagnostic] | None = None,
) -> Iterator[ImportedSession]:
    """Sessions of `src` (a file, or a folder of them) read as `kind`. `tool_classes` overrides
    the `tool_classes.json` otherwise looked up next to the source. Bad input raises `InputError`;
    with `problems`, a file of the folder that is not a source of this kind is listed there instead
    and the folder's other files are imported (`common.each_source`). A `src` that is missing or
    holds nothing to import still raises."""
    if kind not in IMPORTERS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(KINDS)}")
    src = Path(src)
    if not src.exists():
        raise bad_input(src, f"no such file or folder; expected a {kind} source", code="missing-file")
    module_name, function_name = IMPORTERS[kind]
    importer: Callable[..., Iterator[ImportedSession]] = getattr(importlib.import_module(module_name), function_name)
    return importer(src, tool_classes_path=Path(tool_classes) if tool_classes else None, problems=problems)
