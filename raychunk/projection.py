"""How long a corpus takes on a cluster, projected from measured per-stage rates: not a measurement.

Pure Python (no Ray, no torch): the price job, ``scripts/plan_cluster.py`` and the tests call it.

The model, stated in every rendering:
- parse and chunk (classify included) run one after the other in the same task, per document, on
  the cluster's CPUs: each node's CPUs, head included (cluster.yaml's head takes parse tasks), less
  one CPU per embed actor (``resources.cpus_per_embed_actor``). Their seconds add up:
  ``cpu = (parse_core_seconds + chunk_core_seconds) / cpus``, where core-seconds are bytes (or PDF
  pages) over the per-core rate of each type family;
- embed runs on the GPUs, one actor per GPU: ``embed = tokens / (tokens/s per GPU × GPUs)``; on a
  cluster without GPUs, on the CPUs left to it at the per-core CPU rate;
- the CPU stages and the embed stage stream (Ray Data overlaps them), so the wall time is about the
  longer of the two, which is the stage that bounds the run; run one after the other they take the
  sum, an upper bound;
- node-hours: each node type's count × the wall time (autoscaled to ``max_workers``, all up from
  the start);
- not modelled: Ray start-up and node boot, reading the input and writing Parquet (object-store
  bandwidth), the per-document child process (``benchmarks/cpu_stage.py``: about 1.1× a plain loop),
  stragglers at the end of a run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FAMILIES",
    "ClusterShape",
    "Corpus",
    "NodeType",
    "Projection",
    "Rate",
    "StageRates",
    "StageTime",
    "corpus_from_profile",
    "corpus_from_totals",
    "format_count",
    "format_duration",
    "gpu_rate_from_benchmark",
    "gpu_rate_from_report",
    "gpu_rate_from_run_log",
    "project",
    "projection_lines",
]

# Type families the rates are measured by; ``all`` is the measured mix (total bytes / total seconds),
# used for a family with no rate of its own and for a corpus whose mix is not known.
FAMILIES = ("pdf", "markdown", "html", "text")
ALL = "all"

# CPUs and GPUs of the EC2 instance types cluster.yaml may name without stating ``resources``
# (Ray detects them at launch; a plan has to know them beforehand). From AWS's instance type pages.
INSTANCE_RESOURCES: dict[str, tuple[int, int]] = {
    "m5.xlarge": (4, 0),
    "m5.2xlarge": (8, 0),
    "m5.4xlarge": (16, 0),
    "g5.xlarge": (4, 1),
    "g5.2xlarge": (8, 1),
    "g5.4xlarge": (16, 1),
    "g5.12xlarge": (48, 4),
    "g4dn.xlarge": (4, 1),
    "g4dn.2xlarge": (8, 1),
}

CUDA_FORWARD_BATCH = 64  # raychunk.embed.CUDA_FORWARD_BATCH: the batch the pipeline runs on a GPU


@dataclass(frozen=True, slots=True)
class Rate:
    """One throughput figure and where it came from (a benchmark and date, or a published page)."""

    value: float
    unit: str
    source: str

    def __post_init__(self):
        if not (self.value > 0 and math.isfinite(self.value)):
            raise ValueError(f"rate {self.value!r} {self.unit}: expected a positive number ({self.source})")

    @classmethod
    def from_dict(cls, d: Mapping) -> Rate:
        return cls(float(d["value"]), str(d["unit"]), str(d["source"]))

    def to_dict(self) -> dict:
        return {"value": self.value, "unit": self.unit, "source": self.source}


@dataclass(frozen=True, slots=True)
class StageRates:
    """Per-stage throughput. Parse and chunk rates are per CPU core in MB/s of *source* bytes (the
    files as read), by type family and for the measured mix (``all``)."""

    parse_mb_s: Mapping[str, Rate]
    pdf_pages_s: Rate
    chunk_mb_s: Mapping[str, Rate]
    embed_tokens_s_gpu: Rate
    embed_tokens_s_cpu: Rate

    def __post_init__(self):
        for name in ("parse_mb_s", "chunk_mb_s"):
            if ALL not in getattr(self, name):
                raise ValueError(f"StageRates.{name} needs an {ALL!r} rate (the measured mix)")

    def parse(self, family: str) -> Rate:
        return self.parse_mb_s.get(family) or self.parse_mb_s[ALL]

    def chunk(self, family: str) -> Rate:
        return self.chunk_mb_s.get(family) or self.chunk_mb_s[ALL]

    @classmethod
    def from_dict(cls, d: Mapping) -> StageRates:
        """From the ``rates`` object of ``benchmarks/stage_rates.json``."""
        return cls(
            parse_mb_s={k: Rate.from_dict(v) for k, v in d["parse_mb_s"].items()},
            pdf_pages_s=Rate.from_dict(d["pdf_pages_s"]),
            chunk_mb_s={k: Rate.from_dict(v) for k, v in d["chunk_mb_s"].items()},
            embed_tokens_s_gpu=Rate.from_dict(d["embed_tokens_s_gpu"]),
            embed_tokens_s_cpu=Rate.from_dict(d["embed_tokens_s_cpu"]),
        )


def gpu_rate_from_benchmark(report: Mapping, source: str) -> Rate | None:
    """MiniLM tokens/s on one GPU from ``benchmarks/gpu_embed.py --json``'s report: the row the
    pipeline runs (fp16, length-sorted, batch 64), else the best sorted MiniLM row. None for a CPU
    run of the benchmark (no ``gpu``), which says nothing about a GPU."""
    if report.get("device") != "cuda" or not report.get("gpu"):
        return None
    rows = [
        r
        for r in report.get("rows", [])
        if r.get("model") == "all-MiniLM-L6-v2" and r.get("device") == "cuda" and r.get("order") == "sorted"
    ]
    if not rows:
        return None
    row = next((r for r in rows if r.get("batch_size") == CUDA_FORWARD_BATCH), None)
    row = row or max(rows, key=lambda r: r["tokens_per_s"])
    return Rate(
        float(row["tokens_per_s"]),
        "tokens/s per GPU",
        f"measured: {source}, {report['gpu']}, {row['dtype']}, batch {row['batch_size']} sorted "
        f"(tokenize + forward), mean {report.get('texts', {}).get('mean_tokens', '?')} tokens per chunk",
    )


def gpu_rate_from_run_log(text: str, source: str) -> Rate | None:
    """Tokens/s per GPU of the embed stage in a ``raychunk run`` on GPUs, from the summary it prints
    or from its ``report.json`` (``text`` a JSON object: ``gpu_rate_from_report``): the tokens
    embedded over the embed actors' task time (one actor per GPU; model loads are not in it). None
    when ``text`` is no such summary or its actors held no GPU."""
    if text.lstrip().startswith("{"):
        try:
            report = json.loads(text)
        except ValueError:
            return None
        return gpu_rate_from_report(report, source) if isinstance(report, dict) else None
    tokens = re.search(r"tokens embedded ([\d,]+)", text)
    pool = re.search(r"embedder .*?(\d+) actor\(s\), ([\d.]+) GPU each", text)
    stage = re.search(r"MapBatches\(EmbedChunks\): ([\d.]+) s wall, ([\d.]+) s in (\d+) tasks", text)
    if not (tokens and pool and stage) or float(pool[2]) <= 0 or float(stage[2]) <= 0:
        return None
    return _gpu_rate(
        int(tokens[1].replace(",", "")), float(stage[2]), float(pool[2]), pool[1], "MiniLM", source
    )


def gpu_rate_from_report(report: dict, source: str) -> Rate | None:
    """``gpu_rate_from_run_log`` from a run's ``report.json``: ``tokens_embedded`` over the embed
    stage's ``task_seconds`` times ``embedder.gpus_per_actor``."""
    embedder = report.get("embedder") or {}
    gpus = float(embedder.get("gpus_per_actor") or 0)
    n = int(report.get("tokens_embedded") or 0)
    stage = next((s for s in report.get("stages") or () if s.get("stage") == "MapBatches(EmbedChunks)"), {})
    task_s = float(stage.get("task_seconds") or 0)
    if gpus <= 0 or n <= 0 or task_s <= 0:
        return None
    return _gpu_rate(n, task_s, gpus, embedder.get("actors", "?"), embedder.get("model", "embedder"), source)


