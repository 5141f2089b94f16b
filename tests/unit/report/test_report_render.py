"""Render tests of the reports on a synthetic RunReport built from the real model objects
(`builders.reports`)."""

from __future__ import annotations

import html as htmllib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builders.reports import XSS_IMG, XSS_SCRIPT, build_items, build_report
from html_dom import Dom, el_text, inside
from replaylab.diagnostics import InputError
from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
from replaylab.report import ReportWriteError, write_reports
from replaylab.report.html import (
    EXCERPT_HEAD,
    EXCERPT_PROTECTED,
    EXCERPT_TAIL,
    TEXT_PASSING,
    VALUE_LIMIT,
    WINDOW_TEXT,
    clip,
    render_html,
)
from replaylab.report.jsonio import dump_json, load_json
from replaylab.report.markdown import render_markdown
from replaylab.results import SCHEMA_VERSION, RunReport, WindowItem
from repo_paths import TESTS

# ------------------------------------------------------------------ HTML


def test_html_has_counts_rows_and_blocking_defects_before_regressions():
    report = build_report()
    page = render_html(report)
    dom = Dom(page)

    counts = {
        k: el_text(dom.find(data_testid=f"count-{k}")[0]) for k in ("passed", "failed", "error", "skipped", "blocking")
    }
    assert counts["passed"].startswith("2") and counts["failed"].startswith("1")
    assert counts["error"].startswith("1") and counts["skipped"].startswith("1")
    # 2 unexpected blocking defects (MUTATION_DROPPED + SIDE_EFFECT_ESCAPED); the negative control's one is expected
    assert counts["blocking"].startswith("2") and "unexpected" in counts["blocking"]
    assert el_text(dom.find(data_testid="count-expected")[0]).startswith("1")  # counted apart, one number

    tables = {t: dom.find(data_testid=f"{t}-table") for t in ("blocking-defects", "other-defects", "expected-defects")}
    assert all(len(found) == 1 for found in tables.values())

    def rows_in(table: str) -> list[dict]:
        return [r for r in inside(dom, tables[table][0]) if "defect-row" in r["attrs"].get("class", "").split()]

    blocking_rows = rows_in("blocking-defects")
    assert sorted(r["attrs"]["data-code"] for r in blocking_rows) == ["MUTATION_DROPPED", "SIDE_EFFECT_ESCAPED"]
    # the negative control's expected finding is in its own collapsed section, not among the blocking rows
    expected_rows = rows_in("expected-defects")
    assert [(r["attrs"]["data-code"], r["attrs"]["data-item"]) for r in expected_rows] == [
        ("MUTATION_DROPPED", "helpdesk::epsilon::aggressive")  # the negative control's expected finding
    ]
    section = dom.find(data_testid="expected-defects")[0]
    collapsed = [d for d in inside(dom, section) if d["tag"] == "details"]
    assert len(collapsed) == 1 and "open" not in collapsed[0]["attrs"]
    other_codes = [r["attrs"]["data-code"] for r in rows_in("other-defects")]
    assert other_codes == ["BASELINE_DRIFT", "ANSWER_DIVERGED", "TOOL_SEQUENCE_DIVERGED"]  # errors, then regressions

    # blocking table is first in the page, then the regressions table
    assert page.index('id="blocking-defects"') < page.index('id="other-defects"') < page.index('id="sessions"')
    first_blocking = page.index('data-code="MUTATION_DROPPED"')
    assert first_blocking < page.index('data-code="TOOL_SEQUENCE_DIVERGED"')

    # a defect row names where and expected vs actual
    dropped = [
        r
        for r in blocking_rows
        if r["attrs"]["data-item"] == "helpdesk::beta::aggressive" and r["attrs"]["data-code"] == "MUTATION_DROPPED"
    ][0]
    assert "e5" in el_text(dropped) and "call_e5" in el_text(dropped) and "absent" in el_text(dropped)

    # one collapsible section per item, failing ones open, with the verdict for the filter
    sessions = dom.find("details", class_="item")
    assert [s["attrs"]["data-verdict"] for s in sessions] == [i.outcome for i in report.items]
    assert {s["attrs"]["data-item"]: ("open" in s["attrs"]) for s in sessions}["helpdesk::beta::aggressive"]
    assert not {s["attrs"]["data-item"]: ("open" in s["attrs"]) for s in sessions}["helpdesk::alpha::safeguard"]


