"""Tests over every real recorded session in ../shared/data (marked realdata)."""
