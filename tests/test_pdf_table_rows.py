"""PDF table rows follow the text lines, not only the drawn rules: a band ruled around three rows is
three rows, a wrapped cell stays one row (PDFs drawn here with pymupdf)."""

from __future__ import annotations

import pytest

pymupdf = pytest.importorskip("pymupdf")

from raychunk.parse import parse_document  # noqa: E402

WAGES = [
    "$0 - 9,999",
    "$10,000 - 19,999",
    "$20,000 - 29,999",
    "$30,000 - 39,999",
    "$40,000 - 49,999",
    "$50,000 - 59,999",
    "$60,000 - 69,999",
    "$70,000 - 79,999",
    "$80,000 - 99,999",
    "$320,000 - 364,999",
    "$365,000 - 524,999",
    "$525,000 and over",
]
COLUMNS = [f"${10_000 * k:,} -\n{10_000 * k + 9_999:,}" for k in range(12)]


def _value(r: int, c: int) -> str:
    v = 20 * r * r + 110 * c + 40 * r
    return f"${v:,}" if r == 0 else f"{v:,}"


def _tables(data: bytes):
    doc = parse_document(data, "form.pdf")
    for b in doc.blocks:
        assert doc.text[b.char_start : b.char_end] == b.text
    return doc, [b for b in doc.blocks if b.kind == "table"]


def _right(page, x1: float, y: float, text: str, size: float = 6.5, font: str = "helv") -> None:
    page.insert_text(
        (x1 - 3 - pymupdf.get_text_length(text, fontname=font, fontsize=size), y),
        text,
        fontsize=size,
        fontname=font,
    )


def _withholding(page, top: float, wages=WAGES, seed: int = 0) -> float:
    """A tax form's withholding table: a label column and 12 wage columns, a two-row header (the
    label spanning both, one spanning cell over the 12 columns, then the 12 column headers on two
    lines each), body rows one line each, a horizontal rule only every third row."""
    x0, label_w, col_w, line = 26.0, 78.0, 40.0, 8.5
    xs = [x0, x0 + label_w] + [x0 + label_w + col_w * (k + 1) for k in range(12)]
    shape = page.new_shape()
    head_a, head_b = top + 3 * line + 4, top + 3 * line + 4 + 2 * line + 4
    for y in (top, head_a, head_b):
        shape.draw_line((xs[1] if y == head_a else xs[0], y), (xs[-1], y))
    for k, text in enumerate(("Higher Paying Job", "Annual Taxable", "Wage & Salary")):
        page.insert_text((x0 + 3, top + 2 + (k + 1) * line), text, fontsize=6.5, fontname="hebo")
    page.insert_text(
        (xs[1] + 150, top + 2 + line),
        "Lower Paying Job Annual Taxable Wage & Salary",
        fontsize=6.5,
        fontname="hebo",
    )
    for c, head in enumerate(COLUMNS):
        for k, text in enumerate(head.split("\n")):
            page.insert_text(
                (xs[c + 1] + 3, head_a + 2 + (k + 1) * line), text, fontsize=6.5, fontname="hebo"
            )
    y = head_b
    for band in range(0, len(wages), 3):
        y += 2
        for r in range(band, min(band + 3, len(wages))):
            base = y + line - 2
            page.insert_text((x0 + 3, base), wages[r], fontsize=6.5)
            for c in range(12):
                _right(page, xs[c + 2], base, _value(r + seed, c))
            y += line
        y += 2
        shape.draw_line((xs[0], y), (xs[-1], y))
    for k, x in enumerate(xs):  # the outer sides and the label's line from the top, the rest under the span
        shape.draw_line((x, top if k in (0, 1, 13) else head_a), (x, y))
    shape.finish(width=0.5)
    shape.commit()
    return y


def _expected_body(wages=WAGES, seed: int = 0) -> list[tuple[str, ...]]:
    return [(w, *(_value(r + seed, c) for c in range(12))) for r, w in enumerate(wages)]


