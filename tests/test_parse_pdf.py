"""The PDF parser, on PDFs generated here with pymupdf (no files, no network)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pymupdf = pytest.importorskip("pymupdf")

from raychunk.chunking import Profile, chunk_document  # noqa: E402
from raychunk.parse import ParseOptions, parse_document  # noqa: E402
from raychunk.tokens import WordCounter  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"

A4 = pymupdf.paper_rect("a4")
LOREM = (
    "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore "
    "et dolore magna aliqua. Ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut "
    "aliquip ex ea commodo consequat."
)


def parse(data: bytes, **options):
    doc = parse_document(data, "test.pdf", options=ParseOptions(**options))
    check_spans(doc)
    return doc


def check_spans(doc) -> None:
    """The invariant: every block's text is its slice of doc.text, and its pages exist."""
    n = doc.document.pages
    for b in doc.blocks:
        assert doc.text[b.char_start : b.char_end] == b.text
        assert b.pages and all(1 <= p <= n for p in b.pages), b
        if b.kind == "page_break":
            assert b.text == "" and b.char_start == b.char_end
    breaks = [b.pages[0] for b in doc.blocks if b.kind == "page_break"]
    assert breaks == sorted(breaks)


def story_pdf(html: str, css: str = "") -> bytes:
    story = pymupdf.Story(html=html, user_css=css)
    buf = io.BytesIO()
    writer = pymupdf.DocumentWriter(buf)
    more = True
    while more:
        device = writer.begin_page(A4)
        more, _ = story.place(A4 + (72, 72, -72, -72))
        story.draw(device)
        writer.end_page()
    writer.close()
    return buf.getvalue()


def texts(doc, kind: str | None = None) -> list[str]:
    return [b.text for b in doc.blocks if kind is None or b.kind == kind]


# ---------------------------------------------------------------------------------------------------
# structure


def test_headings_by_font_size_get_levels_and_paths():
    html = (
        "<h1>Annual Report</h1><p>" + LOREM + "</p>"
        "<h2>Revenue</h2><p>" + LOREM + "</p><p>" + LOREM + "</p>"
        "<h2>Costs</h2><p>" + LOREM + "</p>"
    )
    doc = parse(story_pdf(html))
    assert doc.document.status == "ok"
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Annual Report", 1), ("Revenue", 2), ("Costs", 2)]
    paras = [b for b in doc.blocks if b.kind == "paragraph"]
    assert len(paras) == 4
    assert paras[0].heading_path == ("Annual Report",)
    assert paras[1].heading_path == ("Annual Report", "Revenue")
    assert paras[3].heading_path == ("Annual Report", "Costs")
    assert doc.document.title == "Annual Report"
    assert all(b.pages == (1,) for b in doc.blocks)


def test_list_numbers_in_the_text_are_shown_once():
    """A PDF item keeps its number in its text (the text is the page's); a chunk shows it as written,
    ``1. Add Traefik to DNS``, where it showed ``- 1. Add Traefik to DNS``; a bulleted item, its
    bullet left out of its text, still shows ``-``."""
    doc = pymupdf.open()
    page = doc.new_page()
    lines = [
        "Steps:",
        "1.  Add Traefik to DNS",
        "2.  Remove NGINX from DNS",
        "Notes:",
        "\u2022  keep the old proxy",
    ]
    for k, text in enumerate(lines):
        page.insert_text((72, 72 + 18 * k + (10 if k == 3 else 0)), text, fontsize=11, fontname="cour")
    parsed = parse(doc.tobytes())
    assert [(b.kind, b.text) for b in parsed.blocks if b.kind == "list_item"][:2] == [
        ("list_item", "1. Add Traefik to DNS"),
        ("list_item", "2. Remove NGINX from DNS"),
    ]
    (chunk,) = chunk_document(parsed, Profile(strategy="structure", max_tokens=200), WordCounter())
    assert "Steps:\n\n1. Add Traefik to DNS\n2. Remove NGINX from DNS\n\nNotes:" in chunk.text
    assert "- 1." not in chunk.text


@pytest.mark.parametrize(
    "font, bold",
    [
        ("HelveticaNeueLTStd-HvIt", True),  # heavy italic, no bold flag set
        ("HelveticaNeueLTStd-Bd", True),
        ("HelveticaNeueLTStd-BdCn", True),
        ("HelveticaNeueLTStd-BlkCn", True),
        ("ABCDEF+FranklinGothic-Demi", True),
        ("SDGothicNeoc-fBd", True),
        ("Arial-BoldMT", True),
        ("HelveticaNeueLTStd-Roman", False),
        ("HelveticaNeueLTStd-Md", False),
        ("HelveticaNeueLTStd-LtCn", False),
        ("Garamond-Book", False),
        ("Hvidovre-Regular", False),  # the letters of a weight in the family's name
        ("Abdul-Italic", False),
        ("AcademicSans-Regular", False),
        ("ITCFranklinGothic-DemiCn", True),
    ],
)
def test_bold_weights_are_read_from_font_names(font, bold):
    from raychunk.parse.pdf import _make_line

    span = {"text": "DIMENSIONS", "size": 8.0, "flags": 6, "font": font}  # flags: italic, serif; no bold
    line = _make_line({"spans": [span], "bbox": (32, 301, 81, 311)}, None)
    assert line.bold is bold


