"""OpenDocument spreadsheets (``.ods``) and presentations (``.odp``), read from the package's XML by
the rules of the Excel and PowerPoint readers. Before, both were ``unsupported`` rows ("content is a
zip archive, not a supported document"): every LibreOffice Calc and Impress file lost."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

DATA = Path(__file__).parent / "data" / "odf"  # pyexcel-ods3's and odfpy's test files (README.md)

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)


def ods(body: str, mimetype: bytes = b"application/vnd.oasis.opendocument.spreadsheet") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", mimetype)
        zf.writestr(
            "content.xml",
            f'<?xml version="1.0"?><office:document-content {_NS}><office:body><office:spreadsheet>'
            f"{body}</office:spreadsheet></office:body></office:document-content>",
        )
    return buf.getvalue()


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert_spans_match(p, rendered=("page_break",))
    return p


def blocks(p) -> list[tuple]:
    return [(b.kind, b.text, b.pages) for b in p.blocks]


def test_calc_spreadsheets_from_pyexcel():
    p = parsed((DATA / "file_with_an_empty_sheet.ods").read_bytes(), "book.ods")
    assert (p.document.format, p.document.status, p.document.pages) == ("ods", "ok", 3)
    assert blocks(p) == [
        ("heading", "Sheet1", (1,)),
        ("table", "| 1 | 2 | 3 |\n|---|---|---|\n| 4 | 5 | 6 |", (1,)),
        ("heading", "Sheet3", (3,)),  # Sheet2 holds nothing
        ("table", "| 7 | 8 | 9 |\n|---|---|---|\n| 10 | 11 | 12 |", (3,)),
    ]
    # each cell as Calc showed it when the file was saved (a German locale: WAHR, 11,11, 200,00%)
    formats = parsed((DATA / "ods_formats.ods").read_bytes(), "formats.ods")
    table = next(b for b in formats.blocks if b.kind == "table")
    assert table.rows[0] == (
        "Date",
        "Time",
        "Boolean",
        "Float",
        "Currency",
        "Percentage",
        "Int",
        "Scientific",
        "Fractions",
        "Text",
    )
    assert table.rows[1] == (
        "11.11.14",
        "11:12:12",
        "WAHR",
        "11,11",
        "£1",
        "200,00%",
        "3",
        "1,00E+005",
        "1 1/4",
        "abc",
    )
    lines = parsed((DATA / "multilineods.ods").read_bytes(), "lines.ods")
    assert [b.text for b in lines.blocks if b.kind != "heading"] == ["1\n2\n3\n4", "Line 1\nLine 2"]


def test_repeated_rows_spans_and_typed_values():
    """How Calc stores a sheet: a million empty rows as one repeated row, a value without shown text,
    a cell spanning two columns (the covered one written apart)."""
    body = (
        '<table:table table:name="Budget">'
        '<table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>Q3 budget</text:p>'
        "</table:table-cell><table:covered-table-cell/></table:table-row>"
        "<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>"
        "<table:table-cell><text:p>EUR</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>GPUs</text:p></table:table-cell>"
        '<table:table-cell office:value-type="float" office:value="12500"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048573"><table:table-cell table:number-columns-repeated="1024"/>'
        "</table:table-row></table:table>"
    )
    p = parsed(ods(body), "budget.ods")
    assert blocks(p) == [
        ("heading", "Budget", (1,)),
        ("paragraph", "Q3 budget", (1,)),
        ("table", "| Item | EUR |\n|---|---|\n| GPUs | 12500 |", (1,)),
    ]


def test_impress_presentations_from_odfpy():
    p = parsed((DATA / "ol.odp").read_bytes(), "ol.odp")
    assert (p.document.format, p.document.status, p.document.pages) == ("odp", "ok", 1)
    got = [(b.kind, b.text, b.level, b.marker) for b in p.blocks]
    # each nested list numbered as its own list style numbers that level
    assert got[:6] == [
        ("heading", "OL", 1, ""),
        ("list_item", "Eins", 0, "1."),
        ("list_item", "Tsvey", 0, "2."),
        ("list_item", "Dray", 1, "1."),
        ("list_item", "Fir", 1, "2."),
        ("list_item", "Finf", 0, "3."),
    ]
    assert all(b.heading_path == ("OL",) for b in p.blocks[1:])
    embedded = parsed((DATA / "emb_spreadsheet.odp").read_bytes(), "embedded.odp")
    assert blocks(embedded) == [
        ("heading", "Embedded Spreadsheet", (1,)),
        (
            "table",
            "| col1 | col2 | col3 |\n|---|---|---|\n| val11 | val21 | val31 |\n| val12 | val22 | val32 |\n"
            "| val13 | val23 | val33 |",
            (1,),
        ),
    ]
    columns = parsed((DATA / "cols.odp").read_bytes(), "cols.odp")
    texts = [b.text for b in columns.blocks]
    assert texts[:3] == ["Col 1", "Col 2", "Col 3"]  # the top row of shapes, left to right
    assert len(texts) == 16 and all(b.kind == "paragraph" for b in columns.blocks)


@pytest.mark.parametrize(
    ("data", "name", "status", "reason"),
    [
        (ods("<table:table/>"), "empty.ods", "empty", "no text found"),
        (ods("").replace(b"content.xml", b"contents.xm"), "broken.ods", "failed", "not a valid OpenDocument"),
        (ods("<table:table><table:table-row>"), "cut.ods", "failed", "not a valid OpenDocument"),
    ],
)
def test_odf_edges(data, name, status, reason):
    doc = parse_document(data, name).document
    assert doc.status == status and doc.reason.startswith(reason), doc
