"""Chunking memory stays proportional to the text: worst-case inputs parsed, classified and chunked.

    python benchmarks/chunk_memory.py [SIZE_MB ...] [--tokenizer SPEC ...] [--case NAME ...] [--plain]

    (default: sizes 1 5 20, tokenizer all-MiniLM-L6-v2, every case)

Writes the worst cases to a temporary folder, then runs each in a fresh Python process: parse ->
classify -> chunk with the doc type's profile, as the pipeline's chunk stage does (one
``CachedCounter`` per document; ``--plain`` chunks with the bare counter, as ``raychunk chunk`` does).
Prints one table, measured side by side in one run:

- ``base MB``: that process's peak RSS after its imports and the tokenizer load, before it reads the
  input; ``peak MB``: its peak RSS over parse, classify and chunk;
- ``x size``: (peak - base) / input size; ``parse x`` and ``chunk x``: the same for the peak during
  parse + classify, and during chunking (the peak started over after parsing, on Linux; it holds
  the parsed document).

The cases, each one line or one block:

- words: one line of words, no newline and no sentence end (one block, one sentence);
- log: ``2024-01-01T00:00:00 INFO ...`` log lines run together without newlines;
- markdown: a title, then one paragraph of sentences;
- csv: rows whose one big cell is just under the csv module's field limit (128 KiB; a bigger cell
  fails to parse, as an unclosed quote would).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CASES = ("words", "log", "markdown", "csv")
_CSV_CELL = 120_000  # characters: under csv's default field_size_limit (131072)


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 11))) for _ in range(3000)]


def _words(rng: random.Random, vocab: list[str], n_chars: int, *, sentences: bool = False) -> str:
    out: list[str] = []
    size = 0
    since = 0
    while size < n_chars:
        w = rng.choice(vocab)
        if sentences and since == 0:
            w = w.capitalize()
        since += 1
        if sentences and since >= rng.randint(8, 30):
            w += "."
            since = 0
        elif rng.random() < 0.05:
            w += ","
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def make_case(case: str, size_mb: float, folder: Path) -> Path:
    """Write the ``case`` input of about ``size_mb`` MB into ``folder``; deterministic."""
    rng = random.Random(f"{case}-{size_mb}")
    n = int(size_mb * 1_000_000)
    vocab = _vocabulary(rng)
    if case == "words":
        path, text = folder / f"words-{size_mb:g}mb.txt", _words(rng, vocab, n)
    elif case == "log":
        levels = ("INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR")
        parts: list[str] = []
        size = 0
        t = 0
        while size < n:
            t += rng.randint(1, 900)
            line = (
                f"2024-01-{1 + t // 86400 % 28:02d}T{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d} "
                f"{rng.choice(levels)} [worker-{rng.randint(1, 16)}] request id={rng.randint(1, 99999)} "
                f"path=/api/v1/{rng.choice(vocab)}/{rng.randint(1, 999)} status={rng.choice((200, 200, 404, 500))} "
                f"took={rng.randint(1, 3000)}ms"
            )
            parts.append(line)
            size += len(line) + 1
        path, text = folder / f"log-{size_mb:g}mb.log", " ".join(parts)
    elif case == "markdown":
        path = folder / f"markdown-{size_mb:g}mb.md"
        text = "# One long paragraph\n\n" + _words(rng, vocab, n, sentences=True) + "\n"
    elif case == "csv":
        rows = ["id,title,notes"]
        size = 0
        i = 0
        while size < n:
            i += 1
            cell = _words(rng, vocab, min(_CSV_CELL, max(1, n - size)))
            rows.append(f'{i},{rng.choice(vocab)},"{cell}"')
            size += len(rows[-1]) + 1
        path, text = folder / f"csv-{size_mb:g}mb.csv", "\n".join(rows) + "\n"
    else:
        raise ValueError(f"unknown case {case!r}: one of {', '.join(CASES)}")
    path.write_text(text, encoding="utf-8")
    return path


def _rss_peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # kB on Linux


def _reset_peak() -> bool:
    """Start the peak RSS over from the current RSS (Linux 4.0+), so that the chunking's own peak can
    be told from the parser's; False where that is not possible. What the parser freed is handed back
    first (glibc), so that it does not count as the chunker's."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child(path: str, tokenizer: str, plain: bool) -> dict:
    """In a fresh process: parse, classify and chunk one file; times and peak RSS."""
    from raychunk.chunking import chunk_document
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.parse import parse_document
    from raychunk.tokens import CachedCounter, load_counter

    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    inner = load_counter(tokenizer)
    inner.count("warm up the tokenizer")
    baseline = _rss_peak_mb()

    data = Path(path).read_bytes()
    t = time.perf_counter()
    parsed = parse_document(data, path, options=options)
    parse_s = time.perf_counter() - t
    del data
    cls = classify(parsed, types.thresholds, types.overrides)
    parse_peak = _rss_peak_mb()
    reset = _reset_peak()
    t = time.perf_counter()
    counter = inner if plain else CachedCounter(inner)
    chunks = chunk_document(parsed, types.profiles[cls.doc_type], counter, doc_type=cls.doc_type)
    chunk_s = time.perf_counter() - t
    chunk_peak = _rss_peak_mb() if reset else None
    return {
        "status": parsed.document.status,
        "reason": parsed.document.reason,
        "doc_type": cls.doc_type,
        "blocks": len(parsed.blocks),
        "chunks": len(chunks),
        "oversize": sum(c.oversize for c in chunks),
        "parse_s": parse_s,
        "chunk_s": chunk_s,
        "baseline_mb": baseline,
        "parse_peak_mb": parse_peak,
        "chunk_peak_mb": chunk_peak,
        "peak_mb": max(parse_peak, chunk_peak or _rss_peak_mb()),
    }


