"""PDF parsing speed and table precision/recall, the old table finder against the new, in one run.

    python benchmarks/pdf_parse.py [--corpus ../shared/corpus/pdf] [--repeat 3] [--skip-old]

On one core, file by file and interleaved (so load on the machine hits every method alike), with
the median of ``--repeat`` runs per file and method:

- ``get_text()`` and ``get_text("dict")``: pymupdf's floor, for the ratio;
- ``new``: ``parse_document`` as shipped, OCR included (scanned pages, and pages whose text layer
  is garbage or a poor earlier OCR, are read by Tesseract: most of its time);
- ``layer``: the same with OCR off (``ocr: never``): the parser over the text layers alone, the
  figure comparable with the rounds before OCR;
- ``old``: the parse without tables plus the old way of finding them: the old candidate test
  (``_old_candidate``, copied from the parser before) and pymupdf's ``find_tables()`` on every
  candidate page, in process, with no time budget. It leaves out the old child process start-up, so
  it is if anything faster than the old parser was.

Tables are scored against ``benchmarks/pdf_tables.json``: for each file, the tables a reader
counts as real (page, rows x cols, one cell's text) and pages to ignore (forms, tables of contents,
boxed prose: neither right nor wrong there). A found table matches an expected one on the same page
when its column count is within one and the cell's text is in it. Tables continued on the next
page are merged first, as the parser merges them. Tables that also carry ``cells`` (the table as read
off the page image, with ``header_rows`` and merged cells as ``spans``) are scored cell by cell by
``benchmarks/fidelity.py`` (section ``pdf-real``, in ``fidelity_pdf.py``).
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import pymupdf
from summary import record

HERE = Path(__file__).resolve().parent
LABELS = HERE / "pdf_tables.json"
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk, not an installed one (as the other benchmarks)

from raychunk.parse import ParseOptions, parse_document  # noqa: E402
from raychunk.parse import pdf as pdf_parser  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "pdf"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-old", action="store_true", help="leave out the (slow) old table finder")
    args = ap.parse_args()
    pymupdf.TOOLS.mupdf_display_errors(False)

    files = sorted(Path(args.corpus).glob("*.pdf"))
    extra = [ROOT / "samples" / "acme-sla.pdf"]
    methods = {"text": _text, "dict": _dict, "new": _new, "layer": _layer}
    if not args.skip_old:
        methods["old"] = _old
    seconds: dict[str, dict[str, list[float]]] = {m: {} for m in methods}
    tables: dict[str, dict[str, list]] = {m: {} for m in ("new", "old") if m in methods}
    pages: dict[str, int] = {}
    for path in files + extra:
        data = path.read_bytes()
        name = path.name if path.parent == Path(args.corpus) else f"{path.parent.name}/{path.name}"
        for _ in range(args.repeat):
            for m, run in methods.items():
                t = time.process_time()
                out = run(data, name)
                seconds[m].setdefault(name, []).append(time.process_time() - t)
                if m in tables:
                    tables[m][name] = out
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            pages[name] = doc.page_count

    corpus = [n for n in pages if "/" not in n]
    n_pages = sum(pages[n] for n in corpus)
    print(f"{len(corpus)} files, {n_pages} pages in {args.corpus}; median of {args.repeat} (CPU seconds)")
    total = {m: sum(statistics.median(seconds[m][n]) for n in corpus) for m in methods}
    for m in methods:
        per100 = {n: 100 * statistics.median(seconds[m][n]) / max(1, pages[n]) for n in corpus}
        worst = max(per100, key=per100.get)
        print(
            f"{m:>5}: {n_pages / total[m]:8.1f} pages/s  {total[m]:7.2f} s  "
            f"x{total['text'] / total[m]:.3f} of get_text(), x{total['dict'] / total[m]:.3f} of get_text('dict')  "
            f"slowest {per100[worst]:.2f} s/100 pages ({worst})"
        )
        if m == "layer":
            rate = n_pages / total[m]
            record("PDF parse, pages/s on one core", rate, target=">= 150", before="6.1", met=rate >= 150)
            record(
                "PDF parse, slowest file s/100 pages",
                per100[worst],
                target="<= 5",
                before="~15",
                met=per100[worst] <= 5,
            )
    labels = json.loads(LABELS.read_text())
    for m, found in tables.items():
        tp, n_found, n_expected, missed, wrong = _score(labels, found)
        print(
            f"{m:>5}: tables precision {tp}/{n_found} = {tp / max(1, n_found):.3f}, "
            f"recall {tp}/{n_expected} = {tp / max(1, n_expected):.3f}"
        )
        if m == "new":
            record("PDF tables, precision", tp / max(1, n_found), target=">= old", before="0.89 (old finder)")
            record("PDF tables, recall", tp / max(1, n_expected), target=">= old", before="0.64 (old finder)")
        for what, items in (("missed", missed), ("wrong", wrong)):
            for item in items:
                print(f"        {what}: {item}")


# ---------------------------------------------------------------------------------------------------
# methods: each returns the tables it found as (first page, rows) pairs, or None


def _text(data: bytes, name: str):
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        for page in doc:
            page.get_text()


def _dict(data: bytes, name: str):
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        for page in doc:
            page.get_text("dict")


def _new(data: bytes, name: str) -> list:
    doc = parse_document(data, name)
    return [(b.pages[0], b.rows) for b in doc.blocks if b.kind == "table"]


def _layer(data: bytes, name: str) -> None:
    parse_document(data, name, options=ParseOptions(ocr="never"))


def _old(data: bytes, name: str) -> list:
    parse_document(data, name, options=ParseOptions(pdf_tables="never"))
    found = []
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        for i in range(doc.page_count):
            try:
                page = doc[i]
                p = pdf_parser._read_page(page, page.get_textpage(flags=64 | 2), i + 1)
                if not p.chars or not _old_candidate(page, p):
                    continue
                for t in page.find_tables().tables:
                    rows = _clean([[c or "" for c in row] for row in t.extract()])
                    if rows:
                        found.append((i + 1, rows))
            except Exception:
                continue
    return _merged(found)


def _clean(rows: list[list[str]]) -> tuple | None:
    """The old parser's filter: no empty rows or columns, 2+ rows, 2+ columns, 3+ filled cells."""
    rows = [[" ".join(c.split()) for c in r] for r in rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    keep = [j for j in range(max(map(len, rows))) if any(j < len(r) and r[j] for r in rows)]
    rows = [[r[j] if j < len(r) else "" for j in keep] for r in rows]
    if len(rows) < 2 or len(keep) < 2 or sum(1 for r in rows for c in r if c) < 3:
        return None
    return tuple(map(tuple, rows))


def _merged(found: list) -> list:
    out: list = []
    for page, rows in found:
        if out and out[-1][0] + out[-1][2] == page and len(out[-1][1][0]) == len(rows[0]):
            out[-1] = (out[-1][0], out[-1][1] + rows, out[-1][2] + 1)
        else:
            out.append((page, rows, 1))
    return [(page, rows) for page, rows, _ in out]


def _old_candidate(page, p) -> bool:
    """The candidate test of the parser before (``_looks_tabular``), unchanged."""
    rows: dict[int, list[float]] = {}
    for item in p.items:
        for ln in item.lines:
            rows.setdefault(round((ln.y0 + ln.y1) / 6), []).append(ln.x0)
    multi = sorted(k * 3 for k, xs in rows.items() if len(xs) >= 2)
    if len(multi) < 2:
        return False
    starts = Counter(round(x / 4) for xs in rows.values() if len(xs) >= 3 for x in set(xs))
    if sum(1 for c in starts.values() if c >= 4) >= 3:
        return True
    try:
        drawings = page.get_cdrawings()
    except Exception:
        return False
    top, bottom = 0.06 * p.height, 0.94 * p.height
    horizontal: dict[int, list[float]] = {}

    def rule(y: float, x0: float, x1: float) -> None:
        r = horizontal.setdefault(round(y / 2), [x0, x1, 0.0])
        r[0], r[1], r[2] = min(r[0], x0), max(r[1], x1), r[2] + x1 - x0

    for path in drawings:
        boxes = []
        for it in path.get("items", ()):
            op = it[0]
            if op == "l":
                (xa, ya), (xb, yb) = it[1], it[2]
                if abs(xa - xb) > 1 and abs(ya - yb) > 1:
                    break
                boxes.append((min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)))
            elif op == "re":
                boxes.append(it[1])
            elif op == "qu":
                xs = [q[0] for q in it[1]]
                ys = [q[1] for q in it[1]]
                boxes.append((min(xs), min(ys), max(xs), max(ys)))
            else:
                break
        else:
            for x0, y0, x1, y1 in boxes:
                if y1 < top or y0 > bottom:
                    continue
                rule(y0, x0, x1)
                if y1 - y0 > 3:
                    rule(y1, x0, x1)
    rules = sorted((2 * k, r[0], r[1]) for k, r in horizontal.items() if r[2] >= 40)[:300]
    for _, x0, x1 in rules:
        stack = [ry for ry, a, b in rules if min(x1, b) - max(x0, a) >= 0.5 * min(x1 - x0, b - a)]
        if (
            len(stack) >= 3
            and bisect.bisect_right(multi, stack[-1]) - bisect.bisect_left(multi, stack[0]) >= 2
        ):
            return True
    return False


# ---------------------------------------------------------------------------------------------------
# scoring


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s).lower()


def _score(labels: list[dict], found: dict[str, list]):
    tp = n_found = n_expected = 0
    missed, wrong = [], []
    for entry in labels:
        name = entry["file"]
        if name not in found:
            continue
        lo, hi = entry.get("pages", [1, 10**9])
        ignore = set(entry.get("ignore_pages", ()))
        expected = list(entry["tables"])
        n_expected += len(expected)
        for page, rows in found[name]:
            if page in ignore or not lo <= page <= hi:
                continue
            n_found += 1
            text = _norm(" ".join(c for r in rows for c in r))
            hit = next(
                (
                    e
                    for e in expected
                    if e["page"] == page and abs(e["cols"] - len(rows[0])) <= 1 and _norm(e["cell"]) in text
                ),
                None,
            )
            if hit is None:
                wrong.append(f"{name} p{page} {len(rows)}x{len(rows[0])} {list(rows[0])[:3]}")
            else:
                expected.remove(hit)
                tp += 1
        missed += [f"{name} p{e['page']} {e['rows']}x{e['cols']} {e['cell']!r}" for e in expected]
    return tp, n_found, n_expected, missed, wrong


if __name__ == "__main__":
    main()
