"""The price job: every chunking setting measured over one parse of the corpus, no embedding, then
vectors, tokens, storage, embedding time and money per setting (``report.json/.csv/.md``, ``chart.png``)."""

from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

from raychunk.config import RunConfig, check_limits
from raychunk.io import list_inputs, readable, resolve_output
from raychunk.pipeline import build, find_duplicates, init_ray, read_files
from raychunk.pricing import IndexSpec, Rates, Setting, in_sample, summarize, vector_bytes
from raychunk.report import plot_price, render_price_markdown, write_price_csv

__all__ = ["PriceOptions", "measure_corpus", "previous_ids", "price"]

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
    """Measure every setting over the (sampled) corpus on Ray, price it, and write the report files."""
    from raychunk.embed import embedding_dim, measure_throughput

    check_limits(cfg)  # every doc type's caps within the embedder's input limit
    dim = opts.dim or embedding_dim(cfg.embedder.model)
    previous = previous_ids(opts.previous) if opts.previous else None
    rows, listing = measure_corpus(cfg, settings, sample=opts.sample, keep_ids=previous is not None)

    throughput = None
    tps = opts.tokens_per_second
    if not tps and opts.measure_throughput:
        ok = [r for r in rows if r["setting"] == settings[0].label and r["chunks"]]
        mean = sum(r["tokens"] for r in ok) / max(1, sum(r["chunks"] for r in ok))
        throughput = measure_throughput(
            cfg.embedder.model, tokens_per_text=max(16, int(mean)), backend=cfg.embedder.backend
        )
        tps = throughput["tokens_per_second"]
    rates = Rates(opts.gpu_hour_usd, opts.storage_gb_month_usd, opts.api_usd_per_1m_tokens, tps)
    report = summarize(
        rows,
        settings,
        dim=dim,
        dtype=opts.dtype,
        index=opts.index,
        corpus_files=listing["files"],
        corpus_bytes=listing["bytes"],
        sample=opts.sample,
        rates=rates,
        previous=previous,
    )
    report["notes"] = _notes(report, opts, throughput, rates, cfg, listing)
    report["throughput"] = throughput
    report["written"] = _write(report, opts)
    return report


def measure_corpus(
    cfg: RunConfig, settings: list[Setting], *, sample: float = 1.0, keep_ids: bool = False
) -> tuple[list[dict], dict]:
    """Per-document, per-setting numbers over the (sampled) corpus, and the listing facts: the
    corpus's file count and bytes come from listing it, not from parsing it."""
    in_fs, scheme, files = list_inputs(
        cfg.input, follow_symlinks=cfg.limits.follow_symlinks, max_file_mb=cfg.limits.max_file_mb
    )
    for f in files:
        if f.refused:
            log.warning("%s%s not priced: %s", scheme, f.path, f.refused[1])
    chosen = [f for f in readable(files) if in_sample(scheme + f.path, sample)]
    listing = {
        "files": len(files),
        "bytes": sum(f.size for f in files),
        "sampled_files": len(chosen),
        "sampled_bytes": sum(f.size for f in chosen),
    }
    if not chosen:
        raise ValueError(f"--sample {sample} selects none of the {len(files)} files; use a larger fraction")
    init_ray(cfg)
    ds = build(
        read_files(chosen, in_fs, cfg),
        cfg,
        scheme=scheme,
        plan=None,
        settings=settings,
        measure=True,
        keep_ids=keep_ids,
        duplicates=find_duplicates(chosen, in_fs, scheme, cfg),  # within the sample: it reads no more
    )
    return ds.take_all(), listing


def previous_ids(output: str) -> dict[str, int]:
    """An earlier run's chunk ids and their token counts."""
    import pyarrow.parquet as pq

    fs, path = resolve_output(output)
    try:
        table = pq.read_table(f"{path}/chunks", filesystem=fs, columns=["chunk_id", "n_tokens"])
    except (FileNotFoundError, OSError) as e:
        raise ValueError(f"--previous {output}: no chunks/ table there ({e})") from e
    return dict(zip(table.column("chunk_id").to_pylist(), table.column("n_tokens").to_pylist()))


def _write(report: dict, opts: PriceOptions) -> list[str]:
    out_fs, out_dir = resolve_output(opts.output)
    out_fs.create_dir(out_dir, recursive=True)
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp)
        (local / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
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
            "intervals from 1,000 bootstrap resamples of documents. File count and bytes come from the listing."
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