def measure(path: Path, tokenizer: str, plain: bool) -> dict:
    cmd = [sys.executable, __file__, "--child", str(path), "--tokenizer", tokenizer]
    proc = subprocess.run(cmd + (["--plain"] if plain else []), capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs="*", type=float, default=[1, 5, 20], help="input sizes in MB")
    ap.add_argument(
        "--tokenizer", action="append", help="counter spec (repeatable); default all-MiniLM-L6-v2"
    )
    ap.add_argument("--case", action="append", choices=CASES, help="worst case (repeatable); default all")
    ap.add_argument("--plain", action="store_true", help="the bare counter, as `raychunk chunk` uses")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--make", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    tokenizers = args.tokenizer or ["all-MiniLM-L6-v2"]
    if args.child:
        print(json.dumps(child(args.child, tokenizers[0], args.plain)))
        return 0
    if args.make:
        case, size, folder = args.make
        print(make_case(case, float(size), Path(folder)))
        return 0

    print(
        f"{'input':<18} {'tokenizer':<20} {'MB':>5} {'parse s':>7} {'chunk s':>7} {'peak MB':>7} "
        f"{'base MB':>7} {'x size':>6} {'parse x':>7} {'chunk x':>7}  result"
    )
    with tempfile.TemporaryDirectory(prefix="chunk-memory-") as tmp:
        for case in args.case or CASES:
            for size in args.sizes:
                # Written by another process: a child inherits its parent's peak RSS at fork.
                made = [sys.executable, __file__, "--make", case, str(size), tmp]
                path = Path(subprocess.run(made, capture_output=True, text=True, check=True).stdout.strip())
                mb = path.stat().st_size / 1e6
                for tok in tokenizers:
                    r = measure(path, tok, args.plain)
                    if "error" in r:
                        print(f"{path.name:<18} {tok:<20} {mb:5.1f}  failed: {r['error']}")
                        continue
                    base = r["baseline_mb"]
                    chunk_x = (
                        f"{(r['chunk_peak_mb'] - base) / mb:7.1f}" if r["chunk_peak_mb"] else f"{'-':>7}"
                    )
                    result = (
                        f"{r['doc_type']}, {r['blocks']} blocks, {r['chunks']} chunks"
                        if r["status"] == "ok"
                        else f"{r['status']}: {r['reason']}"
                    )
                    print(
                        f"{path.name:<18} {tok:<20} {mb:5.1f} {r['parse_s']:7.2f} {r['chunk_s']:7.2f} "
                        f"{r['peak_mb']:7.0f} {base:7.0f} {(r['peak_mb'] - base) / mb:6.1f} "
                        f"{(r['parse_peak_mb'] - base) / mb:7.1f} {chunk_x}  {result}",
                        flush=True,
                    )
                path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
