"""The price report: its typed record (``PriceReport``, built once from what the price job measured
and priced by ``build_price_report``; ``as_json()`` is ``report.json``) and its renderings: text,
``report.md``, ``report.csv`` and ``chart.png``."""

from __future__ import annotations

from dataclasses import dataclass, field

from raychunk.report.record import OMIT_NONE, as_json

__all__ = [
    "Cost",
    "PriceReport",
    "SettingPrice",
    "build_price_report",
    "human_bytes",
    "plot_price",
    "render_price_markdown",
    "render_price_text",
    "write_price_csv",
]


@dataclass(frozen=True)
class Cost:
    """One setting's figures over the corpus (or over one document type's documents), scaled to
    the corpus when sampled: counts, token shares and percentiles, bytes, and the embedding time and
    money where a throughput or a price was given (``pricing._cost_row``)."""

    setting: str  # the setting's label (a document type's row: the type)
    documents: int
    chunks: int
    vectors: int
    tokens: int
    header_share: float
    overlap_share: float
    tokens_mean: float
    tokens_p50: float
    tokens_p95: float
    over_limit: int
    over_limit_share: float
    pages: int
    ocr_pages: int
    ocr_seconds: float
    text_bytes: int
    vector_bytes: int
    index_bytes: int
    total_bytes: int
    embed_seconds: float | None = field(default=None, metadata=OMIT_NONE)
    embed_usd: float | None = field(default=None, metadata=OMIT_NONE)
    api_usd: float | None = field(default=None, metadata=OMIT_NONE)
    storage_usd_month: float | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class SettingPrice(Cost):
    """A setting's row: its ``Cost``, the byte-identical copies skipped and the kept copies' tokens,
    a sample's 95% interval, ``--previous``'s comparison, and the same figures per document type."""

    duplicates: int = 0
    tokens_saved: int = 0
    interval_95: dict | None = field(default=None, metadata=OMIT_NONE)  # {} when too few documents
    delta: dict | None = field(default=None, metadata=OMIT_NONE)
    by_type: dict[str, Cost] = field(default_factory=dict)


@dataclass(frozen=True)
class PriceReport:
    settings: tuple[SettingPrice, ...]
    sampled_documents: int
    duplicates: int
    corpus_files: int
    corpus_bytes: int
    sample: float
    estimate: bool
    dim: int
    dtype: str
    index: str
    notes: tuple[str, ...]
    projection: tuple[str, ...]
    throughput: dict | None
    written: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)  # set once written

    def as_json(self) -> dict:
        """The report as ``report.json`` holds it (with ``written`` once the files are written)."""
        return as_json(self)


def build_price_report(
    summary: dict, *, notes: list[str], projection: list[str], throughput: dict | None
) -> PriceReport:
    """The typed report, once, from ``pricing.summarize_partial``'s summary and what the job added."""
    settings = tuple(
        SettingPrice(**{**row, "by_type": {t: Cost(**x) for t, x in row["by_type"].items()}})
        for row in summary["settings"]
    )
    return PriceReport(
        **{**summary, "settings": settings},
        notes=tuple(notes),
        projection=tuple(projection),
        throughput=throughput,
    )


PRICE_COLUMNS = [
    ("setting", "setting"),
    ("documents", "docs"),
    ("chunks", "chunks"),
    ("vectors", "vectors"),
    ("tokens", "tokens"),
    ("header_share", "hdr%"),
    ("overlap_share", "ovl%"),
    ("tokens_mean", "mean"),
    ("tokens_p50", "p50"),
    ("tokens_p95", "p95"),
    ("over_limit", ">limit"),
    ("over_limit_share", ">limit%"),
    ("text_bytes", "text"),
    ("vector_bytes", "vectors B"),
    ("index_bytes", "index"),
    ("total_bytes", "total"),
]
_DUPLICATES = [("duplicates", "dups"), ("tokens_saved", "tokens saved")]
_MONEY = [
    ("embed_seconds", "embed time"),
    ("embed_usd", "embed $"),
    ("api_usd", "API $"),
    ("storage_usd_month", "storage $/mo"),
]


def human_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def _human_seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    return f"{s:.1f} s"


