"""The eval report rendered from its typed record (``report.eval_record.EvalReport``): text,
``report.md`` and ``plot.png``, written by ``write_eval``."""

from __future__ import annotations

import json
from pathlib import Path

from raychunk.io import MARK_TEXT, OUTPUT_MARK
from raychunk.render import signed
from raychunk.report.eval_record import (
    EvalReport,
    Metric,
    PairDiff,
    Recommendation,
    SpanCheck,
    build_eval_report,
)
from raychunk.report.price import human_bytes

__all__ = [
    "EvalReport",
    "build_eval_report",
    "plot_eval",
    "render_eval_markdown",
    "render_eval_text",
    "write_eval",
]


def _metric(m: Metric, digits: int = 2) -> str:
    lo, hi = m.interval
    return f"{m.mean:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def _eval_table(report: EvalReport) -> list[list[str]]:
    k = report.k
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
    budget = report.read_budget
    if budget:
        head += [f"recall in {budget:,}t", f"s2b recall in {budget:,}t"]
    rows = [head]
    rec = report.recommendation.setting
    for r in report.settings:
        m, b = r.metrics, r.small_to_big
        rows.append(
            [
                r.setting + (" *" if r.setting == rec else ""),
                _span_cell(r.span_check),
                f"{r.vectors:,}",
                human_bytes(r.total_bytes),
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
                    _metric(r.reading_budget.chunks["budget_recall"]),
                    _metric(r.reading_budget.small_to_big["budget_recall"]),
                ]
                if budget
                else []
            )
        )
    return rows


def _labels_lines(report: EvalReport) -> list[str]:
    """How the labelled passages were found, and which were not: one line each, for text and markdown."""
    lab = report.labels
    if not lab:
        return []
    found = ", ".join(f"{n} {how}" for how, n in lab.passages_found.items())
    lines = [f"Labels: {lab.scored} of {lab.questions} questions scored; passages found: {found or 'none'}."]
    if lab.ambiguous:
        lines.append(
            f"{len(lab.ambiguous)} quote(s) occur more than once: the first occurrence is scored ("
            + "; ".join(f"{a.id}: {a.occurrences}x" for a in lab.ambiguous[:8])
            + ("; ..." if len(lab.ambiguous) > 8 else "")
            + ")."
        )
    if lab.noise_skipped:
        lines.append(
            f"{len(lab.noise_skipped)} quote(s) found with words skipped between their words (running "
            "headers, page numbers): " + ", ".join(f"{a.id} ({a.how})" for a in lab.noise_skipped[:8]) + "."
        )
    if lab.unlocated:
        lines.append(
            f"SKIPPED (--skip-unlocated): {len(lab.skipped_questions)} question(s) with {len(lab.unlocated)} "
            "passage(s) not found in the parsed text:"
        )
        for m in lab.unlocated:
            lines.append(f"  {m['id']} {m['source'].rsplit('/', 1)[-1]}: {m['why']}")
    return lines


def _pair_cell(x: PairDiff) -> str:
    lo, hi = x.interval
    return f"{x.a:.2f} vs {x.b:.2f}: {signed(x.difference)} [{signed(lo)} to {signed(hi)}] (n={x.questions})"


def _paired_lines(report: EvalReport) -> list[str]:
    out = []
    for p in report.paired:
        h = p.metrics.hit
        out.append(f"{p.a} - {p.b}, hit@{report.k}: {_pair_cell(h.overall)}")
        for tag, x in h.by_tag.items():
            out.append(f"  {tag}: {_pair_cell(x)}")
    return out


def _tag_grid(report: EvalReport) -> list[list[str]]:
    """Setting x tag: hit@k and recall@k means, each tag's question count in its header."""
    tags = report.by_tag
    if not tags:
        return []
    head = ["setting"] + [f"{t} (n={x.questions})" for t, x in tags.items()]
    rows = [head]
    for r in report.settings:
        cells = [r.setting]
        for x in tags.values():
            m = x.settings[r.setting].metrics
            cells.append(f"{m['hit'].mean:.2f} / {m['recall'].mean:.2f}")
        rows.append(cells)
    return rows


def _span_cell(check: SpanCheck) -> str:
    return "ok" if check.ok else f"FAIL {check.bad:,}/{check.chunks:,}"


def _span_failures(report: EvalReport) -> list[tuple[str, SpanCheck]]:
    return [(r.setting, r.span_check) for r in report.settings if not r.span_check.ok]


