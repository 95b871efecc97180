"""The run report: its typed record (``RunReport``, built once from what the run job measured by
``build_run_report``; ``as_json()`` is ``report.json``) and its renderings, the text the CLI prints
and ``report.md``."""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field

from raychunk.report.record import OMIT_NONE, as_json

__all__ = [
    "BACKEND_NOTES",
    "ChunkIdCounts",
    "Delta",
    "DocumentCounts",
    "DocumentNote",
    "Duplicates",
    "Embedder",
    "Incremental",
    "Input",
    "Ocr",
    "RayInfo",
    "RunReport",
    "Stage",
    "Storage",
    "Throughput",
    "build_run_report",
    "render_run_markdown",
    "render_run_text",
]


@dataclass(frozen=True)
class RayInfo:
    mode: str
    cluster: dict[str, float]


@dataclass(frozen=True)
class Embedder:
    model: str
    backend: str
    note: str | None
    dim: int
    actors: int
    actors_max: int
    gpus_per_actor: float


@dataclass(frozen=True)
class Input:
    files: int
    bytes: int
    root: str
    exclude: tuple[str, ...] = ()  # the --exclude patterns; what they named is a skipped row each


@dataclass(frozen=True)
class DocumentCounts:
    by_status: dict[str, int]
    by_type: dict[str, int]


@dataclass(frozen=True)
class Ocr:
    documents: int
    pages: int
    cpu_seconds: float
    engines: tuple[str, ...]
    missing: str


@dataclass(frozen=True)
class Duplicates:
    files: int
    bytes_saved: int
    tokens_saved: int


@dataclass(frozen=True)
class Storage:
    chunks_parquet: int
    documents_parquet: int
    chunk_text: int
    vectors_raw: int


@dataclass(frozen=True)
class Throughput:
    wall_seconds: float
    ray_start_seconds: float
    files_per_s: float
    input_mb_per_s: float
    chunks_per_s: float
    tokens_per_s: float


@dataclass(frozen=True)
class Stage:
    """One Ray Data operator (fused stages share one): wall seconds and summed task seconds."""

    stage: str
    tasks: int | None
    seconds: float
    task_seconds: float | None


@dataclass(frozen=True)
class DocumentNote:
    """A document not ok (``status`` set) or ok with a warning (``status`` None, left out)."""

    source: str
    status: str | None = field(default=None, metadata=OMIT_NONE)
    reason: str = ""


@dataclass(frozen=True)
class ChunkIdCounts:
    unchanged: int
    new: int
    removed: int


@dataclass(frozen=True)
class Delta:
    added: int
    removed: int


@dataclass(frozen=True)
class Incremental:
    """What an incremental run reused and what changed against its previous output."""

    previous: str
    previous_identity: str  # what `raychunk export` checks a table holds
    documents_reused: int
    documents_skip: bool
    chunks: ChunkIdCounts
    vectors_embedded: int
    vectors_reused: int
    vectors_reused_by_id: int
    vectors_reused_by_text: int
    delta: Delta


@dataclass(frozen=True)
class RunReport:
    generated: str
    output: str
    ray: RayInfo
    embedder: Embedder | None
    input: Input
    documents: DocumentCounts
    ocr: Ocr
    duplicates: Duplicates
    chunks: int
    vectors: int
    tokens_embedded: int  # what this run embedded: an incremental run's reused vectors cost nothing
    tokens_chunked: int
    over_embedder_limit: int
    storage_bytes: Storage
    throughput: Throughput
    stages: tuple[Stage, ...]
    not_ok: tuple[DocumentNote, ...]  # the first few by source: the documents table has every one
    not_ok_total: int
    warnings: tuple[DocumentNote, ...]
    warnings_total: int
    settings: dict  # what shapes the rows (``jobs.run.settings_fingerprint``), as --previous reads it
    resumed: dict | None
    incremental: Incremental | None = field(default=None, metadata=OMIT_NONE)
    files: dict[str, list[str]] | None = field(default=None, metadata=OMIT_NONE)  # set when published

    def with_files(self, files: dict[str, list[str]]) -> RunReport:
        return dataclasses.replace(self, files=files)

    def as_json(self) -> dict:
        """The report as ``report.json`` holds it: fields in order, records as objects, tuples as lists."""
        return as_json(self)