def test_tax_form_table_ruled_every_third_row_has_one_row_per_wage_band():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text(
        (26, 50), "Married Filing Jointly or Qualifying Surviving Spouse", fontsize=10, fontname="hebo"
    )
    _withholding(page, 60)
    doc, (table,) = _tables(pdf.tobytes())
    head = "Lower Paying Job Annual Taxable Wage & Salary"
    assert table.rows[0] == ("Higher Paying Job Annual Taxable Wage & Salary", head) + ("",) * 11
    assert table.rows[1] == ("",) + tuple(" ".join(c.split("\n")) for c in COLUMNS)
    assert table.header_rows == 2
    assert list(table.rows[2:]) == _expected_body()
    # the rows the form prints, literally: three wage bands of one ruled band are three rows
    assert table.rows[2][:4] == ("$0 - 9,999", "$0", "$110", "$220")
    assert table.rows[3][:4] == ("$10,000 - 19,999", "60", "170", "280")
    assert table.rows[4][:4] == ("$20,000 - 29,999", "160", "270", "380")
    assert table.rows[-1][:3] == ("$525,000 and over", "2,860", "2,970")


def test_a_quote_copied_from_the_viewer_is_found_and_no_chunk_is_over_the_embedders_limit():
    from raychunk.chunking import chunk_document
    from raychunk.chunking.model import Profile
    from raychunk.evaluation.locate import find_quote
    from raychunk.tokens import load_counter

    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text(
        (26, 50), "Married Filing Jointly or Qualifying Surviving Spouse", fontsize=10, fontname="hebo"
    )
    _withholding(page, 60)
    doc, (table,) = _tables(pdf.tobytes())
    m = find_quote(doc.text, "$525,000 and over\n2,860")
    assert m is not None and m.how == "words"
    assert "2,860" in doc.text[m.start : m.end] and "$365,000" not in doc.text[m.start : m.end]
    # every table piece holds whole rows of one wage band each: none is over the embedder's limit
    # because of a merged band (a piece of the two-row header and one 13-cell row may still be;
    # splitting such a row by cells is the chunker's part)
    counter = load_counter()
    chunks = chunk_document(doc, Profile(max_tokens=250, table_max_tokens=250), counter)
    pieces = [c for c in chunks if c.table_id]
    assert len(pieces) > 1
    for c in pieces:
        body = [ln for ln in c.text.splitlines() if ln.startswith("| $") and "Higher Paying" not in ln]
        assert body and all(ln.count("$") == 1 + (ln.startswith("| $0 - 9,999 ")) * 12 for ln in body), c.text
        assert len(body) == 1 or not c.over_limit


def test_three_tables_with_the_same_row_labels_on_one_page_keep_their_own_rows():
    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 40.0
    for seed, title in enumerate(("Married Filing Jointly", "Single", "Head of Household")):
        page.insert_text((26, y), title, fontsize=10, fontname="hebo")
        y = _withholding(page, y + 8, seed=seed) + 30
    doc, tables = _tables(pdf.tobytes())
    assert len(tables) == 3
    for seed, t in enumerate(tables):
        assert list(t.rows[2:]) == _expected_body(seed=seed)


def _grid(page, x0: float, top: float, widths, bands, *, line: float = 11, pad: float = 3, size: float = 8):
    """A fully ruled table: ``bands`` is a list of rows of cells, a cell's lines split on ``\\n``,
    top-aligned in its cell."""
    xs = [x0]
    for w in widths:
        xs.append(xs[-1] + w)
    shape = page.new_shape()
    y = top
    shape.draw_line((xs[0], y), (xs[-1], y))
    for row in bands:
        n = max(len(c.split("\n")) for c in row)
        for j, cell in enumerate(row):
            for k, text in enumerate(cell.split("\n")):
                page.insert_text((xs[j] + 3, y + pad + (k + 1) * line - 2.5), text, fontsize=size)
        y += 2 * pad + n * line
        shape.draw_line((xs[0], y), (xs[-1], y))
    for x in xs:
        shape.draw_line((x, top), (x, y))
    shape.finish(width=0.5)
    shape.commit()


def test_a_wrapped_cell_beside_cells_of_one_line_stays_one_row():
    pdf = pymupdf.open()
    page = pdf.new_page()
    rows = [
        ["Part", "Description", "Qty", "Note"],
        ["A-100", "Hex bolt, zinc plated,\nM8 x 40 mm", "200", "stock"],
        ["B-220", "Bracket, steel, powder\ncoated, left hand", "12", "made to\norder"],
        ["C-005", "Hinge pin", "50", "back order\nfrom March"],
    ]
    _grid(page, 72, 100, (60, 130, 50, 80), rows)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(tuple(" ".join(c.split("\n")) for c in r) for r in rows)


