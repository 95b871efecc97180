"""The Ray Data job, wired in one place: read → parse → classify → chunk → embed → write.

``build`` is the only code that calls map / flat_map / map_batches and sets resources; ``run``
starts or joins Ray, lists the inputs, executes the job into a staging folder, and publishes the
output only when the whole run succeeded.
"""

from __future__ import annotations

import logging
import math
import os
import time
import uuid
from dataclasses import dataclass

from raychunk.config import ConfigError, RunConfig, load_doc_types

log = logging.getLogger(__name__)

__all__ = [
    "EmbedPlan",
    "build",
    "build_eval",
    "build_price",
    "plan_embedding",
    "read_inputs",
    "run",
    "run_price",
]


@dataclass(frozen=True)
class EmbedPlan:
    actors: int
    gpus_per_actor: float
    cpus_per_actor: float
    batch_rows: int
    dim: int


def init_ray(cfg: RunConfig) -> str:
    """Join the cluster under ``ray job submit`` (RAY_ADDRESS set), else start a local Ray."""
    import ray

    if ray.is_initialized():
        return "existing"
    if os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)  # the cluster sizes itself
        return f"cluster at {os.environ['RAY_ADDRESS']}"
    # address="local": always a fresh local Ray, never a leftover `ray start` cluster on this machine.
    ray.init(
        address="local",
        num_cpus=cfg.resources.num_cpus,
        num_gpus=cfg.resources.num_gpus,
        include_dashboard=False,
        log_to_driver=False,
    )
    return "local"