def _cell(key: str, value) -> str:
    if value is None:
        return ""
    if key.endswith("_share"):
        return f"{value:.1%}"
    if key.endswith("bytes"):
        return human_bytes(value)
    if key in ("tokens_mean", "tokens_p50", "tokens_p95"):
        return f"{value:.0f}"
    if key == "embed_seconds":
        return _human_seconds(value)
    if key.endswith("usd") or key.endswith("usd_month"):
        return f"${value:,.2f}"
    if isinstance(value, (int, float)):
        return f"{value:,.0f}"
    return str(value)


def _price_columns(rows: tuple[SettingPrice, ...]) -> list[tuple[str, str]]:
    cols = list(PRICE_COLUMNS)
    if any(r.duplicates for r in rows):
        cols += _DUPLICATES
    cols += [c for c in _MONEY if any(getattr(r, c[0]) is not None for r in rows)]
    return cols


def _table(rows: tuple[SettingPrice, ...], cols: list[tuple[str, str]]) -> list[list[str]]:
    return [[h for _, h in cols]] + [[_cell(k, getattr(r, k)) for k, _ in cols] for r in rows]


def render_price_text(report: PriceReport) -> str:
    rows = report.settings
    cols = _price_columns(rows)
    grid_ = _table(rows, cols)
    widths = [max(len(r[i]) for r in grid_) for i in range(len(cols))]
    lines = [_price_title(report), "", _align(grid_[0], widths), "  ".join("-" * w for w in widths)]
    lines += [_align(r, widths) for r in grid_[1:]]
    for row in rows:
        if row.interval_95:
            iv = row.interval_95
            lines.append(
                f"  95% interval {row.setting}: vectors {iv['vectors'][0]:,}–{iv['vectors'][1]:,}, "
                f"total {human_bytes(iv['total_bytes'][0])}–{human_bytes(iv['total_bytes'][1])}"
            )
    lines += ["", "By document type (documents; chunks per setting):", *_by_type_matrix(rows)]
    if any(r.delta is not None for r in rows):
        lines += ["", "Against the previous run:"]
        for r in rows:
            d = r.delta
            if d:
                cost = f", {_human_seconds(d['embed_seconds'])} to embed" if "embed_seconds" in d else ""
                lines.append(
                    f"  {r.setting}: {d['unchanged']:,} unchanged, {d['new']:,} new, {d['removed']:,} "
                    f"removed; re-embedding the delta is {d['tokens_to_embed']:,} tokens{cost}"
                )
    if report.projection:
        lines += ["", "On the cluster (cluster.yaml):", *[f"  {line}" for line in report.projection]]
    lines += ["", *[f"note: {n}" for n in report.notes]]
    return "\n".join(lines)


def _align(cells: list[str], widths: list[int]) -> str:
    """A text-table row: the first cell left-aligned, numbers right-aligned."""
    return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def _short(label: str) -> str:
    """``structure 128 o0.1`` → ``s128/0.1``; ``per-type profile`` → ``profile``."""
    if label == "per-type profile":
        return "profile"
    parts = label.split()
    if len(parts) == 3 and parts[2].startswith("o"):
        return f"{parts[0][0]}{parts[1]}/{parts[2][1:]}"
    return label


def _by_type_matrix(rows: tuple[SettingPrice, ...]) -> list[str]:
    types = sorted({t for r in rows for t in r.by_type})
    header = ["type", "docs"] + [_short(r.setting) for r in rows]
    body = []
    for t in types:
        docs = max(r.by_type[t].documents if t in r.by_type else 0 for r in rows)
        body.append([t, f"{docs:,}"] + [f"{r.by_type[t].chunks if t in r.by_type else 0:,}" for r in rows])
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    return ["  " + _align(header, widths)] + ["  " + _align(r, widths) for r in body]


def _price_title(report: PriceReport) -> str:
    kind = "ESTIMATE from a sample" if report.estimate else "measured"
    dupes = report.duplicates
    skipped = f" ({dupes:,} byte-identical duplicates skipped)" if dupes else ""
    return (
        f"raychunk price ({kind}): {report.corpus_files:,} files, {human_bytes(report.corpus_bytes)}; "
        f"{report.sampled_documents - dupes:,} documents parsed{skipped}; dim {report.dim} {report.dtype}, "
        f"index {report.index}"
    )


