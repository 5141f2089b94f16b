"""Replay safety: which tool calls mutate the outside world and why (classify, on OpenClaw's rules
in openclaw_rules and shell, a suite's overrides) and the ordered ledger of those events per
session (ledger). Compaction checks, replay and reports all read the ledger."""

from replaylab.safety.classify import SAFE_CLASSES, Classification, ToolClassifier, is_mutating_class
from replaylab.safety.ledger import (
    Ledger,
    build_ledger,
    folder_resolver,
    hash_arguments,
    hash_result_text,
    ledger_for_window,
    sibling_resolver,
)

__all__ = [
    "SAFE_CLASSES",
    "Classification",
    "Ledger",
    "ToolClassifier",
    "build_ledger",
    "hash_arguments",
    "hash_result_text",
    "is_mutating_class",
    "ledger_for_window",
    "folder_resolver",
    "sibling_resolver",
]