def test_cells_of_a_value_and_its_conversion_on_two_lines_stay_one_row():
    """Every cell of the band holds two lines on shared baselines (a spec sheet's lb over kg): the
    second line continues the first (it opens a parenthesis), so the band is one row."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    rows = [
        ["Height", "7 ft END", "7 ft SIDE", "10 ft END"],
        ["+10 ft\n(3.0 m)", "2,340 lb*\n(1 060 kg)*", "2,220 lb\n(1 010 kg)", "3,660 lb*\n(1 660 kg)*"],
        ["Groundline", "4,160 lb*\n(1 890 kg)*", "4,160 lb*\n(1 890 kg)*", "5,920 lb*\n(2 680 kg)*"],
        ["-3 ft\n(-1.0 m)", "6,870 lb*\n(3 120 kg)*", "5,770 lb\n(2 620 kg)", "5,890 lb*\n(2 670 kg)*"],
    ]
    _grid(page, 72, 100, (70, 70, 70, 70), rows, pad=6)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(tuple(" ".join(c.split("\n")) for c in r) for r in rows)


def test_a_two_column_address_table_with_both_columns_wrapped_stays_one_row_per_state():
    pdf = pymupdf.open()
    page = pdf.new_page()
    rows = [
        ["If you received a service in:", "Mail your claim form to:"],
        [
            "California Northern\n(For Part B)",
            "Noridian Healthcare Solutions\nP.O. Box 6774\nFargo, ND 58108-6774",
        ],
        ["District of\nColumbia", "Novitas Solutions\nP.O. Box 3396"],
        ["Delaware", "Novitas Solutions\nP.O. Box 3397\nMechanicsburg, PA 17055-1842"],
    ]
    _grid(page, 72, 100, (130, 250), rows)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(tuple(" ".join(c.split("\n")) for c in r) for r in rows)


def test_a_header_on_two_lines_over_bands_of_two_rows_stays_one_header_row():
    pdf = pymupdf.open()
    page = pdf.new_page()
    body = [[f"K-{100 + r}", f"{r + 1}.50", f"{10 + r} kg", f"{40 + r} kg"] for r in range(6)]
    bands = [["Item\nCode", "Unit\nPrice", "Net\nWeight", "Gross\nWeight"]]
    bands += [["\n".join(body[r + k][j] for k in range(2)) for j in range(4)] for r in range(0, 6, 2)]
    _grid(page, 72, 100, (70, 70, 70, 70), bands)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows[0] == ("Item Code", "Unit Price", "Net Weight", "Gross Weight")
    assert [list(r) for r in table.rows[1:]] == body
    assert table.header_rows == 1


def test_unruled_rows_grouped_in_threes_by_spacing_are_one_row_per_line():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 90), "Wages", fontsize=8)
    for j, h in enumerate(("Single", "Married", "Head")):
        page.insert_text((220 + 70 * j, 90), h, fontsize=8)
    y, body = 108.0, []
    for r, wage in enumerate(WAGES[:9]):
        vals = [f"{(r + 1) * (j + 2) * 10:,}" for j in range(3)]
        page.insert_text((72, y), wage, fontsize=8)
        for j, v in enumerate(vals):
            _right(page, 270 + 70 * j, y, v, size=8)
        body.append((wage, *vals))
        y += 10 + (9 if r % 3 == 2 else 0)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == (("Wages", "Single", "Married", "Head"), *body)


def test_dotted_row_and_column_rules_make_a_row_per_rule():
    """Rules drawn as dots (tiny dashes): the dashes of a dotted column line are that line, not
    points on the row rules beside them, which once chained every row rule into one."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    xs, top, h = (72, 180, 260, 340), 100.0, 12.0
    rows = [("Comune", "Numero", "Sezioni")] + [(f"Town {k}", str(k + 1), str(2 * k + 3)) for k in range(8)]
    shape = page.new_shape()
    bottom = top + h * len(rows)
    for r in range(len(rows) + 1):  # dotted row rules: 1.9 x 0.6 dots
        x = xs[0]
        while x < xs[-1]:
            shape.draw_rect(pymupdf.Rect(x, top + r * h - 0.3, x + 1.9, top + r * h + 0.3))
            x += 2.5
    for x0 in xs:  # dotted column lines: 0.6 x 1.9 dashes
        y = top
        while y < bottom:
            shape.draw_rect(pymupdf.Rect(x0 - 0.3, y, x0 + 0.3, y + 1.9))
            y += 2.5
    shape.finish(fill=(0.6, 0.6, 0.6), color=None, width=0)
    shape.commit()
    for r, row in enumerate(rows):
        for j, cell in enumerate(row):
            page.insert_text((xs[j] + 3, top + r * h + 9), cell, fontsize=8)
    from raychunk.parse._pdf_tables import Caps, page_words, ruled_tables, rules

    m = (1, 0, 0, 1, 0, 0)
    hs, vs = rules(page.get_cdrawings(), m, Caps())
    assert sorted(round(y) for y, _, _ in hs) == [round(top + r * h) for r in range(len(rows) + 1)]
    (found,) = ruled_tables(hs, vs, page_words(page.get_textpage(), m), Caps())  # the grid of rules
    assert found.rows == tuple(rows)
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(rows)