def render_price_markdown(report: PriceReport) -> str:
    rows = report.settings
    cols = _price_columns(rows)
    grid_ = _table(rows, cols)
    out = [
        f"# raychunk price report\n\n{_price_title(report)}\n",
        "| " + " | ".join(grid_[0]) + " |",
        "|" + "---|" * len(cols),
    ]
    out += ["| " + " | ".join(r) + " |" for r in grid_[1:]]
    if any(r.interval_95 for r in rows):
        out += [
            "",
            "## 95% intervals (bootstrap over documents)",
            "",
            "| setting | vectors | total |",
            "|---|---|---|",
        ]
        for r in rows:
            iv = r.interval_95
            if iv:
                out.append(
                    f"| {r.setting} | {iv['vectors'][0]:,}–{iv['vectors'][1]:,} | "
                    f"{human_bytes(iv['total_bytes'][0])}–{human_bytes(iv['total_bytes'][1])} |"
                )
    out += [
        "",
        "## By document type",
        "",
        "| setting | type | docs | chunks | tokens | mean | >limit | total |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for t, x in r.by_type.items():
            out.append(
                f"| {r.setting} | {t} | {x.documents:,} | {x.chunks:,} | {x.tokens:,} | "
                f"{x.tokens_mean:.0f} | {x.over_limit:,} | {human_bytes(x.total_bytes)} |"
            )
    if any(r.delta is not None for r in rows):
        out += [
            "",
            "## Against the previous run",
            "",
            "| setting | unchanged | new | removed | tokens to embed |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {r.setting} | {r.delta['unchanged']:,} | {r.delta['new']:,} | {r.delta['removed']:,} | "
            f"{r.delta['tokens_to_embed']:,} |"
            for r in rows
            if r.delta is not None
        ]
    if report.projection:
        out += ["", "## On the cluster (`cluster.yaml`)", ""] + [f"- {line}" for line in report.projection]
    out += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def write_price_csv(report: PriceReport, path) -> None:
    import csv

    def value(record: Cost, key: str):
        v = getattr(record, key, None)
        return "" if v is None else v

    rows = report.settings
    keys = [k for k, _ in _price_columns(rows)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scope", *keys])
        for r in rows:
            w.writerow(["all", *[value(r, k) for k in keys]])
            for t, x in r.by_type.items():
                w.writerow(
                    [f"type:{t}", *[(f"{r.setting}" if k == "setting" else value(x, k)) for k in keys]]
                )


def plot_price(report: PriceReport, path) -> None:
    """Vectors per setting, and storage per setting stacked as text, vectors and index overhead."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("the price chart needs matplotlib: pip install matplotlib") from e
    rows = report.settings
    labels = [r.setting for r in rows]
    x = range(len(rows))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 0.6 * len(rows) + 3), 9), sharex=True)
    bars = ax1.bar(x, [r.vectors for r in rows], color="#4C72B0")
    ax1.bar_label(bars, labels=[f"{r.vectors:,}" for r in rows], fontsize=7, rotation=90, padding=2)
    ax1.set_title("Vectors per setting")
    ax1.set_ylabel("vectors")
    text = [r.text_bytes / 1e6 for r in rows]
    vec = [r.vector_bytes / 1e6 for r in rows]
    idx = [(r.index_bytes - r.vector_bytes) / 1e6 for r in rows]
    ax2.bar(x, text, label="chunk text", color="#DD8452")
    ax2.bar(x, vec, bottom=text, label=f"vectors ({report.dtype}, dim {report.dim})", color="#4C72B0")
    ax2.bar(
        x,
        idx,
        bottom=[a + b for a, b in zip(text, vec)],
        label=f"index overhead ({report.index})",
        color="#55A868",
    )
    ax2.set_title("Storage per setting")
    ax2.margins(y=0.08)
    ax2.set_ylabel("MB")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    title = "raychunk price" + (" (estimate from a sample)" if report.estimate else "")
    fig.suptitle(f"{title}: {report.corpus_files:,} files")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- the eval report -------------------------------------------------------------------------------
