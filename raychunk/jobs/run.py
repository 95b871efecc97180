"""The run job: parse, classify, chunk and embed the inputs on Ray into Parquet shards, then publish
the output and its report (``report.json`` / ``report.md``)."""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter

import pyarrow as pa

from raychunk import publish
from raychunk.config import RunConfig, check_limits, load_doc_types
from raychunk.io import list_inputs, resolve_output
from raychunk.pipeline import build, find_duplicates, init_ray, plan_embedding, read_files
from raychunk.report import render_run_markdown
from raychunk.sink import ShardSink

__all__ = ["run", "run_report"]

log = logging.getLogger(__name__)


def run(cfg: RunConfig) -> dict:
    """Run the job; returns the run report (also written as report.json and report.md)."""
    import ray

    t0 = time.perf_counter()
    load_doc_types(cfg.chunk.doc_types_path)  # fail on a bad config before starting anything
    check_limits(cfg)  # every doc type's caps within the embedder's input limit
    out_fs, out_path = resolve_output(cfg.output)
    publish.check_output(out_fs, out_path, cfg.output_files.overwrite)
    in_fs, scheme, files = list_inputs(cfg.input)
    where = init_ray(cfg)
    cluster = ray.cluster_resources()
    plan = plan_embedding(cfg, cluster) if cfg.embedder.enabled else None
    log.info("raychunk: %d files on %s Ray (%s); embedding: %s", len(files), where, cluster, plan)
    duplicates = find_duplicates(files, in_fs, scheme, cfg)
    staging = publish.staging_folder(out_path)
    sink = ShardSink(
        staging,
        out_fs,
        dim=plan.dim if plan else None,
        rows_per_shard=cfg.output_files.rows_per_shard,
        compression=cfg.output_files.compression,
    )
    ds = build(read_files(files, in_fs, cfg), cfg, scheme=scheme, plan=plan, duplicates=duplicates)
    try:
        ds.write_datasink(sink)
    except BaseException:
        publish.discard(out_fs, staging)
        raise
    stats = _stage_stats(ds)
    docs = publish.compact_documents(out_fs, staging, cfg.output_files.compression)
    publish.check_every_input_accounted(docs, files)
    report = run_report(cfg, docs, files, sink.results, plan, stats, time.perf_counter() - t0, where, cluster)
    publish.publish(out_fs, staging, out_path, cfg.output_files.overwrite)
    publish.write_text(out_fs, f"{out_path}/report.json", json.dumps(report, indent=2, ensure_ascii=False))
    publish.write_text(out_fs, f"{out_path}/report.md", render_run_markdown(report))
    return report


def _stage_stats(ds) -> str:
    """Ray Data's own per-operator stats for the executed job (wall time per stage)."""
    try:
        return ds.stats()
    except Exception as e:  # stats are a report nicety; never fail a finished run over them
        return f"(stats unavailable: {type(e).__name__})"


_OP = re.compile(
    r"^Operator \d+ (?P<name>.+?): (?:.*?produced in |executed in )(?P<secs>[\d.]+)s"
    r"(?:\n\* Remote wall time: .*?(?P<task>[\d.]+)(?P<unit>us|ms|s|min) total)?",
    re.M,
)
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _stages(stats: str) -> list[dict]:
    """Per Ray Data operator (fused stages share one): wall seconds and summed task seconds."""
    return [
        {
            "stage": m.group("name"),
            "seconds": float(m.group("secs")),
            "task_seconds": round(float(m.group("task")) * _UNIT[m.group("unit")], 3)
            if m.group("task")
            else None,
        }
        for m in _OP.finditer(stats or "")
    ]


def _duplicates_saved(rows: list[dict]) -> dict:
    """Byte-identical copies skipped, and what they would have cost: their bytes, and per copy the
    kept copy's tokens (a copy shares its doc_id, the hash of its bytes, with the kept one)."""
    kept_tokens = {r["doc_id"]: r["tokens"] for r in rows if r["status"] != "duplicate"}
    copies = [r for r in rows if r["status"] == "duplicate"]
    return {
        "files": len(copies),
        "bytes_saved": sum(r["bytes"] for r in copies),
        "tokens_saved": sum(kept_tokens.get(r["doc_id"], 0) for r in copies),
    }


def run_report(cfg, docs: pa.Table, files, results, plan, stats, wall, where, cluster) -> dict:
    """The run report: inputs, documents by status and type, chunks, vectors, storage, throughput, stages."""
    rows = docs.to_pylist()
    total = lambda key: sum(r.get(key, 0) for r in results)  # noqa: E731
    chunks, tokens = total("chunks"), total("tokens")
    vectors = chunks if plan else 0
    input_bytes = sum(f.size for f in files)
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "output": cfg.output,
        "ray": {
            "mode": where,
            "cluster": {k: v for k, v in sorted(cluster.items()) if k in ("CPU", "GPU", "memory")},
        },
        "embedder": {
            "model": cfg.embedder.model,
            "dim": plan.dim if plan else None,
            "actors": plan.actors if plan else 0,
            "gpus_per_actor": plan.gpus_per_actor if plan else 0,
        }
        if plan
        else None,
        "input": {"files": len(files), "bytes": input_bytes},
        "documents": {
            "by_status": dict(sorted(Counter(r["status"] for r in rows).items())),
            "by_type": dict(sorted(Counter(r["doc_type"] for r in rows if r["status"] == "ok").items())),
        },
        "duplicates": _duplicates_saved(rows),
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
        "not_ok": [
            {"source": r["source"], "status": r["status"], "reason": r["reason"]}
            for r in rows
            if r["status"] != "ok"
        ],
        "warnings": [
            {"source": r["source"], "reason": r["reason"]}
            for r in rows
            if r["status"] == "ok" and r["reason"]
        ],
    }
