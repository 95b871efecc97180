"""The jobs' own progress: documents and bytes done of the listed totals, chunks, failures so far, a
rate and an ETA weighted by bytes (one large PDF can be a third of a corpus).

The counts come from the stream itself: the chunk stage (fused into its tasks) and the embedder
count each batch they pass on (``count_batch``: documents rows, their bytes and status, chunk rows)
and add the sums to a ``ProgressCounter`` actor; the driver reads the sums twice a second. A
document is done when the embedder has passed it on (when the job embeds), else once chunked. Nothing per document reaches the driver but the source and
reason of a failed one, printed once. On a terminal the line is redrawn in place; elsewhere (CI,
``nohup``, ``ray job logs``) a plain line is printed every ``every_s`` seconds (10).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

__all__ = [
    "JobProgress",
    "Progress",
    "read_counter",
    "start_counter",
    "NativeNoise",
    "ProgressCounter",
    "ReportProgress",
    "count_batch",
    "quiet_engine",
    "render_progress",
    "verbose",
]


def verbose() -> bool:
    """``--verbose``: the command line set the root logger to INFO."""
    return logging.getLogger().isEnabledFor(logging.INFO)


def count_batch(batch, first_setting: str | None = None) -> dict:
    """What an Arrow batch of job rows (``schema.RUN_ROWS``) adds to the progress: documents rows
    (their ``bytes`` and ``status``), ``reuse`` rows (an incremental run's unchanged documents, not
    parsed), chunk rows, and the source and reason of each ``failed`` document. The price job's rows (one per document and setting, no
    ``row_type``) count by their ``first_setting`` row."""
    import pyarrow.compute as pc

    counts = {"documents": 0, "bytes": 0, "chunks": 0, "reused": 0, "failed": 0, "failures": []}
    if "row_type" not in batch.column_names:
        return _count_measured(batch, first_setting, counts) if first_setting else counts
    kind = batch.column("row_type")
    counts["chunks"] = pc.sum(pc.equal(kind, "chunk")).as_py() or 0
    counts["reused"] = pc.sum(pc.equal(kind, "reuse")).as_py() or 0
    # the four columns first: a documents row's text (its whole document's) is never copied here
    docs = batch.select(["source", "status", "reason", "bytes"]).filter(pc.equal(kind, "document"))
    failed = docs.filter(pc.equal(docs.column("status"), "failed"))
    counts["failures"] = [
        (source or "?", reason or "failed")
        for source, reason in zip(failed.column("source").to_pylist(), failed.column("reason").to_pylist())
    ]
    size = pc.sum(docs.column("bytes")).as_py() or 0
    counts.update(documents=docs.num_rows, bytes=size, failed=failed.num_rows)
    return counts


def _count_measured(batch, first_setting: str, counts: dict) -> dict:
    import pyarrow.compute as pc

    rows = batch.filter(pc.equal(batch.column("setting"), first_setting))
    failed = rows.filter(pc.equal(rows.column("status"), "failed"))
    counts["failures"] = [
        (s, "failed (its reason is in `raychunk run`'s documents)")
        for s in failed.column("source").to_pylist()
    ]
    counts.update(
        documents=rows.num_rows,
        bytes=pc.sum(rows.column("bytes")).as_py() or 0,
        chunks=pc.sum(rows.column("chunks")).as_py() or 0,
        failed=failed.num_rows,
    )
    return counts


_KEYS = ("documents", "bytes", "chunks", "reused", "failed")


class ProgressCounter:
    """The sums per stage (a Ray actor with no CPU): ``chunk``, where documents are parsed and
    chunked, and ``embed``, where they are done; ``failures`` are handed out once each."""

    def __init__(self):
        self.totals = {stage: dict.fromkeys(_KEYS, 0) for stage in ("chunk", "embed")}
        self.failures: list[tuple[str, str]] = []

    def add(self, stage: str, counts: dict) -> None:
        for key in _KEYS:
            self.totals[stage][key] += counts.get(key, 0)
        if stage == "chunk":
            self.failures += counts.get("failures", [])

    def snapshot(self) -> tuple[dict, list]:
        failures, self.failures = self.failures, []
        return {stage: dict(t) for stage, t in self.totals.items()}, failures


class ProgressCounterActor(ProgressCounter):
    """A ``ProgressCounter`` in an actor process of its own, which never loads pyarrow: Ray imports it
    (0.2-0.4 CPU s) in every worker at the first call with arguments, to register Arrow's
    serializers, and the counter's first call comes mid-job, beside the documents' parse."""

    def __init__(self):
        sys.modules.setdefault("pyarrow", None)  # `import pyarrow` raises ModuleNotFoundError here
        super().__init__()


def start_counter():
    """A ``ProgressCounter`` actor with no CPU on the driver's node."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return (
        ray.remote(ProgressCounterActor)
        .options(num_cpus=0, max_restarts=0, scheduling_strategy=here)
        .remote()
    )


