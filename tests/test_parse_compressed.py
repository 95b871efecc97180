"""A file compressed whole (gzip, bzip2, xz, zstd, lz4) is parsed as its content, named by its name
without the compression suffix; it is read as stored and decompressed by the parse, never past the
limits of a zip package, so a small bomb is a ``failed`` row and costs no more memory than the limit."""

import bz2
import gzip
import lzma
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from raychunk.blocks import _read_group
from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.compressed import CorruptData, TooLarge, compression_of, decompress, inner_name
from raychunk.parse.detect import format_from_name

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
MARKDOWN = (
    b"# Runbook\n\n## Restarts\n\n1. Drain the node.\n2. Restart its agent.\n\n"
    b"| Step | Time |\n|---|---|\n| drain | 5 min |\n| restart | 1 min |\n"
)


def _arrow(codec: str, data: bytes) -> bytes:
    out = pa.BufferOutputStream()
    with pa.CompressedOutputStream(out, codec) as s:
        s.write(data)
    return out.getvalue().to_pybytes()


COMPRESS = {
    "gzip": lambda d: gzip.compress(d, mtime=0),
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda d: _arrow("zstd", d),
    "lz4": lambda d: _arrow("lz4", d),
}
SUFFIX = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "zstd": ".zst", "lz4": ".lz4"}


def blocks(parsed):
    return [(b.kind, b.text, b.heading_path) for b in parsed.blocks]


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_compressed_file_parses_as_its_content(kind):
    plain = parse_document(MARKDOWN, "runbook.md")
    data = COMPRESS[kind](MARKDOWN)
    assert compression_of(data) == kind
    parsed = parse_document(data, "docs/runbook.md" + SUFFIX[kind])
    d = parsed.document
    assert (d.status, d.format, d.reason, d.bytes) == ("ok", "markdown", "", len(data))
    assert blocks(parsed) == blocks(plain) and parsed.text == plain.text
    assert {"table", "list_item"} <= {b.kind for b in parsed.blocks}
    assert [b.marker for b in parsed.blocks if b.kind == "list_item"] == ["1.", "2."]
    assert d.doc_id != plain.document.doc_id  # the file's bytes, as stored, name the document


def test_the_name_without_its_suffix_gives_the_format_and_the_bytes_decide_without_one():
    assert format_from_name("a/b.md.gz") == "markdown" and format_from_name("x.HTML.ZST") == "html"
    assert (
        format_from_name("a.gz") is None
        and inner_name("a.tar.gz") == "a.tar"
        and inner_name("a.gz.md") == "a.gz.md"
    )
    html = b"<!DOCTYPE html><html><body><h1>Ports</h1><p>Open 443.</p></body></html>"
    parsed = parse_document(gzip.compress(html), "page.gz")  # nothing left of the name: sniffed
    assert (parsed.document.status, parsed.document.format) == ("ok", "html")
    # gzip behind a text extension: its text, not a refusal
    parsed = parse_document(gzip.compress(b"hello world\n" * 100), "data.txt")
    assert (parsed.document.status, parsed.document.format) == ("ok", "text")
    assert parsed.text.count("hello world") == 100


def test_the_shared_corpus_gzip_named_txt_is_read(tmp_path):
    path = SHARED / "bad" / "gzip-compressed-named.txt"
    if not path.exists():
        pytest.skip("../shared/corpus is not beside the checkout")
    parsed = parse_document(path.read_bytes(), str(path))
    assert parsed.document.status == "ok" and parsed.document.format == "text"
    assert "First Citizen" in parsed.text