def _gpu_rate(tokens: int, task_s: float, gpus_per_actor: float, actors, model: str, source: str) -> Rate:
    return Rate(
        round(tokens / (task_s * gpus_per_actor)),
        "tokens/s per GPU",
        f"measured: the embed stage of `raychunk run --device cuda` ({source}): {tokens:,} {model} tokens "
        f"in {task_s:g} s of its {actors} actor(s)' task time",
    )


# ---------------------------------------------------------------------------------------------------
# the cluster


@dataclass(frozen=True, slots=True)
class NodeType:
    name: str
    instance_type: str
    cpus: int
    gpus: int
    min_workers: int
    max_workers: int


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """What a Ray cluster launcher config can bring up: the head and the worker node types."""

    name: str
    head: NodeType
    workers: tuple[NodeType, ...]
    max_workers: int  # all worker types together (cluster.yaml's top-level max_workers)

    @classmethod
    def from_yaml(cls, path_or_text: str | Path) -> ClusterShape:
        import yaml

        text = Path(path_or_text).read_text() if isinstance(path_or_text, Path) else path_or_text
        return cls.from_config(yaml.safe_load(text))

    @classmethod
    def from_config(cls, config: Mapping) -> ClusterShape:
        head_name = config["head_node_type"]
        types = config["available_node_types"]
        cap = int(config.get("max_workers", 2))  # Ray's default when the key is absent
        head = _node_type(head_name, types[head_name], head=True)
        workers = tuple(_node_type(n, t, head=False, cap=cap) for n, t in types.items() if n != head_name)
        return cls(str(config.get("cluster_name", "")), head, workers, cap)

    def nodes(self, workers: Mapping[str, int] | None = None) -> dict[str, int]:
        """Node count per type: ``workers`` as given, else every type at its max_workers (in the
        order listed, within the cluster-wide cap). The head counts one."""
        counts = {self.head.name: 1}
        left = self.max_workers
        for t in self.workers:
            n = min(t.max_workers, left) if workers is None else int(workers.get(t.name, t.min_workers))
            if not t.min_workers <= n <= t.max_workers:
                raise ValueError(
                    f"{n} {t.name} workers: cluster.yaml allows {t.min_workers}..{t.max_workers}"
                )
            counts[t.name] = n
            left -= n
        return counts

    def reachable_gpus(self) -> int:
        """The most GPUs the autoscaler can bring up: the head's, plus the worker types filled
        GPU-richest first, each up to its max_workers, within the cluster-wide cap."""
        total, left = self.head.gpus, self.max_workers
        for t in sorted(self.workers, key=lambda t: -t.gpus):
            take = min(t.max_workers, left)
            total += t.gpus * take
            left -= take
        return total

    def totals(self, nodes: Mapping[str, int]) -> tuple[int, int]:
        """(CPUs, GPUs) of these node counts."""
        by_name = {t.name: t for t in (self.head, *self.workers)}
        cpus = sum(by_name[n].cpus * k for n, k in nodes.items())
        gpus = sum(by_name[n].gpus * k for n, k in nodes.items())
        return cpus, gpus

    def describe(self, nodes: Mapping[str, int]) -> str:
        by_name = {t.name: t for t in (self.head, *self.workers)}
        return " + ".join(
            f"{k} × {n} ({by_name[n].instance_type}: {by_name[n].cpus} CPUs"
            + (f", {by_name[n].gpus} GPU" if by_name[n].gpus else "")
            + ")"
            for n, k in nodes.items()
            if k
        )


