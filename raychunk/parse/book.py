"""EPUB books, read from the package by raychunk's own HTML parser.

``META-INF/container.xml`` names the package document; its spine lists the book's documents in
reading order, each read as an ``.html`` file would be (headings, numbered lists, tables with their
header rows) and joined into one text, the heading path running on from one document to the next
(a chapter file under the part its predecessor opened). Items a reader does not show as pages are
left out: the navigation document (EPUB 3's table of contents, whose lines repeat the headings) and
the NCX. Items out of the linear reading order (``linear="no"``: notes, answers) are read where the
spine puts them, so nothing of the book is lost. An SVG page gives the words a viewer shows or
announces (its title, its description, its labels: ``svg.py``), a paragraph each; a spine item the
package lacks, or one that is not a page of text (an image, an SVG without words), is named in the
row's reason.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import posixpath
import re
import urllib.parse
import xml.etree.ElementTree as ET
import zipfile
from typing import TYPE_CHECKING

from raychunk.parse._common import BlockStream, TextAssembler, finish, listing
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["read_epub"]

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_PAGES = {"application/xhtml+xml", "text/html", "application/xml", "text/xml"}
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)["']""")
_MAX_XML = 8 << 20  # a package or container document larger than this is not one


def read_epub(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    from raychunk.parse.detect import BinaryContent
    from raychunk.parse.html import parse_html
    from raychunk.parse.office import DamagedPackage

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        opf = _package_path(zf, names)
        manifest, spine = _spine(_xml(zf, opf, names), opf)
        asm = TextAssembler()
        stream = BlockStream()
        missing, skipped = [], []
        seen = set()
        for idref in spine:
            item = manifest.get(idref)
            if item is None:
                missing.append(idref)
                continue
            href, media_type, properties = item
            if "nav" in properties or href in seen:
                continue
            seen.add(href)
            if href not in names:
                missing.append(href)
                continue
            if media_type == "image/svg+xml" and (texts := _svg_texts(zf.read(href))):
                for text in texts:
                    start, end = asm.append(text)
                    stream.add("paragraph", text, start, end)
                continue
            if media_type not in _PAGES:
                skipped.append(f"{href} ({media_type or 'no media type'})")
                continue
            try:
                page = parse_html(_decode(zf.read(href)), base)
            except BinaryContent:
                skipped.append(f"{href} (not text)")
                continue
            for b in page.blocks:
                if b.kind == "page_break" or not b.text:
                    continue
                start, end = asm.append(b.text)
                if b.kind == "heading":
                    stream.heading(b.text, b.level, start, end)
                else:
                    stream.blocks.append(
                        dataclasses.replace(b, char_start=start, char_end=end, heading_path=stream.path)
                    )
    if not spine or len(missing) == len(spine):
        raise DamagedPackage(
            "its package document lists no pages in its spine"
            if not spine
            else f"none of the pages its spine lists is in the package ({listing(missing)})"
        )
    notes = []
    if missing:
        notes.append(f"pages its spine lists are missing from the package ({listing(missing)})")
    if skipped:
        notes.append(f"spine items that are not pages of text not read ({listing(skipped)})")
    changes: dict = {}
    if title:
        changes["title"] = title[:200]
    if notes:
        changes["reason"] = "; ".join(notes)
    return finish(base, asm.text, stream.blocks, **changes)


def _package_path(zf: zipfile.ZipFile, names: set[str]) -> str:
    from raychunk.parse.office import DamagedPackage

    root = _xml(zf, "META-INF/container.xml", names)
    for rootfile in root.iter(f"{_CONTAINER}rootfile"):
        path = rootfile.get("full-path") or ""
        if rootfile.get("media-type", "application/oebps-package+xml") == "application/oebps-package+xml":
            if path not in names:
                raise DamagedPackage(
                    f"its container names a package document it lacks ({listing([path[:80]])})"
                )
            return path
    raise DamagedPackage("META-INF/container.xml names no package document")


def _spine(root: ET.Element, opf: str) -> tuple[dict[str, tuple[str, str, set[str]]], list[str]]:
    """The manifest (id -> path in the zip, media type, properties) and the spine's ids in order."""
    folder = posixpath.dirname(opf)
    manifest = {}
    for item in root.iter(f"{_OPF}item"):
        href = urllib.parse.unquote((item.get("href") or "").split("#")[0])
        if item.get("id") and href:
            path = posixpath.normpath(posixpath.join(folder, href)) if folder else posixpath.normpath(href)
            manifest[item.get("id")] = (
                path,
                item.get("media-type") or "",
                set((item.get("properties") or "").split()),
            )
    spine = [ref.get("idref") or "" for ref in root.iter(f"{_OPF}itemref")]
    return manifest, spine


def _xml(zf: zipfile.ZipFile, name: str, names: set[str]) -> ET.Element:
    from raychunk.parse.office import DamagedPackage

    if name not in names:
        raise DamagedPackage(f"it lacks {name}")
    if zf.getinfo(name).file_size > _MAX_XML:
        raise DamagedPackage(f"{name} is larger than {_MAX_XML >> 20} MB")
    try:
        return ET.fromstring(zf.read(name))
    except ET.ParseError as e:
        raise DamagedPackage(f"{name} is not well-formed XML ({e})") from e
    except LookupError as e:  # its XML declaration names an encoding that does not exist
        raise DamagedPackage(f"{name} declares an encoding Python does not know ({e})") from e


def _svg_texts(raw: bytes) -> list[str]:
    """An SVG page's words, a paragraph each; none where it has none or is not well-formed."""
    from raychunk.parse.svg import svg_texts

    try:
        return [t for t in (squash(x) for x in svg_texts(_decode(raw))) if t]
    except ValueError:
        return []


def _decode(data: bytes) -> str:
    """An XHTML page's text: as an HTML file's bytes are decoded (a byte-order mark, UTF-8, ...),
    except that bytes which are not UTF-8 follow the encoding their XML declaration names."""
    from raychunk.parse.detect import decode_text

    m = _XML_ENCODING.match(data[:200])
    if m and not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                return data.decode(m.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):
                pass
    return decode_text(data, html=True)[0]
