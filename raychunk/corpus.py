"""Opening a corpus, for every job: listing its inputs, planning them into read blocks, and naming
its byte-identical files (which the document step then does not parse).

``run`` and ``price`` list and plan off the driver, in the planner actor (``listing.InputPlanner``:
the driver's memory does not grow with the corpus), unless the inputs are local and a count of
their folders stops under ``DRIVER_LISTING_MAX_FILES``: a small corpus is listed and planned in the
driver (``DriverPlanner``), and no Ray worker starts for it; ``eval``, which must match its labels against
the listed sources first, lists in the driver (``list_files``) and reads the files it keeps
(``pipeline.read_files``). Either way ``duplicates`` hashes only files whose sizes collide.
"""

from __future__ import annotations

import os

from raychunk.listing import InputPlan, InputPlanner, ListingPlanner, listed_or_raise
from raychunk.plan import JobPlan

__all__ = [
    "DRIVER_LISTING_MAX_FILES",
    "DriverPlanner",
    "duplicates_of",
    "find_duplicates",
    "hash_duplicates",
    "list_corpus",
    "list_files",
    "plan_corpus",
    "small_local_inputs",
]

# Up to this many local files the driver lists and plans them itself. The listing is the same work
# either way and the driver waits for it, so the planner actor only adds its Ray worker (a process
# importing Ray and pyarrow: ~1.5 CPU s, on the path to the first document); it is there to keep
# the driver's memory flat. 10,000 files cost the driver ~1.2 s and ~5 MB of listing for as long
# as the plan takes (5,000 generated pages: inputs planned 1.5 s after Ray is up in the actor,
# 0.6 s here).
DRIVER_LISTING_MAX_FILES = 10_000


def list_corpus(job: JobPlan) -> InputPlanner | DriverPlanner:
    """The inputs listed (Ray must be up): by the planner actor, or in the driver when they are
    ``small_local_inputs``; ``plan_corpus`` plans them."""
    limits = job.limits
    inputs = job.config.input
    small = small_local_inputs(inputs, follow_symlinks=limits.follow_symlinks)
    planner = DriverPlanner() if small else InputPlanner()
    planner.list(
        inputs,
        follow_symlinks=limits.follow_symlinks,
        max_file_mb=limits.max_file_mb,
        outputs=_output_excluded(job),
        exclude=job.config.exclude,
    )
    return planner


def _output_excluded(job: JobPlan) -> tuple[str, ...]:
    """The job's output folder and a previous run's: never inputs, even inside an input folder (an
    index written into the corpus it indexes would be read as documents by the next run). A folder
    any raychunk job wrote holds ``io.OUTPUT_MARK`` and is left out wherever it is; these two are
    named here too for outputs written before the mark."""
    return tuple(filter(None, [job.config.output, job.config.incremental.previous]))


def small_local_inputs(inputs, most: int | None = None, *, follow_symlinks: bool = False) -> bool:
    """Whether ``inputs`` are local files and folders holding at most ``most`` entries in all
    (``DRIVER_LISTING_MAX_FILES``; the count stops past it, and goes into symlinked folders when the
    listing will; a URI, a glob or a missing input is never small here: the planner actor lists it,
    and words the error)."""
    most = DRIVER_LISTING_MAX_FILES if most is None else most
    seen = 0
    todo = []
    for item in inputs:
        if "://" in item or any(c in item for c in "*?["):
            return False
        if os.path.isdir(item):
            todo.append(item)
        elif os.path.lexists(item):
            seen += 1
        else:
            return False
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > most:
                        return False
                    if entry.is_dir(follow_symlinks=follow_symlinks):
                        todo.append(entry.path)
        except OSError:
            return False
    return seen <= most


class DriverPlanner:
    """``listing.InputPlanner``'s ``list`` and ``plan``, run in the driver: the planner's own code,
    its blocks' objects owned by the driver."""

    def __init__(self):
        self._planner = ListingPlanner()

    def list(
        self,
        inputs,
        *,
        follow_symlinks: bool = False,
        max_file_mb=None,
        outputs: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> dict:
        listed = listed_or_raise(
            self._planner.list(list(inputs), follow_symlinks, max_file_mb, outputs, exclude)
        )
        self._listed = listed
        return listed

    def plan(self, *, cpus: float, max_files: int, sample: float = 1.0, resume=None) -> InputPlan:
        planned = self._planner.plan(cpus=cpus, max_files=max_files, sample=sample, resume=resume)
        listed = self._listed
        return InputPlan(
            fs=listed["fs"], scheme=listed["scheme"], files=listed["files"], bytes=listed["bytes"], **planned
        )


def plan_corpus(
    planner: InputPlanner | DriverPlanner, job: JobPlan, *, cpus: float, sample: float = 1.0, resume=None
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
        job.config.input,
        follow_symlinks=limits.follow_symlinks,
        max_file_mb=limits.max_file_mb,
        outputs=_output_excluded(job),
        exclude=job.config.exclude,
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
