"""Tables on a PDF page from its drawn rules and its word positions, with the work bounded by counts.

Two cheap finders share one pass over the page:

- ``ruled_tables``: cells from drawn lines and box edges, as pdfplumber (and pymupdf's
  ``find_tables``) build them: merge collinear segments, intersect horizontal with vertical lines,
  take the smallest cell at each crossing, group cells that share corners. Rows ruled across with
  only inner column lines get their missing outer sides. A grid of under 3 rows (besides a title
  row), mostly empty, or of paragraphs is a figure or boxed prose, not a table.
- ``aligned_tables``: text rows whose phrases line up in columns, between stacked horizontal rules
  (booktabs style) or, stricter, with no rules at all. Wrapped lines of a cell, key-less rows and
  the stacked lines of a header stay in their row; page header/footer rules, margins, text among
  drawn boxes or lines (diagrams, charts), form pages and short two-column label lists are not
  tables.

Every loop is capped by a count (``Caps``); a page over a cap is not searched, and the caller
says so in the document's notes. Nothing here reads a clock, so the same page gives the same
tables under any load.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass

__all__ = [
    "Caps",
    "Found",
    "Word",
    "aligned_tables",
    "page_words",
    "ruled_tables",
    "rules",
    "without_pictures",
]

_SNAP = 3.0  # points: segments this close are one line, and lines this close meet (pymupdf's defaults)
_MIN_LINE = 3.0
# points: a stroke at least this tall and taller than wide is a dash of a vertical (dotted) line,
# which joins into that line; shorter ones are points (pieces of curves, dots). Taken as points on
# horizontal lines, a column of dashes chained every dotted row rule beside it into one rule.
_DASH = 1.0


@dataclass(frozen=True, slots=True)
class Caps:
    """Most work one page may take; past a cap the page is skipped, not searched partly."""

    segments: int = 60_000  # straight segments read from the page's drawings
    crossings: int = 400_000  # horizontal x vertical line pairs tested
    cell_steps: int = 400_000  # corner look-ups while building cells
    words: int = 6_000  # words on a page searched for aligned columns


@dataclass(frozen=True, slots=True)
class Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    line: tuple[int, int]  # MuPDF's (block, line): words of one line join with spaces


@dataclass(frozen=True, slots=True)
class Found:
    """A table as cell texts row by row; ``header_rows`` is None when the finder cannot tell."""

    rows: tuple[tuple[str, ...], ...]
    bbox: tuple[float, float, float, float]
    header_rows: int | None = None


class TooMuch(Exception):
    """The page is over one of the caps; ``args[0]`` names it."""


def _apply(m, x: float, y: float) -> tuple[float, float]:
    return x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]


def page_words(textpage, m, skip: frozenset = frozenset(), shown: dict | None = None) -> list[Word]:
    """The words of a TextPage in visual coordinates (``m``: the page's rotation matrix as 6
    floats), less those of the ``(block, line)`` pairs in ``skip``; a word with a raised footnote
    mark or exponent, or a TeX math glyph, as its line shows it (``shown``: (block, line) -> {word:
    shown})."""
    out = []
    upright = tuple(m) == (1, 0, 0, 1, 0, 0)
    for x0, y0, x1, y1, text, block, line, _ in textpage.extractWORDS():
        if skip and (block, line) in skip:
            continue
        if shown and (words := shown.get((block, line))):
            text = words.get(text, text)
        if not upright:
            (ax, ay), (bx, by) = _apply(m, x0, y0), _apply(m, x1, y1)
            x0, y0, x1, y1 = min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)
        out.append(Word(x0, y0, x1, y1, text, (block, line)))
    return out


# ---------------------------------------------------------------------------------------------------
# lines


def rules(
    drawings, m, caps: Caps
) -> tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]:
    """Horizontal ``(y, x0, x1)`` and vertical ``(x, y0, y1)`` lines drawn on the page, merged.

    Straight strokes, thin rectangles (a rule drawn as a fill) and the edges of boxes count; curves
    do not. Raises TooMuch past ``caps.segments``.
    """
    upright = tuple(m) == (1, 0, 0, 1, 0, 0)
    hs: list[tuple[float, float, float]] = []
    vs: list[tuple[float, float, float]] = []

    def seg(ax: float, ay: float, bx: float, by: float) -> None:
        if not upright:
            (ax, ay), (bx, by) = _apply(m, ax, ay), _apply(m, bx, by)
        dx, dy = abs(ax - bx), abs(ay - by)
        if dy <= _SNAP and (dx >= dy or dy < _DASH):
            hs.append(((ay + by) / 2, min(ax, bx), max(ax, bx)))
        elif abs(ax - bx) <= _SNAP:
            vs.append(((ax + bx) / 2, min(ay, by), max(ay, by)))

    def box(x0: float, y0: float, x1: float, y1: float) -> None:
        x0, x1 = min(x0, x1), max(x0, x1)
        y0, y1 = min(y0, y1), max(y0, y1)
        w, h = x1 - x0, y1 - y0
        if h <= _SNAP and h < w:  # a rule drawn as a thin fill
            seg(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
        elif w <= _SNAP and w < h:
            seg((x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
        else:
            seg(x0, y0, x1, y0)
            seg(x0, y1, x1, y1)
            seg(x0, y0, x0, y1)
            seg(x1, y0, x1, y1)

    n = 0
    for path in drawings:
        items = path.get("items", ())
        n += len(items)
        if n > caps.segments:
            raise TooMuch(f"more than {caps.segments} drawn segments")
        for it in items:
            op = it[0]
            if op == "re" and upright:  # the common case (rules and dots drawn as fills), inlined
                x0, y0, x1, y1 = it[1]
                if x0 > x1:
                    x0, x1 = x1, x0
                if y0 > y1:
                    y0, y1 = y1, y0
                w, h = x1 - x0, y1 - y0
                if h <= _SNAP and h < w:
                    hs.append(((y0 + y1) / 2, x0, x1))
                elif w <= _SNAP and w < h:
                    if h < _DASH:  # as seg() takes it: a point
                        hs.append(((y0 + y1) / 2, (x0 + x1) / 2, (x0 + x1) / 2))
                    else:
                        vs.append(((x0 + x1) / 2, y0, y1))
                else:
                    box(x0, y0, x1, y1)
            elif op == "l":
                (ax, ay), (bx, by) = it[1], it[2]
                seg(ax, ay, bx, by)
            elif op == "re":
                box(*it[1])
            elif op == "qu":
                xs = sorted(q[0] for q in it[1])
                ys = sorted(q[1] for q in it[1])
                if xs[1] - xs[0] <= 1 and xs[3] - xs[2] <= 1:  # an upright quad is a box
                    box(xs[0], ys[0], xs[3], ys[3])
    return _merge(hs), _merge(vs)


def _merge(segments: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Snap segments whose positions are within ``_SNAP`` to their mean, then join those on one
    position that touch or leave gaps of up to ``_SNAP`` (dotted rules)."""
    out = []
    segments.sort()
    i = 0
    while i < len(segments):
        j = i + 1
        while j < len(segments) and segments[j][0] - segments[j - 1][0] <= _SNAP:
            j += 1
        group = segments[i:j]
        pos = sum(s[0] for s in group) / len(group)
        spans = sorted((s[1], s[2]) for s in group)
        a, b = spans[0]
        for c, d in spans[1:]:
            if c <= b + _SNAP:
                b = max(b, d)
            else:
                if b - a >= _MIN_LINE:
                    out.append((pos, a, b))
                a, b = c, d
        if b - a >= _MIN_LINE:
            out.append((pos, a, b))
        i = j
    return out


