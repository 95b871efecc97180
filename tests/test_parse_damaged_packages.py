"""Damaged zip packages get a precise reason, not the parser-failed fallback."""

import importlib.util
import io
import re
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


def _docx() -> bytes:
    return zipped(
        {
            "[Content_Types].xml": _CONTENT_TYPES,
            "_rels/.rels": _RELS,
            "word/document.xml": b"<w:document>" + b"<w:p/>" * 200 + b"</w:document>",
        }
    )


def test_bytes_cut_out_before_the_directory():
    """Found by scripts/fuzz.py (seed 100, index 184: truncate(cut [8672:9145])): the directory's
    offsets then point before the start of the file and zipfile raised "negative seek value"."""
    data = _docx()
    cd = data.index(b"PK\x01\x02")  # the first one: the central directory starts here
    cut = data[:60] + data[cd - 10 :]  # 60 bytes of the first part kept, the rest up to the directory gone
    with zipfile.ZipFile(io.BytesIO(cut)) as zf:
        assert min(m.header_offset for m in zf.infolist()) < 0  # what made zipfile seek before byte 0
    doc = parse_document(cut, "cut.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid Word document: the package is damaged or is not a .docx "
        "(its directory points outside the file: bytes are missing)",
    )


def _deck_members(body: str | None = None) -> dict[str, bytes]:
    """The parts of a one-slide deck titled "Quarterly review" (with ``body`` in its content
    placeholder), to damage one of them."""
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly review"
    if body is not None:
        slide.placeholders[1].text = body
    buf = io.BytesIO()
    deck.save(buf)
    return _unzipped(buf.getvalue())


def _unzipped(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


@pytest.mark.skipif(importlib.util.find_spec("pptx") is None, reason="needs python-pptx")
def test_pptx_layout_without_its_slide_master_relationship():
    """Found by scripts/fuzz.py (seed 100, index 173): a slide layout's .rels damaged so that it
    names no slide master. unstructured's reader raised KeyError "no relationship of type ..." and
    the deck failed; raychunk's reader needs the master only for inherited bullets, so the slide's
    own text is read and nothing is lost."""
    members = _deck_members("Revenue grew.")
    rels = "ppt/slideLayouts/_rels/slideLayout2.xml.rels"
    members[rels] = members[rels].replace(b"relationships/slideMaster", b"relationships/slideMastr")
    parsed = parse_document(zipped(members), "deck.pptx")
    assert (parsed.document.status, parsed.document.reason) == ("ok", "")
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("heading", "Quarterly review"),
        ("paragraph", "Revenue grew."),  # its bullet would come from the master it cannot reach
    ]


@pytest.mark.skipif(importlib.util.find_spec("pptx") is None, reason="needs python-pptx")
def test_pptx_that_names_a_slide_relationship_its_rels_lacks():
    """Found by scripts/fuzz.py (seed 1008, index 233: setbytes in the zip's directory): the
    presentation names slide rId7 that presentation.xml.rels does not hold; python-pptx raised
    KeyError "no relationship with key 'rId7'"."""
    members = _deck_members()
    xml = members["ppt/presentation.xml"]
    key = xml.split(b'<p:sldId id="256" r:id="', 1)[1].split(b'"', 1)[0]
    members["ppt/presentation.xml"] = xml.replace(b'r:id="' + key + b'"', b'r:id="rId99"')
    doc = parse_document(zipped(members), "deck.pptx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid PowerPoint deck: the package is damaged or is not a .pptx "
        "(a part refers to a relationship rId99 that its .rels does not hold)",
    )


@pytest.mark.skipif(importlib.util.find_spec("pptx") is None, reason="needs python-pptx")
def test_pptx_slide_whose_content_type_names_no_slide():
    """Found by scripts/fuzz.py (seed 1431, index 197: numbers changed in [Content_Types].xml): a
    slide's part typed as something else; python-pptx raised AttributeError "'Part' object has no
    attribute 'slide'" and the deck failed as a parser bug. The other slides are read, and the
    reason names the one that was not."""
    import pptx

    deck = pptx.Presentation()
    for title in ("Quarterly review", "Outlook"):
        deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = title
    buf = io.BytesIO()
    deck.save(buf)
    members = _unzipped(buf.getvalue())
    types = members["[Content_Types].xml"]
    members["[Content_Types].xml"] = re.sub(
        rb'(PartName="/ppt/slides/slide2.xml" ContentType=")[^"]+', rb"\1application/xml", types
    )
    assert members["[Content_Types].xml"] != types
    doc = parse_document(zipped(members), "deck.pptx")
    assert (doc.document.status, doc.document.reason) == (
        "ok",
        "slides not read: 2: the package does not give them a slide's type",
    )
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["Quarterly review"]


