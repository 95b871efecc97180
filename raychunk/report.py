"""Rendering the reports of the run, price and eval jobs: text, markdown, CSV and PNG."""

from __future__ import annotations

import json
from pathlib import Path

from raychunk.render import signed

__all__ = [
    "plot_eval",
    "plot_price",
    "render_eval_markdown",
    "render_eval_text",
    "render_price_markdown",
    "render_price_text",
    "render_run_markdown",
    "render_run_text",
    "write_eval",
    "write_price_csv",
]


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def render_run_text(r: dict) -> str:
    lines = [
        f"raychunk run → {r['output']}",
        f"  input      {r['input']['files']} files, {_mb(r['input']['bytes'])}",
        "  documents  " + ", ".join(f"{n} {s}" for s, n in r["documents"]["by_status"].items()),
        "  types      " + ", ".join(f"{n} {t}" for t, n in r["documents"]["by_type"].items()),
        *_duplicates_line(r),
        *_ocr_lines(r),
        f"  chunks     {r['chunks']:,}  vectors {r['vectors']:,}  tokens embedded {r['tokens_embedded']:,}"
        f"  over the embedder's input limit: {r['over_embedder_limit']}",
        f"  storage    chunks {_mb(r['storage_bytes']['chunks_parquet'])} parquet (raw vectors "
        f"{_mb(r['storage_bytes']['vectors_raw'])}, text {_mb(r['storage_bytes']['chunk_text'])}), "
        f"documents {_mb(r['storage_bytes']['documents_parquet'])}",
        f"  time       {r['throughput']['wall_seconds']:.1f} s (Ray start {r['throughput']['ray_start_seconds']:.1f} s): "
        f"{r['throughput']['files_per_s']:.2f} files/s, "
        f"{r['throughput']['chunks_per_s']:.1f} chunks/s, {r['throughput']['tokens_per_s']:.0f} tokens/s",
    ]
    lines += _incremental_lines(r)
    if r["embedder"]:
        e = r["embedder"]
        lines.append(
            f"  embedder   {e['model']} (dim {e['dim']}, {e.get('backend', 'torch')}), {e['actors']} actor(s)"
            + (f" growing to {e['actors_max']}" if e.get("actors_max", 0) > e["actors"] else "")
            + f", {e['gpus_per_actor']:g} GPU each"
        )
        if e.get("note"):
            lines.append(f"  WARNING    embedder.backend={e['backend']}: {e['note']}")
    if r["stages"]:
        for st in r["stages"]:
            tasks = (
                f", {st['task_seconds']:.1f} s in {st['tasks'] or ''} tasks"
                if st["task_seconds"] is not None
                else ""
            )
            lines.append(f"  stage      {st['stage']}: {st['seconds']:.1f} s wall{tasks}")
    for d in r["not_ok"]:
        lines.append(f"  {d['status']:<11} {d['source']}: {d['reason']}")
    lines += _more(r, "not_ok", "documents not ok", "status != 'ok'")
    return "\n".join(lines)


def _reused_how(inc: dict) -> str:
    if "vectors_reused_by_text" not in inc:  # a report written before reuse by text
        return ""
    return f" ({inc['vectors_reused_by_id']:,} by chunk id, {inc['vectors_reused_by_text']:,} by text)"


def _incremental_lines(r: dict) -> list[str]:
    inc = r.get("incremental")
    if not inc:
        return []
    c, d = inc["chunks"], inc["delta"]
    return [
        f"  previous   {inc['previous']}: {inc['documents_reused']} documents reused unparsed"
        + ("" if inc["documents_skip"] else " (chunk settings changed: every document chunked again)"),
        f"  chunk ids  {c['unchanged']:,} unchanged, {c['new']:,} new, {c['removed']:,} removed",
        f"  vectors    {inc['vectors_embedded']:,} embedded, {inc['vectors_reused']:,} reused"
        + _reused_how(inc),
        f"  delta      {d['added']:,} rows to upsert (delta/added), {d['removed']:,} ids to delete (delta/removed)",
    ]


