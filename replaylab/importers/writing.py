"""Writing an imported session: its transcript and cassette (scrubbed, private, never over an
existing file), its children beside it, and its tools' classes merged into the folder's
`tool_classes.json`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from replaylab.cassette import canonical_json, cassette_path_for, write_cassette
from replaylab.importers.common import ImportedSession, bad_input, child_file_stem, safe_name, update_tool_classes
from replaylab.safety.spawn_links import HEADER_KEY, UNLINKED_CHILDREN
from replaylab.scrub import Scrubber, default_scrubber
from replaylab.transcript.writer import TranscriptWriter


def write_session(
    session: ImportedSession, out_dir: Path | str, *, scrubber: Scrubber | None = None
) -> tuple[Path, Path]:
    """Write `<name>.jsonl` + `<name>.cassette.yaml` (never overwriting), each child as
    `<name>.sub-<child>.jsonl` (+ cassette), and merge the tool classes into `tool_classes.json`.

    Both files are scrubbed (`replaylab.scrub`, as the recorder does): source sessions carry real
    keys and tokens. The transcript's entries and each cassette body are scrubbed as data, so a
    recorded call's scrubbed arguments still equal its cassette request body and replay matches.
    The file names are scrubbed too (a session is named after its source file or id), and both
    files are private to the user (0600)."""
    scrubber = scrubber or default_scrubber()
    out_dir = Path(out_dir)
    planned = list(_planned_files(session, scrubber.text(session.name), out_dir, scrubber))
    existing = [p for p in planned if p.exists()]
    if existing:
        raise bad_input(
            existing[0],
            "already exists; replaylab never overwrites a transcript or cassette (choose an empty --out folder)",
            code="output-exists",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    transcript, cassette = _write_files(session, scrubber.text(session.name), out_dir, scrubber)
    update_tool_classes(out_dir, [{scrubber.text(t): c for t, c in m.items()} for m in _all_tool_classes(session)])
    return transcript, cassette


def _planned_files(session: ImportedSession, stem: str, out_dir: Path, scrubber: Scrubber) -> Iterable[Path]:
    transcript = out_dir / f"{stem}.jsonl"
    yield transcript
    yield cassette_path_for(transcript)
    for child in session.children:
        yield from _planned_files(child, child_file_stem(stem, scrubber.text(child.name)), out_dir, scrubber)


def _write_files(session: ImportedSession, stem: str, out_dir: Path, scrubber: Scrubber) -> tuple[Path, Path]:
    transcript = out_dir / f"{stem}.jsonl"
    TranscriptWriter.create_new(transcript, [scrubber.data(line) for line in (session.header, *session.entries)])
    cassette = write_cassette(
        cassette_path_for(transcript), [_scrub_interaction(i, scrubber) for i in session.interactions]
    )
    for child in session.children:
        _write_files(child, child_file_stem(stem, scrubber.text(child.name)), out_dir, scrubber)
    return transcript, cassette


def _scrub_interaction(interaction: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """A recorded-tool interaction with its JSON request body scrubbed as data (the same as the
    transcript's arguments), its response body as text, its URI (the tool's name) as text, the
    values of secret headers redacted."""
    request, response = dict(interaction["request"]), dict(interaction["response"])
    if isinstance(request.get("uri"), str):
        request["uri"] = scrubber.text(request["uri"])
    body = request.get("body")
    if isinstance(body, str):
        try:
            request["body"] = canonical_json(scrubber.data(orjson.loads(body)))
        except orjson.JSONDecodeError:
            request["body"] = scrubber.text(body)
    request["headers"] = scrubber.data(request.get("headers") or {})
    response["headers"] = scrubber.data(response.get("headers") or {})
    response["body"] = scrubber.data(response.get("body") or {})
    return {"request": request, "response": response}


def _all_tool_classes(session: ImportedSession) -> list[dict[str, str]]:
    maps = [session.tool_classes]
    for child in session.children:
        maps.extend(_all_tool_classes(child))
    return maps


class SessionNames:
    """The names one run writes its sessions under, each source's own.

    Sessions are named after their source file, and many sources share a file name
    (`tests/<case>/transcript.jsonl`): a session named like one an earlier source of the run
    gave is named after its own source's folder too (`<folder>-<name>`, then `-2`, `-3` …).
    Sources taken in the same order get the same names on every run, so a run again finds each
    session under the name it was written with."""

    def __init__(self) -> None:
        self._source_of: dict[str, Path] = {}

    def claim(self, session: ImportedSession, source: Path) -> ImportedSession:
        """`session` (from `source`) under a name no other source of the run has."""
        if self._source_of.setdefault(session.name, source) == source:
            return session
        folder = source.name if source.is_dir() else source.parent.name
        base = safe_name(f"{folder or 'session'}-{session.name}")
        name, n = base, 1
        while self._source_of.setdefault(name, source) != source:
            n += 1
            name = f"{base}-{n}"
        return renamed(session, name)


def renamed(session: ImportedSession, name: str) -> ImportedSession:
    """`session` under another name: its children's files are named after it, so the results
    that name a child's file and each child's `parentSession` follow."""
    old_prefix, new_prefix = child_file_stem(session.name, ""), child_file_stem(name, "")
    entries = []
    for entry in session.entries:
        link = ((entry.get("message") or {}).get("details") or {}).get("replaylab") or {}
        child = link.get("childSession") if isinstance(link, dict) else None
        if isinstance(child, str) and child.startswith(old_prefix):
            entry = orjson.loads(orjson.dumps(entry))  # a copy: the session it came from is left as it was
            entry["message"]["details"]["replaylab"]["childSession"] = new_prefix + child[len(old_prefix) :]
        entries.append(entry)
    header = session.header
    links = header.get(HEADER_KEY)
    if isinstance(links, dict) and isinstance(links.get(UNLINKED_CHILDREN), list):
        moved = [
            {**link, "childSession": new_prefix + link["childSession"][len(old_prefix) :]}
            if isinstance(link, dict) and str(link.get("childSession", "")).startswith(old_prefix)
            else link
            for link in links[UNLINKED_CHILDREN]
        ]
        header = {**header, HEADER_KEY: {**links, UNLINKED_CHILDREN: moved}}
    children = [
        replace(child, header={**child.header, "parentSession": f"{name}.jsonl"})
        if child.header.get("parentSession") == f"{session.name}.jsonl"
        else child
        for child in session.children
    ]
    return replace(session, name=name, header=header, entries=entries, children=children)
