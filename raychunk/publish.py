"""Staging → final: a run writes under ``OUTPUT/_staging/<run>/`` and is moved into place only when
the whole run succeeded and its chunk ids are unique; ``report.json``, written last, marks the output
complete."""

from __future__ import annotations

import logging
import time
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from raychunk.config import ConfigError
from raychunk.schema import DOCUMENT_SCHEMA

__all__ = [
    "check_every_input_accounted",
    "check_output",
    "check_unique_chunk_ids",
    "compact_documents",
    "discard",
    "publish",
    "staging_folder",
    "write_text",
]

log = logging.getLogger(__name__)

_OUTPUTS = ("chunks", "documents")
_REPORTS = ("report.json", "report.md")
COMPACT_MAX_BYTES = 128 * 2**20
_DOCUMENT_FIELDS = [c for c in DOCUMENT_SCHEMA.names if c != "text"]


def check_output(fs: pafs.FileSystem, path: str, overwrite: bool) -> None:
    """Refuse to clobber an earlier run unless ``overwrite``."""
    existing = [
        p
        for p in (*_OUTPUTS, "report.json")
        if fs.get_file_info(f"{path}/{p}").type != pafs.FileType.NotFound
    ]
    if existing and not overwrite:
        raise ConfigError(
            f"output {path} already holds a run ({', '.join(existing)}): pass --overwrite "
            "(output_files.overwrite) or choose another --output"
        )


def staging_folder(out: str) -> str:
    return f"{out}/_staging/{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


def discard(fs: pafs.FileSystem, staging: str) -> None:
    try:
        fs.delete_dir(staging)
    except OSError:
        log.warning("could not remove staging folder %s", staging)


def compact_documents(
    fs: pafs.FileSystem, staging: str, compression: str, *, max_bytes: int = COMPACT_MAX_BYTES
) -> pa.Table:
    """One documents file, sorted by source, instead of one part per write task, when the parts
    total at most ``max_bytes``; larger (the text column holds the corpus) they stay parts, so the
    driver never holds every document's text. Returns the documents less their text, by source."""
    folder = f"{staging}/documents"
    infos = [i for i in fs.get_file_info(pafs.FileSelector(folder)) if i.path.endswith(".parquet")]
    parts = sorted(i.path for i in infos)
    if sum(i.size for i in infos) > max_bytes:
        return _concat(
            [pq.read_table(p, filesystem=fs, schema=DOCUMENT_SCHEMA, columns=_DOCUMENT_FIELDS) for p in parts]
        ).sort_by("source")
    docs = _concat([pq.read_table(p, filesystem=fs, schema=DOCUMENT_SCHEMA) for p in parts]).sort_by("source")
    for p in parts:
        fs.delete_file(p)
    pq.write_table(
        docs,
        f"{folder}/documents.parquet",
        filesystem=fs,
        compression=None if compression == "none" else compression,
    )
    return docs.select(_DOCUMENT_FIELDS)


def _concat(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if tables else DOCUMENT_SCHEMA.empty_table()


def check_every_input_accounted(docs: pa.Table, files) -> None:
    if docs.num_rows != len(files):
        raise RuntimeError(f"{len(files)} input files but {docs.num_rows} document rows: refusing to publish")


def check_unique_chunk_ids(fs: pafs.FileSystem, staging: str) -> None:
    """A bug guard: a chunk id held twice in the staged ``chunks/`` stops the publish, naming the id
    and its sources; the staging folder stays for inspection."""
    folder = f"{staging}/chunks"
    infos = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    parts = sorted(i.path for i in infos if i.path.endswith(".parquet"))
    if not parts:
        return
    columns = [pq.read_table(p, filesystem=fs, columns=["chunk_id"]).column(0) for p in parts]
    ids = pa.chunked_array([a for c in columns for a in c.chunks], type=pa.string())
    counts = pc.value_counts(ids)
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if not len(repeated):
        return
    chunk_id = repeated.field("values")[0].as_py()
    sources = []
    for p in parts:
        t = pq.read_table(p, filesystem=fs, columns=["chunk_id", "source"])
        sources += t.filter(pc.equal(t.column("chunk_id"), chunk_id)).column("source").to_pylist()
    more = f" (and {len(repeated) - 1} more repeated ids)" if len(repeated) > 1 else ""
    raise RuntimeError(
        f"chunk_id {chunk_id} is written {len(sources)} times, from {sources[0]} and {sources[1]}{more}: "
        f"refusing to publish; the output stays in {staging}"
    )


def publish(fs: pafs.FileSystem, staging: str, out: str, overwrite: bool) -> None:
    """Move ``chunks/`` and ``documents/`` from the staging folder to the output, once the chunk ids
    are known to be unique."""
    check_unique_chunk_ids(fs, staging)
    for name in _OUTPUTS:
        final = f"{out}/{name}"
        if fs.get_file_info(final).type != pafs.FileType.NotFound:
            if not overwrite:
                raise RuntimeError(f"{final} appeared during the run; the new output stays in {staging}")
            fs.delete_dir(final)
    for name in _REPORTS:
        if fs.get_file_info(f"{out}/{name}").type == pafs.FileType.File:
            fs.delete_file(f"{out}/{name}")
    for name in _OUTPUTS:
        _move_dir(fs, f"{staging}/{name}", f"{out}/{name}")
    fs.delete_dir(staging)
    if not fs.get_file_info(pafs.FileSelector(f"{out}/_staging", allow_not_found=True)):
        fs.delete_dir(f"{out}/_staging")


def write_text(fs: pafs.FileSystem, path: str, text: str) -> None:
    with fs.open_output_stream(path) as f:
        f.write(text.encode())


def _move_dir(fs: pafs.FileSystem, src: str, dest: str) -> None:
    """Rename a folder. Object stores have no folders to rename (pyarrow's S3 and GCS ``move`` take one
    object), so there each file is moved and the emptied source removed."""
    if fs.type_name == "local":
        fs.move(src, dest)
        return
    fs.create_dir(dest, recursive=True)
    for info in fs.get_file_info(pafs.FileSelector(src, recursive=True)):
        if info.type == pafs.FileType.File:
            fs.move(info.path, dest + info.path[len(src) :])
    fs.delete_dir(src)
