"""The parse stage: bytes in, a document record and its block stream out. It never raises.

>>> doc = parse_document(b"# Title\\n\\nHello.\\n", "a.md")
>>> [(b.kind, b.text) for b in doc.blocks]
[('heading', 'Title'), ('paragraph', 'Hello.')]
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from raychunk.document import Document, ParsedDocument, content_hash
from raychunk.parse._common import add_reason
from raychunk.parse.compressed import (
    BOMB_FLOOR_BYTES,
    CorruptData,
    TooLarge,
    compression_of,
    decompress,
    inner_name,
)
from raychunk.parse.detect import BinaryContent, decode_text, format_from_name, sniff_content
from raychunk.parse.markup import MARKUPS
from raychunk.parse.office_formats import FORMATS as OFFICE_FORMATS

__all__ = ["ParseOptions", "parse_document", "parse_path"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """Knobs of the parse stage.

    ``pdf_tables``: ``auto`` searches for tables (cells closed by drawn lines, text set in columns)
    on pages whose text sits side by side somewhere, ``always`` on every page with text, ``never``
    not at all. The search is bounded by counts of drawn segments, lines and words per page, never
    by time, so a page gives the same tables under any load.
    A zip package (docx, pptx, xlsx, epub, odt) whose parts would decompress to more than
    ``max_unzipped_mb`` (``limits.max_unzipped_mb`` in a job), or to more than ``max_unzip_ratio``
    times its size (and more than ``compressed.BOMB_FLOOR_BYTES``), is refused before it is opened; a
    file compressed whole (gzip, bzip2, xz, zstd, lz4) is decompressed no further than those limits.
    Time and memory are bounded outside the parser, by the process running it (``raychunk.isolate``).

    ``ocr``: ``auto`` reads PDF pages (and images) without a usable text layer with ``ocr_engine``
    (``tesseract`` or ``rapidocr``: ``raychunk.parse.ocr``) from a rendering at ``ocr_dpi``;
    ``never`` leaves them ``no_text``.

    ``attachments``: the files attached to an e-mail (``.eml``, ``.msg``) are read as part of the
    message, each under a heading with its name, one level deep (an attached message's own
    attachments are named, not read); off, they are only named in the row's reason.
    """

    pdf_tables: str = "auto"
    max_unzip_ratio: float = 100.0
    max_unzipped_mb: float = 1024.0
    ocr: str = "auto"
    ocr_engine: str = "tesseract"
    ocr_dpi: float = 200.0
    attachments: bool = True

    def __post_init__(self):
        if self.pdf_tables not in ("auto", "always", "never"):
            raise ValueError(f"pdf_tables={self.pdf_tables!r}: accepted values are auto, always, never")
        if self.ocr not in ("auto", "never"):
            raise ValueError(f"ocr={self.ocr!r}: accepted values are auto, never")
        if self.ocr_engine not in ("tesseract", "rapidocr"):
            raise ValueError(f"ocr_engine={self.ocr_engine!r}: accepted values are tesseract, rapidocr")
        if not 50 <= self.ocr_dpi <= 600:
            raise ValueError(f"ocr_dpi must be between 50 and 600, got {self.ocr_dpi!r}")
        for name in ("max_unzip_ratio", "max_unzipped_mb"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")


_DESCRIBE = {
    "pdf": "a PDF",
    "docx": "a Word document",
    "pptx": "a PowerPoint deck",
    "xlsx": "an Excel workbook",
    "epub": "an EPUB book",
    "odt": "an OpenDocument text",
    "ods": "an OpenDocument spreadsheet",
    "odp": "an OpenDocument presentation",
    "ole": "a legacy Office (OLE) file",
    "gzip": "gzip-compressed data",
    "bzip2": "bzip2-compressed data",
    "xz": "xz-compressed data",
    "zstd": "zstd-compressed data",
    "lz4": "lz4-compressed data",
    "image": "an image",
    "archive": "an archive",
    "postscript": "PostScript",
    "zip": "a zip archive",
    "rtf": "an RTF document",
    "html": "HTML",
    "text": "plain text",
    "markdown": "Markdown",
    "code": "source code",
    "csv": "CSV",
    "tsv": "TSV",
    "json": "JSON",
    "jsonl": "JSON Lines",
    "notebook": "a Jupyter notebook",
    "captions": "captions (WebVTT or SRT)",
    "svg": "an SVG image",
    "eml": "an e-mail",
    "mbox": "a mailbox",
    "msg": "an Outlook message",
    "rst": "reStructuredText",
    "latex": "a LaTeX document",
    "asciidoc": "an AsciiDoc document",
    "mediawiki": "a MediaWiki page",
    **{name: what for name, (_, what, _) in MARKUPS.items()},
    "man": "a manual page",
    "info": "a GNU Info manual",
    "vimhelp": "a Vim help file",
    "perl": "Perl source",
    "docbook": "a DocBook document",
    "jats": "a JATS article",
    "xml": "XML",
    "org": "an Org document",
    "doc": "a legacy Word document",
    "xls": "a legacy Excel workbook",
    "ppt": "a legacy PowerPoint deck",
}
# What the office formats' table says of their files: an OLE container (an encrypted OOXML package
# is one too), a zip package, bytes that are not text.
_MAY_BE_OLE = {f.name for f in OFFICE_FORMATS.values() if f.ole or f.package == "ooxml"}
_PACKAGES = {f.name for f in OFFICE_FORMATS.values() if f.package}
_BINARY_FORMATS = {"pdf", "image"} | {f.name for f in OFFICE_FORMATS.values() if not f.text}
# What Word, Excel and PowerPoint open under a legacy extension as what it is, and so does raychunk
# (the row's reason says so): web pages and RTF saved as .doc, a web page's table "exported to
# Excel" as .xls, a newer file under the old name.
_OFFICE_OPENS = {
    "doc": {"rtf", "docx", "odt", "html", "eml", "text"},  # eml: a "single file web page" (MHTML)
    "xls": {"xlsx", "html"},
    "ppt": {"pptx"},
}


def parse_path(path: str | Path, *, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Read and parse one file. An unreadable file becomes a ``failed`` record, not an exception."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        doc = Document(
            content_hash(str(path).encode()),
            str(path),
            format_from_name(path.name) or "unknown",
            "failed",
            f"cannot read file: {e.strerror or e}",
        )
        return ParsedDocument(doc)
    return parse_document(data, str(path), options=options)


def parse_document(data: bytes, source: str, *, options: ParseOptions = ParseOptions()) -> ParsedDocument:
    """Parse one file's bytes. ``source`` is its path or URI; its extension is a hint, not the truth."""
    by_name = format_from_name(source)
    base = Document(content_hash(data), source, by_name or "unknown", "ok", bytes=len(data))
    if not data:
        return ParsedDocument(dataclasses.replace(base, status="empty", reason="zero-byte file"))
    name = source
    if (kind := compression_of(data)) is not None:
        data, status, reason = _decompressed(data, kind, options)
        if status:
            return ParsedDocument(dataclasses.replace(base, status=status, reason=_one_line(reason)))
        name = inner_name(source)
    try:
        return _dispatch(data, source, name, by_name, base, options)
    except BinaryContent as e:
        return _failed(base, f"{e} (behind a {_ext(name)} extension)" if by_name else str(e))
    except ImportError as e:
        if e.name and "pip install" not in str(e):
            return _failed(base, f"missing dependency: the Python module {e.name} is not installed")
        return _failed(base, f"missing dependency: {e}")
    except RecursionError:
        return _failed(base, "document nested too deeply to parse")
    except MemoryError:
        raise  # the process running the parse reports the memory limit
    except Exception:  # a parser bug or a library choking on hostile input: record, don't raise
        return _crashed(base, base.format, source)


