"""Damaged zip packages get a precise reason, not the parser-failed fallback."""

import importlib.util
import io
import zipfile

import pytest

from raychunk.parse import parse_document

_CONTENT_TYPES = (
    b"<Types xmlns='http://schemas.openxmlformats.org/package/2006/content-types'>"
    b"<Default Extension='xml' ContentType='application/xml'/>"
    b"<Override PartName='/word/document.xml' "
    b"ContentType='application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'/>"
    b"</Types>"
)
_RELS = (
    b"<Relationships xmlns='http://schemas.openxmlformats.org/package/2006/relationships'>"
    b"<Relationship Id='rId1' Target='word/document.xml' "
    b"Type='http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument'/>"
    b"</Relationships>"
)


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.skipif(importlib.util.find_spec("unstructured") is None, reason="needs unstructured")
def test_docx_part_that_is_not_xml():
    data = zipped(
        {
            "[Content_Types].xml": _CONTENT_TYPES,
            "_rels/.rels": _RELS,
            "word/document.xml": b"<w:document><unclosed",
        }
    )
    doc = parse_document(data, "broken.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid Word document: the package is damaged or is not a .docx (a part is not well-formed XML)",
    )


def test_epub_whose_mimetype_member_does_not_decompress():
    data = bytearray(zipped({"mimetype": b"application/epub+zip" * 5}))
    at = data.index(b"mimetype") + len(b"mimetype")  # the deflate stream follows the local header's name
    data[at : at + 6] = b"\xff" * 6
    doc = parse_document(bytes(data), "book.epub").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid EPUB book: the package is damaged or is not a .epub "
        "(it has no META-INF/container.xml; it holds mimetype)",
    )
