"""replaylab's benchmarks: `python -m bench [--quick] [--only NAME]` (see bench/run.py).

Every benchmark compares against a floor measured in the same run and prints the ratio; inputs
are generated (bench/generate.py), never read from the repo; results go to reports/bench.json.
Timed assertions never appear in tests: tests/test_bench_quick.py only checks the harness runs
and reports every benchmark.
"""