def _decompressed(data: bytes, kind: str, options: ParseOptions) -> tuple[bytes, str, str]:
    """``(content, "", "")`` of a file compressed whole, else ``(b"", status, reason)``. Never more
    than a zip package may unpack to: ``max_unzipped_mb``, and past ``BOMB_FLOOR_BYTES`` no more
    than ``max_unzip_ratio`` times the file's size."""
    cap = int(options.max_unzipped_mb * 2**20)
    limit = min(cap, max(BOMB_FLOOR_BYTES, int(options.max_unzip_ratio * len(data))))
    what = _DESCRIBE[kind]
    try:
        content = decompress(data, kind, limit)
    except TooLarge:
        why = (
            f"over limits.max_unzipped_mb={options.max_unzipped_mb:g}"
            if limit == cap
            else f"over {options.max_unzip_ratio:g} times its {_mb(len(data))} MB: refusing a likely decompression bomb"
        )
        return b"", "failed", f"{what} that decompresses to more than {_mb(limit)} MB, {why}"
    except CorruptData as e:
        return b"", "failed", f"{what} that cannot be decompressed: {e}"
    if not content:
        return b"", "empty", f"{what} of zero bytes"
    if (again := compression_of(content)) is not None:
        return b"", "unsupported", f"{what} holding {_DESCRIBE[again]} again: decompress it first"
    return content, "", ""


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f}"


