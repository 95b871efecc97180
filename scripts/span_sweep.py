"""Sweep the span check over documents and chunking settings, in this process: every chunk of every
setting must hold its body tightly (``raychunk.evaluation.spans.check_chunk``, as ``raychunk eval``
checks it before scoring).

    python scripts/span_sweep.py --labels ../wt-corpus-labels/evals/corpus.jsonl   # the labelled set
    python scripts/span_sweep.py ../shared/corpus/html --strategies structure,fixed --sizes 256 --overlaps 0
    python scripts/span_sweep.py FILE --strategies fixed --sizes 256 --overlaps 0 --show 3

Each file is parsed once (as ``raychunk chunk`` parses it, without the sandbox) and classified, then
chunked under every setting: strategy (``profile`` is the doc type's own, as ``raychunk chunk``
without ``--strategy``) x ``max_tokens`` x overlap, with one ``CachedCounter`` per document so the
settings share its tokenization. One line per failing chunk (source, setting, chunk index, span,
why), a line per strategy, a total, and exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"


def _files(inputs: list[str], labels: str | None, corpus: Path) -> list[Path]:
    """The files named (folders: their files, sorted), then the labelled set's sources."""
    out: list[Path] = []
    for name in inputs:
        p = Path(name)
        out.extend(sorted(f for f in p.iterdir() if f.is_file()) if p.is_dir() else [p])
    if labels:
        seen: dict[str, None] = {}
        with open(labels, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    seen.setdefault(json.loads(line)["source"], None)
        out.extend(corpus / s for s in seen)
    return out


def _numbers(text: str, kind: type) -> list:
    return [kind(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="*", help="files or folders")
    ap.add_argument("--labels", help="a labelled set (JSONL with a source per line): its documents")
    ap.add_argument("--corpus", default=str(CORPUS), help="where the labelled set's sources are")
    ap.add_argument("--strategies", default="structure,fixed,profile")
    ap.add_argument("--sizes", default="128,256,512")
    ap.add_argument("--overlaps", default="0,0.2")
    ap.add_argument("--tokenizer", default=None, help="default: the embedder's (all-MiniLM-L6-v2)")
    ap.add_argument("--show", type=int, default=0, help="print the first N characters of a failing span")
    args = ap.parse_args(argv)

    from raychunk.chunking import chunk_document
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.evaluation.spans import check_chunk
    from raychunk.parse import parse_document
    from raychunk.tokens import DEFAULT_TOKENIZER, CachedCounter, load_counter

    files = _files(args.inputs, args.labels, Path(args.corpus))
    if not files:
        ap.error("no documents: name files or folders, or --labels")
    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    counter = load_counter(args.tokenizer or DEFAULT_TOKENIZER)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    settings = [
        (s, n, o)
        for s in strategies
        for n in _numbers(args.sizes, int)
        for o in _numbers(args.overlaps, float)
    ]
    chunks: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    skipped = []
    t0 = time.perf_counter()
    for path in files:
        parsed = parse_document(path.read_bytes(), str(path), options=options)
        if parsed.document.status != "ok":
            skipped.append(f"{path}: {parsed.document.status} ({parsed.document.reason})")
            continue
        kind = classify(parsed, types.thresholds, types.overrides).doc_type
        text = parsed.text
        cached = CachedCounter(counter)
        for strategy, size, overlap in settings:
            changes = {"max_tokens": size, "overlap": overlap}
            if strategy != "profile":
                changes["strategy"] = strategy
            profile = dataclasses.replace(types.profiles[kind], **changes)
            label = f"{strategy}/{size}/o{overlap:g}"
            for c in chunk_document(parsed, profile, cached, doc_type=kind):
                chunks[strategy] += 1
                why = check_chunk(text, c.to_dict())
                if why is None:
                    continue
                bad[strategy] += 1
                print(
                    f"FAIL {path} {label} ({kind}) chunk {c.chunk_index} [{c.char_start}, {c.char_end}): {why}"
                )
                if args.show:
                    print(f"    span: {text[c.char_start : c.char_end][: args.show]!r}")
    for line in skipped:
        print(f"skipped {line}")
    for s in strategies:
        print(f"{s:<10} {chunks[s]:>8,} chunks checked, {bad[s]:>5,} failed")
    total, failed = sum(chunks.values()), sum(bad.values())
    print(
        f"{len(files) - len(skipped)} documents x {len(settings)} settings: {total:,} chunks, {failed:,} failed "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