def test_members_and_frames_one_after_another_and_what_gzip_ignores_after_them():
    two = gzip.compress(b"one ") + gzip.compress(b"two")
    assert decompress(two, "gzip", 100) == b"one two"
    assert decompress(two + b"\0" * 8, "gzip", 100) == b"one two"  # padding
    assert decompress(two + b"trailing junk", "gzip", 100) == b"one two"  # as gzip(1) does
    assert decompress(bz2.compress(b"a") + bz2.compress(b"b"), "bzip2", 100) == b"ab"
    assert decompress(lzma.compress(b"a") + lzma.compress(b"b"), "xz", 100) == b"ab"
    assert decompress(gzip.compress(b""), "gzip", 100) == b""
    assert compression_of(b"BZh is how this line starts") is None  # bzip2 needs its block size digit
    assert parse_document(b"BZh is how this line starts", "x.txt").document.status == "ok"


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_cut_short_or_damaged_is_a_failed_row_with_its_reason(kind):
    data = COMPRESS[kind](MARKDOWN * 50)
    with pytest.raises(CorruptData):
        decompress(data[: len(data) // 2], kind, 1 << 20)
    d = parse_document(data[: len(data) // 2], "runbook.md" + SUFFIX[kind]).document
    assert d.status == "failed" and d.reason.startswith(f"{kind}-compressed data that cannot be decompressed")
    assert "\n" not in d.reason


def test_empty_and_nested_compression():
    d = parse_document(gzip.compress(b""), "empty.md.gz").document
    assert (d.status, d.reason) == ("empty", "gzip-compressed data of zero bytes")
    d = parse_document(gzip.compress(bz2.compress(MARKDOWN)), "runbook.md.bz2.gz").document
    assert d.status == "unsupported" and "bzip2-compressed data again" in d.reason


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_bomb_stops_at_the_limit(kind):
    zeros = bytes(40 << 20)
    data = COMPRESS[kind](zeros)
    assert len(data) < 4 << 20
    with pytest.raises(TooLarge):
        decompress(data, kind, (40 << 20) - 1)
    assert decompress(data, kind, 40 << 20) == zeros  # exactly at the limit is allowed
    d = parse_document(data, "bomb.md" + SUFFIX[kind], options=ParseOptions(max_unzipped_mb=8)).document
    assert d.status == "failed"
    assert (
        d.reason
        == f"{kind}-compressed data that decompresses to more than 8.0 MB, over limits.max_unzipped_mb=8"
    )


def test_past_the_floor_a_bomb_is_judged_by_its_ratio():
    """Up to 100 MB anything unpacks (as for a zip package); past it, no more than max_unzip_ratio
    times the file's size. Measured in a process of its own: its peak memory stays near the limit,
    not the 1 GB the bomb holds."""
    script = """
import gzip, resource, sys, zlib
from raychunk.parse import ParseOptions, parse_document
c = zlib.compressobj(1, zlib.DEFLATED, 31)
bomb = b"".join(c.compress(bytes(1 << 24)) for _ in range(64)) + c.flush()  # 1 GiB of zeros
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
d = parse_document(bomb, "bomb.md.gz", options=ParseOptions(max_unzip_ratio=10)).document
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(d.status, len(bomb), grew // 1024)
print(d.reason)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    status_line, reason = out.splitlines()
    status, size, grew_mb = status_line.split()
    assert status == "failed"
    assert reason == (
        f"gzip-compressed data that decompresses to more than 100.0 MB, over 10 times its "
        f"{int(size) / 2**20:,.1f} MB: refusing a likely decompression bomb"
    )
    assert int(grew_mb) < 400  # the 100 MB it may unpack, a copy or two of it; not 1,024


def test_files_are_read_as_stored_not_decompressed_by_their_name(tmp_path):
    """pyarrow's streams decompress by extension unless told not to: the read must hand the parse
    the file's bytes, the size the listing gave, so the limits above hold (a 3 MB .gz of 3 GB
    would otherwise be read whole by the read task)."""
    data = gzip.compress(MARKDOWN, mtime=0)
    for name in ("a.md.gz", "b.md.zst", "c.md.bz2"):
        (tmp_path / name).write_bytes(data)
    paths = tuple(str(tmp_path / n) for n in ("a.md.gz", "b.md.zst", "c.md.bz2"))
    (table,) = _read_group(paths, pafs.LocalFileSystem(), sizes=(len(data),) * 3)
    assert table.column("bytes").to_pylist() == [data] * 3
    assert table.column("read_error").to_pylist() == [None] * 3