def read_counter(counter):
    """A ``Progress`` snapshot function for a ``ProgressCounter`` actor."""
    import ray

    return lambda: ray.get(counter.snapshot.remote(), timeout=10)


class ReportProgress:
    """Called with each batch a stage passes on: adds its counts to the counter under ``stage``
    (fire and forget). As a ``map_batches`` function it returns the batch unchanged."""

    def __init__(self, counter, stage: str = "chunk", first_setting: str | None = None):
        self.counter, self.stage, self.first_setting = counter, stage, first_setting

    def at(self, stage: str) -> ReportProgress:
        return ReportProgress(self.counter, stage, self.first_setting)

    def step(self):
        """The step that counts what the document step passes on, fused into its tasks."""
        from raychunk.step import Step

        return Step("progress", self, runs_as="document", zero_copy=True)

    def __call__(self, batch):
        try:
            counts = count_batch(batch, self.first_setting)
            if counts["documents"] or counts["chunks"] or counts["reused"]:
                self.counter.add.remote(self.stage, counts)
        except Exception:  # progress is a nicety: it never fails a batch
            logging.getLogger(__name__).warning("progress: a batch went uncounted", exc_info=True)
        return batch


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return ""


def _duration(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def render_progress(totals: dict, *, documents: int, nbytes: int, elapsed: float, embedding: bool) -> str:
    """One progress line from the counter's ``totals``: documents and bytes done (embedded, when
    the job embeds), chunks (embedded of those chunked so far), failures, a rate and an ETA weighted
    by bytes (by chunks, once everything is chunked and only embedding is left, if they say less).

    >>> chunk = {"documents": 9, "bytes": 600_000, "chunks": 70, "reused": 0, "failed": 1}
    >>> embed = {"documents": 5, "bytes": 250_000, "chunks": 40, "reused": 0, "failed": 1}
    >>> render_progress({"chunk": chunk, "embed": embed}, documents=20, nbytes=1_000_000,
    ...                 elapsed=10.0, embedding=True)
    'documents 5/20 (9 parsed) · 250.0 kB/1.0 MB (25%) · chunks 40/70 · failed 1 · 25.0 kB/s · ETA 30s'
    """
    parsed = totals["chunk"]
    done = totals["embed"] if embedding else parsed
    finished, size = done["documents"], done["bytes"]
    share = size / nbytes if nbytes else (finished / documents if documents else 1.0)
    seen = parsed["documents"] + parsed["reused"]
    chunks = f"{done['chunks']:,}"
    if embedding and parsed["chunks"] > done["chunks"]:
        chunks += f"/{parsed['chunks']:,}"  # embedded of those chunked so far
        if seen >= documents and parsed["chunks"]:
            # Everything is chunked: what is left is embedding, and a document counts as done when
            # its first batch is, so the chunks tell the share better than its bytes.
            share = min(share, done["chunks"] / parsed["chunks"])
    line = f"documents {finished:,}/{documents:,}"
    if embedding and seen > finished:
        line += f" ({seen:,} parsed)"
    line += (
        f" · {_size(size)}/{_size(nbytes)} ({min(share, 1.0):.0%}) · chunks {chunks}"
        f" · failed {parsed['failed']:,}"
    )
    if elapsed > 0 and size:
        line += f" · {_size(size / elapsed)}/s"
    if 0 < share < 1 and elapsed > 0:
        line += f" · ETA {_duration(elapsed * (1 - share) / share)}"
    return line


class Progress:
    """The driver's side: a thread that reads the counter (``snapshot()``: its totals and new
    failures) and prints, from ``start()`` to ``stop()``: on a terminal one line redrawn twice a
    second, elsewhere a line every ``every_s`` seconds; a failed document's line once; the last
    line at ``stop()``."""

    def __init__(
        self,
        snapshot,
        *,
        documents: int,
        nbytes: int,
        label: str,
        embedding: bool,
        out: TextIO | None = None,
        every_s: float = 10.0,
        poll_s: float = 0.5,
    ):
        self.snapshot = snapshot
        self.documents, self.nbytes, self.label, self.embedding = documents, nbytes, label, embedding
        self.out = out or sys.stderr
        self.live = self.out.isatty()
        self.every_s, self.poll_s = every_s, poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="raychunk-progress", daemon=True)
        self._t0 = time.monotonic()
        self._width = 0

    def start(self) -> Progress:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._show(final=True)

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.poll_s):
            due = time.monotonic() - last >= self.every_s
            if self.live or due:
                self._show()
                last = time.monotonic()

    def _show(self, final: bool = False) -> None:
        try:
            totals, failures = self.snapshot()
        except Exception:  # a slow or lost counter never stops the job
            return
        for source, reason in failures:
            self._write(f"{self.label}: failed: {source}: {reason}", newline=True)
        line = f"{self.label}: " + render_progress(
            totals,
            documents=self.documents,
            nbytes=self.nbytes,
            elapsed=time.monotonic() - self._t0,
            embedding=self.embedding,
        )
        self._write(line, newline=final or not self.live)

    def _write(self, line: str, *, newline: bool) -> None:
        if self.live:
            pad = max(0, self._width - len(line))
            self.out.write("\r" + line + " " * pad + ("\n" if newline else ""))
            self._width = 0 if newline else len(line)
        else:
            self.out.write(line + "\n")
        self.out.flush()