def plan_embedding(cfg: RunConfig, cluster: dict[str, float]) -> EmbedPlan:
    """Pool size and per-actor resources from config, with ``auto`` derived from the cluster.
    Never asks for a GPU the cluster does not have (Ray would wait for it forever)."""
    from raychunk.embed import embedding_dim

    r = cfg.resources
    cpus, gpus = cluster.get("CPU", 1.0), cluster.get("GPU", 0.0)
    gpus_per_actor = (
        (1.0 if gpus >= 1 else 0.0) if r.gpus_per_embed_actor == "auto" else float(r.gpus_per_embed_actor)
    )
    if gpus_per_actor > 0 and gpus < gpus_per_actor:
        raise ConfigError(
            f"resources.gpus_per_embed_actor={gpus_per_actor:g} but the cluster has {gpus:g} GPUs: the job would "
            "wait forever. Use auto (CPU when there is no GPU) or 0, or start GPU workers first."
        )
    if r.embed_actors != "auto":
        actors = int(r.embed_actors)
    elif gpus_per_actor:
        actors = max(1, int(gpus // gpus_per_actor))
    else:
        actors = max(1, int(cpus // 2))
    if not gpus_per_actor:
        actors = max(1, min(actors, int((cpus - 1) // r.cpus_per_embed_actor) or 1))
    # One parse task must always fit beside the pool, or the pool starves the read and parse tasks
    # (on a 1-CPU machine the actor then reserves no CPU at all and shares it).
    room = max(0.0, cpus - r.cpus_per_task)
    cpus_per_actor = min(float(r.cpus_per_embed_actor), room / actors)
    return EmbedPlan(
        actors, gpus_per_actor, cpus_per_actor, cfg.embedder.batch_size * 4, embedding_dim(cfg.embedder.model)
    )


def build(
    ds,
    cfg: RunConfig,
    *,
    scheme: str,
    plan: EmbedPlan | None,
    settings: list | None = None,
    measure: bool = False,
    keep_ids: bool = False,
):
    """The whole job on one screen: read → parse → classify → chunk → embed.

    With ``settings`` the chunk stage runs every setting over the same parse: ``measure`` keeps only
    their numbers (the price job, no embedding), otherwise their chunks (the eval job)."""
    from ray.data import ActorPoolStrategy

    from raychunk.embed import EmbedChunks
    from raychunk.stages import chunk_rows, chunk_settings, classify_document, measure_settings, parse_file

    types = load_doc_types(cfg.chunk.doc_types_path)
    cpus = cfg.resources.cpus_per_task
    ds = ds.map(parse_file, fn_kwargs={"options": cfg.parse, "scheme": scheme}, num_cpus=cpus)
    ds = ds.map(
        classify_document,
        fn_kwargs={"thresholds": types.thresholds, "overrides": types.overrides},
        num_cpus=cpus,
    )
    chunk_args = {"profiles": types.profiles, "tokenizer": cfg.tokenizer_spec}
    if settings is None:
        ds = ds.flat_map(chunk_rows, fn_kwargs=chunk_args, num_cpus=cpus)
    elif measure:
        ds = ds.flat_map(
            measure_settings,
            fn_kwargs={**chunk_args, "settings": settings, "keep_ids": keep_ids},
            num_cpus=cpus,
        )
    else:
        ds = ds.flat_map(chunk_settings, fn_kwargs={**chunk_args, "settings": settings}, num_cpus=cpus)
    if plan is not None:
        ds = ds.map_batches(
            EmbedChunks,
            fn_constructor_kwargs={
                "model": cfg.embedder.model,
                "batch_size": cfg.embedder.batch_size,
                "device": cfg.embedder.device,
                "normalize": cfg.embedder.normalize,
                "threads": max(1, int(plan.cpus_per_actor)),
            },
            batch_size=plan.batch_rows,
            batch_format="pyarrow",
            compute=ActorPoolStrategy(size=plan.actors),
            num_gpus=plan.gpus_per_actor,
            num_cpus=plan.cpus_per_actor,
        )
    return ds


def run(cfg: RunConfig) -> dict:
    """Run the job; returns the run report (also written as report.json and report.md)."""
    import ray
    import ray.data

    from raychunk.io import list_inputs, resolve_output
    from raychunk.report import finalize_run
    from raychunk.sink import ShardSink

    t0 = time.perf_counter()
    load_doc_types(cfg.chunk.doc_types_path)  # fail on a bad config before starting anything
    out_fs, out_path = resolve_output(cfg.output)
    _check_output(out_fs, out_path, cfg.output_files.overwrite)
    in_fs, scheme, files = list_inputs(cfg.input)
    where = init_ray(cfg)
    cluster = ray.cluster_resources()
    plan = plan_embedding(cfg, cluster) if cfg.embedder.enabled else None
    log.info("raychunk: %d files on %s Ray (%s); embedding: %s", len(files), where, cluster, plan)
    staging = f"{out_path}/_staging/{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    sink = ShardSink(
        staging,
        out_fs,
        dim=plan.dim if plan else None,
        rows_per_shard=cfg.output_files.rows_per_shard,
        compression=cfg.output_files.compression,
    )
    ds = ray.data.read_binary_files(
        [f.path for f in files],
        include_paths=True,
        filesystem=in_fs,
        override_num_blocks=max(1, math.ceil(len(files) / cfg.resources.files_per_block)),
    )
    ds = build(ds, cfg, scheme=scheme, plan=plan)
    try:
        ds.write_datasink(sink)
    except BaseException:
        _remove(out_fs, staging)
        raise
    stats = _stage_stats(ds)
    return finalize_run(
        cfg,
        out_fs,
        out_path,
        staging,
        files,
        sink.results,
        plan,
        stats,
        wall_seconds=time.perf_counter() - t0,
        where=where,
        cluster=cluster,
    )


def _check_output(fs, path: str, overwrite: bool) -> None:
    import pyarrow.fs as pafs

    existing = [
        p
        for p in ("chunks", "documents", "report.json")
        if fs.get_file_info(f"{path}/{p}").type != pafs.FileType.NotFound
    ]
    if existing and not overwrite:
        raise ConfigError(
            f"output {path} already holds a run ({', '.join(existing)}): pass --overwrite "
            "(output_files.overwrite) or choose another --output"
        )


def _remove(fs, path: str) -> None:
    try:
        fs.delete_dir(path)
    except OSError:
        log.warning("could not remove staging folder %s", path)


def _stage_stats(ds) -> str:
    """Ray Data's own per-operator stats for the executed job (wall time per stage)."""
    try:
        return ds.stats()
    except Exception as e:  # stats are a report nicety; never fail a finished run over them
        return f"(stats unavailable: {type(e).__name__})"


def build_price(ds, cfg: RunConfig, *, scheme: str, settings: list, keep_ids: bool):
    """The price job: every grid setting measured over one parse, no embedding."""
    return build(ds, cfg, scheme=scheme, plan=None, settings=settings, measure=True, keep_ids=keep_ids)


def run_price(
    cfg: RunConfig, settings: list, *, sample: float = 1.0, keep_ids: bool = False
) -> tuple[list[dict], dict]:
    """Measure every setting over the (sampled) corpus. Returns the per-document rows and the listing
    facts: the corpus's file count and bytes come from listing it, not from parsing it."""
    import ray.data

    from raychunk.io import list_inputs
    from raychunk.pricing import in_sample

    in_fs, scheme, files = list_inputs(cfg.input)
    chosen = [f for f in files if in_sample(scheme + f.path, sample)]
    listing = {
        "files": len(files),
        "bytes": sum(f.size for f in files),
        "sampled_files": len(chosen),
        "sampled_bytes": sum(f.size for f in chosen),
    }
    if not chosen:
        raise ValueError(f"--sample {sample} selects none of the {len(files)} files; use a larger fraction")
    init_ray(cfg)
    ds = ray.data.read_binary_files(
        [f.path for f in chosen],
        include_paths=True,
        filesystem=in_fs,
        override_num_blocks=max(1, math.ceil(len(chosen) / cfg.resources.files_per_block)),
    )
    ds = build_price(ds, cfg, scheme=scheme, settings=settings, keep_ids=keep_ids)
    return ds.take_all(), listing


def build_eval(ds, cfg: RunConfig, *, scheme: str, settings: list, plan: EmbedPlan):
    """The eval job: chunks under every setting over one parse, embedded. Rows carry their
    ``setting``; document rows carry the document text for passage spans."""
    return build(ds, cfg, scheme=scheme, plan=plan, settings=settings)


def read_inputs(cfg: RunConfig):
    """Start or join Ray and read the configured inputs: ``(dataset, scheme, files, plan)``."""
    import ray
    import ray.data

    from raychunk.io import list_inputs

    in_fs, scheme, files = list_inputs(cfg.input)
    init_ray(cfg)
    plan = plan_embedding(cfg, ray.cluster_resources())
    ds = ray.data.read_binary_files(
        [f.path for f in files],
        include_paths=True,
        filesystem=in_fs,
        override_num_blocks=max(1, math.ceil(len(files) / cfg.resources.files_per_block)),
    )
    return ds, scheme, files, plan
