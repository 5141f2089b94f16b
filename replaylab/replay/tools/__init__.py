"""The tool side of a replay: the fail-closed executor and everything that answers instead of a tool
(recorded results, the generic recorded-tool endpoint, the isolated tool process of live read tools)."""
