"""The corpus listed and planned off the driver, so the driver's memory does not grow with it.

A small actor (``InputPlanner``, zero CPUs, on the driver's node, which sees the same local files)
walks the inputs, filters them (sample, resume), plans the read blocks and the duplicate check, and
puts each block's paths into the object store as a small Arrow table. The driver keeps totals, the
few refused files, and per block one object ref with its file and byte counts: a few hundred bytes
per block, whatever the number of files. The actor owns those objects and lives as long as the
``InputPlan`` that holds its handle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs

from raychunk.io import InputFile

__all__ = ["Block", "InputPlan", "InputPlanner", "blocks_of"]

BLOCK_SCHEMA = pa.schema([("path", pa.string()), ("size", pa.int64()), ("raw", pa.binary())])


@dataclass(frozen=True, slots=True)
class Block:
    """One planned read: the object holding its ``(path, size, raw)`` table, and its totals."""

    ref: object  # ray.ObjectRef of a BLOCK_SCHEMA table
    files: int
    bytes: int


@dataclass(frozen=True)
class InputPlan:
    """What the driver holds of a listed corpus."""

    fs: pafs.FileSystem
    scheme: str
    files: int  # every file listed, refused ones included
    bytes: int
    refused: tuple[InputFile, ...]  # listed, not to be read (and not already done by a resumed run)
    todo_files: int  # to read now: sampled, not yet done
    todo_bytes: int
    done: int  # inputs a resumed run had already finished
    blocks: tuple[Block, ...]
    digest_runs: tuple[Block, ...]  # files whose size another shares, for hashing; empty when hashed already
    duplicates: dict[str, str] | None  # {duplicate source: kept source}, when the planner hashed them itself
    planner: object = field(default=None, repr=False)  # the actor that owns the blocks' objects


def block_table(files) -> pa.Table:
    return pa.table(
        {
            "path": pa.array([f.path for f in files], pa.string()),
            "size": pa.array([f.size for f in files], pa.int64()),
            "raw": pa.array([f.raw for f in files], pa.binary()),  # the name's bytes, when path escapes them
        },
        schema=BLOCK_SCHEMA,
    )


def blocks_of(groups: list[list[InputFile]]) -> list[Block]:
    """Blocks for planned groups, put into the object store by the caller (the planner, or the
    driver for the eval job's and tests' own listings), which owns them."""
    import ray

    return [Block(ray.put(block_table(g)), len(g), sum(f.size for f in g)) for g in groups]


class ListingPlanner:
    """The planner's work, in its actor or (a small local corpus) in the driver: it holds the
    listing between ``list`` and ``plan``, then lets it go."""

    def __init__(self):
        self._listing = None

    def list(
        self,
        inputs,
        follow_symlinks: bool,
        max_file_mb,
        outputs: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> dict:
        from raychunk.io import list_inputs

        try:
            fs, scheme, files = list_inputs(
                inputs,
                follow_symlinks=follow_symlinks,
                max_file_mb=max_file_mb,
                outputs=outputs,
                exclude=exclude,
            )
        except (ValueError, OSError) as e:  # the user's input: raised again in the driver, as it is
            return {"error": (type(e).__name__, str(e))}
        self._listing = (fs, scheme, files)
        return {
            "fs": fs,
            "scheme": scheme,
            "files": len(files),
            "bytes": sum(f.size for f in files),
        }

    def plan(self, *, cpus: float, max_files: int, sample: float, resume) -> dict:
        from raychunk import publish
        from raychunk.blocks import duplicate_check, plan_blocks
        from raychunk.pricing import in_sample

        fs, scheme, files = self._listing
        self._listing = None
        done = publish.resume_state(*resume) if resume else set()
        refused = tuple(f for f in files if f.refused and scheme + f.path not in done)
        pool = [f for f in files if f.refused is None and in_sample(scheme + f.path, sample)]
        todo = [f for f in pool if scheme + f.path not in done]
        del files
        blocks = blocks_of(plan_blocks(todo, cpus=cpus, max_files=max_files))
        duplicates, runs = duplicate_check(pool, fs, scheme, cpus=cpus) if todo else ({}, [])
        return {
            "refused": refused,
            "todo_files": len(todo),
            "todo_bytes": sum(f.size for f in todo),
            "done": len(done),
            "blocks": tuple(blocks),
            "digest_runs": tuple(blocks_of(runs)),
            "duplicates": duplicates,
        }


def listed_or_raise(listed: dict) -> dict:
    """``ListingPlanner.list``'s answer, or its error raised again in the driver, as it was."""
    if "error" in listed:
        kind, message = listed["error"]
        raise (FileNotFoundError if kind == "FileNotFoundError" else ValueError)(message)
    return listed


class InputPlanner:
    """The driver's handle on the planner actor (Ray must be up): ``list`` the inputs, then ``plan``
    them; the plan keeps the actor, which owns the blocks' objects, alive."""

    def __init__(self):
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self._actor = (
            ray.remote(ListingPlanner).options(num_cpus=0, max_restarts=0, scheduling_strategy=here).remote()
        )
        self._listed: dict | None = None

    def list(
        self,
        inputs,
        *,
        follow_symlinks: bool = False,
        max_file_mb=None,
        outputs: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> dict:
        """``{"fs", "scheme", "files", "bytes"}`` of everything the inputs name, the ``outputs``
        folders (the job's output) and what the ``exclude`` patterns name listed as ``skipped``
        rows; a missing input or an empty folder raises here, as ``io.list_inputs`` words it."""
        import ray

        listed = listed_or_raise(
            ray.get(self._actor.list.remote(list(inputs), follow_symlinks, max_file_mb, outputs, exclude))
        )
        self._listed = listed
        return listed

    def plan(self, *, cpus: float, max_files: int, sample: float = 1.0, resume=None) -> InputPlan:
        """The listed inputs in read blocks, less those not sampled or, with ``resume`` (``(fs,
        staging folder, compression)`` of a resumed run), already done."""
        import ray

        if self._listed is None:
            raise RuntimeError("InputPlanner.plan before list")
        planned = ray.get(
            self._actor.plan.remote(cpus=cpus, max_files=max_files, sample=sample, resume=resume)
        )
        listed, self._listed = self._listed, None
        return InputPlan(
            fs=listed["fs"],
            scheme=listed["scheme"],
            files=listed["files"],
            bytes=listed["bytes"],
            planner=self._actor,
            **planned,
        )
