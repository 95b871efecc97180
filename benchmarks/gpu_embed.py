"""Embedding throughput on one GPU: MiniLM in fp16, length-sorted vs unsorted, batch sizes 64-1,024,
plus a BERT-base-sized model (768 hidden, 12 layers, random weights), each against the CPU.

    python benchmarks/gpu_embed.py [--device auto|cuda|cpu] [--quick] [--json PATH] [INPUT ...]

    (default INPUT: ../shared/corpus/{md,txt,html}, else samples/; without CUDA, --device auto
    means cpu and --quick)

The texts are real chunks: the inputs parsed, classified and chunked in this process by raychunk's
own stages (``raychunk.document_steps``, the same calls the job makes), cycled up to ``--texts`` when the
corpus has fewer. Tokens are counted with the model's own tokenizer, truncated at max_seq_length
(256) as the model truncates them, special tokens included: the positions the model really runs.
Padding is not counted.

For every model x batch size x order, one timed pass over the texts:

- tokenize: the fast tokenizer over each batch (padding to the batch's longest, truncation at 256);
- forward: host-to-device copy, the transformer, mean pooling and L2 normalisation (what
  sentence-transformers does for MiniLM), and the copy of the vectors back to the host, between two
  ``torch.cuda.synchronize()``.

``chunks/s`` and ``tokens/s`` are over both phases; ``fwd tok/s`` over the forward phase alone.
``sorted`` orders each window of 4 x batch size texts by length (longest first) before batching:
sentence-transformers sorts each ``encode`` call by text length and raychunk's embed actor gets
batches of 4 x batch size rows; ``unsorted`` keeps the corpus order. Each model is warmed up before
its first timing. ``x CPU`` is tokens/s over this machine's CPU figure for the same model (fp32,
batch 64, sorted, every core), measured in the same run.

MiniLM's pooling here is checked against ``SentenceTransformer.encode`` on the same texts (the
``check`` entry of the JSON): a benchmark of the wrong computation would be worthless.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MINILM = "all-MiniLM-L6-v2"
BATCH_SIZES = (64, 128, 256, 512, 1024)
QUICK_BATCH_SIZES = (8, 32)
CPU_BASELINE_BATCH = 64
SORT_WINDOW = 4  # x batch size: the rows one embed actor's encode() call sees (pipeline.batch_rows)


def default_inputs() -> list[str]:
    shared = ROOT.parent / "shared" / "corpus"
    if shared.is_dir():
        return [str(shared / d) for d in ("md", "txt", "html") if (shared / d).is_dir()]
    return [str(ROOT / "samples")]


def chunk_texts(
    inputs: list[str], *, limit: int, per_file: int = 64, max_file_kb: int = 1024
) -> tuple[list[str], int]:
    """Up to ``limit`` chunk texts, at most ``per_file`` from any one file, chunked by raychunk's
    stages in this process (no Ray); with the number of files they came from. Files are taken in
    turn from each input (md, txt, html, ...), sorted by path, skipping any over ``max_file_kb``
    (a book would only slow the set-up down): deterministic, and a mix of document types."""
    from raychunk.config import build_run_config, load_config, load_doc_types
    from raychunk.document_steps import chunk_rows, classify_document, parse_file
    from raychunk.io import list_inputs, readable

    cfg = build_run_config(load_config(), {"input": inputs, "embedder.enabled": False})
    types = load_doc_types(cfg.chunk.doc_types_path)
    listed = []
    for one in inputs:
        fs, scheme, files = list_inputs([one], max_file_mb=cfg.limits.max_file_mb)
        ok = sorted((f for f in readable(files) if f.size <= max_file_kb * 1024), key=lambda f: f.path)
        listed.append([(fs, scheme, f) for f in ok])
    texts: list[str] = []
    n_files = 0
    for entry in itertools.chain.from_iterable(itertools.zip_longest(*listed)):
        if entry is None:
            continue
        fs, scheme, f = entry
        row = {"path": f.path, "bytes": fs.open_input_file(f.path).readall()}
        row = parse_file(row, options=cfg.parse, scheme=scheme)
        row = classify_document(row, thresholds=types.thresholds, overrides=types.overrides)
        rows = chunk_rows(row, profiles=types.profiles, tokenizer=cfg.tokenizer_spec)
        got = [r["text"] for r in rows if r["row_type"] == "chunk" and r["text"]][:per_file]
        texts.extend(got)
        n_files += bool(got)
        if len(texts) >= limit:
            break
    return texts[:limit], n_files


def token_counts(tokenizer, texts: list[str], max_len: int) -> list[int]:
    """Tokens the model runs per text: its word pieces plus [CLS]/[SEP], at most ``max_len``."""
    ids = tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]
    return [min(len(x), max_len) for x in ids]


def batch_order(texts: list[str], batch_size: int, *, sort: bool) -> list[int]:
    """The order texts are batched in: corpus order, or longest first within each window of
    ``SORT_WINDOW * batch_size`` texts (what one encode() call of an embed actor sorts)."""
    if not sort:
        return list(range(len(texts)))
    window = SORT_WINDOW * batch_size
    order: list[int] = []
    for start in range(0, len(texts), window):
        idx = range(start, min(start + window, len(texts)))
        order.extend(sorted(idx, key=lambda i: -len(texts[i])))
    return order


def load_minilm(device: str, dtype):
    """MiniLM's transformer and tokenizer, loaded as the pipeline loads them (packaged, no download)."""
    from sentence_transformers import SentenceTransformer

    from raychunk.models import resolve_model

    st = SentenceTransformer(resolve_model(MINILM), device=device)
    model = st[0].auto_model.to(device=device, dtype=dtype).eval()
    return model, st.tokenizer, int(st.max_seq_length), st


