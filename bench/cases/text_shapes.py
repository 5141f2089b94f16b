"""The full QA pipeline on one session written in texts of different shapes, vs plain words.

Why: the pipeline's scans (identifiers, values the agent learned, secrets, numbers) look for
tokens, and a session dense with them (a log of hashes, a CSV of numbers, a list of URLs) costs
more per byte than prose. A shape that costs far more than its size says is a scan that grows with
the tokens times the text — found here, not on a user's session.

Inputs: one seeded OpenClaw-shaped session (`pipeline_scaling.write_session`, 1,600 entries; 300
with `--quick`) in plain words (the floor), and the same session once per shape with each of its
texts (message text, thinking, tool results, summaries, argument strings of 40 characters or more)
swapped for a slice of as many characters of a text of that shape: hex ids, numbers,
`host:port:line` references, URLs with query strings, file paths (POSIX and Windows), CJK text,
JSON escapes and line separators. The entries, ids, calls and recorded compactions are the same.
Suite: the scaling case's (mode `auto`, its budget, `compact_at` the plain session's mid turn),
the agent check off. CPU seconds of this process, one shape after another in each round, after
one untimed item of each.

* `pipeline-text-shapes`: the costliest shape's item / the plain session's item (info, no
  target); every shape's ratio is in the details.
"""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.cases.common import Context, result, round_robin

NAME = "pipeline-text-shapes"
TITLE = "full pipeline on one session in texts of other shapes vs in plain words"
FULL_ENTRIES, QUICK_ENTRIES = 1_600, 300
#: characters of each shape's text, of which every swapped text is a slice
BLOB_CHARS = 300_000
#: argument strings at least this long are text the generator wrote (contents, queries), shorter
#: ones are names, paths and commands, kept
MIN_ARGUMENT_TEXT = 40


def _tokens(rng: random.Random, make: Callable[[random.Random], str]) -> str:
    out: list[str] = []
    size = 0
    while size < BLOB_CHARS:
        token = make(rng)
        out.append(token)
        size += len(token) + 1
    return " ".join(out)


def _chars(rng: random.Random, alphabet: list[str]) -> str:
    return "".join(rng.choice(alphabet) for _ in range(BLOB_CHARS))


SHAPES: dict[str, Callable[[random.Random], str]] = {
    "hex-ids": lambda rng: _tokens(rng, lambda r: f"{r.getrandbits(128):032x}" if r.random() < 0.7 else "id"),
    "numbers": lambda rng: "".join(rng.choices(string.digits + " ", k=BLOB_CHARS)),
    "host-port": lambda rng: _tokens(rng, lambda r: f"host{r.randint(0, 99)}:{r.randint(1, 65535)}:{r.randint(1, 9)}"),
    "urls": lambda rng: _tokens(
        rng, lambda r: f"https://ex{r.randint(0, 9)}.com/p/{r.getrandbits(64):x}?q={r.randint(0, 9999)}&page=2#f"
    ),
    "paths": lambda rng: _tokens(
        rng,
        lambda r: (
            r.choice(["/usr/lib/x/y/z.py", "C:\\Users\\a\\b.txt", "./src/mod_1.py:12:4", "~/a/b"])
            + str(r.randint(0, 999))
        ),
    ),
    "cjk": lambda rng: "".join(
        chr(rng.randint(0x4E00, 0x9FFF)) if rng.random() < 0.9 else rng.choice(" \n，。") for _ in range(BLOB_CHARS)
    ),
    "escapes": lambda rng: _chars(rng, ["\\", '"', '\\"', "\\\\", "a", " ", "\n", "\t", "\u2028"]),
}


