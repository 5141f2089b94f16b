"""Merging CI shard reports (`merge_reports`, `replaylab report merge`) and the example nightly workflow."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from builders.planted_secrets import GITHUB, OPENAI, PASSWORD
from builders.reports import build_items
from replaylab import __version__
from replaylab.diagnostics import InputError
from replaylab.report import write_reports
from replaylab.report.jsonio import dump_json, load_json
from replaylab.report.merge import MergeError, compute_totals, merge_reports
from replaylab.report.run import build_report as plugin_build_report
from replaylab.results import SCHEMA_VERSION, RunMeta, RunReport
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
CLI = [sys.executable, "-m", "replaylab.cli"]


def _meta(shard: str | None, started: str, finished: str) -> RunMeta:
    return RunMeta(
        replaylab_version=__version__,
        git_sha="f" * 40,
        model="replay",
        mode="safeguard",
        started_at=started,
        finished_at=finished,
        python="3.11",
        argv=["--replaylab", "suites/"],
        shards=[shard] if shard else [],
    )


def _with_hashes(items):
    for n, item in enumerate(items):
        item.recording_sha256 = f"{n:064x}"
        item.cassette_sha256 = f"{n + 100:064x}"
    return items


def _shards(n: int = 2):
    """The plugin's own report builder over all items, and over a split of them into n shards."""
    items = _with_hashes(build_items())
    whole = plugin_build_report(items, _meta(None, "2026-01-01T00:00:00+00:00", "2026-01-01T00:09:00+00:00"))
    shards = []
    for k in range(n):
        part = [item.model_copy(deep=True) for i, item in enumerate(items) if i % n == k]
        for item in part:
            item.duration_s += 1.5 * (k + 1)  # timings differ between runs
        shards.append(
            plugin_build_report(
                part, _meta(f"{k + 1}/{n}", f"2026-01-01T00:0{k}:00+00:00", f"2026-01-01T00:0{k + 5}:00+00:00")
            )
        )
    return whole, shards


def _without_timings(report: RunReport) -> dict:
    data = report.model_dump(mode="json", exclude={"meta"})
    for item in data["items"]:
        item.pop("duration_s")
    return data


def test_merge_of_two_shards_equals_the_unsharded_report():
    whole, shards = _shards(2)
    assert all(len(s.items) < len(whole.items) for s in shards)
    merged = merge_reports(list(reversed(shards)))  # input order does not matter
    assert _without_timings(merged) == _without_timings(whole)
    assert merged.totals == whole.totals == compute_totals(whole.items)
    assert [i.id for i in merged.items] == sorted(i.id for i in whole.items)
    assert sorted(merged.meta.shards) == ["1/2", "2/2"]
    assert merged.meta.started_at == "2026-01-01T00:00:00+00:00"
    assert merged.meta.finished_at == "2026-01-01T00:06:00+00:00"
    assert merged.meta.git_sha == "f" * 40 and merged.meta.model == "replay"


def test_merge_survives_the_json_round_trip(tmp_path):
    whole, shards = _shards(3)
    paths = []
    for k, shard in enumerate(shards, 1):
        paths.append(write_reports(shard, tmp_path / f"reports-{k}")["json"])
    merged = merge_reports([load_json(p) for p in paths])
    assert _without_timings(merged) == _without_timings(whole)


def test_merge_refuses_overlapping_shards():
    _, shards = _shards(2)
    with pytest.raises(MergeError, match="is in both a.json and b.json"):
        merge_reports([shards[0], shards[0]], labels=["a.json", "b.json"])


def test_merge_refuses_different_commits_and_cassettes():
    _, shards = _shards(2)
    other = shards[1].model_copy(deep=True)
    other.meta.git_sha = "e" * 40
    with pytest.raises(MergeError, match="different commits"):
        merge_reports([shards[0], other])
    other = shards[1].model_copy(deep=True)
    name = next(iter(shards[0].cassette_hashes))
    other.cassette_hashes[name] = "0" * 64
    with pytest.raises(MergeError, match="did not replay the same recordings"):
        merge_reports([shards[0], other])


