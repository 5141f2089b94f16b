"""A run's report assembled from its items: totals, cassette hashes, and the comparison with a
blessed baseline (`--replaylab-bless`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from replaylab import __version__
from replaylab.input_files import MISSING, kind_of, read_regular
from replaylab.report.atomic import write_file
from replaylab.report.merge import compute_totals, sort_items
from replaylab.results import ItemResult, RunMeta, RunReport, Totals
from replaylab.scrub import scrub_text


def build_report(items: list[ItemResult], meta: RunMeta) -> RunReport:
    items = sort_items(items)
    hashes = {item.recording: item.recording_sha256 for item in items if item.recording_sha256}
    hashes.update(
        {
            item.recording.removesuffix(".jsonl") + ".cassette.yaml": item.cassette_sha256
            for item in items
            if item.cassette_sha256
        }
    )
    return RunReport(meta=meta, totals=compute_totals(items), items=items, cassette_hashes=dict(sorted(hashes.items())))


#: the exit status of a run (and of `replaylab report merge --check`) that exercised nothing: not
#: pytest's 5 (NO_TESTS_COLLECTED), which CI scripts and plugins commonly turn into a success
#: (`|| [ $? -eq 5 ]`, pytest-custom_exit_code), so a gate on it could pass on nothing unseen;
#: above pytest's own statuses (0 to 5) and far from the shell's (126 and up)
NOTHING_EXERCISED_EXIT = 6


def nothing_exercised(totals: Totals) -> bool:
    """No item passed, failed, errored or could not compact: every one was not exercised, or
    there were none. Such a run tested nothing, whatever its other counts say."""
    return not (totals.passed or totals.failed or totals.error or totals.uncompacted)


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


#: the baseline file's version: 2 keys items by pytest node id (`<suite file>::<recording>::<scenario>`),
#: 1 by `<suite name>::<recording>::<scenario>` (still read: matched by that id)
BASELINE_SCHEMA_VERSION = 2
MAX_BASELINE_BYTES = 64 << 20
_SHAPE = "expected a JSON object with 'items' mapping each item id to its outcome and defect codes"


class BaselineProblem(Exception):
    """A baseline file that cannot be compared with: the message says why and what to do."""


@dataclass(frozen=True)
class BaselineComparison:
    #: items that passed in the baseline and do not pass now, or have new defect codes
    regressions: list[str]
    #: why the baseline (or part of it) could not be used; None when it could
    problem: str | None = None
    #: blessed items (of this run's shard) that are not in this run, and this run's items that
    #: are not in the baseline: each compares nothing, which must not go unsaid
    absent: int = 0
    unblessed: int = 0
    blessed: int = 0

    @property
    def warning(self) -> str | None:
        """The loud line when part or all of the baseline matched nothing in this run."""
        if not self.absent:
            return None
        matched = self.blessed - self.absent
        return (
            f"{BASELINE_WARNING_HEAD}{self.absent} of {self.blessed} blessed items are not in this run "
            f"({matched} compared; {self.unblessed} items of this run are not in the baseline): a renamed "
            "suite, recording or scenario (another --replaylab-mode) or a narrower selection; "
            "bless again with --replaylab-bless if the names changed"
        )


#: how a baseline warning (or problem) line starts in `regressions_vs_baseline`, where it is
#: shown with the regressions (so every report carries it) but is not counted as one
BASELINE_WARNING_HEAD = "baseline warning: "
BASELINE_PROBLEM_HEAD = "baseline file "


def is_baseline_warning(line: str) -> bool:
    return line.startswith((BASELINE_WARNING_HEAD, BASELINE_PROBLEM_HEAD))


def compare_with_baseline(
    report: RunReport, baseline_path: Path, in_run: Callable[[str], bool] | None = None
) -> BaselineComparison:
    """Items that passed in the blessed baseline and do not pass now (new failures / errors).
    A baseline that cannot be read or has the wrong shape is a `problem`, never an exception:
    the reports are written all the same. `in_run`: whether a blessed id belongs to this run
    (a shard's part of the baseline); all of them when None."""
    if kind_of(baseline_path) == MISSING:
        return BaselineComparison([])
    try:
        version, before = read_baseline(baseline_path)
    except BaselineProblem as exc:
        return BaselineComparison(
            [], f"{BASELINE_PROBLEM_HEAD}{baseline_path} {exc}; bless again with --replaylab-bless"
        )
    out = []
    by_item = _BlessedIndex(before)
    found: set[str] = set()
    unblessed = 0
    for item in report.items:
        # the baseline holds the ids scrubbed
        key = by_item.find_id(scrub_text(item.id)) if version >= 2 else legacy_id(item)
        old = before.get(key) if key is not None else None
        if key is None or old is None:
            unblessed += 1
            continue
        found.add(key)
        codes = {d.code.value for d in item.defects}
        if old.outcome == "passed" and item.outcome in ("failed", "error", "uncompacted"):
            out.append(f"{item.id}: passed in the baseline, {item.outcome} now ({item.reason})")
        elif set(old.defects) != codes:
            new = sorted(codes - set(old.defects))
            if new:
                out.append(f"{item.id}: new defect codes since the baseline: {', '.join(new)}")
    blessed = [item_id for item_id in before if in_run is None or in_run(item_id)]
    absent = sum(1 for item_id in blessed if item_id not in found)
    return BaselineComparison(out, absent=absent, unblessed=unblessed, blessed=len(blessed))


@dataclass(frozen=True)
class BlessedItem:
    outcome: str
    defects: tuple[str, ...]


def read_baseline(path: Path) -> tuple[int, dict[str, BlessedItem]]:
    """(schema version, item id → what was blessed). Raises `BaselineProblem`."""
    try:
        raw = read_regular(path, MAX_BASELINE_BYTES)
    except OSError as exc:
        raise BaselineProblem(f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BaselineProblem(f"is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), dict):
        raise BaselineProblem(f"is not a replaylab baseline: {_SHAPE}")
    version = data.get("schema_version", 1)
    if type(version) is not int or not 1 <= version <= BASELINE_SCHEMA_VERSION:
        raise BaselineProblem(
            f"has schema_version {version!r}; replaylab reads baseline versions 1 to {BASELINE_SCHEMA_VERSION}"
        )
    items: dict[str, BlessedItem] = {}
    for item_id, entry in data["items"].items():
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("outcome"), str)
            or not isinstance(entry.get("defects", []), list)
            or not all(isinstance(code, str) for code in entry.get("defects", []))
        ):
            raise BaselineProblem(f"is not a replaylab baseline: item {item_id!r} is {_short(entry)}; {_SHAPE}")
        items[item_id] = BlessedItem(entry["outcome"], tuple(entry.get("defects", [])))
    return version, items


class _BlessedIndex:
    """Blessed items by node id. pytest spells a node id's file part relative to its rootdir,
    which moves with the command line (an existing path among the arguments, such as the
    baseline file itself, can become part of it), so an id not found as is matches the one
    blessed id whose file part ends with its own, or whose own ends with that one's, and whose
    recording and scenario are the same."""

    def __init__(self, items: dict[str, BlessedItem]):
        self.items = items
        self.by_rest: dict[str, list[str]] = {}
        for item_id in items:
            file_part, _, rest = item_id.partition("::")
            self.by_rest.setdefault(rest, []).append(file_part)

    def find(self, item_id: str) -> BlessedItem | None:
        key = self.find_id(item_id)
        return self.items[key] if key is not None else None

    def find_id(self, item_id: str) -> str | None:
        """The blessed id that stands for `item_id`; None when there is none."""
        if item_id in self.items:
            return item_id
        file_part, _, rest = item_id.partition("::")
        matches = [
            other
            for other in self.by_rest.get(rest, [])
            if other.endswith("/" + file_part) or file_part.endswith("/" + other)
        ]
        return f"{matches[0]}::{rest}" if len(matches) == 1 else None


def legacy_id(item: ItemResult) -> str:
    """The id a version-1 baseline keys `item` by: `<suite name>::<recording file stem>::<scenario>`."""
    return f"{item.suite}::{Path(item.recording).name.removesuffix('.jsonl')}::{item.scenario}"


def bless(report: RunReport, baseline_path: Path) -> None:
    """Write the baseline (whole or not at all: `atomic.write_file`). Raises OSError."""
    data = {
        "schema_version": BASELINE_SCHEMA_VERSION,
        "replaylab_version": __version__,
        "git_sha": report.meta.git_sha,
        "items": {
            scrub_text(item.id): {"outcome": item.outcome, "defects": sorted({d.code.value for d in item.defects})}
            for item in report.items
        },
    }
    baseline_path.parent.mkdir(parents=True, exist_ok=True)
    write_file(baseline_path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8") + b"\n")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