def _node_type(name: str, t: Mapping, *, head: bool, cap: int = 0) -> NodeType:
    instance = str(t.get("node_config", {}).get("InstanceType", ""))
    res = t.get("resources") or {}
    known = INSTANCE_RESOURCES.get(instance)
    if ("CPU" not in res or "GPU" not in res) and known is None:
        raise ValueError(
            f"node type {name!r}: instance type {instance!r} states no CPU/GPU resources and is not in "
            f"raychunk.projection.INSTANCE_RESOURCES; give resources: {{CPU: n, GPU: g}} in cluster.yaml"
        )
    cpus = int(res.get("CPU", known[0] if known else 0))
    gpus = int(res.get("GPU", known[1] if known else 0))
    if head:
        return NodeType(name, instance, cpus, gpus, 1, 1)
    return NodeType(name, instance, cpus, gpus, int(t.get("min_workers", 0)), int(t.get("max_workers", cap)))


# ---------------------------------------------------------------------------------------------------
# the corpus


@dataclass(frozen=True, slots=True)
class Corpus:
    """What a projection needs to know of a corpus. ``bytes_by_family`` holds source bytes per type
    family (``all`` when the mix is not known); ``pdf_pages``, when known, times PDF parsing by pages
    instead of bytes. ``assumptions`` say where each figure came from."""

    label: str
    documents: float
    bytes_by_family: Mapping[str, float]
    tokens: float
    vectors: float
    pdf_pages: float | None = None
    assumptions: tuple[str, ...] = field(default=())
    ocr_pages: float = 0.0  # pages read by OCR, and their measured CPU seconds (one core each)
    ocr_core_seconds: float = 0.0

    @property
    def bytes(self) -> float:
        return sum(self.bytes_by_family.values())


