"""The HTML defect rows and the item's defect list show each differing leaf (path, expected,
actual, windowed around the first difference) and the nearest recorded call as a labelled hint;
the markdown shows the first leaf."""

from __future__ import annotations

from builders.claude_like import edit_item
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
