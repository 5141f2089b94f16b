"""A transcript's session header, read without reading the rest of the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replaylab.input_files import open_regular

#: the first line is read up to this many bytes (a header is a few hundred)
HEADER_READ_LIMIT = 1 << 20


def read_header(path: Path) -> dict[str, Any] | None:
    """The JSON object of the file's first line when it is a `session` header, else None (also
    for a file that cannot be read: the loader reports that, with the line)."""
    try:
        with open_regular(Path(path)) as handle:
            line = handle.readline(HEADER_READ_LIMIT)
    except OSError:
        return None
    try:
        header = orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return None
    return header if isinstance(header, dict) and header.get("type") == "session" else None