def load_bert_base(device: str, dtype):
    """A BERT-base-sized encoder (BertConfig() defaults: 768 hidden, 12 layers, 30,522 word pieces)
    with random weights: throughput only, nothing downloaded."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    return BertModel(BertConfig(), add_pooling_layer=False).to(device=device, dtype=dtype).eval()


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def encode(model, batches: list[dict], device: str):
    """Mean-pooled, L2-normalised vectors of pre-tokenized ``batches``, back on the host."""
    import torch
    import torch.nn.functional as F

    out = []
    with torch.inference_mode():
        for enc in batches:
            enc = {k: v.to(device, non_blocking=True) for k, v in enc.items()}
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            out.append(F.normalize(vec.float(), dim=-1).cpu())
    return torch.cat(out) if out else torch.empty(0)


def tokenize(tokenizer, texts: list[str], order: list[int], batch_size: int, max_len: int) -> list[dict]:
    batches = []
    for start in range(0, len(order), batch_size):
        part = [texts[i] for i in order[start : start + batch_size]]
        enc = tokenizer(part, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        batches.append({k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc})
    return batches


def measure(
    model,
    tokenizer,
    texts: list[str],
    counts: list[int],
    *,
    batch_size: int,
    sort: bool,
    device: str,
    max_len: int,
    repeats: int = 1,
) -> dict:
    """Timed passes over ``texts`` (tokenize, then forward, as the module docstring says); each
    phase's best of ``repeats``, since other work on the machine only ever adds time."""
    order = batch_order(texts, batch_size, sort=sort)
    tok_s = fwd_s = float("inf")
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        batches = tokenize(tokenizer, texts, order, batch_size, max_len)
        t1 = time.perf_counter()
        _sync(device)
        t2 = time.perf_counter()
        encode(model, batches, device)
        _sync(device)
        t3 = time.perf_counter()
        tok_s, fwd_s = min(tok_s, t1 - t0), min(fwd_s, t3 - t2)
    tokens = sum(counts)
    padded = sum(int(b["attention_mask"].numel()) for b in batches)
    return {
        "batch_size": batch_size,
        "order": "sorted" if sort else "unsorted",
        "texts": len(texts),
        "tokens": tokens,
        "padded_positions": padded,
        "padding_fraction": round(1 - tokens / padded, 4) if padded else 0.0,
        "tokenize_s": round(tok_s, 4),
        "forward_s": round(fwd_s, 4),
        "chunks_per_s": round(len(texts) / (tok_s + fwd_s), 2),
        "tokens_per_s": round(tokens / (tok_s + fwd_s), 1),
        "forward_tokens_per_s": round(tokens / fwd_s, 1),
    }


def warm_up(model, tokenizer, texts: list[str], *, batch_size: int, device: str, max_len: int) -> None:
    """Kernel selection, allocator growth and lazy init, away from the timings: one batch of the
    largest size on CUDA, a few texts on CPU (whose kernels need no warming beyond the first call)."""
    part = texts[: batch_size if device == "cuda" else 4]
    encode(model, tokenize(tokenizer, part, list(range(len(part))), batch_size, max_len), device)
    _sync(device)