def _dispatch(
    data: bytes, source: str, name: str, by_name: str | None, base: Document, options: ParseOptions
):
    """Parse ``data`` as its content and ``name`` say; ``source`` is where it came from (a compressed
    file's ``name`` is its own without the compression suffix)."""
    by_content = sniff_content(data)
    opens = _OFFICE_OPENS.get(by_name or "", set())
    if by_content is None and opens and (kind := _legacy_text_format(data)) in opens:
        by_content = kind  # text under a legacy Office extension: a web page, plain text
    if by_content in opens:
        base = dataclasses.replace(base, format=by_content)
        parsed = _PARSERS[by_content](data, base, options)
        what = (
            "a web page saved as one MIME file"
            if by_content == "eml"
            else _DESCRIBE.get(by_content, by_content)
        )
        return add_reason(parsed, f"content is {what} under a {_ext(name)} name: read as one", first=True)
    if by_content == "icon":
        behind = "" if _ext(name) == ".ico" else f" behind a {_ext(name) or 'bare'} name"
        return _unsupported(base, f"content is an icon (.ico){behind}: it holds no text")
    if by_content is not None:
        fmt = _reconcile(by_name, by_content)
        if fmt is None:
            what, ext = _DESCRIBE.get(by_content, by_content), _ext(name)
            if (
                by_name is None
                or by_name == "text"
                and by_content in ("image", "archive", "zip", "postscript")
            ):
                why = (
                    f"content is {what}, not a supported document"
                    if by_name is None
                    else f"content is {what}, not text, behind a {ext} extension"
                )
                if by_content == "postscript":
                    why += ": print it to PDF (ps2pdf) to have it read"
                return _unsupported(base, why)
            return _failed(
                base, f"content is {what}, not {_DESCRIBE.get(by_name, by_name)} as the {ext} extension says"
            )
    elif by_name == "xls" and _spreadsheetml(data):
        fmt = "xls"  # an Excel 2003 XML spreadsheet, which Excel opens under .xls: read_xls reads it
    else:
        if by_name == "msg" and (kind := _text_format_of(data)) is not None:
            # .msg is Outlook's, and also a text message's (a mail saved by older clients) and a
            # program's message catalog (Tcl's msgs/el.msg): text is read as what it is
            kind = "eml" if kind == "text" and _MAIL_HEADERS.match(data[:4096]) else kind
            base = dataclasses.replace(base, format=kind)
            parsed = _PARSERS[kind](data, base, options)
            what = "an e-mail" if kind == "eml" else _DESCRIBE.get(kind, kind)
            return add_reason(
                parsed, f"content is {what}, not an Outlook message: read as {what}", first=True
            )
        if by_name in _BINARY_FORMATS:
            looks = _text_kind(data)
            return _failed(
                base,
                f"content is {looks}, not {_DESCRIBE.get(by_name, by_name)} as the {_ext(name)} extension says",
            )
        fmt = by_name or _text_format_of(data)
        if fmt is None:
            return _unsupported(
                base, f"unknown extension {_ext(name) or '(none)'} and content that is not text"
            )
    if fmt != base.format:
        base = dataclasses.replace(base, format=fmt)
    try:
        return _PARSERS[fmt](data, base, options)
    except (BinaryContent, ImportError, RecursionError, MemoryError):
        raise
    except Exception:
        return _crashed(base, fmt, source)


