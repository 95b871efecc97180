"""The PDF parser: pymupdf text in reading order, as headings, paragraphs, list items and tables.

``parse_pdf(data, base, options)`` returns a ParsedDocument whose ``text`` is the extracted text
(block texts joined by blank lines) and whose blocks satisfy ``text[b.char_start:b.char_end] ==
b.text``. Every block carries its 1-based page number(s); a ``page_break`` block with an empty span
opens each page after the first.

The steps: read each page's text lines in visual coordinates (so rotated pages read upright), drop
running headers, footers and page numbers, find tables (from drawn rules and aligned words, bounded by
counts, never by time: ``_pdf_tables``), order blocks (by regions, bands and columns), split
blocks into paragraphs, list items and heading candidates, decide headings (from the outline when
its titles are found on their pages, else from font size and weight), and emit.
"""

from __future__ import annotations

import bisect
import functools
import gc
import logging
import math
import re
import sys
import unicodedata
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from raychunk.document import Block, Document, ParsedDocument
from raychunk.parse._common import TYPEWRITER_FACE, BlockStream, TextAssembler, clean_text, finish
from raychunk.parse._pdf_tables import (
    Caps,
    Found,
    TooMuch,
    Word,
    aligned_tables,
    page_words,
    ruled_tables,
    rules,
    without_pictures,
)
from raychunk.render import OWN_NUMBER, render_table, squash

__all__ = ["parse_image", "parse_pdf"]

log = logging.getLogger(__name__)