def test_the_ledger_compares_the_span_before_the_cut_and_labels_later_events():
    """A passing item whose recording has writes after the compaction point: they are listed as
    after the point, not as missing after compaction; a span event the window lacks is missing."""
    from builders.reports import _ledger

    report = build_report()
    alpha = report.items[0]
    alpha.ledger_before = _ledger(["e5", "e9", "e12"])
    alpha.ledger_after = _ledger(["e5"])
    alpha.ledger_after_point = ["e9", "e12"]
    beta = next(i for i in report.items if i.id == "helpdesk::beta::aggressive")
    beta.ledger_before, beta.ledger_after_point = _ledger(["e5", "e7"]), ["e7"]
    dom = Dom(render_html(report))
    sections = {s["attrs"]["data-item"]: s for s in dom.find("details", class_="item")}
    passing = " ".join(el_text(sections[alpha.id]).split())
    assert "missing after compaction" not in passing
    (later,) = [r for r in inside(dom, sections[alpha.id]) if r["attrs"].get("data-testid") == "ledger-after-point"]
    assert " ".join(el_text(later).split()).endswith("not part of the window at the cut: e9 e12")
    failing = " ".join(el_text(sections[beta.id]).split())
    assert "missing after compaction: e5" in failing and "e5 e7" not in failing
    assert load_json(dump_json(report)).items[0].ledger_after_point == ["e9", "e12"]  # in the JSON too


def test_html_session_details_ledger_window_divergence_summary():
    page = render_html(build_report())
    dom = Dom(page)
    beta = [s for s in dom.find("details", class_="item") if s["attrs"]["data-item"] == "helpdesk::beta::aggressive"][0]
    text = el_text(beta)
    assert "missing after compaction: e5" in " ".join(text.split())
    # side by side: two columns per turn, the diverging call marked in both
    assert len(dom.find("div", class_="side-by-side")) == 1
    assert len(dom.find("div", class_="run-baseline")) == len(dom.find("div", class_="run-compacted")) == 3  # turns 1-3
    assert len(dom.find("div", class_="diverged")) == 2
    assert "blocked" in el_text(dom.find("div", class_="run-compacted")[1])
    # long text clipped with a visible note; protected entries marked
    long_entry = [w for w in build_items()[1].window_before if len(w.text) > WINDOW_TEXT][0]
    assert f"… {len(long_entry.text) - WINDOW_TEXT:,} more chars" in text
    protected = dom.find("li", class_="protected")
    assert protected and all(p["attrs"]["data-protected"] == "true" for p in protected)
    assert {p["attrs"]["data-entry-id"] for p in protected} >= {"e5"}
    # summary text and quality guard verdict
    assert "missing section: Exact identifiers" in text and "failed after 3 attempts" in " ".join(text.split())
    # passing session: window excerpt only
    alpha = [s for s in dom.find("details", class_="item") if s["attrs"]["data-item"] == "helpdesk::alpha::safeguard"][
        0
    ]
    before = [s for s in dom.find("div", class_="window-before") if s in inside(dom, alpha)][0]
    shown = [
        li["attrs"].get("data-entry-id") or el_text(li).strip() for li in dom.find("li") if li in inside(dom, before)
    ]
    # head, protected entries, tail; gaps say how many entries are left out
    assert (EXCERPT_HEAD, EXCERPT_PROTECTED, EXCERPT_TAIL) == (1, 1, 1)
    assert shown == ["e1", "… 3 entries not shown", "e5", "… 3 entries not shown", "e9"]
    # charts: one bar per compacted session, one per defect code
    assert len(dom.find("svg", id="chart-savings")) == 1 and len(dom.find("svg", id="chart-defects")) == 1
    # one suite file: bars are labelled without it (`<recording>::<scenario>`), the suite is in the note
    assert {g["attrs"]["data-label"] for g in dom.find("g", class_="chart-row")} >= {
        "alpha::safeguard",
        "MUTATION_DROPPED",
        "ANSWER_DIVERGED",
    }


