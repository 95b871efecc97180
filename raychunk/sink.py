"""The write stage: one Ray Data datasink that writes two tables, chunks/ and documents/.

Every row is either a chunk or a document (``row_type``, in ``schema.RUN_ROWS``). Each write task
splits its rows and writes one zstd Parquet shard per table into the run's staging folder, with the explicit schemas of
:mod:`raychunk.schema`, then a small manifest in ``_done/`` (written last) naming the shard's files,
its documents and how many chunk rows of each source it holds: what ``--resume`` trusts. Nothing
is published here: the job moves the staged files into place only when the whole run has succeeded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from ray.data.datasource import Datasink

from raychunk.publish import shard_manifest
from raychunk.schema import CHUNK_COLUMNS, DOCUMENT_COLUMNS, DOCUMENT_SCHEMA, chunk_schema

__all__ = ["ShardSink"]


class ShardSink(Datasink):
    def __init__(
        self,
        staging: str,
        filesystem: pafs.FileSystem,
        *,
        attempt: str,
        dim: int | None,
        rows_per_shard: int,
        compression: str,
    ):
        self.staging = staging.rstrip("/")
        self.filesystem = filesystem
        self.attempt = attempt
        self.dim = dim
        self.rows_per_shard = rows_per_shard
        self.compression = None if compression == "none" else compression

    @property
    def min_rows_per_write(self) -> int:
        return self.rows_per_shard

    def on_write_start(self, schema=None) -> None:
        for sub in ("chunks", "documents", "_done"):
            self.filesystem.create_dir(f"{self.staging}/{sub}", recursive=True)

    def write(self, blocks: Iterable, ctx) -> dict:
        tables = [b if isinstance(b, pa.Table) else pa.Table.from_pandas(b) for b in blocks]
        tables = [t for t in tables if t.num_rows]
        if not tables:
            return {}
        table = pa.concat_tables(tables, promote_options="permissive")
        is_chunk = pc.equal(table.column("row_type"), "chunk")
        chunks = table.filter(is_chunk)
        docs = table.filter(pc.invert(is_chunk))
        name = f"part-{self.attempt}-{ctx.task_idx:05d}"
        chunk_file = doc_file = None
        chunk_bytes = doc_bytes = 0
        embedded_rows = _per_source(chunks, "embedded") if "embedded" in chunks.column_names else None
        embedded_tokens = (
            _per_source(chunks, "embedded", tokens=True) if "embedded" in chunks.column_names else None
        )
        by_text = (
            _per_source(chunks.append_column("by_text", pc.equal(chunks.column("reused"), "text")), "by_text")
            if "reused" in chunks.column_names
            else None
        )
        added = (
            chunks.filter(pc.fill_null(chunks.column("changed"), False))
            if "changed" in chunks.column_names
            else None
        )
        added_file = None
        if chunks.num_rows:
            schema = chunk_schema(self.dim)
            columns = CHUNK_COLUMNS + (["embedding"] if self.dim else [])
            chunks = chunks.select(columns).cast(schema)
            chunk_file = f"chunks/{name}.parquet"
            chunk_bytes = self._write(chunks, f"{self.staging}/{chunk_file}")
            if added is not None and added.num_rows:  # an incremental run's upserts, beside the whole
                added_file = f"delta/added/{name}.parquet"
                self.filesystem.create_dir(f"{self.staging}/delta/added", recursive=True)
                self._write(added.select(columns).cast(schema), f"{self.staging}/{added_file}")
        doc_rows = docs.select(["source", "chunks"]).to_pylist() if docs.num_rows else []
        if doc_rows:
            doc_file = f"documents/{name}.parquet"
            documents = docs.select(DOCUMENT_COLUMNS).cast(DOCUMENT_SCHEMA)
            doc_bytes = self._write(documents, f"{self.staging}/{doc_file}")
        manifest = shard_manifest(
            chunk_file, doc_file, chunks, doc_rows, chunk_bytes, doc_bytes, added_file=added_file
        )
        if embedded_rows is not None:  # per source, so that a resume can drop a document's exactly
            manifest["embedded_rows"] = embedded_rows
            manifest["embedded_tokens"] = embedded_tokens
            manifest["reused_by_text_rows"] = by_text or {}
            manifest["result"]["reused_by_text"] = sum((by_text or {}).values())
            copied = docs.filter(pc.is_valid(docs.column("changed")))
            manifest["reused"] = copied.column("source").to_pylist()
            manifest["result"]["reused_documents"] = len(manifest["reused"])
        manifest["result"]["embedded"] = (
            (sum(embedded_rows.values()) if embedded_rows is not None else chunks.num_rows) if self.dim else 0
        )
        manifest["result"]["tokens_embedded"] = (
            (sum(embedded_tokens.values()) if embedded_tokens is not None else manifest["result"]["tokens"])
            if self.dim
            else 0
        )
        manifest["result"]["added"] = added.num_rows if added is not None else 0
        with self.filesystem.open_output_stream(f"{self.staging}/_done/{name}.json") as f:
            f.write(json.dumps(manifest).encode())
        return manifest["result"]

    def _write(self, table: pa.Table, path: str) -> int:
        pq.write_table(
            table,
            path,
            filesystem=self.filesystem,
            compression=self.compression,
            row_group_size=min(max(table.num_rows, 1), 10_000),
        )
        return self.filesystem.get_file_info(path).size


def _per_source(table: pa.Table, flag: str, *, tokens: bool = False) -> dict[str, int]:
    """How many rows of each source have ``flag`` set (with ``tokens``: their ``n_tokens`` summed)."""
    marked = table.filter(pc.fill_null(table.column(flag), False))
    if not marked.num_rows:
        return {}
    if tokens:
        sums = marked.group_by("source").aggregate([("n_tokens", "sum")])
        return dict(
            zip(sums.column("source").to_pylist(), sums.column("n_tokens_sum").to_pylist(), strict=True)
        )
    counts = pc.value_counts(marked.column("source"))
    return dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True))