_MARGIN = 0.08  # top/bottom share of the page where running headers, footers and page numbers live
_BOLD_FLAG = 16  # pymupdf span flag: bold
_MONO_FLAG = 8  # ... and monospaced
_SUPERSCRIPT_FLAG = 1  # ... and superscripted
# A footnote mark or an exponent set raised and small after a number or word: shown as superscript
# characters, so that 273.879.750 and its mark 1 read 273.879.750¹, not 273.879.7501.
_SUPERSCRIPTS = str.maketrans("0123456789+-−=()", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾")
_RAISED = re.compile(r"[0-9+\-−=()]{1,4}")
# TeX's math symbol and extension fonts (cmsy, cmex; Elsevier's Advent fonts after them) name their
# glyphs by position (``/C0``) or not at all, so MuPDF finds no Unicode and reads U+FFFD: a table's
# "−0.9393" lost its minus. Their glyphs by position, as TeX's OMS and OMX encodings place them.
_TEX_MATH_FONT = re.compile(r"(?i)cmsy|mthsy|mathsy|(?P<ex>cmex|mthex|mathex)")
_GLYPH_POSITION = re.compile(r"[Cc](\d{1,3})")
_U = "\ufffd"
_OMS = (
    "−·×∗÷⋄±∓⊕⊖⊗⊘⊙◯∘•≍≡⊆⊇≤≥⪯⪰∼≈⊂⊃≪≫≺≻"
    "←→↑↓↔↗↘≃⇐⇒⇑⇓⇔↖↙∝′∞∈∋△▽/" + _U + "∀∃¬∅ℜℑ⊤⊥"
    "ℵABCDEFGHIJKLMNOPQRSTUVWXYZ∪∩⊎∧∨"
    "⊢⊣⌊⌋⌈⌉{}⟨⟩|‖↕⇕\\≀√⨿∇∫⊔⊓⊑⊒§†‡¶♣♢♡♠"
)
_OMX = (
    "()[]⌊⌋⌈⌉{}⟨⟩|‖/\\()()[]⌊⌋⌈⌉{}⟨⟩/\\()[]⌊⌋⌈⌉{}⟨⟩/\\/\\"
    + _U * 32
    + "∑∏∫⋃⋂⨄⋀⋁∑∏∫⋃⋂⨄⋀⋁∐∐^^^~~~[]⌊⌋⌈⌉{}"
    + "√√√√√"
    + _U * 11
)
# what a page opens with in large type without it being the document's title
_SECTION_NAME = re.compile(
    r"(?i)(?:table of )?contents|abstract|introduction|preface|foreword|summary|executive summary|index"
    r"|acknowledge?ments?|overview|chapter \w+|part \w+|appendix(?: \w+)?"
)
_HEADING_RATIO = 1.15  # a heading is at least this much larger than the body text
_MAX_HEADING_WORDS = 15
_CAPS = Caps()
# a bold weight in a font name: spelled out, or abbreviated after the family as type foundries do
# ("HelveticaNeueLTStd-Bd", "-BdCn", "-HvIt", "-Blk", "FranklinGothic-Demi"); PDFs often set no
# bold flag for these
_MARKED = re.compile(r"^\d{1,3}\s*")  # a footnote's number
_ADDRESS = re.compile(r"(?i)://|^www\.|\.(?:com|org|net|edu|gov|io|html?|pdf|png)\b|@[\w-]+\.")
_BOLD_FONT = re.compile(r"(?i:bold|black|heavy)|[-,][A-Za-z]*?(?:Bd|Bld|Blk|Hv|Hvy|Demi)(?![a-z])")

_BULLET_GLYPHS = "•◦▪▫●○■□►▶▸➢➤✓✔∙‣⁃-–*"
_GLYPH_BULLET = re.compile(rf"^(?!--)([{re.escape(_BULLET_GLYPHS)}]|[\uf000-\uf0ff])\s*(?=\S)")  # not --quiet
_LONE_BULLET = re.compile(rf"^(?:[{re.escape(_BULLET_GLYPHS)}]|[\uf000-\uf0ff])$")
_TEXT_BULLET = re.compile(rf"^[{_BULLET_GLYPHS[:-3]}\uf000-\uf0ff]")
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
    mono_chars: int = 0  # ... set in a typewriter face
    lead: int = 0  # spaces before its first character, inside its box (code indented with spaces)

    @property
    def mono(self) -> bool:
        return self.mono_chars >= 0.8 * self.chars

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
    slanted: frozenset[tuple[int, int]] = frozenset()  # (block, line) of text set at a slant
    # (block, line) -> {word as extracted: the word as shown (a raised mark as superscript digits,
    # a TeX math glyph as its character)}
    shown_words: dict = field(default_factory=dict)


@dataclass(slots=True)
class _Piece:
    """A unit about to become one block."""

    kind: str  # paragraph | list_item | heading | table | code
    lines: list[_Line]
    pages: tuple[int, ...]
    first_in_block: bool = False
    marker: str = ""
    table: _Table | None = None
    level: int = 0
    text: str = ""
    fallback: list[_Piece] | None = None  # a ``code?`` block's pieces if it is not code

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


def _import_pymupdf(what: str):
    """pymupdf, without the layout model its package loads on import when pymupdf-layout is
    installed (an ONNX model, seconds in every document process that reads a PDF): no parser here
    asks a page for its layout. A later ``import pymupdf.layout`` still loads it."""
    blocked = "pymupdf" not in sys.modules and "pymupdf.layout" not in sys.modules
    if blocked:
        sys.modules["pymupdf.layout"] = None  # its ``import pymupdf.layout`` fails, as if not installed
    try:
        import pymupdf
    except ImportError as e:
        raise ImportError(f"the {what} parser needs pymupdf: pip install pymupdf") from e
    finally:
        if blocked and sys.modules.get("pymupdf.layout", 0) is None:
            del sys.modules["pymupdf.layout"]
    return pymupdf


def parse_pdf(data: bytes, base: Document, options) -> ParsedDocument:
    """Parse PDF bytes into blocks. Unopenable, password-protected or page-less files come back
    ``failed``; pages without a text layer are listed in ``no_text_pages``."""
    pymupdf = _import_pymupdf("PDF")

    shown = pymupdf.TOOLS.mupdf_display_errors()
    pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's repair chatter would flood the worker logs
    try:
        doc, why = _open(pymupdf, data)
        if doc is None:
            return ParsedDocument(replace(base, status="failed", reason=why))
        try:
            return _parse(pymupdf, doc, base, options)
        finally:
            doc.close()
    finally:
        pymupdf.TOOLS.mupdf_display_errors(shown)


def parse_image(data: bytes, base: Document, options) -> ParsedDocument:
    """Parse a scan or screenshot (PNG, JPEG, TIFF with its frames as pages, GIF): each image is a
    page without a text layer, read by OCR as a scanned PDF page is."""
    pymupdf = _import_pymupdf("image")
    try:
        with pymupdf.open(stream=data) as img:
            pdf = img.convert_to_pdf()
    except Exception as e:
        says = " ".join(str(e).split())
        return ParsedDocument(
            replace(
                base,
                status="failed",
                reason="cannot open image: damaged or not an image" + (f" ({says})" if says else ""),
            )
        )
    parsed = parse_pdf(pdf, base, options)
    doc = parsed.document
    if doc.status == "no_text":  # say it of the image, not of the PDF it was read as
        doc = replace(doc, reason=doc.reason.replace("scanned page(s)", "image"))
    return ParsedDocument(replace(doc, metadata=()), parsed.text, parsed.blocks)


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


def _parse(pymupdf, doc, base: Document, options) -> ParsedDocument:
    n_pages = doc.page_count
    pages: list[_Page] = []
    unreadable: list[int] = []
    tables: dict[int, list[_Table]] = {}
    skipped: dict[str, list[int]] = {}
    failed: list[int] = []
    reader = _ocr_reader(pymupdf, doc, options)
    for i in range(n_pages):
        try:
            page = doc[i]
            # one TextPage per page, read for lines and for table words; ligatures come out expanded
            textpage = page.get_textpage(flags=pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE)
            p = _read_page(page, textpage, i + 1)
            words = None
            if reader is not None and (read := reader.read(page, i + 1, p.chars, _page_text(p))) is not None:
                p, words = _ocr_page(p, read)
        except Exception as e:  # one broken page should not cost the others
            log.warning("pdf page %d unreadable: %s", i + 1, e)
            unreadable.append(i + 1)
            pages.append(_Page(i + 1, 0, 0, [], [], 0))
            continue
        pages.append(p)
        if options.pdf_tables == "never" or not p.chars:
            continue
        try:
            found, why = _page_tables(page, textpage, p, options, words)
        except Exception as e:  # a table search that trips over a broken page keeps its text
            log.debug("pdf page %d: table search failed: %s", i + 1, e)
            failed.append(i + 1)
            continue
        if found:
            tables[i + 1] = found
        if why:
            skipped.setdefault(why, []).append(i + 1)
    if len(unreadable) == n_pages:
        return ParsedDocument(
            replace(base, status="failed", pages=n_pages, reason="corrupt PDF: no page could be read")
        )

    _drop_running_lines(pages)
    no_text, scanned = _pages_without_text(pymupdf, doc, pages, set(reader.pages) if reader else set())
    notes = _table_notes(skipped)
    if failed:
        notes.append(f"table search failed on page{'s' * (len(failed) > 1)} {_ranges(failed)}")

    # In a document set in a typewriter face throughout (a text file printed to PDF) the face marks
    # no code.
    lines = [ln for page in pages for item in page.items for ln in item.lines]
    code = sum(ln.mono_chars for ln in lines) < 0.9 * sum(ln.chars for ln in lines)
    pieces: list[_Piece] = []
    for page in pages:
        pieces.extend(_page_pieces(page, tables.get(page.number, []), code=code))
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
        reasons.append(_no_text_reason(no_text, scanned, has_text, reader, options))
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
    if reader is not None and reader.label:
        changes.update(
            ocr_pages=tuple(reader.pages), ocr_engine=reader.label, ocr_seconds=round(reader.seconds, 3)
        )
    title = _title(doc) or _cover_title(pieces) or _top_title(pieces)
    if title:
        changes["title"] = title
    return finish(base, text, blocks, **changes)


# ---------------------------------------------------------------------------------------------------
# reading a page


def _read_page(page, textpage, number: int) -> _Page:
    d = textpage.extractDICT()
    extracted = _math_glyphs(page, d)
    m = tuple(page.rotation_matrix)
    upright = m == (1, 0, 0, 1, 0, 0)
    rect = page.rect
    items: list[_Item] = []
    aside: list[_Item] = []
    chars = 0
    slanted = set()
    shown_words: dict = {}
    for bi, b in enumerate(d.get("blocks", ())):  # bi, li: the numbers extractWORDS gives them
        if b.get("type") != 0:
            continue
        lines: list[_Line] = []
        sideways: list[_Line] = []
        for li, ln in enumerate(b.get("lines", ())):
            shown = _shown_texts(ln)
            line = _make_line(ln, None if upright else m, shown)
            if line is None:
                continue
            if (words := _shown_words(ln, shown, extracted.get((bi, li)))) is not None:
                shown_words[(bi, li)] = words
            chars += line.chars
            dx, dy = ln.get("dir", (1, 0))
            # pymupdf reports boxes and directions unrotated; the page's rotation turns them upright
            across = dx * m[0] + dy * m[2]
            (lines if across > 0.9 else sideways).append(line)
            if 0.2 < abs(across) < 0.9:  # a watermark across the page: no table's cell text
                slanted.add((bi, li))
        if lines:
            items.append(_make_item(lines))
        if sideways:
            aside.append(_make_item(sideways))
    return _Page(
        number,
        rect.width,
        rect.height,
        items,
        aside,
        chars,
        slanted=frozenset(slanted),
        shown_words=shown_words,
    )


def _math_glyphs(page, d: dict) -> dict:
    """Put the characters of TeX math glyphs (``_TEX_MATH_FONT``) that MuPDF read as U+FFFD into the
    spans of ``d`` (the page's ``extractDICT``), each by its code and its font's encoding: a glyph
    named by position (``/C0``) or a code of the font's own encoding is that position of TeX's
    OMS or OMX. Returns the span texts as extracted of each line it changed, by (block, line)."""
    todo = [
        (bi, li, si)
        for bi, b in enumerate(d.get("blocks", ()))
        for li, ln in enumerate(b.get("lines", ()))
        for si, s in enumerate(ln.get("spans", ()))
        if "\ufffd" in s.get("text", "") and _TEX_MATH_FONT.search(s.get("font", ""))
    ]
    if not todo:
        return {}
    import pymupdf

    # the spans again with the codes MuPDF could not map kept (U+FFFD otherwise), found by place
    flags = (
        pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
    )
    raw = {
        (s.get("font"), round(s["bbox"][0], 1), round(s["bbox"][1], 1)): s.get("chars", ())
        for b in page.get_textpage(flags=flags).extractRAWDICT().get("blocks", ())
        for ln in b.get("lines", ())
        for s in ln.get("spans", ())
    }
    names = _glyph_names(page)
    out: dict = {}
    for bi, li, si in todo:
        span = d["blocks"][bi]["lines"][li]["spans"][si]
        text = span["text"]
        font = span.get("font", "")
        chars = raw.get((font, round(span["bbox"][0], 1), round(span["bbox"][1], 1)), ())
        glyphs = names.get(font)
        if glyphs is None or len(chars) != len(text):
            continue  # a CID font's codes are glyph numbers of its own, no TeX positions
        table = _OMX if _TEX_MATH_FONT.search(font)["ex"] else _OMS
        shown = []
        for t, ch in zip(text, chars, strict=True):
            if t == "\ufffd" and ch.get("c"):
                code = ord(ch["c"])
                named = _GLYPH_POSITION.fullmatch(glyphs.get(code, ""))
                position = int(named[1]) if named else code if code not in glyphs else -1
                t = table[position] if 0 <= position < len(table) else t
            shown.append(t)
        line = d["blocks"][bi]["lines"][li]
        out.setdefault((bi, li), [s.get("text", "") for s in line["spans"]])
        span["text"] = "".join(shown)
    return out


def _glyph_names(page) -> dict[str, dict[int, str]]:
    """The glyph names that the encodings of a page's TeX math fonts of one byte a code (Type 1,
    TrueType, Type 3; not a CID font's ``Type0``) give codes (``/Differences``), by font name as the
    page's spans name it (no subset prefix)."""
    out: dict[str, dict[int, str]] = {}
    doc = page.parent
    for xref, _, kind, basefont, *_ in page.get_fonts(full=True):
        name = basefont.split("+", 1)[-1]
        if kind == "Type0" or not _TEX_MATH_FONT.search(name):
            continue
        found, value = doc.xref_get_key(xref, "Encoding/Differences")
        names: dict[int, str] = {}
        if found == "array":
            code = 0
            for token in value.strip("[]").replace("/", " /").split():
                if token.startswith("/"):
                    names[code] = token[1:]
                    code += 1
                elif token.lstrip("-").isdigit():
                    code = int(token)
        out.setdefault(name, names)
    return out


def _raised(ln: dict, i: int) -> bool:
    """Whether span ``i`` of line ``ln`` is a footnote mark or an exponent: flagged superscript,
    digits, set smaller than the text it follows with no space between, and above its baseline."""
    spans = ln.get("spans", ())
    s = spans[i]
    if not s.get("flags", 0) & _SUPERSCRIPT_FLAG or not _RAISED.fullmatch(s.get("text", "")) or not i:
        return False
    before = spans[i - 1]
    text, size = before.get("text", ""), before.get("size", 0)
    if not text or text[-1].isspace() or s.get("size", 0) >= 0.85 * size:
        return False
    dx, dy = ln.get("dir", (1, 0))
    (bx, by), (sx, sy) = before.get("origin", (0, 0)), s.get("origin", (0, 0))
    return (by - sy) * dx - (bx - sx) * dy > 0.1 * size  # raised along the line's up; a subscript is lower


def _shown_texts(ln: dict) -> list[str]:
    """The texts of a line's spans as shown: a raised mark as superscript characters (``_raised``)."""
    spans = ln.get("spans", ())
    if not any(s.get("flags", 0) & _SUPERSCRIPT_FLAG for s in spans):
        return [s.get("text", "") for s in spans]
    return [
        t.translate(_SUPERSCRIPTS) if _raised(ln, i) else t
        for i, t in enumerate(s.get("text", "") for s in spans)
    ]


def _shown_words(ln: dict, shown: list[str], extracted: list[str] | None = None) -> dict | None:
    """The words of a line that its spans as shown (``shown``) change, as extracted (``extracted``:
    its span texts before ``_math_glyphs``) and as shown; None where none changes."""
    texts = extracted if extracted is not None else [s.get("text", "") for s in ln.get("spans", ())]
    raw = "".join(texts).split()
    words = {a: b for a, b in zip(raw, "".join(shown).split(), strict=False) if a != b}
    return words or None


@functools.lru_cache(maxsize=1024)
def _font_style(font: str) -> tuple[bool, bool]:
    """Whether a font's name says bold, and typewriter (a page has a handful of fonts, read per span)."""
    return bool(_BOLD_FONT.search(font)), bool(TYPEWRITER_FACE.search(font))


def _make_line(ln: dict, m: tuple | None, shown: list[str] | None = None) -> _Line | None:
    """A line of ``extractDICT`` (``shown``: its spans' texts as shown, ``_shown_texts``)."""
    if shown is None:
        shown = _shown_texts(ln)
    parts = []
    sizes: dict[float, int] = {}
    n = bold = mono_chars = 0
    for s, t in zip(ln.get("spans", ()), shown, strict=True):
        parts.append(t)
        k = len("".join(t.split()))
        if not k:
            continue
        n += k
        size = round(s.get("size", 0) * 2) / 2
        sizes[size] = sizes.get(size, 0) + k
        flags = s.get("flags", 0)
        font_bold, font_mono = _font_style(str(s.get("font", "")))
        if flags & _BOLD_FLAG or font_bold:
            bold += k
        if flags & _MONO_FLAG or font_mono:
            mono_chars += k
    if not n:
        return None
    raw = clean_text("".join(parts)).replace("\u00a0", " ")
    mono = mono_chars >= 0.8 * n
    # code keeps the spaces that align its columns; a paragraph's lines are squashed when joined
    text = raw.strip().replace("\n", " ") if mono else squash(raw)
    if not text:
        return None
    x0, y0, x1, y1 = ln["bbox"]
    if m is not None:
        xa, ya = x0 * m[0] + y0 * m[2] + m[4], x0 * m[1] + y0 * m[3] + m[5]
        xb, yb = x1 * m[0] + y1 * m[2] + m[4], x1 * m[1] + y1 * m[3] + m[5]
        x0, y0, x1, y1 = min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)
    size = max(sizes, key=sizes.__getitem__)  # the first of the most common, as Counter.most_common
    lead = len(raw) - len(raw.lstrip(" ")) if mono else 0
    return _Line(text, x0, y0, x1, y1, size, n, bold, mono_chars, lead)


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


