"""The summary a compaction writes: OpenClaw's five sections from a summarizer (`Summarizer`: the
deterministic extractive one by default, an LLM through litellm when a model is configured), checked
by the quality guard and retried with its feedback, with a structured fallback when every attempt
fails, and the safeguard's sections after it (preserved turns, tool failures, file lists).
"""
