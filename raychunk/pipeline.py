"""The executor: the one place that puts a job's steps on Ray Data.

A job (``raychunk.jobs``) is its list of ``step.Step``s, read top to bottom; ``execute`` runs them
over a dataset that one of the readers here made (``read_blocks`` of a ``listing.InputPlan``,
``read_files`` of files listed in the driver, ``read_parquet``). Only this module calls ``map`` /
``flat_map`` / ``map_batches`` / ``map_groups`` and sets resources and retries: a step says how it
runs in words (``runs_as``) and ``task_args`` turns them into Ray's. Around it: starting or joining
Ray (``init_ray``) and stopping the local one (``stop_local_ray``), sizing the embedding pool
(``plan_embedding``), and ``on_driver_node`` for work whose memory must not swell the driver.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import warnings
from dataclasses import dataclass

from ray.util.annotations import RayDeprecationWarning

from raychunk.config import ConfigError, RunConfig
from raychunk.plan import JobPlan
from raychunk.step import EmbedPlan, Parquet, Step

log = logging.getLogger(__name__)

# Ray 2.60 bounds task retries (max_retries, max_restarts, max_task_retries) only through
# ray_remote_args, deprecated for 2.64 with no named successor yet; its default retries forever. Ray
# shows that deprecation through a filter of its own (ray.util.annotations, imported here first), so
# this one goes in front of it, for that message only.
warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated", category=RayDeprecationWarning)


__all__ = [
    "EmbedPlan",
    "RayCluster",
    "autoscaler_gpu_limit",
    "execute",
    "init_ray",
    "lean_local_ray",
    "on_driver_node",
    "plan_embedding",
    "read",
    "read_blocks",
    "read_digests",
    "read_files",
    "read_parquet",
    "start_ray",
    "stop_local_ray",
    "task_args",
    "task_memory",
    "write",
]


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
    with lean_local_ray():
        ray.init(
            address="local",
            num_cpus=cfg.resources.num_cpus,
            num_gpus=cfg.resources.num_gpus,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=level,
        )
    quiet_engine()
    size_local_ray_data()
    wake_on_finished_tasks()
    return "local"


@contextlib.contextmanager
def lean_local_ray():
    """A local Ray started inside this block with ``include_dashboard=False`` starts what a Ray
    without a dashboard uses, and ``ray.init`` returns as soon as its raylet is up. Ray 2.60, here:

    - Its head starts an API server even without a dashboard (it then serves only Ray's usage
      statistics: no dashboard, job or state API) and waits for it before it starts the raylet: 1.6
      of the 3.7 s of ``ray.init``. Not started; the head runs as Ray runs one whose API server
      failed to start (``raise_on_failure=False``).
    - Before it starts the raylet, the driver imports the dashboard's web and metrics libraries
      (aiohttp, OpenTelemetry, Prometheus, about 0.3 s) only to choose between the full dashboard
      agent and the minimal one that Ray without ``ray[default]`` runs. The agent's web server and
      metrics export serve a dashboard and its job API: the minimal one is started.
    - It asks the GCS whether the raylet has registered 0.1 s after starting it, then once a second
      (``GlobalStateAccessor::GetNode``); the raylet registers once its agents have written their
      ports, about 1 s here, so ``ray.init`` waited until 1.1 or 2.1 s. The GCS is asked every
      0.02 s first.

    A call that asks for the dashboard, or leaves it to Ray, gets all of it. Private API: what a Ray
    lacks of it is left as Ray does it."""
    try:
        from ray._private import services, utils
        from ray._private.node import Node
    except ImportError as e:
        log.debug("the local Ray starts as Ray starts it: %s", e)
        yield
        return
    patched = []
    start_api = getattr(Node, "start_api_server", None)
    asked = {"dashboard": None}
    if start_api is not None:

        def start_api_server(self, *, include_dashboard, raise_on_failure):
            asked["dashboard"] = include_dashboard
            if include_dashboard is not False:  # asked for, or Ray's default (None: when installed)
                start_api(self, include_dashboard=include_dashboard, raise_on_failure=raise_on_failure)

        patched.append((Node, "start_api_server", start_api, start_api_server))
    dependency_error = getattr(utils, "get_dashboard_dependency_error", None)
    if dependency_error is not None:

        def get_dashboard_dependency_error():
            if asked["dashboard"] is False:
                return ImportError("a local Ray without a dashboard: its agent is the minimal one")
            return dependency_error()

        patched.append(
            (utils, "get_dashboard_dependency_error", dependency_error, get_dashboard_dependency_error)
        )
    get_node = getattr(services, "get_node", None)
    if get_node is not None:

        def get_node_when_registered(gcs_address, node_id):
            _await_node(gcs_address, node_id, timeout_s=10)
            return get_node(gcs_address, node_id)

        patched.append((services, "get_node", get_node, get_node_when_registered))
    for owner, name, _, new in patched:
        setattr(owner, name, new)
    try:
        yield
    finally:
        for owner, name, old, _ in patched:
            setattr(owner, name, old)


def _await_node(gcs_address: str, node_id: str, *, timeout_s: float) -> None:
    """Until the GCS lists ``node_id`` alive (the raylet has registered), asking every 0.02 s; then
    Ray's own ``get_node`` finds it at its first look. After ``timeout_s`` (a loaded machine), or on
    any error, Ray's own look goes on as Ray does it and reports what is wrong."""
    from ray._private import services
    from ray._private.state import GlobalState

    state = GlobalState()
    try:
        state._initialize_global_state(services._get_gcs_client_options(gcs_address))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(n.get("NodeID") == node_id and n.get("Alive") for n in state.node_table()):
                return
            time.sleep(0.02)
    except Exception as e:  # noqa: BLE001 - Ray's own get_node reports what is wrong
        log.debug("waiting for the raylet's registration: %s", e)
    finally:
        state.disconnect()


