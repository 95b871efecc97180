"""The job's row-level stages: plain functions that don't know they run on Ray.

parse_file → classify_document → chunk_rows turn one input file into one ``document`` row plus
its ``chunk`` rows. Every row has the same keys (``ROW_KEYS``), so Ray Data can batch them together;
``row_type`` tells them apart and the writer splits them into chunks/ and documents/.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable

from raychunk.chunking import chunk_document
from raychunk.classify import classify
from raychunk.dedupe import duplicate_reason
from raychunk.document import Document, ParsedDocument, content_hash
from raychunk.faults import inject
from raychunk.incremental import DocIndex, doc_key
from raychunk.io import identity_of
from raychunk.isolate import Limits, Sandbox, peak_rss_mb
from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.detect import format_from_name
from raychunk.schema import CHUNK_COLUMNS

__all__ = [
    "ROW_KEYS",
    "as_rows",
    "chunk_rows",
    "chunk_settings",
    "classify_document",
    "compare_chunk_id",
    "count_comparison",
    "current_chunk_ids",
    "diff_chunk_id",
    "diff_counts",
    "failed_file",
    "isolated",
    "measure_settings",
    "merge_previous",
    "new_rows",
    "parse_file",
    "previous_chunk_ids",
    "previous_chunk_rows",
    "previous_document_rows",
    "price_partial",
    "removed_ids",
    "staged_chunk_ids",
    "text_sha256",
]

log = logging.getLogger(__name__)

ROW_KEYS = ("row_type", "document", *CHUNK_COLUMNS)

_SANDBOX: Sandbox | None = None


def isolated(
    row: dict,
    *,
    steps: list[tuple[str, Callable]],
    limits: Limits,
    scheme: str = "",
    unchanged: DocIndex | None = None,
    duplicates: dict[str, str] | None = None,
    root: str = "",
) -> list[dict]:
    """One input file through ``steps`` (parse → classify → chunk) in this worker's sandbox: a child
    process under ``limits``. A document that goes over a limit, crashes its worker or raises becomes
    a ``failed`` document (the steps after parse then run here, on a document with no text).
    A file whose bytes, format and identity (its source relative to ``root``) are in ``unchanged``
    (and that is not a byte-identical copy, in ``duplicates``) is not parsed: it becomes one ``reuse`` row, replaced by the previous output's
    rows in ``merge_previous``."""
    global _SANDBOX
    t = time.perf_counter()
    if unchanged is not None and not row.get("read_error"):
        source = scheme + row["path"]
        doc_id = content_hash(bytes(row["bytes"]))
        if (
            source not in (duplicates or {})
            and doc_key(doc_id, format_from_name(source) or "unknown", identity_of(source, root)) in unchanged
        ):
            raw = {"source_bytes": row["raw"].hex() if row.get("raw") else None}
            return [
                {
                    **dict.fromkeys(ROW_KEYS),
                    "row_type": "reuse",
                    "document": json.dumps(raw),
                    "doc_id": doc_id,
                    "source": source,
                }
            ]
    if row.get("read_error"):
        reason, peak = row["read_error"], None
    else:
        if _SANDBOX is None or _SANDBOX.limits != limits:
            _SANDBOX = Sandbox(limits)
        out, failure, peak = _SANDBOX.run(steps, row, key=id(steps))
        if failure is None:
            return out
        reason = failure.reason
    source = scheme + row["path"]
    log.warning("%s: %s", source, reason)
    value = {**failed_file(row, reason, scheme), "parse_seconds": time.perf_counter() - t}
    value["peak_rss_mb"] = peak
    for _, fn in steps[1:]:
        value = fn(value)
    return value


def failed_file(row: dict, reason: str, scheme: str = "") -> dict:
    """The parse stage's output for a file that could not be processed at all."""
    source = scheme + row["path"]
    data = row.get("bytes") or b""
    doc = Document(
        doc_id=content_hash(bytes(data)),
        source=source,
        format=format_from_name(source) or "unknown",
        status="failed",
        reason=reason,
        bytes=len(data),
    )
    return {"source": source, "parsed": ParsedDocument(doc), "parse_seconds": 0.0, "raw": row.get("raw")}