def test_a_section_heading_over_a_smaller_bold_subheading_is_a_heading():
    body = "<p>" + LOREM + "</p>"
    html = (
        body + '<p style="font-weight:bold;font-size:11pt">DIMENSIONS</p>'
        '<p style="font-weight:bold">Standard arm</p>'
        + body
        + body
        + '<p style="font-weight:bold">Label one</p><p style="font-weight:bold">Label two</p>'
        + body * 4
    )
    doc = parse(story_pdf(html, "p {font-size: 10pt}"))
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    # the section over its subheading, the subheading over its text; a bold label over another of its
    # size is not a section
    assert heads == [("DIMENSIONS", 1), ("Standard arm", 2), ("Label two", 2)]
    standard = next(
        b for b in doc.blocks if b.kind == "paragraph" and b.heading_path[-1:] == ("Standard arm",)
    )
    assert standard.heading_path == ("DIMENSIONS", "Standard arm")
    assert "Label one" in texts(doc, "paragraph")


def test_a_bold_band_in_the_style_of_the_sections_is_one_over_short_rows_too():
    body = "<p>" + LOREM + "</p>"
    rows = "".join(f"<p>{k} {v}</p>" for k, v in [("Voltage", "12 Volts"), ("Battery", "100 Ah")])
    band = '<p style="font-weight:bold">{}</p>'
    html = (
        band.format("DRIVETRAIN")
        + body
        + band.format("HYDRAULICS")
        + body
        # under six words a row: running text alone would not say it is a section
        + band.format("ELECTRICAL")
        + rows
        + body
        + '<p style="font-weight:bold;font-size:9pt">Small print</p>'
        + rows
        + body
    )
    doc = parse(story_pdf(html, "p {font-size: 10pt}"))
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == ["DRIVETRAIN", "HYDRAULICS", "ELECTRICAL"]  # a bold line in no section's style stays
    volts = next(b for b in doc.blocks if b.text.startswith("Voltage"))
    assert volts.heading_path == ("ELECTRICAL",)


def test_a_title_set_above_a_side_column_is_the_title():
    from raychunk.parse.pdf import _Line, _Piece, _top_title

    def heading(text, level, y0, y1, page=1):
        line = _Line(text, 30, y0, 200, y1, 10.0, len(text), len(text))
        return _Piece("heading", [line], (page,), level=level, text=text)

    side, title = heading("DRIVETRAIN", 5, 450, 460), heading("CX57C", 1, 45, 85)
    assert _top_title([side, title]) == "CX57C"  # read after the left column, set across the top
    assert _top_title([title, side]) == ""  # the first heading names it already
    assert _top_title([heading("Application", 2, 42, 52), heading("Version 02", 1, 41, 50)]) == ""  # one band
    assert _top_title([side, heading("Model", 6, 45, 85)]) == ""  # a lower level above: not a title
    assert _top_title([side, heading("CX57C", 1, 45, 85, page=2)]) == ""  # another page


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
def test_a_spec_sheet_has_its_sections_and_its_title():
    # Case's CX57C sheet: white heavy-italic section bands ("HelveticaNeueLTStd-HvIt", no bold flag)
    # in a left column read before the model name set large across the top
    doc = parse((CORPUS / "pdf" / "test_3848.pdf").read_bytes())
    assert doc.document.title == "CX57C"
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert {"DRIVETRAIN", "HYDRAULICS", "DIMENSIONS", "LIFT CAPACITIES"} <= set(heads)
    # page 1's bands over rows of a label and a value, in the style of its other sections
    first = [b.text for b in doc.blocks if b.kind == "heading" and b.pages == (1,)]
    assert {"ENGINE", "DRIVETRAIN", "ELECTRICAL", "HYDRAULICS"} <= set(first)
    arm = next(b for b in doc.blocks if b.kind == "heading" and b.text == "5 ft 3 in (1.6 m) Arm")
    assert arm.heading_path == (
        "CX57C",
        "DIMENSIONS",
    )  # a column's label, no longer the parent of all after it
    note = next(b for b in doc.blocks if b.text.startswith("NOTE: Lifting capacity are based on ISO 10567"))
    assert note.heading_path == ("CX57C", "LIFT CAPACITIES")


def test_two_columns_read_left_column_first():
    pdf = pymupdf.open()
    page = pdf.new_page(width=A4.width, height=A4.height)
    left = " ".join(f"Leftword{i}" for i in range(120))
    right = " ".join(f"Rightword{i}" for i in range(120))
    # the right column is written first, so content-stream order alone would read it first
    page.insert_textbox(pymupdf.Rect(310, 120, 540, 700), right, fontsize=10, fontname="helv")
    page.insert_textbox(pymupdf.Rect(55, 120, 285, 700), left, fontsize=10, fontname="helv")
    page.insert_textbox(
        pymupdf.Rect(55, 60, 540, 100),
        "A title that spans both columns of the page",
        fontsize=18,
        fontname="helv",
    )
    doc = parse(pdf.tobytes())
    text = doc.text
    assert text.index("A title that spans") < text.index("Leftword0") < text.index("Leftword119")
    assert text.index("Leftword119") < text.index("Rightword0") < text.index("Rightword119")


