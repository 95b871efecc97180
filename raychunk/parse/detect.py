"""What a file really is: format from extension and magic bytes, and text decoding."""

from __future__ import annotations

import codecs
import io
import re
import zipfile
from pathlib import PurePosixPath

from raychunk.parse.code import LANGUAGES, named_language
from raychunk.parse.compressed import inner_name

__all__ = ["BinaryContent", "decode_text", "format_from_name", "sniff_content", "TEXT_FORMATS"]

EXTENSIONS = {
    ".pdf": "pdf",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".mdx": "markdown",  # MDX (Docusaurus, Next.js docs): Markdown with JSX and ES module lines
    ".qmd": "markdown",  # Quarto
    ".rmd": "markdown",  # R Markdown
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".csv": "csv",
    ".tsv": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".ipynb": "notebook",
    ".vtt": "captions",
    ".srt": "captions",
    ".svg": "svg",
    ".py": "code",
    ".pyi": "code",
    ".js": "code",
    ".mjs": "code",
    ".ts": "code",
    ".tsx": "code",
    ".jsx": "code",
    ".go": "code",
    ".rs": "code",
    ".java": "code",
    ".c": "code",
    ".h": "code",
    ".cc": "code",
    ".cpp": "code",
    ".hpp": "code",
    ".cs": "code",
    ".kt": "code",
    ".swift": "code",
    ".rb": "code",
    ".php": "code",
    ".scala": "code",
    ".sh": "code",
    ".bash": "code",
    ".sql": "code",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".epub": "epub",
    ".odt": "odt",
    ".ods": "ods",
    ".odp": "odp",
    ".eml": "eml",
    ".mbox": "mbox",
    ".mbx": "mbox",
    ".msg": "msg",
    ".rtf": "rtf",
    ".rst": "rst",
    ".tex": "latex",
    ".latex": "latex",
    ".ltx": "latex",
    ".adoc": "asciidoc",
    ".mediawiki": "mediawiki",
    # the markups pandoc reads for raychunk (``parse.markup.MARKUPS``)
    ".typ": "typst",
    ".textile": "textile",
    ".pod": "pod",
    ".pm": "perl",  # a module's POD and its code (raychunk.parse.perl)
    ".pl": "perl",
    ".fb2": "fb2",
    ".opml": "opml",
    ".t2t": "t2t",
    ".creole": "creole",
    ".muse": "muse",
    ".dj": "djot",
    ".djot": "djot",
    ".wiki": "mediawiki",  # where it reads as MediaWiki; another wiki's page is text (parse.mediawiki)
    ".asciidoc": "asciidoc",
    ".dbk": "docbook",
    ".docbook": "docbook",
    ".nxml": "jats",  # and either under .xml, by its root (``_text_format_of``)
    ".man": "man",  # and bash.1, printf.3: a manual page by its content (``_text_format_of``)
    ".info": "info",  # and a split manual's find.info-1 (``format_from_name``)
    ".org": "org",
    ".doc": "doc",
    ".ppt": "ppt",
    ".xls": "xls",
    # scans and screenshots: read by OCR (raychunk.parse.pdf.parse_image)
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".gif": "image",
}
TEXT_FORMATS = frozenset(
    {
        "markdown",
        "html",
        "text",
        "csv",
        "tsv",
        "json",
        "jsonl",
        "notebook",
        "captions",
        "svg",
        "code",
        "rst",
        "latex",
        "asciidoc",
        "mediawiki",
        "typst",
        "textile",
        "pod",
        "fb2",
        "opml",
        "t2t",
        "creole",
        "muse",
        "djot",
        "man",
        "info",
        "vimhelp",
        "perl",
        "docbook",
        "jats",
        "xml",
        "org",
        "eml",
        "mbox",
    }
)
# Containers a sniff can name; a text format has no magic number.
_ZIP_KINDS = {"word/": "docx", "ppt/": "pptx", "xl/": "xlsx"}
_MIMETYPES = {
    "application/epub+zip": "epub",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
}


class BinaryContent(ValueError):
    """The bytes are not text in any encoding we accept."""