# ---------------------------------------------------------------------------------------------------
# ruled tables


def ruled_tables(hs, vs, words: list[Word], caps: Caps) -> list[Found]:
    """Tables whose cells are closed by drawn lines (or by the ends of their rules: ``_sides``)."""
    if len(hs) < 2 or not vs:
        return []
    if len(hs) * len(vs) > caps.crossings:
        raise TooMuch(f"{len(hs)} x {len(vs)} ruling lines")
    vs = vs + _sides(hs, vs)
    if len(vs) < 2:
        return []
    meets: dict[tuple[float, float], tuple[set, set]] = {}
    for vi, (x, y0, y1) in enumerate(vs):
        for hi, (y, x0, x1) in enumerate(hs):
            if y0 - _SNAP <= y <= y1 + _SNAP and x0 - _SNAP <= x <= x1 + _SNAP:
                v_ids, h_ids = meets.setdefault((x, y), (set(), set()))
                v_ids.add(vi)
                h_ids.add(hi)
    by_x: dict[float, list[float]] = defaultdict(list)
    by_y: dict[float, list[float]] = defaultdict(list)
    for x, y in sorted(meets):
        by_x[x].append(y)
        by_y[y].append(x)

    steps = 0
    cells = []
    for (x, y), (v_here, h_here) in sorted(meets.items()):
        below = by_x[x][bisect.bisect_right(by_x[x], y) :]
        right = by_y[y][bisect.bisect_right(by_y[y], x) :]
        found = None
        for yb in below:
            if not v_here & meets[(x, yb)][0]:
                continue
            for xr in right:
                steps += 1
                if steps > caps.cell_steps:
                    raise TooMuch(f"more than {caps.cell_steps} cell corner look-ups")
                if not h_here & meets[(xr, y)][1]:
                    continue
                corner = meets.get((xr, yb))
                if corner and corner[0] & meets[(xr, y)][0] and corner[1] & meets[(x, yb)][1]:
                    found = (x, y, xr, yb)
                    break
            if found:
                break
        if found:
            cells.append(found)

    candidates = []
    for group in _cell_groups(cells):
        if len({c[0] for c in group}) < 2 or len({c[2] for c in group}) < 2:
            continue
        bands, rows = _fill(group, words)
        # whether the grid is a table is judged on its ruled bands, as drawn; a grid of one band
        # may still be the last row of the table above it (``_stacked``)
        table = bool(rows) and _tabular(bands) and _ruled_grid(bands)
        if table or len({c[1] for c in group}) == 1:
            candidates.append((group, rows, table))
    out = []
    for group, rows in _stacked(candidates, words):
        bbox = (
            min(c[0] for c in group),
            min(c[1] for c in group),
            max(c[2] for c in group),
            max(c[3] for c in group),
        )
        out.append(Found(rows, bbox))
    # a frame around the page body holding a real table is not a table itself
    return [f for f in out if not any(g is not f and _inside(g.bbox, f.bbox) for g in out)]