def test_hyphenated_line_end_is_joined_and_lines_become_one_paragraph():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text(
        (72, 100),
        "This sentence holds an exam-\nple of a word cut at the end\nof a line, and a well-\nKnown one.",
        fontsize=11,
        fontname="helv",
    )
    doc = parse(pdf.tobytes())
    assert texts(doc) == [
        "This sentence holds an example of a word cut at the end of a line, and a well- Known one."
    ]


def test_bullets_become_list_items_with_nesting():
    html = (
        "<p>Shopping list for the weekend trip:</p>"
        "<ul><li>Apples from the market</li><li>Bread<ul><li>Whole wheat</li></ul></li><li>Cheese</li></ul>"
    )
    doc = parse(story_pdf(html))
    items = [(b.text, b.level) for b in doc.blocks if b.kind == "list_item"]
    assert [t for t, _ in items] == ["Apples from the market", "Bread", "Whole wheat", "Cheese"]
    assert [lvl for _, lvl in items] == [0, 0, 1, 0]


def _ruled_table(page, x0: float, y0: float, rows: list[list[str]], col_w: float = 120, row_h: float = 22):
    n_cols = len(rows[0])
    for r in range(len(rows) + 1):
        page.draw_line((x0, y0 + r * row_h), (x0 + n_cols * col_w, y0 + r * row_h))
    for c in range(n_cols + 1):
        page.draw_line((x0 + c * col_w, y0), (x0 + c * col_w, y0 + len(rows) * row_h))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            page.insert_text(
                (x0 + c * col_w + 4, y0 + r * row_h + 15),
                cell,
                fontsize=10,
                fontname="hebo" if r == 0 else "helv",
            )


def _text_grid(page, x0: float, y0: float, rows: list[list[str]], col_w: float = 140, row_h: float = 16):
    """A borderless table: the cells as text in columns, no lines drawn."""
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            page.insert_text((x0 + col_w * c, y0 + row_h * r), cell, fontsize=10)


TABLE = [
    ["Product", "Units", "Price"],
    ["Widget", "12", "3.50"],
    ["Gadget", "7", "11.00"],
    ["Doohickey", "3", "2.25"],
]


def _table_pdf() -> bytes:
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 100), "The first page only has prose on it.", fontsize=11)
    page = pdf.new_page()
    page.insert_text((72, 100), "Sales by product are listed in the table below.", fontsize=11)
    _ruled_table(page, 72, 130, TABLE)
    page.insert_text((72, 260), "That was the table; this paragraph comes after it.", fontsize=11)
    return pdf.tobytes()


def test_ruled_table_with_header_row():
    doc = parse(_table_pdf())
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    t = tables[0]
    assert t.rows == tuple(tuple(r) for r in TABLE)
    assert t.header_rows == 1
    assert t.pages == (2,)
    assert t.text.splitlines()[:2] == ["| Product | Units | Price |", "|---|---|---|"]
    kinds = [b.kind for b in doc.blocks]
    assert kinds == ["paragraph", "page_break", "paragraph", "table", "paragraph"]
    assert "Widget" not in " ".join(texts(doc, "paragraph"))  # cell text is not repeated as prose


def _raised(page, x: float, y: float, text: str, mark: str, size: float = 10) -> float:
    """``text`` then ``mark`` set small and raised after it, as a footnote mark or an exponent is;
    where the line goes on."""
    page.insert_text((x, y), text, fontsize=size)
    x += pymupdf.get_text_length(text, fontsize=size)
    page.insert_text((x, y - 0.38 * size), mark, fontsize=0.6 * size)
    return x + pymupdf.get_text_length(mark, fontsize=0.6 * size)


