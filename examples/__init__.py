"""Tool packs for replaylab: importable modules exporting `TOOLS: list[ToolSpec]` (DESIGN §7)."""