@pytest.mark.skipif(importlib.util.find_spec("unstructured") is None, reason="needs unstructured")
@pytest.mark.parametrize(
    "flags, name, found",
    [
        # Found by scripts/fuzz.py (seed 1017, index 232: bitflip(128 bits ...)): the UTF-8 flag set
        # on a local header whose name is not UTF-8; zipfile raised UnicodeDecodeError.
        (0x0800, b"[Content_Types\xdd.xml", "a part's local header has a name that is not UTF-8"),
        (0x0040, None, "a part needs a zip feature that cannot be read: strong encryption (flag bit 6)"),
        # seed 9329, index 102 (a workbook): the encryption flag; zipfile's RuntimeError escaped the
        # DOCTYPE check that reads every XML part first, and the reason was "the parser failed".
        (0x0001, None, "a part is encrypted"),
    ],
)
def test_damaged_local_header_of_a_part(flags, name, found):
    data = bytearray(_docx())
    at = data.index(b"PK\x03\x04")  # the first part's local header: [Content_Types].xml
    data[at + 6 : at + 8] = (int.from_bytes(data[at + 6 : at + 8], "little") | flags).to_bytes(2, "little")
    cd = data.index(b"PK\x01\x02")  # and its directory entry, whose flags zipfile believes
    data[cd + 8 : cd + 10] = (int.from_bytes(data[cd + 8 : cd + 10], "little") | flags).to_bytes(2, "little")
    if name is not None:
        n = int.from_bytes(data[at + 26 : at + 28], "little")
        assert len(name) == n
        data[at + 30 : at + 30 + n] = name
    doc = parse_document(bytes(data), "memo.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        f"not a valid Word document: the package is damaged or is not a .docx ({found})",
    )


def test_directory_entry_with_an_unknown_zip_version():
    """Found by scripts/fuzz.py (seed 5010, index 353: bit flips in the directory): zipfile raised
    NotImplementedError "zip file version 8.4" while reading the directory."""
    data = bytearray(_docx())
    cd = data.index(b"PK\x01\x02")
    data[cd + 6 : cd + 8] = (84).to_bytes(2, "little")  # "version needed to extract": 8.4
    doc = parse_document(bytes(data), "memo.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid Word document: the package is damaged or is not a .docx "
        "(its directory needs a zip feature that cannot be read: zip file version 8.4)",
    )


def _docx_members() -> dict[str, bytes]:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.add_paragraph("Hello there, world.")
    buf = io.BytesIO()
    d.save(buf)
    return _unzipped(buf.getvalue())


def _damage_rels_root(m):
    rels = m["word/_rels/document.xml.rels"]
    m["word/_rels/document.xml.rels"] = rels.replace(b"Relationships", b"Relationshipz")


def _damage_content_type(m):
    m["[Content_Types].xml"] = re.sub(
        rb'(PartName="/word/document.xml" ContentType=")[^"]+',
        rb"\1application/xml",
        m["[Content_Types].xml"],
    )


def _damage_hyperlink(m):
    link = b'<w:hyperlink r:id="rId99"><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r>'
    m["word/document.xml"] = m["word/document.xml"].replace(b"<w:r>", link, 1)


@pytest.mark.skipif(importlib.util.find_spec("unstructured") is None, reason="needs unstructured")
@pytest.mark.parametrize(
    "damage, found",
    [
        # Found by scripts/fuzz.py on the shared corpus (seeds 7010/5, 7026/78, 7032/133): python-docx
        # met another element where it expected one and raised AttributeError '..._lst'.
        (_damage_rels_root, "a part does not hold the XML elements its format expects"),
        # seed 7012, index 47: ValueError "... is not a Word file, content type is 'application/xml'"
        (_damage_content_type, "its main part has the content type application/xml"),
    ],
)
def test_docx_whose_parts_do_not_fit_together(damage, found):
    members = _docx_members()
    damage(members)
    doc = parse_document(zipped(members), "memo.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        f"not a valid Word document: the package is damaged or is not a .docx ({found})",
    )


@pytest.mark.skipif(importlib.util.find_spec("unstructured") is None, reason="needs unstructured")
def test_docx_hyperlink_to_a_missing_relationship_keeps_its_text():
    """Found by scripts/fuzz.py (seed 7009, index 47): a hyperlink naming a relationship the .rels
    lacks. unstructured resolved the link's address and failed the document (KeyError 'rId5');
    raychunk's reader needs only the link's text, which is read with the rest."""
    members = _docx_members()
    _damage_hyperlink(members)
    parsed = parse_document(zipped(members), "memo.docx")
    assert parsed.document.status == "ok", parsed.document.reason
    assert parsed.text == "linkHello there, world."


def test_xlsx_whose_workbook_part_holds_no_workbook():
    """Found by scripts/fuzz.py (seed 7003, index 23 of the shared corpus): unstructured raised
    UnprocessableEntityError "Not a valid XLSX file." and the reason was "the parser failed"; raychunk's
    reader names the part."""
    doc = parse_document(
        zipped({"[Content_Types].xml": b"junk", "xl/workbook.xml": b"<x/>"}), "a.xlsx"
    ).document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid workbook: the package is damaged or is not a .xlsx (its xl/workbook.xml holds no workbook)",
    )