def test_footnote_marks_and_exponents_are_superscripts_not_digits_of_the_number():
    """A mark set raised and small after a number (a Google Docs export's footnote, ``273.879.750`` and
    its ``1``) was read into the number, ``273.879.7501``, in text and in a table's cell; an exponent
    too (``12 km2``). They read ``273.879.750¹`` and ``12 km²``; a subscript, set lower, stays a
    digit (``H2O``)."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    x = _raised(page, 72, 100, "Revenue was 273.879.750", "1", 11)
    page.insert_text((x, 100), " in 2024 over 12 km", fontsize=11)
    x += pymupdf.get_text_length(" in 2024 over 12 km", fontsize=11)
    _raised(page, x, 100, "", "2", 11)
    page.insert_text((72, 125), "Water is H", fontsize=11)
    x = 72 + pymupdf.get_text_length("Water is H", fontsize=11)
    page.insert_text((x, 127.5), "2", fontsize=6.6)
    page.insert_text((x + 4, 125), "O here.", fontsize=11)
    _ruled_table(page, 72, 160, [["Line", "Revenue", "Cost"], ["North", "", "12"], ["South", "7", "9"]])
    _raised(page, 72 + 120 + 4, 160 + 22 + 15, "83,190,556", "2")
    doc = parse(pdf.tobytes())
    assert [b.text for b in doc.blocks if b.kind == "paragraph"] == [
        "Revenue was 273.879.750¹ in 2024 over 12 km²",
        "Water is H2O here.",
    ]
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows[1] == ("North", "83,190,556²", "12")


def test_table_finder_can_be_switched_off():
    doc = parse(_table_pdf(), pdf_tables="never")
    assert not [b for b in doc.blocks if b.kind == "table"]
    assert "Widget" in doc.text


def test_page_over_a_work_cap_is_not_searched_and_says_so(monkeypatch):
    from raychunk.parse import pdf
    from raychunk.parse._pdf_tables import Caps

    monkeypatch.setattr(pdf, "_CAPS", Caps(segments=5))
    doc = parse(_table_pdf())
    assert doc.document.status == "ok"
    assert doc.document.reason == "page 2 not searched for tables (more than 5 drawn segments)"
    assert "Widget" in doc.text and not [b for b in doc.blocks if b.kind == "table"]


def test_prose_pages_do_not_read_drawings(monkeypatch):
    from raychunk.parse import pdf

    def no_rules(*args, **kwargs):
        raise AssertionError("the table search ran on a page whose text never sits side by side")

    monkeypatch.setattr(pdf, "rules", no_rules)
    doc = parse(story_pdf("<h1>Plain</h1>" + "<p>" + LOREM + "</p>" * 3))
    assert doc.document.status == "ok" and doc.document.reason == ""


def _tables_pdf(pages: int = 6) -> bytes:
    """Ruled and borderless tables on every page, with prose around them."""
    pdf = pymupdf.open()
    for n in range(pages):
        page = pdf.new_page()
        page.insert_text((72, 80), f"Section {n + 1}: the figures of this quarter.", fontsize=11)
        _ruled_table(page, 72, 110, [[f"{c}{n}" for c in row] for row in TABLE])
        _text_grid(
            page,
            72,
            300,
            [
                ["Region", "Orders", "Returns"],
                ["North", "120", "4"],
                ["South", "98", "7"],
                ["East", "143", "2"],
                ["West", "87", "9"],
            ],
        )
    return pdf.tobytes()


def _signature(doc) -> list:
    return [(b.kind, b.text, b.pages, b.rows, b.header_rows) for b in doc.blocks] + [doc.document.reason]


def test_tables_do_not_depend_on_the_clock(monkeypatch):
    """No step reads a clock: a clock that leaps an hour at every read changes nothing."""
    import time

    data = _tables_pdf()
    before = _signature(parse(data))
    assert {b.rows[0] for b in parse(data).blocks if b.kind == "table"} >= {("Region", "Orders", "Returns")}
    for name in ("monotonic", "perf_counter", "time", "process_time"):
        real = getattr(time, name)
        leap = iter(range(10**9))
        monkeypatch.setattr(time, name, lambda real=real, leap=leap: real() + 3600.0 * next(leap))
    assert _signature(parse(data)) == before


def test_tables_are_the_same_on_a_loaded_machine():
    """The same document parsed on an idle and on a busy CPU (a busy process per core) gives the same blocks."""
    import os
    import subprocess
    import sys

    data = _tables_pdf(pages=12)
    idle = _signature(parse(data))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        loaded = [_signature(parse(data)) for _ in range(2)]
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert loaded == [idle, idle]


def test_borderless_table_from_aligned_text():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 80), "Orders and returns by region are listed below.", fontsize=11)
    rows = [
        ["Region", "Orders", "Returns"],
        ["North", "120", "4"],
        ["South", "98", "7"],
        ["East", "143", "2"],
    ]
    _text_grid(page, 72, 120, rows)
    doc = parse(pdf.tobytes())
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == tuple(map(tuple, rows)) and table.header_rows == 1
    assert "Orders and returns" in doc.text


def _tables_of(data: bytes) -> list:
    return [b for b in parse(data).blocks if b.kind == "table"]


def test_two_row_grid_and_mostly_empty_grid_are_figures_not_tables():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 60), "A box split once, with labels beside it, and an empty grid.", fontsize=11)
    _ruled_table(page, 72, 100, [["Mandatory", "Optional"], ["Optional", ""]])
    # a 5 x 5 grid with labels in three cells only (a chart's axes)
    _ruled_table(page, 72, 300, [["1", "y", "", "", ""]] + [[""] * 5] * 3 + [["", "", "", "", "x"]], col_w=60)
    data = pdf.tobytes()
    assert _tables_of(data) == []
    assert "Mandatory" in parse(data).text  # the text stays, as prose


def test_ruled_grid_of_paragraphs_is_boxed_prose():
    """Most cells hold a paragraph (the median cell is over 15 words): the ruled finder calls it text
    in boxes, not a table."""
    from raychunk.parse._pdf_tables import Caps, page_words, ruled_tables, rules

    pdf = pymupdf.open()
    page = pdf.new_page()
    text = (
        "This box holds a whole paragraph of running text that explains the stage in words, not in figures."
    )
    edges = (40, 90, 320, 560)
    y0, h = 100, 70

    def grid(rows):
        for r in range(len(rows) + 1):
            page.draw_line((edges[0], y0 + r * h), (edges[-1], y0 + r * h))
        for x in edges:
            page.draw_line((x, y0), (x, y0 + len(rows) * h))
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                box = pymupdf.Rect(edges[c] + 4, y0 + r * h + 4, edges[c + 1] - 4, y0 + (r + 1) * h)
                assert page.insert_textbox(box, cell, fontsize=9) >= 0

    def found():
        m = (1, 0, 0, 1, 0, 0)
        hs, vs = rules(page.get_cdrawings(), m, Caps())
        return ruled_tables(hs, vs, page_words(page.get_textpage(), m), Caps())

    grid([["Stage", "Meaning", "Care"]] + [[n, text, text] for n in ("I", "II", "III")])
    assert found() == []
    page = pdf.new_page()
    grid([["Stage", "Size", "Care"]] + [[n, "under 2 cm", "surgery"] for n in ("I", "II", "III")])
    (table,) = found()
    assert table.rows[1] == ("I", "under 2 cm", "surgery")


def test_open_sided_grid_is_a_table():
    """Rows ruled across the page and columns split by one inner line, with no outer sides."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    rows = [
        ["State", "Office"],
        ["Alabama", "Palmetto GBA"],
        ["Alaska", "Noridian"],
        ["Arizona", "Noridian"],
        ["Ohio", "CGS"],
    ]
    x0, x1, y0, h = 72, 520, 100, 24
    for r in range(len(rows) + 1):
        page.draw_line((x0, y0 + r * h), (x1, y0 + r * h))
    page.draw_line((200, y0), (200, y0 + len(rows) * h))
    for r, (a, b) in enumerate(rows):
        page.insert_text((x0 + 4, y0 + r * h + 16), a, fontsize=10)
        page.insert_text((204, y0 + r * h + 16), b, fontsize=10)
    (table,) = _tables_of(pdf.tobytes())
    assert table.rows == tuple(map(tuple, rows))