def parse_file(
    row: dict,
    *,
    options: ParseOptions,
    scheme: str = "",
    duplicates: dict[str, str] | None = None,
    root: str = "",
) -> dict:
    """``{bytes, path}`` from the reader → ``{source, parsed, parse_seconds}``. A source in
    ``duplicates`` (duplicate → kept source) is not parsed: it becomes a ``duplicate`` document.
    The document's identity (what its chunk ids name) is its source relative to ``root``."""
    t = time.perf_counter()
    source = scheme + row["path"]
    inject(source)  # test-only faults (raychunk.faults); nothing unless RAYCHUNK_TEST_FAULTS is set
    data = bytes(row["bytes"])
    kept = (duplicates or {}).get(source)
    if kept is not None:
        parsed = ParsedDocument(
            Document(
                doc_id=content_hash(data),
                source=source,
                format=format_from_name(source) or "unknown",
                status="duplicate",
                reason=duplicate_reason(kept),
                bytes=len(data),
            )
        )
    else:
        parsed = parse_document(data, source, options=options)
    parsed = dataclasses.replace(
        parsed, document=dataclasses.replace(parsed.document, identity=identity_of(source, root))
    )
    listed = row.get("size")
    if listed is not None and listed != len(data):
        note = f"the file changed size between listing and reading ({listed:,} bytes listed, {len(data):,} read): its bytes as read are used"
        doc = parsed.document
        reason = f"{doc.reason}; {note}" if doc.reason else note
        parsed = dataclasses.replace(parsed, document=dataclasses.replace(doc, reason=reason))
    return {
        "source": source,
        "parsed": parsed,
        "parse_seconds": time.perf_counter() - t,
        "raw": row.get("raw"),
    }


def classify_document(row: dict, *, thresholds: dict, overrides: tuple = ()) -> dict:
    parsed: ParsedDocument = row["parsed"]
    if parsed.document.status != "ok":
        return {**row, "doc_type": "", "type_reason": ""}
    c = classify(parsed, thresholds, overrides)
    return {**row, "doc_type": c.doc_type, "type_reason": c.reason}


def chunk_rows(row: dict, *, profiles: dict, tokenizer: str, tokenizer_dir: str | None = None) -> list[dict]:
    """One ``document`` row and the document's ``chunk`` rows."""
    from raychunk.tokens import CachedCounter, load_counter

    parsed: ParsedDocument = row["parsed"]
    doc = parsed.document
    chunks = []
    if doc.status == "ok":
        # token offsets of this document, counted once
        counter = CachedCounter(load_counter(tokenizer, tokenizer_dir))
        chunks = chunk_document(parsed, profiles[row["doc_type"]], counter, doc_type=row["doc_type"])
    document = {
        "doc_id": doc.doc_id,
        "source": doc.source,
        "format": doc.format,
        "doc_type": row["doc_type"],
        "type_reason": row["type_reason"],
        "status": doc.status,
        "reason": doc.reason,
        "title": doc.title,
        "pages": doc.pages,
        "blocks": len(parsed.blocks),
        "chunks": len(chunks),
        "tokens": sum(c.n_tokens for c in chunks),
        "bytes": doc.bytes,
        "encoding": doc.encoding,
        "no_text_pages": list(doc.no_text_pages),
        "ocr": bool(doc.ocr_pages),
        "ocr_engine": doc.ocr_engine or None,
        "ocr_pages": list(doc.ocr_pages),
        "ocr_seconds": doc.ocr_seconds,
        "parse_seconds": round(row["parse_seconds"], 4),
        "peak_rss_mb": row.get("peak_rss_mb") or peak_rss_mb(),
        "text": None if doc.status == "duplicate" else parsed.text,  # a duplicate's is the kept copy's
        "source_bytes": row["raw"].hex() if row.get("raw") else None,  # JSON here; bytes in documents/
    }
    empty = dict.fromkeys(CHUNK_COLUMNS)
    out = [
        {
            **empty,
            "row_type": "document",
            "document": json.dumps(document, ensure_ascii=False),
            "doc_id": doc.doc_id,
            "source": doc.source,
        }
    ]
    for c in chunks:
        out.append({**c.to_dict(), "row_type": "chunk", "document": None})
    return out


