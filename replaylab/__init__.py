"""replaylab: QA replay and regression testing for LLM agent sessions.

Importing this package is cheap on purpose: it must never import litellm (seconds of import
time and network access at import, deps.md §2a), vcrpy or the HTTP clients. Those are imported
inside the functions that need them.
"""

__version__ = "0.1.0"