def test_html_is_self_contained_and_escapes_transcript_text():
    page = render_html(build_report(payload=f"{XSS_SCRIPT} {XSS_IMG}"))
    dom = Dom(page)
    assert XSS_SCRIPT not in page and XSS_IMG not in page
    assert htmllib.escape(XSS_SCRIPT, quote=False) in page
    assert XSS_SCRIPT in dom.text and XSS_IMG in dom.text  # shown as text
    assert len(dom.find("script")) == 1 and not dom.find("img")
    assert not any(k.startswith("on") for el in dom.elements for k in el["attrs"])
    # nothing loaded from anywhere: no src/href to another document, CSP forbids network
    assert not [el for el in dom.elements if el["attrs"].get("src")]
    assert all(el["attrs"]["href"].startswith("#") for el in dom.find("a"))
    csp = dom.find("meta", http_equiv="Content-Security-Policy")[0]["attrs"]["content"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp


def test_passing_items_show_excerpts_failing_items_full_text():
    long = "y" * 3000
    items = build_items()
    items[0].window_before[0].text = long  # passing item
    page = render_html(build_report(items=items))
    assert f"… {3000 - TEXT_PASSING:,} more chars" in page


# ------------------------------------------------------------------ markdown


def test_markdown_lists_regressions_first_and_escapes():
    md = render_markdown(build_report(payload=f"{XSS_SCRIPT} | {XSS_IMG}"))
    lines = md.splitlines()
    assert (
        lines[0].startswith("## ")
        and "FAIL" in lines[0]
        and "1 failed, 1 error, 0 cannot compact, 2 unexpected blocking defects, 2 unexpected regressions" in lines[0]
    )
    sections = [line for line in lines if line.startswith("### ")]
    assert sections == [
        "### Unexpected blocking defects (2)",
        "### Regressions (2)",
        "### Errors (1)",
        "### Failed sessions (1)",
        # the skipped item, by its cause (a report without causes: by the head of its reason)
        "### Not exercised and cannot compact, by cause",
    ]
    assert "- not exercised 1: no compaction happened; knob: see each item's reason" in lines
    assert md.index("`MUTATION_DROPPED`") < md.index("`TOOL_SEQUENCE_DIVERGED`")
    assert (
        "helpdesk::beta::aggressive" in md
        and "Found as their suites expect: 1 expected finding of negative controls" in md
    )
    assert "alpha" not in md  # passing sessions are not listed
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    table_rows = [line for line in lines if line.startswith("| `")]
    assert all(line.count(" | ") == 4 for line in table_rows)  # a "|" in text cannot add a column


def test_markdown_of_a_clean_run():
    items = [i for i in build_items() if i.outcome == "passed"]
    md = render_markdown(build_report(items=items))
    assert "PASS" in md.splitlines()[0] and "No regressions." in md and "###" not in md


# ------------------------------------------------------------------ JSON


def test_json_round_trip_and_schema_version(tmp_path):
    report = build_report()
    assert load_json(dump_json(report)) == report
    path = tmp_path / "r.json"
    newer = SCHEMA_VERSION + 1
    path.write_bytes(
        dump_json(report).replace(f'"schema_version": {SCHEMA_VERSION}'.encode(), f'"schema_version": {newer}'.encode())
    )
    with pytest.raises(InputError) as exc:
        load_json(path)
    assert str(path) in str(exc.value) and f"schema_version {newer} is not supported" in str(exc.value)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"meta": {}}', "schema_version"),
        (
            b'{"schema_version": %d, "meta": {"replaylab_version": "0.1"}, "items": [{"id": 3}]}' % SCHEMA_VERSION,
            "items.0",
        ),
    ],
)
def test_load_json_errors_name_the_file(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as exc:
        load_json(path)
    assert str(path) in str(exc.value) and expected in str(exc.value)


def test_load_json_unreadable_file(tmp_path):
    with pytest.raises(InputError) as exc:
        load_json(tmp_path / "missing.json")
    assert "missing.json" in str(exc.value) and "cannot read" in str(exc.value)


# ------------------------------------------------------------------ secrets


def test_secrets_never_reach_any_report(tmp_path):
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    bearer = "Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dGVzdHNpZ25hdHVyZQ"
    akia = "AKIA" + "IOSFODNN7EXAMPLE"
    payload = f"use {key} with header Authorization: {bearer} and aws {akia}"
    report = build_report(payload=payload, secret_args={"api_key_value": key, "auth": bearer, "aws": akia})
    report.meta.argv.append(f"--token={key}")
    written = write_reports(report, tmp_path / "out")
    secrets = [key, bearer.split()[1], akia, key[8:]]
    for kind, path in written.items():
        body = path.read_text(encoding="utf-8")
        for secret in secrets:
            assert secret not in body, (kind, secret)
        assert "REDACTED" in body, kind  # markdown escapes the brackets
    # the scrubbed texts still arrived (not just dropped)
    assert "with header Authorization" in written["html"].read_text(encoding="utf-8")


def test_clip_scrubs_before_cutting():
    """A key cut by the clip limit would no longer match the scrubber: the cut happens after scrubbing."""
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    for offset in range(-41, 5):
        text = "a" * (TEXT_PASSING + offset) + " " + key + " tail"
        shown = clip(text, TEXT_PASSING)
        assert "Ab3d" not in shown.text and "sk-proj-A" not in shown.text, offset
        assert shown.more == len(text) - TEXT_PASSING


# ------------------------------------------------------------------ writing


def test_write_reports_writes_three_files(tmp_path):
    written = write_reports(build_report(), tmp_path / "a" / "b")
    assert {p.name for p in written.values()} == {"replaylab.html", "replaylab.json", "replaylab.md"}
    assert load_json(written["json"]) == build_report()
    assert not [p for p in (tmp_path / "a" / "b").iterdir() if p.name.startswith(".")]  # no temp files left


def _unwritable_dir(tmp_path: Path) -> Path:
    import os

    if os.geteuid() != 0:
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(0o555)
        return d
    # root ignores permission bits; sysfs refuses new files even for root
    d = Path("/sys/kernel")
    if not d.is_dir():
        pytest.skip("no read-only directory available to root here (/sys/kernel missing)")
    return d


def test_write_into_read_only_directory_names_it(tmp_path):
    directory = _unwritable_dir(tmp_path)
    with pytest.raises(ReportWriteError) as exc:
        write_reports(build_report(), directory)
    assert isinstance(exc.value, OSError)
    assert str(directory) in str(exc.value) and "cannot write the replaylab report" in str(exc.value)


def test_write_where_a_file_is_names_the_directory(tmp_path):
    blocker = tmp_path / "reports"
    blocker.write_text("a file, not a directory")
    with pytest.raises(ReportWriteError) as exc:
        write_reports(build_report(), blocker)
    assert str(blocker) in str(exc.value)


def test_cli_render_and_errors_without_traceback(tmp_path):
    src = tmp_path / "in"
    write_reports(build_report(), src)
    cli = [sys.executable, "-m", "replaylab.cli", "report", "render"]
    ok = subprocess.run(
        [*cli, str(src / "replaylab.json"), "--out", str(tmp_path / "out")], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "out" / "replaylab.html").is_file() and "5 items" in ok.stdout

    bad = tmp_path / "bad.json"
    bad.write_text("{")
    res = subprocess.run([*cli, str(bad), "--out", str(tmp_path / "o2")], capture_output=True, text=True)
    assert res.returncode == 2 and str(bad) in res.stderr and "Traceback" not in res.stderr

    blocker = tmp_path / "blocker"
    blocker.write_text("")
    res = subprocess.run(
        [*cli, str(src / "replaylab.json"), "--out", str(blocker / "sub")], capture_output=True, text=True
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert str(blocker / "sub") in res.stderr and "writable directory" in res.stderr


# ------------------------------------------------------------------ size at scale


def build_large_report(n: int = 1000, failing_every: int = 10) -> RunReport:
    """n sessions shaped like real ones: 40-entry windows of ~400-char excerpts, 6-turn traces."""
    base = build_items()
    items = []
    for i in range(n):
        template = base[1] if i % failing_every == 0 else base[0]
        item = template.model_copy(deep=True)
        item.id = f"suite::session-{i:04d}::{template.scenario}"
        item.window_before = [
            WindowItem(
                entry_id=f"e{k}",
                role="toolResult" if k % 3 == 2 else "assistant",
                text=f"entry {k} " + ("lorem ipsum dolor sit amet " * 15)[:400],
                tokens=100,
                protected=k % 7 == 0,
            )
            for k in range(40)
        ]
        item.window_after = item.window_before[:2] + item.window_before[-12:]
        if item.baseline:
            item.baseline.turns = item.baseline.turns * 2
            item.compacted.turns = item.compacted.turns * 2
        items.append(item)
    return build_report(items=items)


@pytest.mark.parametrize("failing_every", [10, 1], ids=["10pct-failing", "all-failing"])
def test_thousand_sessions_render_under_ten_megabytes(failing_every):
    report = build_large_report(failing_every=failing_every)
    page = render_html(report)
    size = len(page.encode("utf-8"))
    assert size < 10 * 1024 * 1024, size
    sessions = re.findall(r'<details class="item [^>]*data-codes="([^"]*)"[^>]*data-detail="(\w+)"', page)
    assert len(sessions) == 1000  # the budget lowers detail, it never drops a session
    assert [codes for codes, _ in sessions] == [
        " ".join(sorted({d.code.value for d in i.defects})) for i in report.items
    ]
    details = {detail for _, detail in sessions}
    if failing_every == 10:
        assert details == {"full", "excerpt"}  # a usual run keeps every session's windows
    else:
        assert details == {"full", "excerpt", "brief"}
        assert "the report reached its size budget" in page


# ------------------------------------------------------------------ long tool results


def test_long_tool_results_are_kept_as_scrubbed_excerpts_with_length_and_hash(tmp_path):
    """A report keeps the first REPORT_RESULT_CHARS of a long tool result (scrubbed before the cut,
    even when the cut splits a secret), its full length and the sha256 that finds it in the
    cassette; the HTML counts the characters left out from the full length, not the excerpt."""
    import hashlib

    from replaylab.results import REPORT_RESULT_CHARS

    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    long_result = "x" * (REPORT_RESULT_CHARS - 10) + " " + key + " and more " + "y" * 5000
    short_result = "a short result"
    calls = [
        ToolCallTrace(turn=1, step=1, tool_call_id="c1", tool="read_log", result=long_result),
        ToolCallTrace(turn=1, step=2, tool_call_id="c2", tool="read_log", result=short_result),
    ]
    item = next(i for i in build_items() if i.outcome == "failed")  # shown side by side
    item.baseline = RunTrace(label="baseline", turns=[TurnTrace(turn=1, tool_calls=calls)])
    item.compacted = item.baseline.model_copy(deep=True, update={"label": "compacted"})
    item.excerpt_tool_results()
    for trace in (item.baseline, item.compacted):
        long_call, short_call = trace.turns[0].tool_calls
        assert len(long_call.result) == REPORT_RESULT_CHARS and long_call.result.startswith("x" * 100)
        assert long_call.result.endswith(" [REDACTED")  # scrubbed, then cut inside the marker
        assert key[:6] not in long_call.result
        assert long_call.result_chars == len(long_result)
        assert long_call.result_sha256 == hashlib.sha256(long_result.encode()).hexdigest()
        assert (short_call.result, short_call.result_chars, short_call.result_sha256) == (short_result, None, None)
    item.excerpt_tool_results()  # a second pass leaves the excerpt as it is
    assert item.baseline.turns[0].tool_calls[0].result_chars == len(long_result)
    written = write_reports(build_report(items=[item]), tmp_path / "out")
    assert load_json(written["json"]).items[0].baseline.turns[0].tool_calls[0].result_chars == len(long_result)
    html = htmllib.unescape(written["html"].read_text(encoding="utf-8"))
    assert f"{len(long_result) - VALUE_LIMIT:,} more chars" in html


RENDER_IN_A_NEW_PROCESS = """
import os, sys
if len(sys.argv) > 2:  # this process's user id, as a test makes it look
    os.getuid = lambda: int(sys.argv[2])
sys.path.insert(0, sys.argv[1])
from builders.reports import build_report
from replaylab.report.html import render_html
sys.stdout.write(render_html(build_report()))
"""


def _render_in_process(temp: Path, uid: int | None = None) -> str:
    """The page rendered by a fresh process whose temp directory is `temp` (where Jinja keeps
    its per-user folder of compiled templates); `uid`: the user id that process believes it has."""
    import os

    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RENDER_IN_A_NEW_PROCESS,
            str(TESTS),
            *([str(uid)] if uid is not None else []),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_compiled_templates_are_kept_for_the_next_process_and_render_the_same(tmp_path):
    """The first process compiles both templates and keeps them in Jinja's 0700 per-user folder;
    the next one loads them from there (the files are not written again) and renders the same page."""
    import os
    import stat

    temp = tmp_path / "tmp"
    temp.mkdir()
    first = _render_in_process(temp)
    (folder,) = temp.glob("_jinja2-cache-*")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    kept = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert len(kept) == 2  # report.html.j2 and macros.html.j2
    assert _render_in_process(temp) == first
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == kept
    assert _normalized(first) == _normalized(render_html(build_report()))
    assert os.access(folder, os.W_OK)


def test_the_report_renders_when_compiled_templates_cannot_be_kept(tmp_path):
    """No usable cache folder (a file in its place), cache files that are not compiled templates:
    the page is rendered all the same, compiled afresh."""
    import os

    expected = _normalized(render_html(build_report()))
    name = f"_jinja2-cache-{os.getuid()}"
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / name).write_text("not a folder")
    assert _normalized(_render_in_process(blocked)) == expected
    broken = tmp_path / "broken"
    broken.mkdir()
    _render_in_process(broken)
    for cached in (broken / name).iterdir():
        cached.write_bytes(b"not a compiled template")
    assert _normalized(_render_in_process(broken)) == expected


def test_a_cache_folder_of_another_user_is_never_used(tmp_path):
    """Compiled templates are code: a cache folder someone else owns (who could have put code
    there) is refused — nothing is read from it or written to it — and the page is rendered.
    The renderer believes it is another user, so this test's own folder is someone else's to it
    (no root needed to give a folder away)."""
    import os

    expected = _normalized(render_html(build_report()))
    other = os.getuid() + 4242
    folder = tmp_path / f"_jinja2-cache-{other}"
    folder.mkdir(mode=0o700)
    planted = folder / "__jinja2_planted.cache"
    planted.write_bytes(b"planted")
    assert _normalized(_render_in_process(tmp_path, uid=other)) == expected
    assert [p.name for p in folder.iterdir()] == [planted.name]
    (tmp_path / "own").mkdir()
    assert _normalized(_render_in_process(tmp_path / "own")) == expected  # its own folder: used
    assert len(list((tmp_path / "own").glob(f"_jinja2-cache-{os.getuid()}/*.cache"))) == 2


def _normalized(page: str) -> str:
    """The page without what differs between two renderings (the time it was made)."""
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:\d\d|Z)?", "<time>", page)


