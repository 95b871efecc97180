"""The PDF reading-order section of ``benchmarks/fidelity.py``: pages PyMuPDF lays out here in one to
four columns, so the order a reader reads them in is known exactly.

``pdf-reading-order`` draws the layouts of reports, papers, newsletters and spec sheets: a title
across the top, then one, two, three or four columns of paragraphs of random lengths; headings
inside a column; a heading set across the page between two bands of columns, left-aligned and too
short to reach past the first column (the band above is read to its end before it); an abstract
across both columns of a paper; a last page whose right column ends early; a sidebar half as wide as
the column beside it. A column's paragraphs
are read top to bottom, the columns left to right, a band before the band under it.

Figures, per layout: *paragraphs whole* (a truth paragraph or heading is one block's text) and
*read in order* (the block after a truth item's block is the next truth item's).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fidelity import Section

_WORDS = [
    "river",
    "stone",
    "market",
    "signal",
    "harbor",
    "winter",
    "copper",
    "lantern",
    "meadow",
    "engine",
    "valley",
    "orbit",
    "canvas",
    "ledger",
    "summit",
    "thread",
    "garden",
    "beacon",
    "quarry",
    "timber",
    "vessel",
    "prairie",
    "furnace",
    "mirror",
    "island",
    "pocket",
    "saddle",
    "cotton",
    "anchor",
    "crystal",
    "falcon",
    "gravel",
    "hollow",
    "kettle",
    "marble",
    "needle",
    "parcel",
    "ribbon",
    "shelter",
    "tunnel",
]
_W, _H = 612, 792


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    columns: int
    title: bool = True
    band_heading: bool = False  # a heading across the page between two bands of columns
    abstract: bool = False  # a paragraph across every column under the title
    column_headings: bool = False  # headings inside a column
    short_last: bool = False  # the last column ends early
    sidebar: bool = False  # a narrow first column beside one twice as wide


LAYOUTS = (
    Layout("1 column", 1, band_heading=True, column_headings=True),
    Layout("2 columns", 2, column_headings=True),
    Layout("2 columns, band heading", 2, band_heading=True),
    Layout("2 columns, abstract", 2, abstract=True, column_headings=True),
    Layout("2 columns, short last", 2, short_last=True),
    Layout("2 columns, sidebar", 2, sidebar=True, column_headings=True),
    Layout("3 columns", 3, column_headings=True),
    Layout("3 columns, band heading", 3, band_heading=True),
    Layout("4 columns", 4),
)


def _paragraph(rng: random.Random, k: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(12, 70))]
    return f"{words[0].capitalize()} {k} " + " ".join(words[1:]) + "."


def _heading(rng: random.Random) -> str:
    return " ".join(w.capitalize() for w in rng.sample(_WORDS, rng.randint(1, 3)))


def page_of(layout: Layout, rng: random.Random) -> tuple[bytes, list[str]]:
    """One page of ``layout``: the PDF and its texts (paragraphs and headings) in reading order."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=_W, height=_H)
    margin = rng.choice((36, 48, 60))
    gap = rng.choice((14, 18, 24))
    size = rng.choice((8.5, 9.0, 10.0))
    order: list[str] = []
    y = margin
    k = 0

    def text(rect, s: str, *, font="helv", fontsize=size) -> bool:
        return page.insert_textbox(pymupdf.Rect(*rect), s, fontname=font, fontsize=fontsize) >= 0

    if layout.title:
        t = "The " + _heading(rng) + " Report"
        if text((margin, y, _W - margin, y + 32), t, font="hebo", fontsize=18):
            order.append(t)
        y += 40
    if layout.abstract:
        k += 1
        p = _paragraph(rng, k)
        rect = (margin + 30, y, _W - margin - 30, y + 90)
        if text(rect, p, font="heit"):
            order.append(p)
            y += 100 - 5
    shares = (1, 2) if layout.sidebar else (1,) * layout.columns
    unit = (_W - 2 * margin - gap * (layout.columns - 1)) / sum(shares)
    lefts = [margin + sum(shares[:c]) * unit + c * gap for c in range(layout.columns)]

    def band(top: float, bottom: float) -> None:
        nonlocal k
        for c in range(layout.columns):
            x0 = lefts[c]
            colw = shares[c] * unit
            yy = top
            end = bottom
            if layout.short_last and c == layout.columns - 1:
                end = top + (bottom - top) * rng.uniform(0.3, 0.6)
            while True:
                if layout.column_headings and yy > top + 40 and rng.random() < 0.35:
                    h = _heading(rng)
                    if yy + 2.2 * (size + 2) > end or not text(
                        (x0, yy, x0 + colw, yy + 2.2 * (size + 2)), h, font="hebo", fontsize=size + 2
                    ):
                        break
                    order.append(h)
                    yy += 1.6 * (size + 2)
                if end - yy < 3 * size:
                    break
                k += 1
                p = _paragraph(rng, k)
                rect = (x0, yy, x0 + colw, end)
                left = page.insert_textbox(pymupdf.Rect(*rect), p, fontname="helv", fontsize=size)
                if left < 0:
                    break
                order.append(p)
                # the next paragraph a line's space under this one's last line
                drawn = page.get_text("words", clip=pymupdf.Rect(*rect))
                yy = max(w[3] for w in drawn) + size

    bottom = _H - margin
    if layout.band_heading:
        mid = y + (bottom - y) * rng.uniform(0.4, 0.6)
        band(y, mid)
        h = _heading(rng)
        if text((margin, mid + 6, _W - margin, mid + 30), h, font="hebo", fontsize=13):
            order.append(h)
        band(mid + 32, bottom)
    else:
        band(y, bottom)
    return doc.tobytes(), order


def _norm(s: str) -> str:
    return " ".join(s.split())


def score_page(section: Section, layout: Layout, data: bytes, truth: list[str], case: str) -> None:
    from raychunk.parse import parse_document

    parsed = parse_document(data, "layout.pdf")
    got = [_norm(b.text) for b in parsed.blocks if b.text.strip()]
    title = parsed.document.title
    where: dict[str, list[int]] = {}
    for i, g in enumerate(got):
        where.setdefault(g, []).append(i)
    if layout.title and _norm(truth[0]) == _norm(title) and _norm(truth[0]) not in where:
        where[_norm(truth[0])] = [-1]  # the title, read first (as the document's title)
    found: list[int | None] = []
    last = -2
    for t in truth:  # a text that comes twice (a heading's words): its next occurrence
        at = where.get(_norm(t), [])
        found.append(next((i for i in at if i > last), at[0] if at else None))
        last = found[-1] if found[-1] is not None else last
    section.add("paragraphs whole", layout.name, sum(f is not None for f in found), len(truth))
    in_order = sum(1 for a, b in zip(found, found[1:]) if a is not None and b is not None and b == a + 1)
    section.add("read in order", layout.name, in_order, len(truth) - 1)
    if in_order < len(truth) - 1:
        section.miss(f"{case}: {in_order}/{len(truth) - 1} in order")
    section.cases += 1


def reading_order(fast: bool) -> Section:
    s = Section("pdf-reading-order")
    rng = random.Random(7)
    for layout in LAYOUTS:
        for i in range(2 if fast else 12):
            data, truth = page_of(layout, rng)
            score_page(s, layout, data, truth, f"{layout.name} #{i}")
    return s


SECTIONS = {"pdf-reading-order": reading_order}