def measure_settings(
    row: dict,
    *,
    settings: list,
    profiles: dict,
    tokenizer: str,
    keep_ids: bool,
    tokenizer_dir: str | None = None,
) -> list[dict]:
    """The price job's stage: one statistics row per grid setting for this document."""
    from raychunk.peers import chunk_stats_any
    from raychunk.pricing import measure_document
    from raychunk.tokens import load_counter

    return measure_document(
        row["parsed"],
        row["doc_type"],
        settings,
        profiles,
        load_counter(tokenizer, tokenizer_dir),
        keep_ids=keep_ids,
        stats=chunk_stats_any,
    )


def price_partial(batch, *, kept_sources: frozenset[str], rounds: int, seed: int):
    """A block of ``measure_settings`` rows → one row holding the block's pickled ``PricePartial``:
    what leaves the worker is sized by settings and doc types, not by documents."""
    import pickle

    import pyarrow as pa

    from raychunk.pricing import partial_from_rows

    partial = partial_from_rows(batch.to_pylist(), kept_sources=kept_sources, rounds=rounds, seed=seed)
    return pa.table({"partial": pa.array([pickle.dumps(partial)], pa.binary())})


_ID_FIELDS = (("chunk_id", "string"), ("setting", "int32"), ("n_tokens", "int64"))


def _id_table(ids: list, settings: list, tokens: list):
    import pyarrow as pa

    schema = pa.schema([(name, kind) for name, kind in _ID_FIELDS])
    return pa.table([ids, settings, tokens], schema=schema)


def current_chunk_ids(batch, *, labels: list[str]):
    """``measure_settings`` rows (kept with ``keep_ids``) → one ``(chunk_id, setting, n_tokens)`` row
    per chunk, the setting as its index in ``labels``."""
    index = {label: i for i, label in enumerate(labels)}
    ids, settings, tokens = [], [], []
    for label, chunk_ids in zip(batch.column("setting").to_pylist(), batch.column("chunk_ids").to_pylist()):
        for chunk_id, n in json.loads(chunk_ids or "[]"):
            ids.append(chunk_id)
            settings.append(index[label])
            tokens.append(n)
    return _id_table(ids, settings, tokens)


def previous_chunk_ids(batch):
    """An earlier run's ``chunks/`` rows → ``(chunk_id, -1, 0)``: setting -1 marks the previous run."""
    n = batch.num_rows
    return _id_table(batch.column("chunk_id").to_pylist(), [-1] * n, [0] * n)


def compare_chunk_id(group: dict) -> dict:
    """All rows of one chunk id (current and previous) → a row per setting that has it, with whether
    the previous run has it too and its tokens, plus a setting -1 row when the previous run has it."""
    import numpy as np

    in_previous = bool((group["setting"] < 0).any())
    tokens = {int(s): int(n) for s, n in zip(group["setting"], group["n_tokens"]) if s >= 0}
    settings = list(tokens) + ([-1] if in_previous else [])
    return {
        "setting": np.array(settings, dtype=np.int32),
        "in_previous": np.full(len(settings), int(in_previous), dtype=np.int64),
        "n_tokens": np.array([tokens.get(s, 0) for s in settings], dtype=np.int64),
    }


def count_comparison(batch: dict) -> dict:
    """``compare_chunk_id`` rows → per setting: unchanged, new, the new chunks' tokens; and for
    setting -1 the previous run's distinct chunk ids (in ``unchanged``)."""
    import numpy as np

    settings = np.unique(batch["setting"])
    out = {"setting": [], "unchanged": [], "new": [], "tokens_to_embed": []}
    for s in settings:
        mine = batch["setting"] == s
        prev = batch["in_previous"][mine] > 0
        out["setting"].append(int(s))
        out["unchanged"].append(int(prev.sum()))
        out["new"].append(int((~prev).sum()))
        out["tokens_to_embed"].append(int(batch["n_tokens"][mine][~prev].sum()))
    return {k: np.array(v, dtype=np.int64) for k, v in out.items()}