def _pages_without_text(pymupdf, doc, pages: list[_Page], read: set[int]) -> tuple[list[int], bool]:
    """Pages with images or drawings but no text (or a few characters over a full-page image),
    those OCR found text on (``read``) aside.

    Returns those page numbers and whether any of them holds an image (a scan, not vector art).
    """
    found, scanned = [], False
    for page in pages:
        if page.chars >= 30 or not page.width or page.number in read:
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
                elif _paints(doc, p, 20) >= 20:
                    found.append(page.number)
            elif cover >= 0.5:  # a scan with a stamped page number or a few OCR crumbs
                found.append(page.number)
                scanned = True
        except Exception as e:
            log.debug("pdf page %d: image check failed: %s", page.number, e)
    return found, scanned


# path-painting operators (fill, stroke, both) as tokens of a content stream
_PAINT_OP = re.compile(rb"(?:(?<=[\s\])>])|^)(?:f\*?|F|S|s|B\*?|b\*?)(?=[\s/\[(<%]|$)")
_PAINT_BYTES = 4 << 20  # most content-stream bytes read to count a page's drawn paths
_PAINT_FORMS = 64  # most form XObjects of a page read for it


def _paints(doc, p, enough: int) -> int:
    """Paths painted by page ``p``'s content and its form XObjects, counted up to ``enough``.

    A count of operators in the streams, bounded by bytes and forms read: running the page's
    drawing commands (``get_cdrawings``) to count them costs tenths of a second on vector art.
    """
    n = read = 0
    streams = [lambda: p.read_contents()]
    streams += [lambda x=x: doc.xref_stream(x) for x, *_ in p.get_xobjects()[:_PAINT_FORMS]]
    for stream in streams:
        data = stream() or b""
        data = data[: max(0, _PAINT_BYTES - read)]
        read += len(data)
        for _ in _PAINT_OP.finditer(data):
            n += 1
            if n >= enough:
                return n
        if read >= _PAINT_BYTES:
            break
    return n