def size_local_ray_data() -> None:
    """Ray Data budgets a dataset by what its autoscaling coordinator has reserved for it: an actor,
    asked without waiting, whose answer the executor reads again at most once a second. Until it
    answers a dataset runs one task at a time (the first second or two of every job, most of a
    small one's), and the actor is a Ray worker process of its own (about 1 CPU s of a small job's 2
    cores, at its start). A local Ray cannot grow, and for a lone dataset the actor reserves all of
    it; so on the local Ray that ``init_ray`` started (known by its GCS address) the coordinator is
    ``WholeLocalRay``, in the driver, which reserves the whole Ray from the first ask. Ray's
    scheduler still holds each task to the resources free. A cluster may grow, and a Ray started by
    someone else is theirs to size: both keep Ray's coordinator. Private API: a Ray without it is
    left as it is."""
    import ray

    global _local_ray
    _local_ray = ray.get_runtime_context().gcs_address
    try:
        from ray.data._internal.cluster_autoscaler import (
            default_cluster_autoscaler_v2,
            rate_based_cluster_autoscaler,
        )
        from ray.data._internal.cluster_autoscaler.base_autoscaling_coordinator import (
            STANDARD_RESOURCE_TYPES,
        )
    except ImportError as e:
        log.debug("Ray Data's budget left to its coordinator: %s", e)
        return
    for module in (rate_based_cluster_autoscaler, default_cluster_autoscaler_v2):
        coordinator = getattr(module, "DefaultAutoscalingCoordinator", None)
        if coordinator is not None and not getattr(coordinator, "raychunk_local", False):
            module.DefaultAutoscalingCoordinator = _whole_local_ray_or(coordinator, STANDARD_RESOURCE_TYPES)


_local_ray: str | None = None  # the GCS address of the local Ray init_ray started in this process


def on_local_ray() -> bool:
    """Whether this process is connected to the local Ray that ``init_ray`` started in it."""
    import ray

    return (
        _local_ray is not None
        and ray.is_initialized()
        and ray.get_runtime_context().gcs_address == _local_ray
    )