def corpus_from_profile(
    profile: Mapping[str, Mapping],
    *,
    label: str,
    documents: float | None = None,
    total_bytes: float | None = None,
    source: str = "a measured profile",
) -> Corpus:
    """A corpus of ``documents`` documents or ``total_bytes`` bytes with the type mix, bytes per
    document, PDF pages per byte and tokens and chunks per byte of a measured sample: ``profile``
    maps family → {files, bytes, pages (pdf), tokens, chunks} (``stage_rates.json``'s
    ``corpus_profile``), scaled as a whole."""
    if (documents is None) == (total_bytes is None):
        raise ValueError("corpus_from_profile: give documents or total_bytes, not both")
    fams = {f: p for f, p in profile.items() if p.get("bytes")}
    files = sum(p["files"] for p in fams.values())
    nbytes = sum(p["bytes"] for p in fams.values())
    scale = documents / files if documents is not None else total_bytes / nbytes
    pages = sum(p.get("pages") or 0 for p in fams.values())
    tokens = sum(p["tokens"] for p in fams.values())
    chunks = sum(p["chunks"] for p in fams.values())
    mix = ", ".join(f"{f} {p['bytes'] / nbytes:.0%}" for f, p in fams.items())
    given = f"{format_count(documents)} documents" if documents is not None else f"{_bytes(total_bytes)}"
    return Corpus(
        label=label,
        documents=files * scale,
        bytes_by_family={f: p["bytes"] * scale for f, p in fams.items()},
        tokens=tokens * scale,
        vectors=chunks * scale,
        pdf_pages=pages * scale if pages else None,
        assumptions=(
            f"{given}, shaped like {source} ({files} files, {_bytes(nbytes)}): type mix by bytes {mix}; "
            f"{_bytes(nbytes / files)} per document; {1e6 * pages / max(1, fams.get('pdf', {}).get('bytes', 1)):.1f} "
            f"PDF pages per MB of PDF; {tokens / nbytes:.3f} MiniLM tokens and {1e3 * chunks / nbytes:.2f} "
            f"chunks per kB of source, chunked with the per-type profiles",
        ),
    )


