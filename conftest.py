"""Root conftest: nothing global. Tests share fixtures through tests/conftest.py."""
