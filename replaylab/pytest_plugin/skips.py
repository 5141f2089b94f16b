"""Where pytest says a not-exercised item was skipped: its scenario in the suite file.

pytest locates a skip at the line that raised it, which for every replaylab item is the same
line of the plugin's own source; `-rs` then folds all of them into one line that says nothing
about the suite. The scenario's line (the suite's `compaction:` for the default scenario) is
where a user would change what made it not exercised.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from replaylab.input_files import read_regular

MAX_SUITE_BYTES = 4 << 20


def skip_location(suite_file: Path, scenario: str) -> tuple[str, int]:
    """(suite file, 1-based line of the scenario) as pytest's skip report holds them (the file's
    name scrubbed and printable: pytest prints it under `-rs`)."""
    from replaylab.printable import printable
    from replaylab.scrub import scrub_text

    return printable(scrub_text(str(suite_file))), scenario_line(str(suite_file), scenario)


@functools.lru_cache(maxsize=256)
def scenario_line(suite_file: str, scenario: str) -> int:
    """The line of `- name: <scenario>` under `scenarios:`, else of `compaction:`, else 1."""
    try:
        lines = read_regular(Path(suite_file), MAX_SUITE_BYTES).decode("utf-8", errors="replace").splitlines()
    except (OSError, ValueError):  # gone or grown since it was loaded: the file's top
        return 1
    named = re.compile(r"^\s*-?\s*name:\s*([\"']?)" + re.escape(scenario) + r"\1\s*(#.*)?$")
    in_scenarios = False
    compaction = 1
    for number, line in enumerate(lines, start=1):
        if re.match(r"^scenarios\s*:", line):
            in_scenarios = True
        elif re.match(r"^\S", line):
            in_scenarios = False
            if re.match(r"^compaction\s*:", line):
                compaction = number
        elif in_scenarios and named.match(line):
            return number
    return compaction
