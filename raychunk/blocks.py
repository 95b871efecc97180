"""Input files in blocks sized by expected parse cost, read by a Ray Data datasource.

Ray's file readers split the listing into equal counts of files, so one block could hold four large
PDFs while another holds four notes, and the last task of a run decided its wall time. Here each
file's cost is estimated from its size and format, the costliest files come first and alone, and
small files share a block up to an even share of the total: enough blocks to keep every CPU busy,
in an order that leaves no long task for the end.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import partial

import pyarrow as pa
import pyarrow.fs as pafs
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from raychunk.io import InputFile, open_input
from raychunk.parse.detect import format_from_name

__all__ = [
    "InputBlocks",
    "InputDigests",
    "digest_runs",
    "duplicate_check",
    "estimated_seconds",
    "plan_blocks",
]

# Seconds of parse + classify + chunk per MB on one core, measured per format over ../shared/corpus;
# only their ratios matter here.
_SECONDS_PER_MB = {
    "pdf": 3.0,
    "docx": 2.5,
    "pptx": 2.5,
    "xlsx": 3.0,
    "ods": 3.0,
    "odp": 2.5,
    "epub": 6.0,
    "odt": 6.0,
    "markdown": 1.5,
    "html": 0.4,
    "text": 0.3,
}
_SECONDS_PER_FILE = 0.02
BLOCKS_PER_CPU = 4
MIN_BLOCK_SECONDS = 0.25  # of estimated_seconds: the samples (12 files) are ~0.45
MAX_BLOCKS = 1024  # Ray Data keeps ~8 KB of driver state per block: more files per block past this
MAX_BLOCK_BYTES = 256 * 2**20

SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("bytes", pa.binary()),
        ("read_error", pa.string()),
        ("raw", pa.binary()),  # the name's bytes, when ``path`` escapes them (``io.shown``)
        ("size", pa.int64()),  # as listed: a file read at another size changed in between
    ]
)
DIGEST_SCHEMA = pa.schema([("path", pa.string()), ("digest", pa.binary(32))])
DIGEST_BLOCK_BYTES = 64 * 2**20
DIGEST_BLOCK_FILES = 4096


def estimated_seconds(f: InputFile) -> float:
    rate = _SECONDS_PER_MB.get(format_from_name(f.path) or "", 1.5)
    return _SECONDS_PER_FILE + rate * f.size / 1e6


def plan_blocks(files: list[InputFile], *, cpus: float, max_files: int) -> list[list[InputFile]]:
    """Groups of files, costliest first: enough for BLOCKS_PER_CPU per CPU, fewer for an input too
    small to give each MIN_BLOCK_SECONDS (never fewer than one per CPU); at most ``max_files`` files
    each, more when that would make over MAX_BLOCKS or BLOCKS_PER_CPU per CPU blocks. A file costing
    more than an even share of what is left is a block of its own; the rest fill blocks up to that
    share, ``max_files`` files and MAX_BLOCK_BYTES."""
    if not files:
        return []
    import numpy as np

    # Costs by position in numpy, not a per-path map: a few bytes per file in the driver. A stable
    # sort keeps equal costs in path order (the listing's order; sorted here if it is not).
    if any(a.path > b.path for a, b in zip(files, files[1:])):
        files = sorted(files, key=lambda f: f.path)
    cost = np.fromiter((estimated_seconds(f) for f in files), dtype=np.float64, count=len(files))
    order = np.argsort(-cost, kind="stable")
    rest = float(cost.sum())
    # A small input: a block of less than MIN_BLOCK_SECONDS is a task's overhead for little work,
    # as long as every CPU still has one.
    per_cpu = max(
        1, min(BLOCKS_PER_CPU * max(1, int(cpus)), max(int(cpus), math.ceil(rest / MIN_BLOCK_SECONDS)))
    )
    max_files = max(max_files, math.ceil(len(files) / max(MAX_BLOCKS, per_cpu)))
    slots = min(len(files), max(math.ceil(len(files) / max_files), per_cpu))
    alone = 0
    while slots > 1 and cost[order[alone]] > rest / slots:
        rest -= cost[order[alone]]
        slots -= 1
        alone += 1
    share = rest / slots
    groups = [[files[i]] for i in order[:alone]]
    group: list[InputFile] = []
    group_cost = group_bytes = 0.0
    for i in order[alone:].tolist():
        f = files[i]
        if group and (
            group_cost + cost[i] > share or len(group) >= max_files or group_bytes + f.size > MAX_BLOCK_BYTES
        ):
            groups.append(group)
            group, group_cost, group_bytes = [], 0.0, 0.0
        group.append(f)
        group_cost += cost[i]
        group_bytes += f.size
    if group:
        groups.append(group)
    return groups


def _read_group(
    paths: tuple[str, ...],
    fs: pafs.FileSystem,
    raws: tuple[bytes | None, ...] | None = None,
    sizes: tuple[int, ...] | None = None,
) -> Iterator[pa.Table]:
    raws = raws or (None,) * len(paths)
    sizes = sizes or (None,) * len(paths)
    data, errors = [], []
    for path, raw in zip(paths, raws):
        try:
            with open_input(fs, path, raw) as f:
                data.append(f.read())
            errors.append(None)
        except OSError as e:  # gone or unreadable since it was listed: a failed row, not a failed run
            data.append(None)
            errors.append(" ".join(f"could not read the file: {type(e).__name__}: {e.strerror or e}".split()))
    yield pa.Table.from_arrays(
        [
            pa.array(paths, pa.string()),
            pa.array(data, pa.binary()),
            pa.array(errors, pa.string()),
            pa.array(raws, pa.binary()),
            pa.array(sizes, pa.int64()),
        ],
        schema=SCHEMA,
    )


def _read_block(ref, fs: pafs.FileSystem) -> Iterator[pa.Table]:
    import ray

    table = ray.get(ref)
    yield from _read_group(
        tuple(table.column("path").to_pylist()),
        fs,
        tuple(table.column("raw").to_pylist()),
        tuple(table.column("size").to_pylist()),
    )


class InputBlocks(Datasource):
    """One read task, and one block of ``(path, bytes, read_error)`` rows, per planned block
    (``listing.Block``: its paths are fetched from the object store by the task, not carried in it)."""

    def __init__(self, blocks, fs: pafs.FileSystem):
        self._blocks = list(blocks)
        self._fs = fs

    def estimate_inmemory_data_size(self) -> int:
        return sum(b.bytes for b in self._blocks)

    def get_read_tasks(self, parallelism: int, per_task_row_limit=None, data_context=None) -> list[ReadTask]:
        return [
            ReadTask(
                partial(_read_block, b.ref, self._fs),
                BlockMetadata(num_rows=b.files, size_bytes=b.bytes, input_files=None, exec_stats=None),
                schema=SCHEMA,
            )
            for b in self._blocks
        ]

    def get_name(self) -> str:
        return "InputFiles"


def digest_runs(files: list[InputFile], *, cpus: float) -> list[list[InputFile]]:
    """Runs of consecutive files to hash, up to DIGEST_BLOCK_BYTES / DIGEST_BLOCK_FILES each and at
    least BLOCKS_PER_CPU runs per CPU."""
    total = sum(f.size for f in files)
    cap_bytes = min(DIGEST_BLOCK_BYTES, max(1, math.ceil(total / (BLOCKS_PER_CPU * max(1, int(cpus))))))
    runs: list[list[InputFile]] = []
    start, size = 0, 0
    for i, f in enumerate(files):
        if i > start and (size + f.size > cap_bytes or i - start >= DIGEST_BLOCK_FILES):
            runs.append(files[start:i])
            start, size = i, 0
        size += f.size
    if start < len(files):
        runs.append(files[start:])
    return runs


def duplicate_check(
    files: list[InputFile], fs: pafs.FileSystem, scheme: str, *, cpus: float
) -> tuple[dict[str, str] | None, list[list[InputFile]]]:
    """Byte-identical files among ``files``: only those whose listed sizes collide can be. Few are
    hashed here (``{duplicate: kept}``, no runs); else the runs to hash in Ray tasks (None, runs)."""
    from raychunk.dedupe import fits_driver, hash_in_driver, size_candidates

    candidates = size_candidates(files)
    if fits_driver(candidates, fs):
        return hash_in_driver(candidates, fs, scheme), []
    return None, digest_runs(candidates, cpus=cpus)


def _digest_block(ref, fs: pafs.FileSystem) -> Iterator[pa.Table]:
    import ray

    from raychunk.dedupe import file_digest

    table = ray.get(ref)
    kept, digests = [], []
    for path, raw in zip(table.column("path").to_pylist(), table.column("raw").to_pylist()):
        try:
            digests.append(file_digest(fs, path, raw))
        except OSError:  # unreadable now: not a duplicate of anything; the parse stage reports it
            continue
        kept.append(path)
    yield pa.Table.from_arrays(
        [pa.array(kept, pa.string()), pa.array(digests, pa.binary(32))], schema=DIGEST_SCHEMA
    )


class InputDigests(Datasource):
    """The SHA-256 of each file, hashed where it is read: one ``(path, digest)`` row per file of
    each run (``listing.Block``). Only the path and 32 bytes per file leave the task."""

    def __init__(self, runs, fs: pafs.FileSystem):
        self._runs = list(runs)
        self._fs = fs

    @property
    def num_blocks(self) -> int:
        return len(self._runs)

    def estimate_inmemory_data_size(self) -> int:
        return sum(r.files * 40 for r in self._runs)

    def get_read_tasks(self, parallelism: int, per_task_row_limit=None, data_context=None) -> list[ReadTask]:
        return [
            ReadTask(
                partial(_digest_block, r.ref, self._fs),
                BlockMetadata(num_rows=r.files, size_bytes=r.files * 40, input_files=None, exec_stats=None),
                schema=DIGEST_SCHEMA,
            )
            for r in self._runs
        ]

    def get_name(self) -> str:
        return "InputDigests"