class _Swap:
    """Each text swapped for a slice of as many characters of `blob`, at a seeded place."""

    def __init__(self, blob: str, rng: random.Random):
        self.blob, self.rng = blob, rng

    def __call__(self, text: str) -> str:
        if len(text) >= len(self.blob):
            return (self.blob * (len(text) // len(self.blob) + 1))[: len(text)]
        start = self.rng.randrange(0, len(self.blob) - len(text) + 1)
        return self.blob[start : start + len(text)]

    def arguments(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self.arguments(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.arguments(item) for item in value]
        return self(value) if isinstance(value, str) and len(value) >= MIN_ARGUMENT_TEXT else value

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        if entry.get("type") == "compaction":
            entry["summary"] = self(entry["summary"])
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict):
            return entry
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = self(content)
        for block in content if isinstance(content, list) else ():
            for key in ("text", "thinking"):
                if isinstance(block.get(key), str):
                    block[key] = self(block[key])
            if block.get("type") == "toolCall":
                block["arguments"] = self.arguments(block.get("arguments"))
        details = message.get("details")
        if isinstance(details, dict) and isinstance(details.get("diff"), str):
            details["diff"] = self(details["diff"])
        return entry


def write_reshaped(plain: Path, folder: Path, blob: str, seed: str) -> Path:
    """`plain` with its texts swapped for slices of `blob` (`_Swap`), and its leaf cassette."""
    import orjson

    from bench.cases.pipeline_scaling import write_leaf_cassette

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / plain.name
    if path.exists():
        return path
    swap = _Swap(blob, random.Random(seed))
    lines = plain.read_bytes().splitlines()
    path.write_bytes(b"".join(orjson.dumps(swap.entry(orjson.loads(line))) + b"\n" for line in lines))
    write_leaf_cassette(path)
    return path


def _structure(recording: Path) -> str:
    """A digest of the session's leaf path without its texts: each entry's id, type, role and tool."""
    import hashlib

    from replaylab.transcript import load_transcript

    kinds = [
        (entry.id, entry.type, getattr(message, "role", None), getattr(message, "tool_name", None))
        for entry in load_transcript(recording).leaf_path()
        for message in [getattr(entry, "message", None)]
    ]
    return hashlib.sha256(repr(kinds).encode()).hexdigest()[:16]


def run(ctx: Context) -> list[dict[str, Any]]:
    from bench.cases.pipeline_scaling import mid_turn, write_session, write_suite
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite

    entries = QUICK_ENTRIES if ctx.quick else FULL_ENTRIES
    repeats = 1 if ctx.quick else ctx.repeats
    items: dict[str, Callable[[], Any]] = {}
    facts: dict[str, dict[str, Any]] = {}
    plain = write_session(ctx.workdir / f"shape-plain-{entries}", entries)
    turn = mid_turn(plain)
    for shape, make in {"plain": None, **SHAPES}.items():
        recording = (
            plain
            if make is None
            else write_reshaped(
                plain, ctx.workdir / f"shape-{shape}-{entries}", make(random.Random(shape)), f"swap-{shape}"
            )
        )
        scenario = load_suite(write_suite(recording, turn)).scenarios[0]

        def item(scenario: Any = scenario, recording: Any = recording) -> Any:
            return run_item(scenario, recording, RunOptions(verify_with_pi="off"))

        done = item()  # untimed: imports, caches
        items[shape] = item
        facts[shape] = {
            "file_bytes": recording.stat().st_size,
            "structure": _structure(recording),
            "outcome": done.outcome,
            "defects": len(done.defects),
            "compacted": done.compaction is not None,
        }
    samples = round_robin(items, repeats, warmup=False, clock=time.process_time)  # warmed up above
    median = {shape: statistics.median(values) for shape, values in samples.items()}
    ratios = {shape: median[shape] / median["plain"] for shape in SHAPES}
    worst = max(ratios, key=lambda shape: ratios[shape])
    return [
        result(
            NAME,
            TITLE,
            subject=samples[worst],
            floor=samples["plain"],
            floor_what=f"the same {entries:,}-entry session in plain words",
            target="none (reference)",
            checks=[],
            info=True,
            details={
                "entries": entries,
                "worst": worst,
                "ratios": ratios,
                "median_cpu_s": median,
                "samples_cpu_s": samples,
                "sessions": facts,
                "note": f"costliest: {worst} {ratios[worst]:.2f}×; "
                + ", ".join(f"{shape} {ratio:.2f}×" for shape, ratio in ratios.items()),
            },
        )
    ]
