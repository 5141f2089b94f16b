"""litellm, imported only when a model call needs it, with its offline switches set first.

litellm reads these variables once, at its import: the cost map bundled with it instead of one
fetched from the network, and offline mode. They are set here, at the lazy import, and not when
replaylab or its pytest plugin is imported, so a pytest run that never calls a model keeps the
environment it was given. `setdefault`: a user's own setting wins.
"""

from __future__ import annotations

import os
from types import ModuleType


def import_litellm() -> ModuleType:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    module: ModuleType = litellm
    return module
