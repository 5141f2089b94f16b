"""Where suite files are: the YAML files under the given paths. Apart from the schema so that
finding them (every `pytest --replaylab` start, most often in a folder holding none) imports
neither pydantic nor the transcript layer."""

from __future__ import annotations

from pathlib import Path

SUITE_SUFFIXES = (".yaml", ".yml")


def find_suite_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in SUITE_SUFFIXES and q.is_file()))
        elif p.suffix in SUITE_SUFFIXES:
            out.append(p)
    return out
