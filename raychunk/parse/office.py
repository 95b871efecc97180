"""Office documents, books and e-mail, each read by raychunk's own reader, with one set of checks
and failure reasons for all of them.

Word documents (docx; odt through pandoc; Word 97-2003 doc through msdoc2docx), workbooks (xlsx,
xls), slides (pptx; PowerPoint 97-2003 ppt through ppt2pptx), e-mail (eml, and Outlook's msg), EPUB
books, RTF and Org are read by ``parse/word.py``, ``parse/sheets.py``, ``parse/slides.py``,
``parse/mail.py``, ``parse/book.py`` and ``parse/pandoc.py`` (the format's row names its
``reader``). They get the same checks here first (a damaged, encrypted or oversized package, binary
bytes behind a text extension) and the same failure reasons after.

What each format is read by and the features that steer it are its row of ``office_formats.FORMATS``,
read once per file; nothing here tests a format's name.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import logging
import os
import re
import xml.etree.ElementTree as ET
import zipfile
import zlib
from typing import TYPE_CHECKING

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import ConversionFailed, listing
from raychunk.parse.compressed import BOMB_FLOOR_BYTES
from raychunk.parse.detect import decode_text
from raychunk.parse.office_formats import FORMATS, OfficeFormat
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.parse import ParseOptions

__all__ = ["parse_office"]

log = logging.getLogger(__name__)

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# A package is refused as a zip bomb when its parts would decompress to more than BOMB_FLOOR_BYTES and to
# more than ParseOptions.max_unzip_ratio times its size. zipfile reads no more than a part's declared
# size, so the central directory's sizes bound what opening the package can cost.
ZIP_BOMB_FLOOR_BYTES = BOMB_FLOOR_BYTES
# lxml's and ElementTree's parse errors (both SyntaxErrors): a package part that is not XML.
_XML_ERRORS = {"XMLSyntaxError", "ParseError"}
# Titles that editors put in docProps by default; the first heading says more.
_PLACEHOLDER_TITLE = re.compile(
    r"^(|(powerpoint )?presentation\d*|slide \d+|document\d*|book\d*|title|untitled.*|"
    r"microsoft (word|powerpoint|excel) - .*|slide title)$",
    re.IGNORECASE,
)


def parse_office(data: bytes, base: Document, options: ParseOptions) -> ParsedDocument:
    """Read an office, book or e-mail file by its format's reader (``office_formats``).

    Expected failures (a corrupt or encrypted file, one a converter refuses) come back as ``failed``
    / ``unsupported`` records; anything else a reader raises propagates to the dispatcher, which
    records it.
    """
    fmt = base.format
    spec = FORMATS.get(fmt)
    if spec is None:
        raise ValueError(
            f"parse_office does not handle format {fmt!r}; it handles {', '.join(sorted(FORMATS))}"
        )
    refused = _refuse(data, base, spec, options)
    if refused is not None:
        return refused
    if spec.package == "ooxml":
        data = _without_doctype(data)
    try:
        return _read(spec, data, base, options)
    except ImportError as e:
        raise ImportError(f"parsing .{fmt} files needs {e.name or e}: pip install {spec.install}") from e
    except (zipfile.BadZipFile, KeyError, zlib.error, EOFError) as e:
        found = _package_damage(e) if spec.package else None
        if found is not None:
            return _not_a_valid_package(base, spec, found)
        damaged = _damaged_file(e, base, spec)
        if damaged is None:
            raise
        return damaged
    except Exception as e:
        if isinstance(e, DamagedPackage):
            return _not_a_valid_package(base, spec, str(e))
        if spec.package and (type(e).__name__ == "PackageNotFoundError" or "not a zip" in str(e).lower()):
            return _not_a_valid_package(base, spec, "it is not a readable zip package")
        if spec.package and isinstance(e, SyntaxError) and type(e).__name__ in _XML_ERRORS:
            return _not_a_valid_package(base, spec, "a part is not well-formed XML")
        if spec.package and type(e).__name__ == "InvalidXmlError":  # python-pptx's schema check
            return _not_a_valid_package(
                base, spec, f"a part breaks its schema: {' '.join(str(e).split())[:120]}"
            )
        if spec.package and _raised_by_zipfile(e):
            return _not_a_valid_package(base, spec, _unreadable_part(e))
        if isinstance(e, ConversionFailed):  # pandoc, msdoc2docx or ppt2pptx refused it
            return ParsedDocument(dataclasses.replace(base, status=e.status, reason=str(e)))
        damaged = _damaged_file(e, base, spec)
        if damaged is not None:
            return damaged
        if (
            spec.package
            and isinstance(e, (TypeError, AttributeError))
            and _through(e, os.path.join("docx", "opc", "pkgreader.py"))
        ):
            # python-docx reads a part's name or a relationship's Target as None where it is missing
            return _not_a_valid_package(
                base, spec, "an entry of its [Content_Types].xml or of a .rels lacks a required attribute"
            )
        if spec.package and isinstance(e, ValueError) and _raised_in(e, "pptx", "docx"):
            return _not_a_valid_package(
                base, spec, f"a part holds a value its format does not define ({str(e)[:120]})"
            )
        raise


class DamagedPackage(Exception):
    """Raised by a reader of raychunk's own: the package is not what its format says; the message
    says why."""


def _read(spec: OfficeFormat, data: bytes, base: Document, options: ParseOptions) -> ParsedDocument:
    """A format raychunk reads itself (``spec.reader``): the bytes, the document and its package's
    title; a reader of e-mail also the parse options, which its attachments are read with."""
    module, func = spec.reader.rsplit(".", 1)
    read = getattr(importlib.import_module(f"raychunk.parse.{module}"), func)
    title = _package_title(data, spec)
    title = "" if _PLACEHOLDER_TITLE.match(title) else title
    return read(data, base, title, options) if spec.attachments else read(data, base, title)


_OLE_LIBRARIES = ("olefile", "oxmsg", "xlrd")


def _through(e: BaseException, path: str) -> bool:
    """A frame of the exception's traceback is in a file whose path ends with ``path``."""
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(os.sep + path):
            return True
        tb = tb.tb_next
    return False