# ------------------------------------------------------------------ window marks: dropped entries, the cut


def _dropped_item(outcome: str = "passed", first_kept: str | None = "e8", protected: frozenset = frozenset()):
    """A compaction that summarized e1–e7 and kept e8–e12, dropping the refund's call and result
    (e5, e6); the finding of a later compaction names e10, which the first one kept."""
    from replaylab.defects import Code, Defect
    from replaylab.results import CompactionView, ItemResult

    roles = ["user", "assistant", "toolResult"]

    def entry(n: int) -> WindowItem:
        eid = f"e{n}"
        return WindowItem(entry_id=eid, role=roles[n % 3], text=f"message {eid}", tokens=10, protected=eid in protected)

    refund = Defect.of(
        Code.MUTATION_DROPPED,
        "mutating event issue_refund (call_r): call entry e5 and result entry e6 are missing",
        entry_id="e5",
        tool_call_id="call_r",
        tool="issue_refund",
        turn=3,
        detail={"call_entry_id": "e5", "result_entry_id": "e6", "arguments": {}, "dropped": ["e5", "e6"]},
    )
    later = Defect.of(
        Code.MUTATION_DROPPED,
        "mutating event send_email (call_s): call entry e10 is missing",
        entry_id="e10",
        tool_call_id="call_s",
        tool="send_email",
        turn=5,
        detail={"call_entry_id": "e10", "result_entry_id": None, "arguments": {}, "dropped": ["e10"]},
    )
    return ItemResult(
        id="helpdesk::refund::auto",
        suite="helpdesk",
        scenario="auto",
        recording="recordings/refund.jsonl",
        outcome=outcome,
        expected_defects=["MUTATION_DROPPED"] if outcome == "passed" else [],
        defects=[refund, later],
        window_before=[entry(n) for n in range(1, 13)],
        window_after=[WindowItem(entry_id="s1", role="compactionSummary", text="summary", tokens=5)]
        + [entry(n) for n in range(8, 13)],
        compaction=CompactionView(
            mode="auto",
            success=True,
            original_tokens=120,
            compacted_tokens=55,
            token_saved=65,
            first_kept_entry_id=first_kept,
            compaction_event_id="c1",
            protected_entry_ids=sorted(protected),
            compactions=2,
        ),
    )


