"""Every defect producer that judges an item after its runs (and the window check against the agent's
own rebuild)."""