def _damaged_file(e: BaseException, base: Document, spec: OfficeFormat) -> ParsedDocument | None:
    """A ``failed`` record when the exception is what a damaged file of this format makes its reader
    raise (found by scripts/fuzz.py); None for anything else, which stays a parser failure."""
    text = " ".join(str(e).split())
    if spec.ole and _raised_in(e, *_OLE_LIBRARIES, anywhere=True):
        if isinstance(e, KeyError) and e.args:
            detail = f"a required stream {e.args[0]} is missing"
        else:
            detail = text[:120] or type(e).__name__
        return _failed(base, f"not a valid {spec.ole}: its OLE container is damaged ({detail})")
    if not spec.package:
        return None
    m = re.search(r"is not a (?:Word|PowerPoint|Excel) file, content type is '([^']+)'", text)
    if m:
        return _not_a_valid_package(base, spec, f"its main part has the content type {m.group(1)}")
    if isinstance(e, AttributeError) and "lxml.etree._Element" in text:
        # python-docx / python-pptx found an element of another kind where the format puts one
        return _not_a_valid_package(base, spec, "a part does not hold the XML elements its format expects")
    return None


def _raised_in(e: BaseException, *packages: str, anywhere: bool = False) -> bool:
    """The innermost frame of the exception's traceback is in one of these top-level packages; with
    ``anywhere``, some frame is (a codec or ``struct`` the library called raised it)."""
    tb = e.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return any(
        f"{os.sep}{p}{os.sep}" in path or os.path.basename(path) == f"{p}.py"
        for path in (frames if anywhere else frames[-1:])
        for p in packages
    )