def _ocr_lines(r: dict) -> list[str]:
    ocr = r.get("ocr") or {}
    lines = []
    if ocr.get("pages"):
        lines.append(
            f"  ocr        {ocr['pages']:,} page(s) of {ocr['documents']:,} document(s) read by OCR "
            f"({', '.join(ocr['engines'])}), {ocr['cpu_seconds']:.1f} CPU s"
        )
    if ocr.get("missing"):
        lines.append(f"  WARNING    scanned pages were left unread: {ocr['missing']}")
    return lines


def _duplicates_line(r: dict) -> list[str]:
    d = r.get("duplicates")
    if not d or not d["files"]:
        return []
    return [
        f"  duplicates {d['files']} byte-identical files skipped: {_mb(d['bytes_saved'])} and "
        f"{d['tokens_saved']:,} tokens saved"
    ]


def render_run_markdown(r: dict) -> str:
    out = [
        f"# raychunk run report\n\nOutput: `{r['output']}` · generated {r['generated']} · Ray: {r['ray']['mode']}\n",
        "| measure | value |",
        "|---|---|",
        f"| input files | {r['input']['files']} ({_mb(r['input']['bytes'])}) |",
    ]
    for s, n in r["documents"]["by_status"].items():
        out.append(f"| documents {s} | {n} |")
    for t, n in r["documents"]["by_type"].items():
        out.append(f"| type {t} | {n} |")
    ocr = r.get("ocr") or {}
    if ocr.get("pages"):
        out.append(
            f"| pages read by OCR | {ocr['pages']:,} of {ocr['documents']:,} documents "
            f"({', '.join(ocr['engines'])}, {ocr['cpu_seconds']:.1f} CPU s) |"
        )
    if ocr.get("missing"):
        out.append(f"| scanned pages left unread | {ocr['missing']} |")
    d = r.get("duplicates")
    if d and d["files"]:
        out.append(
            f"| byte-identical duplicates skipped | {d['files']} ({_mb(d['bytes_saved'])}, "
            f"{d['tokens_saved']:,} tokens saved) |"
        )
    out += [
        f"| chunks | {r['chunks']:,} |",
        f"| vectors | {r['vectors']:,} |",
        f"| tokens embedded | {r['tokens_embedded']:,} |",
        f"| chunks over the embedder's input limit | {r['over_embedder_limit']} |",
        *(
            [
                f"| embedder backend | {r['embedder']['backend']}: {r['embedder']['note'] or 'vectors as torch'} |"
            ]
            if r.get("embedder") and r["embedder"].get("backend", "torch") != "torch"
            else []
        ),
        f"| chunks Parquet | {_mb(r['storage_bytes']['chunks_parquet'])} |",
        f"| raw vectors | {_mb(r['storage_bytes']['vectors_raw'])} |",
        f"| chunk text | {_mb(r['storage_bytes']['chunk_text'])} |",
        f"| documents Parquet | {_mb(r['storage_bytes']['documents_parquet'])} |",
        f"| wall time | {r['throughput']['wall_seconds']:.1f} s |",
        f"| throughput | {r['throughput']['files_per_s']:.2f} files/s, {r['throughput']['tokens_per_s']:.0f} tokens/s |",
    ]
    inc = r.get("incremental")
    if inc:
        c, d = inc["chunks"], inc["delta"]
        out += [
            "",
            f"## Incremental run (previous output `{inc['previous']}`)",
            "",
            "| measure | value |",
            "|---|---|",
            f"| documents reused, not parsed | {inc['documents_reused']} |",
            f"| chunk ids unchanged / new / removed | {c['unchanged']:,} / {c['new']:,} / {c['removed']:,} |",
            f"| vectors embedded / reused | {inc['vectors_embedded']:,} / {inc['vectors_reused']:,}"
            f"{_reused_how(inc)} |",
            f"| delta: rows to upsert / ids to delete | {d['added']:,} / {d['removed']:,} |",
        ]
    if r["stages"]:
        out += ["", "## Stages (Ray Data stats)", "", "| stage | wall s | task s |", "|---|---|---|"]
        out += [
            f"| {s['stage']} | {s['seconds']:.2f} | {s['task_seconds'] if s['task_seconds'] is not None else ''} |"
            for s in r["stages"]
        ]
    if r["not_ok"]:
        out += ["", "## Documents not parsed", "", "| source | status | reason |", "|---|---|---|"]
        out += [f"| `{d['source']}` | {d['status']} | {d['reason']} |" for d in r["not_ok"]]
        out += _more(r, "not_ok", "documents not ok", "status != 'ok'", md=True)
    if r["warnings"]:
        out += ["", "## Warnings", ""] + [f"- `{w['source']}`: {w['reason']}" for w in r["warnings"]]
        out += _more(r, "warnings", "warnings", "status == 'ok' and reason != ''", md=True)
    return "\n".join(out) + "\n"


