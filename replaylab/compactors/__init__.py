"""The compactor under test: which one a suite names (spec), the seed contract it speaks, running an
external one, the loopback summary endpoint of the node compactors, and re-checking whatever it did."""