def format_from_name(name: str) -> str | None:
    """The format a file's name gives it; a compressed file's is its content's (``a.md.gz``: markdown)."""
    inner = PurePosixPath(inner_name(name))
    suffix = inner.suffix.lower()
    if named_language(inner.name):
        return "code"  # Makefile, Dockerfile, CMakeLists.txt
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if suffix in LANGUAGES:
        return "code"
    return "info" if _INFO_PART.fullmatch(suffix) else None


_INFO_PART = re.compile(r"\.info-\d{1,3}")  # find.info-1: a part of a split Info manual


def sniff_content(data: bytes) -> str | None:
    """The container format that the bytes announce, or None for text and unknown content."""
    head = data[:2048]
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")):  # a member; an empty or spanned zip
        return _sniff_zip(data)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole"  # doc, xls, ppt, msg: told apart by extension
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*")):
        return "image"
    if head[:4] == b"\x00\x00\x01\x00" and head[4:6] != b"\x00\x00":
        return "icon"  # favicon.ico, often saved under a .png name
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if head.startswith((b"7z\xbc\xaf", b"Rar!")) or head[257:262] == b"ustar":
        return "archive"
    if head.startswith((b"%!PS", b"\xc5\xd0\xd3\xc6")):  # a print file: text of drawing operators
        return "postscript"
    return None