def _more(r: dict, key: str, what: str, where: str, *, md: bool = False) -> list[str]:
    """The line that says how many a report's short list left out, and where they all are."""
    total = r.get(f"{key}_total", len(r[key]))
    if total <= len(r[key]):
        return []
    line = f"... {total - len(r[key]):,} more {what} ({total:,} in all): the documents table has every one ({where})"
    return ["", line] if md else [f"  {line}"]


# -- the price report -------------------------------------------------------------------------------

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


def _human_bytes(n: float) -> str:
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
        return _human_bytes(value)
    if key in ("tokens_mean", "tokens_p50", "tokens_p95"):
        return f"{value:.0f}"
    if key == "embed_seconds":
        return _human_seconds(value)
    if key.endswith("usd") or key.endswith("usd_month"):
        return f"${value:,.2f}"
    if isinstance(value, (int, float)):
        return f"{value:,.0f}"
    return str(value)


def _price_columns(rows: list[dict]) -> list[tuple[str, str]]:
    cols = list(PRICE_COLUMNS)
    if any(r.get("duplicates") for r in rows):
        cols += _DUPLICATES
    cols += [c for c in _MONEY if any(c[0] in r for r in rows)]
    return cols


def _table(rows: list[dict], cols: list[tuple[str, str]]) -> list[list[str]]:
    return [[h for _, h in cols]] + [[_cell(k, r.get(k)) for k, _ in cols] for r in rows]


def render_price_text(report: dict) -> str:
    rows = report["settings"]
    cols = _price_columns(rows)
    grid_ = _table(rows, cols)
    widths = [max(len(r[i]) for r in grid_) for i in range(len(cols))]
    lines = [_price_title(report), "", _align(grid_[0], widths), "  ".join("-" * w for w in widths)]
    lines += [_align(r, widths) for r in grid_[1:]]
    for row in rows:
        if "interval_95" in row and row["interval_95"]:
            iv = row["interval_95"]
            lines.append(
                f"  95% interval {row['setting']}: vectors {iv['vectors'][0]:,}–{iv['vectors'][1]:,}, "
                f"total {_human_bytes(iv['total_bytes'][0])}–{_human_bytes(iv['total_bytes'][1])}"
            )
    lines += ["", "By document type (documents; chunks per setting):", *_by_type_matrix(rows)]
    if any("delta" in r for r in rows):
        lines += ["", "Against the previous run:"]
        for r in rows:
            d = r.get("delta")
            if d:
                cost = f", {_human_seconds(d['embed_seconds'])} to embed" if "embed_seconds" in d else ""
                lines.append(
                    f"  {r['setting']}: {d['unchanged']:,} unchanged, {d['new']:,} new, {d['removed']:,} "
                    f"removed; re-embedding the delta is {d['tokens_to_embed']:,} tokens{cost}"
                )
    if report.get("projection"):
        lines += ["", "On the cluster (cluster.yaml):", *[f"  {line}" for line in report["projection"]]]
    lines += ["", *[f"note: {n}" for n in report["notes"]]]
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


def _by_type_matrix(rows: list[dict]) -> list[str]:
    types = sorted({t for r in rows for t in r["by_type"]})
    header = ["type", "docs"] + [_short(r["setting"]) for r in rows]
    body = []
    for t in types:
        docs = max(r["by_type"].get(t, {}).get("documents", 0) for r in rows)
        body.append([t, f"{docs:,}"] + [f"{r['by_type'].get(t, {}).get('chunks', 0):,}" for r in rows])
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    return ["  " + _align(header, widths)] + ["  " + _align(r, widths) for r in body]