def test_aligned_table_keeps_wrapped_lines_and_keyless_rows_in_their_row():
    """Rows 19 pt apart; a cell's wrapped line 3 pt under its row joins that cell; a line under a
    row that starts in the last column is a row of its own with empty first cells."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 100
    page.insert_text((60, y), "LINE", fontsize=9)
    page.insert_text((150, y), "POSITION", fontsize=9)
    page.insert_text((250, y), "DESCRIPTION", fontsize=9)
    body = [
        ("1", "01-05", "Command code"),
        ("1", "06", "Definer code, one of"),
        ("2", "07-18", "Taxpayer name"),
    ]
    for line, pos, desc in body:
        y += 19
        page.insert_text((90, y), line, fontsize=9)
        page.insert_text((150, y), pos, fontsize=9)
        page.insert_text((250, y), desc, fontsize=9)
        if line == "1" and pos == "06":
            y += 12
            page.insert_text((250, y), "A = adjustments", fontsize=9)  # wrapped, 3 pt gap
            y += 19
            page.insert_text((250, y), "B = balances", fontsize=9)  # its own row
    y += 19
    page.insert_text((90, y), "3", fontsize=9)
    page.insert_text((150, y), "19-20", fontsize=9)
    page.insert_text((250, y), "Tax period", fontsize=9)
    (table,) = _tables_of(pdf.tobytes())
    assert table.rows == (
        ("LINE", "POSITION", "DESCRIPTION"),
        ("1", "01-05", "Command code"),
        ("1", "06", "Definer code, one of A = adjustments"),
        ("", "", "B = balances"),
        ("2", "07-18", "Taxpayer name"),
        ("3", "19-20", "Tax period"),
    )


def test_header_and_footer_rules_do_not_make_the_page_a_table():
    """A rule under the running header and one over the footer enclose the whole body: a frame."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 40), "page 36", fontsize=9)
    page.insert_text((400, 40), "Terminal Responses", fontsize=9)
    page.draw_line((72, 48), (520, 48))
    for i in range(30):
        page.insert_text((72, 80 + 20 * i), f"2.3.59-{i + 1}", fontsize=10)
        page.insert_text((200, 80 + 20 * i), f"Command code display number {i + 1}", fontsize=10)
    page.draw_line((72, 790), (520, 790))
    page.insert_text((72, 805), "Internal Revenue Manual", fontsize=9)
    assert _tables_of(pdf.tobytes()) == []


def test_short_label_value_list_is_not_a_table():
    pdf = pymupdf.open()
    page = pdf.new_page()
    pairs = [
        ("Voltage", "12 Volts"),
        ("Alternator rating", "60 amp"),
        ("Battery", "1 x 12 V x 100 Ah"),
        ("Fuel tank", "31.7 gal"),
    ]
    for r, (k, v) in enumerate(pairs):
        page.insert_text((72, 100 + 14 * r), k, fontsize=9)
        page.insert_text((260, 100 + 14 * r), v, fontsize=9)
    page.draw_line((72, 88), (400, 88))
    page.draw_line((72, 150), (400, 150))
    assert _tables_of(pdf.tobytes()) == []


def test_text_in_a_diagram_of_boxes_is_not_a_table():
    """Labels in a grid of separate drawn boxes line up in columns, but boxes are a diagram's."""

    def page_pdf(boxes: bool) -> bytes:
        pdf = pymupdf.open()
        page = pdf.new_page()
        for r in range(5):
            for c in range(3):
                x, y = 72 + 150 * c, 100 + 40 * r
                if boxes:
                    page.draw_rect(pymupdf.Rect(x - 4, y - 12, x + 90, y + 6))
                page.insert_text((x, y), f"Class{r}{c}", fontsize=9)
        return pdf.tobytes()

    assert _tables_of(page_pdf(boxes=True)) == []
    (table,) = _tables_of(page_pdf(boxes=False))  # the same text without the boxes is a table
    assert table.rows[0] == ("Class00", "Class01", "Class02")


