"""The item run: one (recording × scenario) from its plan to its verdict and evidence (`pipeline`,
its arrows in `item`, `compaction_start`, `working_copy`, `runs` and `comparison`), with what only
an item needs on the way — its budget and compaction points (`auto_budget`, `boundaries`), its
scratch folder and sources, the report's views of its engine objects, its repeats and its progress
lines."""
