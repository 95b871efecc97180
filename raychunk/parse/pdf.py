"""The PDF parser: pymupdf text in reading order, as headings, paragraphs, list items and tables.

``parse_pdf(data, base, options)`` returns a ParsedDocument whose ``text`` is the extracted text
(block texts joined by blank lines) and whose blocks satisfy ``text[b.char_start:b.char_end] ==
b.text``. Every block carries its 1-based page number(s); a ``page_break`` block with an empty span
opens each page after the first.

The steps: read each page's text lines in visual coordinates (so rotated pages read upright), drop
running headers, footers and page numbers, find tables (pymupdf's finder, in a child process with a
time limit, only on pages whose drawings look like a grid), order blocks (two-column aware), split
blocks into paragraphs, list items and heading candidates, decide headings (from the outline when
its titles are found on their pages, else from font size and weight), and emit.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace

from raychunk.document import Block, Document, ParsedDocument
from raychunk.parse._common import BlockStream, TextAssembler, clean_text, finish
from raychunk.render import render_table, squash

__all__ = ["parse_pdf"]

log = logging.getLogger(__name__)

_MARGIN = 0.08  # top/bottom share of the page where running headers, footers and page numbers live
_BOLD_FLAG = 16  # pymupdf span flag: bold
_HEADING_RATIO = 1.15  # a heading is at least this much larger than the body text
_MAX_HEADING_WORDS = 15

_BULLET_GLYPHS = "•◦▪▫●○■□►▶▸➢➤✓✔∙‣⁃-–*"
_GLYPH_BULLET = re.compile(rf"^([{re.escape(_BULLET_GLYPHS)}]|[\uf000-\uf0ff])\s*(?=\S)")
_ENUM_BULLET = re.compile(
    r"^(?:\(?\d{1,3}[.)]|\(?[a-z][)]|\([a-z]\)|\(?[ivx]{1,4}\))\s+(?=\S)", re.IGNORECASE
)
_LONE_BULLET = re.compile(rf"^(?:[{re.escape(_BULLET_GLYPHS)}]|[\uf000-\uf0ff])$")
_PAGE_NUMBER = re.compile(
    r"^(?:page|p\.|pg\.?|seite|página|pagina)?\s*[-–—(\[]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—)\]]?"
    r"(?:\s*(?:of|/|von|de|sur)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_CAPTION = re.compile(r"^(?:fig(?:ure)?|tab(?:le)?|abb(?:ildung)?|tableau|chart|exhibit|plate)\.?\s*\d", re.I)
_SECTION_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|section|part|appendix|annex|kapitel)\s+)?[\dIVX]+(?:\.\d+)*\.?\s+", re.I
)
_DIGITS = re.compile(r"\d+")
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_CJK_WRAP = re.compile(
    r"(?<=[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef])\n(?=[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef])"
)
_BAD_TITLE = re.compile(
    r"^(?:untitled|document\d*|title|slide \d+|powerpoint presentation|microsoft (?:word|powerpoint|excel)\b.*)$"
    r"|\.(?:pdf|docx?|pptx?|xlsx?|tex|dvi|indd|ps|qxd|rtf|txt|html?|cdr|ai|jpe?g|png|tiff?|gif|bmp)$"
    r"|^[a-z]:\\|^/",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------------------------------
# records


@dataclass(slots=True)
class _Line:
    """One text line in visual (rotation applied) page coordinates."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float  # the size most of its characters have
    chars: int  # non-space characters
    bold_chars: int

    @property
    def bold(self) -> bool:
        return self.bold_chars >= 0.8 * self.chars

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass(slots=True)
class _Table:
    rows: tuple[tuple[str, ...], ...]
    header_rows: int
    bbox: tuple[float, float, float, float]


@dataclass(slots=True)
class _Item:
    """A pymupdf text block (its lines) or a table, with its box on the page."""

    x0: float
    y0: float
    x1: float
    y1: float
    lines: list[_Line]
    table: _Table | None = None

    @property
    def chars(self) -> int:
        if self.table is not None:
            return sum(len(c) for row in self.table.rows for c in row)
        return sum(line.chars for line in self.lines)


@dataclass(slots=True)
class _Page:
    number: int
    width: float
    height: float
    items: list[_Item]  # upright text blocks
    aside: list[_Item]  # text running sideways (margin stamps, arXiv ids): read after the page
    chars: int
    top_row: float = 0.0  # bottom of the highest text line
    bottom_row: float = 0.0  # top of the lowest text line


@dataclass(slots=True)
class _Piece:
    """A unit about to become one block."""

    kind: str  # paragraph | list_item | heading | table
    lines: list[_Line]
    pages: tuple[int, ...]
    first_in_block: bool = False
    marker: str = ""
    table: _Table | None = None
    level: int = 0
    text: str = ""

    @property
    def page(self) -> int:
        return self.pages[0]


