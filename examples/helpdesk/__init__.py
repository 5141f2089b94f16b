"""Helpdesk tool pack: a customer-support agent's tools and the loopback service behind them.

`TOOLS` (8 read, 6 write, 1 argument-dependent: `ticket_note`) for replaylab suites
(`tools: examples.helpdesk`), and `start_service()` for `replaylab record`. See README.md.
"""

from examples.helpdesk.service import Service, start_service
from examples.helpdesk.tools import TOOLS

__all__ = ["TOOLS", "Service", "start_service"]
