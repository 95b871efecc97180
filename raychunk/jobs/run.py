"""The run job: parse, classify, chunk and embed the inputs on Ray into Parquet shards, then publish
the output and its report (``report.json`` / ``report.md``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import time

from raychunk import publish
from raychunk.config import RunConfig
from raychunk.corpus import duplicates_of, list_corpus, plan_corpus
from raychunk.document_steps import chunk, documents
from raychunk.embed import embed
from raychunk.incremental import Reuse, reuse_previous
from raychunk.listing import InputPlan, InputPlanner
from raychunk.merge import join_previous
from raychunk.pipeline import RayCluster, execute, plan_embedding, read_blocks, start_ray, write
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
    started = time.perf_counter()
    job = resolve_plan(cfg)  # fails on a bad config before starting anything
    output = publish.open_output(cfg.output, overwrite=cfg.output_files.overwrite)
    cluster = start_ray(cfg)
    embedding = plan_embedding(job, cluster.resources) if cfg.embedder.enabled else None
    settings = settings_fingerprint(job, embedding)
    reuse = reuse_previous(
        cfg.incremental.previous, settings, embedding=embedding is not None, force=cfg.incremental.force_reuse
    )
    staging = publish.open_staging(
        output.fs, output.path, fingerprint(job, reuse), resume=cfg.output_files.resume
    )
    inputs = open_inputs(job, cluster, output, staging)
    stats = ""
    if inputs.todo_files:
        progress = JobProgress(
            "run", documents=inputs.todo_files, nbytes=inputs.todo_bytes, embedding=bool(embedding)
        )
        steps = [
            documents(
                job,
                scheme=inputs.scheme,
                last=chunk(job),
                duplicates=duplicates_of(inputs, job),
                unchanged=reuse.unchanged if reuse else None,
            ),
            progress.step(),
            *(join_previous(reuse.output, reuse.known, job, embedding.dim) if reuse else ()),
            *([embed(job, embedding, on_batch=progress.at("embed"))] if embedding else ()),
        ]
        sink = staging.sink(output.fs, dim=embedding.dim if embedding else None, files=cfg.output_files)
        stats = write_rows(steps, inputs, sink, progress, job)
    staged = publish.gather_staged(output.fs, staging, cfg.output_files.compression, files=inputs.files)
    report = build_run_report(
        cfg,
        staged.documents,
        inputs,
        staged.shards,
        embedding,
        stats,
        time.perf_counter() - started,
        cluster,
        root=job.root,
        settings=settings,
        resumed={"inputs_already_done": inputs.done} if staging.resumed else None,
        incremental=_incremental_report(output.fs, staging, reuse, staged.shards, job) if reuse else None,
    )
    return publish.publish_output(
        output.fs,
        staging,
        output.path,
        staged,
        report,
        render_run_markdown,
        overwrite=cfg.output_files.overwrite,
    )


def write_rows(steps: list, inputs: InputPlan, sink, progress: JobProgress, job: JobPlan) -> str:
    """The steps executed over the inputs' read blocks into the sink, with the progress line shown
    while they stream; returns Ray Data's stats of the execution."""
    ds = execute(read_blocks(inputs.blocks, inputs.fs, job), steps, job)
    with progress.shown():
        try:
            write(ds, sink, job)
        except BaseException:
            log.error(
                "the run stopped; what it wrote is kept in %s: run again with --resume to finish it",
                sink.staging,
            )
            raise
    return _stage_stats(ds)


def open_inputs(
    job: JobPlan, cluster: RayCluster, output: publish.Output, staging: publish.Staging
) -> InputPlan:
    """The corpus listed and planned into read blocks for the cluster's CPUs (with ``--resume``, less
    the inputs already done), and a documents row written for each input listed but refused."""
    cfg = job.config
    inputs = plan_inputs(
        list_corpus(job),
        job,
        cpus=cluster.cpus,
        resume=(output.fs, staging.path, cfg.output_files.compression) if staging.resumed else None,
    )
    if staging.resumed:
        log.info(
            "resume: %d of %d inputs already done; %d to go", inputs.done, inputs.files, inputs.todo_files
        )
    publish.write_documents(
        output.fs,
        staging.path,
        f"part-{staging.attempt}-refused",
        refused_rows(inputs.refused, inputs.scheme),
        cfg.output_files.compression,
    )
    log.info("raychunk: %d files on %s Ray (%s)", inputs.files, cluster.where, cluster.resources)
    return inputs


def plan_inputs(planner: InputPlanner, job: JobPlan, **how):
    """The listed inputs in read blocks (a seam: tests add a file that vanishes before it is read)."""
    return plan_corpus(planner, job, **how)


def _incremental_report(out_fs, staging, reuse: Reuse, results, job: JobPlan) -> Incremental:
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
    previous = reuse.output
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
        documents_skip=reuse.unchanged is not None,
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


def fingerprint(job: JobPlan, reuse: Reuse | None = None) -> dict:
    """What decides a run's rows: a resumed run must match the interrupted one on all of it (with
    ``--previous``, the very output it reuses)."""
    from raychunk import __version__

    settings = dataclasses.asdict(job.config)
    settings.pop("resources")
    settings.pop("output_files")  # how rows are sharded and compressed, not which rows
    settings["limits"] = {
        k: v for k, v in settings["limits"].items() if k not in ("task_retries", "actor_restarts")
    }
    settings["doc_types_sha256"] = job.doc_types_sha256
    settings["raychunk"] = __version__
    settings["previous_output"] = reuse.output.identity if reuse else None
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