def _make_item(lines: list[_Line]) -> _Item:
    return _Item(
        min(ln.x0 for ln in lines),
        min(ln.y0 for ln in lines),
        max(ln.x1 for ln in lines),
        max(ln.y1 for ln in lines),
        lines,
    )


# ---------------------------------------------------------------------------------------------------
# entry point


def parse_pdf(data: bytes, base: Document, options) -> ParsedDocument:
    """Parse PDF bytes into blocks. Unopenable, password-protected or page-less files come back
    ``failed``; pages without a text layer are listed in ``no_text_pages``."""
    try:
        import pymupdf
    except ImportError as e:
        raise ImportError("the PDF parser needs pymupdf: pip install pymupdf") from e

    shown = pymupdf.TOOLS.mupdf_display_errors()
    pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's repair chatter would flood the worker logs
    try:
        doc, why = _open(pymupdf, data)
        if doc is None:
            return ParsedDocument(replace(base, status="failed", reason=why))
        try:
            return _parse(pymupdf, doc, data, base, options)
        finally:
            doc.close()
    finally:
        pymupdf.TOOLS.mupdf_display_errors(shown)


def _open(pymupdf, data: bytes):
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as e:
        log.debug("pymupdf cannot open the PDF", exc_info=True)
        says = " ".join(str(e).split())
        return None, "cannot open PDF: the file is damaged or is not a PDF" + (
            f" (MuPDF: {says})" if says else ""
        )
    if not doc.is_pdf:
        doc.close()
        return None, "content is not a PDF"
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        return None, "encrypted PDF: needs a password"
    try:
        n_pages = doc.page_count
    except Exception as e:  # a page tree whose /Count is absurd: "code=7: Invalid number of pages"
        doc.close()
        says = " ".join(str(e).split())
        return None, "corrupt PDF: its page tree cannot be read" + (f" (MuPDF: {says})" if says else "")
    if n_pages == 0:
        doc.close()
        return None, "corrupt or truncated PDF: no pages could be read"
    return doc, ""


def _parse(pymupdf, doc, data: bytes, base: Document, options) -> ParsedDocument:
    n_pages = doc.page_count
    pages: list[_Page] = []
    unreadable: list[int] = []
    for i in range(n_pages):
        try:
            pages.append(_read_page(pymupdf, doc[i], i + 1))
        except Exception as e:  # one broken page should not cost the others
            log.warning("pdf page %d unreadable: %s", i + 1, e)
            unreadable.append(i + 1)
            pages.append(_Page(i + 1, 0, 0, [], [], 0))
    if len(unreadable) == n_pages:
        return ParsedDocument(
            replace(base, status="failed", pages=n_pages, reason="corrupt PDF: no page could be read")
        )

    _drop_running_lines(pages)
    no_text, scanned = _pages_without_text(pymupdf, doc, pages)

    notes: list[str] = []
    tables: dict[int, list[_Table]] = {}
    if options.pdf_tables != "never":
        candidates = [
            p.number
            for p in pages
            if p.chars
            and p.number not in unreadable
            and (options.pdf_tables == "always" or _page_looks_tabular(doc, p))
        ]
        tables, notes = _find_tables(data, candidates, options)

    pieces: list[_Piece] = []
    for page in pages:
        pieces.extend(_page_pieces(page, tables.get(page.number, [])))
    pieces = _merge_across(pieces)
    _decide_headings(pieces, _safe_toc(doc))

    text, blocks = _emit(pieces, n_pages)

    reasons: list[str] = []
    status = "ok"
    has_text = any(b.kind != "page_break" for b in blocks)
    encryption = (doc.metadata or {}).get("encryption")
    blank = [
        p.number for p in pages if not p.chars and p.number not in no_text and p.number not in unreadable
    ]
    if encryption and blank and (not has_text or len(blank) > n_pages / 2):
        # RC4 files without a trailer /ID open, but their pages decrypt to nothing
        status = "no_text" if not has_text else status
        reasons.append(
            f"encrypted PDF ({encryption}): page{'s' * (len(blank) > 1)} {_ranges(blank)} "
            "yield no content, decryption failed?"
        )
    if no_text:
        if not has_text:
            status = "no_text"
            reasons.append(
                "scanned page(s), needs OCR"
                if scanned
                else "no text layer and no images: text drawn as vector outlines?"
            )
        else:
            word, verb = ("page", "has") if len(no_text) == 1 else ("pages", "have")
            reasons.append(f"{word} {_ranges(no_text)} {verb} no text layer (scanned, needs OCR)")
    elif not has_text and status == "ok":
        reasons.append(
            f"no text found: {'the page is' if n_pages == 1 else f'all {n_pages} pages are'} blank"
        )
    if unreadable:
        reasons.append(f"page(s) {_ranges(unreadable)} could not be read")
    reasons.extend(notes)
    if status != "ok" or not has_text:
        text, blocks = "", []

    changes = {
        "status": status,
        "reason": "; ".join(reasons),
        "pages": n_pages,
        "metadata": _metadata(doc),
        "no_text_pages": tuple(no_text),
    }
    title = _title(doc)
    if title:
        changes["title"] = title
    return finish(base, text, blocks, **changes)


