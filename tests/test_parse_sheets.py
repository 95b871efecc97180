"""raychunk's own workbook reader (``parse/sheets.py``) on workbooks drawn here with openpyxl, raw XML
where openpyxl writes no such thing (a value Excel saved with a formula, a 1904 date system)."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile

import pytest

from raychunk.parse import parse_document

openpyxl = pytest.importorskip("openpyxl")


def saved(book, edit=None) -> bytes:
    buf = io.BytesIO()
    book.save(buf)
    if edit is None:
        return buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    edit(members)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    return out.getvalue()


def parse(data: bytes):
    parsed = parse_document(data, "book.xlsx")
    assert parsed.document.status == "ok", parsed.document.reason
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text, b
    return parsed


def test_tables_side_by_side_and_stacked_with_their_lines():
    """A title line above a table, a note under it, a second table to its right past a blank column
    and a third below past a blank row: three tables and two lines, read top to bottom, left to
    right, under the sheet's name. unstructured (pandas) took the title for a heading guessed from its
    words and spent seconds loading spaCy to guess it."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Q3 Revenue"
    ws["A1"] = "Revenue by region, EUR thousands"
    for r, row in enumerate([("Region", "Revenue", "Closed"), ("North", 1500, dt.date(2024, 9, 30)),
                             ("South", 12.5, dt.date(2024, 10, 1))], start=2):  # fmt: skip
        for c, v in enumerate(row, start=1):
            ws.cell(r, c, v)
    ws["A5"] = "Source: finance export."
    for r, row in enumerate([("Team", "On call"), ("Core", True), ("Edge", False)], start=1):
        for c, v in enumerate(row, start=5):
            ws.cell(r, c, v)
    for r, row in enumerate([("Quarter", "Target"), ("Q4", 0.07)], start=8):
        for c, v in enumerate(row, start=1):
            ws.cell(r, c, v)
    parsed = parse(saved(book))
    got = [(b.kind, b.text if b.kind != "table" else b.rows, b.heading_path) for b in parsed.blocks]
    sheet = ("Q3 Revenue",)
    assert got == [
        ("heading", "Q3 Revenue", ()),
        ("paragraph", "Revenue by region, EUR thousands", sheet),
        ("table", (("Region", "Revenue", "Closed"), ("North", "1500", "2024-09-30"),
                   ("South", "12.5", "2024-10-01")), sheet),
        ("paragraph", "Source: finance export.", sheet),
        ("table", (("Team", "On call"), ("Core", "TRUE"), ("Edge", "FALSE")), sheet),
        ("table", (("Quarter", "Target"), ("Q4", "0.07")), sheet),
    ]  # fmt: skip
    assert all(b.pages == (1,) for b in parsed.blocks)


def test_merged_cells_repeat_in_a_table_and_a_merged_title_is_one_line():
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Staff"
    ws["A1"] = "Headcount by site"
    ws.merge_cells("A1:C1")  # a title across the table: one line, not a header row
    rows = [("Site", "Team", "People"), ("Berlin", "Core", 12), (None, "Edge", 4), ("Lyon", "Core", 7)]
    for r, row in enumerate(rows, start=2):
        for c, v in enumerate(row, start=1):
            ws.cell(r, c, v)
    ws.merge_cells("A3:A4")  # Berlin over two rows
    parsed = parse(saved(book))
    [line] = [b for b in parsed.blocks if b.kind == "paragraph"]
    [table] = [b for b in parsed.blocks if b.kind == "table"]
    assert line.text == "Headcount by site"
    assert table.rows == (
        ("Site", "Team", "People"),
        ("Berlin", "Core", "12"),
        ("Berlin", "Edge", "4"),
        ("Lyon", "Core", "7"),
    )
    assert table.copies == ((2, 0),)