_STACK_GAP = 24.0  # points: most space between a grid and one under it that continues it


def _stacked(candidates: list[tuple[list, tuple, bool]], words: list[Word]) -> list[tuple[list, tuple]]:
    """The tables among ``candidates`` (cells, rows, whether a table) with the grids that
    continue them joined: a table or a grid of one row set just under a table (``_STACK_GAP``),
    with no text between them, whose cells start and end on the table's column edges (a table's
    next section after a blank band; its total row in a box of its own). Returns cells and rows."""
    out: list[tuple[list, tuple]] = []
    last_table = False
    for g, rows, table in sorted(candidates, key=lambda t: min(c[1] for c in t[0])):
        if out and last_table:
            f = out[-1][0]
            f_bottom, g_top = max(c[3] for c in f), min(c[1] for c in g)
            starts = sorted({c[0] for c in f})
            edges = sorted({c[0] for c in f} | {c[2] for c in f})
            g_x0, g_x1 = min(c[0] for c in g), max(c[2] for c in g)
            if (
                0 <= g_top - f_bottom <= _STACK_GAP
                and all(_near(starts, c[0], 1.0) and _near(edges, c[2], 1.0) for c in g)
                and not any(
                    f_bottom < (w.y0 + w.y1) / 2 < g_top and g_x0 <= (w.x0 + w.x1) / 2 <= g_x1 for w in words
                )
            ):
                joined = f + g
                out[-1] = (joined, _fill(joined, words)[1])
                continue
        last_table = table
        if table:
            out.append((g, rows))
    return out


def _near(sorted_values: list[float], v: float, tol: float) -> bool:
    i = bisect.bisect_left(sorted_values, v - tol)
    return i < len(sorted_values) and sorted_values[i] <= v + tol


def without_pictures(found: list[Found], pictures, m) -> list[Found]:
    """``found`` less the grids that frame pictures (boxes ``pictures``, unrotated; ``m``: the
    page's rotation matrix) that lie inside the grid and cover a quarter of its area or more: a
    panel of figures with captions, not a table (a picture behind the whole page is no matter)."""
    if tuple(m) != (1, 0, 0, 1, 0, 0):
        boxes = []
        for bx0, by0, bx1, by1 in pictures:
            (ax, ay), (bx, by) = _apply(m, bx0, by0), _apply(m, bx1, by1)
            boxes.append((min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)))
        pictures = boxes
    out = []
    for f in found:
        x0, y0, x1, y1 = f.bbox
        area = max(1e-6, (x1 - x0) * (y1 - y0))
        covered = sum(
            (b[2] - b[0]) * (b[3] - b[1])
            for b in pictures
            if x0 - 2 <= b[0] and y0 - 2 <= b[1] and b[2] <= x1 + 2 and b[3] <= y1 + 2
        )
        if covered < 0.25 * area:
            out.append(f)
    return out


def _sides(hs, vs) -> list[tuple[float, float, float]]:
    """The missing outer sides of open-sided grids: where 3+ horizontal rules share both ends and
    drawn vertical lines between those ends cross 3+ of them (rows ruled, columns split by inner
    lines only), vertical lines at the rules' ends, over the rules that each such line crosses."""
    out = []
    groups: dict[tuple[int, int], list[tuple[float, float, float]]] = defaultdict(list)
    for h in hs:
        groups[(round(h[1] / (2 * _SNAP)), round(h[2] / (2 * _SNAP)))].append(h)
    for key in sorted(groups):
        group = groups[key]
        if len(group) < 3:
            continue
        ys = sorted(h[0] for h in group)
        x0, x1 = min(h[1] for h in group), max(h[2] for h in group)
        for x, a, b in vs:
            if not x0 + _SNAP < x < x1 - _SNAP:
                continue
            crossed = [y for y in ys if a - _SNAP <= y <= b + _SNAP]
            if len(crossed) < 3:
                continue
            top, bottom = crossed[0], crossed[-1]
            for side in (x0, x1):
                if not any(
                    abs(v[0] - side) <= _SNAP and v[1] <= top + _SNAP and v[2] >= bottom - _SNAP for v in vs
                ):
                    out.append((side, top, bottom))
    return _merge(out)


_CELL_WORDS = 15  # most words in the median cell of a table: more is prose in boxes or columns