# ---------------------------------------------------------------------------------------------------
# reading a page


def _read_page(pymupdf, page, number: int) -> _Page:
    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE  # ligatures come out expanded
    d = page.get_text("dict", flags=flags)
    m = page.rotation_matrix
    rect = page.rect
    items: list[_Item] = []
    aside: list[_Item] = []
    chars = 0
    for b in d.get("blocks", ()):
        if b.get("type") != 0:
            continue
        upright: list[_Line] = []
        sideways: list[_Line] = []
        for ln in b.get("lines", ()):
            line = _make_line(pymupdf, ln, m)
            if line is None:
                continue
            chars += line.chars
            dx, dy = ln.get("dir", (1, 0))
            # pymupdf reports boxes and directions unrotated; the page's rotation turns them upright
            (upright if dx * m.a + dy * m.c > 0.9 else sideways).append(line)
        if upright:
            items.append(_make_item(upright))
        if sideways:
            aside.append(_make_item(sideways))
    return _Page(number, rect.width, rect.height, items, aside, chars)


def _make_line(pymupdf, ln: dict, m) -> _Line | None:
    parts = []
    sizes: Counter = Counter()
    n = bold = 0
    for s in ln.get("spans", ()):
        t = s.get("text", "")
        parts.append(t)
        k = sum(1 for c in t if not c.isspace())
        if not k:
            continue
        n += k
        sizes[round(s.get("size", 0) * 2) / 2] += k
        font = str(s.get("font", "")).lower()
        if s.get("flags", 0) & _BOLD_FLAG or any(w in font for w in ("bold", "black", "heavy", "semibold")):
            bold += k
    text = squash(clean_text("".join(parts)).replace("\u00a0", " "))
    if not n or not text:
        return None
    r = pymupdf.Rect(ln["bbox"]) * m
    return _Line(text, r.x0, r.y0, r.x1, r.y1, sizes.most_common(1)[0][0], n, bold)


def _drop_running_lines(pages: list[_Page]) -> None:
    """Remove running headers/footers (margin lines repeated on many pages) and bare page numbers."""

    def zone(page: _Page, line: _Line) -> str | None:
        # the top/bottom band, or the first/last row of the page when it sits a little further in
        # (LaTeX puts page numbers at about 83% of the page height)
        h = page.height
        if not h:
            return None
        if (
            line.y0 <= h * _MARGIN
            and line.y1 <= h * _MARGIN * 1.5
            or line.y1 <= page.top_row
            and line.y1 <= 0.15 * h
        ):
            return "top"
        if (
            line.y0 >= h * (1 - _MARGIN) - 0.5 * line.height
            or line.y0 >= page.bottom_row
            and line.y0 >= 0.8 * h
        ):
            return "bottom"
        return None

    for page in pages:
        lines = [ln for item in page.items for ln in item.lines]
        page.top_row = min((ln.y1 for ln in lines), default=0) + 1
        page.bottom_row = max((ln.y0 for ln in lines), default=0) - 1

    seen: Counter = Counter()
    for page in pages:
        keys = set()
        for item in page.items:
            for line in item.lines:
                z = zone(page, line)
                if z:
                    keys.add((z, _DIGITS.sub("#", line.text.lower())))
        seen.update(keys)
    n = len(pages)
    need = max(2, min(math.ceil(n / 2), 3))  # long documents: chapter-named headers repeat only a few times
    repeated = {k for k, c in seen.items() if c >= need} if n >= 2 else set()

    for page in pages:
        kept = []
        n_lines = sum(len(item.lines) for item in page.items)
        # A repeated margin line that is all the page holds is content, not a running header.
        page_repeated = repeated if n_lines > 1 else set()
        for item in page.items:
            lines = [
                ln
                for ln in item.lines
                if not (
                    (z := zone(page, ln))
                    and (
                        (z, _DIGITS.sub("#", ln.text.lower())) in page_repeated or _PAGE_NUMBER.match(ln.text)
                    )
                )
            ]
            if len(lines) == len(item.lines):
                kept.append(item)
            elif lines:
                kept.append(_make_item(lines))
        page.items = kept


def _pages_without_text(pymupdf, doc, pages: list[_Page]) -> tuple[list[int], bool]:
    """Pages with images or drawings but no text (or a few characters over a full-page image).

    Returns those page numbers and whether any of them holds an image (a scan, not vector art).
    """
    found, scanned = [], False
    for page in pages:
        if page.chars >= 30 or not page.width:
            continue
        try:
            p = doc[page.number - 1]
            area = abs(p.rect)
            images = p.get_image_info()
            cover = sum(abs(p.rect & pymupdf.Rect(im["bbox"])) for im in images) / area if area else 0
            if page.chars == 0:
                if images:
                    found.append(page.number)
                    scanned = True
                elif len(p.get_cdrawings()) >= 20:
                    found.append(page.number)
            elif cover >= 0.5:  # a scan with a stamped page number or a few OCR crumbs
                found.append(page.number)
                scanned = True
        except Exception as e:
            log.debug("pdf page %d: image check failed: %s", page.number, e)
    return found, scanned