def chunk_settings(
    row: dict,
    *,
    settings: list,
    profiles: dict,
    tokenizer: str,
    tokenizer_dir: str | None = None,
    labelled: dict | None = None,
    parent_budget: int = 512,
) -> list[dict]:
    """The eval job's stage: this document's chunks under every setting, each row labelled with its
    ``setting`` and carrying on ``eval`` what the eval needs of its text (``partials.mark_document``),
    plus a ``document`` row of facts without the text: status, reason, doc_type, bytes. ``labelled``:
    source → ``[(index, passages)]``, the questions' passages as located before chunking."""
    from raychunk.evaluation.partials import mark_document
    from raychunk.peers import chunk_any
    from raychunk.tokens import CachedCounter, load_counter

    parsed: ParsedDocument = row["parsed"]
    doc = parsed.document
    mine = (labelled or {}).get(doc.source, [])
    facts = {"status": doc.status, "reason": doc.reason, "doc_type": row["doc_type"], "bytes": doc.bytes}
    counter = CachedCounter(load_counter(tokenizer, tokenizer_dir))
    empty = dict.fromkeys(CHUNK_COLUMNS)
    out = [
        {
            **empty,
            "row_type": "document",
            "setting": None,
            "doc_id": doc.doc_id,
            "source": doc.source,
            "document": json.dumps(facts, ensure_ascii=False),
            "eval": None,
        }
    ]
    if doc.status != "ok":
        return out
    for s in settings:
        profile = s.profile or profiles[row["doc_type"]]
        chunks = [c.to_dict() for c in chunk_any(parsed, profile, counter, doc_type=row["doc_type"])]
        for c, mark in zip(chunks, mark_document(parsed.text, chunks, mine, parent_budget)):
            out.append(
                {**c, "row_type": "chunk", "setting": s.label, "document": None, "eval": json.dumps(mark)}
            )
    return out


# -- incremental runs: the previous output's rows joined with the new ones ---------------------------
#
# Each row travels under one ``group`` key. The previous output's documents and chunks go under
# ``id:`` + their doc_id, and each previous chunk once more, as a short ``previous_text`` row (its
# id, source, text hash and vector), under ``src:`` + its source. A new row goes under ``id:`` when
# its bytes are a document of the previous output (a ``reuse`` row; or, under --force-reuse, a
# document chunked again), else under ``src:``: a file whose bytes changed meets the vectors of what
# its path held before.


