"""Byte-identical inputs, found before anything is parsed.

Two files can be identical only if their listed sizes are equal, so only the non-empty files whose
size another file shares are read and hashed (SHA-256 of the whole file). Each group of identical
files keeps its smallest source, whatever the order or parallelism; the others become ``duplicate``
documents whose reason names that source. Zero-byte files are never candidates: each parses as
``empty``.

Pure and Ray-free: the input planner (``listing``) hashes here itself when the candidates are few
(``hash_in_driver``: 256 files on a remote filesystem, where each is a round trip; 20,000 on a
local one, about 0.4 s at 18 us a small file, against the 2-3 s a pass of Ray tasks costs to start),
and otherwise Ray read tasks return each candidate's path and raw 32-byte
digest (``blocks.InputDigests``), grouped here by ``duplicates_from_digests`` in the planner: the
driver receives only the ``{duplicate: kept}`` map.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING

from raychunk.io import InputFile, open_input

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = [
    "DRIVER_HASH_BYTES",
    "DRIVER_HASH_FILES",
    "LOCAL_HASH_FILES",
    "duplicate_reason",
    "duplicates_from_digests",
    "duplicates_of",
    "file_digest",
    "fits_driver",
    "hash_in_driver",
    "size_candidates",
]

DRIVER_HASH_FILES = 256
LOCAL_HASH_FILES = 20_000
DRIVER_HASH_BYTES = 64 * 2**20
_READ = 2**20


def size_candidates(files: Sequence[InputFile]) -> list[InputFile]:
    """The non-empty files whose size another file shares: the only ones that can be identical."""
    sizes = Counter(f.size for f in files)
    return [f for f in files if f.size and sizes[f.size] > 1]


def fits_driver(candidates: Sequence[InputFile], fs: pafs.FileSystem) -> bool:
    """Whether the planner hashes ``candidates`` itself rather than in a pass of Ray read tasks."""
    import pyarrow.fs as pafs

    most = LOCAL_HASH_FILES if isinstance(fs, pafs.LocalFileSystem) else DRIVER_HASH_FILES
    return len(candidates) <= most and sum(f.size for f in candidates) <= DRIVER_HASH_BYTES


def duplicates_of(digests: Iterable[tuple[str, Hashable]]) -> dict[str, str]:
    """``{duplicate source: kept source}`` from ``(source, digest)`` pairs; each digest keeps its
    smallest source."""
    groups: dict[Hashable, list[str]] = {}
    for source, digest in digests:
        groups.setdefault(digest, []).append(source)
    out = {}
    for sources in groups.values():
        kept = min(sources)
        out.update((s, kept) for s in sources if s != kept)
    return out


def duplicate_reason(kept: str) -> str:
    return f"byte-identical to {kept}"


def hash_in_driver(candidates: Sequence[InputFile], fs: pafs.FileSystem, scheme: str) -> dict[str, str]:
    """``{duplicate source: kept source}``; a file that cannot be read now is nobody's duplicate
    (the parse stage reports it)."""

    def digests():
        for f in candidates:
            try:
                yield scheme + f.path, file_digest(fs, f.path, f.raw).hex()
            except OSError:
                continue

    return duplicates_of(digests())


def file_digest(fs: pafs.FileSystem, path: str, raw: bytes | None = None) -> bytes:
    """SHA-256 of the file, read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open_input(fs, path, raw) as f:
        while block := f.read(_READ):
            h.update(block)
    return h.digest()


def duplicates_from_digests(paths: Sequence[str], digests: bytes, scheme: str) -> dict[str, str]:
    """``{duplicate source: kept source}`` from paths and their digests concatenated (32 bytes each,
    in the same order), grouped with numpy: only the duplicates become sources."""
    import numpy as np

    if not len(paths):
        return {}
    keys = np.frombuffer(digests, dtype="V32")
    _, group, counts = np.unique(keys, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(counts[group] > 1)
    return duplicates_of((scheme + paths[i], int(group[i])) for i in shared.tolist())