class WholeLocalRay:
    """Ray Data's autoscaling coordinator for a dataset on the local Ray: it reserves the whole Ray
    (the resource kinds that Ray Data asks for: CPUs, GPUs, memory and object store) from the first
    ask, which is what Ray's coordinator actor reserves for a lone dataset once it answers. Requests
    change nothing: the Ray cannot grow."""

    def __init__(self, resources: dict[str, float], kinds):
        self.reserved = {"local": {k: v for k, v in resources.items() if k in kinds and v}}

    def request_resources(self, resources, expire_after_s, request_remaining=None, **kwargs) -> None:
        pass

    def cancel_request(self) -> None:
        pass

    def get_reserved_resources(self) -> dict[str, dict[str, float]]:
        return self.reserved  # read, never changed, by the executor (as Ray's cached answer is)


def _whole_local_ray_or(coordinator, kinds):
    def local_or_ray_coordinator(*args, **kwargs):
        if on_local_ray():
            import ray

            return WholeLocalRay(ray.cluster_resources(), kinds)
        return coordinator(*args, **kwargs)

    local_or_ray_coordinator.raychunk_local = True
    return local_or_ray_coordinator


def stop_local_ray() -> None:
    """Stop the local Ray that ``init_ray`` started in this process now, not at the interpreter's
    exit. Ray's exit hook first sleeps 0.5 s so that worker logs reach the driver (this Ray sends
    none), then stops each of its processes with SIGTERM and up to 1 s for it to go; its autoscaler
    monitor, which has nothing to do on a Ray about to stop, takes the whole second every time and
    is killed outright first. A Ray someone else started, and a cluster, are left as they are.
    Private API for the monitor: a Ray without it is only shut down."""
    import ray

    if not on_local_ray():
        return
    try:
        from ray._private import ray_constants
        from ray._private import worker as ray_worker

        node = ray_worker._global_node
        for info in node.all_processes.get(ray_constants.PROCESS_TYPE_MONITOR, []) if node else []:
            info.process.kill()
            info.process.wait(timeout=10)
    except Exception as e:  # an optimisation only: ray.shutdown stops it as Ray does
        log.debug("Ray's monitor left to ray.shutdown: %s", e)
    ray.shutdown()


def wake_on_finished_tasks() -> None:
    """Ray Data's scheduling loop waits for its running tasks with ``ray.wait`` of all of them and a
    0.1 s timeout, so a task that ends mid-wait is seen, and the next one started on its core, only
    when the timeout runs out; each task's core then idles 0.1-0.2 s (ray-project/ray#42377,
    #45934). On a local Ray the loop's wait returns as soon as one task has output or has ended
    (``WakeOnFirst``): no gap, and no polling (a 0.02 s timeout closed the gaps too, but cost the
    driver 0.3 CPU s of a 5 s CPU stage, taken from the tasks once every core runs one). Private
    API: a Ray without it is left as it is."""
    try:
        from ray.data._internal.execution import streaming_executor_state as state
    except ImportError as e:
        log.debug("Ray Data's scheduling loop left as it is: %s", e)
        return
    loop_ray = getattr(state, "ray", None)
    if loop_ray is not None and hasattr(loop_ray, "wait") and not isinstance(loop_ray, WakeOnFirst):
        state.ray = WakeOnFirst(loop_ray)


class WakeOnFirst:
    """``ray`` as the scheduling loop sees it, but a wait for all of several refs with a timeout
    returns the ready ones once the first is ready, not when all are or the timeout has run out."""

    def __init__(self, ray):
        self.ray = ray

    def __getattr__(self, name):
        return getattr(self.ray, name)

    def wait(self, refs, *, num_returns=1, timeout=None, fetch_local=True):
        wait = self.ray.wait
        if num_returns <= 1 or not timeout:
            return wait(refs, num_returns=num_returns, timeout=timeout, fetch_local=fetch_local)
        ready, rest = wait(refs, num_returns=num_returns, timeout=0, fetch_local=fetch_local)
        if ready:
            return ready, rest
        first, _ = wait(refs, num_returns=1, timeout=timeout, fetch_local=fetch_local)
        if not first:
            return [], list(refs)
        return wait(refs, num_returns=num_returns, timeout=0, fetch_local=fetch_local)