def _span_warning(report: EvalReport) -> list[str]:
    """The failed span checks, in words: which settings, how many chunks, the first few named."""
    failed = _span_failures(report)
    if not failed:
        return []
    lines = [
        f"SPAN CHECK FAILED for {len(failed)} of {len(report.settings)} settings: some chunk spans do not "
        "hold their chunk's text, so their recall, precision and IoU are not comparable (loose spans "
        "inflate recall). They are left out of the recommendation."
    ]
    for label, check in failed:
        lines.append(f"  {label}: {check.bad:,} of {check.chunks:,} chunks")
        for b in check.examples:
            start, end = b.span
            lines.append(f"    {b.source.rsplit('/', 1)[-1]} chunk {b.chunk_index} [{start}, {end}): {b.why}")
    return lines


def _recommendation_line(rec: Recommendation) -> str:
    if rec.setting is None:
        return "Recommendation: none"
    return f"Recommendation (*): {rec.setting}" + (
        f" (among the settings whose spans hold; left out: {', '.join(rec.excluded)})" if rec.excluded else ""
    )


def _eval_title(report: EvalReport) -> str:
    return (
        f"raychunk eval: {report.questions} labelled questions over {report.documents} documents; "
        f"top {report.k} by cosine, all documents pooled; small-to-big budget {report.parent_budget} "
        f"tokens; dim {report.dim} {report.dtype}, index {report.index}"
    )


def render_eval_text(report: EvalReport) -> str:
    """The printed table: one row per setting, costs next to the metrics, each with its 95% interval."""
    grid = _eval_table(report)
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    rec = report.recommendation
    warning = _span_warning(report)
    lines = [_eval_title(report), ""] + ([*warning, ""] if warning else [])
    lines += [fmt(grid[0]), "  ".join("-" * w for w in widths), *map(fmt, grid[1:])]
    lines += ["", _recommendation_line(rec), f"  {rec.reason}", ""]
    tags = _tag_grid(report)
    if tags:
        tw = [max(len(r[i]) for r in tags) for i in range(len(tags[0]))]
        tfmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, tw))  # noqa: E731
        lines += [
            f"By tag: hit@{report.k} / recall@{report.k}",
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
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)


def _embedding_lines(report: EvalReport) -> list[str]:
    """How many chunk texts the eval embedded, and how many vectors it reused (the same text under
    another setting, or the --cache folder)."""
    e = report.embedding
    if e is None or e.embedded is None:
        return []
    total = e.embedded + e.reused
    share = f" ({e.reused / total:.0%})" if total else ""
    took = f"; chunking and embedding took {e.seconds:,.1f} s" if e.seconds is not None else ""
    return [
        f"Embedding: {e.embedded:,} texts embedded, {e.reused:,} of {total:,} chunk vectors "
        f"reused{share} (a text already embedded under another setting or in the cache){took}."
    ]


