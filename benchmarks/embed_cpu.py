"""The embed stage on CPU against a raw ``SentenceTransformer.encode`` of the same texts.

    python benchmarks/embed_cpu.py [--texts N] [--reps R]

Texts are real chunks: ../shared/corpus/md chunked by raychunk's per-type profile (samples/ when the
corpus is absent). Side by side in one process, interleaved, median of R repetitions:

- raw encode: ``encode(texts, batch_size=64)`` with torch on every core of the machine (the ratios'
  base), and the same at the stage's forward batch on CPU (``embed.CPU_FORWARD_BATCH``, 8): the
  target compares the stage with raw encode on the same texts, threads and batch;
- stage: ``EmbedChunks`` as the pipeline builds it on this machine (a one-CPU share that grows into
  the cores left idle) over the Arrow batches it would get;
- stage, one thread: the same stage held to its share (what a run did before);
- stage, onnx / onnx-int8: the stage with ``embedder.backend`` onnx (fp32, fused) and onnx-int8,
  with their cosine to the torch vectors (``--no-onnx`` leaves them out; needs ``pip install onnx``).

Prints tokens/s (MiniLM word pieces, truncated at 256 as the model does) and the ratios to raw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from summary import record

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def real_chunks(limit: int) -> list[str]:
    from raychunk.chunking import chunk_document
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.parse import parse_path
    from raychunk.tokens import load_counter

    corpus = ROOT.parent / "shared" / "corpus" / "md"
    files = sorted(corpus.glob("*")) if corpus.exists() else sorted((ROOT / "samples").glob("*"))
    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    counter = load_counter("all-MiniLM-L6-v2")
    texts: list[str] = []
    for f in files:
        parsed = parse_path(str(f), options=options)
        kind = classify(parsed, types.thresholds, types.overrides).doc_type
        texts += [c.text for c in chunk_document(parsed, types.profiles[kind], counter, doc_type=kind)]
        if len(texts) >= limit:
            break
    return texts[:limit]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=768)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-onnx", action="store_true", help="leave out the onnx backends")
    args = ap.parse_args()

    import pyarrow as pa
    import torch

    from raychunk.embed import EmbedChunks
    from raychunk.models import PACKAGED_MODEL

    texts = real_chunks(args.texts)
    cores = len(os.sched_getaffinity(0))
    stage = EmbedChunks(PACKAGED_MODEL, device="cpu", threads=1, max_threads=cores)
    pinned = EmbedChunks(PACKAGED_MODEL, device="cpu", threads=1)
    model = stage.model
    pieces = model.tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]
    tokens = sum(min(len(p), model.max_seq_length) for p in pieces)
    rows = 64 * 4  # the pipeline's batch_rows: embedder.batch_size x 4
    batches = [
        pa.table({"row_type": ["chunk"] * len(texts[i : i + rows]), "text": texts[i : i + rows]})
        for i in range(0, len(texts), rows)
    ]

    def raw(batch_size):
        def go():
            torch.set_num_threads(cores)
            model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)

        return go

    def run_stage(embedder):
        def go():
            for b in batches:
                embedder(b)

        return go

    same = f"raw encode, batch {stage.batch_size}"
    runs = {
        "raw encode": raw(64),
        same: raw(stage.batch_size),
        "stage": run_stage(stage),
        "stage, one thread": run_stage(pinned),
    }
    cosines = {}
    if not args.no_onnx:
        import numpy as np

        reference = np.array(stage(batches[0]).column("embedding").to_pylist(), dtype=np.float32)
        for backend in ("onnx", "onnx-int8"):
            try:
                other = EmbedChunks(
                    PACKAGED_MODEL, device="cpu", threads=1, max_threads=cores, backend=backend
                )
            except ImportError as e:
                print(f"  {backend}: skipped ({e})")
                continue
            runs[f"stage, {backend}"] = run_stage(other)
            got = np.array(other(batches[0]).column("embedding").to_pylist(), dtype=np.float32)
            cos = (got * reference).sum(1)
            cosines[backend] = (float(cos.mean()), float(cos.min()))
    model.encode(texts[:64], batch_size=64, show_progress_bar=False)  # warm-up
    seconds: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.reps):
        for name, fn in runs.items():
            t = time.perf_counter()
            fn()
            seconds[name].append(time.perf_counter() - t)
    print(
        f"{len(texts)} chunks, {tokens} tokens (MiniLM, truncated at 256), {cores} cores, torch {torch.__version__}"
    )
    raw_rate = tokens / statistics.median(seconds["raw encode"])
    for name, s in seconds.items():
        rate = tokens / statistics.median(s)
        backend = name.removeprefix("stage, ")
        cos = (
            f"   cosine to torch: mean {cosines[backend][0]:.4f}, min {cosines[backend][1]:.4f}"
            if backend in cosines
            else ""
        )
        print(f"  {name:22} {rate:8.0f} tokens/s   {rate / raw_rate:.2f}x raw{cos}")
    print(f"  the stage ran {stage.threads.current} threads at the end")
    ratio = tokens / statistics.median(seconds["stage"]) / raw_rate
    same_ratio = statistics.median(seconds[same]) / statistics.median(seconds["stage"])
    print(f"  stage vs {same}: {same_ratio:.2f}x (target >= 0.9)")
    record(f"embed stage on CPU vs {same}", same_ratio, target=">= 0.9", before="0.64", met=same_ratio >= 0.9)
    record("embed stage on CPU vs raw encode, batch 64", ratio)
    for backend in cosines:
        record(
            f"embed stage, {backend} vs raw torch encode",
            tokens / statistics.median(seconds[f"stage, {backend}"]) / raw_rate,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
