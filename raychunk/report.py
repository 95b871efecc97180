"""The run report: finish the staged output, publish it, and describe the run in JSON, markdown and text."""

from __future__ import annotations

import json
import re
import time
from collections import Counter

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from raychunk.schema import DOCUMENT_SCHEMA

__all__ = ["finalize_run", "render_run_markdown", "render_run_text"]


def finalize_run(cfg, fs: pafs.FileSystem, out: str, staging: str, files, results: list[dict], plan, stats: str,
                 *, wall_seconds: float, where: str, cluster: dict) -> dict:
    docs = _compact_documents(fs, staging, cfg.output_files.compression)
    _check_every_input_accounted(docs, files)
    report = _build_report(cfg, docs, files, results, plan, stats, wall_seconds, where, cluster)
    _publish(fs, staging, out, cfg.output_files.overwrite)
    for name, text in (("report.json", json.dumps(report, indent=2, ensure_ascii=False)),
                       ("report.md", render_run_markdown(report))):
        with fs.open_output_stream(f"{out}/{name}") as f:
            f.write(text.encode())
    return report


def _compact_documents(fs, staging: str, compression: str) -> pa.Table:
    """One documents file, sorted by source, instead of one part per write task."""
    folder = f"{staging}/documents"
    parts = [i.path for i in fs.get_file_info(pafs.FileSelector(folder)) if i.path.endswith(".parquet")]
    tables = [pq.read_table(p, filesystem=fs, schema=DOCUMENT_SCHEMA) for p in sorted(parts)]
    docs = pa.concat_tables(tables) if tables else DOCUMENT_SCHEMA.empty_table()
    docs = docs.sort_by("source")
    for p in parts:
        fs.delete_file(p)
    pq.write_table(docs, f"{folder}/documents.parquet", filesystem=fs,
                   compression=None if compression == "none" else compression)
    return docs


def _check_every_input_accounted(docs: pa.Table, files) -> None:
    if docs.num_rows != len(files):
        raise RuntimeError(f"{len(files)} input files but {docs.num_rows} document rows: refusing to publish")


def _publish(fs, staging: str, out: str, overwrite: bool) -> None:
    for name in ("chunks", "documents"):
        final = f"{out}/{name}"
        if fs.get_file_info(final).type != pafs.FileType.NotFound:
            if not overwrite:
                raise RuntimeError(f"{final} appeared during the run; the new output stays in {staging}")
            fs.delete_dir(final)
    for name in ("report.json", "report.md"):
        if fs.get_file_info(f"{out}/{name}").type == pafs.FileType.File:
            fs.delete_file(f"{out}/{name}")
    for name in ("chunks", "documents"):
        fs.move(f"{staging}/{name}", f"{out}/{name}")
    fs.delete_dir(staging)
    if not fs.get_file_info(pafs.FileSelector(f"{out}/_staging", allow_not_found=True)):
        fs.delete_dir(f"{out}/_staging")


_OP = re.compile(r"^Operator \d+ (?P<name>.+?): (?:.*?produced in |executed in )(?P<secs>[\d.]+)s"
                 r"(?:\n\* Remote wall time: .*?(?P<task>[\d.]+)(?P<unit>us|ms|s|min) total)?", re.M)
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _stages(stats: str) -> list[dict]:
    """Per Ray Data operator (fused stages share one): wall seconds and summed task seconds."""
    return [{"stage": m.group("name"), "seconds": float(m.group("secs")),
             "task_seconds": round(float(m.group("task")) * _UNIT[m.group("unit")], 3) if m.group("task") else None}
            for m in _OP.finditer(stats or "")]


