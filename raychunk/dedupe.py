"""Byte-identical inputs, found before anything is parsed.

Two files can be identical only if their listed sizes are equal, so only the non-empty files whose
size another file shares are read and hashed (SHA-256 of the whole file). Each group of identical
files keeps its smallest source, whatever the order or parallelism; the others become ``duplicate``
documents whose reason names that source. Zero-byte files are never candidates: each parses as
``empty``.

Pure and Ray-free: ``pipeline.find_duplicates`` hashes here in the driver when the candidates are
few (``hash_in_driver``) and in Ray tasks otherwise (``digest_row`` + ``duplicate_rows``), so the
driver holds the listing and the ``{duplicate: kept}`` map, never every hash.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence

import pyarrow.fs as pafs

from raychunk.io import InputFile

__all__ = [
    "DRIVER_HASH_BYTES",
    "DRIVER_HASH_FILES",
    "digest_row",
    "duplicate_reason",
    "duplicate_rows",
    "duplicates_of",
    "fits_driver",
    "hash_in_driver",
    "size_candidates",
]

DRIVER_HASH_FILES = 256
DRIVER_HASH_BYTES = 64 * 2**20
_READ = 2**20


def size_candidates(files: Sequence[InputFile]) -> list[InputFile]:
    """The non-empty files whose size another file shares: the only ones that can be identical."""
    sizes = Counter(f.size for f in files)
    return [f for f in files if f.size and sizes[f.size] > 1]


def fits_driver(candidates: Sequence[InputFile]) -> bool:
    return len(candidates) <= DRIVER_HASH_FILES and sum(f.size for f in candidates) <= DRIVER_HASH_BYTES


def duplicates_of(digests: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{duplicate source: kept source}`` from ``(source, digest)`` pairs; each digest keeps its
    smallest source."""
    groups: dict[str, list[str]] = {}
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
    return duplicates_of((scheme + f.path, _file_digest(fs, f.path)) for f in candidates)


def _file_digest(fs: pafs.FileSystem, path: str) -> str:
    h = hashlib.sha256()
    with fs.open_input_stream(path) as f:
        while block := f.read(_READ):
            h.update(block)
    return h.hexdigest()


def digest_row(row: dict, *, scheme: str) -> dict:
    """``{bytes, path}`` from the reader → ``{source, digest}``."""
    return {"source": scheme + row["path"], "digest": hashlib.sha256(row["bytes"]).hexdigest()}


def duplicate_rows(group: dict) -> dict:
    """One digest's ``{source, digest}`` rows (numpy batch) → ``{source, kept}`` for its duplicates."""
    sources = sorted(str(s) for s in group["source"])
    return {"source": sources[1:], "kept": sources[:1] * (len(sources) - 1)}
