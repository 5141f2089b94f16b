"""The benchmark cases, in the order they run. Each module has `run(ctx) -> list[dict]` (one
record per benchmark, see `common.result` / `common.pending`)."""

CASES = ("transcript_load", "compact_scaling", "cassette_load", "pytest_startup", "html_report", "pipeline",
         "writer_append")
