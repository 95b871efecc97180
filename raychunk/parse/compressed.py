"""One file compressed whole (gzip, bzip2, xz, zstd, lz4): what its bytes announce, and its content,
decompressed no further than a limit, so a small bomb never costs more memory than the limit.

>>> import gzip
>>> decompress(gzip.compress(b"# Title"), "gzip", limit=100)
b'# Title'
>>> inner_name("notes/readme.md.gz")
'notes/readme.md'
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from pathlib import PurePosixPath

__all__ = [
    "BOMB_FLOOR_BYTES",
    "SUFFIXES",
    "CorruptData",
    "TooLarge",
    "compression_of",
    "decompress",
    "inner_name",
]

_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x04\x22\x4d\x18", "lz4"),
)
SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".lz4": "lz4"}
_PIECE = 1 << 20
# What a compressed file or zip package may always unpack to; past it, at most ParseOptions.max_unzip_ratio
# times its own size (and never past max_unzipped_mb).
BOMB_FLOOR_BYTES = 100 * 1024 * 1024


class TooLarge(ValueError):
    """The content would be larger than the limit."""


class CorruptData(ValueError):
    """The bytes are not a whole stream of the compression they announce."""


def compression_of(data: bytes) -> str | None:
    """The compression the bytes' magic number announces, or None."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            if kind == "bzip2" and not (len(data) > 3 and data[3:4].isdigit() and data[3:4] != b"0"):
                return None  # "BZh" then a block size 1-9; text can start with "BZh"
            return kind
    return None


def inner_name(name: str) -> str:
    """``name`` without its compression suffix (``a.md.gz`` -> ``a.md``, and the gzipped SVG
    ``a.svgz`` -> ``a.svg``); unchanged without one."""
    p = PurePosixPath(name)
    if p.suffix.lower() == ".svgz":
        return name[:-1]
    return name[: -len(p.suffix)] if p.suffix.lower() in SUFFIXES else name


def decompress(data: bytes, kind: str, limit: int) -> bytes:
    """The content of ``data`` compressed by ``kind``: every member or frame, one after another.
    Raises ``TooLarge`` as soon as it would pass ``limit`` bytes, ``CorruptData`` for bytes that
    are cut short or damaged."""
    try:
        if kind == "gzip":
            return _zlib(data, limit)
        if kind in ("bzip2", "xz"):
            return _bz2_lzma(data, limit, bz2.BZ2Decompressor if kind == "bzip2" else lzma.LZMADecompressor)
        if kind in ("zstd", "lz4"):
            return _arrow(data, limit, kind)
    except (zlib.error, OSError, EOFError, lzma.LZMAError) as e:
        raise CorruptData(str(e) or type(e).__name__) from e
    raise ValueError(f"unknown compression {kind!r}")


def _zlib(data: bytes, limit: int) -> bytes:
    out = bytearray()
    rest = data
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while not d.eof:
            piece = d.decompress(pending, min(_PIECE, limit + 1 - len(out)))
            out += piece
            if len(out) > limit:
                raise TooLarge
            pending = d.unconsumed_tail
            if not piece and not pending and not d.eof:
                raise CorruptData("the data ends before its gzip stream does (cut short)")
        rest = d.unused_data
        if not rest.startswith(
            b"\x1f\x8b"
        ):  # padding or trailing bytes after the last member: gzip(1) ignores them
            break
    return bytes(out)


def _bz2_lzma(data: bytes, limit: int, make) -> bytes:
    out = bytearray()
    rest = data
    while rest:
        d = make()
        piece = d.decompress(rest, min(_PIECE, limit + 1 - len(out)))
        while True:
            out += piece
            if len(out) > limit:
                raise TooLarge
            if d.eof:
                break
            if d.needs_input:
                raise CorruptData("the data ends before its stream does (cut short)")
            piece = d.decompress(b"", min(_PIECE, limit + 1 - len(out)))
        rest = d.unused_data
        if not rest.strip(b"\0"):  # xz's stream padding
            break
    return bytes(out)


def _arrow(data: bytes, limit: int, kind: str) -> bytes:
    import pyarrow as pa

    out = bytearray()
    stream = pa.CompressedInputStream(pa.BufferReader(data), kind)
    while piece := stream.read(min(_PIECE, limit + 1 - len(out))):
        out += piece
        if len(out) > limit:
            raise TooLarge
    return bytes(out)