def test_no_aligned_tables_on_a_page_with_form_fields():
    pdf = pymupdf.open()
    page = pdf.new_page()
    _text_grid(
        page,
        90,
        120,
        [
            ["Yes", "No", "Employment"],
            ["Yes", "No", "Auto accident"],
            ["Yes", "No", "Other"],
            ["Yes", "No", "Claim"],
        ],
        col_w=80,
    )
    widget = pymupdf.Widget()
    widget.field_type = pymupdf.PDF_WIDGET_TYPE_CHECKBOX
    widget.field_name = "employment"
    widget.rect = pymupdf.Rect(72, 110, 84, 122)
    page.add_widget(widget)
    data = pdf.tobytes()
    assert _tables_of(data) == []
    assert "Employment" in parse(data).text


def test_drawn_paths_of_a_textless_page_are_counted_from_its_streams():
    from raychunk.parse.pdf import _paints

    pdf = pymupdf.open()
    page = pdf.new_page()
    for i in range(30):
        page.draw_rect(pymupdf.Rect(50 + 10 * i, 50, 55 + 10 * i, 55), fill=(0, 0, 0))
    pdf = pymupdf.open(stream=pdf.tobytes())
    assert _paints(pdf, pdf[0], 20) == 20
    assert _paints(pdf, pdf[0], 100) == 30
    doc = parse(pdf.tobytes())
    assert doc.document.status != "ok" or doc.text == ""


def test_running_footer_and_page_numbers_are_dropped():
    pdf = pymupdf.open()
    for n in range(1, 5):
        page = pdf.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), f"Body of page {n}. " + LOREM, fontsize=11)
        page.insert_text((72, 30), "ACME Corporation quarterly review", fontsize=8)
        page.insert_text((72, 815), f"Confidential - printed copy {n}", fontsize=8)
        page.insert_text((290, 800), str(n), fontsize=9)
    doc = parse(pdf.tobytes())
    body = doc.text
    assert "ACME" not in body and "Confidential" not in body
    assert [b.text for b in doc.blocks if b.kind == "paragraph" and b.text.strip().isdigit()] == []
    paras = [b for b in doc.blocks if b.kind == "paragraph"]
    assert [b.pages for b in paras] == [(1,), (2,), (3,), (4,)]
    assert [b.pages for b in doc.blocks if b.kind == "page_break"] == [(2,), (3,), (4,)]
    assert all(b.text.startswith(f"Body of page {b.pages[0]}.") for b in paras)


def _plain_sections_pdf(titles: list[tuple[int, str, int]]) -> pymupdf.Document:
    """Section titles set exactly like the body text, so only the outline can tell them apart."""
    pdf = pymupdf.open()
    for page_no in sorted({p for _, _, p in titles}):
        page = pdf.new_page()
        y = 80
        for _, title, p in titles:
            if p != page_no:
                continue
            page.insert_text((72, y), title, fontsize=11, fontname="helv")
            page.insert_textbox(pymupdf.Rect(72, y + 20, 520, y + 120), LOREM, fontsize=11, fontname="helv")
            y += 160
    return pdf


def test_outline_headings_when_the_outline_matches_the_pages():
    toc = [[1, "Getting Started", 1], [2, "Installation", 1], [2, "  usage  ", 2], [1, "Reference", 2]]
    pdf = _plain_sections_pdf(
        [(lvl, t.strip().capitalize() if t.strip() == "usage" else t, p) for lvl, t, p in toc]
    )
    pdf.set_toc(toc)
    doc = parse(pdf.tobytes())
    heads = [(b.text, b.level, b.pages) for b in doc.blocks if b.kind == "heading"]
    assert heads == [
        ("Getting Started", 1, (1,)),
        ("Installation", 2, (1,)),
        ("Usage", 2, (2,)),
        ("Reference", 1, (2,)),
    ]
    under = [b.heading_path for b in doc.blocks if b.kind == "paragraph"]
    assert under[1] == ("Getting Started", "Installation")
    assert under[3] == ("Reference",)


def test_outline_that_does_not_match_the_pages_is_ignored():
    pdf = _plain_sections_pdf([(1, "Getting Started", 1), (1, "Installation", 1), (1, "Usage", 2)])
    pdf.set_toc([[1, "Chapter One", 1], [1, "Something Else", 1], [1, "Appendix", 2], [2, "Installation", 1]])
    doc = parse(pdf.tobytes())
    assert [b for b in doc.blocks if b.kind == "heading"] == []


# ---------------------------------------------------------------------------------------------------
# pages without text, bad files


def _image_page(pdf: pymupdf.Document) -> None:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
    pix.clear_with(200)
    pdf.new_page().insert_image(pymupdf.Rect(0, 0, 595, 842), pixmap=pix)


@pytest.mark.parametrize(
    "ocr, reason",
    [
        ("auto", "scanned page(s): OCR (tesseract) found no text"),
        ("never", "scanned page(s), needs OCR: parse.ocr is never"),
    ],
)
def test_image_only_pdf_is_no_text(ocr, reason):
    pdf = pymupdf.open()
    _image_page(pdf)  # a plain grey picture: OCR reads nothing on it
    _image_page(pdf)
    doc = parse_document(pdf.tobytes(), "scan.pdf", options=ParseOptions(ocr=ocr))
    assert doc.document.status == "no_text"
    assert doc.document.reason == reason
    assert doc.document.no_text_pages == (1, 2)
    assert doc.document.ocr_pages == ()
    assert doc.blocks == () and doc.text == ""