def quiet_engine() -> None:
    """Ray's INFO lines, progress bars and deprecation notes off, unless ``--verbose``; the job
    prints its own progress instead. Warnings and errors still show."""
    if verbose():
        return
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    # Ray Data logs to its session file (ray-data.log, kept whole) and to the console: only errors
    # reach the console.
    for handler in logging.getLogger("ray.data").handlers:
        if not isinstance(handler, logging.FileHandler) and "File" not in type(handler).__name__:
            handler.setLevel(logging.ERROR)


class NativeNoise:
    """Drops the named notes Ray's C++ core writes from the driver process straight to file
    descriptor 2, where no Python logging level reaches them. Today one: every actor pool logs
    "has constructor arguments in the object store" at ERROR (ray#53727), because Ray Data always
    passes an actor its map function by reference; it is not an error of the job. Any other native
    line passes through unchanged, as does everything Python writes (``sys.stderr`` keeps the
    terminal, so the progress line still knows it is on one). Off under ``--verbose`` and when
    stderr is not the process's own (under a test's capture)."""

    NOTES = (b"has constructor arguments in the object store and max_restarts > 0",)
    _LINE = re.compile(rb"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [DIWEF] \d+ \d+\] ")

    def __init__(self) -> None:
        self._saved: int | None = None
        self._thread: threading.Thread | None = None
        self._out = -1
        self.dropped = 0

    def __enter__(self) -> NativeNoise:
        if verbose() or sys.stderr is not sys.__stderr__:
            return self
        try:
            if sys.stderr.fileno() != 2:
                return self
        except (AttributeError, OSError, ValueError):
            return self
        sys.stderr.flush()
        self._saved = os.dup(2)
        read, write = os.pipe()
        os.dup2(write, 2)
        os.close(write)
        encoding = getattr(sys.__stderr__, "encoding", None) or "utf-8"
        sys.stderr = open(
            self._saved, "w", buffering=1, closefd=False, encoding=encoding, errors="backslashreplace"
        )
        out = os.dup(self._saved)
        self._thread = threading.Thread(
            target=self._pump, args=(read, out), name="raychunk-native-noise", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is None:
            return
        sys.stderr.flush()
        sys.stderr = sys.__stderr__
        os.dup2(self._saved, 2)  # closes the pipe's last writer unless a child still holds it
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        os.close(self._saved)
        self._saved = None

    def _pump(self, read: int, out: int) -> None:
        self._out = out
        pending = b""
        try:
            with os.fdopen(read, "rb", buffering=0) as pipe:
                while chunk := pipe.read(65536):
                    pending = self._pass(pending + chunk)
                self._forward(pending)
        finally:
            os.close(out)

    def _pass(self, data: bytes) -> bytes:
        """Forwards ``data`` up to a native line still being written, which is returned to wait for
        its end; a finished native line is dropped when it carries one of the notes."""
        while data:
            found = self._LINE.search(data)
            if found is None:
                cut = data.rfind(b"[")  # the start of a line prefix not yet complete
                keep = cut >= 0 and len(data) - cut < 40
                self._forward(data[:cut] if keep else data)
                return data[cut:] if keep else b""
            self._forward(data[: found.start()])
            end = data.find(b"\n", found.start())
            if end < 0:
                return data[found.start() :]
            line = data[found.start() : end + 1]
            if any(note in line for note in self.NOTES):
                self.dropped += 1
            else:
                self._forward(line)
            data = data[end + 1 :]
        return b""

    def _forward(self, data: bytes) -> None:
        while data:
            data = data[os.write(self._out, data) :]


class JobProgress:
    """A job's progress, declared once: the counter actor (started here, on the driver's node), the
    step that counts what the document step passes on (``step``; ``at(stage)`` counts a later
    stage's batches, the embedder's), and the line the driver prints while the job streams
    (``with progress.shown(): ...``)."""

    def __init__(
        self, label: str, *, documents: int, nbytes: int, embedding: bool, first_setting: str | None = None
    ):
        self.label, self.documents, self.nbytes, self.embedding = label, documents, nbytes, embedding
        self.counter = start_counter()
        self.counted = ReportProgress(self.counter, first_setting=first_setting)

    def step(self):
        return self.counted.step()

    def at(self, stage: str) -> ReportProgress:
        return self.counted.at(stage)

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        progress = Progress(
            read_counter(self.counter),
            documents=self.documents,
            nbytes=self.nbytes,
            label=self.label,
            embedding=self.embedding,
        ).start()
        try:
            yield
        finally:
            progress.stop()
