"""The ``raychunk`` command line. Argument parsing and printing only; the work lives in the stages."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

SAMPLE_CORPUS = Path(__file__).resolve().parent.parent / "samples"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="raychunk", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log warnings from the parsers")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="print the block stream a document parses into")
    p.add_argument("inputs", nargs="*", help="files, folders or globs (default: the shipped sample corpus)")
    p.add_argument("--json", action="store_true", help="one JSON object per line: documents and blocks")
    p.add_argument("--width", type=int, default=60, help="characters of block text to show (default 60)")
    p.add_argument("--pdf-tables", choices=("auto", "always", "never"), default="auto",
                   help="when to run pymupdf's table finder (default auto: pages that look tabular)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed to parse one file")
    p.set_defaults(func=cmd_parse)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(message)s")
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError) as e:
        print(f"raychunk: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


def cmd_parse(args) -> int:
    from raychunk.parse import ParseOptions, iter_input_files, parse_path

    options = ParseOptions(pdf_tables=args.pdf_tables, timeout_s=args.timeout)
    inputs = args.inputs or [SAMPLE_CORPUS]
    statuses: Counter[str] = Counter()
    n_blocks = 0
    t0 = time.perf_counter()
    out = sys.stdout
    for path in iter_input_files(inputs):
        t = time.perf_counter()
        parsed = parse_path(path, options=options)
        elapsed = time.perf_counter() - t
        doc = parsed.document
        statuses[doc.status] += 1
        n_blocks += len(parsed.blocks)
        if args.json:
            out.write(json.dumps({"type": "document", **doc.to_dict(), "blocks": len(parsed.blocks),
                                  "seconds": round(elapsed, 3)}, ensure_ascii=False) + "\n")
            for i, b in enumerate(parsed.blocks):
                out.write(json.dumps({"type": "block", "doc_id": doc.doc_id, "index": i, **b.to_dict()},
                                     ensure_ascii=False) + "\n")
            continue
        _print_document(out, parsed, elapsed, args.width)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    print(f"parsed {sum(statuses.values())} files into {n_blocks} blocks in {time.perf_counter() - t0:.1f} s: "
          f"{summary}", file=sys.stderr)
    return 0


def _print_document(out, parsed, elapsed: float, width: int) -> None:
    doc = parsed.document
    kinds = Counter(b.kind for b in parsed.blocks)
    facts = [doc.format, doc.status, f"{len(parsed.blocks)} blocks"]
    if doc.pages:
        facts.append(f"{doc.pages} pages")
    facts.append(f"{elapsed:.2f} s")
    out.write(f"\n== {doc.source}  [{' | '.join(facts)}]\n")
    if doc.title:
        out.write(f"   title: {doc.title}\n")
    if doc.reason:
        out.write(f"   reason: {doc.reason}\n")
    if kinds:
        out.write("   kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + "\n")
    for b in parsed.blocks:
        if b.kind == "heading":
            tag = f"h{b.level}"
        elif b.kind == "list_item":
            tag = f"li{b.level}"
        elif b.kind == "table":
            tag = f"{len(b.rows)}x{max((len(r) for r in b.rows), default=0)} hdr{b.header_rows}"
        elif b.kind == "code":
            tag = b.language or ""
        else:
            tag = ""
        page = "p" + "-".join(str(p) for p in (b.pages[0], b.pages[-1]) if True) if b.pages else ""
        if b.pages and b.pages[0] == b.pages[-1]:
            page = f"p{b.pages[0]}"
        path = " > ".join(b.heading_path)
        text = " ".join(b.text.split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        indent = "  " * b.level if b.kind == "list_item" else ""
        out.write(f"   {b.kind:<10} {tag:<11} {page:<6} {b.char_start:>7}-{b.char_end:<7} "
                  f"{_clip(path, 40):<40} {indent}{text}\n")


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else "…" + s[-(n - 1):]


if __name__ == "__main__":
    raise SystemExit(main())