# ---------------------------------------------------------------------------------------------------
# OCR: pages without a usable text layer (raychunk.parse.ocr decides and reads)


def _ocr_reader(pymupdf, doc, options):
    if options.ocr == "never":
        return None
    from raychunk.parse.ocr import PageReader

    return PageReader(
        pymupdf, engine=options.ocr_engine, dpi=options.ocr_dpi, paints=lambda p: _paints(doc, p, 20)
    )


def _page_text(p: _Page) -> str:
    return "\n".join(ln.text for item in p.items + p.aside for ln in item.lines)


def _ocr_page(p: _Page, blocks) -> tuple[_Page, list[Word]]:
    """The page as OCR read it (``raychunk.parse.ocr.OcrBlock``s): one item per paragraph, and its
    words for the table finder. Bold is not read (the engines do not say)."""
    items, words = [], []
    for k, b in enumerate(blocks):
        lines = []
        for j, ln in enumerate(b.lines):
            text = squash(clean_text(ln.text))
            n = len("".join(text.split()))
            if n:
                lines.append(_Line(text, ln.x0, ln.y0, ln.x1, ln.y1, max(1.0, ln.size), n, 0))
                words += [Word(*box, w, (k, j)) for box, w in ln.words]
        if lines:
            items.append(_make_item(lines))
    chars = sum(it.chars for it in items)
    return _Page(p.number, p.width, p.height, items, [], chars), words


def _no_text_reason(no_text: list[int], scanned: bool, has_text: bool, reader, options) -> str:
    if reader is not None and reader.needed and not reader.missing and set(no_text) <= set(reader.empty):
        engine = options.ocr_engine
        if not has_text:
            return f"scanned page(s): OCR ({engine}) found no text"
        return f"{_pages_have(no_text)} no text layer and OCR ({engine}) found none"
    if not scanned and not (reader and reader.needed):
        if not has_text:
            return "no text layer and no images: text drawn as vector outlines?"
        return f"{_pages_have(no_text)} no text layer (scanned, needs OCR)"
    why = "parse.ocr is never" if reader is None else reader.missing
    if not has_text:
        return "scanned page(s), needs OCR" + (f": {why}" if why else "")
    return f"{_pages_have(no_text)} no text layer (scanned, needs OCR{f': {why}' if why else ''})"


def _pages_have(numbers: list[int]) -> str:
    word, verb = ("page", "has") if len(numbers) == 1 else ("pages", "have")
    return f"{word} {_ranges(numbers)} {verb}"


# ---------------------------------------------------------------------------------------------------
# tables


