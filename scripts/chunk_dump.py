"""A quick dump of what the parse and the chunk core make of a set of documents, in this process (no
Ray, no sandbox), and its SHA-256: a speed change to the chunk core or the markdown parse must leave
it byte-identical (``scripts/golden_dump.py`` is the whole job's, minutes long; this is seconds).

    python scripts/chunk_dump.py                      # corpus md/html/txt + 200 generated tiny files
    python scripts/chunk_dump.py --out dump.jsonl     # also write the dump, to diff two of them
    python scripts/chunk_dump.py --tokenizers tiktoken:cl100k_base --only md

For each document: its blocks (kind, text, span, heading path, rows, marker, ...), then its chunks
(``Chunk.to_dict``) under the doc type's own profile and under structure at 256 tokens, and the
``chunk_stats(with_ids=True)`` of the latter, for each tokenizer (MiniLM and cl100k by default).
Prints one SHA-256 per tokenizer and folder, and one of them all.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("RAYCHUNK_CORPUS", ROOT.parent / "shared" / "corpus"))  # beside the checkout

_WORDS = [
    "chunk",
    "token",
    "span",
    "header",
    "table",
    "block",
    "parse",
    "index",
    "vector",
    "query",
    "cache",
    "shard",
    "row",
    "column",
    "value",
    "embed",
    "model",
    "batch",
    "worker",
    "actor",
    "stage",
    "queue",
    "file",
    "path",
    "byte",
    "line",
    "word",
    "naïve",
    "café",
    "Straße",
    "число",
    "文档",
    "数据",
    "データ",
    "दस्तावेज़",
    "e.g.",
    "i.e.",
    "v2.1",
    "3.14",
    "1,000",
    "x86_64",
    "foo_bar",
    "fooBar",
    "don't",
    "it's",
]


def _sentence(rng: random.Random) -> str:
    s = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 30)))
    return s[0].upper() + s[1:] + rng.choice([".", "!", "?", ":", ""])


def tiny_files(n: int, seed: int = 28) -> list[tuple[str, bytes]]:
    """``n`` small markdown files of varied shape: headings at several levels (some without text
    under them), paragraphs, nested and numbered lists, fenced and indented code, pipe tables, a
    long line, quotes, link definitions, HTML comments, repeated and empty files."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lines: list[str] = []
        if rng.random() < 0.7:
            lines += [f"# {_sentence(rng)[:40]}", ""]
        for _ in range(rng.randint(0, 6)):
            r = rng.random()
            if r < 0.2:
                lines += [f"{'#' * rng.randint(2, 4)} {_sentence(rng)[:50]}", ""]
            elif r < 0.45:
                lines += [" ".join(_sentence(rng) for _ in range(rng.randint(1, 8))), ""]
            elif r < 0.55:
                for k in range(rng.randint(1, 6)):
                    indent = "  " * rng.randint(0, 2) if k else ""
                    marker = rng.choice(["-", "*", f"{k + 1}.", "- [x]"])
                    lines.append(f"{indent}{marker} {_sentence(rng)}")
                lines.append("")
            elif r < 0.65:
                lang = rng.choice(["", "python", "sh"])
                lines += [f"```{lang}"] + [
                    f"x_{k} = f({k})  # {rng.choice(_WORDS)}" for k in range(rng.randint(1, 12))
                ]
                lines += ["```", ""]
            elif r < 0.75:
                cols = rng.randint(2, 4)
                lines.append("| " + " | ".join(rng.choice(_WORDS) for _ in range(cols)) + " |")
                lines.append("|" + "---|" * cols)
                for _ in range(rng.randint(1, 20)):
                    lines.append(
                        "| " + " | ".join(_sentence(rng)[: rng.randint(1, 60)] for _ in range(cols)) + " |"
                    )
                lines.append("")
            elif r < 0.8:
                lines += ["> " + _sentence(rng), "> " + _sentence(rng), ""]
            elif r < 0.85:
                lines += ["    indented code " + rng.choice(_WORDS), "    more", ""]
            elif r < 0.9:
                lines += [f"[{rng.choice(_WORDS)}]: https://example.com/{i}", "<!-- a comment -->", ""]
            elif r < 0.95:
                lines += [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(200, 600))), ""]
            else:
                lines += ["Term", ": " + _sentence(rng), "", "***", ""]
        text = "\n".join(lines)
        if i % 50 == 7 and out:
            text = out[-1][1].decode()  # an identical file
        out.append((f"tiny/{i:03d}.md", text.encode()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--only", nargs="*", default=["md", "html", "txt", "tiny"])
    ap.add_argument("--tiny", type=int, default=200)
    ap.add_argument("--tokenizers", nargs="*", default=["all-MiniLM-L6-v2", "tiktoken:cl100k_base"])
    ap.add_argument("--out", help="write the dump here (JSON lines)")
    args = ap.parse_args(argv)

    from raychunk.chunking import Profile, chunk_document, chunk_stats
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.parse import parse_document
    from raychunk.tokens import CachedCounter, load_counter

    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    fixed = Profile(strategy="structure", max_tokens=256)
    groups: dict[str, list[tuple[str, bytes]]] = {}
    for folder in args.only:
        if folder == "tiny":
            groups[folder] = tiny_files(args.tiny)
        else:
            paths = sorted(p for p in (Path(args.corpus) / folder).iterdir() if p.is_file())
            groups[folder] = [(f"{folder}/{p.name}", p.read_bytes()) for p in paths]

    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    total = hashlib.sha256()
    for folder, files in groups.items():
        parsed = []
        h = hashlib.sha256()
        for name, data in files:
            p = parse_document(data, name, options=options)
            c = classify(p, types.thresholds, types.overrides)
            parsed.append((p, c.doc_type))
            line = json.dumps(
                {
                    "source": name,
                    "status": p.document.status,
                    "doc_type": c.doc_type,
                    "blocks": [b.to_dict() for b in p.blocks],
                },
                sort_keys=True,
                ensure_ascii=False,
            )
            h.update(line.encode() + b"\n")
            if out:
                out.write(line + "\n")
        print(f"{folder:<6} parse            {h.hexdigest()}  ({len(files)} files)")
        total.update(h.digest())
        for spec in args.tokenizers:
            counter = load_counter(spec)
            counter.forget()
            h = hashlib.sha256()
            n = 0
            for p, doc_type in parsed:
                cached = CachedCounter(counter)
                rows = [
                    c.to_dict()
                    for c in chunk_document(p, types.profiles[doc_type], cached, doc_type=doc_type)
                ]
                rows += [c.to_dict() for c in chunk_document(p, fixed, cached, doc_type=doc_type)]
                stats = chunk_stats(p, fixed, CachedCounter(counter), doc_type=doc_type, with_ids=True)
                rows.append({"stats": [dataclasses.astuple(s) for s in stats]})
                n += len(rows)
                for r in rows:
                    line = json.dumps(r, sort_keys=True, ensure_ascii=False, default=list)
                    h.update(line.encode() + b"\n")
                    if out:
                        out.write(line + "\n")
            print(f"{folder:<6} {spec:<22} {h.hexdigest()}  ({n} rows)")
            total.update(h.digest())
    if out:
        out.close()
    print(f"all    {total.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