@pytest.mark.parametrize(
    "ocr, reason",
    [
        ("auto", "page 2 has no text layer and OCR (tesseract) found none"),
        ("never", "page 2 has no text layer (scanned, needs OCR: parse.ocr is never)"),
    ],
)
def test_some_scanned_pages_are_named_in_the_reason(ocr, reason):
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 100), "A page with real text on it.", fontsize=11)
    _image_page(pdf)
    pdf.new_page().insert_text((72, 100), "Another page with real text.", fontsize=11)
    doc = parse_document(pdf.tobytes(), "scan.pdf", options=ParseOptions(ocr=ocr))
    assert doc.document.status == "ok"
    assert doc.document.no_text_pages == (2,)
    assert doc.document.reason == reason
    assert [b.pages for b in doc.blocks if b.kind == "paragraph"] == [(1,), (3,)]


def _simple_pdf(pages: int = 2) -> pymupdf.Document:
    pdf = pymupdf.open()
    for n in range(pages):
        pdf.new_page().insert_text((72, 100), f"Page {n + 1} says hello.", fontsize=11)
    return pdf


def test_password_protected_pdf_fails_with_a_clear_reason():
    data = _simple_pdf().tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    doc = parse(data)
    assert doc.document.status == "failed"
    assert doc.document.reason == "encrypted PDF: needs a password"


def test_owner_password_only_pdf_opens():
    data = _simple_pdf().tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_128, owner_pw="owner", permissions=pymupdf.PDF_PERM_PRINT
    )
    doc = parse(data)
    assert doc.document.status == "ok"
    assert texts(doc, "paragraph") == ["Page 1 says hello.", "Page 2 says hello."]
    assert ("encryption", "Standard V4 R4 128-bit AES") in doc.document.metadata


def test_zero_page_pdf_fails():
    data = (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n"
    )
    doc = parse(data)
    assert doc.document.status == "failed"
    assert doc.document.reason == "corrupt or truncated PDF: no pages could be read"


@pytest.mark.parametrize("count", [b"-1", b"2147483647", b"99999999999999999999"])
def test_page_tree_with_an_absurd_count_fails_with_a_reason(count):
    """Found by scripts/fuzz.py (seed 1004, index 181: numbers(... 2@148->2147483647)): pymupdf's
    page_count raised "code=7: Invalid number of pages" and the reason was "the parser failed"."""
    data = (
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
        b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count " + count + b">>endobj\n"
        b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n"
    )
    doc = parse(data)
    assert (doc.document.status, doc.document.reason) == (
        "failed",
        "corrupt PDF: its page tree cannot be read (MuPDF: code=7: Invalid number of pages)",
    )


def test_pages_lost_to_a_repair_midway_are_not_looked_up_again():
    """Found by scripts/fuzz.py (seed 5000, index 397: setbytes([1966:1967] = 0x00) turned "12 0 obj"
    into "1\\x00 0 obj"): reading page 2's content makes MuPDF repair the file, the repaired page
    tree no longer holds page 1, and the table check's doc[0] raised IndexError."""
    doc = pymupdf.open()
    for i in range(2):
        doc.new_page().insert_text((72, 72), f"Page {i + 1} says something. " * 5)
    content = doc[1].get_contents()[0]
    data = doc.tobytes().replace(b"\n%d 0 obj" % content, b"\n" + b"1".ljust(len(str(content))) + b" 0 obj")
    repaired = pymupdf.open(stream=data, filetype="pdf")
    [p.get_text() for p in (repaired[0], repaired[1])]
    with pytest.raises(IndexError):
        repaired[0]  # the damage this test is about
    parsed = parse(data)
    assert parsed.document.status == "ok", parsed.document.reason
    assert "Page 1 says something." in parsed.text


def test_garbage_after_pdf_header_fails():
    import random

    data = b"%PDF-1.7\n" + random.Random(7).randbytes(4000)
    doc = parse(data)
    assert doc.document.status == "failed"
    assert doc.document.reason.startswith("cannot open PDF")


def test_truncated_pdf_never_raises():
    data = _simple_pdf(3).tobytes()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 40):
        doc = parse(data[:cut])
        assert doc.document.status in ("ok", "failed", "empty")
        assert "\n" not in doc.document.reason


def test_metadata_and_title():
    pdf = _simple_pdf(1)
    pdf.set_metadata({"title": "Quarterly Numbers", "author": "J. Doe", "subject": ""})
    doc = parse(pdf.tobytes())
    assert doc.document.title == "Quarterly Numbers"
    meta = dict(doc.document.metadata)
    assert meta["author"] == "J. Doe" and "subject" not in meta
    pdf.set_metadata({"title": "Microsoft Word - draft_v2.docx"})
    assert parse(pdf.tobytes()).document.title == ""