def _page_tables(page, textpage, p: _Page, options, ocr_words=None) -> tuple[list[_Table], str]:
    """The tables on a page, and why it was not searched ("" when it was).

    Pages whose text never sits side by side have none. Others get the ruled finder (cells closed
    by drawn lines; a grid framing pictures is a figure) and then, unless the page has form fields,
    the aligned one (columns of text between rules, or 4+ rows of short phrases in 3+ columns) on
    the text left over. Both are bounded by ``_CAPS``, not by time. An OCR'd page (``ocr_words``)
    has no text layer for the rules to frame: its words are searched for aligned columns only.
    """
    if options.pdf_tables == "auto":
        rows: dict[int, int] = {}
        for item in p.items:
            for ln in item.lines:
                k = round((ln.y0 + ln.y1) / 6)
                rows[k] = rows.get(k, 0) + 1
        if sum(1 for n in rows.values() if n >= 2) < 2:
            return [], ""
    if ocr_words is not None:
        try:
            found = aligned_tables(ocr_words, [], p.width, _CAPS, [], p.height, [])
        except TooMuch as e:
            return [], str(e)
        return [t for t in map(_table_of, found) if t is not None], ""
    m = tuple(page.rotation_matrix)
    try:
        with _no_cycle_collection():  # tens of thousands of short-lived, cycle-free objects
            hs, vs = rules(page.get_cdrawings(), m, _CAPS)
        words = page_words(textpage, m, skip=p.slanted, shown=p.shown_words)
        found = ruled_tables(hs, vs, words, _CAPS)
        if found:
            found = without_pictures(found, [im["bbox"] for im in page.get_image_info()], m)
        if page.first_widget is None:  # text set around form fields is a form, not a table
            found += aligned_tables(words, hs, p.width, _CAPS, [f.bbox for f in found], p.height, vs)
    except TooMuch as e:
        return [], str(e)
    return [t for t in map(_table_of, found) if t is not None], ""


