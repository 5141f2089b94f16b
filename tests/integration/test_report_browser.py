"""The HTML report in a real browser: headless Chromium renders it, runs its script, and we read the DOM.

`--dump-dom` prints the DOM after the page's scripts ran, so these checks see what a reader sees:
the defect rows, the side-by-side view, both SVG charts, the filter working (preset from the URL),
and hostile transcript text present as text with no element made from it. Chromium missing:
skipped with the reason, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from builders.reports import XSS_IMG, XSS_SCRIPT, build_items, build_report
from builders.transcripts import Session
from html_dom import Dom, el_text, inside
from replaylab.importers import import_sessions, write_session
from replaylab.report import write_reports
from replaylab.results import CompactionView, LostValue
from repo_paths import REPO_ROOT

pytestmark = pytest.mark.browser

REPO = REPO_ROOT
CHROMIUM_TIMEOUT_S = 180  # a guard against a hung browser, not an assertion


def _chromium() -> str:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    message = "chromium not found (/usr/bin/chromium or on PATH): the browser test needs headless Chromium"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " — never skipped under CI=true")
    pytest.skip(message)


def _run_chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)


def _dump_dom(tmp: Path, url: str) -> Dom:
    res = _run_chromium(tmp / f"profile-{abs(hash(url))}", "--dump-dom", url)
    assert res.returncode == 0 and "<html" in res.stdout, res.stderr[-2000:]
    return Dom(res.stdout)


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser-report")
    return write_reports(build_report(payload=f"{XSS_SCRIPT} {XSS_IMG}"), out)["html"]


@pytest.fixture(scope="module")
def dom(hostile_report, tmp_path_factory) -> Dom:
    return _dump_dom(tmp_path_factory.mktemp("chromium"), hostile_report.as_uri())


def test_script_ran_and_filter_bar_is_shown(dom):
    body = dom.find("body")[0]
    assert body["attrs"]["data-js"] == "ready"  # the inline script ran under the page's CSP
    assert "hidden" not in dom.find("nav", id="filters")[0]["attrs"]
    assert el_text(dom.find("span", id="filter-status")[0]) == "5 of 5 items shown"


def test_defect_rows_blocking_first(dom):
    rows = dom.find("tr", class_="defect-row")
    assert len(rows) == 6  # every defect of the run (4 + 1 error + 1 expected by the negative control)
    severities = [r["attrs"]["data-severity"] for r in rows]
    # unexpected blocking, then errors and regressions; the expected finding last, in its own section
    assert severities == ["blocking", "blocking", "error", "regression", "regression", "blocking"]
    assert {r["attrs"]["data-code"] for r in rows[:2]} == {"MUTATION_DROPPED", "SIDE_EFFECT_ESCAPED"}
    assert "expected" in rows[-1]["attrs"]["class"].split()
    table = dom.find("table", id="blocking-defects-table")[0]
    assert "T-1001" in el_text(table) and "call_e5" in el_text(table)  # expected vs actual and where


def test_side_by_side_and_charts(dom):
    sbs = dom.find("div", class_="side-by-side")
    assert len(sbs) == 1
    baseline, compacted = dom.find("div", class_="run-baseline"), dom.find("div", class_="run-compacted")
    assert len(baseline) == len(compacted) == 3
    assert "Closed T-1001." in el_text(baseline[1]) and "Which ticket?" in el_text(compacted[1])
    assert "blocked" in el_text(compacted[1])
    savings, defects = dom.find("svg", id="chart-savings"), dom.find("svg", id="chart-defects")
    assert len(savings) == len(defects) == 1
    bars = [g["attrs"]["data-label"] for g in dom.find("g", class_="chart-row")]
    assert bars.count("alpha::safeguard") == 1 and "MUTATION_DROPPED" in bars
    assert len(dom.find("rect")) == len(bars)


def test_hostile_transcript_text_is_text(dom):
    text = dom.text
    assert XSS_SCRIPT in text and XSS_IMG in text
    scripts = dom.find("script")
    assert len(scripts) == 1 and "alert" not in el_text(scripts[0])  # only the report's own filter script
    assert not dom.find("img")
    assert not [el for el in dom.elements for k in el["attrs"] if k.startswith("on")]


def test_filter_from_url(hostile_report, tmp_path):
    dom = _dump_dom(tmp_path, hostile_report.as_uri() + "?verdict=failed")
    items = dom.find("details", class_="item")
    shown = [i["attrs"]["data-item"] for i in items if "hidden" not in i["attrs"]]
    assert shown == ["helpdesk::beta::aggressive"]
    rows = dom.find("tr", class_="defect-row")
    assert {r["attrs"]["data-verdict"] for r in rows if "hidden" not in r["attrs"]} == {"failed"}
    dom = _dump_dom(tmp_path, hostile_report.as_uri() + "?code=BASELINE_DRIFT")
    shown = [i["attrs"]["data-item"] for i in dom.find("details", class_="item") if "hidden" not in i["attrs"]]
    assert shown == ["helpdesk::gamma::safeguard"]


def test_expected_findings_are_collapsed_and_counted_apart(dom):
    """A negative control's expected finding: one number in its count and its section heading, the
    section collapsed (its rows not rendered visible), and no bar in the defect chart."""
    (count,) = dom.find(data_testid="count-expected")
    (section,) = dom.find("section", id="expected-defects")
    assert el_text(count).startswith("1") and "Expected findings of negative controls (1)" in el_text(section)
    (details,) = [d for d in dom.find("details") if d in inside(dom, section)]
    assert "open" not in details["attrs"]
    assert el_text(dom.find(data_testid="count-blocking")[0]).startswith("2")
    chart = dom.find("svg", id="chart-defects")[0]
    bars = {g["attrs"]["data-label"]: g["attrs"]["data-value"] for g in inside(dom, chart) if g["tag"] == "g"}
    assert bars["MUTATION_DROPPED"] == "1"  # the unexpected one only
    assert "not counting 1 expected by negative controls" in el_text(chart)


def test_headings_count_what_the_filter_shows(hostile_report, tmp_path):
    dom = _dump_dom(tmp_path, hostile_report.as_uri() + "?code=MUTATION_DROPPED")
    counts = {el["attrs"]["data-scope"]: el_text(el) for el in dom.find("span", class_="count-of")}
    assert counts == {
        "blocking-defects": "1 of 2",
        "other-defects": "0 of 3",
        "expected-defects": "1 of 1",
        "sessions": "2 of 5",
    }
    plain = _dump_dom(tmp_path, hostile_report.as_uri())
    assert {el["attrs"]["data-scope"]: el_text(el) for el in plain.find("span", class_="count-of")} == {
        "blocking-defects": "2",
        "other-defects": "3",
        "expected-defects": "1",
        "sessions": "5",
    }


def test_a_baseline_that_compared_nothing_is_a_warning_not_a_regression(tmp_path):
    """The warning is its own alert above the regressions, which count only regressions."""
    warning = (
        "baseline warning: 12 of 13 blessed items are not in this run (1 compared; 4 items of this run are "
        "not in the baseline): a renamed suite, recording or scenario"
    )
    regression = "helpdesk::alpha::safeguard: new defect codes since the baseline: MUTATION_DROPPED"
    report = build_report()
    report.regressions_vs_baseline = [warning, regression]
    html = write_reports(report, tmp_path / "out")["html"]
    dom = _dump_dom(tmp_path, html.as_uri())
    (shown,) = dom.find(data_testid="baseline-warning")
    assert shown["attrs"]["role"] == "alert" and warning in el_text(shown)
    (section,) = dom.find("section", id="baseline-regressions")
    assert "Regressions against the blessed baseline (1)" in el_text(section)
    assert regression in el_text(section) and warning not in el_text(section)


def _screenshot_report():
    """The synthetic run plus a few more passing sessions, so the savings chart has several bars."""
    items = build_items()
    beta = [i for i in items if i.id == "helpdesk::beta::aggressive"][0]
    tickets = [
        {"id": f"T-{1000 + k}", "status": "open" if k % 3 else "pending", "subject": f"printer {k} offline"}
        for k in range(60)
    ]
    beta.window_before[1].text = f"list_tickets -> {json.dumps(tickets)}"
    for n, saved in enumerate([1800, 3100, 950, 2600, 1400], 1):
        extra = items[0].model_copy(deep=True)
        extra.id = f"helpdesk::session-{n:02d}::safeguard"
        extra.compaction = CompactionView(
            mode="safeguard", success=True, original_tokens=4200, compacted_tokens=4200 - saved, token_saved=saved
        )
        items.append(extra)
    return build_report(items=items)


def test_screenshot(tmp_path):
    html = write_reports(_screenshot_report(), tmp_path / "report")["html"]
    png = tmp_path / "report.png"
    res = _run_chromium(
        tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,2000", "--hide-scrollbars", html.as_uri()
    )
    assert res.returncode == 0, res.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 2000)
    assert len(data) > 50_000, len(data)  # a blank page compresses to a few KB
    if os.environ.get("REPLAYLAB_SAVE_SCREENSHOT") == "1":
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copyfile(png, REPO / "docs" / "report-screenshot.png")


def test_the_lost_value_legend_is_shown_with_its_rows(tmp_path):
    """A failing session's legend of lost values, after the page ran: the table in the session's
    open section, nothing hiding it, one row per marker with its value, entries, turns and compaction."""
    items = build_items()
    beta = next(i for i in items if i.id == "helpdesk::beta::aggressive")
    beta.lost_values = [
        LostValue(
            marker="⟨lost:1⟩",
            value="T-1001",
            seen_entry_id="e3",
            seen_turn=1,
            lost_entry_id="e7",
            lost_turn=2,
            compaction=1,
            compaction_entry_id="c1",
            summary_lacks=True,
        ),
        LostValue(
            marker="⟨lost:2⟩",
            value="RF-7001",
            seen_entry_id="e8",
            seen_turn=2,
            lost_turn=2,
            lost_in="text",
            never_received=True,
        ),
    ]
    html = write_reports(build_report(items=items), tmp_path / "out")["html"]
    dom = _dump_dom(tmp_path, html.as_uri())
    (legend,) = dom.find("table", data_testid="lost-legend")
    (section,) = [el for el in legend["_stack"] if el["tag"] == "details"]
    assert section["attrs"]["data-item"] == beta.id and "open" in section["attrs"]
    assert not [el for el in (*legend["_stack"], legend) if "hidden" in el["attrs"]]
    rows = [el for el in inside(dom, legend) if el["attrs"].get("data-testid") == "lost-value"]
    assert [r["attrs"]["data-marker"] for r in rows] == ["⟨lost:1⟩", "⟨lost:2⟩"]
    cells = [[el_text(td) for td in inside(dom, r) if td["tag"] == "td"] for r in rows]
    assert cells == [
        [
            "⟨lost:1⟩",
            "T-1001",
            "entry e3, turn 1",
            "turn 2, entry e7 (tool call)",
            "compaction c1 · not in its summary",
        ],
        [
            "⟨lost:2⟩",
            "RF-7001",
            "entry e8, turn 2",
            "turn 2 (text)",
            "no compaction: the recording got it after the compaction, the replay never received it",
        ],
    ]


def test_the_differing_leaf_of_a_long_edit_is_visible_in_its_defect_row(tmp_path):
    """A Claude Code-like Edit whose `old_string` differs deep inside: after the page's script ran,
    its defect row shows the leaf's path and the window around the difference on both sides, and
    nothing hides the row (no `hidden`, not inside a closed `<details>`)."""
    from builders.claude_like import edit_item

    html = write_reports(build_report(items=[edit_item(tmp_path)]), tmp_path / "report")["html"]
    dom = _dump_dom(tmp_path, html.as_uri())
    assert dom.find("body", data_js="ready")
    [row] = dom.find("tr", data_testid="defect-row")
    [leaf] = [el for el in dom.find(data_testid="diff-leaf") if row in el["_stack"]]
    assert leaf["attrs"]["data-path"] == "old_string"
    assert "line 020: keep this" in el_text(leaf) and "line 020: KEEP this" in el_text(leaf)
    for el in [*leaf["_stack"], leaf]:
        assert "hidden" not in el["attrs"], el["tag"]
        assert el["tag"] != "details" or "open" in el["attrs"]


REFUND_ARGS = {"order_id": "ORD-5521", "amount": 49.0, "reason": "arrived broken"}
REFUND_SUITE = """\
name: dropped-refund
recordings: recordings/*.jsonl
compaction: {mode: aggressive, contextTokens: 1600, reserveTokensFloor: 200, keepRecentTokens: 150}
compact_at: turn:6
match: {tools: strict, args: exact, answer: normalized}
"""


def refund_session() -> Session:
    """A refund in turn 2 whose id (RF-3301) only its result holds; turn 6 looks the refund up."""
    s = Session("refund-demo")
    s.user("Hi, my blender arrived broken. I'm dana@example.com.")
    orders = {"customer_id": "CUST-8812", "orders": [{"order_id": "ORD-5521", "item": "blender", "total": 49.0}]}
    s.tool_turn("find_orders", {"email": "dana@example.com"}, json.dumps(orders))
    s.assistant("I found your blender order. Shall I refund it?")
    s.user("Yes, please refund it in full.")
    s.tool_turn("issue_refund", REFUND_ARGS, json.dumps({"refund_id": "RF-3301", "status": "issued"}))
    s.assistant("Done: the full refund is on its way to your card.")
    for k in range(3):
        s.user(f"Question {k + 1}: what does your warranty say about accessories?")
        s.tool_turn("read_policy", {"topic": f"warranty-{k}"}, "Policy. " + "Accessories are covered for a year. " * 40)
        s.assistant("Accessories are covered for one year.")
    s.user("Can you check the refund went through?")
    s.tool_turn("get_refund", {"refund_id": "RF-3301"}, json.dumps({"refund_id": "RF-3301", "status": "settled"}))
    s.assistant("Yes: refund RF-3301 has settled.")
    return s


@pytest.fixture(scope="module")
def dropped_refund(tmp_path_factory) -> tuple[Path, str]:
    """A real run of the pytest plugin in which aggressive compaction before turn 6 drops the
    refund of turn 2 and, with its result, the refund id turn 6 needs: (HTML report, stdout)."""
    root = tmp_path_factory.mktemp("dropped-refund")
    source = refund_session().write(root / "refund-demo.jsonl")
    for session in import_sessions("pi", source):
        write_session(session, root / "recordings")
    classes = {"find_orders": "read", "read_policy": "read", "get_refund": "read", "issue_refund": "mutating"}
    (root / "recordings" / "tool_classes.json").write_text(json.dumps(classes), encoding="utf-8")
    (root / "suite.yaml").write_text(REFUND_SUITE, encoding="utf-8")
    done = run_pytest(root, "--replaylab", "suite.yaml", "--replaylab-report=reports")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    return root / "reports" / "replaylab.html", done.stdout


def test_the_dropped_refund_reads_end_to_end_in_the_terminal_and_the_markdown(dropped_refund):
    html, stdout = dropped_refund
    # the story as the failure section prints it (under CI=true pytest repeats it whole in its summary)
    story = stdout[stdout.index("FAILED: MUTATION_DROPPED") : stdout.index("short test summary info")]
    # one finding for the refund: its entries, turn (counted from 1), tool and arguments
    assert story.count("[blocking] MUTATION_DROPPED") == 1
    assert "[blocking] MUTATION_DROPPED (entry_id=e0006, turn=2, tool_call_id=call_0002, tool=issue_refund)" in story
    assert '"order_id":"ORD-5521"' in story and "call entry e0006 and result entry e0007" in story
    # the later look-up shows the differing leaf, and the legend says what the marker stands for
    assert 'differs at refund_id: expected "RF-3301" / actual "⟨lost:1⟩"' in story
    assert '⟨lost:1⟩ = "RF-3301": last seen in entry e0007 (turn 2)' in story
    markdown = (html.parent / "replaylab.md").read_text()
    assert "### Unexpected blocking defects (1)" in markdown
    assert "| entry e0006, turn 2, call call\\_0002 |" in markdown
    assert '⟨lost:1⟩ = "RF-3301": last seen in entry e0007 (turn 2)' in markdown


def test_the_dropped_refund_reads_end_to_end_in_the_browser(dropped_refund, tmp_path):
    html, _ = dropped_refund
    dom = _dump_dom(tmp_path, html.as_uri())
    # the row: code, where (entry, turn, call, tool) and the refund's arguments
    (table,) = dom.find("table", id="blocking-defects-table")
    (row,) = [r for r in inside(dom, table) if "defect-row" in r["attrs"].get("class", "").split()]
    text = " ".join(el_text(row).split())
    assert row["attrs"]["data-code"] == "MUTATION_DROPPED"
    for part in ("e0006", "turn 2", "call_0002", "issue_refund", '"order_id":"ORD-5521"', '"amount":49.0'):
        assert part in text, part
    # the window before marks the refund's call and result as dropped, and draws the cut
    (before,) = dom.find("div", data_testid="window-before")
    rows = [el for el in inside(dom, before) if el["tag"] == "li"]
    dropped = [r for r in rows if r["attrs"].get("data-dropped") == "true"]
    assert [r["attrs"]["data-entry-id"] for r in dropped] == ["e0006", "e0007"]
    for entry in dropped:
        assert (entry["attrs"]["data-dropped-tool"], entry["attrs"]["data-dropped-turn"]) == ("issue_refund", "2")
        assert "dropped: issue_refund, turn 2" in el_text(entry)
    (cut,) = [r for r in rows if r["attrs"].get("data-testid") == "cut"]
    assert rows[rows.index(cut) + 1]["attrs"]["data-entry-id"] == cut["attrs"]["data-first-kept"] == "e0020"
    assert "✂ cut — entries above were summarized; first kept entry e0020" in " ".join(el_text(cut).split())
    (after,) = dom.find("div", data_testid="window-after")
    assert not [el for el in inside(dom, after) if el["attrs"].get("data-dropped")]
    # the legend of the value the compaction lost
    (legend,) = dom.find("table", data_testid="lost-legend")
    (lost,) = [r for r in inside(dom, legend) if r["attrs"].get("data-testid") == "lost-value"]
    cells = [" ".join(el_text(c).split()) for c in inside(dom, lost) if c["tag"] == "td"]
    assert cells[:3] == ["⟨lost:1⟩", "RF-3301", "entry e0007, turn 2"]
    assert "turn 6" in cells[3] and "not in its summary" in cells[4]
    # nothing of it is hidden once the page's script ran
    (section,) = dom.find("details", class_="item")
    assert "open" in section["attrs"] and all(el in inside(dom, section) for el in (cut, legend, *dropped))
    assert not [el for el in (row, cut, legend, *dropped) if "hidden" in el["attrs"]]


def test_screenshot_of_the_dropped_refund(dropped_refund, tmp_path):
    html, _ = dropped_refund
    png = tmp_path / "dropped.png"
    res = _run_chromium(
        tmp_path / "profile",
        f"--screenshot={png}",
        "--window-size=1280,2400",
        "--hide-scrollbars",
        html.as_uri(),
    )
    assert res.returncode == 0, res.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000, len(data)
    if os.environ.get("REPLAYLAB_SAVE_SCREENSHOT") == "1":
        shutil.copyfile(png, REPO / "docs" / "report-dropped-refund.png")
