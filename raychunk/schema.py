"""The Arrow schemas of the job's outputs, defined once and used by the writer and the tests.

Embeddings are ``fixed_size_list<float32>[dim]``, which pandas, DuckDB, polars and LanceDB read
without Ray (a 2-D numpy column would be written as Ray's own tensor extension type instead).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["DOCUMENT_SCHEMA", "chunk_schema", "documents_table", "row_schema"]

_CHUNK_FIELDS = [
    pa.field("chunk_id", pa.string(), nullable=False),
    pa.field("doc_id", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("doc_type", pa.string()),
    pa.field("strategy", pa.string()),
    pa.field("max_tokens", pa.int32()),
    pa.field("overlap", pa.int32()),
    pa.field("chunk_index", pa.int32()),
    pa.field("text", pa.large_string()),
    pa.field("header", pa.string()),
    pa.field("heading_path", pa.list_(pa.string())),
    pa.field("char_start", pa.int64()),
    pa.field("char_end", pa.int64()),
    pa.field("page_start", pa.int32()),
    pa.field("page_end", pa.int32()),
    pa.field("n_tokens", pa.int32()),
    pa.field("header_tokens", pa.int32()),
    pa.field("overlap_tokens", pa.int32()),
    pa.field("block_kinds", pa.list_(pa.string())),
    pa.field("parent_id", pa.string()),
    pa.field("table_id", pa.string()),
    pa.field("table_part", pa.int32()),
    pa.field("continuation", pa.bool_()),
    pa.field("over_limit", pa.bool_()),
    pa.field("oversize", pa.bool_()),  # a single unsplittable unit over max_tokens
]
CHUNK_COLUMNS = [f.name for f in _CHUNK_FIELDS]


def chunk_schema(dim: int | None) -> pa.Schema:
    """The chunks/ schema; with ``dim`` it ends with ``embedding: fixed_size_list<float32>[dim]``."""
    fields = list(_CHUNK_FIELDS)
    if dim:
        fields.append(pa.field("embedding", pa.list_(pa.float32(), dim)))
    return pa.schema(fields)


def row_schema(dim: int) -> pa.Schema:
    """The rows between the chunk stage and the writer in an incremental run: every field nullable,
    ``row_type`` and ``document`` (a documents row as JSON) first, the chunk fields, ``embedding``
    (null until reused or embedded), ``changed`` (the row goes into ``delta/added``), ``group``
    (the shuffle key: ``id:`` and a doc_id, or ``src:`` and a source), ``text_sha256`` (of a
    previous chunk's text) and ``reused`` (``id`` or ``text``: how a chunk got its old vector)."""
    fields = [pa.field("row_type", pa.string()), pa.field("document", pa.large_string())]
    fields += [f.with_nullable(True) for f in chunk_schema(dim)]
    return pa.schema(
        [
            *fields,
            pa.field("changed", pa.bool_()),
            pa.field("group", pa.string()),
            pa.field("text_sha256", pa.binary(32)),
            pa.field("reused", pa.string()),
        ]
    )


DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("format", pa.string()),
        pa.field("doc_type", pa.string()),
        pa.field("type_reason", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("reason", pa.string()),
        pa.field("title", pa.string()),
        pa.field("pages", pa.int32()),
        pa.field("blocks", pa.int32()),
        pa.field("chunks", pa.int32()),
        pa.field("tokens", pa.int64()),
        pa.field("bytes", pa.int64()),
        pa.field("encoding", pa.string()),
        pa.field("no_text_pages", pa.list_(pa.int32())),
        pa.field("ocr", pa.bool_()),  # some page's text was read by OCR
        pa.field(
            "ocr_engine", pa.string()
        ),  # its name and version, e.g. "tesseract 5.5.4 eng (tessdata_fast)"
        pa.field("ocr_pages", pa.list_(pa.int32())),  # the pages OCR read text from
        pa.field("ocr_seconds", pa.float32()),  # CPU seconds OCR took (pages read or tried)
        pa.field("parse_seconds", pa.float32()),
        pa.field("peak_rss_mb", pa.int32()),  # of the process that parsed, classified and chunked it
        pa.field("text", pa.large_string()),  # what chunk spans index into; null for a duplicate
        pa.field("source_bytes", pa.binary()),  # the name's own bytes, where ``source`` escapes them
    ]
)
DOCUMENT_COLUMNS = [f.name for f in DOCUMENT_SCHEMA]


def documents_table(rows: list[dict]) -> pa.Table:
    """Documents rows as the table; ``source_bytes`` may come as hex (from a row's JSON)."""
    return pa.Table.from_pylist(
        [
            {k: _source_bytes(r.get(k)) if k == "source_bytes" else r.get(k) for k in DOCUMENT_COLUMNS}
            for r in rows
        ],
        schema=DOCUMENT_SCHEMA,
    )


def _source_bytes(value):
    return bytes.fromhex(value) if isinstance(value, str) else value