# What a backend other than torch changes in the vectors, as measured (README, Benchmarks).
BACKEND_NOTES = {
    "onnx-int8": "vectors are int8-quantized approximations of the torch model's (cosine to torch: mean "
    "0.993, min 0.986 on real chunks); check retrieval with `raychunk eval` before relying on it",
}


_OP = re.compile(
    r"^Operator \d+ (?P<name>.+?): (?:(?P<tasks>\d+) tasks executed)?(?:.*?produced in |executed in )(?P<secs>[\d.]+)s"
    r"(?:\n\* Remote wall time: .*?(?P<task>[\d.]+)(?P<unit>us|ms|s|min) total)?",
    re.M,
)
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _stages(stats: str) -> tuple[Stage, ...]:
    """Per Ray Data operator (fused stages share one): wall seconds and summed task seconds."""
    return tuple(
        Stage(
            stage=m.group("name"),
            tasks=int(m.group("tasks")) if m.group("tasks") else None,
            seconds=float(m.group("secs")),
            task_seconds=round(float(m.group("task")) * _UNIT[m.group("unit")], 3)
            if m.group("task")
            else None,
        )
        for m in _OP.finditer(stats or "")
    )


def build_run_report(
    cfg,
    docs: dict,
    inputs,
    results,
    plan,
    stats,
    wall,
    cluster,
    *,
    root: str,
    settings: dict,
    resumed: dict | None,
    incremental: Incremental | None,
) -> RunReport:
    """The run report, from what the run job measured: its config, the documents (``docs``:
    ``publish.documents_summary``), inputs (``listing.InputPlan``, under ``root``), every shard's
    totals (``results``), the embedding plan, Ray Data's stats text, the wall time, the Ray it ran on
    (``pipeline.RayCluster``); the settings that shaped the rows and what an incremental run reused."""
    total = lambda key: sum(r.get(key, 0) for r in results)  # noqa: E731
    chunks, tokens = total("chunks"), total("tokens")
    vectors = chunks if plan else 0
    files, input_bytes = inputs.files, inputs.bytes
    ocr = docs["ocr"]
    return RunReport(
        generated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        output=cfg.output,
        ray=RayInfo(
            mode=cluster.where,
            cluster={k: v for k, v in sorted(cluster.resources.items()) if k in ("CPU", "GPU", "memory")},
        ),
        embedder=Embedder(
            model=cfg.embedder.model,
            backend=cfg.embedder.backend,
            note=BACKEND_NOTES.get(cfg.embedder.backend),
            dim=plan.dim,
            actors=plan.actors,
            actors_max=plan.pool[2],
            gpus_per_actor=plan.gpus_per_actor,
        )
        if plan
        else None,
        input=Input(files=files, bytes=input_bytes, root=root, exclude=tuple(cfg.exclude)),
        documents=DocumentCounts(by_status=docs["by_status"], by_type=docs["by_type"]),
        ocr=Ocr(
            documents=ocr["documents"],
            pages=ocr["pages"],
            cpu_seconds=ocr["cpu_seconds"],
            engines=tuple(ocr["engines"]),
            missing=ocr["missing"],
        ),
        duplicates=Duplicates(**docs["duplicates"]),
        chunks=chunks,
        vectors=vectors,
        tokens_embedded=sum(r.get("tokens_embedded", r.get("tokens", 0)) for r in results) if plan else 0,
        tokens_chunked=tokens,
        over_embedder_limit=total("over_limit"),
        storage_bytes=Storage(
            chunks_parquet=total("chunk_bytes"),
            documents_parquet=sum(r.get("document_bytes", 0) for r in results),
            chunk_text=total("text_bytes"),
            vectors_raw=vectors * (plan.dim if plan else 0) * 4,
        ),
        throughput=Throughput(
            wall_seconds=round(wall, 2),
            ray_start_seconds=round(cluster.start_seconds, 2),
            files_per_s=round(files / wall, 3),
            input_mb_per_s=round(input_bytes / 1e6 / wall, 3),
            chunks_per_s=round(chunks / wall, 2),
            tokens_per_s=round(tokens / wall, 1),
        ),
        stages=_stages(stats),
        not_ok=tuple(DocumentNote(d["source"], d["status"], d["reason"]) for d in docs["not_ok"]),
        not_ok_total=docs["not_ok_total"],
        warnings=tuple(DocumentNote(d["source"], reason=d["reason"]) for d in docs["warnings"]),
        warnings_total=docs["warnings_total"],
        settings=settings,
        resumed=resumed,
        incremental=incremental,
    )


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def render_run_text(r: RunReport) -> str:
    store, t = r.storage_bytes, r.throughput
    lines = [
        f"raychunk run → {r.output}",
        f"  input      {r.input.files} files, {_mb(r.input.bytes)}"
        + (f" (--exclude {' '.join(map(repr, r.input.exclude))})" if r.input.exclude else ""),
        "  documents  " + ", ".join(f"{n} {s}" for s, n in r.documents.by_status.items()),
        "  types      " + ", ".join(f"{n} {t}" for t, n in r.documents.by_type.items()),
        *_duplicates_line(r.duplicates),
        *_ocr_lines(r.ocr),
        f"  chunks     {r.chunks:,}  vectors {r.vectors:,}  tokens embedded {r.tokens_embedded:,}"
        f"  over the embedder's input limit: {r.over_embedder_limit}",
        f"  storage    chunks {_mb(store.chunks_parquet)} parquet (raw vectors "
        f"{_mb(store.vectors_raw)}, text {_mb(store.chunk_text)}), "
        f"documents {_mb(store.documents_parquet)}",
        f"  time       {t.wall_seconds:.1f} s (Ray start {t.ray_start_seconds:.1f} s): "
        f"{t.files_per_s:.2f} files/s, "
        f"{t.chunks_per_s:.1f} chunks/s, {t.tokens_per_s:.0f} tokens/s",
    ]
    lines += _incremental_lines(r.incremental)
    if r.embedder:
        e = r.embedder
        lines.append(
            f"  embedder   {e.model} (dim {e.dim}, {e.backend}), {e.actors} actor(s)"
            + (f" growing to {e.actors_max}" if e.actors_max > e.actors else "")
            + f", {e.gpus_per_actor:g} GPU each"
        )
        if e.note:
            lines.append(f"  WARNING    embedder.backend={e.backend}: {e.note}")
    for st in r.stages:
        tasks = f", {st.task_seconds:.1f} s in {st.tasks or ''} tasks" if st.task_seconds is not None else ""
        lines.append(f"  stage      {st.stage}: {st.seconds:.1f} s wall{tasks}")
    for d in r.not_ok:
        lines.append(f"  {d.status:<11} {d.source}: {d.reason}")
    lines += _more(r.not_ok, r.not_ok_total, "documents not ok", "status != 'ok'")
    return "\n".join(lines)


