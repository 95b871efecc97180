"""PDF reading order: columns (two to four), headings between bands of columns, a title block over
them, regions that set their columns differently; and prose columns that line up are not a table."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pymupdf = pytest.importorskip("pymupdf")

from raychunk.parse import parse_document  # noqa: E402
from raychunk.parse.pdf import _Item, _Line, _split_block  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
WORDS = [a + b for a in ("ri", "sto", "mar", "sig", "har") for b in ("ver", "ne", "ket", "nal")]


def _paragraph(rng: random.Random, name: str, words: int) -> str:
    return f"{name} " + " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def _column(page, rng, x0: float, x1: float, top: float, bottom: float, names: list[str]) -> list[str]:
    """Paragraphs of varied lengths down one column, a line's space apart; the ones that fit."""
    out = []
    y = top
    for name in names:
        text = _paragraph(rng, name, rng.randint(12, 45))
        rect = pymupdf.Rect(x0, y, x1, bottom)
        if bottom - y < 30 or page.insert_textbox(rect, text, fontsize=9, fontname="helv") < 0:
            break
        out.append(text)
        y = max(w[3] for w in page.get_text("words", clip=rect)) + 9
    return out


def _paragraph_texts(data: bytes) -> list[str]:
    return [" ".join(b.text.split()) for b in parse_document(data, "x.pdf").blocks if b.text.strip()]


def _order(got: list[str], want: list[str]) -> list[int]:
    return [next(i for i, g in enumerate(got) if g.startswith(w.split()[0] + " ")) for w in want]


@pytest.mark.parametrize("columns", [2, 3, 4])
def test_columns_are_read_one_after_another(columns):
    rng = random.Random(columns)
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    page.insert_textbox(pymupdf.Rect(48, 40, 564, 80), "The Harbor Quarterly", fontsize=18, fontname="hebo")
    width = (612 - 96 - 18 * (columns - 1)) / columns
    want: list[str] = []
    for c in range(columns):
        x0 = 48 + c * (width + 18)
        want += _column(page, rng, x0, x0 + width, 90, 740, [f"C{c}P{i}" for i in range(12)])
    got = _paragraph_texts(pdf.tobytes())
    assert got[0] == "The Harbor Quarterly"
    assert all(" ".join(w.split()) in got for w in want)  # every paragraph whole, none a table's cells
    assert _order(got, want) == sorted(_order(got, want))
    doc = parse_document(pdf.tobytes(), "x.pdf")
    assert not [b for b in doc.blocks if b.kind == "table"]


def test_a_short_heading_between_two_bands_of_columns_ends_the_band_above():
    rng = random.Random(5)
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    want = _column(page, rng, 48, 297, 60, 380, [f"A{i}" for i in range(9)])
    want += _column(page, rng, 315, 564, 60, 380, [f"B{i}" for i in range(9)])
    # left-aligned, too short to reach the right column: only the pause beside it says it spans
    page.insert_textbox(pymupdf.Rect(48, 392, 564, 416), "Second Part", fontsize=13, fontname="hebo")
    want.append("Second Part")
    want += _column(page, rng, 48, 297, 424, 740, [f"C{i}" for i in range(9)])
    want += _column(page, rng, 315, 564, 424, 740, [f"D{i}" for i in range(9)])
    got = _paragraph_texts(pdf.tobytes())
    at = [got.index(" ".join(w.split())) for w in want]
    assert at == sorted(at)


def test_a_heading_in_a_column_stays_in_its_column():
    rng = random.Random(6)
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    left = _column(page, rng, 48, 297, 60, 300, [f"A{i}" for i in range(4)])
    y = max(w[3] for w in page.get_text("words")) + 12  # a heading's usual space above it
    page.insert_textbox(pymupdf.Rect(48, y, 297, y + 20), "Within Left", fontsize=11, fontname="hebo")
    left += ["Within Left"] + _column(page, rng, 48, 297, y + 22, 740, [f"B{i}" for i in range(9)])
    # the right column is shorter: nothing beside the heading, but nothing goes on under it either
    right = _column(page, rng, 315, 564, 60, 320, [f"C{i}" for i in range(4)])
    got = _paragraph_texts(pdf.tobytes())
    at = [got.index(" ".join(w.split())) for w in left + right]
    assert at == sorted(at)


def test_a_title_block_in_a_corner_comes_before_the_columns_under_it():
    rng = random.Random(7)
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    assert page.insert_textbox(pymupdf.Rect(420, 24, 570, 80), "ZX90", fontsize=26, fontname="hebo") >= 0
    page.insert_textbox(pymupdf.Rect(420, 82, 570, 100), "COMPACT LOADER", fontsize=9, fontname="hebo")
    # a photo above the first column: it starts far lower than the other two
    want = _column(page, rng, 36, 196, 300, 750, [f"A{i}" for i in range(8)])
    want += _column(page, rng, 222, 390, 130, 750, [f"B{i}" for i in range(10)])
    want += _column(page, rng, 414, 576, 130, 750, [f"C{i}" for i in range(10)])
    doc = parse_document(pdf.tobytes(), "x.pdf")
    got = [" ".join(b.text.split()) for b in doc.blocks]
    assert got[:2] == ["ZX90", "COMPACT LOADER"]
    at = [got.index(" ".join(w.split())) for w in want]
    assert at == sorted(at)
    assert doc.document.title == "ZX90"


