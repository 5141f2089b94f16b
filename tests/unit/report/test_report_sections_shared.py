"""An item's sections at several levels share its defect rows and their list (`html.SharedRows`):
each level is the section that level renders alone, and a row asks its differences, nearest call
and place once however often the template reads them."""

from __future__ import annotations

from builders.reports import build_items
from replaylab.defects import Code, Defect
from replaylab.report import html


def _item_with_many_defects():
    items = build_items(payload="<b>x</b>", secret_args={"password": "hunter2-secret"})
    failing = next(i for i in items if i.outcome == "failed")
    failing.defects = failing.defects + [
        Defect.of(
            Code.SIDE_EFFECT_ESCAPED,
            f"argument {n} differs",
            expected={"id": n, "api_key": "sk-" + "a" * 40},
            actual={"id": n + 1},
            detail={"nearest": {"call": {"id": n}, "method": "exact"}},
            entry_id=f"e{n}",
            turn=n,
            tool="update_ticket",
        )
        for n in range(20)
    ]
    return failing


def test_each_level_is_the_section_rendered_alone() -> None:
    item = _item_with_many_defects()
    light = html._light_copy(item)
    shared = html.item_sections(item, light)
    assert set(shared) == {"full", "excerpt"}
    for level, section in shared.items():
        assert section == html.item_section(item, light, level)  # no rows shared
    walked = html.SectionBudget(1).place_rendering(item, light)
    assert walked and all(walked[level] == shared[level] for level in walked)


def test_a_brief_section_lists_its_few_rows_after_a_full_one_shared_the_rows() -> None:
    item = _item_with_many_defects()
    light = html._light_copy(item)
    rows = html.SharedRows()
    html._item_view(html.INDEX_MARK, item, "full", light, shared=rows)
    brief = html._item_view(html.INDEX_MARK, item, "brief", light, shared=rows)
    alone = html._item_view(html.INDEX_MARK, item, "brief", light)
    assert brief.defect_items == alone.defect_items
    assert brief.defect_items.count("<li ") == html.BRIEF_MAX_DEFECTS < len(item.defects)
    row = brief.defects[-1]
    assert row.nearest is row.nearest and row.differences is row.differences  # asked once