def _before_rows(item) -> list[dict]:
    dom = Dom(render_html(build_report(items=[item])))
    (before,) = dom.find("div", class_="window-before")
    return [li for li in dom.find("li") if li in inside(dom, before)]


def _shown(rows: list[dict]) -> list[str]:
    return [
        "CUT" if li["attrs"].get("data-testid") == "cut" else li["attrs"].get("data-entry-id") or el_text(li).strip()
        for li in rows
    ]


def test_an_excerpt_window_keeps_the_dropped_entries_and_both_sides_of_the_cut_visible():
    rows = _before_rows(_dropped_item("passed"))  # a passing session: an excerpt of head and tail
    assert _shown(rows) == [
        "e1",
        "… 3 entries not shown",
        "e5",
        "e6",
        "e7",
        "CUT",
        "e8",
        "… 3 entries not shown",
        "e12",
    ]
    dropped = {li["attrs"]["data-entry-id"]: li for li in rows if li["attrs"].get("data-dropped") == "true"}
    assert list(dropped) == ["e5", "e6"]  # e10 was kept by this compaction: a later one dropped it
    for li in dropped.values():
        assert "dropped" in li["attrs"]["class"].split()
        assert (li["attrs"]["data-dropped-tool"], li["attrs"]["data-dropped-turn"]) == ("issue_refund", "3")
        assert "dropped: issue_refund, turn 3" in el_text(li)
    (cut,) = [li for li in rows if li["attrs"].get("data-testid") == "cut"]
    assert cut["attrs"]["data-first-kept"] == "e8"
    assert " ".join(el_text(cut).split()) == "✂ cut — entries above were summarized; first kept entry e8"