def test_index_entries_above_the_next_index_keep_the_pages_columns():
    """A region too small to show columns of its own (a few entries each side) reads in the
    columns of the page, before the heading under it."""
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)

    def entries(x: float, y: float, letter: str, words: list[str]) -> float:
        page.insert_text((x, y), letter, fontsize=11, fontname="hebo")
        for w in words:
            y += 13
            page.insert_text((x, y), f"{w} . . . . . . . . . . . . . . . . . . . . {len(w) * 7}", fontsize=9)
        return y + 26

    y = entries(90, 100, "T", ["test", "times", "trap"])
    entries(90, y, "U", ["ulimit", "umask"])
    entries(320, 100, "W", ["wait"])
    page.insert_text((90, 330), "D.2 Index of Shell Reserved Words", fontsize=13, fontname="hebo")
    y = 380
    for letter in "CDEF":
        y = entries(90, y, letter, [f"{letter.lower()}word{i}" for i in range(3)])
    y = 380
    for letter in "IST":
        y = entries(320, y, letter, [f"{letter.lower()}term{i}" for i in range(3)])
    got = _paragraph_texts(pdf.tobytes())
    keys = ("test", "umask", "wait", "D.2", "cword0", "fword2", "iterm0", "tterm2")
    at = [next(i for i, g in enumerate(got) if k in g) for k in keys]
    assert at == sorted(at)


def test_a_form_with_a_narrow_column_of_amounts_reads_row_by_row():
    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    lines = [
        ("Description of the vehicle delivered under this order", "52,203.17"),
        ("Registration, transfer and the number plates", "310.00"),
        ("Extended warranty for three more years", "1,450.83"),
        ("Delivery to the customer's address", "0.00"),
        ("Total due on delivery, tax included", "53,964.00"),
    ]
    y = 120
    for label, amount in lines:
        page.insert_text((60, y), label, fontsize=10)
        page.insert_text((500, y), amount, fontsize=10)
        y += 40
    got = _paragraph_texts(pdf.tobytes())
    assert " ".join(got) == " ".join(f"{label} {amount}" for label, amount in lines)


def _line(text: str, y0: float, size: float = 10.0) -> _Line:
    return _Line(text, 50, y0, 300, y0 + size * 1.2, size, len(text.replace(" ", "")), 0)


def test_two_paragraphs_in_one_block_part_at_the_wider_gap():
    lines = [
        _line("The first paragraph runs over three lines of the", 100),
        _line("column and ends here, at the end of a sentence", 113),
        _line("that closes it.", 126),
        _line("The second one starts after a wider gap, as a", 150),
        _line("paragraph's space, in the same block.", 163),
    ]
    pieces = _split_block(_Item(50, 100, 300, 175, lines), 1)
    assert [len(p.lines) for p in pieces] == [3, 2]
    # a wider gap inside a sentence, or before a lower-case word, is not a paragraph's end
    lines[3] = _line("and the sentence goes on after a wider gap, as a", 150)
    assert len(_split_block(_Item(50, 100, 300, 175, lines), 1)) == 1


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
def test_real_pages_in_three_columns_and_two_inside_a_box():
    sheet = parse_document((CORPUS / "pdf" / "test_3848.pdf").read_bytes(), "test_3848.pdf")
    first = [" ".join(b.text.split()) for b in sheet.blocks if b.pages == (1,)]
    # the model's name over the columns, then each column whole: engine, operator, service
    at = [
        first.index(t)
        for t in ("CX57C", "ENGINE", "OPERATOR ENVIRONMENT", "HYDRAULICS", "SERVICE CAPACITIES")
    ]
    assert at == sorted(at)
    last = [(b.kind, b.text) for b in sheet.blocks if 4 in b.pages]
    electrical = last.index(("heading", "ELECTRICAL"))
    assert last[electrical + 1][1].startswith("12-volt electrical starting system")

    guide = parse_document((CORPUS / "pdf" / "failure-after-repair.pdf").read_bytes(), "guide.pdf")
    page = [" ".join(b.text.split()) for b in guide.blocks if b.pages == (19,)]
    starts = ("The HER2", "Tumours that", "Genomic assays, or", "The test is for")
    at = [next(i for i, t in enumerate(page) if t.startswith(s)) for s in starts]
    assert at == sorted(at)  # the left column of the page, then its right
