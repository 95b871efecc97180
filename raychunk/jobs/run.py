"""The run job: parse, classify, chunk and embed the inputs on Ray into Parquet shards, then publish
the output and its report (``report.json`` / ``report.md``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import time

from raychunk import publish
from raychunk.config import ConfigError, RunConfig
from raychunk.corpus import duplicates_of, list_corpus, plan_corpus
from raychunk.document_steps import chunk, documents
from raychunk.embed import embed
from raychunk.listing import InputPlanner
from raychunk.merge import join_previous
from raychunk.pipeline import execute, init_ray, plan_embedding, read_blocks, write
from raychunk.plan import JobPlan, resolve_plan
from raychunk.progress import JobProgress
from raychunk.report.run import (
    ChunkIdCounts,
    Delta,
    Incremental,
    RunReport,
    build_run_report,
    render_run_markdown,
)

__all__ = ["fingerprint", "run", "run_job", "settings_fingerprint"]

log = logging.getLogger(__name__)


def run(cfg: RunConfig) -> dict:
    """Run the job; returns the run report as ``report.json`` holds it."""
    return run_job(cfg).as_json()


def run_job(cfg: RunConfig) -> RunReport:
    """Run the job; returns the run report (also written as report.json and report.md)."""
    import ray

    t0 = time.perf_counter()
    job = resolve_plan(cfg)  # fails on a bad config before starting anything
    output = publish.open_output(cfg.output, overwrite=cfg.output_files.overwrite)
    out_fs = output.fs
    t_ray = time.perf_counter()
    where = init_ray(cfg)
    ray_start = time.perf_counter() - t_ray
    planner = list_corpus(job)
    cluster = ray.cluster_resources()
    plan = plan_embedding(job, cluster) if cfg.embedder.enabled else None
    settings = settings_fingerprint(job, plan)
    previous, known, unchanged = _previous(cfg, settings)
    recorded = {**fingerprint(job), "previous_output": previous.identity if previous else None}
    staging = publish.open_staging(out_fs, output.path, recorded, resume=cfg.output_files.resume)
    inputs = plan_inputs(
        planner,
        job,
        cpus=cluster.get("CPU", 1),
        resume=(out_fs, staging.path, cfg.output_files.compression) if staging.resumed else None,
    )
    if staging.resumed:
        log.info(
            "resume: %d of %d inputs already done; %d to go", inputs.done, inputs.files, inputs.todo_files
        )
    publish.write_documents(
        out_fs,
        staging.path,
        f"part-{staging.attempt}-refused",
        refused_rows(inputs.refused, inputs.scheme),
        cfg.output_files.compression,
    )
    log.info("raychunk: %d files on %s Ray (%s); embedding: %s", inputs.files, where, cluster, plan)
    stats = ""
    if inputs.todo_files:
        duplicates = duplicates_of(inputs, job)
        sink = staging.sink(out_fs, dim=plan.dim if plan else None, files=cfg.output_files)
        progress = JobProgress(
            "run", documents=inputs.todo_files, nbytes=inputs.todo_bytes, embedding=plan is not None
        )
        steps = [
            documents(job, scheme=inputs.scheme, last=chunk(job), duplicates=duplicates, unchanged=unchanged),
            progress.step(),
            *(join_previous(previous, known, job, plan.dim) if previous is not None else ()),
            *([embed(job, plan, on_batch=progress.at("embed"))] if plan is not None else ()),
        ]
        ds = execute(read_blocks(inputs.blocks, inputs.fs, job), steps, job)
        with progress.shown():
            try:
                write(ds, sink, job)
            except BaseException:
                log.error(
                    "the run stopped; what it wrote is kept in %s: run again with --resume to finish it",
                    staging.path,
                )
                raise
        stats = _stage_stats(ds)
    staged = publish.gather_staged(out_fs, staging, cfg.output_files.compression, files=inputs.files)
    wall, generated = time.perf_counter() - t0, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report = build_run_report(
        cfg,
        staged.documents,
        inputs,
        staged.shards,
        plan,
        stats,
        wall,
        where,
        cluster,
        ray_start=ray_start,
        root=job.root,
        generated=generated,
        settings=settings,
        resumed={"inputs_already_done": inputs.done} if staging.resumed else None,
        incremental=_incremental_report(out_fs, staging, previous, staged.shards, unchanged, job)
        if previous is not None
        else None,
    )
    return publish.publish_output(
        out_fs,
        staging,
        output.path,
        staged,
        report,
        render_run_markdown,
        overwrite=cfg.output_files.overwrite,
    )


def plan_inputs(planner: InputPlanner, job: JobPlan, **how):
    """The listed inputs in read blocks (a seam: tests add a file that vanishes before it is read)."""
    return plan_corpus(planner, job, **how)


def _previous(cfg: RunConfig, settings: dict):
    """With ``incremental.previous``: the earlier output, checked against these settings, the index
    of its ``ok`` documents, and the same index as the documents that need no parse (None when the
    chunk settings changed: every document is chunked again)."""
    from raychunk.incremental import check_reuse, open_previous, unchanged_documents

    uri = cfg.incremental.previous
    if not uri:
        return None, None, None
    if not cfg.embedder.enabled:
        raise ConfigError(f"--previous {uri} reuses vectors: it needs the embedder (drop --no-embed)")
    previous = open_previous(uri)
    skip = check_reuse(previous.settings, settings, force=cfg.incremental.force_reuse, uri=uri)
    known, same = unchanged_documents(previous)
    unchanged = same if skip else None
    log.info("--previous %s: %s documents need no parse", uri, len(unchanged) if unchanged else 0)
    return previous, known, unchanged


def _incremental_report(out_fs, staging, previous, results, unchanged, job: JobPlan) -> Incremental:
    """What an incremental run reused and what changed: chunk ids unchanged / new / removed against
    the previous output (counted as ``raychunk price --previous`` counts them), vectors embedded and
    reused, and the delta's rows; the removed ids are written to ``delta/removed`` here."""
    import pyarrow.fs as pafs

    from raychunk.merge import COUNT, REMOVED, compare_outputs, comparison_totals
    from raychunk.pipeline import read

    chunk_files = sorted(
        i.path
        for i in out_fs.get_file_info(pafs.FileSelector(f"{staging.path}/chunks", allow_not_found=True))
        if i.path.endswith(".parquet")
    )
    removed_to = f"{staging.path}/delta/removed"
    if out_fs.get_file_info(removed_to).type != pafs.FileType.NotFound:
        out_fs.delete_dir(removed_to)  # left by an attempt that stopped while writing it
    counts = {"unchanged": 0, "new": 0, "removed": 0}
    compared = compare_outputs(chunk_files, out_fs, previous)
    if compared is not None:
        ids, steps = compared
        diffed = execute(read(ids, job), steps, job).materialize()
        totals, _ = comparison_totals(execute(diffed, [COUNT], job).iter_rows(), ["new output"])
        counts = {key: totals["new output"][key] for key in counts}
        if counts["removed"]:
            execute(diffed, [REMOVED], job).repartition(1).write_parquet(removed_to, filesystem=out_fs)
    total = lambda key: sum(r.get(key, 0) for r in results)  # noqa: E731
    chunks = total("chunks")
    return Incremental(
        previous=previous.uri,
        previous_identity=previous.identity,
        documents_reused=total("reused_documents"),
        documents_skip=unchanged is not None,
        chunks=ChunkIdCounts(**counts),
        vectors_embedded=total("embedded"),
        vectors_reused=chunks - total("embedded"),
        vectors_reused_by_id=chunks - total("embedded") - total("reused_by_text"),
        vectors_reused_by_text=total("reused_by_text"),
        delta=Delta(added=total("added"), removed=counts["removed"]),
    )


