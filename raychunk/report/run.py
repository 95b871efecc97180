"""The run report rendered: the text the CLI prints and ``report.md``."""

from __future__ import annotations


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
