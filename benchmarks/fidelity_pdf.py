"""The PDF tables sections of ``benchmarks/fidelity.py``: tables PyMuPDF draws here, so the truth is
exact, and real tables of the shared corpus labelled by hand at the cell level.

``pdf-tables`` draws the shapes real PDFs have: a fully ruled grid; a tax form's 12-column tables
with a horizontal rule only every third row (one text line per row inside each band), alone and
three to a page with the same row labels; a statement ruled every fifth row; cells whose text wraps
(in one column, and in two columns at once, beside cells of one line); spanning and two-row
headers; unruled columns (evenly spaced, grouped in threes by spacing, with a wrapped cell);
a booktabs table (rules over and under the header and at the end) with a wrapped cell; small
unruled tables stacked on one page with the same row labels. At full size, tables drawn from a
seeded random source are added (columns, rows per band, rules, wrapped cells).

``pdf-real`` scores the tables of ``benchmarks/pdf_tables.json`` that carry ``cells`` (the table
as a reader reads it off the page image, rendered with PyMuPDF: 12 tables of 10 documents, a
form's address table among them), each against the parser's tables on its page. It runs where the
shared corpus is (``RAYCHUNK_CORPUS``, else ``../shared/corpus`` beside the checkout).

The truth follows ``fidelity.TruthTable``: a cell spanning columns or rows has its text in each of
them. The PDF parser keeps a merged cell's text in its first slot and leaves the slots it covers
empty (as the office and HTML parsers did); a covered slot counts as right when it is empty and its
merged cell's first slot is right, so either convention scores the same and only content counts.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from fidelity import Section, TruthTable, score_tables

HERE = Path(__file__).resolve().parent
LABELS = HERE / "pdf_tables.json"
CORPUS = Path(os.environ.get("RAYCHUNK_CORPUS", HERE.parent.parent / "shared" / "corpus")) / "pdf"

Span = tuple[int, int, int, int]  # (row, column, rows, columns) of a merged cell, in truth coordinates


@dataclass(frozen=True, slots=True)
class Drawn:
    """A table to draw: ``rows`` as a reader reads them (a wrapped cell's lines joined by ``\\n``),
    ``spans`` its merged cells; header rows each a band of their own, body rows ``every`` to a band."""

    rows: tuple[tuple[str, ...], ...]
    widths: tuple[float, ...]
    header_rows: int = 1
    every: int = 1
    rules: str = "grid"  # grid | none | booktabs
    spans: tuple[Span, ...] = ()
    size: float = 8.0
    line: float = 10.5  # baseline to baseline inside a band
    pad: float = 3.0  # above and below the text of a band
    gap: float = 0.0  # extra space between bands (unruled tables grouped by spacing)
    inset: float | None = None  # text to column edge: 3 pt in a grid, 6 pt without one (LaTeX's)

    @property
    def truth(self) -> TruthTable:
        return TruthTable(
            tuple(tuple(" ".join(c.split("\n")) for c in r) for r in self.rows), self.header_rows
        )


@dataclass(frozen=True, slots=True)
class Case:
    key: str  # the short name the figures are given under
    name: str
    data: bytes
    tables: tuple[Drawn, ...]


# -- drawing ------------------------------------------------------------------------------------------


def _numeric(text: str) -> bool:
    t = text.replace(",", "").replace("$", "").replace(".", "").replace("%", "").replace("-", "").strip()
    return t.isdigit()


def draw(page, x0: float, top: float, t: Drawn) -> float:
    """Draw ``t`` with its top-left corner at ``(x0, top)``; return its bottom. Numbers are set
    right-aligned in their column, text left-aligned; header rows in bold."""
    import pymupdf

    n_rows, n_cols = len(t.rows), len(t.widths)
    inset = t.inset if t.inset is not None else (3.0 if t.rules == "grid" else 6.0)
    xs = [x0]
    for w in t.widths:
        xs.append(xs[-1] + w)
    covered: dict[tuple[int, int], Span] = {}
    for sp in t.spans:
        r, c, h, w = sp
        for i in range(r, r + h):
            for j in range(c, c + w):
                covered[(i, j)] = sp
    # bands: each header row alone, then body rows ``every`` at a time
    bands: list[list[int]] = [[i] for i in range(t.header_rows)]
    body = list(range(t.header_rows, n_rows))
    bands += [body[k : k + t.every] for k in range(0, len(body), t.every)]
    lines = [
        max(
            len(t.rows[i][j].split("\n"))
            for j in range(n_cols)
            if (i, j) not in covered or covered[(i, j)][:2] == (i, j)
        )
        for i in range(n_rows)
    ]
    row_top: dict[int, float] = {}
    band_edges = [top]
    y = top
    for band in bands:
        y += t.pad
        for i in band:
            row_top[i] = y
            y += lines[i] * t.line
        y += t.pad + t.gap
        band_edges.append(y - t.gap)
        if t.gap:
            band_edges.append(y)
    bottom = y - t.gap

    def band_of(i: int) -> int:
        return next(k for k, b in enumerate(bands) if i in b)

    def row_bottom(i: int) -> float:
        b = bands[band_of(i)]
        return (row_top[i] + lines[i] * t.line) if i != b[-1] else row_top[i] + lines[i] * t.line + t.pad

    for i, row in enumerate(t.rows):
        for j, cell in enumerate(row):
            sp = covered.get((i, j))
            if sp is not None and sp[:2] != (i, j):
                continue
            right = xs[j + (sp[3] if sp else 1)]
            bold = i < t.header_rows
            font = "hebo" if bold else "helv"
            for k, text in enumerate(cell.split("\n")):
                if not text:
                    continue
                base = row_top[i] + (k + 1) * t.line - 0.25 * t.line
                width = pymupdf.get_text_length(text, fontname=font, fontsize=t.size)
                if sp is not None and sp[3] > 1:
                    x = (xs[j] + right - width) / 2  # a spanning header, centred over its columns
                elif _numeric(text) and not bold:
                    x = right - inset - width
                else:
                    x = xs[j] + inset
                page.insert_text((x, base), text, fontname=font, fontsize=t.size)

    if t.rules == "none":
        return bottom
    if t.rules == "booktabs":
        head = row_bottom(t.header_rows - 1) if t.header_rows else top
        for yy in (top, head, bottom):
            page.draw_line((xs[0], yy), (xs[-1], yy), width=0.6)
        return bottom
    # grid: the outer frame, column lines and band rules, less the inside of merged cells
    shape = page.new_shape()
    edges_y = sorted(set(band_edges))
    for k, yy in enumerate(edges_y):
        for j in range(n_cols):
            inside = False
            if 0 < k < len(edges_y) - 1:
                a = max((i for i in range(n_rows) if row_top[i] < yy), default=None)
                b = min((i for i in range(n_rows) if row_top[i] >= yy), default=None)
                if a is not None and b is not None:
                    sa, sb = covered.get((a, j)), covered.get((b, j))
                    inside = sa is not None and sa is sb
            if not inside:
                shape.draw_line((xs[j], yy), (xs[j + 1], yy))
    for j, xx in enumerate(xs):
        for band in bands:
            y0 = row_top[band[0]] - t.pad
            y1 = row_bottom(band[-1])
            inside = False
            if 0 < j < n_cols:
                sl, sr = covered.get((band[0], j - 1)), covered.get((band[0], j))
                inside = sl is not None and sl is sr
            if not inside:
                shape.draw_line((xx, y0), (xx, y1))
    shape.finish(width=0.5, color=(0, 0, 0))
    shape.commit()
    return bottom


def _pdf(pages: list[list[tuple[float, float, Drawn | str]]], size=(612, 792)) -> bytes:
    """A PDF of ``pages``, each a list of ``(x, y, table or text line)``."""
    import pymupdf

    pdf = pymupdf.open()
    for items in pages:
        page = pdf.new_page(width=size[0], height=size[1])
        for x, y, what in items:
            if isinstance(what, str):
                page.insert_text((x, y), what, fontname="hebo", fontsize=10)
            else:
                draw(page, x, y, what)
    return pdf.tobytes()


# -- the cases ------------------------------------------------------------------------------------------


def _money(v: int, dollar: bool = False) -> str:
    return f"${v:,}" if dollar else f"{v:,}"


_BANDS = [
    (0, 9_999),
    (10_000, 19_999),
    (20_000, 29_999),
    (30_000, 39_999),
    (40_000, 49_999),
    (50_000, 59_999),
    (60_000, 69_999),
    (70_000, 79_999),
    (80_000, 99_999),
    (100_000, 149_999),
    (150_000, 239_999),
    (240_000, 259_999),
    (260_000, 279_999),
    (280_000, 299_999),
    (300_000, 319_999),
    (320_000, 364_999),
    (365_000, 524_999),
    (525_000, None),
]


def _wage(lo: int, hi: int | None) -> str:
    return f"${lo:,} and over" if hi is None else f"${lo:,} - {hi:,}"


def withholding_table(seed: int, bands: int = 18) -> Drawn:
    """A tax form's two-job withholding table: a row label column (wage bands of the higher paying
    job) and 12 columns (wage bands of the lower paying job), a header of two rows whose label
    spans both and whose second row splits into the 12 column headers (each on two lines), body
    rows one text line each, a horizontal rule only every third row."""
    rng = random.Random(seed)
    head = "Lower Paying Job Annual Taxable Wage & Salary"
    label = "Higher Paying Job\nAnnual Taxable\nWage & Salary"
    cols = [f"${10_000 * k:,} -\n{10_000 * k + 9_999:,}" for k in range(11)] + ["$110,000 -\n120,000"]
    rows = [(label, *[head] * 12), (label, *cols)]
    base = 0
    for r, (lo, hi) in enumerate(_BANDS[:bands]):
        base += rng.randint(2, 9) * 10 * (1 + r // 6)
        vals = []
        v = base
        for c in range(12):
            v += rng.randint(0, 12) * 10 * (1 + c // 4)
            vals.append(_money(v, dollar=r == 0))
        rows.append((_wage(lo, hi), *vals))
    return Drawn(
        tuple(rows),
        (78.0,) + (40.0,) * 12,
        header_rows=2,
        every=3,
        spans=((0, 0, 2, 1), (0, 1, 1, 12)),
        size=6.5,
        line=8.5,
        pad=2.0,
    )


def _cases() -> list[Case]:
    out: list[Case] = []
    ruled = Drawn(
        (
            ("Product", "Units", "Price", "Warehouse"),
            ("Widget", "12", "3.50", "Leeds"),
            ("Gadget", "7", "11.00", "Bristol"),
            ("Doohickey", "3", "2.25", "Leeds"),
            ("Sprocket", "140", "0.80", "Cardiff"),
            ("Flange", "26", "4.10", "York"),
            ("Grommet", "1,200", "0.05", "Bristol"),
        ),
        (110, 70, 70, 100),
        line=12,
        pad=4,
    )
    out.append(Case("ruled", "fully ruled", _pdf([[(72, 80, "Stock on hand"), (72, 100, ruled)]]), (ruled,)))

    w4 = withholding_table(1)
    out.append(
        Case(
            "w4",
            "ruled every 3rd row, one line per row (tax form)",
            _pdf([[(26, 60, "Married Filing Jointly or Qualifying Surviving Spouse"), (26, 70, w4)]]),
            (w4,),
        )
    )
    three = [withholding_table(s) for s in (2, 3, 4)]
    titles = (
        "Married Filing Jointly or Qualifying Surviving Spouse",
        "Single or Married Filing Separately",
        "Head of Household",
    )
    items: list = []
    y = 40.0
    for title, t in zip(titles, three):
        items += [(26, y, title), (26, y + 6, t)]
        y += 6 + 40 + 18 * 8.5 + 6 * 4 + 30
    out.append(
        Case(
            "w4-page",
            "tax form page: three tables ruled every 3rd row, same row labels",
            _pdf([items]),
            tuple(three),
        )
    )

    rng = random.Random(5)
    stmt = [("Month", "Revenue", "Cost", "Margin")]
    for m in range(1, 14):
        rev, cost = rng.randint(900, 2000) * 10, rng.randint(400, 900) * 10
        stmt.append(
            (
                f"2024-{m:02d}" if m <= 12 else "Total",
                _money(rev),
                _money(cost),
                f"{100 * (rev - cost) / rev:.1f}%",
            )
        )
    every5 = Drawn(tuple(stmt), (90, 80, 80, 70), every=5, line=11, pad=3)
    out.append(
        Case(
            "every5",
            "ruled every 5th row",
            _pdf([[(72, 80, "Monthly statement"), (72, 100, every5)]]),
            (every5,),
        )
    )

    wrapped = Drawn(
        (
            ("Part", "Description", "Qty", "Note"),
            ("A-100", "Hex bolt, zinc plated,\nM8 x 40 mm", "200", "stock"),
            ("A-101", "Washer", "400", "stock"),
            (
                "B-220",
                "Bracket, steel, powder\ncoated, left hand,\nfor the 40 mm rail",
                "12",
                "made to\norder",
            ),
            ("B-221", "Bracket, right hand", "12", "made to\norder"),
            ("C-005", "Hinge pin", "50", "back order\nfrom March"),
        ),
        (60, 130, 50, 80),
        line=11,
        pad=3,
    )
    out.append(
        Case(
            "wrapped",
            "multi-line cells (ruled)",
            _pdf([[(72, 80, "Parts list"), (72, 100, wrapped)]]),
            (wrapped,),
        )
    )

    spanning = Drawn(
        (
            ("Region", "2023", "2023", "2024", "2024"),
            ("Region", "Revenue", "Cost", "Revenue", "Cost"),
            ("Europe", "12.1", "8.4", "14.0", "9.2"),
            ("Asia", "9.3", "6.1", "11.5", "7.0"),
            ("Americas", "15.8", "10.2", "16.1", "10.9"),
            ("Africa", "2.2", "1.9", "2.8", "2.1"),
        ),
        (90, 60, 60, 60, 60),
        header_rows=2,
        spans=((0, 0, 2, 1), (0, 1, 1, 2), (0, 3, 1, 2)),
        line=12,
        pad=3,
    )
    out.append(
        Case(
            "spans",
            "spanning and two-row headers (ruled)",
            _pdf([[(72, 80, "Results by region"), (72, 100, spanning)]]),
            (spanning,),
        )
    )

    rng = random.Random(7)
    unruled = Drawn(
        (("Station", "Jan", "Feb", "Mar", "Apr"),)
        + tuple(
            (name, *(f"{rng.randint(0, 900) / 10:.1f}" for _ in range(4)))
            for name in ("Aberdeen", "Belfast", "Cork", "Dover", "Exeter", "Fife", "Galway", "Hull")
        ),
        (100, 60, 60, 60, 60),
        rules="none",
        line=13,
        pad=0,
    )
    out.append(
        Case(
            "unruled",
            "unruled aligned columns",
            _pdf([[(72, 80, "Rainfall (mm)"), (72, 100, unruled)]]),
            (unruled,),
        )
    )

    rng = random.Random(8)
    grouped_rows = [("Wages", "Single", "Married", "Head", "Widowed", "Separate")]
    for lo, hi in _BANDS[:12]:
        grouped_rows.append((_wage(lo, hi), *(_money(rng.randint(0, 400) * 10) for _ in range(5))))
    grouped = Drawn(
        tuple(grouped_rows), (100, 60, 60, 60, 60, 60), every=3, rules="none", line=10, pad=2, gap=8
    )
    out.append(
        Case(
            "grouped",
            "unruled, rows grouped in threes by spacing",
            _pdf([[(72, 80, "Withholding by status"), (72, 100, grouped)]]),
            (grouped,),
        )
    )

    unruled_wrap = Drawn(
        (
            ("Code", "Meaning", "Action", "Owner"),
            ("E100", "Disk full", "Free space", "ops"),
            ("E200", "Certificate expired\non the gateway", "Renew", "sec"),
            ("E300", "Timeout", "Retry", "dev"),
            ("E400", "Quota", "Raise the limit", "ops"),
        ),
        (60, 110, 90, 60),
        rules="none",
        line=10,
        pad=0,
        gap=9,
    )
    out.append(
        Case(
            "unr-wrap",
            "unruled, a wrapped cell",
            _pdf([[(72, 80, "Error codes"), (72, 100, unruled_wrap)]]),
            (unruled_wrap,),
        )
    )

    booktabs = Drawn(
        (
            ("Model", "Params", "Accuracy", "Notes"),
            ("small", "60M", "71.2", "baseline"),
            ("base", "220M", "76.8", "distilled from\nthe large model"),
            ("large", "770M", "80.1", "-"),
            ("xl", "3B", "82.4", "trained twice\nas long"),
        ),
        (70, 60, 60, 110),
        rules="booktabs",
        line=10,
        pad=3,
        gap=6,
    )
    out.append(
        Case(
            "booktabs",
            "booktabs, a wrapped cell",
            _pdf([[(72, 80, "Results"), (72, 100, booktabs)]]),
            (booktabs,),
        )
    )

    conversions = Drawn(
        (
            ("Height", "7 ft END", "7 ft SIDE", "10 ft END", "10 ft SIDE"),
            ("+13 ft\n(4.0 m)", "2,170 lb*\n(990 kg)*", "2,170 lb*\n(990 kg)*", "", ""),
            (
                "+10 ft\n(3.0 m)",
                "2,340 lb*\n(1 060 kg)*",
                "2,220 lb\n(1 010 kg)",
                "3,660 lb*\n(1 660 kg)*",
                "3,400 lb\n(1 540 kg)",
            ),
            (
                "Groundline",
                "4,160 lb*\n(1 890 kg)*",
                "4,160 lb*\n(1 890 kg)*",
                "5,920 lb*\n(2 680 kg)*",
                "2,910 lb\n(1 320 kg)",
            ),
            (
                "-3 ft\n(-1.0 m)",
                "6,870 lb*\n(3 120 kg)*",
                "5,770 lb\n(2 620 kg)",
                "5,890 lb*\n(2 670 kg)*",
                "2,860 lb\n(1 300 kg)",
            ),
        ),
        (70, 70, 70, 70, 70),
        line=10,
        pad=6,
    )
    out.append(
        Case(
            "units",
            "a value and its conversion on two lines in every cell (ruled)",
            _pdf([[(72, 80, "Lift capacities"), (72, 100, conversions)]]),
            (conversions,),
        )
    )
    addresses = Drawn(
        (
            ("If you received a service in:", "Mail your claim form to:"),
            ("Alabama", "Palmetto GBA, LLC\nMail Code: AG-600\nP.O. Box 100306\nColumbia, SC 29202-3306"),
            (
                "California Northern\n(For Part B)",
                "Noridian Healthcare Solutions\nP.O. Box 6774\nFargo, ND 58108-6774",
            ),
            ("Delaware", "Novitas Solutions\nP.O. Box 3397\nMechanicsburg, PA 17055-1842"),
            ("District of\nColumbia", "Novitas Solutions\nP.O. Box 3396"),
        ),
        (120, 260),
        line=11,
        pad=4,
    )
    out.append(
        Case(
            "addresses",
            "a form's two-column address table, both columns wrapped (ruled)",
            _pdf([[(72, 80, "Contractor address table"), (72, 100, addresses)]]),
            (addresses,),
        )
    )
    rng = random.Random(6)
    two_line_head = Drawn(
        (("Item\nCode", "Unit\nPrice", "Net\nWeight", "Gross\nWeight"),)
        + tuple(
            (
                f"K-{100 + r}",
                f"{rng.randint(100, 9999) / 100:.2f}",
                f"{rng.randint(1, 90)} kg",
                f"{rng.randint(91, 120)} kg",
            )
            for r in range(10)
        ),
        (70, 70, 70, 70),
        every=2,
        line=11,
        pad=3,
    )
    out.append(
        Case(
            "head2",
            "a header on two lines over bands of two rows (ruled)",
            _pdf([[(72, 80, "Packing list"), (72, 100, two_line_head)]]),
            (two_line_head,),
        )
    )

    stacked = []
    items = []
    y = 90.0
    rng = random.Random(9)
    for title in ("Table 1: North", "Table 2: South", "Table 3: West"):
        t = Drawn(
            (("Quarter", "Orders", "Returns", "Net"),)
            + tuple((q, *(str(rng.randint(10, 999)) for _ in range(3))) for q in ("Q1", "Q2", "Q3", "Q4")),
            (90, 70, 70, 70),
            rules="none",
            line=13,
            pad=0,
        )
        stacked.append(t)
        items += [(72, y, title), (72, y + 10, t)]
        y += 130
    out.append(Case("stacked", "unruled tables stacked, same row labels", _pdf([items]), tuple(stacked)))
    return out


def _random_cases(rng: random.Random, n: int) -> list[Case]:
    """``n`` pages of one drawn table each: 3-9 columns, 1-5 rows per band, ruled or not, some
    cells wrapped onto two lines in one column."""
    out = []
    words = ["north", "south", "steel", "oak", "copper", "blue", "red", "fast", "slow", "grade"]
    for k in range(n):
        n_cols = rng.randint(3, 9)
        every = rng.choice((1, 1, 2, 3, 3, 4, 5))
        rules = rng.choice(("grid", "grid", "none"))
        header = tuple(["Item"] + [f"{rng.choice(words).title()} {c}" for c in range(1, n_cols)])
        rows = [header]
        wrap_col = rng.randint(1, n_cols - 1) if every == 1 and rng.random() < 0.5 else None
        for r in range(rng.randint(6, 18)):
            row = [f"{rng.choice(words)}-{r + 1}"]
            for c in range(1, n_cols):
                if c == wrap_col and rng.random() < 0.4:
                    row.append(f"{rng.choice(words)} {rng.choice(words)}\n{rng.choice(words)}")
                else:
                    row.append(f"{rng.randint(0, 99_999):,}")
            rows.append(tuple(row))
        width = min(70.0, 520 / n_cols)
        t = Drawn(
            tuple(rows),
            (width + 10,) + (width,) * (n_cols - 1),
            every=every,
            rules=rules,
            line=10,
            pad=2 if rules == "grid" else 0,
            gap=0 if rules == "grid" or every == 1 else 7,
            size=7,
        )
        if rules == "none" and wrap_col is not None:
            t = Drawn(t.rows, t.widths, every=1, rules="none", line=10, pad=0, gap=8, size=7)
        out.append(
            Case(
                "random",
                f"random {k}: {n_cols} cols, {every}/band, {rules}",
                _pdf([[(40, 60, f"Table {k}"), (40, 80, t)]]),
                (t,),
            )
        )
    return out


# -- scoring ------------------------------------------------------------------------------------------


def _tables_of(data: bytes, name: str, page: int | None = None):
    from raychunk.parse import parse_document

    parsed = parse_document(data, name)
    return [
        (b.rows, b.header_rows)
        for b in parsed.blocks
        if b.kind == "table" and (page is None or b.pages[0] == page)
    ]


def as_read(found, spans_of: list[tuple[TruthTable, tuple[Span, ...]]]):
    """``found`` with the slots of each truth table's merged cells filled from their first slot
    where they are empty: the parser's convention read as the reader's (see the module docstring).
    Each found table is filled for the truth table it shares the most first-slot cells with."""
    out = []
    for rows, header_rows in found:
        grid = [list(r) for r in rows]
        best = None
        for truth, spans in spans_of:
            if not spans:
                continue
            ok = sum(
                1
                for i, r in enumerate(truth.rows)
                for j, c in enumerate(r)
                if i < len(grid) and j < len(grid[i]) and " ".join(c.split()) == " ".join(grid[i][j].split())
            )
            if best is None or ok > best[0]:
                best = (ok, truth, spans)
        if best is not None:
            for r, c, h, w in best[2]:
                if r >= len(grid) or c >= len(grid[r]):
                    continue
                for i in range(r, min(r + h, len(grid))):
                    for j in range(c, min(c + w, len(grid[i]))):
                        if (i, j) != (r, c) and not grid[i][j]:
                            grid[i][j] = grid[r][c]
        out.append((tuple(map(tuple, grid)), header_rows))
    return out


def score_case(section: Section, case: Case) -> None:
    """One case's tables, its figures under its key (the section's format column)."""
    found = as_read(_tables_of(case.data, "case.pdf"), [(t.truth, t.spans) for t in case.tables])
    score_tables(section, case.name, case.key, [t.truth for t in case.tables], found)
    section.cases += 1


def pdf_tables(fast: bool) -> Section:
    s = Section("pdf-tables")
    for case in _cases() + _random_cases(random.Random(24), 4 if fast else 40):
        score_case(s, case)
    return s


def labelled_tables() -> list[tuple[str, int, TruthTable, tuple[Span, ...]]]:
    """``(file, page, table, spans)`` for every table of ``pdf_tables.json`` labelled at the cell
    level (``cells``: the table as read off the page image; ``spans``: its merged cells)."""
    out = []
    for entry in json.loads(LABELS.read_text()):
        for t in entry["tables"]:
            if "cells" in t:
                rows = tuple(tuple(r) for r in t["cells"])
                spans = tuple(tuple(sp) for sp in t.get("spans", ()))
                out.append((entry["file"], t["page"], TruthTable(rows, t.get("header_rows", 1)), spans))
    return out


def pdf_real(fast: bool) -> Section:
    """The hand-labelled tables, each file parsed once, each page's tables scored against the
    parser's tables on that page; figures per file."""
    s = Section("pdf-real")
    by_file: dict[str, list] = {}
    for name, page, truth, spans in labelled_tables():
        by_file.setdefault(name, []).append((page, truth, spans))
    for name, tables in sorted(by_file.items()):
        path = HERE.parent / name if name.startswith("samples/") else CORPUS / name
        data = path.read_bytes()
        for page in sorted({p for p, _, _ in tables}):
            here = [(t, sp) for p, t, sp in tables if p == page]
            found = as_read(_tables_of(data, name, page), here)
            score_tables(s, f"{name} p{page}", name.removesuffix(".pdf")[:24], [t for t, _ in here], found)
            s.cases += 1
    return s


SECTIONS = {"pdf-tables": pdf_tables}
if CORPUS.is_dir():  # the labelled real tables need the shared corpus beside the checkout
    SECTIONS["pdf-real"] = pdf_real
