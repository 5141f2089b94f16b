"""The benchmark cases, in the order they run, with the benchmarks each reports. Each module has
`run(ctx) -> list[dict]` (one record per benchmark, see `common.result` / `common.pending`)."""

CASES: dict[str, tuple[str, ...]] = {
    "transcript_load": ("load-100mb", "load-100mb-eager"),
    "compact_scaling": ("compact-scaling",),
    "cassette_load": ("cassette-load", "cassette-load-block", "cassette-write"),
    "pytest_startup": ("pytest-startup",),
    "html_report": ("html-report",),
    "pipeline": ("pipeline-1000", "pytest-1000", "xdist-n2"),
    "pipeline_scaling": ("pipeline-scaling",),
    "pipeline_turns": ("pipeline-turns",),
    "text_shapes": ("pipeline-text-shapes",),
    "oracle_check": ("oracle-check",),
    "agents_cut": ("agents-cut-pi-0.73.1", "agents-cut-pi-1.6.0", "agents-cut-openclaw-2026.9.6"),
    "writer_append": ("writer-append",),
    "scrub_worst": ("scrub-worst",),
}
