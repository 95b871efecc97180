"""Fidelity, OCR: a scanned copy of a text PDF gives the words of the original.

A text PDF (generated here, or a page of ``../shared/corpus/pdf``) is rendered at 200 dpi into an
image-only PDF (``scan_pdf``): the same pages with no text layer, so the truth is the original's
text. Both go through ``parse_document`` as the job parses them and the scan is chunked; figures:

- ``words``: the original's words (as its own parse reads them) found in the scan's chunk texts,
  counted as a multiset, punctuation at word edges aside (``words``), per format: ``generated``
  (documents drawn here), ``corpus`` (first pages of English text PDFs of the shared corpus);
- ``headings``: the original's headings that the scan's parse also makes headings, same text;
- ``pages marked``: scanned pages listed in the documents row's ``ocr_pages``.

The engine comparison (Tesseract against RapidOCR, speed and install size) is
``benchmarks/ocr_engines.py``; this section measures what the job does with its default engine.
"""

from __future__ import annotations

import os
import random
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fidelity import Section, body, parse_and_chunk

# ../shared/corpus beside the checkout, as the other fidelity benchmarks find it
CORPUS = Path(os.environ.get("RAYCHUNK_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
# English text PDFs of the shared corpus whose first page is read in the full run (no scans, no
# CJK, no rotated or outline-only pages: what a 200-dpi scan of an English page holds).
CORPUS_PAGES = (
    "layout-parser-paper-fast.pdf",
    "list-item-example.pdf",
    "sample-files-multicolumn.pdf",
    "google-doc-document.pdf",
    "REPAIR-2022-INV-001_multipage.pdf",
    "test_3848.pdf",
)

_EDGE = "\"'.,;:!?()[]{}<>«»“”‘’„*•·…"
# One spelling for what a page shows the same: dashes, typographic apostrophes, ligatures.
_FOLD = str.maketrans(
    {"‐": "-", "‑": "-", "–": "-", "—": "-", "−": "-", "’": "'", "‘": "'", "ﬁ": "fi", "ﬂ": "fl"}
)


def words(text: str) -> list[str]:
    """The words of ``text`` as compared: NFKC, dashes as ``-``, ``’`` as ``'``, punctuation at the edges stripped,
    case kept; a word holds a letter or a digit (a bullet, an emoji or a math sign is none).

    >>> words("“Hello,” she said — twice. ● ∼ 2")
    ['Hello', 'she', 'said', 'twice', '2']
    """
    out = []
    for tok in unicodedata.normalize("NFKC", text).translate(_FOLD).split():
        t = tok.strip(_EDGE + "-")
        if t and any(ch.isalnum() for ch in t):
            out.append(t)
    return out


def word_recall(truth: Iterable[str], got: Iterable[str]) -> tuple[int, int]:
    """``(found, total)``: truth words present in ``got``, each counted as often as both hold it."""
    a, b = Counter(truth), Counter(got)
    return sum((a & b).values()), sum(a.values())


def scan_pdf(data: bytes, *, dpi: int = 200, pages: Iterable[int] | None = None) -> bytes:
    """``data``'s pages (0-based ``pages``, default all) rendered at ``dpi`` into an image-only PDF
    with the same page sizes: a scan whose truth is the original's text layer."""
    import pymupdf

    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    for i in pages if pages is not None else range(src.page_count):
        page = src[i]
        pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
        new = out.new_page(width=page.rect.width, height=page.rect.height)
        new.insert_image(new.rect, pixmap=pix)
    data = out.tobytes(garbage=3, deflate=True)
    src.close()
    out.close()
    return data


_WORDS = [
    "the",
    "pressure",
    "valve",
    "must",
    "be",
    "checked",
    "before",
    "every",
    "shift",
    "and",
    "logged",
    "in",
    "the",
    "maintenance",
    "record",
    "operators",
    "confirm",
    "that",
    "the",
    "pump",
    "housing",
    "is",
    "sealed",
    "the",
    "flow",
    "meter",
    "reads",
    "within",
    "tolerance",
    "and",
    "that",
    "no",
    "warning",
    "light",
    "remains",
    "on",
    "after",
    "the",
    "system",
    "starts",
    "replace",
    "filters",
    "every",
    "ninety",
    "days",
    "report",
    "leaks",
    "to",
    "the",
    "site",
    "supervisor",
    "at",
    "once",
    "calibration",
    "uses",
    "the",
    "reference",
    "gauge",
    "in",
    "cabinet",
]


def text_pdf(seed: int, pages: int = 1) -> tuple[bytes, list[str]]:
    """A generated manual: per page a heading (16 pt bold), paragraphs (11 pt), a numbered list,
    and a page number in the footer. Returns the PDF and its headings."""
    import pymupdf

    rng = random.Random(seed)
    doc = pymupdf.open()
    headings = []
    for n in range(pages):
        page = doc.new_page(width=612, height=792)
        title = f"{n + 1}. {' '.join(rng.sample(_WORDS, 3)).title()}"
        headings.append(title)
        page.insert_text((72, 90), title, fontsize=16, fontname="hebo")
        y = 120
        for _ in range(3):
            para = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(40, 70)))
            para = para[0].upper() + para[1:] + "."
            rect = pymupdf.Rect(72, y, 540, y + 140)
            left = page.insert_textbox(rect, para, fontsize=11, fontname="helv")
            y += 140 - left + 14
        for k in range(3):
            item = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 12)))
            page.insert_text((90, y), f"{k + 1}. {item.capitalize()}.", fontsize=11, fontname="helv")
            y += 18
        page.insert_text((300, 760), str(n + 1), fontsize=9, fontname="helv")
    data = doc.tobytes()
    doc.close()
    return data, headings


def score_scan(section: Section, case: str, fmt: str, original: bytes, scan: bytes) -> float:
    """Scores one scan against its original; returns its word recall."""
    truth, _ = parse_and_chunk(original, f"{case}.pdf")
    parsed, chunks = parse_and_chunk(scan, f"{case}-scan.pdf")
    ok, total = word_recall(words(truth.text), (w for c in chunks for w in words(body(c))))
    section.add("words", fmt, ok, total)
    heads = [b.text for b in truth.blocks if b.kind == "heading"]
    got = Counter(b.text for b in parsed.blocks if b.kind == "heading")
    section.add("headings", fmt, sum(1 for h in heads if got[h] > 0), len(heads))
    pages = parsed.document.pages
    section.add("pages marked", fmt, len(parsed.document.ocr_pages), pages)
    if total and ok < 0.95 * total:
        section.miss(f"{case}: {ok}/{total} words ({parsed.document.status}: {parsed.document.reason})")
    return ok / total if total else 1.0


def ocr(fast: bool) -> Section:
    s = Section("ocr")
    t = time.perf_counter()
    for seed in range(1 if fast else 4):
        original, _ = text_pdf(seed, pages=1 if fast else 2)
        score_scan(s, f"generated-{seed}", "generated", original, scan_pdf(original))
        s.cases += 1
    if not fast:
        for name in CORPUS_PAGES:
            path = CORPUS / "pdf" / name
            if not path.is_file():
                continue
            import pymupdf

            with pymupdf.open(path) as d:
                first = pymupdf.open()
                first.insert_pdf(d, from_page=0, to_page=0)
                original = first.tobytes()
            score_scan(s, re.sub(r"\W+", "-", path.stem), "corpus", original, scan_pdf(original))
            s.cases += 1
    s.seconds = time.perf_counter() - t
    return s


SECTIONS = {"ocr": ocr}