def test_a_formula_shows_its_saved_value_or_else_itself():
    """Excel saves a formula's value with it; a library that writes formulas saves none, and then the
    formula is what there is to read."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Totals"
    for r, row in enumerate([("Item", "Cost"), ("Disk", 40), ("CPU", 60), ("Total", "=SUM(B2:B3)"),
                             ("Share", "=B2/B4")], start=1):  # fmt: skip
        for c, v in enumerate(row, start=1):
            ws.cell(r, c, v)

    def excel_saved_one(members):  # B4 gets the value Excel would have saved; B5 none
        sheet = members["xl/worksheets/sheet1.xml"]
        members["xl/worksheets/sheet1.xml"] = sheet.replace(
            b"<f>SUM(B2:B3)</f><v></v>", b"<f>SUM(B2:B3)</f><v>100</v>"
        )

    [table] = [b for b in parse(saved(book, excel_saved_one)).blocks if b.kind == "table"]
    assert table.rows[3:] == (("Total", "100"), ("Share", "=B2/B4"))


def test_dates_of_a_1904_workbook_and_times_of_day():
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Log"
    ws.append(("Event", "When", "At"))
    ws.append(("Deploy", dt.date(2024, 3, 5), dt.time(14, 30)))
    ws.append(("Rollback", dt.datetime(2024, 3, 6, 9, 15), dt.time(9, 15)))

    def to_1904(members):
        # serials count from 1904 there: 1,462 days fewer for the same date
        wb = members["xl/workbook.xml"].decode()
        members["xl/workbook.xml"] = re.sub(
            r"<workbookPr\b([^>/]*)/?>", r'<workbookPr date1904="1"\1/>', wb, count=1
        ).encode()
        sheet = members["xl/worksheets/sheet1.xml"].decode()

        def shift(m):
            value = float(m.group(2))
            return m.group(1) + (str(value - 1462) if value >= 1462 else m.group(2)) + "</v>"

        members["xl/worksheets/sheet1.xml"] = re.sub(
            r"(<c r=\"B\d\"[^>]*><v>)([\d.]+)</v>", shift, sheet
        ).encode()

    for edit in (None, to_1904):
        [table] = [b for b in parse(saved(book, edit)).blocks if b.kind == "table"]
        assert table.rows == (
            ("Event", "When", "At"),
            ("Deploy", "2024-03-05", "14:30:00"),
            ("Rollback", "2024-03-06 09:15:00", "09:15:00"),
        ), edit


def test_hidden_sheets_are_read_and_empty_ones_give_no_heading():
    book = openpyxl.Workbook()
    book.active.title = "Visible"
    book.active.append(("Plan", "Seats"))
    book.active.append(("Team", 10))
    book.create_sheet("Empty")
    hidden = book.create_sheet("Lookup")
    hidden.append(("Code", "Meaning"))
    hidden.append(("E42", "quota exceeded"))
    hidden.sheet_state = "hidden"
    parsed = parse(saved(book))
    assert [b.text for b in parsed.blocks if b.kind == "heading"] == ["Visible", "Lookup"]
    assert [b.pages for b in parsed.blocks if b.kind == "table"] == [(1,), (3,)]
    assert parsed.document.pages == 3


def test_hostile_sheets_cost_nothing():
    """A merge over the whole sheet, cell references past Excel's limits, and three thousand lone
    cells (no table to find)."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Odd"
    for k in range(3000):
        ws.cell(1 + 2 * (k // 50), 1 + 2 * (k % 50), f"v{k}")

    def damage(members):
        sheet = members["xl/worksheets/sheet1.xml"].decode()
        sheet = sheet.replace(
            "</sheetData>",
            '<row r="99999999"><c r="ZZZZ99999999" t="inlineStr"><is><t>far</t></is></c></row></sheetData>',
        )
        sheet = sheet.replace("</worksheet>", '<mergeCells count="2"><mergeCell ref="A1:XFD1048576"/><mergeCell ref="B:A"/></mergeCells></worksheet>')  # fmt: skip
        members["xl/worksheets/sheet1.xml"] = sheet.encode()

    parsed = parse(saved(book, damage))
    assert sum(b.kind == "paragraph" for b in parsed.blocks) == 3000 and "far" not in parsed.text


def test_a_table_with_its_title_and_note_is_read_before_the_table_beside_it():
    """A title over a table a blank row away and a note under it go with that table: the table to its
    right, level with the title, comes after the note, not between the title and its table."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Budget"
    ws["A1"] = "Spend by team"
    for r, row in enumerate([("Team", "Spend"), ("Core", 40), ("Edge", 60)], start=3):
        for c, v in enumerate(row, start=1):
            ws.cell(r, c, v)
    ws["A7"] = "Source: ledger."
    ws["E1"] = "Hires by team"
    for r, row in enumerate([("Team", "Hires"), ("Core", 2)], start=2):
        for c, v in enumerate(row, start=5):
            ws.cell(r, c, v)
    texts = [b.text.split("\n")[0] for b in parse(saved(book)).blocks]
    assert texts == [
        "Budget",
        "Spend by team",
        "| Team | Spend |",
        "Source: ledger.",
        "Hires by team",
        "| Team | Hires |",
    ]


def test_a_sparse_sheet_wide_and_long_is_read_by_its_cells_not_its_box():
    """A column of 20,000 cells and a row across all 16,384 columns meeting at A1: one region whose
    box is 327 million cells. The reader walks the cells, not the box: the two rows of several cells
    are a table, the rows of one cell below them lines of text."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Sparse"
    for r in range(1, 20_001):
        ws.cell(r, 1, f"r{r}")
    for c in range(2, 16_385):
        ws.cell(1, c, f"c{c}")
    ws.cell(2, 2, "inside")
    parsed = parse(saved(book))
    [table] = [b for b in parsed.blocks if b.kind == "table"]
    assert len(table.rows) == 2 and len(table.rows[0]) == 16_384 and table.rows[1][:3] == ("r2", "inside", "")
    lines = [b.text for b in parsed.blocks if b.kind == "paragraph"]
    assert len(lines) == 19_998 and lines[0] == "r3" and lines[-1] == "r20000"


def test_a_region_too_sparse_to_be_one_table_gives_its_rows_as_lines():
    """A row across every column, a column of 300 cells and one more cell in each of those rows, far
    apart: the rows of several cells span 15,000 columns, a grid of 4.5 million cells for 17,000
    values. Its rows are lines (``a | b``), not a table a document process could not hold."""
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Scatter"
    for c in range(1, 16_385):
        ws.cell(1, c, f"h{c}")
    for r in range(2, 302):
        ws.cell(r, 1, f"r{r}")
        ws.cell(r, 2 + (r * 53) % 15_000, f"v{r}")
    parsed = parse(saved(book))
    assert not [b for b in parsed.blocks if b.kind == "table"]
    lines = [b.text for b in parsed.blocks if b.kind == "paragraph"]
    assert len(lines) == 301 and lines[1] == "r2 | v2" and lines[0].startswith("h1 | h2 | ")