@dataclass(frozen=True)
class RayCluster:
    """The Ray a job runs on: ``where`` (local, existing, or the cluster's address), its resources,
    and the seconds it took to start or join."""

    where: str
    resources: dict[str, float]
    start_seconds: float

    @property
    def cpus(self) -> float:
        return self.resources.get("CPU", 1)


def start_ray(cfg: RunConfig) -> RayCluster:
    """``init_ray``, timed, with the cluster's resources."""
    import ray

    t = time.perf_counter()
    where = init_ray(cfg)
    warm_ray_data(actor_pool=cfg.embedder.enabled)
    return RayCluster(where, ray.cluster_resources(), time.perf_counter() - t)


def warm_ray_data(actor_pool: bool = True) -> None:
    """Ray Data's own actors (its stats actor, autoscaling coordinator and, for a job with an actor
    pool, its actor location tracker: cluster-wide, found by name) asked for now, without waiting,
    so that their worker processes start while the corpus is listed and planned. Else the first
    dataset starts them one after another and runs one task at a time until the coordinator first
    answers: 2-3 s of a small run. Ray Data asks the tracker only where actors run, so a job
    without embedding never needs it, and on the local Ray the coordinator is the driver's own
    (``size_local_ray_data``). A Ray without them is left as it is."""
    try:
        from ray.data._internal.cluster_autoscaler.default_autoscaling_coordinator import (
            get_or_create_autoscaling_coordinator,
        )
        from ray.data._internal.execution.node_trackers.actor_location import (
            get_or_create_actor_location_tracker,
        )
        from ray.data._internal.stats import get_or_create_stats_actor

        get_or_create_stats_actor()
        if not on_local_ray():
            get_or_create_autoscaling_coordinator()
        if actor_pool:
            get_or_create_actor_location_tracker()
    except Exception as e:  # an optimisation only: Ray Data creates them itself when it needs them
        log.debug("Ray Data's actors not started early: %s", e)


def plan_embedding(job: JobPlan, cluster: dict[str, float]) -> EmbedPlan:
    """Pool size and per-actor resources from config, with ``auto`` derived from the cluster.
    Never asks for a GPU the cluster does not have (Ray would wait for it forever)."""
    cfg = job.config
    r = cfg.resources
    cpus, gpus = cluster.get("CPU", 1.0), cluster.get("GPU", 0.0)
    # The onnx backends run on CPU only; device cpu on a GPU machine leaves the GPUs alone and sizes
    # the pool by the CPUs (a GPU-sized pool of CPU actors was 1 actor on 16 cores).
    on_cpu = cfg.embedder.backend != "torch" or cfg.embedder.device == "cpu"
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


def execute(ds, steps: list[Step] | tuple[Step, ...], job: JobPlan):
    """``ds`` through ``steps``, in order: the job as Ray Data runs it (lazily, until consumed)."""
    for step in steps:
        ds = _apply(ds, step, job)
    return ds


def _apply(ds, step: Step, job: JobPlan):
    args = task_args(step, job)
    if step.each == "row":
        return ds.flat_map(step.fn, fn_kwargs=step.kwargs or None, **args)
    if step.each == "rows":
        return ds.map_batches(
            _block_of_rows(step.fn, step.schema),
            fn_kwargs=step.kwargs or None,
            batch_size=None,
            batch_format="pyarrow",
            **args,
        )
    if step.each == "group":
        others = [read(p, job) for p in step.sources]
        joined = ds.union(*others) if others else ds
        return joined.groupby(step.key, num_partitions=step.partitions).map_groups(
            step.fn, fn_kwargs=step.kwargs or None, batch_format=step.format, **args
        )
    batches = {"batch_size": step.batch_size, "batch_format": step.format}
    if step.zero_copy:
        batches["zero_copy_batch"] = True
    if step.runs_as == "pool":
        return ds.map_batches(step.fn, fn_constructor_kwargs=step.kwargs, **batches, **args)
    return ds.map_batches(step.fn, fn_kwargs=step.kwargs or None, **batches, **args)


