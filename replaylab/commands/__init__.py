"""Subcommands of the `replaylab` CLI, one module each."""