def _sniff_zip(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            if "mimetype" in names and zf.getinfo("mimetype").file_size <= 256:  # not a bomb's payload
                mime = zf.read("mimetype").decode("ascii", "replace").strip()
                if mime in _MIMETYPES:
                    return _MIMETYPES[mime]
            for prefix, kind in _ZIP_KINDS.items():
                if any(n.startswith(prefix) for n in names):
                    return kind
    except Exception:  # damaged, encrypted, oddly compressed: the format's parser says what is wrong
        return "zip"
    return "zip"


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECLARED = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""")


def decode_text(data: bytes, *, html: bool = False) -> tuple[str, str]:
    """Decode bytes as text and return ``(text, encoding)``; raise BinaryContent if they are not.

    Order: a BOM, strict UTF-8, UTF-32 and UTF-16 without BOM (by their NUL bytes), an HTML meta charset,
    charset detection, then cp1252. A BOM is not part of the text.
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError as e:
                raise BinaryContent(
                    f"starts with a {enc} byte-order mark but does not decode: {e.reason}"
                ) from e
    sample = data[:8192]
    nul_rich = len(sample) >= 4 and sample.count(0) * 3 > len(sample)
    if nul_rich and (enc := _utf32_without_bom(data)):
        try:
            text = data.decode(enc)
            head = text[:2048]
            # text has spaces or line ends; a table of small 32-bit numbers decodes to none
            if not _looks_binary(text) and sum(c.isspace() for c in head) * 100 >= len(head):
                return text, enc
        except UnicodeDecodeError:
            pass
    if nul_rich:
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        enc = "utf-16-le" if odd > even else "utf-16-be"
        if max(even, odd) > len(sample) // 3:
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError:
                pass
    try:
        text = data.decode("utf-8")
        encoding = "utf-8"
        if "\x1b" in text or "~{" in text:
            text, encoding = _decode_seven_bit(data) or (text, encoding)
    except UnicodeDecodeError:
        text, encoding = _decode_mostly_utf8(data) or _decode_legacy(data, html=html)
    if _looks_binary(text):
        raise BinaryContent("binary content, not text")
    return text, encoding


def _utf32_without_bom(data: bytes) -> str:
    """``utf-32-be`` or ``-le`` where the bytes are four a character, the high two of each NUL (every
    character below U+10000, as text is), else ''; UTF-16 has a NUL in every other byte only."""
    sample = data[: 8192 - 8192 % 4]
    if len(data) % 4 or len(sample) < 8:
        return ""
    units = len(sample) // 4
    zeros = [sample[k::4].count(0) for k in range(4)]
    if zeros[0] == units and zeros[1] >= units * 0.9:
        return "utf-32-be"
    if zeros[3] == units and zeros[2] >= units * 0.9:
        return "utf-32-le"
    return ""


def _cp1252_byte(err: UnicodeDecodeError):
    bad = err.object[err.start : err.end]
    return bad.decode("cp1252", errors="replace"), err.end


codecs.register_error("raychunk-cp1252", _cp1252_byte)


def _decode_mostly_utf8(data: bytes) -> tuple[str, str] | None:
    """UTF-8 text with a few stray legacy bytes (a pasted '°'): keep the UTF-8, read the strays as cp1252.
    None when the bytes are not mostly UTF-8."""
    text = data.decode("utf-8", errors="raychunk-cp1252")
    multibyte = sum(1 for c in text if ord(c) > 0x7F)
    invalid, pos = 0, 0  # invalid sequences, each read as cp1252 above
    while True:
        try:
            data[pos:].decode("utf-8")
            break
        except UnicodeDecodeError as e:
            invalid += 1
            pos += e.end
            if invalid > 8:
                return None
    valid_multibyte = multibyte - invalid
    if valid_multibyte >= 1 and invalid <= max(2, valid_multibyte // 10):
        return text, "utf-8+cp1252"
    return None


# 7-bit encodings of East Asian text, which decode as ASCII into escape sequences: ISO-2022-KR
# (announced by ESC $ ) C, then SO/SI shifts), ISO-2022-JP (ESC $ B and kin), HZ (~{ ... ~}).
_ISO2022 = (("iso2022_kr", (b"\x1b$)C",)), ("iso2022_jp_2", (b"\x1b$B", b"\x1b$@", b"\x1b$(D", b"\x1b$A")))
_HZ = re.compile(rb"~\{[\x21-\x7e]{2,}~\}")


def _decode_seven_bit(data: bytes) -> tuple[str, str] | None:
    for encoding, announced in _ISO2022:
        if any(a in data for a in announced):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                return None
    if _HZ.search(data):
        try:
            return data.decode("hz"), "hz"
        except UnicodeDecodeError:
            return None
    return None


# Korean and Japanese in a legacy double-byte encoding that detection gives no answer for (Korean
# in cp949's extensions or in Johab): the bytes decode whole, and the letters are the language's.
_HANGUL = re.compile("[\uac00-\ud7a3\u3131-\u318e]")
_KANA = re.compile("[\u3040-\u30ff]")
_EAST_ASIAN = (
    ("cp949", _HANGUL, 0.6),
    ("johab", _HANGUL, 0.6),
    ("cp932", _KANA, 0.2),
    ("euc_jis_2004", _KANA, 0.2),
)


def _decode_east_asian(data: bytes) -> tuple[str, str] | None:
    for encoding, letters, share in _EAST_ASIAN:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        wide = sum(1 for c in text if ord(c) > 0x7F)
        if wide >= 4 and len(letters.findall(text)) >= share * wide:
            return text, encoding
    return None


def _decode_legacy(data: bytes, *, html: bool) -> tuple[str, str]:
    # An XML declaration's encoding is the document's own word (one saying UTF-8 over bytes that are
    # not is wrong, and detection decides); in HTML, a meta charset.
    m = _XML_DECLARED.match(data)
    if m and m.group(1).lower().replace(b"_", b"-") in (b"utf-8", b"utf8", b"utf-16", b"utf16"):
        m = None
    if html and not m:
        m = _META_CHARSET.search(data[:4096])
    if m:
        enc = m.group(1).decode("ascii", "replace").lower()
        try:
            codecs.lookup(enc)
            return data.decode(enc, errors="replace"), enc
        except LookupError:
            pass
    try:
        from charset_normalizer import from_bytes

        matches = list(from_bytes(data[:65536]))
        if matches:
            best = min(matches, key=lambda m: m.chaos)
            # On short samples detection can't tell Western from Central European; Western is likelier.
            western = [m for m in matches if m.encoding in ("cp1252", "latin_1", "iso8859_15")]
            if western and western[0].chaos <= best.chaos + 0.05:
                best = western[0]
            if best.encoding not in ("utf_8", "ascii"):
                return data.decode(best.encoding, errors="replace"), best.encoding
        elif found := _decode_east_asian(data):
            return found
    except ImportError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


# Control characters other than tab, line breaks, form feed and backspace; DEL and C1; U+FFFD.
_BINARY_CHAR = re.compile("[\x00-\x07\x0b\x0e-\x1f\x7f-\x9f\ufffd]")


def _looks_binary(text: str) -> bool:
    sample = text[:8192]
    if not sample:
        return False
    return len(_BINARY_CHAR.findall(sample)) / len(sample) > 0.10