# ---------------------------------------------------------------------------------------------------
# tables


def _page_looks_tabular(doc, p: _Page) -> bool:
    """``_looks_tabular`` on page ``p`` of ``doc``; False when the page is gone: MuPDF repairs a
    damaged file while loading a later page, and the repaired page tree may no longer hold this one."""
    try:
        page = doc[p.number - 1]
    except Exception as e:  # IndexError: page N not in document
        log.debug("pdf page %d: gone after a repair: %s", p.number, e)
        return False
    return _looks_tabular(page, p)


def _looks_tabular(page, p: _Page) -> bool:
    """Cheap test for whether pymupdf's (slow) table finder is worth running on a page.

    Yes for text in 4+ rows of 3+ cells whose left edges line up (a borderless table), or for at
    least 3 stacked horizontal rules in the page body (dotted rules, the edges of boxes and cell
    backgrounds count; paths with curves or slanted strokes are figures and do not) with 2+ rows of
    side-by-side text between the first and the last rule. Pages whose text never sits side by side
    skip the drawing scan altogether.
    """
    rows: dict[int, list[float]] = {}
    for item in p.items:
        for ln in item.lines:
            rows.setdefault(round((ln.y0 + ln.y1) / 6), []).append(ln.x0)
    multi = sorted(k * 3 for k, xs in rows.items() if len(xs) >= 2)
    if len(multi) < 2:
        return False
    # a borderless table: 4+ rows of 3+ cells whose left edges line up in 3+ columns
    starts = Counter(round(x / 4) for xs in rows.values() if len(xs) >= 3 for x in set(xs))
    if sum(1 for c in starts.values() if c >= 4) >= 3:
        return True
    try:
        drawings = page.get_cdrawings()
    except Exception:
        return False
    top, bottom = 0.06 * p.height, 0.94 * p.height
    horizontal: dict[int, list[float]] = {}  # y -> [x0, x1, inked length]

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
                    break  # a slanted stroke: this path is a figure
                boxes.append((min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)))
            elif op == "re":
                boxes.append(it[1])
            elif op == "qu":
                xs = [q[0] for q in it[1]]
                ys = [q[1] for q in it[1]]
                boxes.append((min(xs), min(ys), max(xs), max(ys)))
            else:
                break  # curves: a figure
        else:
            for x0, y0, x1, y1 in boxes:
                if y1 < top or y0 > bottom:
                    continue
                rule(y0, x0, x1)
                if y1 - y0 > 3:  # a box or a cell background: its bottom edge is a rule too
                    rule(y1, x0, x1)
    # rules of a table are long (fraction bars are not) and stacked over the same columns
    rules = sorted((2 * k, r[0], r[1]) for k, r in horizontal.items() if r[2] >= 40)[:300]
    for _, x0, x1 in rules:
        stack = [ry for ry, a, b in rules if min(x1, b) - max(x0, a) >= 0.5 * min(x1 - x0, b - a)]
        if (
            len(stack) >= 3
            and bisect.bisect_right(multi, stack[-1]) - bisect.bisect_left(multi, stack[0]) >= 2
        ):
            return True
    return False


def _find_tables(data: bytes, pages: list[int], options) -> tuple[dict[int, list[_Table]], list[str]]:
    """Run the table finder on ``pages`` in a child process, bounded per page and per document."""
    if not pages:
        return {}, []
    found: dict[int, list[_Table]] = {}
    timed_out: list[int] = []
    crashed: list[int] = []
    skipped: list[int] = []
    deadline = time.monotonic() + options.table_doc_budget_s
    with tempfile.TemporaryDirectory(prefix="raychunk-pdf-") as tmp:
        path = os.path.join(tmp, "doc.pdf")
        with open(path, "wb") as f:
            f.write(data)
        todo = list(pages)
        while todo:
            if time.monotonic() >= deadline:
                skipped.extend(todo)
                break
            todo, outcome = _run_finder(path, todo, found, deadline, options.table_page_timeout_s)
            if outcome == "timeout":
                (timed_out if time.monotonic() < deadline else skipped).append(todo.pop(0))
            elif outcome == "crash" and todo:
                crashed.append(todo.pop(0))
    notes = []
    if timed_out:
        notes.append(
            f"table finder timed out on page{'s' * (len(timed_out) > 1)} {_ranges(timed_out)}; "
            "its text kept as paragraphs"
        )
    if skipped:
        notes.append(
            f"table finder time budget ({options.table_doc_budget_s:g} s) spent; "
            f"page{'s' * (len(skipped) > 1)} {_ranges(skipped)} not searched for tables"
        )
    if crashed:
        notes.append(f"table finder failed on page{'s' * (len(crashed) > 1)} {_ranges(crashed)}")
    return found, notes


