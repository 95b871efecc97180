"""The Arrow schemas of the job's outputs, defined once and used by the writer and the tests.

Embeddings are ``fixed_size_list<float32>[dim]``, which pandas, DuckDB, polars and LanceDB read
without Ray (a 2-D numpy column would be written as Ray's own tensor extension type instead).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "DOCUMENT_SCHEMA",
    "EVAL_MARK",
    "EVAL_ROWS",
    "LOCATED_ROWS",
    "MEASURE_ROWS",
    "RUN_ROWS",
    "chunk_schema",
    "documents_table",
    "row_schema",
]

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
    """Documents rows (dicts) as the table."""
    return pa.Table.from_pylist(
        [{k: r.get(k) for k in DOCUMENT_COLUMNS} for r in rows], schema=DOCUMENT_SCHEMA
    )


# -- the rows in flight -------------------------------------------------------------------------------
#
# The run's document step passes on rows of three kinds, told apart by ``row_type``, in one schema
# (``RUN_ROWS``) so that Ray Data batches them together: a ``chunk`` row fills the chunks/ columns, a
# ``document`` row the documents/ columns (the names both tables have, ``doc_id``, ``source``,
# ``doc_type`` and ``text``, mean the same in each: a documents row's ``text`` is its document's), and a
# ``reuse`` row (an incremental run's unchanged file, not parsed) ``doc_id``, ``source`` and
# ``source_bytes``. The writer selects each table's columns and casts them to its output schema.

_DOCUMENT_ONLY = [f.with_nullable(True) for f in DOCUMENT_SCHEMA if f.name not in CHUNK_COLUMNS]
RUN_ROWS = pa.schema(
    [pa.field("row_type", pa.string()), *(f.with_nullable(True) for f in _CHUNK_FIELDS), *_DOCUMENT_ONLY]
)

# The eval's chunk step passes on, per setting, its ``chunk`` rows (``setting`` their label, ``eval``
# what the eval needs of their text: ``evaluation.partials.mark_document``) and one ``document`` row
# of facts without the text (``status``, ``reason``, ``doc_type``, ``bytes``).
EVAL_MARK = pa.struct(
    [
        ("bad", pa.string()),  # why the span fails the span check, or null
        ("quoted", pa.list_(pa.int32())),  # the questions one of whose quotes its text holds
        ("group", pa.list_(pa.list_(pa.int64()))),  # its small-to-big expansion, a list per chunk
        ("group_quoted", pa.list_(pa.int32())),
        ("text_bytes", pa.int64()),
        ("inside", pa.list_(pa.int32())),  # on a setting's first chunk of a document only
    ]
)
EVAL_ROWS = pa.schema(
    [
        pa.field("row_type", pa.string()),
        pa.field("setting", pa.string()),
        *(f.with_nullable(True) for f in _CHUNK_FIELDS),
        *(f for f in _DOCUMENT_ONLY if f.name in ("status", "reason", "bytes")),
        pa.field("eval", EVAL_MARK),
    ]
)

# The eval's locate step passes on one row per labelled document: its questions' passages located
# in its text (``evaluation.labels.locate_passages``), or why not.
_PASSAGE = pa.struct([("start", pa.int64()), ("end", pa.int64()), ("quote", pa.string())])
_NOTE = pa.struct(  # a passage found other than exactly (``how``), or more than once
    [
        ("passage", pa.int64()),
        ("quote", pa.string()),
        ("how", pa.string()),
        ("occurrences", pa.int64()),
        ("span", pa.list_(pa.int64(), 2)),
    ]
)
_UNLOCATED = pa.struct([("quote", pa.string()), ("why", pa.string()), ("nearest", pa.string())])
LOCATED_ROWS = pa.schema(
    [
        ("source", pa.string()),
        (
            "located",
            pa.list_(
                pa.struct(
                    [
                        ("query", pa.int64()),
                        ("passages", pa.list_(_PASSAGE)),
                        ("notes", pa.list_(_NOTE)),
                        ("unlocated", pa.list_(_UNLOCATED)),
                    ]
                )
            ),
        ),
    ]
)

# The price job's measure step passes on one row per document and setting: its chunk statistics
# (``pricing.measure_document``), the tokens per chunk as ``[n_tokens, chunks]`` pairs, and with
# ``price --previous`` every chunk's id and tokens.
MEASURE_ROWS = pa.schema(
    [
        ("setting", pa.string()),
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("doc_type", pa.string()),
        ("status", pa.string()),
        ("bytes", pa.int64()),
        ("pages", pa.int64()),
        ("ocr_pages", pa.int64()),  # how many pages OCR read
        ("ocr_seconds", pa.float64()),
        ("chunks", pa.int64()),
        ("tokens", pa.int64()),
        ("header_tokens", pa.int64()),
        ("overlap_tokens", pa.int64()),
        ("over_limit", pa.int64()),
        ("text_bytes", pa.int64()),
        ("token_hist", pa.list_(pa.list_(pa.int64(), 2))),
        ("chunk_ids", pa.list_(pa.struct([("chunk_id", pa.string()), ("n_tokens", pa.int64())]))),
    ]
)


def row_schema(dim: int) -> pa.Schema:
    """The rows between the chunk stage and the writer in an incremental run: ``RUN_ROWS``, then
    ``embedding`` (null until reused or embedded), ``changed`` (the row goes into ``delta/added``),
    ``group`` (the shuffle key: ``id:`` and a doc_id, or ``src:`` and a source), ``text_sha256`` (of a
    previous chunk's text) and ``reused`` (``id`` or ``text``: how a chunk got its old vector). Two
    more kinds travel in it: ``previous_chunk``/``previous_text`` (a previous output's chunk, whole
    and as its vector under its source) and ``previous_document``."""
    return pa.schema(
        [
            *RUN_ROWS,
            pa.field("embedding", pa.list_(pa.float32(), dim)),
            pa.field("changed", pa.bool_()),
            pa.field("group", pa.string()),
            pa.field("text_sha256", pa.binary(32)),
            pa.field("reused", pa.string()),
        ]
    )
