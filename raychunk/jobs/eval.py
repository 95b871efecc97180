"""The eval job: parse the labelled documents and locate every passage (a quote not found fails the
run here, in parse time, listing every one); embed the questions; then chunk and embed the corpus
under every setting in one Ray pass that checks the spans and keeps each block's top k
(``evaluation.partials``); merge on the driver, score, recommend, and write the report. The driver
receives what the labelled set needs, never the corpus's text or vectors."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

from raychunk.evaluation import LabelledQuery, match_source
from raychunk.evaluation.labels import apply_locations, passages_by_source
from raychunk.evaluation.metrics import READ_BUDGET
from raychunk.evaluation.partials import collect_partials
from raychunk.evaluation.report import evaluate_partials
from raychunk.peers import require_peers
from raychunk.plan import JobPlan, resolve_plan
from raychunk.progress import JobProgress
from raychunk.report.eval import EvalReport, build_eval_report, write_eval

log = logging.getLogger(__name__)

__all__ = ["embed_queries", "eval_job", "prepare_eval", "run_eval"]


def embed_queries(
    model: str, texts: list[str], *, device: str = "auto", normalize: bool = True, backend: str = "torch"
):
    """The questions embedded with the chunks' model and backend, in the driver (a few dozen short texts)."""
    from raychunk.embed import load_model

    st, _ = load_model(model, device, backend)
    return st.encode(
        texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=normalize, show_progress_bar=False
    )


def prepare_eval(
    job: JobPlan,
    settings,
    queries: list[LabelledQuery],
    *,
    k: int = 5,
    parent_budget: int = 512,
    depth: int = 0,
    skip_unlocated: bool = False,
    cache: str | None = None,
) -> dict:
    """The Ray part: parse the labelled documents and locate their passages (failing on any not
    found, unless ``skip_unlocated``), embed the questions, then chunk and embed the corpus under
    every setting over one parse, keeping each block's top ``max(k, depth)`` where the blocks are,
    and merge what comes back. Returns the keyword arguments of ``evaluate_partials`` that come
    from the corpus."""
    from raychunk.corpus import find_duplicates, list_files
    from raychunk.document_steps import documents, for_eval
    from raychunk.embed import embed
    from raychunk.evaluation.partials import Retrieval, retrieve
    from raychunk.pipeline import execute, plan_embedding, read_files, start_ray

    in_fs, scheme, files = list_files(job)
    named = name_sources(queries, [scheme + f.path for f in files])  # fails before anything runs
    cluster = start_ray(job.config)
    plan = plan_embedding(job, cluster.resources)
    duplicates = find_duplicates(files, in_fs, scheme, job)  # one copy indexed; labels follow it
    queries, kept = follow_duplicates(queries, named, duplicates)
    resolved, labels = locate_labels(job, queries, kept, files, in_fs, scheme, skip_unlocated=skip_unlocated)
    query_vectors = embed_queries_as(job, plan, [q.query for q in resolved])
    retrieval = Retrieval(passages_by_source(resolved), query_vectors, max(k, depth), parent_budget, cache)
    started = time.perf_counter()
    progress = JobProgress("eval", documents=len(files), nbytes=sum(f.size for f in files), embedding=True)
    steps = [
        documents(job, scheme=scheme, last=for_eval(job, settings, retrieval), duplicates=duplicates),
        progress.step(),
        embed(job, plan, on_batch=progress.at("embed"), dedupe=True, cache=retrieval.cache),
        retrieve(retrieval),
    ]
    ds = execute(read_files(files, in_fs, job), steps, job)
    with progress.shown():
        partials = collect_partials(
            ds.iter_batches(batch_format="pyarrow", batch_size=None), queries=len(resolved), k=max(k, depth)
        )
    if not partials.documents:
        raise ValueError("the eval job produced no rows: is the input empty?")
    partials.embedding["seconds"] = round(time.perf_counter() - started, 1)
    return {
        "queries": resolved,
        "labels": labels,
        "partials": partials,
        "dim": plan.dim,
        "file_sizes": {scheme + f.path: f.size for f in files},
    }


def name_sources(queries: list[LabelledQuery], listed: list[str]) -> list[str]:
    """Each question's document among the listed sources; a label that names none fails, naming it."""
    named = []
    for q in queries:
        try:
            named.append(match_source(q.source, listed))
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
    return named


def follow_duplicates(queries: list[LabelledQuery], named: list[str], duplicates: dict[str, str]):
    """``(queries, kept)``: a label on a duplicate follows the kept copy (the one indexed); the
    others keep their source as written. ``kept``: each question's indexed source."""
    followed = [
        dataclasses.replace(q, source=duplicates[s]) if s in duplicates else q for q, s in zip(queries, named)
    ]
    return followed, [duplicates.get(s, s) for s in named]


