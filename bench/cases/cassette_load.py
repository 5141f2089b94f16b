"""Cassette load of 10,000 interactions vs PyYAML's C loader on the same file.

Two files of the same generated interactions (recorded-tool calls, text results of 0.1–8 KB):

* `cassette-load`: the file `write_cassette` writes (JSON in YAML flow style). Subject:
  `load_cassette` (its orjson path); floor: `yaml.load(CSafeLoader)` on the same bytes. Target ≤ 1.5×.
* `cassette-load-block`: the same data in vcrpy's own block style (what vcrpy writes when it
  records). Subject: `load_cassette` (falls back to the C loader); floor: the C loader. Target ≤ 1.5×.

Reference (`cassette-write`, no target): `write_cassette` vs `yaml.dump(CSafeDumper)` of the same
interactions (PyYAML's C dumper on the same data, in the block style).
"""

from __future__ import annotations

from typing import Any

import yaml

from bench.cases.common import Context, check, result, round_robin
from bench.generate import cassette_interactions
from replaylab.cassette import load_cassette, write_cassette

FULL, QUICK = 10_000, 500
TARGET = 1.5


def c_load(path: Any) -> Any:
    with open(path, "rb") as handle:
        return yaml.load(handle.read(), Loader=yaml.CSafeLoader)


def run(ctx: Context) -> list[dict[str, Any]]:
    count = QUICK if ctx.quick else FULL
    items = list(cassette_interactions(count, seed=3))
    flow = ctx.fresh("cassette-flow", ".yaml")
    write_cassette(flow, items)
    block = ctx.fresh("cassette-block", ".yaml")
    block.write_text(
        yaml.dump(
            {"interactions": items, "version": 1},
            Dumper=yaml.CSafeDumper,
            allow_unicode=True,
            sort_keys=False,
            width=1 << 30,
        ),
        encoding="utf-8",
    )
    assert load_cassette(flow) == items == load_cassette(block) == c_load(flow)["interactions"]
    repeats = max(2, ctx.repeats // 2) if not ctx.quick else ctx.repeats
    out = []
    for name, path, what in (
        ("cassette-load", flow, "write_cassette's JSON-flow file"),
        ("cassette-load-block", block, "vcrpy block-style file"),
    ):
        times = round_robin({"floor": lambda p=path: c_load(p), "subject": lambda p=path: load_cassette(p)}, repeats)
        ratio = _median(times["subject"]) / _median(times["floor"])
        out.append(
            result(
                name,
                f"load_cassette, {count:,} interactions, {what} ({path.stat().st_size / 1e6:.1f} MB)",
                subject=times["subject"],
                floor=times["floor"],
                floor_what="yaml.load(CSafeLoader), same file",
                target=f"≤ {TARGET}× floor",
                checks=[check("ratio", ratio, "<=", TARGET, "×")],
                details={"file_bytes": path.stat().st_size, "interactions": count},
            )
        )

    def old_write() -> None:
        yaml.dump(
            {"interactions": items, "version": 1},
            Dumper=yaml.CSafeDumper,
            allow_unicode=True,
            sort_keys=False,
            width=1 << 30,
        )

    def new_write() -> None:
        write_cassette(ctx.fresh("cassette-w", ".yaml"), items)

    times = round_robin({"floor": old_write, "subject": new_write}, repeats)
    out.append(
        result(
            "cassette-write",
            f"reference: write_cassette of {count:,} interactions vs yaml.dump(CSafeDumper)",
            subject=times["subject"],
            floor=times["floor"],
            floor_what="yaml.dump(CSafeDumper) to a string",
            target="none (reference)",
            checks=[],
            info=True,
        )
    )
    return out


def _median(samples: list[float]) -> float:
    import statistics

    return statistics.median(samples)
