"""How Claude Code reads its own session logs back: the constants of its rebuild.

Source: @anthropic-ai/claude-code 2.1.100 on npm, `cli.js` (minified; the names are its own):

* `Vt` keeps the records of `CONVERSATION_TYPES` in its message map and bridges a `progress`
  record to its own parent; `Nt` is the type test.
* `gcY` replaces a parent that is not in the file by the newest record at most
  `PARENT_FALLBACK_SECONDS` older (`UcY`, in milliseconds there).
* `tEK` makes the assistant messages no model wrote (an API error, "No response requested.")
  with the model `SYNTHETIC_MODEL` (`va`), usage of zeros and `isApiErrorMessage` on an API
  error; `ZI` and `clY` skip them when they read the context's size from usage.
"""

from __future__ import annotations

VERSION = "2.1.100"

#: the record types Claude Code keeps in its message map and links by `parentUuid`
CONVERSATION_TYPES = frozenset({"user", "assistant", "attachment", "system"})
#: a parent missing from the file is replaced by the newest record at most this much older
PARENT_FALLBACK_SECONDS = 5.0
#: the model of an assistant message Claude Code wrote itself
SYNTHETIC_MODEL = "<synthetic>"
