"""Tool packs the tests replay: importable as `packs.<name>` (tests/ is on the path)."""