def check_pooling(st, model, tokenizer, texts: list[str], *, device: str, max_len: int) -> dict:
    """Cosine between this script's vectors and SentenceTransformer.encode's for the same texts."""
    import torch

    ours = encode(model, tokenize(tokenizer, texts, list(range(len(texts))), 32, max_len), device)
    theirs = torch.as_tensor(
        st.encode(
            texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
    ).float()
    cos = (ours * theirs).sum(-1)
    return {"texts": len(texts), "min_cosine": round(float(cos.min()), 6), "ok": bool(cos.min() >= 0.999)}


def dtype_of(name: str, device: str):
    import torch

    if name == "auto":
        name = "float16" if device == "cuda" else "float32"
    return getattr(torch, name), name


def run(args) -> dict:
    import torch

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_embed: --device cuda but torch sees no CUDA device (torch.cuda.is_available())")
    quick = args.quick or (args.device == "auto" and device == "cpu")
    batch_sizes = args.batch_sizes or (QUICK_BATCH_SIZES if quick else BATCH_SIZES)
    n_texts = args.texts or (32 if quick else 8192)
    n_bert = args.bert_texts or (8 if quick else n_texts)
    n_cpu = args.cpu_texts or (64 if quick else 512)
    repeats = args.repeats or (1 if quick else 3)
    dtype, dtype_name = dtype_of(args.dtype, device)

    inputs = args.inputs or default_inputs()
    started = t = time.perf_counter()
    limit = min(n_texts, args.max_unique)
    unique, n_files = chunk_texts(inputs, limit=limit, per_file=max(4, limit // 16))
    if not unique:
        raise SystemExit(f"gpu_embed: no chunks from {inputs}")
    texts = list(itertools.islice(itertools.cycle(unique), n_texts))
    chunk_s = time.perf_counter() - t
    print(
        f"texts: {len(unique)} unique chunks from {n_files} files of {', '.join(inputs)} "
        f"({chunk_s:.1f} s), cycled to {n_texts}",
        file=sys.stderr,
    )

    t = time.perf_counter()
    minilm, tokenizer, max_len, st = load_minilm(device, dtype)
    load_s = time.perf_counter() - t
    counts = token_counts(tokenizer, texts, max_len)
    report = {
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
        "cpu": {
            "cores": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "machine": platform.machine(),
        },
        "torch": torch.__version__,
        "quick": quick,
        "repeats": repeats,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "inputs": inputs,
        "texts": {
            "unique": len(unique),
            "files": n_files,
            "measured": n_texts,
            "mean_tokens": round(sum(counts) / len(counts), 1),
            "truncated_at_256": sum(1 for c in counts if c >= max_len),
        },
        "max_seq_length": max_len,
        "model_load_s": round(load_s, 2),
        "check": check_pooling(st, minilm, tokenizer, unique[:32], device=device, max_len=max_len),
        "cpu_baseline": {},
        "rows": [],
    }
    print(f"MiniLM on {device} loaded in {load_s:.1f} s; pooling check {report['check']}", file=sys.stderr)

    # The BERT-base CPU baseline gets a quarter of MiniLM's texts: it is ~8x the compute per token.
    models = [(MINILM, lambda: minilm, texts, counts, n_cpu)]
    if not args.no_bert:
        bert = (texts[:n_bert], counts[:n_bert], max(8, n_cpu // 4))
        models.append(("bert-base (random)", lambda: load_bert_base(device, dtype), *bert))
    for name, load, model_texts, model_counts, model_cpu_texts in models:
        model = load()
        warm_up(model, tokenizer, model_texts, batch_size=max(batch_sizes), device=device, max_len=max_len)
        for bs, sort in itertools.product(batch_sizes, (True, False)):
            row = measure(
                model,
                tokenizer,
                model_texts,
                model_counts,
                batch_size=bs,
                sort=sort,
                device=device,
                max_len=max_len,
                repeats=repeats,
            )
            report["rows"].append({"model": name, "device": device, "dtype": dtype_name, **row})
            print(_line(report["rows"][-1]), file=sys.stderr)
        report["cpu_baseline"][name] = cpu_baseline(
            name, model, tokenizer, model_texts, model_counts, device, max_len, model_cpu_texts, report
        )
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    for row in report["rows"]:
        base = report["cpu_baseline"][row["model"]]["tokens_per_s"]
        row["ratio_to_cpu"] = round(row["tokens_per_s"] / base, 2) if base else None
    return report


def cpu_baseline(name, model, tokenizer, texts, counts, device, max_len, n_cpu, report) -> dict:
    """The same model's tokens/s on this machine's CPU in fp32 (batch 64, sorted, best of 2, every
    core). On a CPU run that is the measured row itself (batch 64, else the largest measured)."""
    keys = ("batch_size", "texts", "tokens_per_s", "chunks_per_s")
    if device == "cpu":
        mine = [r for r in report["rows"] if r["model"] == name and r["order"] == "sorted"]
        base = min(mine, key=lambda r: (r["batch_size"] != CPU_BASELINE_BATCH, -r["batch_size"]))
        return {k: base[k] for k in keys} | {"dtype": base["dtype"]}
    import copy

    import torch

    cpu_model = copy.deepcopy(model).to(device="cpu", dtype=torch.float32)
    texts, counts = texts[:n_cpu], counts[:n_cpu]
    warm_up(cpu_model, tokenizer, texts[:8], batch_size=8, device="cpu", max_len=max_len)
    row = measure(
        cpu_model,
        tokenizer,
        texts,
        counts,
        batch_size=CPU_BASELINE_BATCH,
        sort=True,
        device="cpu",
        max_len=max_len,
        repeats=2,
    )
    print(
        f"CPU baseline {name}: {row['tokens_per_s']:,.0f} tokens/s ({torch.get_num_threads()} threads)",
        file=sys.stderr,
    )
    return {k: row[k] for k in keys} | {"dtype": "float32"}


def _line(row: dict) -> str:
    return (
        f"  {row['model']:<20} {row['dtype']:<8} bs {row['batch_size']:>5} {row['order']:<8} "
        f"{row['chunks_per_s']:>10,.1f} chunks/s {row['tokens_per_s']:>12,.0f} tokens/s"
    )


def render_table(report: dict) -> str:
    head = ("model", "dtype", "batch", "order", "chunks/s", "tokens/s", "fwd tok/s", "pad %", "x CPU")
    rows = [
        (
            r["model"],
            r["dtype"],
            str(r["batch_size"]),
            r["order"],
            f"{r['chunks_per_s']:,.1f}",
            f"{r['tokens_per_s']:,.0f}",
            f"{r['forward_tokens_per_s']:,.0f}",
            f"{100 * r['padding_fraction']:.0f}",
            "-" if r["ratio_to_cpu"] is None else f"{r['ratio_to_cpu']:.2f}",
        )
        for r in report["rows"]
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    right = {4, 5, 6, 7, 8, 2}

    def fmt(cells):
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    where = report["gpu"] or f"CPU ({report['cpu']['torch_threads']} threads)"
    t = report["texts"]
    lines = [
        f"embedding throughput on {where}, torch {report['torch']}: {t['measured']} texts "
        f"({t['unique']} unique chunks), mean {t['mean_tokens']} tokens, {t['truncated_at_256']} at the 256 cap",
        fmt(head),
        fmt(["-" * w for w in widths]),
        *(fmt(r) for r in rows),
        "",
        "x CPU: over the same model on this machine's CPU, sorted: "
        + "; ".join(
            f"{k} {v['tokens_per_s']:,.0f} tokens/s ({v['dtype']}, batch {v['batch_size']}, {v['texts']} texts)"
            for k, v in report["cpu_baseline"].items()
        ),
        f"best of {report['repeats']} passes per row; load average at start {report['load_average']}; "
        f"{report['elapsed_s']:.0f} s in all, model load {report['model_load_s']:.1f} s",
        f"MiniLM pooling vs SentenceTransformer.encode: min cosine {report['check']['min_cosine']}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "inputs",
        nargs="*",
        help="folders or files to chunk for texts (default: ../shared/corpus md/txt/html)",
    )
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument(
        "--dtype",
        choices=("auto", "float16", "bfloat16", "float32"),
        default="auto",
        help="auto: fp16 on CUDA, fp32 on CPU",
    )
    p.add_argument(
        "--quick", action="store_true", help="small sizes, for a CPU check (the default without CUDA)"
    )
    p.add_argument(
        "--batch-sizes", type=lambda s: tuple(int(x) for x in s.split(",")), help="comma-separated"
    )
    p.add_argument("--texts", type=int, help="texts per timed pass (default 8192; quick 128)")
    p.add_argument(
        "--bert-texts", type=int, help="texts per pass for the BERT-base model (default: --texts; quick 32)"
    )
    p.add_argument("--cpu-texts", type=int, help="texts for the CPU baseline on a GPU run (default 512)")
    p.add_argument("--max-unique", type=int, default=4096, help="chunk at most this many distinct texts")
    p.add_argument("--repeats", type=int, help="timed passes per row, best kept (default 3; quick 1)")
    p.add_argument("--no-bert", action="store_true", help="MiniLM only")
    p.add_argument("--json", help="write the figures here as JSON")
    args = p.parse_args(argv)
    report = run(args)
    print(render_table(report))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    if not report["check"]["ok"]:
        print(
            "gpu_embed: MiniLM vectors differ from SentenceTransformer.encode (min cosine < 0.999)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