def _reused_how(inc: Incremental) -> str:
    return f" ({inc.vectors_reused_by_id:,} by chunk id, {inc.vectors_reused_by_text:,} by text)"


def _incremental_lines(inc: Incremental | None) -> list[str]:
    if not inc:
        return []
    c, d = inc.chunks, inc.delta
    return [
        f"  previous   {inc.previous}: {inc.documents_reused} documents reused unparsed"
        + ("" if inc.documents_skip else " (chunk settings changed: every document chunked again)"),
        f"  chunk ids  {c.unchanged:,} unchanged, {c.new:,} new, {c.removed:,} removed",
        f"  vectors    {inc.vectors_embedded:,} embedded, {inc.vectors_reused:,} reused" + _reused_how(inc),
        f"  delta      {d.added:,} rows to upsert (delta/added), {d.removed:,} ids to delete (delta/removed)",
    ]


def _ocr_lines(ocr: Ocr) -> list[str]:
    lines = []
    if ocr.pages:
        lines.append(
            f"  ocr        {ocr.pages:,} page(s) of {ocr.documents:,} document(s) read by OCR "
            f"({', '.join(ocr.engines)}), {ocr.cpu_seconds:.1f} CPU s"
        )
    if ocr.missing:
        lines.append(f"  WARNING    scanned pages were left unread: {ocr.missing}")
    return lines