def _price_title(report: dict) -> str:
    kind = "ESTIMATE from a sample" if report["estimate"] else "measured"
    dupes = report.get("duplicates", 0)
    skipped = f" ({dupes:,} byte-identical duplicates skipped)" if dupes else ""
    return (
        f"raychunk price ({kind}): {report['corpus_files']:,} files, {_human_bytes(report['corpus_bytes'])}; "
        f"{report['sampled_documents'] - dupes:,} documents parsed{skipped}; dim {report['dim']} {report['dtype']}, "
        f"index {report['index']}"
    )


def render_price_markdown(report: dict) -> str:
    rows = report["settings"]
    cols = _price_columns(rows)
    grid_ = _table(rows, cols)
    out = [
        f"# raychunk price report\n\n{_price_title(report)}\n",
        "| " + " | ".join(grid_[0]) + " |",
        "|" + "---|" * len(cols),
    ]
    out += ["| " + " | ".join(r) + " |" for r in grid_[1:]]
    if any(r.get("interval_95") for r in rows):
        out += [
            "",
            "## 95% intervals (bootstrap over documents)",
            "",
            "| setting | vectors | total |",
            "|---|---|---|",
        ]
        for r in rows:
            iv = r.get("interval_95")
            if iv:
                out.append(
                    f"| {r['setting']} | {iv['vectors'][0]:,}–{iv['vectors'][1]:,} | "
                    f"{_human_bytes(iv['total_bytes'][0])}–{_human_bytes(iv['total_bytes'][1])} |"
                )
    out += [
        "",
        "## By document type",
        "",
        "| setting | type | docs | chunks | tokens | mean | >limit | total |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for t, x in r["by_type"].items():
            out.append(
                f"| {r['setting']} | {t} | {x['documents']:,} | {x['chunks']:,} | {x['tokens']:,} | "
                f"{x['tokens_mean']:.0f} | {x['over_limit']:,} | {_human_bytes(x['total_bytes'])} |"
            )
    if any("delta" in r for r in rows):
        out += [
            "",
            "## Against the previous run",
            "",
            "| setting | unchanged | new | removed | tokens to embed |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {r['setting']} | {r['delta']['unchanged']:,} | {r['delta']['new']:,} | {r['delta']['removed']:,} | "
            f"{r['delta']['tokens_to_embed']:,} |"
            for r in rows
            if "delta" in r
        ]
    if report.get("projection"):
        out += ["", "## On the cluster (`cluster.yaml`)", ""] + [f"- {line}" for line in report["projection"]]
    out += ["", "## Notes", ""] + [f"- {n}" for n in report["notes"]]
    return "\n".join(out) + "\n"


def write_price_csv(report: dict, path) -> None:
    import csv

    rows = report["settings"]
    keys = [k for k, _ in _price_columns(rows)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scope", *keys])
        for r in rows:
            w.writerow(["all", *[r.get(k, "") for k in keys]])
            for t, x in r["by_type"].items():
                w.writerow(
                    [f"type:{t}", *[(f"{r['setting']}" if k == "setting" else x.get(k, "")) for k in keys]]
                )


def plot_price(report: dict, path) -> None:
    """Vectors per setting, and storage per setting stacked as text, vectors and index overhead."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("the price chart needs matplotlib: pip install matplotlib") from e
    rows = report["settings"]
    labels = [r["setting"] for r in rows]
    x = range(len(rows))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 0.6 * len(rows) + 3), 9), sharex=True)
    bars = ax1.bar(x, [r["vectors"] for r in rows], color="#4C72B0")
    ax1.bar_label(bars, labels=[f"{r['vectors']:,}" for r in rows], fontsize=7, rotation=90, padding=2)
    ax1.set_title("Vectors per setting")
    ax1.set_ylabel("vectors")
    text = [r["text_bytes"] / 1e6 for r in rows]
    vec = [r["vector_bytes"] / 1e6 for r in rows]
    idx = [(r["index_bytes"] - r["vector_bytes"]) / 1e6 for r in rows]
    ax2.bar(x, text, label="chunk text", color="#DD8452")
    ax2.bar(x, vec, bottom=text, label=f"vectors ({report['dtype']}, dim {report['dim']})", color="#4C72B0")
    ax2.bar(
        x,
        idx,
        bottom=[a + b for a, b in zip(text, vec)],
        label=f"index overhead ({report['index']})",
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
    title = "raychunk price" + (" (estimate from a sample)" if report["estimate"] else "")
    fig.suptitle(f"{title}: {report['corpus_files']:,} files")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- the eval report -------------------------------------------------------------------------------


def _metric(m: dict, digits: int = 2) -> str:
    lo, hi = m["interval"]
    return f"{m['mean']:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def _eval_table(report: dict) -> list[list[str]]:
    k = report["k"]
    head = [
        "setting",
        "spans",
        "vectors",
        "total",
        f"hit@{k}",
        "inside one chunk",
        f"recall@{k}",
        "precision",
        "IoU",
        "precision (Chroma)",
        "IoU (Chroma)",
        "MRR",
        "tokens read",
        "s2b recall",
        "s2b tokens",
    ]
    budget = report.get("read_budget")
    if budget:
        head += [f"recall in {budget:,}t", f"s2b recall in {budget:,}t"]
    rows = [head]
    rec = report["recommendation"]["setting"]
    for r in report["settings"]:
        m, b = r["metrics"], r["small_to_big"]
        rows.append(
            [
                r["setting"] + (" *" if r["setting"] == rec else ""),
                _span_cell(r.get("span_check")),
                f"{r['vectors']:,}",
                _human_bytes(r["total_bytes"]),
                _metric(m["hit"]),
                _metric(m["inside"]) if "inside" in m else "-",
                _metric(m["recall"]),
                _metric(m["precision"]),
                _metric(m["iou"]),
                _metric(m["chroma_precision"]) if "chroma_precision" in m else "-",
                _metric(m["chroma_iou"]) if "chroma_iou" in m else "-",
                _metric(m["mrr"]),
                _metric(m["tokens"], 0),
                _metric(b["recall"]),
                _metric(b["tokens"], 0),
            ]
            + (
                [
                    _metric(r["reading_budget"]["chunks"]["budget_recall"]),
                    _metric(r["reading_budget"]["small_to_big"]["budget_recall"]),
                ]
                if budget
                else []
            )
        )
    return rows


def _labels_lines(report: dict) -> list[str]:
    """How the labelled passages were found, and which were not: one line each, for text and markdown."""
    lab = report.get("labels")
    if not lab:
        return []
    found = ", ".join(f"{n} {how}" for how, n in lab["passages_found"].items())
    lines = [
        f"Labels: {lab['scored']} of {lab['questions']} questions scored; passages found: {found or 'none'}."
    ]
    if lab["ambiguous"]:
        lines.append(
            f"{len(lab['ambiguous'])} quote(s) occur more than once: the first occurrence is scored ("
            + "; ".join(f"{a['id']}: {a['occurrences']}x" for a in lab["ambiguous"][:8])
            + ("; ..." if len(lab["ambiguous"]) > 8 else "")
            + ")."
        )
    if lab["noise_skipped"]:
        lines.append(
            f"{len(lab['noise_skipped'])} quote(s) found with words skipped between their words (running "
            "headers, page numbers): "
            + ", ".join(f"{a['id']} ({a['how']})" for a in lab["noise_skipped"][:8])
            + "."
        )
    if lab["unlocated"]:
        lines.append(
            f"SKIPPED (--skip-unlocated): {len(lab['skipped_questions'])} question(s) with {len(lab['unlocated'])} "
            "passage(s) not found in the parsed text:"
        )
        for m in lab["unlocated"]:
            lines.append(f"  {m['id']} {m['source'].rsplit('/', 1)[-1]}: {m['why']}")
    return lines


def _pair_cell(x: dict) -> str:
    lo, hi = x["interval"]
    return f"{x['a']:.2f} vs {x['b']:.2f}: {signed(x['difference'])} [{signed(lo)} to {signed(hi)}] (n={x['questions']})"


def _paired_lines(report: dict) -> list[str]:
    out = []
    for p in report.get("paired", ()):
        h = p["metrics"]["hit"]
        out.append(f"{p['a']} - {p['b']}, hit@{report['k']}: {_pair_cell(h['overall'])}")
        for tag, x in h["by_tag"].items():
            out.append(f"  {tag}: {_pair_cell(x)}")
    return out


def _tag_grid(report: dict) -> list[list[str]]:
    """Setting x tag: hit@k and recall@k means, each tag's question count in its header."""
    tags = report.get("by_tag") or {}
    if not tags:
        return []
    head = ["setting"] + [f"{t} (n={x['questions']})" for t, x in tags.items()]
    rows = [head]
    for r in report["settings"]:
        cells = [r["setting"]]
        for x in tags.values():
            m = x["settings"][r["setting"]]["metrics"]
            cells.append(f"{m['hit']['mean']:.2f} / {m['recall']['mean']:.2f}")
        rows.append(cells)
    return rows


def _span_cell(check: dict | None) -> str:
    if check is None:
        return "-"
    return "ok" if check["ok"] else f"FAIL {check['bad']:,}/{check['chunks']:,}"


_OK = {"ok": True}


def _span_failures(report: dict) -> list[tuple[str, dict]]:
    return [(r["setting"], r["span_check"]) for r in report["settings"] if not r.get("span_check", _OK)["ok"]]


def _span_warning(report: dict) -> list[str]:
    """The failed span checks, in words: which settings, how many chunks, the first few named."""
    failed = _span_failures(report)
    if not failed:
        return []
    lines = [
        f"SPAN CHECK FAILED for {len(failed)} of {len(report['settings'])} settings: some chunk spans do not "
        "hold their chunk's text, so their recall, precision and IoU are not comparable (loose spans "
        "inflate recall). They are left out of the recommendation."
    ]
    for label, check in failed:
        lines.append(f"  {label}: {check['bad']:,} of {check['chunks']:,} chunks")
        for b in check["examples"]:
            start, end = b["span"]
            lines.append(
                f"    {b['source'].rsplit('/', 1)[-1]} chunk {b['chunk_index']} [{start}, {end}): {b['why']}"
            )
    return lines


def _recommendation_line(rec: dict) -> str:
    if rec["setting"] is None:
        return "Recommendation: none"
    excluded = rec.get("excluded")
    return f"Recommendation (*): {rec['setting']}" + (
        f" (among the settings whose spans hold; left out: {', '.join(excluded)})" if excluded else ""
    )


def _eval_title(report: dict) -> str:
    return (
        f"raychunk eval: {report['questions']} labelled questions over {report['documents']} documents; "
        f"top {report['k']} by cosine, all documents pooled; small-to-big budget {report['parent_budget']} "
        f"tokens; dim {report['dim']} {report['dtype']}, index {report['index']}"
    )


def render_eval_text(report: dict) -> str:
    """The printed table: one row per setting, costs next to the metrics, each with its 95% interval."""
    grid = _eval_table(report)
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    rec = report["recommendation"]
    warning = _span_warning(report)
    lines = [_eval_title(report), ""] + ([*warning, ""] if warning else [])
    lines += [fmt(grid[0]), "  ".join("-" * w for w in widths), *map(fmt, grid[1:])]
    lines += ["", _recommendation_line(rec), f"  {rec['reason']}", ""]
    tags = _tag_grid(report)
    if tags:
        tw = [max(len(r[i]) for r in tags) for i in range(len(tags[0]))]
        tfmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, tw))  # noqa: E731
        lines += [
            f"By tag: hit@{report['k']} / recall@{report['k']}",
            tfmt(tags[0]),
            *map(tfmt, tags[1:]),
            "",
        ]
    paired = _paired_lines(report)
    if paired:
        lines += ["Paired differences (a - b, 95% paired bootstrap interval):", *paired, ""]
    labels = _labels_lines(report) + _embedding_lines(report)
    if labels:
        lines += [*labels, ""]
    lines += [f"note: {n}" for n in report["notes"]]
    return "\n".join(lines)