@contextmanager
def _no_cycle_collection():
    """Pause Python's cycle collector: a page's drawings are read as tens of thousands of small
    tuples and dicts, freed by reference counting, and the collections they trigger (each a walk
    over every live object) cost more than reading them. Same objects, same results, only faster."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _table_notes(skipped: dict[str, list[int]]) -> list[str]:
    return [
        f"page{'s' * (len(numbers) > 1)} {_ranges(numbers)} not searched for tables ({why})"
        for why, numbers in sorted(skipped.items())
    ]


def _cell(value) -> str:
    """A cell's text on one line; the Symbol font's bullet (private-use U+F0B7, as Word writes a
    bulleted line in a cell) as the bullet it shows."""
    if value is None:
        return ""
    return squash(_CJK_WRAP.sub("", clean_text(str(value))).replace("\uf0b7", "\u2022"))


def _table_of(found: Found) -> _Table | None:
    rows = [[_cell(c) for c in row] for row in found.rows]
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
    header_rows = found.header_rows
    if header_rows is None:
        # the first row is the header unless it is all numbers (a data row)
        header_rows = 0 if all(re.fullmatch(r"[\d\s.,%+\-−()$€£]*", c) for c in rows[0]) else 1
    header_rows = _header_depth(rows, header_rows)
    return _Table(tuple(tuple(r) for r in rows), header_rows, found.bbox)


def _header_depth(rows: list[list[str]], header_rows: int) -> int:
    """The header grown over the rows under it that leave the row-label column empty while the body
    fills it (``| | 7 ft END SIDE | | 10 ft END SIDE |`` under ``| Height | LOAD RADIUS | |``): the
    second and third lines of a header whose cells span columns, at most 3 rows in all.

    >>> _header_depth([["h", "r", ""], ["", "5 ft", "10 ft"], ["1", "a", "b"], ["2", "c", "d"]], 1)
    2
    >>> _header_depth([["h", "r"], ["", "x"], ["", "y"], ["1", "a"]], 1)
    1
    """
    if header_rows != 1:
        return header_rows
    depth = 1
    while depth < min(3, len(rows) - 2) and not rows[depth][0] and any(rows[depth][1:]):
        depth += 1
    body = rows[depth:]
    if depth == 1 or sum(bool(r[0]) for r in body) < 0.8 * len(body):
        return 1
    return depth


# ---------------------------------------------------------------------------------------------------
# reading order and pieces


def _page_pieces(page: _Page, tables: list[_Table], *, code: bool = True) -> list[_Piece]:
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
            pieces.extend(_split_block(item, page.number, code=code))
    return _typewriter_blocks(pieces)


def _reading_order(items: list[_Item], width: float) -> list[_Item]:
    """Top to bottom, region by region: wide empty bands across the page (three lines' height and
    more) part regions that may set their columns differently. In a region of columns, blocks
    across every column (and headings set alone between two bands of columns) cut it into bands,
    and each band reads its columns left to right, each top to bottom."""
    regions = _regions(items)
    page = _gutters(items, width) if len(regions) > 1 and len(items) >= 3 and width else []
    return [it for region in regions for it in _region_order(region, width, page)]


def _regions(items: list[_Item]) -> list[list[_Item]]:
    """``items`` parted where no block reaches across an empty band at least three times the
    page's usual line height (24 points at the least)."""
    heights = sorted(ln.height for it in items for ln in it.lines)
    if len(items) < 2 or not heights:
        return [items]
    gap = max(24.0, 3 * heights[len(heights) // 2])
    out: list[list[_Item]] = []
    reach = -math.inf
    for it in sorted(items, key=lambda it: it.y0):
        if not out or it.y0 - reach >= gap:
            out.append([])
        out[-1].append(it)
        reach = max(reach, it.y1)
    return out


def _region_order(items: list[_Item], width: float, page: list[float]) -> list[_Item]:
    """One region's order: its own columns, else the page's (a region too small to show its
    columns, such as an index's last few entries above the next index)."""
    if len(items) < 2 or not width:
        return _by_rows(items)
    gutters = (_gutters(items, width) if len(items) >= 3 else []) or page
    if not gutters:
        return _by_rows(items)
    columns = len(gutters) + 1

    def column(it: _Item) -> int | None:
        """The column ``it`` lies in; None for a block across every gutter. A block across some of
        them belongs to the first column it covers."""
        first = bisect.bisect_left(gutters, it.x0 + 2)
        last = bisect.bisect_left(gutters, it.x1 - 2)
        return None if first == 0 and last == columns - 1 else first

    placed = [(it, column(it)) for it in items]
    heads = _band_headings(placed)
    spanning = sorted((it for it, c in placed if c is None or id(it) in heads), key=lambda it: it.y0)
    cut = {id(it) for it in spanning}
    tops = [it.y0 for it in spanning]
    bands = [[[] for _ in range(columns)] for _ in range(len(spanning) + 1)]
    for it, c in placed:
        if id(it) not in cut:
            bands[bisect.bisect_right(tops, it.y0)][c].append(it)
    ordered: list[_Item] = []
    for i, band in enumerate(bands):
        for col in band:
            ordered += _by_rows(col)
        if i < len(spanning):
            ordered.append(spanning[i])
    return ordered


def _gutters(items: list[_Item], width: float) -> list[float]:
    """The x of each gap between text columns, left to right; [] for a one-column (or tabular)
    page. A gap is where, across the middle of the page, the fewest characters' blocks cross: only
    those set across every column. Each column holds text of its own, beside its neighbours."""
    import numpy as np

    weight = np.array([max(1, it.chars) for it in items], dtype=np.float64)
    x0 = np.array([it.x0 for it in items])
    x1 = np.array([it.x1 for it in items])
    total = float(weight.sum())
    # across the middle of the text, not its margins (where nothing crosses)
    left, right = float(x0.min()), float(x1.max())
    xs = left + (right - left) * (0.1 + 0.8 * np.arange(161) / 160)
    cross = ((x0[None, :] < xs[:, None] - 2) & (x1[None, :] > xs[:, None] + 2)) @ weight
    # a gap has text wholly on either side (not a ragged edge, where little crosses either)
    sides = np.minimum((x1[None, :] <= xs[:, None] + 2) @ weight, (x0[None, :] >= xs[:, None] - 2) @ weight)
    between = sides >= 0.08 * total
    if not between.any():
        return []
    low = float(cross[between].min())
    if low > 0.5 * total:
        return []
    runs: list[list[float]] = []
    for x, c in zip(xs.tolist(), (between & (cross <= low + 0.03 * total)).tolist()):
        if not c:
            continue
        if runs and x - runs[-1][1] < 0.006 * (right - left):
            runs[-1][1] = x
        else:
            runs.append([x, x])
    gutters = sorted((a + b) / 2 for a, b in runs)
    mid = (left + right) / 2
    while gutters:
        columns = _columns(items, gutters)
        share = 0.15 if len(gutters) == 1 else 0.08
        widths = np.diff([left, *gutters, right])
        weak = [
            j
            for j, col in enumerate(columns)
            if sum(it.chars for it in col) < share * total
            or sum(len(it.lines) for it in col) < 4
            or widths[j] < 0.5 * widths.max()  # a form's column of values, a margin's notes
        ]
        if not weak:
            break
        j = min(weak, key=lambda j: sum(it.chars for it in columns[j]))
        # a column too small to stand: drop the gap on its side nearer the centre
        if j == 0:
            del gutters[0]
        elif j == len(gutters) or abs(gutters[j - 1] - mid) < abs(gutters[j] - mid):
            del gutters[j - 1]
        else:
            del gutters[j]
    if not gutters:
        return []
    columns = _columns(items, gutters)
    for one, other in zip(columns, columns[1:]):
        # side by side, not one above the other
        if min(max(it.y1 for it in one), max(it.y1 for it in other)) <= max(
            min(it.y0 for it in one), min(it.y0 for it in other)
        ):
            return []
        # rows of short cells that share their tops are a table or a form, which reads row by row
        # (paragraphs set on one baseline grid share some tops too)
        tops = sorted(it.y0 for it in other)
        cells = sum(1 for it in one if len(it.lines) <= 3 and _near(tops, it.y0, 2))
        if len(one) >= 4 and cells >= 0.5 * len(one):
            return []
    return gutters


def _columns(items: list[_Item], gutters: list[float]) -> list[list[_Item]]:
    """The blocks that lie wholly in each column between ``gutters``."""
    edges = [-math.inf, *gutters, math.inf]
    return [[it for it in items if it.x0 >= lo - 2 and it.x1 <= hi + 2] for lo, hi in zip(edges, edges[1:])]


def _band_headings(placed: list[tuple[_Item, int | None]]) -> set[int]:
    """The ids of headings set between two bands of columns, or over them, too short to reach
    past the column they sit in: a block of one or two lines in bold or larger type with nothing
    beside it, where every other column starts below it, or pauses for it (text above and below,
    after a gap wider than its own between blocks). A title block in a page's corner is read
    before the columns under it."""
    body = _body_size([it for it, _ in placed])
    if body is None:
        return set()
    across = [it for it, c in placed if c is None]
    found = set()
    for it, c in placed:
        if c is None or not it.lines or len(it.lines) > 2:
            continue
        if not all(ln.bold or ln.size >= 1.15 * body for ln in it.lines):
            continue
        if any(o is not it and o.y0 < it.y1 and o.y1 > it.y0 for o, _ in placed):
            continue
        # the band it sits in, between the blocks across every column above and below it
        top = max((o.y1 for o in across if o.y1 <= it.y0), default=-math.inf)
        bottom = min((o.y0 for o in across if o.y0 >= it.y1), default=math.inf)
        by_column: dict[int, list[_Item]] = {}
        for o, k in placed:
            if k is not None and k != c and o.y0 >= top and o.y1 <= bottom:
                by_column.setdefault(k, []).append(o)
        others = list(by_column.values())
        own = min((o.y0 for o, k in placed if k == c and o.y0 >= it.y1 and o.y1 <= bottom), default=None)
        if (
            not others
            or own is None
            or not all(_pauses(col, it, own) or all(o.y0 >= it.y1 for o in col) for col in others)
        ):
            continue
        found.add(id(it))
    return found


def _pauses(col: list[_Item], head: _Item, own: float) -> bool:
    """Whether ``col`` has text above and below ``head``'s row, with a gap there wider than any
    between its other blocks, and goes on where ``head``'s own column does (at ``own``)."""
    above = [it.y1 for it in col if it.y1 <= head.y0]
    below = [it.y0 for it in col if it.y0 >= head.y1]
    if not above or not below or min(below) > own + 2 * (head.y1 - head.y0) + 6:
        return False
    gap = min(below) - max(above)
    ys = sorted((it.y0, it.y1) for it in col)
    usual = max((b[0] - a[1] for a, b in zip(ys, ys[1:]) if b[0] - a[1] < gap), default=0.0)
    return gap > usual + (head.y1 - head.y0)


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


def _split_block(item: _Item, page: int, *, code: bool = True) -> list[_Piece]:
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
                prev.mono_chars + ln.mono_chars,
                prev.lead,
            )
        else:
            rows.append(ln)

    gaps = sorted(b.y0 - a.y1 for a, b in zip(rows, rows[1:]))
    usual = max(0.0, gaps[len(gaps) // 2]) if len(gaps) >= 2 else None  # lines side by side overlap
    code, whole = _code_rows(rows) if code else (set(), False)
    if whole:
        fallback = _split_block(item, page, code=False)
        return [_Piece("code?", rows, (page,), first_in_block=True, fallback=fallback)]
    pieces: list[_Piece] = []
    pending_marker = ""
    for i, ln in enumerate(rows):
        if i in code:
            cur = pieces[-1] if pieces else None
            if cur is not None and cur.kind == "code" and i - 1 in code:
                cur.lines.append(ln)
            else:
                pieces.append(_Piece("code", [ln], (page,), first_in_block=not pieces))
            continue
        if _LONE_BULLET.match(ln.text):  # a bullet set apart from its text: attach it to the next line
            pending_marker = ln.text
            continue
        if pending_marker:
            ln = replace(ln, text=f"{pending_marker} {ln.text}")
            pending_marker = ""
        marker = _marker(ln.text)
        cur = pieces[-1] if pieces else None
        if (
            cur is not None
            and cur.kind != "code"
            and not marker
            and not _style_break(cur, ln)
            and not _paragraph_gap(cur, ln, usual)
        ):
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


def _code_rows(rows: list[_Line]) -> tuple[set[int], bool]:
    """Rows of a block that are code: lines set in a typewriter face, in runs that a typesetter
    sets apart from the text (indented past it, or two lines and more that do not carry on a
    sentence), that are not only addresses (a footnote's URL broken over lines) or items of a
    bulleted list, and that the text after them is not indented past (the terms of a definition
    list). And whether the whole block is such lines, which its neighbours decide
    (``_typewriter_blocks``): a listing with blank lines comes as blocks of a line or a few."""
    mono = [ln.mono and not _TEXT_BULLET.match(ln.text) for ln in rows]
    if all(mono) and not _addresses(rows):
        return set(), True
    code: set[int] = set()
    i = 0
    while i < len(rows):
        if not mono[i]:
            i += 1
            continue
        j = i
        while j < len(rows) and mono[j]:
            j += 1
        run = rows[i:j]
        x = min(ln.x0 for ln in run)
        before = next((rows[k] for k in range(i - 1, -1, -1) if not mono[k]), None)
        after = rows[j] if j < len(rows) else None
        text = after or before
        indented = text is not None and x > text.x0 + 4
        terms = after is not None and after.x0 > x + 4
        carries_on = before is not None and _carries_on(before)
        lone = len(run) == 1
        if (
            not _addresses(run)
            and not terms
            and not (lone and carries_on)
            and (indented or not (lone or carries_on))
        ):
            code.update(range(i, j))
        i = j
    return code, False


def _addresses(lines: list[_Line]) -> bool:
    return all(len(_MARKED.sub("", ln.text, count=1).split()) == 1 for ln in lines) and any(
        _ADDRESS.search(ln.text) for ln in lines
    )


def _typewriter_blocks(pieces: list[_Piece]) -> list[_Piece]:
    """Blocks wholly in a typewriter face (``code?``) are code next to code they are not less
    indented than, after text that ends in a colon, or three lines and more, or two indented past
    the text before them, once the terms among them are told apart (``_terms``). Else what they
    are as text (a command named on a line of its own, a list of files)."""
    _terms(pieces)
    for i, p in enumerate(pieces):
        if p.kind != "code?":
            continue
        j = i
        while j < len(pieces) and pieces[j].kind == "code?":
            j += 1
        run = pieces[i:j]
        x = min(ln.x0 for q in run for ln in q.lines)
        lines = sum(len(q.lines) for q in run)
        before = pieces[i - 1] if i else None
        after = pieces[j] if j < len(pieces) else None
        joins = any(
            q is not None and q.kind == "code" and x >= min(ln.x0 for ln in q.lines) - 2
            for q in (before, after)
        )
        text = before if before is not None and before.kind in ("paragraph", "list_item") else None
        indented = lines >= 2 and text is not None and x > min(ln.x0 for ln in text.lines) + 4
        shown = text is not None and text.lines[-1].text.rstrip()[-1:] == ":"  # "... as follows:"
        code = joins or indented or shown or lines >= 3
        for q in run:
            q.kind = "code" if code else "text"
    pieces = [r for p in pieces for r in (p.fallback if p.kind == "text" else [p])]
    for before, p in zip(pieces, pieces[1:]):
        if p.kind == "code" and len(p.lines) == 1 and p.first_in_block and before.kind == "paragraph":
            tail = before.lines[-1]
            if tail.text.count("(") > tail.text.count(")"):  # a prototype's last parameters
                p.kind = "paragraph"
    return pieces


def _terms(pieces: list[_Piece]) -> None:
    """In a run of ``code?`` blocks, a line (or two at one margin) that the text after the run is
    indented past, and the blocks around it in the run too, is a term over its entry (a builtin's
    name over its synopsis and description): text, not code."""
    i = 0
    while i < len(pieces):
        if pieces[i].kind != "code?":
            i += 1
            continue
        j = i
        while j < len(pieces) and pieces[j].kind == "code?":
            j += 1
        after = pieces[j] if j < len(pieces) and pieces[j].kind in ("paragraph", "list_item") else None
        k = i
        while k < j:
            x = pieces[k].lines[0].x0
            m = k  # a term and the terms under it at its margin (``@item`` and ``@itemx``)
            while m < j and len(pieces[m].lines) <= 2 and all(abs(ln.x0 - x) <= 2 for ln in pieces[m].lines):
                m += 1
            if (
                0 < sum(len(q.lines) for q in pieces[k:m]) <= 2  # more at one margin is a listing
                and after is not None
                and after.lines[0].x0 > x + 4
                and (m == j or min(ln.x0 for ln in pieces[m].lines) > x + 4)
                and (k == i or min(ln.x0 for ln in pieces[k - 1].lines) > x + 4)
            ):
                for q in pieces[k:m]:
                    q.kind = "text"
            k = max(m, k + 1)
        i = j


def _carries_on(line: _Line) -> bool:
    return line.text.rstrip("\"'”’)")[-1:] not in ".:!?;"


def _code_text(lines: list[_Line]) -> str:
    """A code block's lines as set: each indented by its offset from the leftmost line in the
    face's character width, a blank line where a line's worth of space is left between two."""
    widths = sorted((ln.x1 - ln.x0) / (len(ln.text) + ln.lead) for ln in lines if len(ln.text) >= 4)
    width = widths[len(widths) // 2] if widths else max(1.0, 0.6 * lines[0].size)
    steps = sorted(b.y0 - a.y0 for a, b in zip(lines, lines[1:]) if b.y0 > a.y0)
    pitch = steps[len(steps) // 4] if steps else 1.2 * lines[0].height
    out: list[str] = []
    start = 0
    for k in range(1, len(lines) + 1):
        if k < len(lines) and lines[k].y0 > lines[k - 1].y0:
            continue
        part = lines[start:k]  # a page's or a column's part of the block: its own left edge
        left = min(ln.x0 for ln in part)
        for n, ln in enumerate(part):
            if n and ln.y0 - part[n - 1].y0 > 1.6 * pitch:
                out.append("")
            out.append(" " * (round((ln.x0 - left) / width) + ln.lead) + ln.text.strip())
        start = k
    return "\n".join(out)


def _marker(text: str) -> str:
    m = _GLYPH_BULLET.match(text) or OWN_NUMBER.match(text)
    return m.group(0).strip() if m else ""


def _style_break(cur: _Piece, ln: _Line) -> bool:
    prev = cur.lines[-1]
    if prev.text[-1:] in ",-\u00ad" or ln.text[:1].islower():
        return False  # the sentence goes on
    if max(prev.size, ln.size) > 1.08 * max(0.1, min(prev.size, ln.size)):
        return True
    # a bold heading line on top of its (plain) paragraph, grouped into one block by pymupdf
    return prev.bold and not ln.bold and all(x.bold for x in cur.lines) and len(cur.lines) <= 2


def _paragraph_gap(cur: _Piece, ln: _Line, usual: float | None) -> bool:
    """A sentence ended, and the next begins after more space than the block puts between its
    lines: two paragraphs that pymupdf read as one block."""
    prev = cur.lines[-1]
    if usual is None or ln.y0 - prev.y1 <= usual + 0.5 * ln.height:
        return False
    return prev.text.rstrip("\"'”’)")[-1:] in ".!?:" and ln.text[:1].isupper()


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
            and prev.kind == p.kind == "code"
            and (
                p.page == prev.pages[-1] + 1 or p.page == prev.pages[-1] and p.lines[0].y0 > prev.lines[-1].y0
            )
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
        if p.kind == "code":
            p.text = _code_text(p.lines)
        elif p.kind != "table":
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
    body = _body_size(pieces)
    if body is None:
        return
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
    # a bold band in the style of two or more of the headings found is one too, over short rows
    # ("ENGINE" over "Model Yanmar 4TNV98C" where "DRIVETRAIN" is over longer ones)
    styles = Counter((round(s * 2) / 2, b) for s, b in candidates.values() if b)
    for i, p in enumerate(pieces):
        if i in candidates or p.kind not in ("paragraph", "list_item") or not _heading_shaped(p):
            continue
        size = max(ln.size for ln in p.lines)
        if (
            styles[(round(size * 2) / 2, True)] >= 2
            and all(ln.bold for ln in p.lines)
            and p.first_in_block
            and len(p.lines) <= 2
            and i + 1 < len(pieces)
            and pieces[i + 1].page == p.page
            and pieces[i + 1].kind in ("paragraph", "list_item")
            and not all(ln.bold for ln in pieces[i + 1].lines)
        ):
            candidates[i] = (size, True)
    keys = sorted({(round(s * 2) / 2, b) for s, b in candidates.values()}, key=lambda k: (-k[0], not k[1]))
    rank = {k: min(6, i + 1) for i, k in enumerate(keys)}
    for i, (s, b) in candidates.items():
        pieces[i].kind = "heading"
        pieces[i].level = rank[(round(s * 2) / 2, b)]


def _cover_title(pieces: list[_Piece]) -> str:
    """The first page's title when the headings did not take it (an outline starts at the first
    section): of the heading-shaped pieces on page 1 before any heading, the one in the largest type,
    alone at that size and at least ``_HEADING_RATIO`` over the body. Without it the
    title falls back to the first heading, a section ("INTRODUCTION") named as every chunk's parent."""
    body = _body_size(pieces)
    cover = []  # (its largest type, the piece)
    for p in pieces:
        if p.kind == "heading" or p.page != 1:
            break
        if p.kind in ("paragraph", "list_item") and p.lines and len(p.lines) <= 3 and _heading_shaped(p):
            cover.append((max(ln.size for ln in p.lines), p))
    if body is None or not cover:
        return ""
    size, best = max(cover, key=lambda c: c[0])
    if (
        size < _HEADING_RATIO * body
        or sum(s >= size for s, _ in cover) > 1
        or _SECTION_NAME.fullmatch(best.text.strip())
    ):
        return ""
    return squash(best.text)[:200]


def _top_title(pieces: list[_Piece]) -> str:
    """A heading of a higher level set wholly above the first heading on its page, when reading
    order put a side column's section ("DRIVETRAIN") before the title across the top ("CX57C"); else ""
    (the first heading then names the document, ``_common.finish``)."""
    heads = [p for p in pieces if p.kind == "heading" and p.lines]
    if not heads:
        return ""
    first = heads[0]
    top = min((p for p in heads if p.page == first.page), key=lambda p: p.lines[0].y0)
    if top is first or top.level >= first.level or top.lines[0].y1 > first.lines[0].y0:
        return ""
    return squash(top.text)[:200]


def _body_size(pieces: list[_Piece] | list[_Item]) -> float | None:
    """The type size most of the characters of ``pieces`` (or blocks) are set in, None when they
    have no lines."""
    sizes: Counter = Counter()
    for p in pieces:
        for ln in p.lines:
            sizes[ln.size] += ln.chars
    return sizes.most_common(1)[0][0] if sizes else None


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


def _followed_by_text(pieces: list[_Piece], i: int, *, sub: bool = True) -> bool:
    """Whether running text (or a table) follows piece ``i``; with ``sub``, also a subheading in
    smaller bold type that running text follows ("DIMENSIONS", then "5 ft 3 in Arm", then rows)."""
    nxt = pieces[i + 1] if i + 1 < len(pieces) else None
    if nxt is None or nxt.page != pieces[i].page and nxt.page != pieces[i].pages[-1] + 1:
        return False
    if nxt.kind == "table":
        return True
    if nxt.kind not in ("paragraph", "list_item"):
        return False
    if not all(ln.bold for ln in nxt.lines):
        return len(nxt.text.split()) >= 6 or nxt.kind == "list_item"
    return (
        sub
        and len(nxt.lines) <= 2
        and _heading_shaped(nxt)
        and max(ln.size for ln in nxt.lines) < max(ln.size for ln in pieces[i].lines)
        and _followed_by_text(pieces, i + 1, sub=False)
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
        elif p.kind == "code":
            stream.add("code", text, start, end, pages=p.pages)
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