def _crashed(base: Document, fmt: str, source: str) -> ParsedDocument:
    """An unexpected exception: an honest reason, and the traceback in the log (INFO, which ``-v`` shows)."""
    log.info("parse of %s as %s failed", source, fmt, exc_info=True)
    what = _DESCRIBE.get(fmt, f"a .{fmt} file" if fmt != "unknown" else "a document")
    reason = (
        f"could not be parsed as {what}: the parser failed on this file; "
        f"run `raychunk -v parse {shlex.quote(source)}` for details"
    )
    return ParsedDocument(dataclasses.replace(base, status="failed", reason=" ".join(reason.split())))


def _reconcile(by_name: str | None, by_content: str) -> str | None:
    """The format to parse as, when the bytes announce a container; None on a mismatch."""
    if by_content == "ole":
        # An encrypted docx/xlsx/pptx is an OLE container: the office parser says it needs a password.
        return by_name if by_name in _MAY_BE_OLE else None
    if by_content == "zip" and by_name in _PACKAGES:
        return by_name  # a truncated or odd package: the office parser gives the precise reason
    if by_content in ("pdf", "docx", "pptx", "xlsx", "epub", "odt", "ods", "odp", "rtf", "image"):
        if by_name in (None, by_content):
            return by_content
        return None
    return None


# A message's header lines: "Name: value", one of them From, To, Subject or Date, before a blank line.
_MAIL_HEADERS = re.compile(
    rb"(?:[\x21-\x39\x3b-\x7e]+:[^\n]*\r?\n(?:[ \t][^\n]*\r?\n)*){0,30}?(?:From|To|Subject|Date):[^\n]*\r?\n",
    re.I,
)
# A mailbox starts with an envelope line ("From sender date") and a message's header lines.
_MAILBOX = re.compile(r"\s*From \S+ [^\n]*\n(?:[\w-]+:[^\n]*\n|[ \t][^\n]*\n){2}")


def _text_format_of(data: bytes) -> str | None:
    """Format of a file whose extension names none, judged by its content: html, a manual page
    (``bash.1``, ``printf.3``: roff, where ``app.log.1`` is a rotated log), DocBook or JATS (an
    ``.xml`` file of either), XML of another vocabulary, text, or None for binary."""
    from raychunk.parse.code import text_language
    from raychunk.parse.info import looks_like_info
    from raychunk.parse.man import is_man_page
    from raychunk.parse.xmldata import xml_root
    from raychunk.parse.xmldoc import xml_vocabulary

    try:
        text, _ = decode_text(data[:65536])
    except BinaryContent:
        return None
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype html", "<html")):
        return "html"
    if is_man_page(text):
        return "man"
    if "\x1f" in text and looks_like_info(text):
        return "info"
    if head.startswith("from ") and _MAILBOX.match(text):
        return "mbox"
    if head.startswith("<") and (vocabulary := xml_vocabulary(text)):
        return vocabulary
    if head.startswith("<") and (root := xml_root(text, _tail(data) if len(data) > 65536 else None)):
        return {"html": "html", "svg": "svg"}.get(root.lower(), "xml")  # XHTML, SVG by their root
    language = text_language(text)  # a script's #! line, an editor's mode line
    if language in ("org", "markdown", "rst", "perl"):
        return language
    return "code" if language else "text"


def _tail(data: bytes) -> str:
    """The end of a file read as text (its first 64 KB are what ``_text_format_of`` judges)."""
    try:
        return decode_text(data[-4096:])[0]
    except BinaryContent:
        return ""


def _spreadsheetml(data: bytes) -> bool:
    from raychunk.parse.sheets import is_spreadsheetml

    return is_spreadsheetml(data)


def _legacy_text_format(data: bytes) -> str | None:
    """What text under a legacy Office extension is: html, eml (a web page saved whole as MIME, as
    Word does), text, or None for binary."""
    kind = _text_format_of(data)
    if kind == "text":
        head = decode_text(data[:4096])[0].lstrip()[:200].lower()
        if head.startswith("mime-version:") or "<body" in head or head.startswith("<table"):
            return "eml" if head.startswith("mime-version:") else "html"
    return kind


def _text_kind(data: bytes) -> str:
    try:
        text, _ = decode_text(data[:65536])
    except BinaryContent:
        return "unrecognised binary data"
    head = text.lstrip()[:500].lower()
    if head.startswith(("<!doctype html", "<html")) or "<body" in head:
        return "HTML (an error page saved under the wrong name?)"
    return "plain text"


