"""Node ids that round-trip: the id pytest prints for an item selects that item when given back on
the command line, and pytest's own cache plugins (`--lf`, `--ff`, `--sw`), `-k`, shards and xdist
all see the same ids.

Each run is a real `python -m pytest --replaylab` in a fresh process, with pytest's cacheprovider
ON (what `--lf`, `--ff` and `--sw` read and write), on copies of two bundled suites cut down to
two recordings, one expectation broken on purpose: the auto suite is told `readonly-missing-parcel`
drops a mutating event, which it does not, so that item fails (a missed negative control).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from builders.pytest_runs import run_pytest
from replaylab.pytest_plugin.names import SEPARATOR, item_id_parts, node_name, recording_names, unique_names
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
RECORDINGS = ("cancel-two-orders", "readonly-missing-parcel")
SUITES = ("auto", "manual")
#: in collection order: suite file, then recording, then scenario
ALL = [f"suites/{suite}.yaml::{recording}::{suite}" for suite in SUITES for recording in RECORDINGS]
BROKEN = "suites/auto.yaml::readonly-missing-parcel::auto"
#: `-v` lines and the `-rA` summary: "suites/auto.yaml::cancel-two-orders::auto PASSED  [ 25%]",
#: "FAILED suites/auto.yaml::readonly-missing-parcel::auto - FAILED: negative control: ..."
VERBOSE = re.compile(r"^(suites/\S+) (PASSED|FAILED|ERROR|SKIPPED)")
SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED) (suites/\S+)")


def write_suite(root: Path, suite: str, broken: bool) -> None:
    """The bundled suite `suite` with only `RECORDINGS` (and their per-recording expectations);
    `broken`: readonly-missing-parcel is expected to drop a mutating event."""
    data = yaml.safe_load((REPO / "suites" / f"{suite}.yaml").read_text(encoding="utf-8"))
    data["recordings"] = [f"../recordings/{name}.jsonl" for name in RECORDINGS]
    kept = {f"{name}.jsonl" for name in RECORDINGS}
    per_recording = {k: v for k, v in (data.get("per_recording") or {}).items() if k in kept}
    if broken:
        per_recording["readonly-missing-parcel.jsonl"] = {"defects": ["MUTATION_DROPPED"]}
    if per_recording:
        data["per_recording"] = per_recording
    else:
        data.pop("per_recording", None)
    (root / "suites" / f"{suite}.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The two recordings, the helpdesk pack and the two suites; an ini file of its own, so pytest's
    root (and the cache under it) is this folder and no other configuration applies."""
    root = tmp_path / "project"
    (root / "recordings").mkdir(parents=True)
    (root / "suites").mkdir()
    for name in RECORDINGS:
        for suffix in (".jsonl", ".cassette.yaml"):
            shutil.copy(REPO / "recordings" / "helpdesk" / f"{name}{suffix}", root / "recordings")
    shutil.copytree(REPO / "examples", root / "examples")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for suite in SUITES:
        write_suite(root, suite, broken=suite == "auto")
    return root


def run(root: Path, *args: str, statuses: tuple[int, ...] = (0, 1)) -> subprocess.CompletedProcess:
    """`pytest --replaylab ARGS` in a fresh process, cacheprovider on; its exit status one of `statuses`."""
    done = run_pytest(root, "--replaylab", "-rA", *args, pythonpath=[root], cache=True)
    assert done.returncode in statuses, done.stdout[-3000:] + done.stderr[-2000:]
    return done