def locate_labels(job: JobPlan, queries, kept: list[str], files, fs, scheme: str, *, skip_unlocated: bool):
    """The labelled documents parsed and their questions' passages located, on Ray, before any
    chunking or embedding (``document_steps.locate``): ``(resolved questions, the report's labels
    section)``. A passage not found fails here, listing every one, unless ``skip_unlocated``."""
    from raychunk.document_steps import locate
    from raychunk.pipeline import execute, read_files

    to_locate: dict[str, list] = {}  # a document's source → its questions, as (index, query)
    for i, (q, s) in enumerate(zip(queries, kept)):
        to_locate.setdefault(s, []).append((i, q))
    t = time.perf_counter()
    located: dict[int, dict] = {}
    labelled_files = [f for f in files if scheme + f.path in to_locate]
    pre = execute(read_files(labelled_files, fs, job), [locate(job, scheme=scheme, labelled=to_locate)], job)
    for batch in pre.iter_batches(batch_format="pyarrow", batch_size=None):
        for found in batch.column("located").to_pylist():
            located.update({r["query"]: r for r in found})
    resolved, labels = apply_locations(queries, kept, located, skip_unlocated=skip_unlocated)
    labels["seconds"] = round(time.perf_counter() - t, 1)
    log.info(
        "%d labelled passages located in %d documents in %.1f s",
        len(located),
        len(to_locate),
        labels["seconds"],
    )
    if not resolved:
        raise ValueError(
            f"none of the {len(queries)} labelled questions has its passages located: nothing to score"
        )
    return resolved, labels


def embed_queries_as(job: JobPlan, plan, texts: list[str]):
    """The questions embedded as the chunks are: the job's model, backend and normalisation, on the
    CPU unless the embedding pool has GPUs."""
    cfg = job.config
    return embed_queries(
        job.model.local,
        texts,
        device="cpu" if plan.gpus_per_actor == 0 else cfg.embedder.device,
        normalize=cfg.embedder.normalize,
        backend=cfg.embedder.backend,
    )


def run_eval(cfg, settings, queries: list[LabelledQuery], **options) -> dict:
    """``eval_job``'s report (``options``: its keywords) as ``report.json`` holds it, with ``written``
    once the files are written."""
    return eval_job(cfg, settings, queries, **options).as_json()


def eval_job(
    cfg,
    settings,
    queries: list[LabelledQuery],
    *,
    k: int = 5,
    parent_budget: int = 512,
    read_budget: int = READ_BUDGET,
    depth: int = 20,
    skip_unlocated: bool = False,
    compare: list[tuple[str, str]] | None = None,
    output: str | Path | None = None,
    dtype: str = "float32",
    index=None,
    plot: bool = True,
    seed: int = 0,
    cache: str | None = None,
) -> EvalReport:
    """Locate the passages, embed the questions, chunk, embed and score the corpus under every
    setting on Ray, merge the blocks' top ``max(k, depth)`` (``depth``: results a reader may go
    through within ``read_budget`` tokens), recommend, and write report.json / report.md / plot.png
    under ``output`` when given. ``compare``: pairs of setting labels whose paired differences are
    reported (default: each ``structure X`` against ``fixed X``). Each distinct chunk text is
    embedded once across the settings; ``cache``: a folder that keeps the vectors across runs (the
    report's ``embedding`` says how many texts were embedded and how many reused)."""
    if k < 1:
        raise ValueError(f"--k {k}: expected at least 1")
    if parent_budget < 1:
        raise ValueError(f"--parent-budget {parent_budget}: expected a token count >= 1")
    if read_budget < 1:
        raise ValueError(f"--read-budget {read_budget}: expected a token count >= 1")
    if depth < 1:
        raise ValueError(f"--read-depth {depth}: expected at least 1")
    labels = {s.label for s in settings}
    for pair in compare or ():
        for label in pair:
            if label not in labels:
                raise ValueError(
                    f"--compare {label!r}: not a setting of this run ({', '.join(sorted(labels))})"
                )
    job = resolve_plan(cfg)  # every doc type's caps within the embedder's input limit
    require_peers(settings)
    inputs = prepare_eval(
        job,
        settings,
        queries,
        k=k,
        parent_budget=parent_budget,
        depth=depth,
        skip_unlocated=skip_unlocated,
        cache=cache,
    )
    computed = evaluate_partials(
        **inputs,
        settings=settings,
        k=k,
        parent_budget=parent_budget,
        read_budget=read_budget,
        compare=compare,
        dtype=dtype,
        index=index,
        seed=seed,
    )
    report = build_eval_report(computed, embedder=cfg.embedder.model)
    if output is not None:
        report = dataclasses.replace(report, written=tuple(write_eval(report, output, plot=plot)))
    return report
