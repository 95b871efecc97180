"""Word and PowerPoint 97-2003 files (.doc, .ppt): converted by msdoc2docx and ppt2pptx, read by
raychunk's Word and slide readers, without LibreOffice; a deck's titles and tables read from its own
records. The files are ``benchmarks/legacy/``'s: the fidelity sections' documents and decks as
LibreOffice saved them (``benchmarks/fidelity_legacy.py``)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from raychunk.parse import parse_document

ROOT = Path(__file__).resolve().parent.parent
LEGACY = ROOT / "benchmarks" / "legacy"
CORPUS_OTHER = ROOT.parent / "shared" / "corpus" / "other"


def _doc(n: int) -> bytes:
    return (LEGACY / f"doc-{n}.doc").read_bytes()


def _word_document_offset(data: bytes) -> int:
    import olefile

    with olefile.OleFileIO(data) as ole:
        entry = ole.direntries[ole._find(["WordDocument"])]
        assert entry.size >= ole.minisectorcutoff  # in the container's own sectors, not the mini stream
        return (entry.isectStart + 1) * ole.sectorsize


def test_a_doc_reads_with_its_headings_lists_and_tables_and_no_libreoffice(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    parsed = parse_document(_doc(3), "report.doc")
    assert parsed.document.status == "ok", parsed.document.reason
    assert parsed.document.format == "doc"
    kinds = {b.kind for b in parsed.blocks}
    assert {"heading", "paragraph", "list_item", "table"} <= kinds
    headings = [b for b in parsed.blocks if b.kind == "heading"]
    assert all(1 <= b.level <= 3 for b in headings)
    table = next(b for b in parsed.blocks if b.kind == "table")
    assert len(table.rows) > 1 and table.header_rows == 1
    items = [b for b in parsed.blocks if b.kind == "list_item" and b.marker]
    assert items and all(parsed.text[: b.char_start].rstrip(" \t").endswith(b.marker) for b in items)
    first = parsed.blocks.index(headings[0])
    boxes = parsed.document.reason.endswith(
        "its text boxes read at the end, as msdoc2docx could not place them"
    )
    body = parsed.blocks[:-1] if boxes else parsed.blocks  # this document has one text box
    for i, b in enumerate(body):
        assert parsed.text[b.char_start : b.char_end] == b.text
        assert b.kind == "heading" or i <= first or b.heading_path  # under a heading after the first


def test_the_same_document_as_doc_and_docx_gives_the_same_headings_and_tables():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import random

        from fidelity_docx import SEED, document
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rng = random.Random(SEED)
    for n in range(3):
        docx, _ = document(rng)
        a, b = parse_document(_doc(n), f"d{n}.doc"), parse_document(docx, f"d{n}.docx")

        def shape(p):
            return [
                (x.kind, x.text, x.level, x.rows, x.heading_path)
                for x in p.blocks
                if x.kind in ("heading", "table")
            ]

        assert shape(a) == shape(b), n


def test_text_boxes_the_converter_cannot_place_are_read_at_the_end_and_no_object_mark_is_text(monkeypatch):
    parsed = parse_document(_doc(1), "boxes.doc")
    assert parsed.document.status == "ok"
    assert parsed.document.reason == (
        "converted from Word 97-2003: its text boxes read at the end, as msdoc2docx could not place them"
    )
    assert parsed.blocks[-1].text == "Gateway contract contract quota 526"  # the document's one text box
    assert parsed.blocks[-1].kind == "paragraph" and parsed.blocks[-1].heading_path == ()
    assert parsed.text.count("Gateway contract contract quota 526") == 1
    assert "\ufffc" not in parsed.text
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text
    import raychunk.parse.doc_text as doc_text

    monkeypatch.setattr(doc_text, "doc_stories", lambda data: None)  # the story cannot be read either
    parsed = parse_document(_doc(1), "boxes.doc")
    assert parsed.document.reason == (
        "converted from Word 97-2003: malformed optional main-story text boxes were omitted"
    )
    assert "Gateway contract contract quota 526" not in parsed.text


@pytest.mark.skipif(not (CORPUS_OTHER / "fake.doc").exists(), reason="shared corpus not present")
def test_a_word_written_doc_reads():
    parsed = parse_document((CORPUS_OTHER / "fake.doc").read_bytes(), "fake.doc")
    assert parsed.document.status == "ok" and not parsed.document.reason
    assert [(b.kind, b.text) for b in parsed.blocks] == [("paragraph", "Lorem ipsum dolor sit amet.")]


def test_an_encrypted_doc_says_it_needs_a_password():
    data = bytearray(_doc(2))
    at = _word_document_offset(bytes(data))
    assert data[at : at + 2] == b"\xec\xa5"  # the Word document's magic number
    data[at + 11] |= 0x01  # FibBase.fEncrypted
    parsed = parse_document(bytes(data), "locked.doc")
    assert parsed.document.status == "failed"
    assert parsed.document.reason == "encrypted legacy Word document: needs a password"


@pytest.mark.parametrize(
    ("ext", "cut"), [("doc", 600), ("doc", 3000), ("doc", 9000), ("ppt", 600), ("ppt", 5000), ("ppt", 60000)]
)
def test_a_legacy_file_cut_short_is_a_failed_row_with_a_one_line_reason(ext, cut):
    data = _doc(0) if ext == "doc" else (LEGACY / "deck-0.ppt").read_bytes()
    parsed = parse_document(data[:cut], f"cut.{ext}")
    assert parsed.document.status == "failed"
    assert parsed.document.reason and "\n" not in parsed.document.reason
    assert len(parsed.document.reason) < 300


def test_a_doc_whose_word_stream_is_not_word_is_not_a_valid_legacy_word_document():
    data = bytearray(_doc(2))
    at = _word_document_offset(bytes(data))
    data[at : at + 2] = b"\x00\x00"
    parsed = parse_document(bytes(data), "odd.doc")
    assert parsed.document.status == "failed"
    assert parsed.document.reason.startswith("not a valid legacy Word document: ")


def test_a_word_95_document_is_unsupported_and_says_which_versions_are_read():
    data = bytearray(_doc(2))
    at = _word_document_offset(bytes(data))
    data[at + 2 : at + 4] = (104).to_bytes(2, "little")  # nFib of Word 95
    parsed = parse_document(bytes(data), "old.doc")
    assert parsed.document.status == "unsupported"
    assert parsed.document.reason == (
        "a Word 6 or Word 95 document (format version 104): raychunk reads Word 97-2003 .doc files"
    )


def test_without_msdoc2docx_the_error_names_the_package(monkeypatch):
    from raychunk.document import Document
    from raychunk.parse.word import read_doc

    monkeypatch.setitem(sys.modules, "doc2docx", None)
    with pytest.raises(ImportError, match="pip install msdoc2docx"):
        read_doc(_doc(0), Document("id", "a.doc", "doc", "ok"))


def _deck(n: int) -> bytes:
    return (LEGACY / f"deck-{n}.ppt").read_bytes()


def _stream_offset(data: bytes, name: str) -> int:
    import olefile

    with olefile.OleFileIO(data) as ole:
        entry = ole.direntries[ole._find([name])]
        assert entry.size < ole.minisectorcutoff  # a small stream: in the mini stream's sectors
        mini = ole.direntries[0]  # the root entry holds the mini stream
        sector = entry.isectStart * ole.minisectorsize
        big = ole.sectorsize
        # the mini stream's own sectors, in order, from the FAT
        chain, s = [], mini.isectStart
        while s < 0xFFFFFFFA and len(chain) < 10_000:
            chain.append(s)
            s = ole.fat[s]
        return (chain[sector // big] + 1) * big + sector % big


def test_a_ppt_reads_its_titles_bullets_tables_and_notes_with_the_same_blocks_as_its_pptx(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import random

        from fidelity_slides import deck
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rng = random.Random(11)
    for n in range(3):
        pptx, _ = deck(rng)
        a, b = parse_document(_deck(n), f"d{n}.ppt"), parse_document(pptx, f"d{n}.pptx")
        assert a.document.status == "ok", a.document.reason
        assert a.document.format == "ppt"

        def shape(p):
            return [(x.kind, x.text, x.heading_path, x.pages, x.rows, x.copies) for x in p.blocks]

        assert shape(a) == shape(b), n
        assert {"heading", "list_item", "table"} <= {x.kind for x in a.blocks}
        for x in a.blocks:
            assert a.text[x.char_start : x.char_end] == x.text


def test_a_ppt_title_is_read_from_its_records_and_a_deck_without_them_has_no_titles():
    from raychunk.parse.ppt_records import read_slides

    slides = read_slides(_deck(0))
    assert slides is not None and len(slides) == 4
    assert slides[0].title == "Archive capacity capacity 620"
    table = slides[1].tables[0]
    assert table.rows[0] == ("Storage 966", "Upload 495", "Gateway 117") and not table.copies
    merged = slides[2].tables[0]
    assert merged.copies == ((2, 2),) and merged.rows[2][2] == merged.rows[1][2]  # one cell over two rows
    assert read_slides(b"not a deck") is None
    assert read_slides(_deck(0)[:4096]) is None


@pytest.mark.skipif(not (CORPUS_OTHER / "fake-power-point.ppt").exists(), reason="shared corpus not present")
def test_a_corpus_ppt_reads_with_its_title_and_bullet_levels():
    parsed = parse_document((CORPUS_OTHER / "fake-power-point.ppt").read_bytes(), "fake-power-point.ppt")
    assert parsed.document.status == "ok" and not parsed.document.reason
    assert [(b.kind, b.level if b.kind == "list_item" else None, b.text) for b in parsed.blocks][:4] == [
        ("heading", None, "Adding a Bullet Slide"),
        ("list_item", 0, "Find the bullet slide layout"),
        ("list_item", 1, "Use _TextFrame.text for first bullet"),
        ("list_item", 2, "Use _TextFrame.add_paragraph() for subsequent bullets"),
    ]
    assert all(b.heading_path == ("Adding a Bullet Slide",) for b in parsed.blocks[1:])


def test_an_encrypted_ppt_says_it_needs_a_password():
    data = bytearray(_deck(2))
    at = _stream_offset(bytes(data), "Current User")
    assert data[at + 12 : at + 16] == (0xE391C05F).to_bytes(4, "little")
    data[at + 12 : at + 16] = (0xF3D1C4DF).to_bytes(4, "little")  # the encrypted header token
    parsed = parse_document(bytes(data), "locked.ppt")
    assert parsed.document.status == "failed"
    assert parsed.document.reason == "encrypted legacy PowerPoint deck: needs a password"


def test_without_ppt2pptx_the_error_names_the_package(monkeypatch):
    from raychunk.document import Document
    from raychunk.parse.slides import read_ppt

    monkeypatch.setitem(sys.modules, "ppt2pptx", None)
    with pytest.raises(ImportError, match="pip install ppt2pptx"):
        read_ppt(_deck(0), Document("id", "a.ppt", "ppt", "ok"))


def test_a_word_document_mangled_and_named_xls_is_a_damaged_workbook_not_a_parser_failure():
    """A fuzz find: xlrd, reading the mangled container as a workbook, fails in a codec it calls."""
    d = _doc(3)
    mangled = d[:15173] + d[20142:24690] * 916 + d[15173:]
    parsed = parse_document(mangled, "sheet.xls")
    assert parsed.document.status == "failed"
    assert parsed.document.reason.startswith(
        "not a valid legacy Excel workbook: its OLE container is damaged ("
    )


def test_what_the_deck_converter_leaves_out_is_counted_in_the_reason():
    from raychunk.parse.slides import _conversion_losses

    assert _conversion_losses([]) == ""
    assert _conversion_losses([{"code": "COMPLEX_FREEFORM_OMITTED", "count": 3}]) == ""  # a drawing: no text
    assert _conversion_losses(
        [
            {"code": "EMBEDDED_OLE_OMITTED", "count": 2},
            {"code": "CHART_OMITTED", "count": 1},
            {"code": "OLE_OBJECT_OMITTED"},
        ]
    ) == ("not read from the PowerPoint 97-2003 deck: 3 embedded objects, 1 chart")


def test_a_doc_whose_formatting_the_converter_refuses_is_read_as_plain_text(monkeypatch):
    """msdoc2docx refused the formatting of one of the corpus's Word documents as LibreOffice saved
    it (a truncated property run); its text is read straight from the piece table instead."""
    import doc2docx
    from doc2docx.errors import InvalidWordDocument

    whole = parse_document(_doc(3), "a.doc")

    def refuse(*args, **kwargs):
        raise InvalidWordDocument("PapxInFkp.grpprl ends with a truncated Sprm at byte 7")

    monkeypatch.setattr(doc2docx, "convert", refuse)
    plain = parse_document(_doc(3), "a.doc")
    assert plain.document.status == "ok"
    assert plain.document.reason == (
        "read as plain text, without headings, lists or tables: msdoc2docx cannot read it "
        "(PapxInFkp.grpprl ends with a truncated Sprm at byte 7)"
    )
    assert {b.kind for b in plain.blocks} == {"paragraph"}
    texts = {b.text for b in plain.blocks}
    for b in whole.blocks:
        if b.kind in ("heading", "paragraph", "list_item"):
            assert b.text in texts, b.text  # every line of text, a field's result among them
    cells = {c for b in whole.blocks if b.kind == "table" for row in b.rows for c in row if c}
    assert cells <= texts
    for b in plain.blocks:
        assert plain.text[b.char_start : b.char_end] == b.text


def test_fields_give_their_results_and_a_doc_that_is_not_one_gives_no_text():
    from raychunk.parse.doc_text import _resolve_fields, doc_text

    assert (
        _resolve_fields("see \x13 HYPERLINK \x14the \x13 PAGE \x143\x15 site\x15 now") == "see the 3 site now"
    )
    assert _resolve_fields("a \x13 TOC \x15b") == "a b"  # a field without a result
    assert _resolve_fields("open \x13 never closed") == "open \x13 never closed"
    assert doc_text(b"not a document") is None
    assert doc_text(_deck(0)) is None  # an OLE container without a Word document stream


def test_a_table_ppt2pptx_rebuilt_keeps_its_header_row_though_the_option_is_off():
    """ppt2pptx rebuilds a grid it recognises as a DrawingML table with the "Header Row" option off;
    a PowerPoint 97-2003 deck has no such option, and its tables start with a header row."""
    import pptx
    from pptx.util import Inches

    from raychunk.parse.slides import _table

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(1)).table
    for (r, c), text in {(0, 0): "Name", (0, 1): "Value", (1, 0): "a", (1, 1): "1"}.items():
        table.cell(r, c).text = text
    table._tbl.tblPr.set("firstRow", "0")  # as ppt2pptx writes it
    ((_, _, kw_pptx),), ((_, _, kw_ppt),) = list(_table(table)), list(_table(table, legacy=True))
    assert kw_pptx["header_rows"] == 0 and kw_ppt["header_rows"] == 1
    assert kw_pptx["rows"] == kw_ppt["rows"] == (("Name", "Value"), ("a", "1"))


def test_text_beyond_one_code_page_reads_whole_in_both_formats_and_in_the_fallback():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from fidelity_legacy import UNICODE
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from raychunk.document import Document
    from raychunk.parse.doc_text import read_doc_text

    data = (LEGACY / "unicode.doc").read_bytes()
    doc = parse_document(data, "ü.doc")
    assert [(b.kind, b.text) for b in doc.blocks[:2]] == [
        ("heading", UNICODE["heading"]),
        ("paragraph", UNICODE["paragraph"]),
    ]
    assert doc.blocks[2].rows == UNICODE["cells"]
    plain = read_doc_text(data, Document("id", "ü.doc", "doc", "ok"), "", "a test")
    assert [b.text for b in plain.blocks] == [
        UNICODE["heading"],
        UNICODE["paragraph"],
        *(c for row in UNICODE["cells"] for c in row),
    ]
    deck = parse_document((LEGACY / "unicode.ppt").read_bytes(), "東京.ppt")
    assert [(b.kind, b.text) for b in deck.blocks] == [
        ("heading", UNICODE["heading"]),
        *(("list_item", x) for x in UNICODE["bullets"]),
    ]


@pytest.mark.parametrize(
    ("name", "data", "fmt", "what", "first"),
    [
        (
            "memo.doc",
            b"{\\rtf1\\ansi{\\fonttbl\\f0 Arial;}\\f0 Ship it.\\par}",
            "rtf",
            "an RTF document",
            "Ship it.",
        ),
        (
            "memo.doc",
            b"<html><body><h1>Plan</h1><p>Ship it.</p></body></html>",
            "html",
            "HTML",
            "Plan",
        ),
        (
            "memo.doc",
            b"MIME-Version: 1.0\nContent-Type: text/html; charset=utf-8\n\n<html><body><h1>Plan</h1></body></html>\n",
            "eml",
            "a web page saved as one MIME file",
            "Plan",
        ),
        ("notes.doc", b"Notes for Monday.\n\nShip it.\n", "text", "plain text", "Notes for Monday."),
        (
            "export.xls",
            b"<table><tr><th>Part</th><th>Qty</th></tr><tr><td>Bolt</td><td>4</td></tr></table>",
            "html",
            "HTML",
            "| Part | Qty |\n|---|---|\n| Bolt | 4 |",
        ),
    ],
)
def test_what_office_opens_under_a_legacy_name_is_read_as_what_it_is(name, data, fmt, what, first):
    """Word opens RTF, a web page or plain text saved as .doc, Excel a web page's table "exported" as
    .xls; so does raychunk, and the reason says what the file was."""
    parsed = parse_document(data, name)
    assert parsed.document.status == "ok", parsed.document.reason
    assert parsed.document.format == fmt
    assert parsed.document.reason.startswith(
        f"content is {what} under a .{name.rsplit('.', 1)[1]} name: read as one"
    )
    assert parsed.blocks[0].text == first


def test_a_newer_office_file_under_the_old_name_is_read_and_binary_that_is_no_document_is_not():
    docx = parse_document((ROOT / "samples" / "onboarding-checklist.docx").read_bytes(), "checklist.doc")
    assert docx.document.status == "ok" and docx.document.format == "docx"
    assert docx.document.reason.startswith("content is a Word document under a .doc name: read as one")
    deck = parse_document((ROOT / "samples" / "q3-platform-review.pptx").read_bytes(), "review.ppt")
    assert deck.document.format == "pptx" and deck.document.status == "ok"
    garbage = parse_document(b"\x00\x01\x02binary" * 50, "memo.doc")
    assert garbage.document.status == "failed"
    assert garbage.document.reason == (
        "content is unrecognised binary data, not a legacy Word document as the .doc extension says"
    )


def test_a_document_whose_only_text_is_its_text_boxes_is_not_empty():
    from raychunk.document import Document, ParsedDocument
    from raychunk.parse.word import _appended

    empty = ParsedDocument(Document("id", "a.doc", "doc", "empty", "no text found"))
    out = _appended(empty, ["Call the desk.", "Room 4"])
    assert (out.document.status, out.document.reason) == ("ok", "")
    assert out.text == "Call the desk.\n\nRoom 4"
    assert [(b.text, out.text[b.char_start : b.char_end]) for b in out.blocks] == [
        ("Call the desk.", "Call the desk."),
        ("Room 4", "Room 4"),
    ]


_SPREADSHEET_2003 = b"""<?xml version="1.0"?>
<?mso-application progid="Excel.Sheet"?>
<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"
 xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">
 <Worksheet ss:Name="Orders">
  <Table>
   <Row><Cell ss:MergeAcross="2"><Data ss:Type="String">Q3 orders</Data></Cell></Row>
   <Row ss:Index="3"><Cell><Data ss:Type="String">Part</Data></Cell><Cell><Data ss:Type="String">Qty</Data></Cell>
    <Cell><Data ss:Type="String">Shipped</Data></Cell></Row>
   <Row><Cell><Data ss:Type="String">Bolt</Data></Cell><Cell><Data ss:Type="Number">4.0</Data></Cell>
    <Cell><Data ss:Type="DateTime">2024-01-05T00:00:00.000</Data></Cell></Row>
   <Row><Cell><Data ss:Type="String">Nut &amp; washer</Data></Cell><Cell><Data ss:Type="Number">12.5</Data></Cell>
    <Cell ss:Index="3"><Data ss:Type="Boolean">1</Data></Cell></Row>
  </Table>
 </Worksheet>
