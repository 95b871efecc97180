"""The Ray Data pipeline, wired in one place: read → parse → classify → chunk → embed.

``build`` and the few functions beside it are the only code that calls map / flat_map /
map_batches and sets resources. The jobs in ``raychunk.jobs`` start or join Ray (``init_ray``), read
their inputs (``read_blocks`` of a ``listing.InputPlan``; ``read_files`` for files listed in the
driver), call ``build`` and consume what it returns: the run job writes it, the price job reduces it
on the workers (``price_partials``, ``compare_chunk_ids``), the eval job scores it.
``plan_duplicates`` / ``find_duplicates``, run before ``build``, name the byte-identical inputs that
the parse stage then skips."""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass

from ray.util.annotations import RayDeprecationWarning

from raychunk.config import ConfigError, RunConfig
from raychunk.incremental import DocIndex, Previous
from raychunk.plan import JobPlan

log = logging.getLogger(__name__)

# Ray 2.60 bounds task retries (max_retries, max_restarts, max_task_retries) only through
# ray_remote_args, deprecated for 2.64 with no named successor yet; its default retries forever. Ray
# shows that deprecation through a filter of its own (ray.util.annotations, imported here first), so
# this one goes in front of it, for that message only.
warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated", category=RayDeprecationWarning)


__all__ = [
    "EmbedPlan",
    "Retrieval",
    "build",
    "compare_chunk_ids",
    "cpu_steps",
    "cpu_task_args",
    "diff_chunk_ids",
    "find_duplicates",
    "init_ray",
    "locate_labels",
    "plan_embedding",
    "hash_duplicates",
    "plan_duplicates",
    "price_partials",
    "read_blocks",
    "read_files",
    "task_memory",
]


@dataclass(frozen=True)
class Retrieval:
    """The eval job's questions, for the stages that score the corpus where it lies: ``labelled``
    (document source → ``[(index, passages)]``, located by ``locate_labels``) for the chunk stage;
    their ``vectors``, the ``k`` to keep per block and the small-to-big ``parent_budget``. The
    embedder embeds each distinct text once across the settings, and with ``cache`` (a folder)
    once across runs."""

    labelled: dict
    vectors: object
    k: int
    parent_budget: int
    cache: str | None = None


@dataclass(frozen=True)
class EmbedPlan:
    actors: int  # the pool's size at the start
    gpus_per_actor: float
    cpus_per_actor: float
    batch_rows: int
    dim: int
    max_threads: int  # torch threads an actor on CPU may grow to when the CPU stages leave cores idle
    min_actors: int = 1
    max_actors: int = 0  # Ray Data grows the pool up to this while work is queued; 0: ``actors``

    @property
    def pool(self) -> tuple[int, int, int]:
        """``(min, initial, max)`` actors."""
        top = max(self.actors, self.max_actors)
        return min(self.min_actors, self.actors), self.actors, top


BOOTSTRAP_CONFIG = (
    "~/ray_bootstrap_config.yaml"  # where the Ray cluster launcher puts cluster.yaml on the head
)


def autoscaler_gpu_limit(path: str = BOOTSTRAP_CONFIG) -> int | None:
    """The GPUs an autoscaling cluster may reach (``ClusterShape.reachable_gpus``), from the config
    the cluster launcher leaves on the head node. None when there is no such file (a local Ray,
    KubeRay, a fixed cluster) or it cannot be read."""
    from pathlib import Path

    import yaml

    from raychunk.projection import ClusterShape

    file = Path(path).expanduser()
    if not file.is_file():
        return None
    try:
        return ClusterShape.from_yaml(file).reachable_gpus()
    except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as e:
        log.warning("%s: not a cluster config I can read (%s); the embedding pool will not grow", file, e)
        return None


def init_ray(cfg: RunConfig) -> str:
    """Join the cluster under ``ray job submit`` (RAY_ADDRESS set), else start a local Ray."""
    import ray

    if ray.is_initialized():
        return "existing"
    from raychunk.progress import quiet_engine, verbose

    level = logging.INFO if verbose() else logging.ERROR  # Ray's own INFO lines only with --verbose
    if os.environ.get("RAY_ADDRESS"):
        # the cluster sizes itself
        ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False, logging_level=level)
        quiet_engine()
        return f"cluster at {os.environ['RAY_ADDRESS']}"
    # address="local": always a fresh local Ray, never a leftover `ray start` cluster on this machine.
    ray.init(
        address="local",
        num_cpus=cfg.resources.num_cpus,
        num_gpus=cfg.resources.num_gpus,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=level,
    )
    quiet_engine()
    return "local"


