"""The eval job: embed the labelled questions, then chunk and embed the corpus under every setting
in one Ray pass that also locates the passages, checks the spans and keeps each block's top k
(``evaluation.partials``); merge on the driver, score, recommend, and write the report. The driver
receives what the labelled set needs, never the corpus's text or vectors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from raychunk.config import check_limits
from raychunk.evaluation import LabelledQuery, match_source
from raychunk.evaluation.partials import collect_partials
from raychunk.evaluation.report import evaluate_partials

__all__ = ["embed_queries", "prepare_eval", "run_eval"]


def embed_queries(
    model: str, texts: list[str], *, device: str = "auto", normalize: bool = True, backend: str = "torch"
):
    """The questions embedded with the chunks' model and backend, in the driver (a few dozen short texts)."""
    from raychunk.embed import _load

    st, _ = _load(model, device, backend)
    return st.encode(
        texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=normalize, show_progress_bar=False
    )


def prepare_eval(
    cfg, settings, queries: list[LabelledQuery], *, k: int = 5, parent_budget: int = 512
) -> dict:
    """The Ray part: embed the questions, then chunk and embed the corpus under every setting over
    one parse, locating every passage and keeping each block's top ``k`` where the blocks are, and
    merge what comes back. Returns the keyword arguments of ``evaluate_partials`` that come from
    the corpus."""
    import ray

    from raychunk.io import list_inputs, readable
    from raychunk.pipeline import Retrieval, build, find_duplicates, init_ray, plan_embedding, read_files

    in_fs, scheme, files = list_inputs(
        cfg.input, follow_symlinks=cfg.limits.follow_symlinks, max_file_mb=cfg.limits.max_file_mb
    )
    files = readable(files)
    listed = [scheme + f.path for f in files]
    named = []
    for q in queries:  # a label that names no document fails before anything runs
        try:
            named.append(match_source(q.source, listed))
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
    init_ray(cfg)
    plan = plan_embedding(cfg, ray.cluster_resources())
    duplicates = find_duplicates(files, in_fs, scheme, cfg)  # one copy indexed; labels follow it
    # A label on a duplicate follows the kept copy; the others keep their source as written.
    queries = [
        dataclasses.replace(q, source=duplicates[s]) if s in duplicates else q for q, s in zip(queries, named)
    ]
    labelled: dict[str, list] = {}  # a document's source → its questions, as (index, query)
    for i, (q, s) in enumerate(zip(queries, named)):
        labelled.setdefault(duplicates.get(s, s), []).append((i, q))
    query_vectors = embed_queries(
        cfg.embedder.model,
        [q.query for q in queries],
        device="cpu" if plan.gpus_per_actor == 0 else cfg.embedder.device,
        normalize=cfg.embedder.normalize,
        backend=cfg.embedder.backend,
    )
    retrieval = Retrieval(labelled, query_vectors, k, parent_budget)
    ds = build(
        read_files(files, in_fs, cfg),
        cfg,
        scheme=scheme,
        plan=plan,
        settings=settings,
        duplicates=duplicates,
        retrieval=retrieval,
    )
    partials = collect_partials(
        ds.iter_batches(batch_format="pyarrow", batch_size=None), queries=len(queries), k=k
    )
    if not partials.documents:
        raise ValueError("the eval job produced no rows: is the input empty?")
    return {
        "queries": partials.resolve(queries),
        "partials": partials,
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
    """Embed the questions, chunk, embed and score the corpus under every setting on Ray, merge the
    blocks' top k, recommend, and write report.json / report.md / plot.png under ``output`` when given."""
    if k < 1:
        raise ValueError(f"--k {k}: expected at least 1")
    if parent_budget < 1:
        raise ValueError(f"--parent-budget {parent_budget}: expected a token count >= 1")
    check_limits(cfg)  # every doc type's caps within the embedder's input limit
    inputs = prepare_eval(cfg, settings, queries, k=k, parent_budget=parent_budget)
    report = evaluate_partials(
        **inputs, settings=settings, k=k, parent_budget=parent_budget, dtype=dtype, index=index, seed=seed
    )
    report["embedder"] = cfg.embedder.model
    if output is not None:
        from raychunk.report import write_eval

        report["written"] = write_eval(report, output, plot=plot)
    return report