def test_epub_whose_container_names_no_package_document():
    """Found by scripts/fuzz.py (seed 7000, index 134 of the shared corpus): pandoc could not read
    the package (unstructured raised "Invalid EPUB file: Pandoc died ..."); the book reader says why."""
    data = zipped(
        {
            "mimetype": b"application/epub+zip",
            "META-INF/container.xml": b"<container/>",
            "OEBPS/a.xhtml": b"<html/>",
        }
    )
    doc = parse_document(data, "book.epub").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid EPUB book: the package is damaged or is not a .epub "
        "(META-INF/container.xml names no package document)",
    )


@pytest.mark.parametrize(
    "part, attribute",
    [
        # scripts/fuzz.py, seed 9105, index 132: python-docx joined the missing Target onto a part's
        # name (TypeError)
        ("word/_rels/document.xml.rels", b"Target="),
        # seed 9117, index 33: an Override without its PartName (AttributeError on None.lower())
        ("[Content_Types].xml", b"PartName="),
    ],
)
def test_docx_whose_index_entry_lacks_an_attribute(part, attribute):
    """Bits flipped in an attribute's name: python-docx raised behind "the parser failed"."""
    members = _docx_members()
    members[part] = members[part].replace(attribute, attribute[:2] + b"x" + attribute[3:], 1)
    doc = parse_document(zipped(members), "memo.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid Word document: the package is damaged or is not a .docx (an entry of its "
        "[Content_Types].xml or of a .rels lacks a required attribute)",
    )


def test_docx_whose_main_part_has_no_content_type():
    """scripts/fuzz.py, seed 9149, index 47: a range of [Content_Types].xml copied over the main
    part's entry; python-docx's KeyError was "the parser failed"."""
    members = _docx_members()
    types = members["[Content_Types].xml"]
    for entry in (rb'<Override PartName="/word/document.xml"[^>]*/>', rb'<Default Extension="xml"[^>]*/>'):
        types = re.sub(entry, b"", types)
    members["[Content_Types].xml"] = types
    doc = parse_document(zipped(members), "memo.docx").document
    assert (doc.status, doc.reason) == (
        "failed",
        "not a valid Word document: the package is damaged or is not a .docx "
        "(its [Content_Types].xml gives word/document.xml no content type)",
    )


def test_a_part_name_with_a_line_break_keeps_the_reason_on_one_line():
    """scripts/fuzz.py, seed 9117, index 255: a newline written into a member's name (the package's
    index no longer found) put a line break in the reason that lists the members."""
    members = _docx_members()
    members = {"[Content_\nypes].xml": members.pop("[Content_Types].xml"), **members}
    doc = parse_document(zipped(members), "memo.docx").document
    assert doc.status == "failed" and "\n" not in doc.reason, doc.reason
    assert "it has no [Content_Types].xml; it holds " in doc.reason and "[Content_?ypes].xml" in doc.reason


@pytest.mark.skipif(importlib.util.find_spec("pptx") is None, reason="needs python-pptx")
def test_pptx_whose_relationship_lacks_its_target():
    """Found by scripts/fuzz.py (seed 9167, index 171: bytes inserted into a layout's .rels): a
    relationship without its Target; python-pptx raised InvalidXmlError behind "the parser failed"."""
    members = _deck_members()
    rels = "ppt/slides/_rels/slide1.xml.rels"
    members[rels] = members[rels].replace(b"Target=", b"Targte=")
    doc = parse_document(zipped(members), "deck.pptx").document
    assert doc.status == "failed"
    assert doc.reason.startswith(
        "not a valid PowerPoint deck: the package is damaged or is not a .pptx (a part breaks its schema: "
        "required 'Target' attribute not present"
    ), doc.reason


def test_a_workbook_part_flagged_encrypted_that_the_reader_never_reads_costs_nothing():
    """The same flag on ``docProps/app.xml``: raychunk's workbook reader reads the sheets, not that."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(("Plan", "Seats"))
    book.active.append(("Team", 10))
    buf = io.BytesIO()
    book.save(buf)
    data = bytearray(buf.getvalue())
    name = b"docProps/app.xml"
    local = data.rindex(b"PK\x03\x04", 0, data.index(name))  # the part's local header, before its name
    central = data.rindex(b"PK\x01\x02", 0, data.rindex(name))  # its directory entry, before the last
    for at, offset in ((local, 6), (central, 8)):
        flags = int.from_bytes(data[at + offset : at + offset + 2], "little") | 1
        data[at + offset : at + offset + 2] = flags.to_bytes(2, "little")
    parsed = parse_document(bytes(data), "seats.xlsx")
    assert parsed.document.status == "ok", parsed.document.reason
    [table] = [b for b in parsed.blocks if b.kind == "table"]
    assert table.rows == (("Plan", "Seats"), ("Team", "10"))