def plan_embedding(job: JobPlan, cluster: dict[str, float]) -> EmbedPlan:
    """Pool size and per-actor resources from config, with ``auto`` derived from the cluster.
    Never asks for a GPU the cluster does not have (Ray would wait for it forever)."""
    cfg = job.config
    r = cfg.resources
    cpus, gpus = cluster.get("CPU", 1.0), cluster.get("GPU", 0.0)
    on_cpu = cfg.embedder.backend != "torch"  # the onnx backends run on CPU only
    gpus_per_actor = (
        (1.0 if gpus >= 1 and not on_cpu else 0.0)
        if r.gpus_per_embed_actor == "auto"
        else float(r.gpus_per_embed_actor)
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
        actors,
        gpus_per_actor,
        cpus_per_actor,
        256 if cfg.embedder.batch_size == "auto" else cfg.embedder.batch_size * 4,
        job.model.dim,
        max_threads=max(1, int(cpus // actors)),
        min_actors=actors if r.embed_actors != "auto" else 1,
        max_actors=_pool_ceiling(r, actors, gpus_per_actor),
    )


def _pool_ceiling(r, actors: int, gpus_per_actor: float) -> int:
    """How far a GPU pool may grow: ``embed_actors_max``, or the autoscaler's GPU limit. A CPU pool
    and a pool of a fixed ``embed_actors`` stay at their size (CPU actors share the cores the parse
    tasks use; their threads grow instead, see ``embed.SpareCores``)."""
    if r.embed_actors != "auto":
        return actors
    if r.embed_actors_max != "auto":
        return max(actors, int(r.embed_actors_max))
    if not gpus_per_actor:
        return actors
    limit = autoscaler_gpu_limit()
    return max(actors, int(limit // gpus_per_actor)) if limit else actors


def build(
    ds,
    job: JobPlan,
    *,
    scheme: str,
    plan: EmbedPlan | None,
    settings: list | None = None,
    measure: bool = False,
    keep_ids: bool = False,
    duplicates: dict[str, str] | None = None,
    retrieval: Retrieval | None = None,
    previous: Previous | None = None,
    unchanged: DocIndex | None = None,
    known: DocIndex | None = None,
    progress=None,
):
    """The whole job on one screen: read → parse → classify → chunk (→ join the previous output) →
    embed (→ retrieve). ``progress`` (``progress.ReportProgress``) counts each batch where its
    documents are done: as the embedder passes it on, or after the chunk stage.

    With ``settings`` the chunk stage runs every setting over the same parse: ``measure`` keeps only
    their numbers (the price job, no embedding), otherwise their chunks (the eval job), and with
    ``retrieval`` each embedded block becomes its questions' top k and its small sums
    (``evaluation.partials``), so no text or vector reaches the driver.
    ``duplicates`` (from ``find_duplicates``) become ``duplicate`` documents, not parsed.
    With ``previous`` (an incremental run, ``plan`` and ``known`` required: the previous output's
    documents) the files in ``unchanged`` are not parsed, and every row is grouped on the cluster
    with the previous output's rows of its bytes (``doc_id``) or, when its bytes are new, of its
    source (``merge_previous``): unchanged documents take their old rows, chunks whose id or text
    the old output holds there take their old vectors, and the embedder embeds only the rest."""
    from ray.data import ActorPoolStrategy

    from raychunk.embed import EmbedChunks
    from raychunk.evaluation.partials import retrieve_block
    from raychunk.stages import isolated

    # Parse, classify and chunk each document in a child process under cfg.limits (raychunk.isolate).
    cfg = job.config
    steps = cpu_steps(
        job,
        scheme=scheme,
        settings=settings,
        measure=measure,
        keep_ids=keep_ids,
        duplicates=duplicates,
        retrieval=retrieval,
    )
    limits = cfg.limits
    ds = ds.flat_map(
        isolated,
        fn_kwargs={
            "steps": steps,
            "limits": limits,
            "scheme": scheme,
            "unchanged": unchanged,
            "duplicates": duplicates,
            "root": job.root,
        },
        **cpu_task_args(job),
    )
    if progress is not None:  # counts what the chunk stage passes on, fused into its tasks
        ds = ds.map_batches(
            progress, batch_format="pyarrow", batch_size=None, zero_copy_batch=True, **cpu_task_args(job)
        )
    if previous is not None:
        ds = _join_previous(ds, previous, known, job, plan.dim)
    if plan is not None:
        ds = ds.map_batches(
            EmbedChunks,
            fn_constructor_kwargs={
                "on_batch": progress.at("embed") if progress is not None else None,
                "model": job.model.local,
                "batch_size": cfg.embedder.batch_size,
                "device": cfg.embedder.device,
                "normalize": cfg.embedder.normalize,
                "backend": cfg.embedder.backend,
                "threads": max(1, int(plan.cpus_per_actor)),
                "max_threads": plan.max_threads,
                "dedupe": retrieval is not None,
                "cache": retrieval.cache if retrieval is not None else None,
            },
            batch_size=plan.batch_rows,
            batch_format="pyarrow",
            compute=ActorPoolStrategy(
                min_size=plan.pool[0], initial_size=plan.pool[1], max_size=plan.pool[2]
            ),
            num_gpus=plan.gpus_per_actor,
            num_cpus=plan.cpus_per_actor,
            max_restarts=limits.actor_restarts,  # a dead actor is replaced and its batch run again
            max_task_retries=limits.actor_restarts,
        )
        if retrieval is not None:
            ds = ds.map_batches(
                retrieve_block,
                fn_kwargs={"query_vectors": retrieval.vectors, "k": retrieval.k},
                batch_size=None,
                batch_format="pyarrow",
                num_cpus=cfg.resources.cpus_per_task,
                max_retries=limits.task_retries,
            )
    return ds


def locate_labels(ds, job: JobPlan, *, scheme: str, labelled: dict):
    """The eval's check before any chunking or embedding: the labelled documents (``ds``, from
    ``read_files``) parsed, and their questions' passages located where the text is
    (``labelled``: source → ``[(index, query)]``); one small row per document comes back."""
    from functools import partial

    from raychunk.evaluation.partials import locate_labelled
    from raychunk.stages import isolated, parse_file

    steps = [
        ("parse", partial(parse_file, options=job.config.parse, scheme=scheme, root=job.root)),
        ("locate", partial(locate_labelled, labelled=labelled)),
    ]
    return ds.flat_map(
        isolated, fn_kwargs={"steps": steps, "limits": job.limits, "scheme": scheme}, **cpu_task_args(job)
    )


def _join_previous(ds, previous: Previous, known: DocIndex, job: JobPlan, dim: int):
    """The chunk stage's rows and the previous output's, grouped on the cluster and merged per group
    (``stages.merge_previous``): the previous rows of a doc_id meet the new rows of the same bytes
    (``known``: the previous output's documents), and its chunks' texts and vectors meet the new rows
    of their source. Its partitions grow with the previous output."""

    from raychunk.stages import merge_previous, new_rows, previous_chunk_rows, previous_document_rows

    cpus = job.config.resources.cpus_per_task
    rows = {"fn_kwargs": {"dim": dim}, "batch_size": None, "batch_format": "pyarrow", "num_cpus": cpus}
    new = {"dim": dim, "known": known, "root": job.root}
    parts = [ds.map_batches(new_rows, **{**rows, "fn_kwargs": new})]
    for table, fn, kwargs in (
        ("chunks", previous_chunk_rows, {"dim": dim, "root": previous.root}),
        ("documents", previous_document_rows, {"dim": dim}),
    ):
        files = previous.files(table)
        if files:
            parts.append(
                read_parquet(files, filesystem=previous.fs).map_batches(fn, **{**rows, "fn_kwargs": kwargs})
            )
    partitions = _partitions(previous)
    return (
        parts[0]
        .union(*parts[1:])
        .groupby("group", num_partitions=partitions)
        .map_groups(merge_previous, batch_format="pyarrow", num_cpus=cpus)
    )


def _partitions(previous: Previous) -> int:
    """Shuffle partitions for a join with the previous output: two per shard of its chunks (a shard
    holds ``rows_per_shard`` rows), so each partition stays a few tens of MB however large it is."""
    return max(1, 2 * len(previous.files("chunks")))


def diff_chunk_ids(fs, chunk_files: list[str], previous: Previous, job: JobPlan, *, removed_to: str) -> dict:
    """The new output's chunk ids (``chunk_files``) against the previous output's, grouped by id on
    the cluster: ``{unchanged, new, removed}`` (as ``compare_chunk_ids`` counts them for the price
    job), and the removed ids written as Parquet to ``removed_to``. The driver receives one count row
    per partition."""

    from raychunk.stages import diff_chunk_id, diff_counts, removed_ids, staged_chunk_ids

    cpus = job.config.resources.cpus_per_task
    batches = {"batch_size": None, "num_cpus": cpus}
    sides = []
    for files, filesystem, is_previous in (
        (chunk_files, fs, False),
        (previous.files("chunks"), previous.fs, True),
    ):
        if files:
            sides.append(
                read_parquet(files, filesystem=filesystem)
                .select_columns(["chunk_id"])
                .map_batches(
                    staged_chunk_ids, fn_kwargs={"previous": is_previous}, batch_format="pyarrow", **batches
                )
            )
    counts = {"unchanged": 0, "new": 0, "removed": 0}
    if not sides:
        return counts
    diffed = (
        sides[0]
        .union(*sides[1:])
        .groupby("chunk_id", num_partitions=_partitions(previous))
        .map_groups(diff_chunk_id, batch_format="numpy", num_cpus=cpus)
        .materialize()
    )
    for row in diffed.map_batches(diff_counts, batch_format="numpy", **batches).iter_rows():
        for key in counts:
            counts[key] += int(row[key])
    if counts["removed"]:
        diffed.map_batches(removed_ids, batch_format="numpy", **batches).repartition(1).write_parquet(
            removed_to, filesystem=fs
        )
    return counts


def cpu_steps(
    job: JobPlan,
    *,
    scheme: str,
    settings: list | None = None,
    measure: bool = False,
    keep_ids: bool = False,
    duplicates: dict[str, str] | None = None,
    retrieval: Retrieval | None = None,
) -> list[tuple[str, object]]:
    """The CPU stage's steps, ``(name, row function)``: parse → classify → chunk (or measure)."""
    from functools import partial

    from raychunk.stages import chunk_rows, chunk_settings, classify_document, measure_settings, parse_file

    types = job.doc_types
    chunk_args = {"profiles": types.profiles, "tokenizer": job.tokenizer, "tokenizer_dir": job.tokenizer_dir}
    if settings is None:
        last = partial(chunk_rows, **chunk_args)
    elif measure:
        last = partial(measure_settings, **chunk_args, settings=settings, keep_ids=keep_ids)
    else:
        last = partial(chunk_settings, **chunk_args, settings=settings)
        if retrieval is not None:
            last = partial(last, labelled=retrieval.labelled, parent_budget=retrieval.parent_budget)
    return [
        (
            "parse",
            partial(
                parse_file,
                options=job.config.parse,
                scheme=scheme,
                duplicates=duplicates or {},
                root=job.root,
            ),
        ),
        ("classify", partial(classify_document, thresholds=types.thresholds, overrides=types.overrides)),
        ("chunk", last),
    ]


WORKER_OVERHEAD_MB = 512  # the Ray worker beside its document process: the block's bytes and rows


def task_memory(job: JobPlan) -> int:
    """Bytes of memory a CPU task asks Ray for: its document process's limit plus the worker. Ray
    then runs no more of them on a node than its memory allows; a request no node can meet would
    wait forever, so it fails here instead."""
    import ray

    cfg = job.config
    need = (cfg.limits.doc_memory_mb + WORKER_OVERHEAD_MB) * 2**20
    nodes = [n["Resources"].get("memory", 0) for n in ray.nodes() if n.get("Alive")]
    if nodes and need > max(nodes):
        raise ConfigError(
            f"limits.doc_memory_mb={cfg.limits.doc_memory_mb} needs {need / 2**30:.1f} GiB per parse task "
            f"(with the worker's {WORKER_OVERHEAD_MB} MB), but the largest node offers Ray "
            f"{max(nodes) / 2**30:.1f} GiB: lower limits.doc_memory_mb"
        )
    return need


def read_blocks(blocks, fs, job: JobPlan):
    """Planned blocks (``listing.Block``) as a Ray Data dataset of ``(path, bytes, read_error)`` rows.
    Its tasks ask for what the CPU stage's do, so Ray fuses reading into that stage: one task reads
    and processes a block."""
    import ray.data

    from raychunk.blocks import InputBlocks

    args = cpu_task_args(job)
    return ray.data.read_datasource(
        InputBlocks(blocks, fs),
        num_cpus=args["num_cpus"],
        memory=args["memory"],
        ray_remote_args={"max_retries": args["max_retries"]},
        override_num_blocks=max(1, len(blocks)),
    )


def read_files(files: list, fs, job: JobPlan):
    """Files listed in the driver (``io.list_inputs``), in blocks sized by expected parse cost
    (``raychunk.blocks``), read as ``read_blocks`` reads a plan."""
    import ray

    from raychunk.blocks import plan_blocks
    from raychunk.listing import blocks_of

    groups = plan_blocks(
        files, cpus=ray.cluster_resources().get("CPU", 1), max_files=job.config.resources.files_per_block
    )
    return read_blocks(blocks_of(groups), fs, job)


def read_parquet(paths, *, filesystem):
    """The Parquet files ``paths`` (a folder stands for the ``.parquet`` files under it) as a Dataset:
    one read task per file, reading it with pyarrow a batch at a time. Not ``ray.data.read_parquet``:
    in Ray 2.60 its file indexer resolves paths in threads inside a Ray task, each importing
    ``fsspec.implementations.http``; without aiohttp a thread can meet another's failed import and
    get an ImportError that Ray does not catch (it failed an incremental run in CI). The files here
    are named by a report or sit in one folder, so there is nothing to index."""
    import pyarrow.fs as pafs
    import ray.data

    files = []
    for path in [paths] if isinstance(paths, str) else paths:
        if filesystem.get_file_info(path).type == pafs.FileType.Directory:
            found = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
            files += sorted(
                f.path
                for f in found
                if f.type == pafs.FileType.File
                and f.base_name.endswith(".parquet")
                and not f.base_name.startswith((".", "_"))
            )
        else:
            files.append(path)
    return ray.data.from_items(
        [{"path": f} for f in files], override_num_blocks=max(1, len(files))
    ).map_batches(
        read_parquet_files, fn_kwargs={"filesystem": filesystem}, batch_size=1, batch_format="pyarrow"
    )


def read_parquet_files(batch, *, filesystem):
    """``{path}`` rows → the tables of those Parquet files, 65,536 rows at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in batch.column("path").to_pylist():
        with filesystem.open_input_file(path) as f:
            for part in pq.ParquetFile(f).iter_batches(batch_size=65536):
                yield pa.Table.from_batches([part])


def cpu_task_args(job: JobPlan) -> dict:
    """Ray resources of the parse → classify → chunk tasks (and of the reads fused into them)."""
    return {
        "num_cpus": job.config.resources.cpus_per_task,
        "memory": task_memory(job),
        "max_retries": job.limits.task_retries,  # the task's worker or node lost, not a bad document
    }


def find_duplicates(files: list, fs, scheme: str, job: JobPlan) -> dict[str, str]:
    """``{duplicate source: kept source}`` for byte-identical files listed in the driver. Only files
    whose listed sizes collide are read: here when they are few, else by ``hash_duplicates``."""
    import ray

    from raychunk.blocks import duplicate_check
    from raychunk.listing import blocks_of

    duplicates, runs = duplicate_check(files, fs, scheme, cpus=ray.cluster_resources().get("CPU", 1))
    if duplicates is not None:
        return duplicates
    return hash_duplicates(blocks_of(runs), fs, scheme, job)


def plan_duplicates(plan, job: JobPlan) -> dict[str, str]:
    """The duplicates of a planned corpus (``listing.InputPlan``): the planner's own answer when it
    hashed the few candidates, else ``hash_duplicates`` over its runs."""
    if plan.duplicates is not None:
        return plan.duplicates
    return hash_duplicates(plan.digest_runs, plan.fs, plan.scheme, job)


def hash_duplicates(runs, fs, scheme: str, job: JobPlan) -> dict[str, str]:
    """Candidates hashed in Ray read tasks (``blocks.InputDigests``: a path and 32 bytes per file),
    grouped by a task on the driver's node: the driver receives the ``{duplicate: kept}`` map only."""
    import ray
    import ray.data
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from raychunk.blocks import InputDigests

    source = InputDigests(runs, fs)
    ds = ray.data.read_datasource(
        source,
        num_cpus=job.config.resources.cpus_per_task,
        ray_remote_args={"max_retries": job.limits.task_retries},
        override_num_blocks=max(1, source.num_blocks),
    )
    refs = ds.materialize().to_arrow_refs()
    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    group = ray.remote(num_cpus=0, max_retries=0, scheduling_strategy=here)(_group_digests)
    return ray.get(group.remote(refs, scheme))


def _group_digests(refs: list, scheme: str) -> dict[str, str]:
    import pyarrow as pa
    import ray

    from raychunk.dedupe import duplicates_from_digests

    tables = [t for t in ray.get(refs) if t.num_rows]
    if not tables:
        return {}
    table = pa.concat_tables(tables)
    return duplicates_from_digests(
        table.column("path").to_pylist(), b"".join(table.column("digest").to_pylist()), scheme
    )


def price_partials(ds, job: JobPlan, *, kept_sources: frozenset[str], rounds: int, seed: int = 0):
    """The price job's aggregation, on the workers: each block of measure rows becomes one row holding
    its pickled ``PricePartial``. It asks for the CPU stage's resources, so Ray fuses it into those
    tasks and the per-document rows never leave them."""
    from raychunk.stages import price_partial

    return ds.map_batches(
        price_partial,
        fn_kwargs={"kept_sources": kept_sources, "rounds": rounds, "seed": seed},
        batch_size=None,
        batch_format="pyarrow",
        **cpu_task_args(job),
    )


def compare_chunk_ids(measured, fs, chunks_path: str, labels: list[str], job: JobPlan) -> tuple[dict, int]:
    """Each setting's chunk ids (``measured``: materialized rows built with ``keep_ids``) against an earlier run's
    ``chunks/`` table: both grouped by chunk id on the cluster, counted per block, and only those
    per-setting counts reach the driver. Returns ``{label: {unchanged, new, removed,
    tokens_to_embed}}`` and how many count rows the driver received."""

    from raychunk.stages import compare_chunk_id, count_comparison, current_chunk_ids, previous_chunk_ids

    cpus = job.config.resources.cpus_per_task
    batches = {"batch_size": None, "num_cpus": cpus}
    current = measured.map_batches(
        current_chunk_ids, fn_kwargs={"labels": labels}, batch_format="pyarrow", **batches
    )
    previous = (
        read_parquet(chunks_path, filesystem=fs)
        .select_columns(["chunk_id"])
        .map_batches(previous_chunk_ids, batch_format="pyarrow", **batches)
    )
    # As many partitions as the measured blocks (the default is a fixed 200): the shuffle grows with
    # the corpus, and what reaches the driver stays one count row per partition and setting.
    counts = (
        current.union(previous)
        .groupby("chunk_id", num_partitions=max(1, measured.num_blocks()))
        .map_groups(compare_chunk_id, batch_format="numpy", num_cpus=cpus)
        .map_batches(count_comparison, batch_format="numpy", **batches)
    )
    sums: dict[int, list[int]] = {}
    received = 0
    for row in counts.iter_rows():
        received += 1
        acc = sums.setdefault(int(row["setting"]), [0, 0, 0])
        for i, key in enumerate(("unchanged", "new", "tokens_to_embed")):
            acc[i] += int(row[key])
    previous_ids = sums.get(-1, [0])[0]  # setting -1 counts the previous run's distinct ids
    out = {}
    for i, label in enumerate(labels):
        unchanged, new, tokens = sums.get(i, [0, 0, 0])
        out[label] = {
            "unchanged": unchanged,
            "new": new,
            "removed": previous_ids - unchanged,
            "tokens_to_embed": tokens,
        }
    return out, received
