"""Upstream agents as data: the constants and rules of each OpenClaw / pi release replaylab follows,
one module per release with its source named, and the agent profiles built from them."""
