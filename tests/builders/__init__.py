"""Inputs several test modules share: synthetic sessions, runs, bad files and planted secrets.

Modules here hold builders and data, never tests (`from builders.transcripts import ...`; pytest
puts `tests/` on sys.path).
"""
