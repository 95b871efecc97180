"""Quotes copied as a viewer shows a PDF, located in raychunk's parsed text: how many are found, and
by which pass of ``evaluation.locate`` (exact, whitespace, words, words with noise skipped).

    python benchmarks/locate_quotes.py                 # the PDFs with labelled tables (pdf_tables.json)
    python benchmarks/locate_quotes.py FILE.pdf ...

The viewer is PyMuPDF's ``page.get_text()``. Quotes: three-line windows from each page's body (every
fifth line, the first and last three lines left out, where running headers and footers are), and
the last four lines of each page with the first four of the next (a quote across a page break, the
viewer's footer and header inside it). What is not found is text the parse drops (running headers
and footers) or reads in another order (multi-column layouts); the 'none' column counts both.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PDFS = ROOT.parent / "shared" / "corpus" / "pdf"
PASSES = ("exact", "whitespace", "words", "words, skipped", "none")


def quotes(pages: list[str]) -> list[tuple[str, str]]:
    out = []
    lines = [[x for x in p.split("\n") if x.strip()] for p in pages]
    for i, page in enumerate(lines):
        for j in range(3, max(3, len(page) - 6), 5):
            q = "\n".join(page[j : j + 3])
            if len(q.split()) >= 6:
                out.append(("body", q))
        if i + 1 < len(lines):
            q = "\n".join(page[-4:] + lines[i + 1][:4])
            if len(q.split()) >= 8:
                out.append(("page break", q))
    return out


def main(argv: list[str]) -> int:
    import fitz

    from raychunk.config import build_run_config, load_config
    from raychunk.evaluation.locate import TextWords, find_quote
    from raychunk.parse import parse_document

    names = argv or [
        t["file"] for t in json.loads((ROOT / "benchmarks" / "pdf_tables.json").read_text()) if t["tables"]
    ]
    cfg = build_run_config(load_config(), {})
    totals = {"body": Counter(), "page break": Counter()}
    seconds = 0.0
    print(f"{'document':44} {'kind':10} " + " ".join(f"{p:>14}" for p in PASSES))
    for name in names:
        path = Path(name) if Path(name).exists() else PDFS / name
        if not path.exists():
            print(f"{name}: not found", file=sys.stderr)
            continue
        text = parse_document(path.read_bytes(), str(path), options=cfg.parse).text or ""
        with fitz.open(path) as doc:
            pages = [p.get_text() for p in doc]
        t = time.perf_counter()
        words = TextWords(text)
        got = {"body": Counter(), "page break": Counter()}
        for kind, q in quotes(pages):
            m = find_quote(text, q, words)
            got[kind]["none" if m is None else ("words, skipped" if m.skipped else m.how)] += 1
        seconds += time.perf_counter() - t
        for kind, c in got.items():
            if c:
                print(f"{path.name[:44]:44} {kind:10} " + " ".join(f"{c[p]:>14,}" for p in PASSES))
                totals[kind].update(c)
    for kind, c in totals.items():
        n = sum(c.values())
        found = n - c["none"]
        print(
            f"{'all':44} {kind:10} " + " ".join(f"{c[p]:>14,}" for p in PASSES) + f"   found {found:,}/{n:,}"
        )
    print(f"locating: {seconds:.1f} s for {sum(sum(c.values()) for c in totals.values()):,} quotes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