def test_a_full_window_draws_the_cut_once_and_marks_no_entry_of_the_window_after():
    item = _dropped_item("failed")
    rows = _before_rows(item)
    assert _shown(rows) == [f"e{n}" for n in range(1, 8)] + ["CUT"] + [f"e{n}" for n in range(8, 13)]
    dom = Dom(render_html(build_report(items=[item])))
    (after,) = dom.find("div", class_="window-after")
    assert not [li for li in dom.find("li") if li in inside(dom, after) and li["attrs"].get("data-dropped")]
    assert not [li for li in dom.find("li") if li in inside(dom, after) and li["attrs"].get("data-testid") == "cut"]


def test_a_compaction_that_restates_draws_the_cut_at_pis_cut_and_names_each_restated_entry():
    """A safeguard compaction that keeps nothing itself: its first kept entry is its own id, so the
    cut is drawn where its restated tail starts; each restated entry of the window after says which
    recorded entry it is."""
    item = _dropped_item("failed", first_kept="c1", protected=frozenset({"e2", "e3"}))
    item.compaction.cut_entry_id = "e8"
    item.window_after = [item.window_after[0]] + [
        WindowItem(entry_id=f"r{n}", role="user", text=f"message e{n}", tokens=10, restates=f"e{n}") for n in (2, 3, 8)
    ]
    (cut,) = [li for li in _before_rows(item) if li["attrs"].get("data-testid") == "cut"]
    assert cut["attrs"]["data-first-kept"] == "e8" and "2 protected ones restated verbatim" in el_text(cut)
    dom = Dom(render_html(build_report(items=[item])))
    (after,) = dom.find("div", class_="window-after")
    shown = [" ".join(el_text(li).split()) for li in dom.find("li") if li in inside(dom, after)]
    assert [line.split(" tok")[0] for line in shown[1:]] == [f"user r{n} restates e{n} 10" for n in (2, 3, 8)]
    assert "cut_entry_id" in item.compaction.model_dump() and "restates" in item.window_after[1].model_dump()
    assert "restates" not in item.window_before[0].model_dump()  # absent, not null: older items read as before