def _parse_text_format(parser_name: str):
    def run(data: bytes, base: Document, options: ParseOptions) -> ParsedDocument:
        text, encoding = decode_text(data, html=base.format == "html")
        if "\r" in text and "\n" not in text:  # classic Mac OS line ends: one for one, offsets kept
            text = text.replace("\r", "\n")
        base = dataclasses.replace(base, encoding=encoding)
        if not text.strip():
            return ParsedDocument(dataclasses.replace(base, status="empty", reason="only whitespace"), text)
        if base.format in ("text", "markdown") and _looks_base64(text):
            return _unsupported(base, "content is base64-encoded data, not readable text: decode it first")
        module, func = parser_name.rsplit(".", 1)
        import importlib

        return getattr(importlib.import_module(f"raychunk.parse.{module}"), func)(text, base)

    return run


_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_RUN = re.compile(r"\S+")


def _looks_base64(text: str) -> bool:
    """One unbroken run (or lines wrapped at a fixed width) of the base64 alphabet, with digits and
    both cases in it: encoded data that happens to decode as text. Reads the runs one at a time and
    stops at the first that rules it out (``split()`` would build a string per word)."""
    total, width, last, sample = 0, None, None, []
    for m in _RUN.finditer(text):
        if last is not None:  # every run but the last has the same length
            if width is None:
                width = len(last)
            elif len(last) != width:
                return False
        x = m.group()
        if not _BASE64.fullmatch(x):
            return False
        if total < 4096:
            sample.append(x)
        total += len(x)
        last = x
    if total < 40:
        return False
    head = "".join(sample)[:4096]
    return (
        any(c.isdigit() for c in head) and any(c.isupper() for c in head) and any(c.islower() for c in head)
    )


def _parse_binary_format(parser_name: str):
    def run(data: bytes, base: Document, options: ParseOptions) -> ParsedDocument:
        module, func = parser_name.rsplit(".", 1)
        import importlib

        return getattr(importlib.import_module(f"raychunk.parse.{module}"), func)(data, base, options)

    return run


_PARSERS = {
    "markdown": _parse_text_format("markdown.parse_markdown"),
    "html": _parse_text_format("html.parse_html"),
    "text": _parse_text_format("text.parse_text"),
    "code": _parse_text_format("code.parse_code"),
    "perl": _parse_text_format("perl.parse_perl"),
    "csv": _parse_text_format("records.parse_csv"),
    "tsv": _parse_text_format("records.parse_csv"),
    "json": _parse_text_format("records.parse_json"),
    "jsonl": _parse_text_format("records.parse_jsonl"),
    "notebook": _parse_text_format("notebook.parse_notebook"),
    "captions": _parse_text_format("captions.parse_captions"),
    "svg": _parse_text_format("svg.parse_svg"),
    "rst": _parse_text_format("rst.parse_rst"),
    "latex": _parse_text_format("latex.parse_latex"),
    "asciidoc": _parse_text_format("asciidoc.parse_asciidoc"),
    "mediawiki": _parse_text_format("mediawiki.parse_mediawiki"),
    **{name: _parse_text_format("markup.parse_markup") for name in MARKUPS},
    "man": _parse_text_format("man.parse_man"),
    "info": _parse_text_format("info.parse_info"),
    "docbook": _parse_text_format("xmldoc.parse_docbook"),
    "jats": _parse_text_format("xmldoc.parse_jats"),
    "xml": _parse_text_format("xmldata.parse_xml"),
    "pdf": _parse_binary_format("pdf.parse_pdf"),
    "image": _parse_binary_format("pdf.parse_image"),
    **{fmt: _parse_binary_format("office.parse_office") for fmt in OFFICE_FORMATS},
}


def _failed(base: Document, reason: str) -> ParsedDocument:
    return ParsedDocument(dataclasses.replace(base, status="failed", reason=_one_line(reason)))


def _unsupported(base: Document, reason: str) -> ParsedDocument:
    return ParsedDocument(dataclasses.replace(base, status="unsupported", reason=_one_line(reason)))


def _one_line(s: str, limit: int = 300) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _ext(source: str) -> str:
    return PurePosixPath(source).suffix.lower() or ""