def _block_of_rows(fn, schema=None):
    """``fn`` over a whole block's rows in one call (the document step: one sandbox round trip a
    block), its rows built into a table of ``schema`` (a row's missing keys are nulls), else by Ray's
    own builder, as ``flat_map``'s are."""

    def per_block(batch, **kwargs):
        from ray.data._internal.delegating_block_builder import DelegatingBlockBuilder

        if schema is not None:
            import pyarrow as pa

            return pa.Table.from_pylist(fn(batch.to_pylist(), **kwargs), schema=schema)

        built = DelegatingBlockBuilder()
        for row in fn(batch.to_pylist(), **kwargs):
            built.add(row)
        return built.build()

    per_block.__name__ = per_block.__qualname__ = fn.__name__  # the stage's name: MapBatches(isolated)
    return per_block


def read(parquet: Parquet, job: JobPlan):
    """A ``step.Parquet``: its files read (its columns only), then through its own steps."""
    ds = read_parquet(list(parquet.files), filesystem=parquet.fs)
    if parquet.columns is not None:
        ds = ds.select_columns(list(parquet.columns))
    return execute(ds, parquet.steps, job)


def task_args(step: Step, job: JobPlan) -> dict:
    """The Ray arguments of a step, from how it runs: a ``document`` step asks for what the
    document stage's tasks ask (``document_task_args``), so Ray fuses it into them; a ``task`` a
    CPU (and the task retries); a ``pool`` its actors, each replaced when it dies and its batch run
    again."""
    if step.runs_as == "document":
        return document_task_args(job)
    if step.runs_as == "pool":
        from ray.data import ActorPoolStrategy

        pool, restarts = step.pool, job.limits.actor_restarts
        return {
            "compute": ActorPoolStrategy(
                min_size=pool.pool[0], initial_size=pool.pool[1], max_size=pool.pool[2]
            ),
            "num_gpus": pool.gpus_per_actor,
            "num_cpus": pool.cpus_per_actor,
            "max_restarts": restarts,
            "max_task_retries": restarts,
        }
    args = {"num_cpus": job.config.resources.cpus_per_task}
    if step.retries:
        args["max_retries"] = job.limits.task_retries
    return args


def write(ds, sink, job: JobPlan) -> None:
    """``ds`` into a Ray Data datasink (``sink.ShardSink``): its write tasks take no CPU, and are
    retried as the document tasks are."""
    ds.write_datasink(sink, ray_remote_args={"max_retries": job.limits.task_retries, "num_cpus": 0})


def on_driver_node(fn, *args):
    """``fn(*args)`` in a Ray task on the driver's node (same local filesystem), so that what it
    holds in memory never swells the driver."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return ray.get(ray.remote(num_cpus=0, max_retries=0, scheduling_strategy=here)(fn).remote(*args))


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

    args = document_task_args(job)
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


def document_task_args(job: JobPlan) -> dict:
    """Ray resources of the parse → classify → chunk tasks (and of the reads fused into them)."""
    return {
        "num_cpus": job.config.resources.cpus_per_task,
        "memory": task_memory(job),
        "max_retries": job.limits.task_retries,  # the task's worker or node lost, not a bad document
    }


def read_digests(runs, fs, job: JobPlan):
    """Candidates for duplicates hashed in Ray read tasks (``blocks.InputDigests``: a path and 32
    bytes per file), materialized in the cluster's object store."""
    import ray.data

    from raychunk.blocks import InputDigests

    source = InputDigests(runs, fs)
    return ray.data.read_datasource(
        source,
        num_cpus=job.config.resources.cpus_per_task,
        ray_remote_args={"max_retries": job.limits.task_retries},
        override_num_blocks=max(1, source.num_blocks),
    ).materialize()
