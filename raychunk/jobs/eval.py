"""The eval job: chunk and embed the corpus under every setting in one Ray pass, embed the labelled
questions with the same model, score, recommend, and write the report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from raychunk.config import check_limits
from raychunk.evaluation import LabelledQuery, evaluate, match_source, resolve_queries

__all__ = ["collect_eval_rows", "embed_queries", "prepare_eval", "run_eval"]


def collect_eval_rows(ds) -> tuple[dict[str, dict], dict[str, list[dict]], dict]:
    """Rows of the eval dataset → (documents by source, chunk dicts by setting, vectors by setting),
    chunks sorted by (source, chunk_index) so the result does not depend on Ray's block order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = [b for b in ds.iter_batches(batch_format="pyarrow", batch_size=None) if b.num_rows]
    if not tables:
        raise ValueError("the eval job produced no rows: is the input empty?")
    table = pa.concat_tables(tables, promote_options="default")
    docs_t = table.filter(pc.equal(table.column("row_type"), "document"))
    documents = {}
    for source, doc_id, blob in zip(
        docs_t.column("source").to_pylist(),
        docs_t.column("doc_id").to_pylist(),
        docs_t.column("document").to_pylist(),
    ):
        documents[source] = {**json.loads(blob), "doc_id": doc_id}
    chunk_t = table.filter(pc.equal(table.column("row_type"), "chunk"))
    cols = [
        "setting",
        "source",
        "char_start",
        "char_end",
        "n_tokens",
        "text",
        "header",
        "table_part",
        "parent_id",
        "chunk_index",
        "header_tokens",
        "overlap_tokens",
        "over_limit",
    ]
    rows = chunk_t.select(cols).to_pylist()
    emb = chunk_t.column("embedding").combine_chunks()
    dim = emb.type.list_size
    matrix = emb.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)
    order = sorted(
        range(len(rows)), key=lambda i: (rows[i]["setting"], rows[i]["source"], rows[i]["chunk_index"])
    )
    chunks: dict[str, list[dict]] = {}
    picks: dict[str, list[int]] = {}
    for i in order:
        chunks.setdefault(rows[i]["setting"], []).append(rows[i])
        picks.setdefault(rows[i]["setting"], []).append(i)
    vectors = {label: matrix[idx] for label, idx in picks.items()}
    return documents, chunks, vectors


def embed_queries(
    model: str, texts: list[str], *, device: str = "auto", normalize: bool = True, backend: str = "torch"
):
    """The questions embedded with the chunks' model and backend, in the driver (a few dozen short texts)."""
    from raychunk.embed import _load

    st, _ = _load(model, device, backend)
    return st.encode(
        texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=normalize, show_progress_bar=False
    )


def prepare_eval(cfg, settings, queries: list[LabelledQuery]) -> dict:
    """The Ray part: chunk and embed the corpus under every setting over one parse, collect the
    rows, locate every passage, and embed the questions with the same model. Returns the keyword
    arguments of ``evaluate`` that come from the corpus."""
    import ray

    from raychunk.io import list_inputs, readable
    from raychunk.pipeline import build, find_duplicates, init_ray, plan_embedding, read_files

    in_fs, scheme, files = list_inputs(
        cfg.input, follow_symlinks=cfg.limits.follow_symlinks, max_file_mb=cfg.limits.max_file_mb
    )
    files = readable(files)
    listed = [scheme + f.path for f in files]
    for q in queries:  # a label that names no document fails before anything runs
        try:
            match_source(q.source, listed)
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
    init_ray(cfg)
    plan = plan_embedding(cfg, ray.cluster_resources())
    duplicates = find_duplicates(files, in_fs, scheme, cfg)  # one copy indexed; labels follow it
    ds = build(
        read_files(files, in_fs, cfg), cfg, scheme=scheme, plan=plan, settings=settings, duplicates=duplicates
    )
    documents, chunks, vectors = collect_eval_rows(ds)
    queries = [
        dataclasses.replace(q, source=duplicates[found])
        if (found := match_source(q.source, listed)) in duplicates
        else q
        for q in queries
    ]
    for q in queries:
        if documents[match_source(q.source, sorted(documents))].get("status") != "ok":
            raise ValueError(
                f"query {q.qid} ({q.query!r}): its document {q.source} did not parse "
                f"({documents[match_source(q.source, sorted(documents))].get('reason')}), so it has no passages"
            )
    resolved = resolve_queries(queries, {s: d["text"] for s, d in documents.items()})
    query_vectors = embed_queries(
        cfg.embedder.model,
        [q.query for q in resolved],
        device="cpu" if plan.gpus_per_actor == 0 else cfg.embedder.device,
        normalize=cfg.embedder.normalize,
        backend=cfg.embedder.backend,
    )
    return {
        "queries": resolved,
        "query_vectors": query_vectors,
        "documents": documents,
        "chunks": chunks,
        "vectors": vectors,
        "dim": plan.dim,
        "file_sizes": {scheme + f.path: f.size for f in files},
    }


def run_eval(
    cfg,
    settings,
    queries: list[LabelledQuery],
    *,
    k: int = 5,
    parent_budget: int = 512,
    output: str | Path | None = None,
    dtype: str = "float32",
    index=None,
    plot: bool = True,
    seed: int = 0,
) -> dict:
    """Chunk and embed the corpus under every setting on Ray, embed the questions with the same
    model, score, recommend, and write report.json / report.md / plot.png under ``output`` when given."""
    if k < 1:
        raise ValueError(f"--k {k}: expected at least 1")
    if parent_budget < 1:
        raise ValueError(f"--parent-budget {parent_budget}: expected a token count >= 1")
    check_limits(cfg)  # every doc type's caps within the embedder's input limit
    inputs = prepare_eval(cfg, settings, queries)
    report = evaluate(
        **inputs, settings=settings, k=k, parent_budget=parent_budget, dtype=dtype, index=index, seed=seed
    )
    report["embedder"] = cfg.embedder.model
    if output is not None:
        from raychunk.report import write_eval

        report["written"] = write_eval(report, output, plot=plot)
    return report
