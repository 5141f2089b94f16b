"""Reference: `TranscriptWriter.append` on a big working copy vs a bare append + fsync.

The append-only check costs O(appended bytes), not a re-hash of the whole file per append (see
writer.py's docstring). Subject: 200 appends to a working copy of a ~25 MB transcript; floor: the
same 200 lines written with `open("ab")` + `fsync` each. No target: printed as a reference ratio.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from bench.cases.common import Context, result, round_robin
from replaylab.transcript.writer import TranscriptWriter

APPENDS = 200


def _entries() -> list[dict[str, Any]]:
    return [
        {
            "type": "custom",
            "id": f"w{i:05d}",
            "parentId": None,
            "timestamp": "2026-03-01T00:00:00.000Z",
            "customType": "bench",
            "data": {"i": i},
        }
        for i in range(APPENDS)
    ]


def run(ctx: Context) -> list[dict[str, Any]]:
    info = ctx.transcript(2, entries=1_000 if ctx.quick else 10_000)
    entries = _entries()

    def subject() -> None:
        writer = TranscriptWriter.working_copy(info.path, ctx.fresh("append-copy", ".jsonl"))
        for entry in entries:
            writer.append(entry)

    def floor() -> None:
        TranscriptWriter.working_copy(info.path, path := ctx.fresh("append-bare", ".jsonl"))
        for entry in entries:
            with open(path, "ab") as handle:
                handle.write(orjson.dumps(entry) + b"\n")
                handle.flush()
                os.fsync(handle.fileno())

    times = round_robin({"floor": floor, "subject": subject}, max(2, ctx.repeats // 2))
    return [
        result(
            "writer-append",
            f"reference: {APPENDS} TranscriptWriter.append on a {info.bytes / 1e6:.0f} MB "
            "working copy (incl. the copy)",
            subject=times["subject"],
            floor=times["floor"],
            floor_what="working copy + the same lines with open('ab') + fsync",
            target="none (reference)",
            checks=[],
            info=True,
            details={"file_bytes": info.bytes, "appends": APPENDS},
        )
    ]
