"""The price job: every chunking setting measured over one parse of the corpus, no embedding, then
vectors, tokens, storage, embedding time and money per setting (``report.json/.csv/.md``, ``chart.png``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path

from raychunk.config import RunConfig
from raychunk.corpus import duplicates_of, list_corpus, plan_corpus
from raychunk.document_steps import documents, measure
from raychunk.io import mark_output, resolve_output
from raychunk.merge import COUNT, compare_settings, comparison_totals
from raychunk.peers import require_peers
from raychunk.pipeline import execute, init_ray, read_blocks
from raychunk.plan import JobPlan, resolve_plan
from raychunk.pricing import (
    BOOTSTRAP_ROUNDS,
    IndexSpec,
    PricePartial,
    Rates,
    Setting,
    price_partials,
    summarize_partial,
    vector_bytes,
)
from raychunk.progress import JobProgress
from raychunk.report.price import (
    PriceReport,
    build_price_report,
    plot_price,
    render_price_markdown,
    write_price_csv,
)

__all__ = ["Measured", "PriceOptions", "measure_corpus", "previous_chunks", "price", "price_job"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PriceOptions:
    """What the cost model needs beyond the run config; money appears only for the prices given."""

    output: str = "out/price"
    dim: int | None = None
    dtype: str = "float32"
    index: IndexSpec = IndexSpec()
    sample: float = 1.0
    previous: str | None = None
    tokens_per_second: float | None = None
    measure_throughput: bool = True
    gpu_hour_usd: float | None = None
    storage_gb_month_usd: float | None = None
    api_usd_per_1m_tokens: float | None = None
    chart: bool = True

    def __post_init__(self):
        if not 0 < self.sample <= 1:
            raise ValueError(f"--sample {self.sample}: expected a fraction in (0, 1]")


def price(cfg: RunConfig, settings: list[Setting], opts: PriceOptions) -> dict:
    """Price the corpus; returns the report as ``report.json`` holds it, with the files written."""
    return price_job(cfg, settings, opts).as_json()


def price_job(cfg: RunConfig, settings: list[Setting], opts: PriceOptions) -> PriceReport:
    """Measure every setting over the (sampled) corpus on Ray, price it, and write the report files;
    returns the typed report."""
    from raychunk.embed import measure_throughput

    job = resolve_plan(cfg)  # every doc type's caps within the embedder's input limit
    require_peers(settings)
    dim = opts.dim or job.model.dim
    measured = measure_corpus(job, settings, sample=opts.sample, previous=opts.previous)

    throughput = None
    tps = opts.tokens_per_second
    if not tps and opts.measure_throughput:
        first = measured.partial.totals.get(settings[0].label)
        mean = first.tokens / max(1, first.chunks) if first else 0
        throughput = measure_throughput(
            job.model.local, tokens_per_text=max(16, int(mean)), backend=cfg.embedder.backend
        )
        tps = throughput["tokens_per_second"]
    rates = Rates(opts.gpu_hour_usd, opts.storage_gb_month_usd, opts.api_usd_per_1m_tokens, tps)
    listing = measured.listing
    summary = summarize_partial(
        measured.partial,
        settings,
        dim=dim,
        dtype=opts.dtype,
        index=opts.index,
        corpus_files=listing["files"],
        corpus_bytes=listing["bytes"],
        sample=opts.sample,
        rates=rates,
        delta=measured.delta,
    )
    report = build_price_report(
        summary,
        notes=_notes(summary, opts, throughput, rates, cfg, listing),
        projection=cluster_projection(summary),
        throughput=throughput,
    )
    return dataclasses.replace(report, written=tuple(_write(report, opts)))


@dataclass(frozen=True)
class Measured:
    """What reaches the driver from measuring a corpus: the merged partial, the listing facts, the
    per-setting comparison with ``--previous``, and how many rows the driver received (one partial
    per block plus the comparison's per-block counts: never one per document)."""

    partial: PricePartial
    listing: dict
    delta: dict[str, dict] | None
    partials: int
    driver_rows: int


def measure_corpus(
    job: JobPlan,
    settings: list[Setting],
    *,
    sample: float = 1.0,
    previous: str | None = None,
    seed: int = 0,
) -> Measured:
    """Every setting measured over the (sampled) corpus and reduced on the workers to one partial per
    block, merged here as they arrive. The corpus's file count and bytes come from listing it, not
    from parsing it. With ``previous`` (an earlier run's output) the chunk ids are compared with its
    ``chunks/`` on the cluster too."""
    chunks = previous_chunks(previous) if previous else None  # fail before parsing, not after
    import ray

    cfg = job.config
    init_ray(cfg)
    inputs = plan_corpus(list_corpus(job), job, cpus=ray.cluster_resources().get("CPU", 1), sample=sample)
    for f in inputs.refused:
        log.warning("%s%s not priced: %s", inputs.scheme, f.path, f.refused[1])
    listing = {
        "files": inputs.files,
        "bytes": inputs.bytes,
        "sampled_files": inputs.todo_files,
        "sampled_bytes": inputs.todo_bytes,
    }
    if not inputs.todo_files:
        raise ValueError(f"--sample {sample} selects none of the {inputs.files} files; use a larger fraction")
    duplicates = duplicates_of(inputs, job)  # within the sample: it reads no more
    progress = JobProgress(
        "price",
        documents=inputs.todo_files,
        nbytes=inputs.todo_bytes,
        embedding=False,
        first_setting=settings[0].label,
    )
    last = measure(job, settings, keep_ids=chunks is not None)
    steps = [
        documents(job, scheme=inputs.scheme, last=last, duplicates=duplicates),
        progress.step(),
    ]
    ds = execute(read_blocks(inputs.blocks, inputs.fs, job), steps, job)
    partial, n = PricePartial(), 0
    with progress.shown():
        if chunks is not None:
            ds = ds.materialize()  # read twice (partials, ids): the rows stay in the cluster's object store
        rounds = BOOTSTRAP_ROUNDS if sample < 1 else 0
        parts = execute(
            ds, [price_partials(kept_sources=frozenset(duplicates.values()), rounds=rounds, seed=seed)], job
        )
        for batch in parts.iter_batches(batch_size=None, batch_format="pyarrow"):
            for blob in batch.column("partial").to_pylist():
                partial += pickle.loads(blob)
                n += 1
    delta, counted = None, 0
    if chunks is not None:
        # As many partitions as the measured blocks (the default is a fixed 200): the shuffle grows
        # with the corpus, and what reaches the driver stays one count row per partition and setting.
        labels = [s.label for s in settings]
        fs, path = chunks
        compared = compare_settings(labels, path, fs, partitions=max(1, ds.num_blocks()))
        delta, counted = comparison_totals(execute(ds, [*compared, COUNT], job).iter_rows(), labels)
    return Measured(partial, listing, delta, partials=n, driver_rows=n + counted)


def previous_chunks(output: str) -> tuple:
    """An earlier run's ``chunks/`` table as ``(filesystem, path)``, checked to exist."""
    import pyarrow.fs as pafs

    fs, path = resolve_output(output)
    if fs.get_file_info(f"{path}/chunks").type == pafs.FileType.NotFound:
        raise ValueError(f"--previous {output}: no chunks/ table there ({path}/chunks not found)")
    return fs, f"{path}/chunks"


CHECKOUT = Path(__file__).resolve().parents[2]


def cluster_projection(
    report: dict,
    *,
    rates_file: Path = CHECKOUT / "benchmarks" / "stage_rates.json",
    cluster_file: Path = CHECKOUT / "cluster.yaml",
) -> list[str]:
    """How long the priced corpus would take on the ``cluster.yaml`` cluster, from the measured
    per-stage rates (``raychunk.projection``): for the per-type profile (what ``raychunk run``
    builds), else the first setting. A projection, labelled as one, with its inputs."""
    from raychunk.projection import ClusterShape, StageRates, projection_lines

    if not (rates_file.is_file() and cluster_file.is_file()):
        return [
            f"No cluster projection: it reads {rates_file.name} and {cluster_file.name} from a raychunk "
            "checkout, and there is none beside this install."
        ]
    rows = report["settings"]
    row = next((r for r in rows if r["setting"] == "per-type profile"), rows[0])
    totals = {
        "documents": report["corpus_files"],
        "bytes": report["corpus_bytes"],
        "tokens": row["tokens"],
        "vectors": row["vectors"],
        "ocr_pages": row.get("ocr_pages", 0),
        "ocr_seconds": row.get("ocr_seconds", 0.0),
    }
    rates = StageRates.from_dict(json.loads(rates_file.read_text())["rates"])
    lines = projection_lines(totals, rates, ClusterShape.from_yaml(cluster_file))
    return [f"{row['setting']}: {lines[0]}", *lines[1:]]


def _write(report: PriceReport, opts: PriceOptions) -> list[str]:
    out_fs, out_dir = resolve_output(opts.output)
    out_fs.create_dir(out_dir, recursive=True)
    mark_output(out_fs, out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp)
        (local / "report.json").write_text(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        (local / "report.md").write_text(render_price_markdown(report))
        write_price_csv(report, local / "report.csv")
        if opts.chart:
            plot_price(report, local / "chart.png")
        for f in sorted(local.iterdir()):  # the output may be an s3:// or gs:// folder
            with out_fs.open_output_stream(f"{out_dir}/{f.name}") as dst:
                dst.write(f.read_bytes())
        return [f.name for f in sorted(local.iterdir())]


def _notes(report, opts: PriceOptions, throughput, rates: Rates, cfg: RunConfig, listing) -> list[str]:
    index = opts.index
    notes = [
        f"Tokens are counted with {cfg.tokenizer_spec}'s tokenizer; each setting chunks the same parse.",
        "'per-type profile' applies configs/doc_types.yaml (what `raychunk run` builds); the other rows apply "
        "one strategy, size and overlap to every document.",
        f"Vector bytes = vectors x ceil(dim x bits / 8) = vectors x {vector_bytes(1, report['dim'], report['dtype']):.0f} B "
        f"({report['dtype']}, dim {report['dim']}).",
        "Index bytes: flat = the vectors."
        if index.kind == "flat"
        else f"Index bytes (HNSW, M={index.m}) = vectors + vectors x 4 B x (2M + M/(M-1)) graph links "
        f"= vectors + vectors x {4 * (2 * index.m + index.m / (index.m - 1)):.1f} B.",
        "Total = chunk text (UTF-8, stored beside each vector) + index bytes.",
        "hdr% and ovl% are the shares of embedded tokens spent on header lines and on overlap.",
        ">limit counts chunks longer than the embedder reads; the embedder would silently truncate them.",
    ]
    if report["estimate"]:
        notes.append(
            f"ESTIMATE: {listing['sampled_files']:,} of {listing['files']:,} files were parsed "
            f"(hash sample {opts.sample:g}); totals are scaled by corpus bytes / sampled bytes, with 95% "
            f"intervals from a Poisson bootstrap over documents ({BOOTSTRAP_ROUNDS:,} rounds; in each, every "
            "document counts a Poisson(1) number of times, drawn from a hash of its source). "
            "File count and bytes come from the listing."
        )
    first = report["settings"][0] if report["settings"] else {}
    if first.get("ocr_pages"):
        notes.append(
            f"{first['ocr_pages']:,} of {first['pages']:,} pages{' (scaled)' if report['estimate'] else ''} were read "
            f"by OCR, in {first['ocr_seconds']:,.1f} CPU s measured here ({first['ocr_pages'] / max(first['ocr_seconds'], 1e-9):.2f} "
            "pages/s per core); the cluster projection adds that time to parsing."
        )
    if report["duplicates"]:
        notes.append(
            f"{report['duplicates']:,} byte-identical copies{' in the sample' if report['estimate'] else ''} "
            "are skipped as `raychunk run` skips them: "
            "'dups' counts them per setting and 'tokens saved' is the kept copy's tokens for each"
            + (
                "; only duplicates within the sample are seen, so the estimate counts a copy whose twin "
                "lies outside it as a document."
                if report["estimate"]
                else "."
            )
        )
    if throughput:
        notes.append(
            f"Embedding time uses {throughput['tokens_per_second']:,.0f} tokens/s measured here "
            f"({throughput['device']}{', ' + throughput['backend'] if throughput.get('backend', 'torch') != 'torch' else ''}, "
            f"{throughput['texts']} texts of {throughput['tokens_per_text']} tokens)."
        )
    elif rates.tokens_per_second:
        notes.append(f"Embedding time uses the given {rates.tokens_per_second:,.0f} tokens/s.")
    if (
        rates.gpu_hour_usd is None
        and rates.api_usd_per_1m_tokens is None
        and rates.storage_gb_month_usd is None
    ):
        notes.append(
            "No prices were configured, so no money is shown (--gpu-hour-usd, --storage-gb-month-usd, "
            "--api-usd-per-1m-tokens)."
        )
    return notes