def render_eval_markdown(report: EvalReport) -> str:
    grid = _eval_table(report)
    rec = report.recommendation
    out = [f"# raychunk eval report\n\n{_eval_title(report)}\n"]
    failed = _span_failures(report)
    if failed:
        out += [
            f"> **Span check failed for {len(failed)} of {len(report.settings)} settings: "
            f"{', '.join(label for label, _ in failed)}.** Some of their chunk spans do not hold the "
            "chunk's text, so their recall, precision and IoU are not comparable (loose spans inflate "
            "recall); they are left out of the recommendation. See *Span check* below.\n"
        ]
    out += ["Metrics are means with [95% bootstrap interval].\n"]
    out += ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * len(grid[0])]
    out += ["| " + " | ".join(r) + " |" for r in grid[1:]]
    pick = f"**{rec.setting}**." if rec.setting is not None else "**None.**"
    out += ["", "## Recommendation", "", f"{pick} {rec.reason}", ""]
    if rec.excluded:
        out += [f"Left out (their spans fail the check): {', '.join(rec.excluded)}.", ""]
    out += [
        f"| setting | vectors | total | {rec.metric}@k | difference vs best | paired 95% interval | within noise |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in rec.comparisons:
        out.append(
            f"| {c.setting} | {c.vectors:,} | {human_bytes(c.total_bytes)} | {c.recall:.2f} | "
            f"{signed(c.difference)} | {signed(c.interval[0])} to {signed(c.interval[1])} | "
            f"{'yes' if c.within_noise else 'no'} |"
        )
    out += _markdown_tags(report)
    if report.paired:
        k = report.k
        out += ["", "## Paired comparisons", "", "a - b per question, 95% paired bootstrap interval.", ""]
        out += [
            f"| a | b | questions | tag | hit@{k} a | hit@{k} b | hit@{k} difference | interval | recall@{k} difference | interval |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for p in report.paired:
            h, rc = p.metrics.hit, p.metrics.recall
            for tag in ["all", *h.by_tag]:
                x = h.overall if tag == "all" else h.by_tag[tag]
                y = rc.overall if tag == "all" else rc.by_tag[tag]
                out.append(
                    f"| {p.a} | {p.b} | {x.questions} | {tag} | {x.a:.2f} | {x.b:.2f} | "
                    f"{signed(x.difference)} | {signed(x.interval[0])} to {signed(x.interval[1])} | "
                    f"{signed(y.difference)} | {signed(y.interval[0])} to {signed(y.interval[1])} |"
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
            for i, b in enumerate(check.examples):
                bad = f"{check.bad:,} of {check.chunks:,}" if i == 0 else ""
                out.append(
                    f"| {label if i == 0 else ''} | {bad} | {b.source.rsplit('/', 1)[-1]} | "
                    f"{b.chunk_index} | [{b.span[0]}, {b.span[1]}) | {b.why.replace('|', '/')} |"
                )
    labels = [r.setting for r in report.settings]
    out += ["", "## Per question (rank of the first hit, - when none)", ""]
    out += ["| id | document | question | " + " | ".join(labels) + " |", "|" + "---|" * (3 + len(labels))]
    for q in report.per_query:
        ranks = [q.results[lab].rank for lab in labels]
        out.append(
            f"| {q.id} | {q.source.rsplit('/', 1)[-1]} | {q.query} | "
            + " | ".join("-" if r is None else str(r) for r in ranks)
            + " |"
        )
    out += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def _markdown_tags(report: EvalReport) -> list[str]:
    """Per tag: each setting's hit@k, recall@k, MRR and recall within the reading budget, with intervals."""
    tags = report.by_tag
    if not tags:
        return []
    k, budget = report.k, report.read_budget
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
        for i, (label, s) in enumerate(x.settings.items()):
            m, b = s.metrics, s.small_to_big
            cells = [
                tag if i == 0 else "",
                str(x.questions) if i == 0 else "",
                label,
                _metric(m["hit"]),
                _metric(m["recall"]),
                _metric(m["mrr"]),
                _metric(m["tokens"], 0),
                _metric(b["recall"]),
            ]
            if budget:
                rb = s.reading_budget
                cells += [_metric(rb.chunks["budget_recall"]), _metric(rb.small_to_big["budget_recall"])]
            out.append("| " + " | ".join(cells) + " |")
    return out


def plot_eval(report: EvalReport, path, *, x: str = "total_bytes") -> None:
    """Recall@k against storage (or ``x="vectors"``) per setting, with 95% intervals; the
    recommendation is ringed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("the eval plot needs matplotlib: pip install matplotlib") from e
    rows = report.settings
    rec = report.recommendation.setting
    strategies = sorted({r.setting.split(" ")[0] for r in rows})
    colours = dict(zip(strategies, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 3))
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    scale = 1e3 if x == "total_bytes" else 1
    for r in rows:
        m = r.metrics["recall"]
        xv = getattr(r, x) / scale
        strategy = r.setting.split(" ")[0]
        spans_ok = r.span_check.ok
        ax.errorbar(
            xv,
            m.mean,
            yerr=[[m.mean - m.interval[0]], [m.interval[1] - m.mean]],
            fmt="o" if spans_ok else "x",
            color=colours[strategy] if spans_ok else "grey",
            capsize=3,
            alpha=0.85,
        )
        label = r.setting if spans_ok else f"{r.setting} (spans fail)"
        ax.annotate(label, (xv, m.mean), textcoords="offset points", xytext=(5, 4), fontsize=7)
        if r.setting == rec:
            ax.plot(xv, m.mean, "o", ms=16, mfc="none", mec="crimson", mew=2)
    for s in strategies:
        ax.plot([], [], "o", color=colours[s], label=s)
    if report.span_failures:
        ax.plot([], [], "x", color="grey", label="spans fail the check: not ranked")
    ax.plot([], [], "o", ms=12, mfc="none", mec="crimson", mew=2, label=f"recommended: {rec or 'none'}")
    ax.set_xlabel("total storage (kB: chunk text + index)" if x == "total_bytes" else "vectors")
    ax.set_ylabel(f"coverage recall@{report.k} (95% interval)")
    low = min(r.metrics["recall"].interval[0] for r in rows)
    ax.set_ylim(max(0.0, low - 0.1), 1.03)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"raychunk eval: {report.questions} questions, top {report.k}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_eval(report: EvalReport, output: str | Path, *, plot: bool = True) -> list[str]:
    """report.json (the record's ``as_json()``), report.md and plot.png under ``output``."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    (out / OUTPUT_MARK).write_text(MARK_TEXT)
    (out / "report.json").write_text(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    (out / "report.md").write_text(render_eval_markdown(report))
    names = ["report.json", "report.md"]
    if plot:
        plot_eval(report, out / "plot.png")
        names.append("plot.png")
    return [str(out / n) for n in names]