</Workbook>
"""


def test_an_excel_2003_xml_spreadsheet_named_xls_is_read_as_a_workbook():
    """Report servers and exports save "XML Spreadsheet 2003" under an .xls name, and Excel opens it."""
    parsed = parse_document(_SPREADSHEET_2003, "orders.xls")
    assert (parsed.document.format, parsed.document.status, parsed.document.reason) == ("xls", "ok", "")
    assert [(b.kind, b.text, b.heading_path) for b in parsed.blocks[:2]] == [
        ("heading", "Orders", ()),
        ("paragraph", "Q3 orders", ("Orders",)),
    ]
    table = parsed.blocks[2]
    assert table.rows == (
        ("Part", "Qty", "Shipped"),
        ("Bolt", "4", "2024-01-05"),
        ("Nut & washer", "12.5", "TRUE"),
    )
    assert table.header_rows == 1
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text


def test_an_excel_2003_xml_spreadsheet_reads_no_entity_and_a_broken_one_is_a_failed_row():
    hostile = _SPREADSHEET_2003.replace(
        b'<?mso-application progid="Excel.Sheet"?>',
        b'<!DOCTYPE Workbook [<!ENTITY leak SYSTEM "file:///etc/hostname">]>',
    ).replace(b"Q3 orders", b"Q3 &leak; orders")
    parsed = parse_document(hostile, "orders.xls")
    assert parsed.document.status == "ok"
    assert parsed.blocks[1].text == "Q3 orders"  # the external entity is not read
    broken = parse_document(_SPREADSHEET_2003[:600], "orders.xls")
    assert broken.document.status == "failed"
    assert broken.document.reason.startswith("not a well-formed Excel 2003 XML spreadsheet: ")