def _outlined_report(cover: str) -> bytes:
    """A LaTeX-like report: a cover line in large type (and a larger sidebar stamp that is no title),
    then sections that the outline names, the first unnumbered."""
    pdf = pymupdf.open()
    body = "The system stores every record twice and checks both copies at night. " * 3
    page = pdf.new_page()
    page.insert_text((150, 80), cover, fontsize=18)
    page.insert_text((20, 700), "arXiv:2407.10671v4 [cs.CL] 10 Sep 2024", fontsize=20, rotate=90)
    page.insert_text((72, 140), "INTRODUCTION", fontsize=12)
    page.insert_textbox(pymupdf.Rect(72, 160, 520, 260), body, fontsize=10)
    page = pdf.new_page()
    page.insert_text((72, 80), "2 DESIGN", fontsize=12)
    page.insert_textbox(pymupdf.Rect(72, 100, 520, 200), body, fontsize=10)
    page.insert_text((72, 240), "3 RESULTS", fontsize=12)
    page.insert_textbox(pymupdf.Rect(72, 260, 520, 360), body, fontsize=10)
    pdf.set_toc([[1, "Introduction", 1], [1, "Design", 2], [1, "Results", 2]])
    return pdf.tobytes()


def test_a_cover_title_the_outline_leaves_out_is_the_title_not_the_first_section():
    doc = parse(_outlined_report("ACME STORAGE REPORT"))
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["INTRODUCTION", "2 DESIGN", "3 RESULTS"]
    assert doc.document.title == "ACME STORAGE REPORT"
    chunks = chunk_document(doc, Profile(max_tokens=64), WordCounter(max_input=254))
    assert {c.header for c in chunks} >= {"ACME STORAGE REPORT > 2 DESIGN", "ACME STORAGE REPORT > 3 RESULTS"}
    # a cover that opens with a section's name gives no title, and the first section is not taken
    # for one either: a second ("2 DESIGN") follows it at its level
    assert parse(_outlined_report("CONTENTS")).document.title == ""


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
def test_the_qwen2_report_is_titled_by_its_cover():
    doc = parse((CORPUS / "pdf" / "test_4751.pdf").read_bytes())
    assert doc.document.title == "QWEN2 TECHNICAL REPORT"  # small caps: the title was its first section


def test_blank_pdf_is_empty():
    pdf = pymupdf.open()
    pdf.new_page()
    doc = parse(pdf.tobytes())
    assert doc.document.status == "empty"
    assert doc.document.pages == 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.text(alphabet="abcdefghij klmnop-QRST.,\t", min_size=1, max_size=200), min_size=1, max_size=6)
)
def test_spans_always_match(paragraphs):
    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 60
    for p in paragraphs:
        page.insert_textbox(pymupdf.Rect(72, y, 520, y + 110), p, fontsize=10)
        y += 120
    doc = parse(pdf.tobytes())
    assert doc.document.status in ("ok", "empty")


LIFT_CHART = [
    ["Height", "LOAD RADIUS", "", "", "MAX REACH"],
    ["", "7 ft END", "7 ft SIDE", "10 ft END", "REACH"],
    ["+7 ft", "6,610 lb", "6,610 lb", "3,660 lb", "17 ft 3 in"],
    ["Groundline", "4,160 lb", "4,160 lb", "5,920 lb", "17 ft 0 in"],
    ["-3 ft", "6,870 lb", "5,770 lb", "5,890 lb", "15 ft 8 in"],
]


def test_header_rows_under_a_spanning_header_belong_to_the_header():
    """A spec sheet's second header line (radius per column) leaves the row-label column empty; it
    is header, so every part of a split table repeats it. Where most body rows leave the label
    empty too, such a row is a body row."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 100), "Lift capacities, 6 ft arm.", fontsize=11)
    _ruled_table(page, 40, 130, LIFT_CHART, col_w=100)
    parts = [
        ["Item", "Qty", "Note"],
        ["", "2", "spare"],
        ["Bolt", "4", "M8"],
        ["", "4", "M8"],
        ["", "8", "x"],
    ]
    _ruled_table(page, 40, 400, parts, col_w=100)
    chart, listing = [b for b in parse(pdf.tobytes()).blocks if b.kind == "table"]
    assert chart.rows[1][1] == "7 ft END"
    assert chart.header_rows == 2
    assert chart.text.splitlines()[2] == "|---|---|---|---|---|"
    assert listing.rows[1] == ("", "2", "spare")
    assert listing.header_rows == 1


def test_a_pdf_parses_without_loading_pymupdfs_layout_model():
    """pymupdf's package loads pymupdf-layout's ONNX model on import when it is installed (seconds in
    every document process); the parser asks no page for its layout, so a fresh process that parses a
    PDF never loads it, with the same blocks as a process that did, and can still import it later."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    script = (
        "import sys, json\n"
        "if sys.argv[2] == 'eager': import pymupdf\n"
        "from raychunk.parse import parse_document\n"
        "p = parse_document(open(sys.argv[1], 'rb').read(), sys.argv[1])\n"
        "loaded = 'pymupdf.layout' in sys.modules\n"
        "blocks = [[b.kind, b.text, b.char_start, b.char_end, list(b.pages)] for b in p.blocks]\n"
        "import pymupdf\n"
        "print(json.dumps([loaded, p.document.status, p.text, blocks]))\n"
    )
    seen = {}
    for how in ("deferred", "eager"):
        out = subprocess.run(
            [sys.executable, "-c", script, str(root / "samples" / "acme-sla.pdf"), how],
            capture_output=True,
            text=True,
            cwd=root,
            check=True,
        ).stdout
        seen[how] = json.loads(out.splitlines()[-1])
    assert not seen["deferred"][0]
    assert seen["deferred"][1] == "ok" and seen["deferred"][3]
    assert seen["deferred"][1:] == seen["eager"][1:]
