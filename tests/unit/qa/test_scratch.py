"""The pipeline's scratch folder (`replaylab.qa.scratch`): one per process, thread and parent,
empty at the start of each item and emptied at its end, whatever the item did."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from replaylab.qa.scratch import item_folder


def test_each_item_starts_empty_and_leaves_nothing(tmp_path) -> None:
    with item_folder(tmp_path) as first:
        assert first.parent == tmp_path and not any(first.iterdir())
        (first / "work.jsonl").write_bytes(b"x" * 1000)
        (first / "nested").mkdir()
        (first / "nested" / "child.jsonl").write_text("{}")
    assert first.is_dir() and not any(first.iterdir())
    with item_folder(tmp_path) as second:
        assert second == first  # the folder is kept: no directory made and removed per item
    assert [p.name for p in tmp_path.iterdir()] == [first.name]


def test_an_item_that_fails_leaves_nothing_either(tmp_path) -> None:
    with pytest.raises(RuntimeError), item_folder(tmp_path) as folder:
        (folder / "work.jsonl").write_text("{}")
        raise RuntimeError("the item broke")
    assert not any(folder.iterdir())


def test_leftovers_of_an_interrupted_item_are_cleared_before_the_next(tmp_path) -> None:
    with item_folder(tmp_path) as folder:
        pass
    (folder / "stale.jsonl").write_text("{}")  # as if a process had died between two items
    with item_folder(tmp_path) as again:
        assert again == folder and not any(again.iterdir())


def test_threads_and_parents_get_folders_of_their_own(tmp_path) -> None:
    seen: dict[str, Path] = {}

    def run(name: str) -> None:
        with item_folder(tmp_path) as folder:
            seen[name] = folder

    thread = threading.Thread(target=run, args=("thread",))
    thread.start()
    thread.join()
    run("main")
    (tmp_path / "elsewhere").mkdir()
    with item_folder(tmp_path / "elsewhere") as other:
        seen["other parent"] = other
    assert seen["thread"] != seen["main"] and seen["other parent"].parent == tmp_path / "elsewhere"


def test_a_folder_removed_meanwhile_is_made_again(tmp_path) -> None:
    with item_folder(tmp_path) as folder:
        pass
    folder.rmdir()
    with item_folder(tmp_path) as again:
        assert again.is_dir() and again != folder
