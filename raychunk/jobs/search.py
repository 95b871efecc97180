"""The search command, in this process and without Ray: a question embedded as the output's chunks
were, scored against every vector of the output, the best ``k`` printed as the retriever sees them.

A ``raychunk run`` output is read shard by shard, a batch of rows at a time, with a running top k:
memory holds one batch and ``k`` hits, whatever the size of the output. The shards are those its
``report.json`` names, so an incremental output (``run --previous``) is searched as it stands: its
``chunks/`` hold every current row, and ``delta/`` is only what changed. A LanceDB table written by
``raychunk export`` is searched by LanceDB itself.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import TextIO

__all__ = ["HIT_COLUMNS", "Hit", "SearchResult", "print_hits", "search", "top_k"]

# What a hit shows: the embedded text and where it came from.
HIT_COLUMNS = ["chunk_id", "source", "heading_path", "page_start", "page_end", "doc_type", "text"]
_BATCH_ROWS = 4096


@dataclass(frozen=True, slots=True)
class Hit:
    rank: int
    score: float
    chunk_id: str
    source: str
    heading_path: tuple[str, ...]
    page_start: int | None
    page_end: int | None
    doc_type: str | None
    text: str

    def to_dict(self) -> dict:
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "chunk_id": self.chunk_id,
            "source": self.source,
            "heading_path": list(self.heading_path),
            "page_start": self.page_start,
            "page_end": self.page_end,
            "doc_type": self.doc_type,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    where: str  # "parquet" or "lancedb"
    model: str
    vectors: int  # how many were scored
    files: int
    seconds: float
    hits: tuple[Hit, ...]


def search(uri: str, query: str, *, k: int = 5, table: str | None = None) -> SearchResult:
    """The ``k`` chunks of the output (or exported LanceDB database) at ``uri`` nearest ``query`` by
    cosine similarity, best first."""
    from raychunk.embed import QueryEncoder

    if k < 1:
        raise ValueError(f"--k {k}: ask for at least one hit")
    t0 = time.perf_counter()
    lance = _lancedb_at(uri, table)
    if lance is not None:
        vectors = lance.vector_settings()
        vector = QueryEncoder(vectors)([query])[0]
        rows = lance.nearest(vector, k, HIT_COLUMNS)
        hits = tuple(_hit(i + 1, r) for i, r in enumerate(rows))
        scored, files = lance.count(), 0
        where = "lancedb"
    else:
        from raychunk.incremental import open_previous

        output = open_previous(uri, what="search")
        vectors = output.settings.get("vectors")
        if not vectors:
            raise ValueError(
                f"search {uri}: the output has no vectors (it was run with --no-embed); run it with the embedder"
            )
        vector = QueryEncoder(vectors)([query])[0]
        paths = output.files("chunks")
        scored, best = top_k(_batches(output.fs, paths), vector, k)
        hits = tuple(_hit(i + 1, r) for i, r in enumerate(best))
        files, where = len(paths), "parquet"
    return SearchResult(query, where, vectors["model"], scored, files, time.perf_counter() - t0, hits)


def top_k(batches, vector, k: int) -> tuple[int, list[dict]]:
    """Over Arrow batches holding ``embedding`` and ``HIT_COLUMNS``: how many vectors were scored and
    the ``k`` rows of highest cosine similarity to ``vector`` (each with its ``score``), best first;
    ties go to the smaller ``chunk_id``. Only one batch and ``k`` rows are held at a time."""
    import numpy as np
    import pyarrow as pa

    q = np.asarray(vector, dtype=np.float32)
    q = q / (np.linalg.norm(q) or 1.0)
    best: list[dict] = []
    scored = 0
    for batch in batches:
        column = batch.column("embedding")
        keep = np.flatnonzero(column.is_valid().to_numpy(zero_copy_only=False))
        if not len(keep):
            continue
        if len(keep) < batch.num_rows:
            batch, column = batch.take(pa.array(keep)), column.take(pa.array(keep))
        dim = column.type.list_size
        if dim != len(q):
            raise ValueError(f"the output's vectors have {dim} dimensions, the query's {len(q)}")
        matrix = column.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
        norms = np.linalg.norm(matrix, axis=1)
        scores = matrix @ q / np.where(norms > 0, norms, 1.0)
        scored += len(scores)
        take = np.argsort(-scores, kind="stable")[:k] if len(scores) > k else np.arange(len(scores))
        rows = batch.select(HIT_COLUMNS).take(pa.array(take)).to_pylist()
        for row, score in zip(rows, scores[take]):
            row["score"] = float(score)
        best = sorted(best + rows, key=lambda r: (-r["score"], r["chunk_id"]))[:k]
    return scored, best


def _batches(fs, paths: list[str]):
    import pyarrow.parquet as pq

    for path in paths:
        with fs.open_input_file(path) as f:
            yield from pq.ParquetFile(f).iter_batches(
                batch_size=_BATCH_ROWS, columns=[*HIT_COLUMNS, "embedding"]
            )


def _lancedb_at(uri: str, table: str | None):
    """The exported table when ``uri`` is a LanceDB database rather than a run output."""
    from raychunk.destinations.lancedb import DEFAULT_TABLE, LanceDBTable, is_database
    from raychunk.io import resolve_output

    fs, path = resolve_output(uri)
    if not is_database(fs, path, table or DEFAULT_TABLE):
        if table:
            raise ValueError(f"search {uri} --table {table}: no such LanceDB table there")
        return None
    return LanceDBTable.open(uri, table or DEFAULT_TABLE)


def _hit(rank: int, row: dict) -> Hit:
    return Hit(
        rank=rank,
        score=float(row["score"]),
        chunk_id=row["chunk_id"],
        source=row["source"],
        heading_path=tuple(row.get("heading_path") or ()),
        page_start=row.get("page_start"),
        page_end=row.get("page_end"),
        doc_type=row.get("doc_type"),
        text=row["text"],
    )


def print_hits(result: SearchResult, *, as_json: bool = False, out: TextIO | None = None) -> None:
    """Each hit as the retriever sees it: rank, score, source, heading path, pages, chunk id, and the
    embedded text in full. ``as_json``: one object per hit a line."""
    out = out or sys.stdout
    for hit in result.hits:
        if as_json:
            out.write(json.dumps(hit.to_dict(), ensure_ascii=False) + "\n")
            continue
        facts = [f"#{hit.rank}", f"score {hit.score:.4f}", hit.source]
        if hit.page_start:
            pages = f"p{hit.page_start}" + (
                f"-{hit.page_end}" if hit.page_end not in (None, hit.page_start) else ""
            )
            facts.append(pages)
        facts.append(f"chunk {hit.chunk_id}")
        out.write(f"--- {' · '.join(facts)} ---\n")
        path = " > ".join(hit.heading_path)
        if path and not hit.text.startswith(path):  # else the text's own header line shows it
            out.write(f"(heading path: {path})\n")
        out.write(f"{hit.text}\n\n")
    where = f"{result.files} shard(s)" if result.where == "parquet" else "a LanceDB table"
    print(
        f"searched {result.vectors:,} vectors in {where} with {result.model}: "
        f"{len(result.hits)} hit(s) in {result.seconds:.1f} s",
        file=sys.stderr,
    )
