"""The files a suite's `recordings:` glob names: `glob.glob(..., recursive=True)`'s rules, bounded.

Why not `glob.glob` itself: under `**` it follows symbolic links to folders with no memory of
where it has been, so a link back to an ancestor makes it walk the same folders again and again
until the path is too long — with two such links, exponentially many paths, which looks like a
hang. Here a `**` walk keeps the folders on its current chain by device and inode and refuses a
link that leads back into one (naming it), and every walk stops past `MAX_FOLDERS` folders or
`MAX_MATCHES` matches with a sentence instead of running on.

Matching is glob's: `*`, `?` and `[...]` within one path part, `**` as a whole part for any
number of folders, names starting with a dot only when the pattern part does; the matches are
spelled as glob spells them (the pattern's own prefix, joined with the names found).
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator

MAX_FOLDERS = 20_000
MAX_MATCHES = 10_000


class GlobProblem(Exception):
    """Why the pattern cannot be expanded (a link loop, too many folders or matches)."""


def expand(pattern: str) -> list[str]:
    """The paths `pattern` matches (unsorted, like glob). Raises `GlobProblem`."""
    if "\x00" in pattern:
        raise GlobProblem("holds a NUL character, which no path can")
    if not glob.has_magic(pattern):
        return [pattern] if os.path.lexists(pattern) else []
    parts = pattern.split(os.sep)
    first_magic = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    prefix = os.sep.join(parts[:first_magic])
    if first_magic and not prefix:  # an absolute pattern: its prefix is the root
        prefix = os.sep
    if prefix and not os.path.isdir(prefix):
        return []
    walk = _Walk()
    out: list[str] = []
    for path in walk.parts(prefix, [p for p in parts[first_magic:] if p]):
        out.append(path)
        if len(out) > MAX_MATCHES:
            raise GlobProblem(f"matches more than {MAX_MATCHES:,} paths; narrow the pattern")
    return out


class _Walk:
    def __init__(self) -> None:
        self.folders = 0

    def parts(self, prefix: str, parts: list[str]) -> Iterator[str]:
        """Paths under the folder `prefix` ('' = the working directory) matching `parts`."""
        if not parts:
            yield prefix
            return
        head, rest = parts[0], parts[1:]
        if head == "**":
            for sub in self._recursive(prefix, dirs_only=bool(rest)):
                path = _join(prefix, sub)
                if rest:
                    yield from self.parts(path, rest)
                else:
                    yield path
        elif glob.has_magic(head):
            for name in self._names(prefix, dirs_only=bool(rest)):
                if (not _hidden(name) or _hidden(head)) and fnmatch.fnmatchcase(name, head):
                    yield from self.parts(_join(prefix, name), rest)
        else:
            path = _join(prefix, head)
            if rest:
                if os.path.isdir(path):
                    yield from self.parts(path, rest)
            elif os.path.lexists(path):
                yield path

    def _names(self, folder: str, *, dirs_only: bool) -> list[str]:
        self._count()
        try:
            with os.scandir(folder or os.curdir) as entries:
                return [e.name for e in entries if not dirs_only or _is_dir(e)]
        except OSError:
            return []

    def _recursive(self, prefix: str, *, dirs_only: bool) -> Iterator[str]:
        """'' (the folder itself), then every path below it, relative to it: `**`'s matches.
        Links to folders are followed, except one that leads back into the chain being walked."""
        top = _identity(prefix or os.curdir)
        yield ""
        if top is None:
            return
        stack: list[tuple[str, frozenset[tuple[int, int]]]] = [("", frozenset({top}))]
        while stack:
            relative, chain = stack.pop()
            folder = _join(prefix, relative)
            self._count()
            try:
                with os.scandir(folder or os.curdir) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except OSError:
                continue
            below: list[tuple[str, frozenset[tuple[int, int]]]] = []
            for entry in entries:
                if _hidden(entry.name):
                    continue
                path = _join(relative, entry.name)
                if _is_dir(entry):
                    identity = _identity(entry.path)
                    if identity is None:
                        continue
                    if identity in chain:
                        raise GlobProblem(
                            f"meets a symbolic link loop at {_join(prefix, path)} (it leads back to a folder it is "
                            "in); remove the link or narrow the pattern"
                        )
                    yield path
                    below.append((path, chain | {identity}))
                elif not dirs_only:
                    yield path
            stack.extend(reversed(below))

    def _count(self) -> None:
        self.folders += 1
        if self.folders > MAX_FOLDERS:
            raise GlobProblem(f"walks more than {MAX_FOLDERS:,} folders; narrow the pattern")


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _join(prefix: str, name: str) -> str:
    if not prefix:
        return name
    if not name:
        return prefix if prefix.endswith(os.sep) else prefix + os.sep
    return os.path.join(prefix, name)