def _run_finder(path: str, todo: list[int], found: dict, deadline: float, page_timeout: float):
    """One child run over ``todo``; returns the pages still to do and how the run ended."""
    # the child must import this package as the parent does, whether installed or on PYTHONPATH
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen(
        [sys.executable, "-m", "raychunk.parse._pdf_tables", path, *map(str, todo)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=env,
    )
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    todo = list(todo)
    try:
        ready = False
        while todo:
            # starting python and opening the file is not the page's fault: allow it more time
            limit = page_timeout if ready else max(page_timeout, 30.0)
            wait = min(limit, deadline - time.monotonic())
            if wait <= 0:
                return todo, "timeout"
            try:
                line = lines.get(timeout=wait)
            except queue.Empty:
                return todo, "timeout"
            if line is None:
                return todo, "crash"
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("ready"):
                ready = True
                continue
            number = msg.get("page")
            if number not in todo:
                continue
            todo.remove(number)
            if "error" in msg:
                log.debug("table finder error on page %s: %s", number, msg["error"])
                continue
            tables = [t for t in (_table_of(raw) for raw in msg.get("tables", ())) if t is not None]
            if tables:
                found[number] = tables
        return todo, "done"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        reader.join(timeout=1)


def _cell(value) -> str:
    return squash(_CJK_WRAP.sub("", clean_text(str(value)))) if value is not None else ""


def _table_of(raw: dict) -> _Table | None:
    rows = [[_cell(c) for c in row] for row in raw.get("rows") or ()]
    header_rows = 0
    names = [_cell(n) for n in raw.get("header_names") or ()]
    bbox = list(raw.get("bbox") or (0, 0, 0, 0))
    if raw.get("header_external") and any(n and not re.fullmatch(r"Col\d+", n) for n in names):
        rows.insert(0, [n if not re.fullmatch(r"Col\d+", n) else "" for n in names])
        header_rows = 1
        hb = raw.get("header_bbox")
        if hb:
            bbox = [min(bbox[0], hb[0]), min(bbox[1], hb[1]), max(bbox[2], hb[2]), max(bbox[3], hb[3])]
    # empty rows and columns are ruling artefacts, not content
    rows = [r for r in rows if any(r)]
    if not rows:
        return None
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    rows = [[r[j] for j in keep] for r in rows]
    filled = sum(1 for r in rows for c in r if c)
    if len(rows) < 2 or len(keep) < 2 or filled < 3:
        return None  # a framed paragraph or a lone box: leave its text as paragraphs
    if not header_rows:
        # pymupdf calls the first row the header unless it finds one above the table; trust it
        # unless that row is all numbers (a data row)
        header_rows = 0 if all(re.fullmatch(r"[\d\s.,%+\-−()$€£]*", c) for c in rows[0]) else 1
    return _Table(tuple(tuple(r) for r in rows), header_rows, tuple(bbox))


# ---------------------------------------------------------------------------------------------------
# reading order and pieces


def _page_pieces(page: _Page, tables: list[_Table]) -> list[_Piece]:
    items = page.items
    if tables:
        boxes = [t.bbox for t in tables]

        def inside(ln: _Line) -> bool:
            cx, cy = (ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2
            return any(b[0] - 1 <= cx <= b[2] + 1 and b[1] - 1 <= cy <= b[3] + 1 for b in boxes)

        kept = []
        for item in items:
            lines = [ln for ln in item.lines if not inside(ln)]
            if len(lines) == len(item.lines):
                kept.append(item)
            elif lines:
                kept.append(_make_item(lines))
        items = kept + [_Item(*t.bbox, [], table=t) for t in tables]

    pieces: list[_Piece] = []
    for item in _reading_order(items, page.width) + page.aside:
        if item.table is not None:
            pieces.append(_Piece("table", [], (page.number,), table=item.table))
        else:
            pieces.extend(_split_block(item, page.number))
    return pieces


def _reading_order(items: list[_Item], width: float) -> list[_Item]:
    """Top to bottom; on two-column pages, blocks spanning both columns cut the page into bands,
    and each band reads its left column, then its right column."""
    if len(items) < 3 or not width:
        return _by_rows(items)
    gutter = _gutter(items, width)
    if gutter is None:
        return _by_rows(items)
    spanning = sorted((it for it in items if it.x0 < gutter - 2 and it.x1 > gutter + 2), key=lambda it: it.y0)
    tops = [it.y0 for it in spanning]
    bands: list[tuple[list[_Item], list[_Item]]] = [([], []) for _ in range(len(spanning) + 1)]
    for it in items:
        if it.x0 < gutter - 2 and it.x1 > gutter + 2:
            continue
        band = bands[bisect.bisect_right(tops, it.y0)]
        (band[0] if it.x1 <= gutter + 2 else band[1]).append(it)
    ordered: list[_Item] = []
    for i, (left, right) in enumerate(bands):
        ordered += _by_rows(left) + _by_rows(right)
        if i < len(spanning):
            ordered.append(spanning[i])
    return ordered


def _gutter(items: list[_Item], width: float) -> float | None:
    """The x of the gap between two text columns, or None for a one-column (or tabular) page."""
    weights = [max(1, it.chars) for it in items]
    total = sum(weights)
    best, best_cross = 0.0, None
    for k in sorted(range(31), key=lambda k: abs(k - 15)):  # from the middle out: ties go to the centre
        x = width * (0.35 + 0.01 * k)
        cross = sum(w for it, w in zip(items, weights) if it.x0 < x - 2 and it.x1 > x + 2)
        if best_cross is None or cross < best_cross:
            best, best_cross = x, cross
    x = best
    left = [it for it in items if it.x1 <= x + 2]
    right = [it for it in items if it.x0 >= x - 2]
    left_w = sum(it.chars for it in left)
    right_w = sum(it.chars for it in right)
    if best_cross > 0.5 * total or left_w < 0.15 * total or right_w < 0.15 * total:
        return None
    if sum(len(it.lines) for it in left) < 4 or sum(len(it.lines) for it in right) < 4:
        return None
    # side by side, not one above the other
    overlap = min(max(it.y1 for it in left), max(it.y1 for it in right)) - max(
        min(it.y0 for it in left), min(it.y0 for it in right)
    )
    if overlap <= 0:
        return None
    # rows of cells that share their tops are a table or a form, which reads row by row
    tops = sorted(it.y0 for it in right)
    aligned = sum(1 for it in left if _near(tops, it.y0, 2))
    if len(left) >= 4 and aligned >= 0.5 * len(left):
        return None
    return x


def _near(sorted_values: list[float], v: float, tol: float) -> bool:
    i = bisect.bisect_left(sorted_values, v - tol)
    return i < len(sorted_values) and sorted_values[i] <= v + tol


def _by_rows(items: list[_Item]) -> list[_Item]:
    """Top to bottom; items whose tops are within a few points count as one row, read left to right."""
    items = sorted(items, key=lambda it: it.y0)
    out: list[_Item] = []
    row: list[_Item] = []
    for it in items:
        if row and it.y0 - row[0].y0 > 3:
            out += sorted(row, key=lambda r: r.x0)
            row = []
        row.append(it)
    return out + sorted(row, key=lambda r: r.x0)


def _split_block(item: _Item, page: int) -> list[_Piece]:
    """A text block as paragraphs, list items and heading candidates (split where the style changes)."""
    rows: list[_Line] = []
    for ln in item.lines:  # pymupdf may cut one visual line in several (a bullet and its text)
        prev = rows[-1] if rows else None
        if (
            prev
            and ln.x0 >= prev.x1 - 2
            and min(ln.y1, prev.y1) - max(ln.y0, prev.y0) >= 0.5 * min(ln.height, prev.height)
        ):
            rows[-1] = _Line(
                prev.text + " " + ln.text,
                prev.x0,
                min(prev.y0, ln.y0),
                ln.x1,
                max(prev.y1, ln.y1),
                prev.size if prev.chars >= ln.chars else ln.size,
                prev.chars + ln.chars,
                prev.bold_chars + ln.bold_chars,
            )
        else:
            rows.append(ln)

    pieces: list[_Piece] = []
    pending_marker = ""
    for ln in rows:
        if _LONE_BULLET.match(ln.text):  # a bullet set apart from its text: attach it to the next line
            pending_marker = ln.text
            continue
        if pending_marker:
            ln = replace(ln, text=f"{pending_marker} {ln.text}")
            pending_marker = ""
        marker = _marker(ln.text)
        cur = pieces[-1] if pieces else None
        if cur is not None and not marker and not _style_break(cur, ln):
            cur.lines.append(ln)
            continue
        pieces.append(
            _Piece(
                "list_item" if marker else "paragraph",
                [ln],
                (page,),
                first_in_block=not pieces,
                marker=marker,
            )
        )
    return pieces


def _marker(text: str) -> str:
    m = _GLYPH_BULLET.match(text) or _ENUM_BULLET.match(text)
    return m.group(0).strip() if m else ""


def _style_break(cur: _Piece, ln: _Line) -> bool:
    prev = cur.lines[-1]
    if prev.text[-1:] in ",-\u00ad" or ln.text[:1].islower():
        return False  # the sentence goes on
    if max(prev.size, ln.size) > 1.08 * max(0.1, min(prev.size, ln.size)):
        return True
    # a bold heading line on top of its (plain) paragraph, grouped into one block by pymupdf
    return prev.bold and not ln.bold and all(x.bold for x in cur.lines) and len(cur.lines) <= 2


def _join_lines(lines: list[_Line]) -> str:
    text = ""
    for ln in lines:
        t = ln.text.strip()
        if not text:
            text = t
        elif text[-1] == "\u00ad":
            text = text[:-1] + t
        elif text[-1] in "-\u2010" and len(text) >= 2 and text[-2].isalpha() and t[:1].islower():
            text = text[:-1] + t  # "exam-" + "ple"
        elif _CJK.match(text[-1]) and _CJK.match(t[:1]):
            text += t  # Chinese and Japanese lines wrap without a space
        else:
            text += " " + t
    return squash(text.replace("\u00ad", ""))


def _merge_across(pieces: list[_Piece]) -> list[_Piece]:
    """Join a paragraph cut by a column or page end, and a table continued on the next page."""
    out: list[_Piece] = []
    for p in pieces:
        prev = out[-1] if out else None
        if prev is not None and prev.kind == p.kind == "paragraph" and p.lines and prev.lines:
            tail, head = prev.lines[-1].text, p.lines[0].text
            if (
                (tail[-1:].isalpha() or tail[-1:] in "-,\u00ad")
                and head[:1].islower()
                and abs(prev.lines[-1].size - p.lines[0].size) < 0.6
            ):
                prev.lines.extend(p.lines)
                prev.pages = tuple(sorted(set(prev.pages + p.pages)))
                continue
        if (
            prev is not None
            and prev.kind == p.kind == "table"
            and p.page == prev.pages[-1] + 1
            and len(prev.table.rows[0]) == len(p.table.rows[0])
        ):
            rows = p.table.rows
            if (
                p.table.header_rows
                and rows[: p.table.header_rows] == prev.table.rows[: prev.table.header_rows]
            ):
                rows = rows[p.table.header_rows :]  # the header repeated on the new page
            prev.table = replace(prev.table, rows=prev.table.rows + rows)
            prev.pages = prev.pages + (p.page,)
            continue
        out.append(p)
    return out


# ---------------------------------------------------------------------------------------------------
# headings


def _safe_toc(doc) -> list:
    try:
        return doc.get_toc(simple=True)
    except Exception:  # a looping or broken outline
        return []


def _decide_headings(pieces: list[_Piece], toc: list) -> None:
    for p in pieces:
        if p.kind != "table":
            p.text = _join_lines(p.lines)
    if not _outline_headings(pieces, toc):
        _font_headings(pieces)
    for p in pieces:
        if (
            p.kind == "list_item"
            and p.marker
            and p.text.startswith(p.marker)
            and _LONE_BULLET.match(p.marker)
        ):
            p.text = p.text[len(p.marker) :].strip() or p.text
        elif p.kind == "table":
            p.text = render_table(p.table.rows, p.table.header_rows)
    # list nesting: indented further than the first item of its list
    first_x = None
    for p in pieces:
        if p.kind != "list_item":
            first_x = None
            continue
        x = p.lines[0].x0
        if first_x is None:
            first_x = x
        p.level = 1 if x > first_x + 6 else 0


def _norm_title(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = _SECTION_NUMBER.sub("", text)
    return "".join(c for c in text if c.isalnum())


def _same_title(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return long_.startswith(short) and len(short) >= 0.8 * len(long_)


def _outline_headings(pieces: list[_Piece], toc: list) -> bool:
    """Headings from the outline, when at least half of its entries name a line on their page."""
    entries = [(lvl, title, page) for lvl, title, page, *_ in toc if isinstance(page, int) and page >= 1][
        :3000
    ]
    if len(entries) < 3:
        return False
    by_page: dict[int, list[int]] = {}
    for i, p in enumerate(pieces):
        if p.kind in ("paragraph", "list_item"):
            for n in p.pages[:1]:
                by_page.setdefault(n, []).append(i)
    norms = {
        i: (
            _norm_title(pieces[i].text) if len(pieces[i].lines) <= 3 else "",
            _norm_title(pieces[i].lines[0].text),
        )
        for ids in by_page.values()
        for i in ids
    }
    matches: dict[int, tuple[int, bool]] = {}  # piece index -> (level, only its first line)
    for lvl, title, page in entries:
        want = _norm_title(title)
        if not want:
            continue
        for n in (page, page + 1):
            hits = [
                (i, first)
                for i in by_page.get(n, ())
                if i not in matches
                for first, have in ((False, norms[i][0]), (True, norms[i][1]))
                if _same_title(want, have)
            ]
            if hits:  # the largest type wins over a running header naming the same section
                i, first = max(hits, key=lambda h: (pieces[h[0]].lines[0].size, -h[0]))
                matches[i] = (lvl, first)
                break
    if len(matches) < max(3, 0.5 * len(entries)):
        return False
    for i in sorted(matches, reverse=True):
        lvl, first_only = matches[i]
        p = pieces[i]
        if first_only and len(p.lines) > 1:
            rest = _Piece(p.kind if p.kind != "list_item" else "paragraph", p.lines[1:], p.pages)
            rest.text = _join_lines(rest.lines)
            p.lines = p.lines[:1]
            p.text = _join_lines(p.lines)
            pieces.insert(i + 1, rest)
        p.kind, p.level = "heading", max(1, min(6, lvl))
    return True


def _font_headings(pieces: list[_Piece]) -> None:
    """Headings from font statistics: short lines set larger than the body, or bold ones standing
    alone at the top of a block and followed by running text."""
    sizes: Counter = Counter()
    for p in pieces:
        for ln in p.lines:
            sizes[ln.size] += ln.chars
    if not sizes:
        return
    body = sizes.most_common(1)[0][0]
    text_pieces = [p for p in pieces if p.kind in ("paragraph", "list_item")]
    candidates: dict[int, tuple[float, bool]] = {}
    for i, p in enumerate(pieces):
        if p.kind not in ("paragraph", "list_item") or not _heading_shaped(p):
            continue
        size = max(ln.size for ln in p.lines)
        bold = all(ln.bold for ln in p.lines)
        if size >= _HEADING_RATIO * body and len(p.lines) <= 3:
            candidates[i] = (size, bold)
        elif (
            bold
            and size >= 0.95 * body
            and p.first_in_block
            and len(p.lines) <= 2
            and len(p.text.split()) <= 12
            and _followed_by_text(pieces, i)
        ):
            candidates[i] = (size, True)
    # a style used for much of the text is body text, not headings
    bold_count = sum(1 for s, b in candidates.values() if b and s < _HEADING_RATIO * body)
    if bold_count > 0.3 * max(1, len(text_pieces)):
        candidates = {i: v for i, v in candidates.items() if not (v[1] and v[0] < _HEADING_RATIO * body)}
    per_key = Counter((round(s * 2) / 2, b) for s, b in candidates.values())
    common = {k for k, c in per_key.items() if c > 0.4 * max(1, len(text_pieces)) and c > 2}
    candidates = {i: v for i, v in candidates.items() if (round(v[0] * 2) / 2, v[1]) not in common}
    if len(candidates) > 0.5 * max(1, len(text_pieces)):
        return
    keys = sorted({(round(s * 2) / 2, b) for s, b in candidates.values()}, key=lambda k: (-k[0], not k[1]))
    rank = {k: min(6, i + 1) for i, k in enumerate(keys)}
    for i, (s, b) in candidates.items():
        pieces[i].kind = "heading"
        pieces[i].level = rank[(round(s * 2) / 2, b)]


def _heading_shaped(p: _Piece) -> bool:
    text = p.text
    words = text.split()
    if not words or len(words) > _MAX_HEADING_WORDS or len(text) > 150:
        return False
    if text[-1] in ".,;:" and not text.endswith("..."):
        return False
    if p.marker and _LONE_BULLET.match(p.marker):
        return False
    letters = sum(1 for c in text if c.isalpha())
    if letters < 2 or letters < 0.5 * sum(1 for c in text if not c.isspace()):
        return False
    return not _CAPTION.match(text)


def _followed_by_text(pieces: list[_Piece], i: int) -> bool:
    nxt = pieces[i + 1] if i + 1 < len(pieces) else None
    if nxt is None or nxt.page != pieces[i].page and nxt.page != pieces[i].pages[-1] + 1:
        return False
    if nxt.kind == "table":
        return True
    return (
        nxt.kind in ("paragraph", "list_item")
        and (len(nxt.text.split()) >= 6 or nxt.kind == "list_item")
        and not all(ln.bold for ln in nxt.lines)
    )


# ---------------------------------------------------------------------------------------------------
# output


def _emit(pieces: list[_Piece], n_pages: int) -> tuple[str, list[Block]]:
    asm = TextAssembler()
    stream = BlockStream()
    end = 0
    current = 1

    def breaks_until(page: int):
        nonlocal current
        while current < page:
            current += 1
            stream.add("page_break", "", end, end, pages=(current,))

    for p in pieces:
        text = p.text
        if not text.strip():
            continue
        breaks_until(p.page)
        start, end = asm.append(text)
        if p.kind == "heading":
            stream.heading(text, p.level, start, end, pages=p.pages)
        elif p.kind == "table":
            stream.add(
                "table", text, start, end, pages=p.pages, rows=p.table.rows, header_rows=p.table.header_rows
            )
        elif p.kind == "list_item":
            stream.add("list_item", text, start, end, pages=p.pages, level=p.level)
        else:
            stream.add("paragraph", text, start, end, pages=p.pages)
    breaks_until(n_pages)
    return asm.text, stream.blocks


def _ranges(numbers: list[int], limit: int = 8) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"``; past ``limit`` runs, the rest is counted, not listed."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    shown = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs[:limit])
    if len(runs) > limit:
        shown += f" and {sum(len(r) for r in runs[limit:])} more"
    return shown


def _metadata(doc) -> tuple[tuple[str, str], ...]:
    meta = doc.metadata or {}
    out = []
    for key, value in meta.items():
        if isinstance(value, str):
            value = squash(clean_text(value))
            if value:
                out.append((str(key), value))
    return tuple(out)


def _title(doc) -> str:
    title = squash(clean_text((doc.metadata or {}).get("title") or ""))
    if (
        len(title) < 3
        or sum(c.isalpha() for c in title) < 2
        or _BAD_TITLE.search(title)
        or re.fullmatch(r"\S*[_-]\S*", title)
    ):  # a file or job name, not a title
        return ""
    return title[:200]