def test_the_cut_names_the_protected_entries_above_it_and_is_absent_without_a_first_kept_entry():
    rows = _before_rows(_dropped_item("failed", protected=frozenset({"e2", "e3"})))
    (cut,) = [li for li in rows if li["attrs"].get("data-testid") == "cut"]
    assert "(2 protected ones restated verbatim after the summary)" in el_text(cut)
    rows = _before_rows(_dropped_item("failed", first_kept=None))
    assert "CUT" not in _shown(rows) and [
        li["attrs"]["data-entry-id"] for li in rows if li["attrs"].get("data-dropped")
    ] == [
        "e5",
        "e6",
    ]


def test_counts_say_items_recordings_and_scenarios():
    """65 items of 13 recordings under 5 scenarios are not "65 sessions" in any format."""
    from replaylab.report.counts import items_phrase

    items = [
        item.model_copy(update={"id": f"s.yaml::r{r}::sc{c}", "recording": f"r{r}.jsonl", "scenario": f"sc{c}"})
        for r in range(13)
        for c in range(5)
        for item in build_items()[:1]
    ]
    assert items_phrase(items) == "65 items (13 recordings × 5 scenarios)"
    assert items_phrase(items[:7]) == "7 items (2 recordings, 5 scenarios)"  # not a full product
    report = build_report(items=items)
    assert "65 items (13 recordings × 5 scenarios)" in render_html(report)
    assert "65 items (13 recordings × 5 scenarios)." in render_markdown(report)
    assert "65 sessions" not in render_html(report) + render_markdown(report)