def settings_fingerprint(job: JobPlan, plan) -> dict:
    """What shapes an output's rows, in two parts recorded in its report: ``chunks`` (the doc types
    file with its profiles, thresholds and overrides, the tokenizer, the parse options, raychunk's
    version) and ``vectors`` (the embedder, its weights' version, backend, dimension, normalisation
    and precision). ``--previous`` compares them (``incremental.check_reuse``)."""
    from raychunk import __version__

    cfg = job.config
    chunks = {
        "doc_types_sha256": job.doc_types_sha256[:16],
        "profiles": {t: p.key for t, p in sorted(job.doc_types.profiles.items())},
        "tokenizer": cfg.tokenizer_spec,
        "parse": json.loads(json.dumps(dataclasses.asdict(cfg.parse), default=str)),
        "raychunk": __version__,
    }
    vectors = None
    if plan is not None:
        vectors = {
            "model": cfg.embedder.model,
            "model_version": job.model.version,
            "backend": cfg.embedder.backend,
            "dim": plan.dim,
            "normalize": cfg.embedder.normalize,
            "precision": "fp16" if plan.gpus_per_actor > 0 and cfg.embedder.backend == "torch" else "fp32",
        }
    return {"chunks": chunks, "vectors": vectors}


def fingerprint(job: JobPlan) -> dict:
    """What decides a run's rows: a resumed run must match the interrupted one on all of it."""
    from raychunk import __version__

    settings = dataclasses.asdict(job.config)
    settings.pop("resources")
    settings.pop("output_files")  # how rows are sharded and compressed, not which rows
    settings["limits"] = {
        k: v for k, v in settings["limits"].items() if k not in ("task_retries", "actor_restarts")
    }
    settings["doc_types_sha256"] = job.doc_types_sha256
    settings["raychunk"] = __version__
    return json.loads(json.dumps(settings, default=str))


def refused_rows(files, scheme: str) -> list[dict]:
    """Documents rows for inputs listed but not read (a symlink out of the input folder, a file too big)."""
    from raychunk.document import content_hash
    from raychunk.parse.detect import format_from_name

    rows = []
    for f in files:
        source = scheme + f.path
        status, reason = f.refused
        rows.append(
            {
                "doc_id": content_hash(source.encode()),
                "source": source,
                "format": format_from_name(source) or "unknown",
                "doc_type": "",
                "type_reason": "",
                "status": status,
                "reason": reason,
                "chunks": 0,
                "tokens": 0,
                "blocks": 0,
                "bytes": f.size,
                "source_bytes": f.raw,
            }
        )
    return rows


def _stage_stats(ds) -> str:
    """Ray Data's own per-operator stats for the executed job (wall time per stage)."""
    try:
        return ds.stats()
    except Exception as e:  # stats are a report nicety; never fail a finished run over them
        return f"(stats unavailable: {type(e).__name__})"