def _refuse(data: bytes, base: Document, spec: OfficeFormat, options: ParseOptions) -> ParsedDocument | None:
    """A record for input that cannot be read, before its reader is paid for."""
    if spec.text:
        # Binary bytes behind a text extension: BinaryContent, which the dispatcher words as it does
        # for every text format, before pandoc or the e-mail parser chokes on them.
        decode_text(data)
    if spec.package == "ooxml" and data.startswith(_OLE_MAGIC):
        # An encrypted OOXML file is an OLE container holding EncryptionInfo + EncryptedPackage.
        if _ole_streams(data) >= {"EncryptionInfo", "EncryptedPackage"}:
            return _failed(base, f"encrypted {spec.called}: needs a password")
        return _failed(base, f"content is a legacy Office (OLE) file, not a .{spec.name} package")
    if spec.package:
        return _check_package(data, base, spec, options)
    return None


_DOCTYPE = re.compile(rb"<!DOCTYPE\s[^\[>]*(\[.*?\]\s*)?>", re.S)
_ENTITY_DECL = re.compile(rb"<!ENTITY\s+([\w.:-]+)\s+(?:\"([^\"]*)\"|'([^']*)')\s*>")
_ENTITY_REF = re.compile(rb"&([A-Za-z_][\w.:-]*);")
_PREDEFINED = {b"amp", b"lt", b"gt", b"quot", b"apos"}


def _without_doctype(data: bytes) -> bytes:
    """The package with every part's DOCTYPE taken out, so that no entity is resolved from outside
    and none hides the text after it (lxml, told not to resolve, keeps a reference as a node whose
    tail python-docx never reads): a reference to an internal entity with a plain literal value
    becomes that value, any other (external, parameter, nested) becomes nothing. A package with no
    DOCTYPE comes back as it was."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.infolist()
            parts = {
                m.filename: zf.read(m)
                for m in members
                if m.filename.endswith((".xml", ".rels")) and m.file_size < 256 * 2**20
            }
            if not any(b"<!DOCTYPE" in v[:65536] for v in parts.values()):
                return data
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
                for m in members:
                    body = parts.get(m.filename)
                    new.writestr(m, _strip_doctype(body) if body is not None else zf.read(m))
            return out.getvalue()
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, RuntimeError, zlib.error, EOFError):
        return data  # the reader words what is wrong with it (RuntimeError: a part flagged encrypted)


def _strip_doctype(xml: bytes) -> bytes:
    found = _DOCTYPE.search(xml, 0, 65536 + 4096)
    if found is None:
        return xml
    values = {}
    for m in _ENTITY_DECL.finditer(found.group(1) or b""):
        value = m.group(2) if m.group(2) is not None else m.group(3)
        if b"&" not in value and b"%" not in value and b"<" not in value:
            values[m.group(1)] = value
    body = xml[: found.start()] + xml[found.end() :]
    return _ENTITY_REF.sub(
        lambda m: m.group(0) if m.group(1) in _PREDEFINED else values.get(m.group(1), b""), body
    )


def _check_package(
    data: bytes, base: Document, spec: OfficeFormat, options: ParseOptions
) -> ParsedDocument | None:
    """Refuse a zip package that is damaged, is not its format, or would decompress out of all proportion,
    reading only its central directory."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.infolist()
    except NotImplementedError as e:  # "zip file version 8.4": a damaged or exotic directory entry
        return _not_a_valid_package(
            base, spec, f"its directory needs a zip feature that cannot be read: {' '.join(str(e).split())}"
        )
    except (zipfile.BadZipFile, OSError, ValueError):
        if data.startswith(b"PK"):
            return _not_a_valid_package(base, spec, "the zip's directory is missing: the file is cut short")
        return _not_a_valid_package(base, spec, "it is not a zip file")
    unpacked = sum(m.file_size for m in members)
    if unpacked > options.max_unzipped_mb * 2**20:
        return _failed(
            base,
            f"the package would decompress to {_mb(unpacked)} MB, over limits.max_unzipped_mb="
            f"{options.max_unzipped_mb:g}: refusing it",
        )
    if unpacked > ZIP_BOMB_FLOOR_BYTES and unpacked > options.max_unzip_ratio * len(data):
        return _failed(
            base,
            f"the package would decompress to {_mb(unpacked)} MB from {_mb(len(data))} MB: "
            "refusing a likely zip bomb",
        )
    if any(not 0 <= m.header_offset < len(data) for m in members):
        # zipfile shifts every part's offset by what the directory says precedes it; bytes cut out of
        # the middle leave offsets before the start of the file (ValueError: negative seek value).
        return _not_a_valid_package(base, spec, "its directory points outside the file: bytes are missing")
    names = [m.filename for m in members]
    for part in spec.parts:
        present = any(n.startswith(part) for n in names) if part.endswith("/") else part in names
        if not present:
            what = f"{part} folder" if part.endswith("/") else part
            return _not_a_valid_package(base, spec, f"it has no {what}; it holds {listing(names)}")
    return None