def as_rows(batch, *, dim: int):
    """The chunk stage's rows (``ROW_KEYS``) → ``schema.row_schema``: embedding and changed null."""
    import pyarrow as pa

    from raychunk.schema import row_schema

    schema = row_schema(dim)
    n = batch.num_rows
    columns = [
        batch.column(f.name).cast(f.type) if f.name in batch.column_names else pa.nulls(n, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def new_rows(batch, *, dim: int, known: DocIndex, root: str = ""):
    """The chunk stage's rows → ``row_schema`` rows keyed for the join: ``id:`` + doc_id for a
    ``reuse`` row and for a document whose bytes and format ``known`` (the previous output's ``ok``
    documents) holds, ``src:`` + its identity (source relative to ``root``) for the rest."""
    import pyarrow as pa

    rows = as_rows(batch, dim=dim)
    keys = []
    seen: dict[tuple, str] = {}
    for kind, doc_id, source in zip(
        rows.column("row_type").to_pylist(),
        rows.column("doc_id").to_pylist(),
        rows.column("source").to_pylist(),
        strict=True,
    ):
        if (doc_id, source) not in seen:
            fmt = format_from_name(source or "") or "unknown"
            by_id = doc_id is not None and (kind == "reuse" or doc_key(doc_id, fmt) in known)
            seen[doc_id, source] = f"id:{doc_id}" if by_id else f"src:{identity_of(source or '', root)}"
        keys.append(seen[doc_id, source])
    return rows.set_column(rows.schema.get_field_index("group"), "group", pa.array(keys, pa.string()))


def text_sha256(texts) -> list[bytes | None]:
    """SHA-256 of each text's UTF-8 bytes (what decides that a new chunk's text is an old one's)."""
    import hashlib

    return [None if t is None else hashlib.sha256(t.encode()).digest() for t in texts]


def previous_chunk_rows(batch, *, dim: int, root: str = ""):
    """The previous output's ``chunks/`` rows → ``row_schema`` rows: each whole, as ``previous_chunk``
    under its doc_id, and again as ``previous_text`` (id, source, text hash, vector) under its
    document's identity (its source relative to ``root``, the previous run's input root)."""
    import pyarrow as pa

    rows = as_rows(batch, dim=dim)
    n = rows.num_rows
    digests = pa.array(text_sha256(rows.column("text").to_pylist()), pa.binary(32))
    ids, sources = rows.column("doc_id"), rows.column("source")
    whole = rows.set_column(0, "row_type", pa.array(["previous_chunk"] * n, pa.string()))
    whole = whole.set_column(
        whole.schema.get_field_index("group"), "group", pa.array([f"id:{d}" for d in ids.to_pylist()])
    )
    whole = whole.set_column(whole.schema.get_field_index("text_sha256"), "text_sha256", digests)
    short = {
        "row_type": pa.array(["previous_text"] * n, pa.string()),
        "chunk_id": rows.column("chunk_id"),
        "source": sources,
        "embedding": rows.column("embedding"),
        "group": pa.array([f"src:{identity_of(s, root)}" for s in sources.to_pylist()], pa.string()),
        "text_sha256": digests,
    }
    return pa.concat_tables([whole, as_rows(pa.table(short), dim=dim)])


def previous_document_rows(batch, *, dim: int):
    """The previous output's ``documents/`` rows → ``row_schema`` rows of type ``previous_document``
    under their doc_id, the whole documents row as JSON in ``document``."""
    import pyarrow as pa

    docs = [
        {**d, "source_bytes": d["source_bytes"].hex() if d.get("source_bytes") else None}  # JSON: hex
        for d in batch.to_pylist()
    ]
    table = pa.table(
        {
            "row_type": pa.array(["previous_document"] * len(docs), pa.string()),
            "document": pa.array([json.dumps(d, ensure_ascii=False) for d in docs], pa.large_string()),
            "doc_id": pa.array([d["doc_id"] for d in docs], pa.string()),
            "source": pa.array([d["source"] for d in docs], pa.string()),
            "group": pa.array([f"id:{d['doc_id']}" for d in docs], pa.string()),
        }
    )
    return as_rows(table, dim=dim)


def merge_previous(group):
    """All rows of one ``group`` key, new and previous (``row_schema``) → the rows to write.

    A ``reuse`` row (the document's bytes are unchanged) becomes the previous output's documents and
    chunk rows under its new source. Rows the chunk stage made keep their own, and a chunk takes the
    vector of a previous chunk of the group with the same id and text (``reused`` = ``id``), else of
    one with the same text (``text``: the same source, or the same bytes chunked again), else waits
    for the embedder. Previous rows no new row asked for are dropped. ``changed`` marks what a
    vector store must upsert: a chunk id the previous output lacks, or a chunk whose source or text
    differs; on a documents row, false marks one copied from the previous output (null: parsed in
    this run)."""
    import pyarrow as pa

    kind = group.column("row_type").to_pylist()
    at = {k: [i for i, x in enumerate(kind) if x == k] for k in set(kind)}
    previous = at.get("previous_chunk", [])
    ids = group.column("chunk_id").to_pylist()
    sources = group.column("source").to_pylist()
    digests = group.column("text_sha256").to_pylist()
    parts = []
    for r in at.get("reuse", []):
        ok = [
            i
            for i in at.get("previous_document", [])
            if json.loads(group["document"][i].as_py())["status"] == "ok"
        ]
        if not ok:
            raise RuntimeError(
                f"{sources[r]}: its document is not in the previous output, which the index said it was"
            )
        doc = json.loads(group["document"][ok[0]].as_py())
        doc["source"] = sources[r]
        doc["source_bytes"] = json.loads(group["document"][r].as_py() or "{}").get("source_bytes")
        rows = group.take(pa.array([ok[0], *previous], pa.int64()))
        moved = [sources[i] != sources[r] for i in previous]
        rows = rows.set_column(0, "row_type", pa.array(["document"] + ["chunk"] * len(previous), pa.string()))
        rows = rows.set_column(
            1,
            "document",
            pa.array([json.dumps(doc, ensure_ascii=False)] + [None] * len(previous), pa.large_string()),
        )
        rows = rows.set_column(
            rows.schema.get_field_index("source"),
            "source",
            pa.array([sources[r]] * rows.num_rows, pa.string()),
        )
        rows = rows.set_column(
            rows.schema.get_field_index("changed"), "changed", pa.array([False, *moved], pa.bool_())
        )
        rows = rows.set_column(
            rows.schema.get_field_index("reused"),
            "reused",
            pa.array([None] + ["id"] * len(previous), pa.string()),
        )
        parts.append(rows)
    new = sorted(at.get("document", []) + at.get("chunk", []))
    if new:
        old = previous + at.get("previous_text", [])
        by_id = {ids[j]: j for j in old}
        by_text: dict[bytes, int] = {}
        for j in old:
            by_text.setdefault(digests[j], j)
        mine = text_sha256(group.column("text").take(pa.array(new, pa.int64())).to_pylist())
        match, how, changed = [], [], []
        for i, digest in zip(new, mine, strict=True):
            j = by_id.get(ids[i])
            if kind[i] != "chunk":
                j, reused, upsert = None, None, None
            elif j is not None and digests[j] == digest:
                reused, upsert = "id", sources[j] != sources[i]
            else:
                j = by_text.get(digest)
                reused, upsert = (None if j is None else "text"), True
            match.append(j)
            how.append(reused)
            changed.append(upsert)
        rows = group.take(pa.array(new, pa.int64()))
        reused = group.column("embedding").take(pa.array(match, pa.int64()))
        rows = rows.set_column(rows.schema.get_field_index("embedding"), "embedding", reused)
        rows = rows.set_column(
            rows.schema.get_field_index("changed"), "changed", pa.array(changed, pa.bool_())
        )
        rows = rows.set_column(rows.schema.get_field_index("reused"), "reused", pa.array(how, pa.string()))
        parts.append(rows)
    return pa.concat_tables(parts) if parts else group.slice(0, 0)


def staged_chunk_ids(batch, *, previous: bool):
    """``chunk_id`` rows of a ``chunks/`` table → ``(chunk_id, previous)``: which run they are from."""
    import pyarrow as pa

    n = batch.num_rows
    return pa.table({"chunk_id": batch.column("chunk_id"), "previous": pa.array([previous] * n, pa.bool_())})


def diff_chunk_id(group: dict) -> dict:
    """The rows of one chunk id from the new output and the previous one → one row: in which."""
    import numpy as np

    return {
        "chunk_id": group["chunk_id"][:1],
        "in_previous": np.array([bool(group["previous"].any())]),
        "in_current": np.array([bool((~group["previous"]).any())]),
    }


def diff_counts(batch: dict) -> dict:
    """``diff_chunk_id`` rows → one row: unchanged (in both), new (only in the new output), removed."""
    import numpy as np

    prev, cur = batch["in_previous"], batch["in_current"]
    counts = {"unchanged": prev & cur, "new": cur & ~prev, "removed": prev & ~cur}
    return {k: np.array([int(v.sum())], dtype=np.int64) for k, v in counts.items()}


def removed_ids(batch: dict) -> dict:
    """``diff_chunk_id`` rows → the ids only the previous output holds: ``delta/removed``."""
    return {"chunk_id": batch["chunk_id"][batch["in_previous"] & ~batch["in_current"]]}