def corpus_from_totals(totals: Mapping, *, label: str = "this corpus") -> Corpus:
    """A corpus from a price report's totals: ``documents``, ``bytes``, ``tokens``, ``vectors``
    (those of the setting to be run), and optionally ``pdf_pages``, ``bytes_by_family``, and
    ``ocr_pages`` with ``ocr_seconds`` (the CPU seconds OCR took on them, as measured)."""
    by_family = dict(totals.get("bytes_by_family") or {ALL: float(totals["bytes"])})
    ocr_pages, ocr_s = float(totals.get("ocr_pages") or 0), float(totals.get("ocr_seconds") or 0)
    ocr_note = (
        (
            f"; {format_count(ocr_pages)} pages read by OCR in {format_duration(ocr_s)} of CPU as measured "
            f"({ocr_pages / ocr_s:.2f} pages/s per core), added to parse"
        )
        if ocr_pages and ocr_s
        else ""
    )
    return Corpus(
        label=label,
        documents=float(totals["documents"]),
        bytes_by_family=by_family,
        tokens=float(totals["tokens"]),
        vectors=float(totals["vectors"]),
        pdf_pages=totals.get("pdf_pages"),
        assumptions=(
            f"{format_count(totals['documents'])} documents, {_bytes(float(totals['bytes']))}, "
            f"{format_count(totals['tokens'])} tokens and {format_count(totals['vectors'])} vectors "
            f"as priced{'' if 'bytes_by_family' in totals else '; type mix not known: the measured mix rates'}"
            + ocr_note,
        ),
        ocr_pages=ocr_pages,
        ocr_core_seconds=ocr_s,
    )


# ---------------------------------------------------------------------------------------------------
# the projection


@dataclass(frozen=True, slots=True)
class StageTime:
    name: str  # parse | chunk | embed
    seconds: float  # wall seconds on ``workers`` of ``unit``
    workers: int
    unit: str  # CPUs | GPUs


@dataclass(frozen=True, slots=True)
class Projection:
    corpus: Corpus
    shape: ClusterShape
    nodes: Mapping[str, int]
    cpus: int  # CPUs the CPU stages run on (all nodes' CPUs less the embed actors')
    gpus: int
    stages: tuple[StageTime, ...]
    cpu_seconds: float  # parse + chunk: the same tasks on the same CPUs
    embed_seconds: float
    bound: str  # "CPU stages (parse + chunk)" or "embed"
    wall_seconds: float  # streaming: the longer of the CPU stages and embed
    serial_seconds: float  # one after another: an upper bound
    node_hours: Mapping[str, float]  # per node type, at the streaming wall time

    def stage(self, name: str) -> StageTime:
        return next(s for s in self.stages if s.name == name)