def test_merge_keeps_mixed_metadata_visible():
    _, shards = _shards(2)
    shards[1].meta.model = "litellm/openai/gpt-4.1-mini"
    shards[1].meta.shards = []
    merged = merge_reports(shards, labels=["s1.json", "s2.json"])
    assert merged.meta.model == "litellm/openai/gpt-4.1-mini, replay"
    assert merged.meta.shards == ["1/2", "s2.json"]  # a shard without a label is named by its file


# ------------------------------------------------------------------ CLI


def _write_shards(root: Path, n: int = 2) -> tuple[RunReport, list[Path]]:
    whole, shards = _shards(n)
    return whole, [write_reports(s, root / f"reports-{k}")["json"] for k, s in enumerate(shards, 1)]


def test_cli_merge_with_a_quoted_glob(tmp_path):
    whole, _ = _write_shards(tmp_path)
    res = subprocess.run(
        [*CLI, "report", "merge", "reports-*/replaylab.json", "--out", "reports/"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert "merged 2 reports: 5 items" in res.stdout
    out = tmp_path / "reports"
    assert {p.name for p in out.iterdir()} == {"replaylab.html", "replaylab.json", "replaylab.md"}
    assert _without_timings(load_json(out / "replaylab.json")) == _without_timings(whole)
    assert "helpdesk::beta::aggressive" in (out / "replaylab.md").read_text(encoding="utf-8")


def test_cli_merge_check_and_expect_shards(tmp_path):
    _, paths = _write_shards(tmp_path)
    args = [*CLI, "report", "merge", *map(str, paths), "--out", str(tmp_path / "out")]
    assert subprocess.run([*args, "--check"], capture_output=True).returncode == 1  # the run has failures
    res = subprocess.run([*args, "--expect-shards", "4"], capture_output=True, text=True)
    assert res.returncode == 2 and "expected 4 shard reports, found 2" in res.stderr


@pytest.mark.parametrize("case", ["no-match", "missing", "bad-json", "schema", "overlap"])
def test_cli_merge_errors_name_the_file(tmp_path, case):
    _, paths = _write_shards(tmp_path)
    if case == "no-match":
        inputs, needle = ["nothing-*/replaylab.json"], "nothing-*/replaylab.json: error[REPORT_NOT_FOUND]"
    elif case == "missing":
        inputs, needle = [str(paths[0]), "gone.json"], "gone.json: error[REPORT_NOT_FOUND]"
    elif case == "bad-json":
        paths[1].write_text('{"schema_version": 1,')
        inputs, needle = list(map(str, paths)), f"{paths[1]}:1: error[REPORT_INVALID_JSON]"
    elif case == "schema":
        paths[1].write_bytes(
            paths[1].read_bytes().replace(f'"schema_version": {SCHEMA_VERSION}'.encode(), b'"schema_version": 7')
        )
        inputs, needle = list(map(str, paths)), "schema_version 7 is not supported"
    else:
        inputs, needle = [str(paths[0]), str(paths[0].parent / ".." / "reports-1" / "replaylab.json")], "is in both"
    res = subprocess.run(
        [*CLI, "report", "merge", *inputs, "--out", str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True
    )
    assert res.returncode == 2, res
    assert needle in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()  # nothing written on a bad input


# ------------------------------------------------------------------ examples/nightly.yml


def _workflow() -> dict:
    return yaml.safe_load((REPO / "examples" / "nightly.yml").read_text(encoding="utf-8"))


def _runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def test_nightly_workflow_has_shards_merge_upload_and_summary():
    wf = _workflow()
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    replay, report = wf["jobs"]["replay"], wf["jobs"]["report"]
    assert replay["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert replay["strategy"]["fail-fast"] is False
    pytest_run = [r for r in _runs(replay) if r.startswith("pytest")][0]
    assert "--replaylab suites/" in pytest_run
    assert "--replaylab-shard ${{ matrix.shard }}/4" in pytest_run
    assert "--replaylab-report reports-${{ matrix.shard }}" in pytest_run
    assert "--junitxml reports-${{ matrix.shard }}/" in pytest_run
    shard_upload = [s for s in replay["steps"] if s.get("uses", "").startswith("actions/upload-artifact")][0]
    assert shard_upload["if"] == "always()" and shard_upload["with"]["name"] == "reports-${{ matrix.shard }}"

    assert report["needs"] == "replay" and report["if"] == "always()"
    download = [s for s in report["steps"] if s.get("uses", "").startswith("actions/download-artifact")][0]
    assert download["with"]["pattern"] == "reports-*"
    merge_runs = [r for r in _runs(report) if r.startswith("replaylab report merge")]
    assert merge_runs and all("reports-*/replaylab.json --out reports/" in r for r in merge_runs)
    assert any("--check" in r for r in merge_runs)
    # a shard may exercise nothing on its own; the merged report is where nothing exercised fails (6)
    assert "--replaylab-allow-nothing-exercised" in pytest_run
    assert not any("--allow-nothing-exercised" in r for r in merge_runs)
    assert any('>> "$GITHUB_STEP_SUMMARY"' in r and "reports/replaylab.md" in r for r in _runs(report))
    upload = [s for s in report["steps"] if s.get("uses", "").startswith("actions/upload-artifact")][0]
    assert upload["with"]["path"] == "reports/" and upload["if"] == "always()"


def test_nightly_workflow_pytest_command_is_accepted(tmp_path):
    """The shard job's pytest line, as written, passes pytest's option parsing with the plugin loaded."""
    pytest_run = [r for r in _runs(_workflow()["jobs"]["replay"]) if r.startswith("pytest")][0]
    argv = shlex.split(pytest_run.replace("${{ matrix.shard }}", "2"))
    assert argv[0] == "pytest"
    (tmp_path / "suites").mkdir()
    res = subprocess.run(
        [sys.executable, "-m", *argv, "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    # 5 = no tests collected (an empty suites/); a misspelt option would be a usage error (4)
    assert res.returncode == 5, res.stdout + res.stderr


def test_nightly_workflow_merge_steps_run_as_written(tmp_path):
    """Run the merge job's shell lines in a folder laid out like the downloaded artifacts."""
    whole, _ = _write_shards(tmp_path, 4)
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    python = shlex.quote(sys.executable)
    codes = []
    for run in _runs(_workflow()["jobs"]["report"]):
        if run.startswith("python -m pip"):
            continue
        script = re.sub(r"^replaylab ", f"{python} -m replaylab.cli ", run, flags=re.M)
        codes.append(
            subprocess.run(
                ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
            ).returncode
        )
    assert codes == [0, 0, 1]  # merge, summary, gate (the synthetic run has failures)
    assert _without_timings(load_json(tmp_path / "reports" / "replaylab.json")) == _without_timings(whole)
    assert summary.read_text(encoding="utf-8").startswith("## ❌ replaylab: FAIL")


def test_dump_json_is_stable():
    whole, _ = _shards(2)
    assert dump_json(whole) == dump_json(load_json(dump_json(whole)))


def test_items_scrubbed_where_they_ran_make_the_same_report():
    """The JSON report inserts each item's report JSON made where it ran (in-process, or sent by
    an xdist worker) as is, one line per item; it equals scrubbing the whole report at once, also
    with secrets planted in items (in texts, under secret-named keys, in header maps)."""
    import orjson

    from replaylab.report.jsonio import item_from_report_json, item_json, item_kept, item_messages
    from replaylab.scrub import REDACTED, scrub_data

    whole, _ = _shards(2)
    planted = whole.items[0]
    planted.reason = f"failed with key {OPENAI}"
    planted.repeats = {"api_key": "k" * 20 + "1", "headers": {"Authorization": f"token {GITHUB}"}}
    planted.diagnostics = [f"password: '{PASSWORD}'"]
    traced = next(i for i in whole.items if i.baseline is not None)  # and a passing item with traces
    whole.items.append(
        traced.model_copy(
            deep=True, update={"id": traced.id + "-same", "first_divergence": None, "outcome": "passed", "defects": []}
        )
    )
    expected = scrub_data(whole.model_dump(mode="json"))
    assert REDACTED in orjson.dumps(expected).decode() and OPENAI not in orjson.dumps(expected).decode()

    assert orjson.loads(dump_json(whole)) == expected  # made at dump time
    ran_here = whole.model_copy(update={"items": [item_kept(i.model_copy(deep=True)) for i in whole.items]})
    assert orjson.loads(dump_json(ran_here)) == expected  # made where the items ran (a run without xdist)
    sent = [item_from_report_json(item_json(i).decode()) for i in whole.items]
    from_workers = whole.model_copy(update={"items": sent})
    written = dump_json(from_workers)
    assert orjson.loads(written) == expected  # sent by workers: scrubbed once, inserted as they came
    assert all(item._scrubbed for item in sent)
    # kept here: the light copy of each item, scrubbed (the HTML does not scrub it again) — the one
    # that held secrets holds none now
    assert all(i._scrubbed for i in ran_here.items)
    assert OPENAI not in ran_here.items[0].reason and REDACTED in ran_here.items[0].reason
    lines = written.decode().splitlines()
    assert [line.strip().rstrip(",") for line in lines if line.startswith('    {"id"')] == [
        item_json(i).decode() for i in whole.items
    ]  # one line per item, exactly what was sent
    for secret in (OPENAI, GITHUB, PASSWORD):
        assert secret not in written.decode()
    from replaylab.report import render_html

    assert render_html(from_workers) == render_html(whole)  # the HTML skips a second scrub, same page
    assert render_html(ran_here) == render_html(whole)

    # workers send each item without its heavy fields (windows, traces, summary) for the
    # controller to read, with its HTML sections rendered where it ran: the same JSON (the
    # report JSON is whole) and the same HTML
    messages = [item_messages(i) for i in whole.items]
    assert any(b'"window_before":[{' in full for full, _, _ in messages)
    assert not any(
        {"window_before", "window_after", "baseline", "compacted"} & orjson.loads(light).keys()
        for _, light, _ in messages
    )
    placed = whole.model_copy(update={"items": [item_from_report_json(*m) for m in messages]})
    assert all(i.baseline is None and not i.window_before and i._sections for i in placed.items)
    assert dump_json(placed) == written and render_html(placed) == render_html(whole)


@pytest.mark.parametrize("budget", ["roomy", "full-detail spent", "sections spent"])
def test_sections_rendered_by_workers_are_placed_as_the_budget_allows(budget, monkeypatch):
    """A worker renders an item's section at each level the run-wide budget can give it without
    knowing the others; the report places it at the item's index, or renders the item itself
    when the budget asks for less detail. Same page as rendering every item at the end, also
    with the index mark itself planted in the items' texts."""
    from replaylab.report import html
    from replaylab.report.jsonio import item_from_report_json, item_messages

    whole, _ = _shards(2)
    for item in whole.items:
        item.reason = f"{item.reason} {html.INDEX_MARK} item-{html.INDEX_MARK}-x"
        for window_item in item.window_before[:2]:
            window_item.text = f'<index> id="item-<index>-{item.id}" {window_item.text}'
    failing = [i for i in whole.items if i.outcome in ("failed", "error")]
    assert failing and len(failing) < len(whole.items)
    if budget == "full-detail spent":
        monkeypatch.setattr(html, "FULL_DETAIL_BYTES", 1)  # failing items after the first: excerpts
    elif budget == "sections spent":  # room for the first section as it is: the later ones brief
        first = len(html.item_sections(whole.items[0])["excerpt"].replace(html.INDEX_MARK, "0").encode())
        monkeypatch.setattr(html, "SECTIONS_BYTES", first + html.BRIEF_RESERVE * (len(whole.items) - 1))
    expected = html.render_html(whole)
    placed = whole.model_copy(update={"items": [item_from_report_json(*item_messages(i)) for i in whole.items]})
    assert html.render_html(placed) == expected
    assert html.INDEX_MARK not in expected and "&lt;index&gt;" in expected
    briefs = expected.count('data-detail="brief"')
    assert (0 < briefs < len(whole.items)) if budget == "sections spent" else briefs == 0
    if budget == "full-detail spent":
        assert expected.count('data-detail="full"') == 1 and len(failing) > 1


def _walked(whole: RunReport, order: list[int], counted: int | None = None) -> list:
    """`whole`'s items kept as a run without xdist keeps them (`ResultCollector.keep`), finishing
    in `order` (indexes into the report), the walk counting `counted` items (default: all)."""
    from replaylab.pytest_plugin.results import ResultCollector
    from replaylab.report.html import SectionBudget

    collector = ResultCollector(None)  # type: ignore[arg-type]
    collector.report_positions = {item.id: k for k, item in enumerate(whole.items)}
    collector.sections_budget = SectionBudget(counted or len(whole.items))
    kept: dict[int, object] = {}
    for k in order:
        kept[k] = collector.keep(whole.items[k].id, whole.items[k].model_copy(deep=True))
    return [kept[k] for k in range(len(whole.items))]


def _three_sections_budget(whole: RunReport, monkeypatch):
    """Room for the first three items' sections, a byte reserved for each later one."""
    from replaylab.report import html

    def size(k: int) -> int:  # the item's section at the level the budget tries first, at its index
        item = whole.items[k]
        level = "full" if item.outcome in html.FAILING else "excerpt"
        return len(html.item_sections(item)[level].replace(html.INDEX_MARK, str(k)).encode())

    monkeypatch.setattr(html, "BRIEF_RESERVE", 1)
    monkeypatch.setattr(html, "SECTIONS_BYTES", size(0) + size(1) + size(2) + len(whole.items) - 3)
    return size


@pytest.mark.parametrize("ending", ["every counted item ran", "the run stopped early"])
def test_a_run_without_xdist_renders_no_section_of_an_item_the_report_shows_brief(ending, monkeypatch):
    """A run without xdist walks the report's size budget as its items finish (`SectionBudget`),
    and an item the walk finds brief gets no section rendered: most items of a large run. Same
    page as rendering every item at the end. A run that stopped before all the items it counted
    ran leaves more room per item than its walk reserved: an item the walk took for brief may
    get more, rendered then from its report JSON — the same page still."""
    from replaylab.report import html

    whole, _ = _shards(2)
    count = len(whole.items)
    size = _three_sections_budget(whole, monkeypatch)
    # a walk counting more items reserves more: the first item just fits, the second at no level
    counted = count if ending == "every counted item ran" else count + size(1) + size(2) - 2
    kept = _walked(whole, list(range(count)), counted)
    expected = html.render_html(whole)
    assert html.render_html(whole.model_copy(update={"items": kept})) == expected
    shown = re.findall(r'data-item="([^"]*)" data-detail="(\w+)"', expected)
    assert [item_id for item_id, _ in shown] == [i.id for i in whole.items]
    assert [detail == "brief" for _, detail in shown] == [False, False, False] + [True] * (count - 3)
    # the first item the walk finds brief was rendered: its sections showed the walk it does not fit
    walked_whole = 4 if ending == "every counted item ran" else 2
    assert [not item._sections for item in kept] == [False] * walked_whole + [True] * (count - walked_whole)


@pytest.mark.parametrize("budget", ["roomy", "full-detail spent"])
def test_an_item_kept_at_its_turn_has_only_the_section_the_walk_takes(budget, monkeypatch):
    """`ResultCollector.keep` of an item at its turn in the walk renders only the level the budget
    gives it: a failing item's full section (or, once the full-detail budget is spent, its
    excerpt), never both. Same page as rendering every item at the end."""
    from replaylab.report import html

    whole, _ = _shards(2)
    if budget == "full-detail spent":
        monkeypatch.setattr(html, "FULL_DETAIL_BYTES", 1)  # failing items after the first: excerpts
    kept = _walked(whole, list(range(len(whole.items))))
    levels = [sorted(item._sections) for item in kept]
    failing = [k for k, item in enumerate(whole.items) if item.outcome in html.FAILING]
    assert len(failing) > 1
    for k, item_levels in enumerate(levels):
        full = k in failing and (budget == "roomy" or k == failing[0])
        assert item_levels == (["full"] if full else ["excerpt"]), (k, whole.items[k].outcome)
    assert html.render_html(whole.model_copy(update={"items": kept})) == html.render_html(whole)


def test_items_finishing_out_of_report_order_wait_for_their_turn_in_the_walk(monkeypatch):
    """`ResultCollector.keep`: an item that finishes before the items ahead of it in the report
    (scenarios run in the suite's order, listed by name) waits for them, and the walk goes on in
    the report's order; an item the walk does not expect ends it (every level rendered after)."""
    from replaylab.report import html

    whole, _ = _shards(2)
    count = len(whole.items)
    _three_sections_budget(whole, monkeypatch)
    expected = html.render_html(whole)
    swapped = _walked(whole, [1, 0, 3, 2, *range(4, count)])
    assert [not item._sections for item in swapped] == [False] * 4 + [True] * (count - 4)
    assert html.render_html(whole.model_copy(update={"items": swapped})) == expected
    # waiting past the brief point: rendered while it waited, and placed all the same
    late = _walked(whole, [*range(4, count), 0, 1, 2, 3])
    assert all(item._sections for item in late)
    assert html.render_html(whole.model_copy(update={"items": late})) == expected

    from replaylab.pytest_plugin.results import ResultCollector

    collector = ResultCollector(None)  # type: ignore[arg-type]
    collector.report_positions = {item.id: k for k, item in enumerate(whole.items)}
    collector.sections_budget = html.SectionBudget(count)
    collector.keep(whole.items[0].id, whole.items[0].model_copy(deep=True))
    collector.keep("other.yaml::r::a", whole.items[1].model_copy(deep=True))  # not counted: the walk ends
    assert collector.sections_budget is None
    assert all(collector.keep(i.id, i.model_copy(deep=True))._sections for i in whole.items[1:])


def test_load_json_rejects_non_report(tmp_path):
    path = tmp_path / "junit.json"
    path.write_text('{"testsuites": []}')
    with pytest.raises(InputError, match="schema_version"):
        load_json(path)


def _version_2(report: RunReport) -> bytes:
    """`report` as a version-2 replaylab.json: the same, with every turn number counted from 0."""
    data = json.loads(dump_json(report))
    data["schema_version"] = 2

    def down(holder: dict) -> None:
        if isinstance(holder, dict) and isinstance(holder.get("turn"), int):
            holder["turn"] -= 1

    for item in data["items"]:
        for defect in item["defects"]:
            down(defect["where"])
        down(item.get("first_divergence"))
        for label in ("baseline", "compacted"):
            for defect in (item.get(label) or {}).get("defects", []):
                down(defect["where"])
            for turn in (item.get(label) or {}).get("turns", []):
                down(turn)
                for call in turn["tool_calls"]:
                    down(call)
    return json.dumps(data).encode()


def test_a_version_2_report_is_read_with_its_turns_counted_from_1(tmp_path):
    from builders.reports import build_report
    from replaylab.defects import Code, Defect
    from replaylab.report.merge import load_report

    report = build_report()
    failed = next(i for i in report.items if i.compacted is not None)
    failed.compacted.defects = [Defect.of(Code.SIDE_EFFECT_ESCAPED, "blocked", turn=2, tool_call_id="call_b")]
    turns = [d.where.turn for i in report.items for d in i.defects if d.where.turn is not None]
    assert turns and any(i.first_divergence for i in report.items)  # the builder has turns to move
    old = tmp_path / "v2.json"
    old.write_bytes(_version_2(report))
    assert b'"turn": 0' in old.read_bytes()
    read = load_report(old)
    assert read.schema_version == SCHEMA_VERSION == 3
    assert dump_json(read) == dump_json(report)
    # written again it is a version-3 report: read back it is not renumbered a second time
    again = tmp_path / "again.json"
    again.write_bytes(dump_json(read))
    assert dump_json(load_report(again)) == dump_json(report)


def test_cli_merges_a_version_2_shard_with_a_version_3_one(tmp_path):
    from builders.reports import build_report

    report = build_report()
    half = len(report.items) // 2
    first = report.model_copy(update={"items": report.items[:half]})
    second = report.model_copy(update={"items": report.items[half:]})
    (tmp_path / "a.json").write_bytes(_version_2(first))
    (tmp_path / "b.json").write_bytes(dump_json(second))
    done = subprocess.run(
        [*CLI, "report", "merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "out" / "replaylab.json").read_text())
    assert merged["schema_version"] == 3
    expected = json.loads(dump_json(report))
    by_id = {i["id"]: i for i in expected["items"]}
    for item in merged["items"]:
        assert [d["where"] for d in item["defects"]] == [d["where"] for d in by_id[item["id"]]["defects"]]
        assert item["first_divergence"] == by_id[item["id"]]["first_divergence"]
