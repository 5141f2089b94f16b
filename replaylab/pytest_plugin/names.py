"""The names that make up an item's node id: `<suite file>::<recording>::<scenario>`.

Why names and not ids of our own: pytest's node id is what `--lf`, `-k`, JUnit and an id given
on the command line use, and what every report keys results by, so it must be unique for any
suite layout. A recording is named by its file name without `.jsonl`; when two recordings of one
suite share that name (the same file name in two folders), each of them is named by its path
relative to the suite's folder instead. Names never hold `::` (pytest's separator) nor end with
`:` (joined to the separator it would make `:::`, which pytest splits one colon too early), so
pytest, `--lf` and `item_id_parts` split an id where it was joined; nor a line break or control
character (they are printed as they are). A name still taken after that gets a number, so no two
items of a suite share an id.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from replaylab.printable import printable

SEPARATOR = "::"
#: a colon followed by another or ending the name: a backslash goes after it
_COLON_RUN = re.compile(r":(?=:|$)")


def recording_names(suite_dir: Path, recordings: Iterable[Path]) -> dict[Path, str]:
    """Each recording's collector name, unique within its suite."""
    recordings = list(recordings)
    stems = Counter(_stem(r.name) for r in recordings)
    wanted = {r: _stem(r.name) if stems[_stem(r.name)] == 1 else _stem(_relative(r, suite_dir)) for r in recordings}
    return dict(zip(recordings, unique_names(wanted[r] for r in recordings)))


def unique_names(names: Iterable[str]) -> list[str]:
    """`node_name` of each, in order; a name already given gets ` #2`, ` #3`, ..."""
    out: list[str] = []
    taken: set[str] = set()
    for raw in names:
        name = node_name(raw)
        candidate, number = name, 1
        while candidate in taken:
            number += 1
            candidate = f"{name} #{number}"
        taken.add(candidate)
        out.append(candidate)
    return out


def node_name(text: str) -> str:
    """`text` as one part of a node id: scrubbed (pytest prints node ids and writes them into
    JUnit), printable on one line, with no `::` in it and no `:` at its end (`a::b` is `a:\\:b`,
    `a:` is `a:\\`)."""
    from replaylab.scrub import scrub_text  # on first use: loading the plugin stays cheap

    return _COLON_RUN.sub(r":\\", printable(scrub_text(text))) or "-"


def item_id_parts(node_id: str) -> tuple[str, str, str] | None:
    """(suite file, recording, scenario) of a replaylab item's node id; None for any other id."""
    parts = node_id.split(SEPARATOR)
    if len(parts) != 3 or not parts[0].endswith((".yaml", ".yml")):
        return None
    return parts[0], parts[1], parts[2]


def scenario_name(name: str, own_mode: str, mode_override: str | None) -> str:
    """A scenario's name in its items' ids: `<scenario>[<mode>]` when `--replaylab-mode` (or ini
    replaylab_mode) runs it in another mode than its own, so an overridden run's items (and a
    baseline blessed from them) never pass for the scenario's own; its name as it is otherwise.
    Brackets, as pytest names a parametrized test: `-k` and a node id on the command line take them."""
    return name if not mode_override or mode_override == own_mode else f"{name}[{mode_override}]"


def _stem(name: str) -> str:
    return name.removesuffix(".jsonl")


def _relative(recording: Path, suite_dir: Path) -> str:
    try:
        return Path(os.path.relpath(recording, suite_dir)).as_posix()
    except ValueError:  # another drive (Windows): the path as given
        return recording.as_posix()