def test_chart_labels_keep_both_ends():
    from replaylab.report.svg import LABEL_CHARS, shortened

    label = "suites/nightly-regressions.yaml::a-very-long-recording-name-of-a-customer-session::safeguard"
    short = shortened(label)
    assert len(short) == LABEL_CHARS and short.startswith("suites/nightly") and short.endswith("::safeguard")
    assert shortened("alpha::safeguard") == "alpha::safeguard"


def test_outside_a_git_checkout_the_report_says_so():
    report = build_report()
    report.meta.git_sha = None
    page, md = render_html(report), render_markdown(report)
    assert "not run in a git checkout" in page and "not run in a git checkout" in md
    assert "unknown" not in md and "git <code>unknown" not in page
    report.meta.git_sha = "0123456789abcdef0123"
    assert "git <code>0123456789ab</code>" in render_html(report) and "git 0123456789ab" in render_markdown(report)


def test_the_side_by_side_names_turns_as_the_runs_number_them():
    """The rows and the note read the traces' turn numbers (1-based) as they are, nothing added."""
    dom = Dom(render_html(build_report()))
    labels = [" ".join(el_text(d).split()) for d in dom.find("div", class_="sbs-turn")]
    assert labels == ["turn 1", "turn 2 — diverges here", "turn 3"]  # the divergence is at turn 2 of 1–4
    (note,) = dom.find("p", data_testid="sbs-turns")
    assert " ".join(el_text(note).split()) == "turns 1–3 shown of the 4 replayed (turns 1–4, counted from 1)"
    (box,) = dom.find("div", data_testid="divergence")
    assert "at turn 2, step 0" in " ".join(el_text(box).split())


def _facts(dom: Dom, testid: str) -> dict[str, str]:
    """item id → the text of its fact `testid` in the item's facts list."""
    return {
        s["attrs"]["data-item"]: el_text([el for el in inside(dom, s) if el["attrs"].get("data-testid") == testid][0])
        for s in dom.find("details", class_="item")
    }


def test_each_item_names_the_model_that_produced_its_runs():
    items = build_items()
    beta = next(i for i in items if i.id == "helpdesk::beta::aggressive")
    beta.model = "litellm/openai/qwen2.5-coder-0.5b-instruct-q4_k_m"
    report = build_report(items=items)
    shown = _facts(Dom(render_html(report)), "item-model")
    assert shown["helpdesk::beta::aggressive"].startswith("litellm/openai/qwen2.5-coder-0.5b-instruct-q4_k_m")
    assert shown["helpdesk::alpha::safeguard"].startswith("replay")
    md = render_markdown(report)
    assert "helpdesk::beta::aggressive (model litellm/openai/qwen2.5-coder-0.5b-instruct-q4\\_k\\_m)" in md


def test_each_item_names_the_compactor_its_findings_are_about():
    items = build_items()
    beta = next(i for i in items if i.id == "helpdesk::beta::aggressive")
    beta.compactor = "command:node my-compactor.mjs"
    report = build_report(items=items)
    shown = _facts(Dom(render_html(report)), "item-compactor")
    assert shown["helpdesk::beta::aggressive"] == "command:node my-compactor.mjs"
    assert shown["helpdesk::alpha::safeguard"] == "replaylab"
    md = render_markdown(report)
    assert "(compactor command:node my-compactor.mjs)" in md
    assert "(compactor replaylab)" not in md


def test_a_summary_no_summarizer_wrote_says_where_it_came_from():
    """A compaction whose span holds no real conversation writes OpenClaw's fixed fallback: the
    item says so beside the summary, and an item whose summarizer wrote it carries no such field."""
    from replaylab.compaction.params import CompactResult
    from replaylab.qa.views import compaction_view
    from replaylab.results import SUMMARY_SOURCES

    fallback = compaction_view(CompactResult(success=True, summarizer="fallback:no-real-conversation"), "safeguard")
    assert fallback.summary_source == SUMMARY_SOURCES["fallback:no-real-conversation"]
    written = compaction_view(CompactResult(success=True, summarizer="extractive"), "safeguard")
    assert written.summary_source is None and "summary_source" not in written.model_dump()
    report = build_report()
    item = next(i for i in report.items if i.compaction is not None)
    item.compaction = item.compaction.model_copy(update={"summary_source": fallback.summary_source})
    dom = Dom(render_html(report))
    (shown,) = dom.find("p", class_="summary-source")
    assert "no real conversation" in el_text(shown)
