"""Staging → final: a run writes under ``OUTPUT/_staging/<run>/`` and is moved into place only when
the whole run succeeded; ``report.json``, written last, marks the output complete."""

from __future__ import annotations

import logging
import time
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from raychunk.config import ConfigError
from raychunk.schema import DOCUMENT_SCHEMA

__all__ = [
    "check_every_input_accounted",
    "check_output",
    "compact_documents",
    "discard",
    "publish",
    "staging_folder",
    "write_text",
]

log = logging.getLogger(__name__)

_OUTPUTS = ("chunks", "documents")
_REPORTS = ("report.json", "report.md")


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


def compact_documents(fs: pafs.FileSystem, staging: str, compression: str) -> pa.Table:
    """One documents file, sorted by source, instead of one part per write task."""
    folder = f"{staging}/documents"
    parts = [i.path for i in fs.get_file_info(pafs.FileSelector(folder)) if i.path.endswith(".parquet")]
    tables = [pq.read_table(p, filesystem=fs, schema=DOCUMENT_SCHEMA) for p in sorted(parts)]
    docs = pa.concat_tables(tables) if tables else DOCUMENT_SCHEMA.empty_table()
    docs = docs.sort_by("source")
    for p in parts:
        fs.delete_file(p)
    pq.write_table(
        docs,
        f"{folder}/documents.parquet",
        filesystem=fs,
        compression=None if compression == "none" else compression,
    )
    return docs


def check_every_input_accounted(docs: pa.Table, files) -> None:
    if docs.num_rows != len(files):
        raise RuntimeError(f"{len(files)} input files but {docs.num_rows} document rows: refusing to publish")


def publish(fs: pafs.FileSystem, staging: str, out: str, overwrite: bool) -> None:
    """Move ``chunks/`` and ``documents/`` from the staging folder to the output."""
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