def test_a_table_continued_after_a_blank_band_is_one_table():
    """A ruled table's next section, under a blank band and on the same column edges, with its total
    row in a box of its own, continues the table above it."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    first = [
        ["Region", "Town", "Voters"],
        ["North", "Alba", "510"],
        ["", "Brea", "1,578"],
        ["", "Total", "2,088"],
    ]
    second = [["South", "Cora", "874"], ["", "Dena", "9,986"], ["", "Total", "10,860"]]
    _grid(page, 72, 100, (90, 120, 70), first)
    _grid(page, 72, 180, (90, 120, 70), second)
    _grid(page, 72, 250, (90, 120, 70), [["All", "", "12,948"]])
    _, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(map(tuple, first + second + [["All", "", "12,948"]]))


def test_a_watermark_set_at_a_slant_across_a_table_is_no_cell_text():
    """A form's ``DO NOT SEND THIS PAGE`` stamped diagonally over its address table: its words lie
    inside the cells, but they are no cell's text (the page text keeps them)."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    rows = [
        ["State", "Mail to"],
        ["Alabama", "Palmetto GBA"],
        ["Alaska", "Noridian"],
        ["Arizona", "Noridian"],
    ]
    _grid(page, 72, 100, (130, 250), rows)
    at = pymupdf.Point(150, 160)  # rising across the table's lower rows
    page.insert_text(at, "DO NOT SEND THIS PAGE", fontsize=14, morph=(at, pymupdf.Matrix(30)))
    doc, (table,) = _tables(pdf.tobytes())
    assert table.rows == tuple(map(tuple, rows))
    assert "SEND" in doc.text


def _symbol_bullets(pdf, page) -> None:
    """Make ``Q`` of the page's Courier read as U+F0B7, as Word's Symbol bullet reads (its ToUnicode)."""
    (xref,) = [f[0] for f in page.get_fonts() if "Courier" in f[3]]
    cmap = pdf.get_new_xref()
    pdf.update_object(cmap, "<<>>")
    pdf.update_stream(
        cmap,
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Bullet def "
        b"1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <51> <F0B7> endbfchar "
        b"endcmap CMapName currentdict /CMap defineresource pop end end",
    )
    pdf.xref_set_key(xref, "ToUnicode", f"{cmap} 0 R")


def test_a_bullet_in_the_symbol_font_reads_as_a_bullet_in_its_cell():
    """Word writes a bulleted line in a cell as U+F0B7 of the Symbol font (a private-use code);
    the cell reads the bullet the page shows."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    _grid(page, 72, 100, (90, 250), [["Date", "Description"], ["2003", "Review:\n"], ["2004", "Final"]])
    page.insert_text((72 + 90 + 3, 117 + 3 + 2 * 11 - 2.5), "Q options", fontsize=8, fontname="cour")
    _symbol_bullets(pdf, page)
    data = pdf.tobytes()
    assert "\uf0b7 options" in pymupdf.open(stream=data)[0].get_text()
    _, (table,) = _tables(data)
    assert table.rows[1] == ("2003", "Review: \u2022 options")
