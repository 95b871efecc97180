"""Per-core rates of each pipeline stage on this machine, for the cluster plan (scripts/plan_cluster.py).

    python benchmarks/stage_rates.py [--corpus ../shared/corpus] [--budget 15] [--embed-texts 240]
                                     [--gpu-json PATH] [--out benchmarks/stage_rates.json]
    python benchmarks/stage_rates.py --gpu-only --gpu-json out/gpu_check/gpu_embed.json
                                     [--gpu-run-log RUN.txt]
                                     (after scripts/gpu_check.sh on a GPU: only the GPU figure)

Pinned to one CPU, tokenizers and torch on one thread, CPU time (``time.process_time``, so other
work on a shared machine does not count):

- parse, by type family (``md/`` markdown, ``html/``, ``txt/`` text, ``pdf/``): ``parse_document``
  of each file in turn (sorted by name) until the family has used ``--budget`` seconds, as MB/s of
  the files' bytes; for PDFs also pages/s;
- chunk: the job's classify and chunk stages (``stages.classify_document``, ``document_steps.chunk_rows``
  with the per-type profiles and MiniLM's tokenizer) on the parsed documents, as MB/s of the same
  source bytes; ``all`` is the measured mix (total bytes over total seconds);
- embed on CPU: the embed stage (``embed.EmbedChunks`` held to one thread, 8 texts per forward pass)
  over ``--embed-texts`` of the chunks just made, an equal share from each family, as MiniLM tokens/s
  (truncated at 256 as the model truncates them, [CLS] and [SEP] included);
- embed on a GPU: none here. The figure is the embed stage's own rate in a ``raychunk run --device
  cuda`` when ``--gpu-run-log`` names that run's printed summary or its ``report.json`` (tokens
  embedded over the embed actors' time: what the job reaches); else ``benchmarks/gpu_embed.py --json``'s when ``--gpu-json``
  names a GPU run of it (or ``benchmarks/gpu_embed.json`` is one); else the published figure below.

It also records the sample's profile (files, bytes, PDF pages, chunks, tokens per family), from
which the plan shapes its 1M-document and 1 TB corpora. The parse runs in this process: the job's
per-document child process is left out (``benchmarks/cpu_stage.py`` puts it at about 1.1×).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from chunk_speed import _pin_one_cpu  # noqa: E402

from raychunk.projection import ALL, Rate, gpu_rate_from_benchmark, gpu_rate_from_run_log  # noqa: E402

FAMILIES = {"markdown": "md", "html": "html", "text": "txt", "pdf": "pdf"}
TOKENIZER = "all-MiniLM-L6-v2"

# The latest GPU run of the job (benchmarks/gpu_h200/README.md says how it was made).
GPU_RUN_LOG = HERE / "gpu_h200" / "run_corpus_cuda.txt"

# The published GPU figure, until benchmarks/gpu_embed.py has run on a GPU. The sentence-transformers
# pretrained-models table gives all-MiniLM-L6-v2 14,200 sentences/s ("Encoding speed (sentences / sec)
# on a V100 GPU"; 750 on CPU). The page does not say how long the sentences were: we take 15 word
# pieces each ([CLS] and [SEP] included; short STS-style sentences). Longer texts (our chunks: ~150)
# fill a GPU better, so tokens/s on them is if anything higher. Taken as-is for cluster.yaml's A10G.
PUBLISHED_SENTENCES_S = 14_200
PUBLISHED_TOKENS_PER_SENTENCE = 15
PUBLISHED_URL = "https://www.sbert.net/docs/sentence_transformer/pretrained_models.html"
PUBLISHED_GPU = Rate(
    PUBLISHED_SENTENCES_S * PUBLISHED_TOKENS_PER_SENTENCE,
    "tokens/s per GPU",
    f"published, not measured: {PUBLISHED_SENTENCES_S:,} sentences/s for all-MiniLM-L6-v2 on a V100 "
    f"({PUBLISHED_URL}) × {PUBLISHED_TOKENS_PER_SENTENCE} word pieces per sentence (assumed); "
    "taken as-is for an A10G",
)


def machine(pinned: str) -> dict:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = next(
        (
            f"{int(line.split()[1]) / 2**20:.0f} GiB"
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        "?",
    )
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "machine": platform.machine(),
        "python": platform.python_version(),
        "pinned": pinned,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "commit": commit,
    }


def measure_cpu_stages(corpus: Path, budget: float) -> tuple[dict, dict[str, list[str]]]:
    """family → {files, bytes, pages, parse_s, chunk_s, chunks, tokens, statuses}; and the chunk
    texts per family (for the embed measurement)."""
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.document_steps import chunk_rows, classify_document
    from raychunk.parse import parse_document
    from raychunk.tokens import load_counter

    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    load_counter(TOKENIZER)  # loaded once per process, as in a worker

    def chunk(parsed):
        row = classify_document(
            {"parsed": parsed, "parse_seconds": 0.0}, thresholds=types.thresholds, overrides=types.overrides
        )
        return chunk_rows(row, profiles=types.profiles, tokenizer=TOKENIZER)

    out, texts = {}, {}
    for family, folder in FAMILIES.items():
        files = sorted(p for p in (corpus / folder).iterdir() if p.is_file())
        if not files:
            continue
        warm = files[0].read_bytes()
        chunk(parse_document(warm, str(files[0]), options=options))  # lazy imports, parser caches
        acc = {"files": 0, "bytes": 0, "pages": 0, "parse_s": 0.0, "chunk_s": 0.0, "chunks": 0, "tokens": 0}
        statuses: dict[str, int] = {}
        texts[family] = []
        for path in files:
            if acc["parse_s"] + acc["chunk_s"] >= budget:
                break
            data = path.read_bytes()
            t0 = time.process_time()
            parsed = parse_document(data, str(path), options=options)
            t1 = time.process_time()
            rows = chunk(parsed)
            t2 = time.process_time()
            chunks = [r for r in rows if r["row_type"] == "chunk"]
            acc["files"] += 1
            acc["bytes"] += len(data)
            acc["pages"] += (parsed.document.pages or 0) if family == "pdf" else 0
            acc["parse_s"] += t1 - t0
            acc["chunk_s"] += t2 - t1
            acc["chunks"] += len(chunks)
            acc["tokens"] += sum(r["n_tokens"] for r in chunks)
            statuses[parsed.document.status] = statuses.get(parsed.document.status, 0) + 1
            texts[family] += [r["text"] for r in chunks]
        acc["statuses"] = statuses
        acc["of_files"] = len(files)
        out[family] = acc
        print(
            f"  {family:<9} {acc['files']:>3}/{len(files)} files {acc['bytes'] / 1e6:6.2f} MB: parse "
            f"{acc['bytes'] / 1e6 / acc['parse_s']:6.2f} MB/s, chunk {acc['bytes'] / 1e6 / acc['chunk_s']:6.2f} MB/s"
            + (f", {acc['pages'] / acc['parse_s']:.0f} pages/s" if family == "pdf" else ""),
            file=sys.stderr,
        )
    return out, texts


def measure_cpu_embed(texts: dict[str, list[str]], n: int) -> dict:
    """The embed stage on one thread over ``n`` chunks, an equal share from each family (spread
    evenly through each family's chunks)."""
    import pyarrow as pa
    import torch

    from raychunk.embed import EmbedChunks
    from raychunk.models import PACKAGED_MODEL

    torch.set_num_threads(1)
    share = max(1, n // max(1, len(texts)))
    picked: list[str] = []
    for family_texts in texts.values():
        step = max(1, len(family_texts) // share)
        picked += family_texts[::step][:share]
    stage = EmbedChunks(PACKAGED_MODEL, device="cpu", threads=1)
    model = stage.model
    pieces = model.tokenizer(picked, add_special_tokens=True, truncation=False)["input_ids"]
    tokens = sum(min(len(p), model.max_seq_length) for p in pieces)
    batch = pa.table({"row_type": ["chunk"] * len(picked), "text": picked})
    stage(batch.slice(0, 8))  # warm-up
    t = time.process_time()
    stage(batch)
    seconds = time.process_time() - t
    return {
        "texts": len(picked),
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": tokens / seconds,
        "batch": stage.batch_size,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def gpu_rate(path: Path | None, run_log: str | None = None) -> Rate:
    """The embed stage's rate in a GPU run of the job when ``run_log`` is one, else the GPU
    benchmark's figure when ``path`` is a GPU run of it, else the published one."""
    if run_log:
        rate = gpu_rate_from_run_log(Path(run_log).read_text(), _shown(Path(run_log)))
        if rate is not None:
            return rate
        print(f"stage_rates: {run_log} is not the summary of a run on GPUs", file=sys.stderr)
    if path is not None and path.exists():
        rate = gpu_rate_from_benchmark(json.loads(path.read_text()), _shown(path))
        if rate is not None:
            return rate
        print(f"stage_rates: {path} is not a GPU run of gpu_embed.py", file=sys.stderr)
    return PUBLISHED_GPU


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--budget", type=float, default=15.0, help="CPU seconds of parse + chunk per family")
    ap.add_argument("--embed-texts", type=int, default=240)
    ap.add_argument("--gpu-json", help="gpu_embed.py --json output (default: benchmarks/gpu_embed.json)")
    ap.add_argument(
        "--gpu-run-log",
        help="the printed summary or the report.json of a `raychunk run --device cuda`: its embed stage's rate is the GPU "
        f"figure (default: {GPU_RUN_LOG.relative_to(ROOT)} when it exists)",
    )
    ap.add_argument("--out", default=str(HERE / "stage_rates.json"))
    ap.add_argument(
        "--gpu-only",
        action="store_true",
        help="only replace the GPU figure in --out (from --gpu-json), keeping the CPU measurements",
    )
    args = ap.parse_args(argv)
    gpu_json = Path(args.gpu_json) if args.gpu_json else HERE / "gpu_embed.json"
    if args.gpu_run_log is None and GPU_RUN_LOG.exists():
        args.gpu_run_log = str(GPU_RUN_LOG)
    if args.gpu_only:
        report = json.loads(Path(args.out).read_text())
        report["rates"]["embed_tokens_s_gpu"] = gpu_rate(gpu_json, args.gpu_run_log).to_dict()
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}: GPU embed {report['rates']['embed_tokens_s_gpu']}", file=sys.stderr)
        return 0

    pinned = _pin_one_cpu()
    when = datetime.datetime.now(datetime.UTC)
    started = time.perf_counter()
    profile, texts = measure_cpu_stages(Path(args.corpus), args.budget)
    embed = measure_cpu_embed(texts, args.embed_texts)
    print(
        f"  embed     {embed['tokens_per_s']:,.0f} tokens/s on one thread ({embed['texts']} chunks)",
        file=sys.stderr,
    )

    day = when.date().isoformat()
    where = f"benchmarks/stage_rates.py, {day}, one core of {platform.machine()} ({os.cpu_count()} cores)"
    rel = Path(args.corpus).resolve()
    corpus_name = f"../{rel.relative_to(ROOT.parent)}" if rel.is_relative_to(ROOT.parent) else str(rel)

    def mb_s(seconds_key: str) -> dict:
        rates = {}
        for family, p in profile.items():
            rates[family] = Rate(
                p["bytes"] / 1e6 / p[seconds_key],
                "MB/s per core",
                f"{where}: {p['files']} files of {corpus_name}/{FAMILIES[family]}",
            ).to_dict()
        nbytes = sum(p["bytes"] for p in profile.values())
        seconds = sum(p[seconds_key] for p in profile.values())
        rates[ALL] = Rate(
            nbytes / 1e6 / seconds, "MB/s per core", f"{where}: the mix of {corpus_name}"
        ).to_dict()
        return rates

    pdf = profile["pdf"]
    report = {
        "date": when.isoformat(timespec="seconds"),
        "machine": machine(pinned),
        "how": "CPU time on one pinned core; parse/chunk over source bytes; see benchmarks/stage_rates.py",
        "rates": {
            "parse_mb_s": mb_s("parse_s"),
            "pdf_pages_s": Rate(
                pdf["pages"] / pdf["parse_s"],
                "pages/s per core",
                f"{where}: {pdf['files']} PDFs, {pdf['pages']} pages of {corpus_name}/pdf",
            ).to_dict(),
            "chunk_mb_s": mb_s("chunk_s"),
            "embed_tokens_s_cpu": Rate(
                embed["tokens_per_s"],
                "tokens/s per CPU core",
                f"{where}: embed stage, torch {embed['torch']} fp32 on 1 thread, {embed['texts']} chunks",
            ).to_dict(),
            "embed_tokens_s_gpu": gpu_rate(gpu_json, args.gpu_run_log).to_dict(),
        },
        "corpus_profile": {
            f: {k: p[k] for k in ("files", "bytes", "pages", "chunks", "tokens", "statuses")}
            for f, p in profile.items()
        },
        "embed_cpu": embed,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out} ({report['elapsed_s']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