def ran(done: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    """(node id, outcome) of each item pytest reported, in the order it reported them (`-v`)."""
    return [(m[1], m[2]) for line in done.stdout.splitlines() if (m := VERBOSE.match(line))]


def summary(done: subprocess.CompletedProcess) -> dict[str, str]:
    """node id → outcome, as pytest lists them under "short test summary info" (`-rA`)."""
    return {m[2]: m[1] for line in done.stdout.splitlines() if (m := SUMMARY.match(line))}


def report_ids(root: Path) -> list[str]:
    return [item["id"] for item in json.loads((root / "reports" / "replaylab.json").read_text())["items"]]


def collected(root: Path, *args: str) -> list[str]:
    done = run(root, "--collect-only", "-q", *args)
    return [line for line in done.stdout.splitlines() if line.startswith("suites/")]


def test_the_printed_id_of_a_failure_reruns_exactly_that_item(project: Path) -> None:
    first = run(project, "suites")
    assert summary(first) == {**dict.fromkeys(ALL, "PASSED"), BROKEN: "FAILED"}, first.stdout[-3000:]
    printed = next(i for i, outcome in summary(first).items() if outcome == "FAILED")
    again = run(project, printed, "-v")
    assert ran(again) == [(BROKEN, "FAILED")], again.stdout[-3000:]
    assert report_ids(project) == [BROKEN]
    assert "no match in any of" not in again.stdout + again.stderr


def test_last_failed_reruns_only_the_failure_and_failed_first_orders_it_first(project: Path) -> None:
    first = run(project, "suites", "-v")
    assert ran(first) == [(i, "FAILED" if i == BROKEN else "PASSED") for i in ALL], first.stdout[-3000:]
    last_failed = run(project, "suites", "--lf", "-v")
    assert "run-last-failure: rerun previous 1 failure" in last_failed.stdout, last_failed.stdout[-3000:]
    assert ran(last_failed) == [(BROKEN, "FAILED")]
    assert report_ids(project) == [BROKEN]
    failed_first = run(project, "suites", "--ff", "-v")
    assert ran(failed_first) == [(BROKEN, "FAILED")] + [(i, "PASSED") for i in ALL if i != BROKEN]
    assert sorted(report_ids(project)) == sorted(ALL)
    # fixed: `--lf` runs the former failure, which passes, and pytest forgets it
    write_suite(project, "auto", broken=False)
    fixed = run(project, "suites", "--lf", "-v")
    assert ran(fixed) == [(BROKEN, "PASSED")], fixed.stdout[-3000:]
    everything = run(project, "suites", "--lf", "-v")
    assert "run-last-failure: no previously failed tests" in everything.stdout, everything.stdout[-3000:]
    assert ran(everything) == [(i, "PASSED") for i in ALL]


def test_stepwise_stops_at_the_failure_and_starts_from_it_next_time(project: Path) -> None:
    """pytest ends a stepwise stop as an interruption (exit status 2); the reports are written
    all the same, as after `-x`: the stop is the user's, and the failure's story is in them."""
    stopped = run(project, "suites", "--sw", "-v", statuses=(2,))
    assert ran(stopped) == [(ALL[0], "PASSED"), (BROKEN, "FAILED")], stopped.stdout[-3000:]
    assert report_ids(project) == [ALL[0], BROKEN]
    assert "no reports written" not in stopped.stdout
    write_suite(project, "auto", broken=False)
    resumed = run(project, "suites", "--sw", "-v")
    assert ran(resumed) == [(i, "PASSED") for i in ALL[1:]], resumed.stdout[-3000:]
    assert "1 deselected" in resumed.stdout


def readme_commands() -> list[list[str]]:
    """The arguments after `pytest --replaylab` of each command under the README's "Rerun one failure"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## Rerun one failure", 1)[1].split("```", 2)[1]
    commands = [shlex.split(line.split("  #")[0]) for line in block.splitlines() if line.strip()]
    assert all(c[:2] == ["pytest", "--replaylab"] for c in commands), commands
    return [c[2:] for c in commands]


def test_the_readmes_rerun_commands_select_what_it_says(project: Path) -> None:
    """The README's node id and `-k` commands, run as written, select the items its comments name."""
    commands = readme_commands()
    assert ["suites/", "--lf"] in commands and ["suites/", "--sw"] in commands
    expected = {
        ("suites/auto.yaml::cancel-two-orders::auto",): ["suites/auto.yaml::cancel-two-orders::auto"],
        ("suites/", "-k", "cancel-two-orders"): [
            "suites/auto.yaml::cancel-two-orders::auto",
            "suites/manual.yaml::cancel-two-orders::manual",
        ],
        ("suites/", "-k", "auto and cancel"): ["suites/auto.yaml::cancel-two-orders::auto"],
    }
    assert set(expected) <= {tuple(c) for c in commands}, commands
    for args, ids in expected.items():
        assert collected(project, *args) == ids, args
    assert collected(project, "suites", "-k", "not readonly and not auto") == [
        "suites/manual.yaml::cancel-two-orders::manual"
    ]


def test_shards_and_xdist_workers_give_the_same_ids(project: Path) -> None:
    assert collected(project, "suites") == ALL
    shards = [collected(project, "suites", "--replaylab-shard", f"{k}/2") for k in (1, 2)]
    assert sorted(shards[0] + shards[1]) == sorted(ALL) and shards[0] and shards[1]
    chosen = [
        "suites/auto.yaml::cancel-two-orders::auto",
        BROKEN,
        "suites/manual.yaml::readonly-missing-parcel::manual",
    ]
    workers = run(project, *chosen, "-n", "2")
    assert summary(workers) == {i: "FAILED" if i == BROKEN else "PASSED" for i in chosen}, workers.stdout[-3000:]
    assert sorted(report_ids(project)) == sorted(chosen)
    # the xdist run's failure is in the cache under the same id: `--lf` finds it
    assert ran(run(project, "suites", "--lf", "-v")) == [(BROKEN, "FAILED")]


def test_recordings_named_by_their_path_or_ending_in_a_colon_round_trip(project: Path) -> None:
    """A recording named by its path from the suite's folder (`../b/...`), and one whose name ends
    in `:` (joined to the separator it would make `:::`, which pytest splits one colon early)."""
    for folder, name in (("a", "cancel-two-orders"), ("b", "cancel-two-orders"), ("c", "odd:")):
        (project / folder).mkdir()
        for suffix in (".jsonl", ".cassette.yaml"):
            shutil.copy(project / "recordings" / f"cancel-two-orders{suffix}", project / folder / f"{name}{suffix}")
    (project / "suites" / "paths.yaml").write_text(
        "name: paths\nrecordings: [../a/*.jsonl, ../b/*.jsonl, ../c/*.jsonl]\ntools: examples.helpdesk\n"
        "compaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}\n",
        encoding="utf-8",
    )
    listed = collected(project, "suites/paths.yaml")
    assert listed == [
        "suites/paths.yaml::../a/cancel-two-orders::safeguard",
        "suites/paths.yaml::../b/cancel-two-orders::safeguard",
        "suites/paths.yaml::odd:\\::safeguard",
    ]
    for node_id in listed:
        assert collected(project, node_id) == [node_id]


@pytest.mark.parametrize("name", ["a::b", "odd:", ":::", "a:::b", ":lead", "a:b", "", "x\n::y:"])
def test_a_name_joins_into_an_id_that_splits_back_where_it_was_joined(name: str) -> None:
    part = node_name(name)
    assert SEPARATOR not in part and not part.endswith(":") and "\n" not in part and part
    node_id = SEPARATOR.join(["suites/s.yaml", part, part])
    assert item_id_parts(node_id) == ("suites/s.yaml", part, part)


def test_names_that_collide_after_escaping_are_numbered() -> None:
    assert unique_names(["a::b", "a:\\:b", "a::b"]) == ["a:\\:b", "a:\\:b #2", "a:\\:b #3"]
    names = recording_names(Path("/p/suites"), [Path("/p/a/x:.jsonl"), Path("/p/b/x:.jsonl"), Path("/p/y.jsonl")])
    assert list(names.values()) == ["../a/x:\\", "../b/x:\\", "y"]