def _not_a_valid_package(base: Document, spec: OfficeFormat, found: str) -> ParsedDocument:
    return _failed(
        base, f"not a valid {spec.called}: the package is damaged or is not a .{spec.name} ({found})"
    )


def _package_damage(e: BaseException) -> str | None:
    """What a zip error says about the package; None for a KeyError that is not about a missing part."""
    if isinstance(e, KeyError):
        m = re.search(r"no (?:item named|member) '/?([^']+)'", str(e))
        if m:
            return f"it lacks {m.group(1)}"
        # python-pptx / python-docx: a part whose .rels lost a required relationship.
        m = re.search(r"no relationship of type '(?:[^']*/)?([^'/]+)'", str(e))
        if m:
            return f"a part lacks its {m.group(1)} relationship"
        m = re.search(r"no content type for partname '/?([^']+)'", str(e))
        if m:
            return f"its [Content_Types].xml gives {m.group(1)} no content type"
        m = re.search(r"no relationship with key '([^']+)'", str(e)) or re.fullmatch(r"'(rId\d+)'", str(e))
        return f"a part refers to a relationship {m.group(1)} that its .rels does not hold" if m else None
    if "CRC" in str(e):
        return "a part fails its checksum"
    return "a part does not decompress"


def _raised_by_zipfile(e: BaseException) -> bool:
    """The exception comes from the standard library's zipfile reading a part (a damaged local header:
    flag bits, name, compression method), not from the format's own code."""
    return _raised_in(e, "zipfile")  # zipfile.py, or zipfile/__init__.py from Python 3.12


def _unreadable_part(e: BaseException) -> str:
    """What a zipfile error while opening a part says about the package."""
    if isinstance(e, UnicodeDecodeError):
        return "a part's local header has a name that is not UTF-8"
    if isinstance(e, NotImplementedError):
        return f"a part needs a zip feature that cannot be read: {' '.join(str(e).split())}"
    if isinstance(e, RuntimeError) and "encrypted" in str(e):
        return "a part is encrypted"
    return f"a part cannot be read ({type(e).__name__})"


def _mb(n: int) -> str:
    return f"{n / (1 << 20):,.0f}" if n >= 10 << 20 else f"{n / (1 << 20):.1f}"


def _ole_streams(data: bytes) -> set[str]:
    try:
        import olefile

        with olefile.OleFileIO(data) as ole:
            return {"/".join(entry) for entry in ole.listdir()}
    except Exception:  # olefile missing or a damaged container: nothing to learn from it
        return set()


def _package_title(data: bytes, spec: OfficeFormat) -> str:
    """dc:title from an OOXML core.xml, an ODF meta.xml or an EPUB package document; '' if none."""
    if not spec.package:
        return ""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            if spec.package == "odf":
                part = "meta.xml"
            elif spec.package == "epub":
                part = next((n for n in names if n.lower().endswith(".opf")), "")
            else:
                part = "docProps/core.xml"
            if part not in names or zf.getinfo(part).file_size > 1 << 20:
                return ""
            root = ET.fromstring(zf.read(part))
    except (zipfile.BadZipFile, OSError, ET.ParseError, KeyError, ValueError, LookupError):  # LookupError: an
        return ""  # XML declaration naming an encoding that does not exist
    found = root.find(".//{http://purl.org/dc/elements/1.1/}title")
    return squash(found.text or "") if found is not None else ""


def _failed(base: Document, reason: str) -> ParsedDocument:
    return ParsedDocument(dataclasses.replace(base, status="failed", reason=reason))