def _duplicates_line(d: Duplicates) -> list[str]:
    if not d.files:
        return []
    return [
        f"  duplicates {d.files} byte-identical files skipped: {_mb(d.bytes_saved)} and "
        f"{d.tokens_saved:,} tokens saved"
    ]


def render_run_markdown(r: RunReport) -> str:
    store, t = r.storage_bytes, r.throughput
    out = [
        f"# raychunk run report\n\nOutput: `{r.output}` · generated {r.generated} · Ray: {r.ray.mode}\n",
        "| measure | value |",
        "|---|---|",
        f"| input files | {r.input.files} ({_mb(r.input.bytes)}) |",
    ]
    for status, n in r.documents.by_status.items():
        out.append(f"| documents {status} | {n} |")
    for doc_type, n in r.documents.by_type.items():
        out.append(f"| type {doc_type} | {n} |")
    ocr = r.ocr
    if ocr.pages:
        out.append(
            f"| pages read by OCR | {ocr.pages:,} of {ocr.documents:,} documents "
            f"({', '.join(ocr.engines)}, {ocr.cpu_seconds:.1f} CPU s) |"
        )
    if ocr.missing:
        out.append(f"| scanned pages left unread | {ocr.missing} |")
    d = r.duplicates
    if d.files:
        out.append(
            f"| byte-identical duplicates skipped | {d.files} ({_mb(d.bytes_saved)}, "
            f"{d.tokens_saved:,} tokens saved) |"
        )
    e = r.embedder
    out += [
        f"| chunks | {r.chunks:,} |",
        f"| vectors | {r.vectors:,} |",
        f"| tokens embedded | {r.tokens_embedded:,} |",
        f"| chunks over the embedder's input limit | {r.over_embedder_limit} |",
        *(
            [f"| embedder backend | {e.backend}: {e.note or 'vectors as torch'} |"]
            if e and e.backend != "torch"
            else []
        ),
        f"| chunks Parquet | {_mb(store.chunks_parquet)} |",
        f"| raw vectors | {_mb(store.vectors_raw)} |",
        f"| chunk text | {_mb(store.chunk_text)} |",
        f"| documents Parquet | {_mb(store.documents_parquet)} |",
        f"| wall time | {t.wall_seconds:.1f} s |",
        f"| throughput | {t.files_per_s:.2f} files/s, {t.tokens_per_s:.0f} tokens/s |",
    ]
    inc = r.incremental
    if inc:
        c, delta = inc.chunks, inc.delta
        out += [
            "",
            f"## Incremental run (previous output `{inc.previous}`)",
            "",
            "| measure | value |",
            "|---|---|",
            f"| documents reused, not parsed | {inc.documents_reused} |",
            f"| chunk ids unchanged / new / removed | {c.unchanged:,} / {c.new:,} / {c.removed:,} |",
            f"| vectors embedded / reused | {inc.vectors_embedded:,} / {inc.vectors_reused:,}{_reused_how(inc)} |",
            f"| delta: rows to upsert / ids to delete | {delta.added:,} / {delta.removed:,} |",
        ]
    if r.stages:
        out += ["", "## Stages (Ray Data stats)", "", "| stage | wall s | task s |", "|---|---|---|"]
        out += [
            f"| {st.stage} | {st.seconds:.2f} | {st.task_seconds if st.task_seconds is not None else ''} |"
            for st in r.stages
        ]
    if r.not_ok:
        out += ["", "## Documents not parsed", "", "| source | status | reason |", "|---|---|---|"]
        out += [f"| `{n.source}` | {n.status} | {n.reason} |" for n in r.not_ok]
        out += _more(r.not_ok, r.not_ok_total, "documents not ok", "status != 'ok'", md=True)
    if r.warnings:
        out += ["", "## Warnings", ""] + [f"- `{w.source}`: {w.reason}" for w in r.warnings]
        out += _more(r.warnings, r.warnings_total, "warnings", "status == 'ok' and reason != ''", md=True)
    return "\n".join(out) + "\n"


def _more(listed: tuple, total: int, what: str, where: str, *, md: bool = False) -> list[str]:
    """The line that says how many a report's short list left out, and where they all are."""
    if total <= len(listed):
        return []
    line = f"... {total - len(listed):,} more {what} ({total:,} in all): the documents table has every one ({where})"
    return ["", line] if md else [f"  {line}"]
