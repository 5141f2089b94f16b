"""Which of a cassette's recorded-tool interactions answered calls off the leaf path.

Why: a replay follows the leaf path, but an imported cassette holds an interaction for every
answered call of the file, in file order, abandoned branches included (the recorder's hold them as
they happened). A call the path makes again after an abandoned branch made it would be served the
branch's answer, and a repeat of it the path's own: a duplicate side effect passed as recorded.
So the executor marks these interactions played before the replay starts.

The k-th interaction of a request is the k-th answered call of it in the file; where the cassette
holds another number of them (an edited cassette), which one belongs to which call is unknown and
none of them is named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from replaylab.replay.cassettes.request_keys import RequestKey
from replaylab.replay.tools.recorded_tool import recorded_tool_key


def off_path_interactions(
    index: Mapping[RequestKey, Sequence[int]],
    file_calls: Sequence[tuple[str, dict[str, Any], bool]],
    is_pack_tool: Callable[[str], bool],
) -> Iterator[int]:
    """The indices of the interactions of the calls off the path, from the cassette's request
    `index` and the file's answered calls of those requests (tool, arguments, on the path) in
    file order. A pack's tool is answered from the path's own results, never by request: it is
    left out."""
    on_path_by_key: dict[RequestKey, list[bool]] = {}
    for name, args, on_path in file_calls:
        if not is_pack_tool(name):
            on_path_by_key.setdefault(recorded_tool_key(name, dict(args)), []).append(on_path)
    for key, on_path_flags in on_path_by_key.items():
        indices = index.get(key, ())
        if all(on_path_flags) or len(indices) != len(on_path_flags):
            continue
        yield from (i for i, on_path in zip(indices, on_path_flags, strict=True) if not on_path)