def _embedding_lines(report: dict) -> list[str]:
    """How many chunk texts the eval embedded, and how many vectors it reused (the same text under
    another setting, or the --cache folder)."""
    e = report.get("embedding")
    if not e or "embedded" not in e:
        return []
    total = e["embedded"] + e["reused"]
    share = f" ({e['reused'] / total:.0%})" if total else ""
    took = f"; chunking and embedding took {e['seconds']:,.1f} s" if "seconds" in e else ""
    return [
        f"Embedding: {e['embedded']:,} texts embedded, {e['reused']:,} of {total:,} chunk vectors "
        f"reused{share} (a text already embedded under another setting or in the cache){took}."
    ]


def render_eval_markdown(report: dict) -> str:
    grid = _eval_table(report)
    rec = report["recommendation"]
    out = [f"# raychunk eval report\n\n{_eval_title(report)}\n"]
    failed = _span_failures(report)
    if failed:
        out += [
            f"> **Span check failed for {len(failed)} of {len(report['settings'])} settings: "
            f"{', '.join(label for label, _ in failed)}.** Some of their chunk spans do not hold the "
            "chunk's text, so their recall, precision and IoU are not comparable (loose spans inflate "
            "recall); they are left out of the recommendation. See *Span check* below.\n"
        ]
    out += ["Metrics are means with [95% bootstrap interval].\n"]
    out += ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * len(grid[0])]
    out += ["| " + " | ".join(r) + " |" for r in grid[1:]]
    pick = f"**{rec['setting']}**." if rec["setting"] is not None else "**None.**"
    out += ["", "## Recommendation", "", f"{pick} {rec['reason']}", ""]
    if rec.get("excluded"):
        out += [f"Left out (their spans fail the check): {', '.join(rec['excluded'])}.", ""]
    out += [
        f"| setting | vectors | total | {rec['metric']}@k | difference vs best | paired 95% interval | within noise |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in rec["comparisons"]:
        out.append(
            f"| {c['setting']} | {c['vectors']:,} | {_human_bytes(c['total_bytes'])} | {c[rec['metric']]:.2f} | "
            f"{signed(c['difference'])} | {signed(c['interval'][0])} to {signed(c['interval'][1])} | "
            f"{'yes' if c['within_noise'] else 'no'} |"
        )
    out += _markdown_tags(report)
    if report.get("paired"):
        k = report["k"]
        out += ["", "## Paired comparisons", "", "a - b per question, 95% paired bootstrap interval.", ""]
        out += [
            f"| a | b | questions | tag | hit@{k} a | hit@{k} b | hit@{k} difference | interval | recall@{k} difference | interval |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for p in report["paired"]:
            h, rc = p["metrics"]["hit"], p["metrics"]["recall"]
            for tag in ["all", *h["by_tag"]]:
                x = h["overall"] if tag == "all" else h["by_tag"][tag]
                y = rc["overall"] if tag == "all" else rc["by_tag"][tag]
                out.append(
                    f"| {p['a']} | {p['b']} | {x['questions']} | {tag} | {x['a']:.2f} | {x['b']:.2f} | "
                    f"{signed(x['difference'])} | {signed(x['interval'][0])} to {signed(x['interval'][1])} | "
                    f"{signed(y['difference'])} | {signed(y['interval'][0])} to {signed(y['interval'][1])} |"
                )
    labels = _labels_lines(report)
    if labels:
        out += ["", "## Labels", ""] + [
            line if line.startswith("  ") is False else "- " + line.strip() for line in labels
        ]
    embedding = _embedding_lines(report)
    if embedding:
        out += ["", "## Embedding", "", *embedding]
    if failed:
        out += ["", "## Span check", ""]
        out += ["| setting | bad chunks | document | chunk | span | why |", "|---|---|---|---|---|---|"]
        for label, check in failed:
            for i, b in enumerate(check["examples"]):
                bad = f"{check['bad']:,} of {check['chunks']:,}" if i == 0 else ""
                out.append(
                    f"| {label if i == 0 else ''} | {bad} | {b['source'].rsplit('/', 1)[-1]} | "
                    f"{b['chunk_index']} | [{b['span'][0]}, {b['span'][1]}) | {b['why'].replace('|', '/')} |"
                )
    labels = [r["setting"] for r in report["settings"]]
    out += ["", "## Per question (rank of the first hit, - when none)", ""]
    out += ["| id | document | question | " + " | ".join(labels) + " |", "|" + "---|" * (3 + len(labels))]
    for q in report["per_query"]:
        ranks = [q["results"][lab]["rank"] for lab in labels]
        out.append(
            f"| {q['id']} | {q['source'].rsplit('/', 1)[-1]} | {q['query']} | "
            + " | ".join("-" if r is None else str(r) for r in ranks)
            + " |"
        )
    out += ["", "## Notes", ""] + [f"- {n}" for n in report["notes"]]
    return "\n".join(out) + "\n"


def _markdown_tags(report: dict) -> list[str]:
    """Per tag: each setting's hit@k, recall@k, MRR and recall within the reading budget, with intervals."""
    tags = report.get("by_tag") or {}
    if not tags:
        return []
    k, budget = report["k"], report.get("read_budget")
    out = [
        "",
        "## By tag",
        "",
        "A question counts under each of its tags. Means with [95% bootstrap interval].",
        "",
    ]
    head = ["tag", "questions", "setting", f"hit@{k}", f"recall@{k}", "MRR", "tokens read", "s2b recall"]
    if budget:
        head += [f"recall in {budget:,}t", f"s2b recall in {budget:,}t"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tag, x in tags.items():
        for i, (label, s) in enumerate(x["settings"].items()):
            m, b = s["metrics"], s["small_to_big"]
            cells = [
                tag if i == 0 else "",
                str(x["questions"]) if i == 0 else "",
                label,
                _metric(m["hit"]),
                _metric(m["recall"]),
                _metric(m["mrr"]),
                _metric(m["tokens"], 0),
                _metric(b["recall"]),
            ]
            if budget:
                rb = s["reading_budget"]
                cells += [
                    _metric(rb["chunks"]["budget_recall"]),
                    _metric(rb["small_to_big"]["budget_recall"]),
                ]
            out.append("| " + " | ".join(cells) + " |")
    return out


def plot_eval(report: dict, path, *, x: str = "total_bytes") -> None:
    """Recall@k against storage (or ``x="vectors"``) per setting, with 95% intervals; the
    recommendation is ringed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("the eval plot needs matplotlib: pip install matplotlib") from e
    rows = report["settings"]
    rec = report["recommendation"]["setting"]
    strategies = sorted({r["setting"].split(" ")[0] for r in rows})
    colours = dict(zip(strategies, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 3))
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    scale = 1e3 if x == "total_bytes" else 1
    for r in rows:
        m = r["metrics"]["recall"]
        xv = r[x] / scale
        strategy = r["setting"].split(" ")[0]
        spans_ok = r.get("span_check", _OK)["ok"]
        ax.errorbar(
            xv,
            m["mean"],
            yerr=[[m["mean"] - m["interval"][0]], [m["interval"][1] - m["mean"]]],
            fmt="o" if spans_ok else "x",
            color=colours[strategy] if spans_ok else "grey",
            capsize=3,
            alpha=0.85,
        )
        label = r["setting"] if spans_ok else f"{r['setting']} (spans fail)"
        ax.annotate(label, (xv, m["mean"]), textcoords="offset points", xytext=(5, 4), fontsize=7)
        if r["setting"] == rec:
            ax.plot(xv, m["mean"], "o", ms=16, mfc="none", mec="crimson", mew=2)
    for s in strategies:
        ax.plot([], [], "o", color=colours[s], label=s)
    if report.get("span_failures"):
        ax.plot([], [], "x", color="grey", label="spans fail the check: not ranked")
    ax.plot([], [], "o", ms=12, mfc="none", mec="crimson", mew=2, label=f"recommended: {rec or 'none'}")
    ax.set_xlabel("total storage (kB: chunk text + index)" if x == "total_bytes" else "vectors")
    ax.set_ylabel(f"coverage recall@{report['k']} (95% interval)")
    low = min(r["metrics"]["recall"]["interval"][0] for r in rows)
    ax.set_ylim(max(0.0, low - 0.1), 1.03)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"raychunk eval: {report['questions']} questions, top {report['k']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_eval(report: dict, output: str | Path, *, plot: bool = True) -> list[str]:
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (out / "report.md").write_text(render_eval_markdown(report))
    names = ["report.json", "report.md"]
    if plot:
        plot_eval(report, out / "plot.png")
        names.append("plot.png")
    return [str(out / n) for n in names]


# -- the job ------------------------------------------------------------------------------------