def _build_report(cfg, docs: pa.Table, files, results, plan, stats, wall, where, cluster) -> dict:
    rows = docs.to_pylist()
    total = lambda key: sum(r.get(key, 0) for r in results)  # noqa: E731
    chunks, tokens = total("chunks"), total("tokens")
    vectors = chunks if plan else 0
    input_bytes = sum(f.size for f in files)
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "output": cfg.output,
        "ray": {"mode": where, "cluster": {k: v for k, v in sorted(cluster.items()) if k in ("CPU", "GPU", "memory")}},
        "embedder": {"model": cfg.embedder.model, "dim": plan.dim if plan else None,
                     "actors": plan.actors if plan else 0, "gpus_per_actor": plan.gpus_per_actor if plan else 0}
        if plan else None,
        "input": {"files": len(files), "bytes": input_bytes},
        "documents": {
            "by_status": dict(sorted(Counter(r["status"] for r in rows).items())),
            "by_type": dict(sorted(Counter(r["doc_type"] for r in rows if r["status"] == "ok").items())),
        },
        "chunks": chunks,
        "vectors": vectors,
        "tokens_embedded": tokens if plan else 0,
        "tokens_chunked": tokens,
        "over_embedder_limit": total("over_limit"),
        "storage_bytes": {
            "chunks_parquet": total("chunk_bytes"),
            "documents_parquet": sum(r.get("document_bytes", 0) for r in results),
            "chunk_text": total("text_bytes"),
            "vectors_raw": vectors * (plan.dim if plan else 0) * 4,
        },
        "throughput": {
            "wall_seconds": round(wall, 2),
            "files_per_s": round(len(files) / wall, 3),
            "input_mb_per_s": round(input_bytes / 1e6 / wall, 3),
            "chunks_per_s": round(chunks / wall, 2),
            "tokens_per_s": round(tokens / wall, 1),
        },
        "stages": _stages(stats),
        "not_ok": [{"source": r["source"], "status": r["status"], "reason": r["reason"]}
                   for r in rows if r["status"] != "ok"],
        "warnings": [{"source": r["source"], "reason": r["reason"]} for r in rows if r["status"] == "ok" and r["reason"]],
    }


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def render_run_text(r: dict) -> str:
    lines = [
        f"raychunk run → {r['output']}",
        f"  input      {r['input']['files']} files, {_mb(r['input']['bytes'])}",
        "  documents  " + ", ".join(f"{n} {s}" for s, n in r["documents"]["by_status"].items()),
        "  types      " + ", ".join(f"{n} {t}" for t, n in r["documents"]["by_type"].items()),
        f"  chunks     {r['chunks']:,}  vectors {r['vectors']:,}  tokens embedded {r['tokens_embedded']:,}"
        f"  over the embedder's input limit: {r['over_embedder_limit']}",
        f"  storage    chunks {_mb(r['storage_bytes']['chunks_parquet'])} parquet (raw vectors "
        f"{_mb(r['storage_bytes']['vectors_raw'])}, text {_mb(r['storage_bytes']['chunk_text'])}), "
        f"documents {_mb(r['storage_bytes']['documents_parquet'])}",
        f"  time       {r['throughput']['wall_seconds']:.1f} s: {r['throughput']['files_per_s']:.2f} files/s, "
        f"{r['throughput']['chunks_per_s']:.1f} chunks/s, {r['throughput']['tokens_per_s']:.0f} tokens/s",
    ]
    if r["embedder"]:
        e = r["embedder"]
        lines.append(f"  embedder   {e['model']} (dim {e['dim']}), {e['actors']} actor(s), {e['gpus_per_actor']:g} GPU each")
    if r["stages"]:
        for st in r["stages"]:
            tasks = f", {st['task_seconds']:.1f} s in tasks" if st["task_seconds"] is not None else ""
            lines.append(f"  stage      {st['stage']}: {st['seconds']:.1f} s wall{tasks}")
    for d in r["not_ok"]:
        lines.append(f"  {d['status']:<11} {d['source']}: {d['reason']}")
    return "\n".join(lines)


def render_run_markdown(r: dict) -> str:
    out = [f"# raychunk run report\n\nOutput: `{r['output']}` · generated {r['generated']} · Ray: {r['ray']['mode']}\n",
           "| measure | value |", "|---|---|",
           f"| input files | {r['input']['files']} ({_mb(r['input']['bytes'])}) |"]
    for s, n in r["documents"]["by_status"].items():
        out.append(f"| documents {s} | {n} |")
    for t, n in r["documents"]["by_type"].items():
        out.append(f"| type {t} | {n} |")
    out += [f"| chunks | {r['chunks']:,} |", f"| vectors | {r['vectors']:,} |",
            f"| tokens embedded | {r['tokens_embedded']:,} |",
            f"| chunks over the embedder's input limit | {r['over_embedder_limit']} |",
            f"| chunks Parquet | {_mb(r['storage_bytes']['chunks_parquet'])} |",
            f"| raw vectors | {_mb(r['storage_bytes']['vectors_raw'])} |",
            f"| chunk text | {_mb(r['storage_bytes']['chunk_text'])} |",
            f"| documents Parquet | {_mb(r['storage_bytes']['documents_parquet'])} |",
            f"| wall time | {r['throughput']['wall_seconds']:.1f} s |",
            f"| throughput | {r['throughput']['files_per_s']:.2f} files/s, {r['throughput']['tokens_per_s']:.0f} tokens/s |"]
    if r["stages"]:
        out += ["", "## Stages (Ray Data stats)", "", "| stage | wall s | task s |", "|---|---|---|"]
        out += [f"| {s['stage']} | {s['seconds']:.2f} | {s['task_seconds'] if s['task_seconds'] is not None else ''} |"
                for s in r["stages"]]
    if r["not_ok"]:
        out += ["", "## Documents not parsed", "", "| source | status | reason |", "|---|---|---|"]
        out += [f"| `{d['source']}` | {d['status']} | {d['reason']} |" for d in r["not_ok"]]
    if r["warnings"]:
        out += ["", "## Warnings", ""] + [f"- `{w['source']}`: {w['reason']}" for w in r["warnings"]]
    return "\n".join(out) + "\n"