def _tabular(rows) -> bool:
    """Most rows hold 2+ cells, and cells hold phrases (the median cell ``_CELL_WORDS`` words at
    most), not paragraphs: else it is framed prose."""
    used = [[c for c in r if c] for r in rows]
    used = [r for r in used if r]
    if not used or sum(1 for r in used if len(r) >= 2) < 0.5 * len(used):
        return False
    words = sorted(len(c.split()) for r in used for c in r)
    return words[len(words) // 2] <= _CELL_WORDS


def _trimmed(rows) -> list[list[str]]:
    """``rows`` without its empty rows and empty columns (what the parser keeps of a table)."""
    rows = [list(r) for r in rows if any(c.strip() for c in r)]
    if not rows:
        return []
    keep = [j for j in range(max(map(len, rows))) if any(j < len(r) and r[j].strip() for r in rows)]
    return [[r[j] if j < len(r) else "" for j in keep] for r in rows]


def _filled(rows: list[list[str]]) -> float:
    """The share of a trimmed grid's cells that hold text."""
    n = sum(len(r) for r in rows)
    return sum(1 for r in rows for c in r if c.strip()) / n if n else 0.0


def _ruled_grid(rows) -> bool:
    """A grid of drawn lines that holds a table, not a diagram, a chart's axes or a frame: 3+ rows
    besides a title row (a box split once or twice, labels beside it, is a figure or a note), at
    least half of its cells filled."""
    grid = _trimmed(rows)
    body = grid[1:] if sum(1 for c in grid[0] if c) == 1 else grid  # under a title spanning the grid
    return len(body) >= 3 and _filled(grid) >= 0.5


def _inside(inner: tuple, outer: tuple) -> bool:
    return (
        outer[0] - 1 <= inner[0]
        and outer[1] - 1 <= inner[1]
        and inner[2] <= outer[2] + 1
        and inner[3] <= outer[3] + 1
        and inner != outer
    )


def _cell_groups(cells: list[tuple]) -> list[list[tuple]]:
    """Cells that share a corner, transitively, form one table (in order of their top-left cell)."""
    parent = list(range(len(cells)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[float, float], int] = {}
    for i, (x0, y0, x1, y1) in enumerate(cells):
        for corner in ((x0, y0), (x0, y1), (x1, y0), (x1, y1)):
            j = owner.setdefault(corner, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[tuple]] = defaultdict(list)
    for i, c in enumerate(cells):
        groups[root(i)].append(c)
    return sorted(groups.values(), key=lambda g: min((c[1], c[0]) for c in g))


def _fill(
    cells: list[tuple], words: list[Word]
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """Cell texts as ruled bands, and as rows: one band per distinct cell top, one slot per
    distinct cell left edge (a slot that a merged cell covers stays empty), each word in the
    smallest cell holding its centre; a band holding several rows of text lines is those rows
    (``_band_rows``)."""
    xs = sorted({c[0] for c in cells})
    tops = sorted({c[1] for c in cells})
    texts: dict[tuple, list[Word]] = defaultdict(list)
    x0, y0 = xs[0], tops[0]
    x1, y1 = max(c[2] for c in cells), max(c[3] for c in cells)
    by_top: dict[float, list[tuple]] = defaultdict(list)
    for c in cells:
        by_top[c[1]].append(c)
    for w in words:
        cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
        if not (x0 <= cx <= x1 and y0 <= cy <= y1):
            continue
        best = None
        for top in tops[: bisect.bisect_right(tops, cy)]:
            for c in by_top[top]:
                if c[0] <= cx <= c[2] and c[1] <= cy <= c[3]:
                    area = (c[2] - c[0]) * (c[3] - c[1])
                    if best is None or area < best[0]:
                        best = (area, c)
        if best is not None:
            texts[best[1]].append(w)
    bands = []
    for top in tops:
        starts = {c[0]: c for c in by_top[top]}
        bands.append([texts.get(starts[x], []) if x in starts else [] for x in xs])
    label = min((j for band in bands for j, ws in enumerate(band) if ws), default=0)
    split = [_band_rows(band, label) for band in bands]
    if len(split) >= 3 and len(split[0]) > 1:
        # the top band is a header, one row, when its line count is not the body's (two lines of
        # header over bands of three or one), or when it is words over a body of numbers
        counts = [len(rows) for rows in split[1:]]
        usual = max(sorted(set(counts)), key=counts.count)
        if len(split[0]) != usual or _numeric(bands[0]) < 0.5 <= _numeric(
            [ws for b in bands[1:] for ws in b]
        ):
            split[0] = [bands[0]]
    texts_of = tuple(tuple(_join(ws) for ws in band) for band in bands)
    return texts_of, tuple(tuple(_join(ws) for ws in row) for rows in split for row in rows)


_NUMBER = re.compile(r"[-+\u2212(]?[$\u20ac\u00a3]?\d[\d.,]*%?\)?\*?")


def _numeric(cells: list[list[Word]]) -> float:
    """The share of the words of ``cells`` that are numbers (amounts, percentages, counts)."""
    words = [w.text for ws in cells for w in ws]
    return sum(1 for t in words if _NUMBER.fullmatch(t)) / len(words) if words else 0.0


_FULL = 0.75  # share of a band's filled cells a text line must cross to be a row of its own


def _band_rows(band: list[list[Word]], label: int) -> list[list[list[Word]]]:
    """One ruled band (its words, slot by slot) as the table rows its text lines make.

    A band ruled around several rows (a tax form draws a rule every third row) holds one text line
    per row in every column, on shared baselines. Such a line, one that crosses at least 3 and
    ``_FULL`` of the band's filled cells, the row-label cell (slot ``label``) among them, starts a
    row; other lines (a cell's text wrapped onto more lines) stay in the row above. A cell that
    wraps while its neighbours hold one line leaves no second full line, so the band stays one
    row; so do lines that continue the line above across the band (mostly parentheticals, as a
    metric conversion under each value, or lines ending in a hyphen), and lines of prose.
    """
    filled = [j for j, ws in enumerate(band) if ws]
    if len(filled) < 3 or sum(len(ws) for ws in band) < 6:
        return [band]
    # the band's words in visual lines: vertical centres within half a word height
    words = sorted((((w.y0 + w.y1) / 2, w.x0, j, w) for j, ws in enumerate(band) for w in ws), key=_first3)
    lines: list[list[tuple[int, Word]]] = []
    ref = -1e9
    for cy, _, j, w in words:
        if not lines or cy - ref > 0.5 * max(1.0, w.y1 - w.y0):
            lines.append([])
            ref = cy
        lines[-1].append((j, w))
    if len(lines) < 2:
        return [band]
    need = max(3, _FULL * len(filled))
    full = [len({j for j, _ in ln}) >= need and any(j == label for j, _ in ln) for ln in lines]
    for k in range(1, len(lines)):
        if full[k] and full[k - 1] and _continues(_line_cells(lines[k - 1]), _line_cells(lines[k])):
            full[k] = False
    if sum(full) < 2:
        return [band]
    first = full.index(True)
    rows: list[list[list[Word]]] = []
    for k, ln in enumerate(lines):
        if not rows or full[k] and k > first:  # lines above the first full one join its row
            rows.append([[] for _ in band])
        for j, w in ln:
            rows[-1][j].append(w)
    cells = sorted(len(ws) for row in rows for ws in row if ws)
    if cells[len(cells) // 2] > 5:
        return [band]  # lines of prose side by side, not rows of short values
    order = {id(w): i for ws in band for i, w in enumerate(ws)}  # MuPDF's order, as _join reads it
    for row in rows:
        for ws in row:
            ws.sort(key=lambda w: order[id(w)])
    return rows


def _first3(t: tuple) -> tuple:
    return t[:3]


_OPENS = "([{"
_CARRIES = ("-", "\u2013", "\u2014", ",", "/", "&")


def _continues(upper: list[list[Word]], lower: list[list[Word]]) -> bool:
    """Whether text line ``lower`` (its cells' words, left to right) continues line ``upper``
    across a table rather than starting a row: most of its cells open a parenthesis or start in
    lower case (``(990 kg)*`` under ``2,170 lb*``), or most cells of ``upper`` end in a hyphen,
    dash, comma, slash or ampersand (``$10,000 -`` over ``19,999``)."""
    opens = sum(1 for ws in lower if ws[0].text[:1] in _OPENS or ws[0].text[:1].islower())
    if 2 * opens >= len(lower):
        return True
    carries = sum(
        1 for ws in upper if ws[-1].text.endswith(_CARRIES) and (len(ws) > 1 or len(ws[-1].text) > 1)
    )
    return 2 * carries >= len(upper)  # a lone dash is an empty value, not a carried line


def _line_cells(line: list[tuple[int, Word]]) -> list[list[Word]]:
    out: dict[int, list[Word]] = {}
    for j, w in line:
        out.setdefault(j, []).append(w)
    return [sorted(ws, key=lambda w: w.x0) for _, ws in sorted(out.items())]


def _join(words) -> str:
    """Words of one MuPDF line joined by spaces, lines by newlines."""
    out: list[str] = []
    last = None
    for w in words:
        if out and w.line == last:
            out[-1] += " " + w.text
        else:
            out.append(w.text)
        last = w.line
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------
# aligned tables


@dataclass(slots=True)
class _Row:
    y0: float
    y1: float
    phrases: list[list[Word]]  # runs of words with no wide gap, left to right


def _rows(words: list[Word]) -> list[_Row]:
    """Words in visual rows (vertical centres within half a word height), cut into phrases where
    the gap between two words is wider than a word height."""
    rows: list[list[Word]] = []
    for w in sorted(words, key=lambda w: ((w.y0 + w.y1) / 2, w.x0)):
        cy = (w.y0 + w.y1) / 2
        if rows:
            last = rows[-1]
            ref = (last[0].y0 + last[0].y1) / 2
            if abs(cy - ref) <= 0.5 * max(1.0, last[0].y1 - last[0].y0):
                last.append(w)
                continue
        rows.append([w])
    out = []
    for ws in rows:
        ws.sort(key=lambda w: w.x0)
        h = sorted(w.y1 - w.y0 for w in ws)[len(ws) // 2]
        phrases = [[ws[0]]]
        for w in ws[1:]:
            if w.x0 - phrases[-1][-1].x1 > max(h, 4.0):
                phrases.append([w])
            else:
                phrases[-1].append(w)
        out.append(_Row(min(w.y0 for w in ws), max(w.y1 for w in ws), phrases))
    return out


def _columns(rows: list[_Row]) -> list[float]:
    """x positions that no phrase of ``rows`` crosses and that have phrases on both sides: the
    separators of the columns."""
    spans = sorted((p[0].x0, p[-1].x1) for r in rows for p in r.phrases)
    cuts = []
    reach = spans[0][1]
    for a, b in spans[1:]:
        if a > reach + 2:
            cuts.append((reach + a) / 2)
        reach = max(reach, b)
    return cuts


def _grid(
    rows: list[_Row],
    cuts: list[float],
    loose: frozenset[int] = frozenset(),
    wrapped: frozenset[int] = frozenset(),
) -> list[list[str]]:
    """Rows of cell texts, a phrase in the column of its centre. Rows whose index is in ``loose``
    (one phrase under a row of several) put it in the column where it starts; those also in
    ``wrapped`` are the wrapped line of a cell of the row above and join that row's cells."""
    out: list[list[list[Word]]] = []
    for i, r in enumerate(rows):
        cells: list[list[Word]] = [[] for _ in range(len(cuts) + 1)]
        for p in r.phrases:
            x = p[0].x0 + 1 if i in loose else (p[0].x0 + p[-1].x1) / 2
            cells[bisect.bisect_left(cuts, x)].extend(p)
        if i in wrapped and out:
            for into, more in zip(out[-1], cells):
                into.extend(more)
        else:
            out.append(cells)
    return [[_join(c) for c in cells] for cells in out]


_MARGIN = 0.065  # share of the page height at its top and bottom where running header/footer rules sit


def aligned_tables(
    words: list[Word],
    hs,
    width: float,
    caps: Caps,
    taken: list[tuple],
    height: float | None = None,
    vs=(),
) -> list[Found]:
    """Tables of text set in columns: between stacked horizontal rules (a booktabs table), or with
    no rules, where 4+ rows of short phrases line up in 3+ columns. ``taken``: boxes of tables
    already found, left alone. On a page of ``height``, two or three rules more than half the page
    apart (the running header's and footer's, a frame) do not bound a table, and rows in its top
    and bottom margins are not rows of an unruled one; text crossed by 2+ vertical lines ``vs``, or
    set among 3+ short horizontal ones, is a diagram's, not an unruled table's."""
    if len(words) > caps.words:
        raise TooMuch(f"more than {caps.words} words")
    if not words:
        return []

    def free(w: Word) -> bool:
        cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
        return not any(b[0] - 1 <= cx <= b[2] + 1 and b[1] - 1 <= cy <= b[3] + 1 for b in taken)

    rows = _rows([w for w in words if free(w)])
    out: list[Found] = []
    used: set[int] = set()

    # between rules: 2+ long horizontal rules over the same span, most rows between them in columns;
    # two or three rules far apart on a page are its header and footer rules or a frame, not a table
    page_h = height or float("inf")
    long_rules = sorted(r for r in hs if r[2] - r[1] >= 0.25 * width and 0 <= r[0] <= page_h)
    for i, (top, a, b) in enumerate(long_rules):
        stack = [top] + [y for y, c, d in long_rules[i + 1 :] if abs(c - a) <= 6 and abs(d - b) <= 6]
        if len(stack) < 2 or (len(stack) <= 3 and stack[-1] - top > 0.5 * page_h):
            continue
        bottom = stack[-1]
        inside = [k for k, r in enumerate(rows) if k not in used and top < r.y0 and r.y1 < bottom]
        body = [rows[k] for k in inside if rows[k].y0 > (stack[1] if len(stack) >= 3 else top)]
        if len(body) < 2 or sum(1 for r in body if len(r.phrases) >= 2) < 0.6 * len(body):
            continue
        if any(p[0].x0 < a - 6 or p[-1].x1 > b + 6 for k in inside for p in rows[k].phrases):
            continue  # text beyond the rules' ends: not a table between them
        cuts = _columns(body)
        if not cuts:
            continue
        head = [rows[k] for k in inside if rows[k].y1 <= stack[1]] if len(stack) >= 3 else []
        grid = _grid(head, cuts) if head else []
        header = [" ".join(filter(None, col)) for col in zip(*grid)] if grid else []
        # a cell's second line: set closer than the rows, clear of the first column, one or two
        # phrases in under half of the columns (a label or values set between two rows, as
        # LaTeX's multirow centres them, are a row of their own)
        wrapped = frozenset(
            k
            for k in _wrapped(body)
            if body[k].phrases[0][0].x0 > cuts[0] and len(body[k].phrases) <= min(2, (len(cuts) + 1) // 2)
        )
        cells = tuple(map(tuple, ([header] if header else []) + _grid(body, cuts, wrapped, wrapped)))
        if _tabular(cells) and _filled(_trimmed(cells)) >= 0.5 and _not_a_list(_trimmed(cells)):
            used.update(inside)
            out.append(Found(cells, (a, top, b, bottom), 1 if header else None))

    # no rules: a run of rows of short phrases that line up in 3+ columns, away from the page's
    # top and bottom margins (running headers and footers). A one-phrase row under a row of the
    # run that starts in one of its later columns belongs to the run (a row with its first cells
    # empty), and so does a short one just above its first row, over one of its columns but not the
    # first (a header's top line).
    lo, hi = (_MARGIN * height, (1 - _MARGIN) * height) if height else (float("-inf"), float("inf"))
    vs_by_x = sorted(vs)

    def free_row(k: int) -> bool:
        return 0 <= k < len(rows) and k not in used and lo <= rows[k].y0 and rows[k].y1 <= hi

    run: list[int] = []
    loose: set[int] = set()
    anchor: _Row | None = None  # the run's last row of 2+ phrases
    for k in range(len(rows) + 1):
        r = rows[k] if k < len(rows) else None
        ok = free_row(k)
        if ok and run:
            line = r.y1 - r.y0
            gap = r.y0 - rows[run[-1]].y1
            if len(r.phrases) >= 2 and gap <= 4 * line:
                run.append(k)
                anchor = r
                continue
            if (
                len(r.phrases) == 1
                and anchor is not None
                and gap <= 4 * line
                and r.phrases[0][0].x0 >= anchor.phrases[1][0].x0 - 3
            ):
                run.append(k)
                loose.add(k)
                continue
        if run and free_row(run[0] - 1):
            first, above = rows[run[0]], rows[run[0] - 1]
            top = above.phrases[0]
            if (
                len(above.phrases) == 1
                and len(top) <= 3
                and first.y0 - above.y1 <= 0.6 * (above.y1 - above.y0)
                and top[0].x0 > min(rows[i].phrases[0][0].x0 for i in run) + 3
                and any(top[0].x0 < q[-1].x1 and q[0].x0 < top[-1].x1 for q in first.phrases)
            ):
                run.insert(0, run[0] - 1)
                loose.add(run[0])
        _trim_top(run, loose, rows)
        wrapped = _wrapped([rows[i] for i in run])
        while run and run[-1] in loose and len(run) - 1 not in wrapped:
            run.pop()  # one-phrase rows after the last full row: text under the table
        if sum(1 for i in run if i not in loose) >= 4:
            found = _aligned_run(
                [rows[i] for i in run],
                frozenset(j for j, i in enumerate(run) if i in loose),
                frozenset(j for j in wrapped if j < len(run)),
            )
            if (
                found is not None
                and not _struck([rows[i] for i in run], vs_by_x)
                and _short_rules(found.bbox, hs) < 3
            ):
                out.append(found)
        run, loose, anchor = [], set(), None
        if ok and len(r.phrases) >= 2:
            run, anchor = [k], r
    return out


def _running_text(rows: list[_Row], cuts: list[float]) -> bool:
    """Columns of wrapped prose side by side (a newsletter's, a brochure's), whose lines line up as
    rows: every column of 4+ lines has most of them across its width, most going on mid-sentence
    into the line under it (no closing mark, a lower-case word next)."""
    lines: list[list[tuple[float, float, str] | None]] = []
    for r in rows:
        cells: list[list[Word]] = [[] for _ in range(len(cuts) + 1)]
        for p in r.phrases:
            cells[bisect.bisect_left(cuts, (p[0].x0 + p[-1].x1) / 2)].extend(p)
        lines.append([(c[0].x0, c[-1].x1, " ".join(w.text for w in c)) if c else None for c in cells])
    prose = 0
    for j in range(len(cuts) + 1):
        column = [row[j] for row in lines]
        filled = [c for c in column if c]
        if len(filled) < 4:
            continue
        width = max(c[1] for c in filled) - min(c[0] for c in filled)
        across = sum(1 for c in filled if c[1] - c[0] >= 0.7 * width and len(c[2].split()) >= 2)
        words = sum(len(c[2].split()) for c in filled)
        pairs = [(a, b) for a, b in zip(column, column[1:]) if a and b]
        going_on = sum(1 for a, b in pairs if a[2][-1] not in ".!?:;" and b[2][:1].islower())
        if (
            across < 0.6 * len(filled)
            or words < 2.5 * len(filled)
            or not pairs
            or going_on < 0.5 * len(pairs)
        ):
            return False
        prose += 1
    return prose >= 2


def _trim_top(run: list[int], loose: set[int], rows: list[_Row]) -> None:
    """Drop from the top of ``run`` a row of under 3 phrases that reaches outside the columns of
    its rows of 3+ (a drawing's label on the line of a caption above the table), and the
    one-phrase rows it brought in."""
    core = [rows[i] for i in run if len(rows[i].phrases) >= 3]
    if not core:
        return
    left = min(r.phrases[0][0].x0 for r in core)
    right = max(r.phrases[-1][-1].x1 for r in core)
    margin = 0.1 * (right - left)
    while run and run[0] not in loose and len(rows[run[0]].phrases) < 3:
        if not any(p[-1].x1 < left - margin or p[0].x0 > right + margin for p in rows[run[0]].phrases):
            return
        run.pop(0)
        while run and run[0] in loose:
            run.pop(0)


def _header_columns(grid: list[list[str]]) -> list[list[str]]:
    """Join a column that holds only a header cell to the next (else the previous) column, when that
    one's header cell is empty: a header set off its column (left-aligned over right-aligned
    numbers) is not a column of its own."""
    j = 0
    while len(grid) >= 2 and j < len(grid[0]):
        if grid[0][j] and not any(r[j] for r in grid[1:]):
            for k in (j + 1, j - 1):
                if 0 <= k < len(grid[0]) and not grid[0][k]:
                    grid[0][k] = grid[0][j]
                    grid = [r[:j] + r[j + 1 :] for r in grid]
                    break
            else:
                j += 1
        else:
            j += 1
    return grid


_PAIRS = 7  # fewest rows of a two-column table found from text alignment alone


def _not_a_list(grid: list[list[str]]) -> bool:
    """Two columns of aligned text are a label/value list (a spec sheet, an address block) unless
    they run long; three or more columns are a table."""
    return bool(grid) and (len(grid[0]) >= 3 or len(grid) >= _PAIRS)


def _wrapped(rows: list[_Row]) -> set[int]:
    """Rows (by index) that continue the row above: set much closer to it than rows are to each
    other (a gap under 0.6 of a line and under half the run's usual gap, its upper quartile),
    unless they line up as a row of their own (``_own_row``: rows grouped in threes by spacing)."""
    gaps = [b.y0 - a.y1 for a, b in zip(rows, rows[1:])]
    if not gaps:
        return set()
    usual = sorted(gaps)[(3 * (len(gaps) - 1)) // 4]
    out: set[int] = set()
    for j, g in enumerate(gaps):
        # a row of its own only under a row of its own: a wrapped line ends a group
        tight = g <= 0.6 * (rows[j + 1].y1 - rows[j + 1].y0) and g < 0.5 * usual
        if tight and (j in out or not _own_row(rows[j], rows[j + 1])):
            out.add(j + 1)
    return out


def _own_row(upper: _Row, lower: _Row) -> bool:
    """Whether text row ``lower``, set tight under ``upper``, is a table row of its own (rows
    grouped in threes by spacing): as many phrases as ``upper``, 3 or more, none over 4 words,
    starting in ``upper``'s first column, and not continuing its line (``_continues``). Tight
    rows of longer phrases are wrapped text (notation lists, prose beside formulas)."""
    a, b = upper.phrases, lower.phrases
    if len(b) != len(a) or len(b) < 3 or b[0][0].x0 >= a[1][0].x0 or max(map(len, b)) > 4:
        return False
    return not _continues(a, b)


def _short_rules(bbox: tuple, hs) -> int:
    """Horizontal lines inside ``bbox`` shorter than half its width: the edges of boxes drawn
    around its text (a diagram, a graphic), which an unruled table does not have."""
    x0, y0, x1, y1 = bbox
    return sum(1 for y, a, b in hs if y0 + 2 < y < y1 - 2 and a < x1 and b > x0 and b - a < 0.5 * (x1 - x0))


_STRUCK_STEPS = 20_000  # line-under-phrase tests for one run of rows


def _struck(rows: list[_Row], vs_by_x: list) -> bool:
    """Whether 2+ drawn vertical lines run through the text of ``rows`` (not between its columns):
    labels on a chart or a diagram, not cells of a table. ``vs_by_x``: vertical lines sorted."""
    hits = steps = 0
    for r in rows:
        for p in r.phrases:
            j = bisect.bisect_right(vs_by_x, (p[0].x0 + 1, float("inf"), float("inf")))
            while j < len(vs_by_x) and vs_by_x[j][0] < p[-1].x1 - 1:
                x, a, b = vs_by_x[j]
                j += 1
                steps += 1
                if steps > _STRUCK_STEPS:
                    return True  # text under a thicket of lines: a drawing
                if a < r.y1 - 1 and b > r.y0 + 1 and any(w.x0 < x < w.x1 for w in p):
                    hits += 1
                    if hits >= 2:
                        return True
    return False


def _aligned_run(
    rows: list[_Row], loose: frozenset[int] = frozenset(), wrapped: frozenset[int] = frozenset()
) -> Found | None:
    full = [r for i, r in enumerate(rows) if i not in loose]
    cuts = _columns(full)
    if len(cuts) < 2:
        return None
    grid = _grid(full, cuts)
    filled = [c for row in grid for c in row if c]
    if sorted(len(c.split()) for c in filled)[len(filled) // 2] > 4 or _running_text(full, cuts):
        return None  # long phrases side by side, or prose wrapped in each column: text columns
    if sum(1 for row in grid if sum(1 for c in row if c) >= 3) < 0.75 * len(grid):
        return None
    if loose or wrapped:
        grid = _grid(rows, cuts, loose, wrapped)
    grid = _header_columns(_trimmed(grid))
    if len(grid) < 3 or _filled(grid) < 0.5 or not _not_a_list(grid):
        return None  # scattered labels (a chart's, a diagram's), not rows of a table
    bbox = (
        min(p[0].x0 for r in rows for p in r.phrases),
        rows[0].y0,
        max(p[-1].x1 for r in rows for p in r.phrases),
        rows[-1].y1,
    )
    return Found(tuple(map(tuple, grid)), bbox)
