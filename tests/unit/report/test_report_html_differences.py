"""The HTML defect rows and the item's defect list show each differing leaf (path, expected,
actual, windowed around the first difference) and the nearest recorded call as a labelled hint;
the markdown shows the first leaf."""

from __future__ import annotations

from builders.claude_like import blocked_item, call, edit_item
from builders.reports import build_report
from html_dom import Dom, el_text
from replaylab.report.html import render_html
from replaylab.report.markdown import render_markdown


def test_defect_row_and_item_list_show_the_differing_leaf_of_a_long_old_string(tmp_path):
    dom = Dom(render_html(build_report(items=[edit_item(tmp_path)])))
    [row] = dom.find("tr", data_testid="defect-row")
    leaves = [el for el in dom.find(data_testid="diff-leaf") if row in el["_stack"]]
    assert [el["attrs"]["data-path"] for el in leaves] == ["old_string"]
    text = el_text(leaves[0])
    assert "line 020: keep this" in text and "line 020: KEEP this" in text and "line 000" not in text
    [hint] = [el for el in dom.find(data_testid="nearest-hint") if row in el["_stack"]]
    assert "nearest recorded call (hint)" in el_text(hint)
    # the session's own defect list shows the leaf too
    listed = [el for el in dom.find(data_testid="diff-leaf") if any(a["tag"] == "li" for a in el["_stack"])]
    assert listed and "line 020: KEEP this" in el_text(listed[0])


def test_markdown_shows_the_first_differing_leaf(tmp_path):
    markdown = render_markdown(build_report(items=[edit_item(tmp_path)]))
    [row] = [line for line in markdown.splitlines() if "SIDE_EFFECT_ESCAPED" in line and line.startswith("|")]
    assert "KEEP this" in row and "keep this" in row


def test_a_nearest_call_that_is_another_call_is_a_labelled_hint_apart_from_expected(tmp_path):
    """`cp` where the recording ran `mkdir`: EXPECTED's leaves are against `mkdir`; `git checkout`
    shows only under the hint's label, with what differs."""
    item = blocked_item(
        tmp_path, call("x1", "Bash", {"command": "cp -r src build", "description": "Copy"}), turn=2, step=0
    )
    dom = Dom(render_html(build_report(items=[item])))
    [row] = dom.find("tr", data_testid="defect-row")
    leaves = [el for el in dom.find(data_testid="diff-leaf") if row in el["_stack"] and el["attrs"].get("data-path")]
    assert [el["attrs"]["data-path"] for el in leaves] == ["command", "description"]
    assert "mkdir -p build/assets" in el_text(leaves[0]) and "git checkout" not in el_text(leaves[0])
    [hint] = [el for el in dom.find(data_testid="nearest-hint") if row in el["_stack"]]
    assert "nearest recorded call (hint)" in el_text(hint) and "git checkout -b refactor" in el_text(hint)
    assert "method same" in el_text(hint)
