"""What a job is made of: a list of ``Step``s, read top to bottom, run by ``pipeline.execute``.

A step names a plain function (or a callable class, for an actor pool) and how it sees the data:
``row`` (one row in, a list of rows out), ``rows`` (a block's rows in, a list of rows out: one
call a block), ``batch`` (an Arrow table in and out) or ``group`` (the rows of one ``key`` value,
after the rows of its ``sources`` are joined in). It says how it runs in
words (``runs_as``), never in Ray arguments: the executor is the only code that turns those into
resources and retries, and that calls Ray Data's ``map`` / ``flat_map`` / ``map_batches``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["EmbedPlan", "Parquet", "Step"]


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


@dataclass(frozen=True)
class Parquet:
    """Parquet ``files`` on ``fs`` (only ``columns`` when given), put through their own ``steps``:
    the other side of a ``group`` step (the previous output's rows, or its chunk ids)."""

    files: tuple[str, ...]
    fs: object
    steps: tuple[Step, ...] = ()
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Step:
    """One step of a job.

    ``runs_as``: ``document`` (a task with the document stage's CPU, memory and retries, so Ray
    fuses it into that stage's tasks), ``task`` (a CPU, with retries when ``retries``), or ``pool``
    (the embedding actors of ``pool``, replaced and their batch run again when they die).
    ``batch_size``: rows per call (None: a whole block), ``format``: ``pyarrow`` or ``numpy``.
    A ``group`` step first joins the rows of its ``sources`` to the stream, then groups them on
    ``key`` into ``partitions`` partitions."""

    name: str
    fn: Callable
    each: str = "batch"  # row | rows | batch | group
    kwargs: dict = field(default_factory=dict)  # the function's keyword arguments (a class's constructor's)
    runs_as: str = "task"  # document | task | pool
    retries: bool = True
    batch_size: int | None = None
    format: str = "pyarrow"
    zero_copy: bool = False
    key: str | None = None
    partitions: int = 1
    sources: tuple[Parquet, ...] = ()
    pool: EmbedPlan | None = None
    schema: object = None  # ``rows``: the Arrow schema its rows are built in (None: inferred)

    def __post_init__(self):
        if self.each not in ("row", "rows", "batch", "group"):
            raise ValueError(f"step {self.name}: each={self.each!r}: expected row, rows, batch or group")
        if self.runs_as not in ("document", "task", "pool"):
            raise ValueError(f"step {self.name}: runs_as={self.runs_as!r}: expected document, task or pool")
        if (self.runs_as == "pool") != (self.pool is not None):
            raise ValueError(f"step {self.name}: an actor pool step needs its pool, and only it")
        if (self.each == "group") != (self.key is not None):
            raise ValueError(f"step {self.name}: a group step needs its key, and only it")
