"""The defect producers that judge an item; `checks.hooks` runs them in order.

Two hooks. `BEFORE_RUNS` judges the recording as it is, for every item, exercised or not (a
compaction the recording already holds lost what it lost whatever the runs do); `AFTER_RUNS`
judges an item whose first compaction succeeded, after both runs. A check is one function
`(BeforeRuns) -> list[Defect]` or `(AfterRuns) -> list[Defect]`; a new defect code is one such
function and one line in its tuple. The findings made while the runs happen (the fail-closed
executor's, the models', the re-check of each compaction as it returns) are carried into
`AfterRuns` and reported here in their place in the order.
"""
