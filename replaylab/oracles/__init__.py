"""The pinned upstream agents as oracles: their own code (node, pinned by lockfiles under `node/`)
answering what the agent sees, where it cuts and what it estimates."""
