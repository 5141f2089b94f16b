"""Transcripts in the pi / OpenClaw v3 JSONL format: models, loading, windows, tokens, writing."""

from replaylab.transcript.context import WindowMessage, build_window
from replaylab.transcript.load import Transcript, load_transcript, loads_transcript
from replaylab.transcript.model import dump_entry
from replaylab.transcript.tokens import estimate_context_tokens, estimate_tokens
from replaylab.transcript.writer import NotOwnedError, TranscriptWriter, file_sha256

__all__ = [
    "Transcript",
    "WindowMessage",
    "TranscriptWriter",
    "NotOwnedError",
    "build_window",
    "dump_entry",
    "estimate_context_tokens",
    "estimate_tokens",
    "file_sha256",
    "load_transcript",
    "loads_transcript",
]
