"""Opening a corpus, for every job: listing its inputs, planning them into read blocks, and naming
its byte-identical files (which the document step then does not parse).

``run`` and ``price`` list and plan off the driver, in the planner actor (``listing.InputPlanner``:
the driver's memory does not grow with the corpus); ``eval``, which must match its labels against
the listed sources first, lists in the driver (``list_files``) and reads the files it keeps
(``pipeline.read_files``). Either way ``duplicates`` hashes only files whose sizes collide.
"""

from __future__ import annotations

from raychunk.listing import InputPlan, InputPlanner
from raychunk.plan import JobPlan

__all__ = ["duplicates_of", "find_duplicates", "hash_duplicates", "list_corpus", "list_files", "plan_corpus"]


def list_corpus(job: JobPlan) -> InputPlanner:
    """The inputs listed by the planner actor (Ray must be up); ``plan_corpus`` plans them."""
    limits = job.limits
    planner = InputPlanner()
    planner.list(job.config.input, follow_symlinks=limits.follow_symlinks, max_file_mb=limits.max_file_mb)
    return planner


def plan_corpus(
    planner: InputPlanner, job: JobPlan, *, cpus: float, sample: float = 1.0, resume=None
) -> InputPlan:
    """The listed inputs in read blocks sized for ``cpus``, less those not in the ``sample`` or,
    with ``resume``, already done (``InputPlanner.plan``)."""
    return planner.plan(
        cpus=cpus, max_files=job.config.resources.files_per_block, sample=sample, resume=resume
    )


def list_files(job: JobPlan):
    """``(filesystem, scheme, files)``: the readable inputs, listed in the driver (``io.list_inputs``)."""
    from raychunk.io import list_inputs, readable

    limits = job.limits
    fs, scheme, files = list_inputs(
        job.config.input, follow_symlinks=limits.follow_symlinks, max_file_mb=limits.max_file_mb
    )
    return fs, scheme, readable(files)


def duplicates_of(plan: InputPlan, job: JobPlan) -> dict[str, str]:
    """``{duplicate source: kept source}`` of a planned corpus: the planner's own answer when it
    hashed the few candidates, else ``hash_duplicates`` over its runs."""
    if plan.duplicates is not None:
        return plan.duplicates
    return hash_duplicates(plan.digest_runs, plan.fs, plan.scheme, job)


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


def hash_duplicates(runs, fs, scheme: str, job: JobPlan) -> dict[str, str]:
    """Candidates hashed in Ray read tasks (``pipeline.read_digests``), grouped by a task on the
    driver's node: the driver receives the ``{duplicate: kept}`` map only."""
    from raychunk.pipeline import on_driver_node, read_digests

    refs = read_digests(runs, fs, job).to_arrow_refs()
    return on_driver_node(_group_digests, refs, scheme)


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