def project(
    corpus: Corpus,
    rates: StageRates,
    shape: ClusterShape,
    *,
    workers: Mapping[str, int] | None = None,
    cpus_per_embed_actor: int = 1,
) -> Projection:
    """Per-stage seconds of ``corpus`` on ``shape`` (every worker type at its max_workers unless
    ``workers`` gives counts), the stage that bounds it, the wall time and node-hours."""
    nodes = shape.nodes(workers)
    all_cpus, gpus = shape.totals(nodes)
    cpus = all_cpus - gpus * cpus_per_embed_actor
    if cpus < 1:
        raise ValueError(f"{shape.describe(nodes)}: no CPU left for parse and chunk after the embed actors")
    parse_core_s = chunk_core_s = 0.0
    for family, nbytes in corpus.bytes_by_family.items():
        if family == "pdf" and corpus.pdf_pages:
            parse_core_s += corpus.pdf_pages / rates.pdf_pages_s.value
        else:
            parse_core_s += nbytes / 1e6 / rates.parse(family).value
        chunk_core_s += nbytes / 1e6 / rates.chunk(family).value
    # OCR is measured per document, not per byte: a scan's bytes say little of its pages' text
    parse_core_s += corpus.ocr_core_seconds
    if gpus:
        embed_s, embed_workers, embed_unit = (
            corpus.tokens / (rates.embed_tokens_s_gpu.value * gpus),
            gpus,
            "GPUs",
        )
    else:  # CPU-only: the embed stage gets its actors' CPUs while the rest parse (streaming)
        actors = max(1, cpus // 2)
        embed_s = corpus.tokens / (rates.embed_tokens_s_cpu.value * actors)
        embed_workers, embed_unit = actors, "CPUs"
        cpus -= actors if cpus > actors else 0
    stages = (
        StageTime("parse", parse_core_s / cpus, cpus, "CPUs"),
        StageTime("chunk", chunk_core_s / cpus, cpus, "CPUs"),
        StageTime("embed", embed_s, embed_workers, embed_unit),
    )
    cpu_s = (parse_core_s + chunk_core_s) / cpus
    wall = max(cpu_s, embed_s)
    return Projection(
        corpus=corpus,
        shape=shape,
        nodes=nodes,
        cpus=cpus,
        gpus=gpus,
        stages=stages,
        cpu_seconds=cpu_s,
        embed_seconds=embed_s,
        bound="embed" if embed_s >= cpu_s else "CPU stages (parse + chunk)",
        wall_seconds=wall,
        serial_seconds=cpu_s + embed_s,
        node_hours={n: k * wall / 3600 for n, k in nodes.items() if k},
    )


def projection_lines(
    report_totals: Mapping,
    rates: StageRates,
    shape: ClusterShape,
    *,
    workers: Mapping[str, int] | None = None,
) -> list[str]:
    """The projection a price report prints for the corpus it priced, labelled as one, with its
    inputs. ``report_totals``: see ``corpus_from_totals``."""
    p = project(corpus_from_totals(report_totals), rates, shape, workers=workers)
    embed = p.stage("embed")
    hours = sum(p.node_hours.values())
    lines = [
        f"Projection (not measured): at {embed.workers} {embed.unit} this corpus embeds in "
        f"{format_duration(p.embed_seconds)}; the CPU stages (parse + chunk) take "
        f"{format_duration(p.cpu_seconds)} on {p.cpus} CPUs; bound: {p.bound}. Wall about "
        f"{format_duration(p.wall_seconds)} with the stages streaming (at most "
        f"{format_duration(p.serial_seconds)} one after another), "
        f"{f'{hours:.3g}' if hours >= 0.01 else 'under 0.01'} node-hours.",
        f"Inputs: {'; '.join(p.corpus.assumptions)}; cluster.yaml ({p.shape.name}) "
        f"{'at its autoscaling limit' if workers is None else 'with'}: "
        f"{p.shape.describe(p.nodes)}, less 1 CPU per embed actor; "
        + "; ".join(rate_notes(rates, p.corpus, gpus=p.gpus)),
        "Not included: Ray start-up and node boot, reading input and writing Parquet, the per-document "
        "child process, stragglers.",
    ]
    return lines


def rate_notes(rates: StageRates, corpus: Corpus, *, gpus: int) -> list[str]:
    """One note per rate the projection of ``corpus`` used: value, unit, source."""
    notes = []
    for family in corpus.bytes_by_family:
        if family == "pdf" and corpus.pdf_pages:
            r = rates.pdf_pages_s
            notes.append(f"parse pdf {r.value:,.0f} {r.unit} ({r.source})")
        else:
            r = rates.parse(family)
            notes.append(f"parse {_family(family)} {r.value:,.2f} {r.unit} ({r.source})")
    for family in corpus.bytes_by_family:
        r = rates.chunk(family)
        notes.append(f"chunk {_family(family)} {r.value:,.2f} {r.unit} ({r.source})")
    r = rates.embed_tokens_s_gpu if gpus else rates.embed_tokens_s_cpu
    notes.append(f"embed {r.value:,.0f} {r.unit} ({r.source})")
    return notes


# ---------------------------------------------------------------------------------------------------
# formatting


def _family(family: str) -> str:
    return "(measured mix)" if family == ALL else family


def format_duration(seconds: float) -> str:
    if seconds < 0.1:
        return "under 0.1 s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def format_count(n: float) -> str:
    n = float(n)
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.0f}"


def _bytes(n: float) -> str:
    n = round(n)
    for div, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if n >= div:
            return f"{n / div:.3g} {unit}"
    return f"{n:.0f} B"
