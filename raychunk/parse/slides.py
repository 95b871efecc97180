"""PowerPoint decks (.pptx), read with python-pptx as the deck says, not guessed from the words;
PowerPoint 97-2003 decks (.ppt) through ppt2pptx's conversion to one (pure Python: no LibreOffice).

Each slide is a page. Its title placeholder is a level-1 heading, wherever it sits on the slide; then
its other shapes in reading order (top to bottom, then left to right; a group's shapes where the
group places them); then its speaker notes, a paragraph each. A slide without a title sits under no
heading: its text is not part of the slide before it.

- A paragraph is a list item when its bullet says so: its own ``a:buChar`` / ``a:buAutoNum``, or the
  bullet its placeholder inherits from the slide layout and the master (body text is bulleted there
  unless a level says ``a:buNone``). Auto-numbered items carry their number as the marker, counted
  per level within a text frame from ``startAt``. Other text is a paragraph: a short line in a text
  box is not taken for a heading.
- A table keeps its rows; a merged cell's text is repeated in the cells it covers (``copies``), and
  its first row is a header row unless the table's "Header Row" option (``firstRow``) is turned off.
- A chart is its title and its data as a table: categories down, one column a series.
- Footers, dates, slide numbers and shapes placed off the slide give no text; pictures give none.
- A .ppt is read as the .pptx ppt2pptx makes of it, with what its own records say and the
  conversion does not carry (``ppt_records.py``): the shape holding the text the deck records as a
  slide's title is that slide's title (ppt2pptx writes placeholders as plain text boxes), and a
  table (which it writes as a text box per cell) is read as a table, in its place.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from raychunk.parse._common import (
    TYPEWRITER_FACE,
    BlockStream,
    ConversionFailed,
    TextAssembler,
    add_reason,
    clean_text,
    converted_in_folder,
    finish,
    one_line,
    roman,
    with_reason,
)
from raychunk.parse.ppt_records import LegacySlide, LegacyTable, read_slides
from raychunk.render import render_table, squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["deck_document", "read_ppt", "read_pptx", "table_block"]

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_BULLETS = {f"{_A}buNone": "", f"{_A}buChar": "-", f"{_A}buBlip": "-", f"{_A}buAutoNum": "auto"}
_CHROME = {"dt", "ftr", "sldNum", "hdr"}
_TITLES = {"title", "ctrTitle"}
# The master's text style a placeholder of each type starts from (a body, object or untyped one, a
# subtitle: its body style, bulleted by default); a shape that is no placeholder starts from
# otherStyle.
_TITLE_STYLE, _BODY_STYLE, _OTHER_STYLE = f"{_P}titleStyle", f"{_P}bodyStyle", f"{_P}otherStyle"


def read_pptx(
    data: bytes, base: Document, title: str = "", *, legacy: list[LegacySlide] | None = None
) -> ParsedDocument:
    """``legacy``: what a .ppt's own records say of each slide (its title, its tables), which the
    conversion to this .pptx does not carry."""
    import pptx

    deck = pptx.Presentation(io.BytesIO(data))
    unread: list[int] = []
    read = list(_slides(deck, unread))
    faces = _typewriter_share(read) < 0.9  # a deck set in Courier throughout marks no code by it
    slides = (
        _slide_blocks(
            slide,
            deck.slide_width,
            deck.slide_height,
            legacy[n] if legacy is not None and n < len(legacy) else None,
            faces=faces,
        )
        for n, slide in enumerate(read)
    )
    parsed = deck_document(base, title, slides)
    if unread:
        numbers = ", ".join(str(n) for n in unread[:10]) + (", ..." if len(unread) > 10 else "")
        note = f"slides not read: {numbers}: the package does not give them a slide's type"
        parsed = with_reason(parsed, note) if parsed.document.status == "empty" else add_reason(parsed, note)
    return parsed


def _slides(deck, unread: list[int]):
    """The deck's slides in order; a slide whose part the package's content types make no slide (a
    damaged ``[Content_Types].xml``) is left out, its number in ``unread``."""
    for n, sld_id in enumerate(deck.slides._sldIdLst.sldId_lst, 1):
        part = deck.part.related_part(sld_id.rId)
        if hasattr(part, "slide"):
            yield part.slide
        else:
            unread.append(n)


def deck_document(
    base: Document, title: str, slides: Iterable[Iterable[tuple[str, str, dict]]]
) -> ParsedDocument:
    """A deck's parse from each slide's ``(kind, text, block fields)``, in order: a slide a page, its
    title (a ``heading``) a level-1 heading over the rest of it, a page break before each slide
    that follows content."""
    asm = TextAssembler()
    stream = BlockStream()
    end = 0
    pending = 0  # slides begun since the last block: their breaks go out once content follows
    n = 0
    for n, blocks in enumerate(slides, 1):
        if stream.blocks:
            pending += 1
        stream.leave(1)
        for kind, text, kw in blocks:
            for opens in range(n - pending + 1, n + 1):
                stream.add("page_break", "", end, end, pages=(opens,))
            pending = 0
            start, end = asm.append(text)
            if kind == "heading":
                stream.heading(text, 1, start, end, pages=(n,))
            else:
                stream.add(kind, text, start, end, pages=(n,), **kw)
    changes: dict = {"pages": n}
    if title:
        changes["title"] = title[:200]
    return finish(base, asm.text, stream.blocks, **changes)


def _slide_blocks(
    slide, width, height, facts: LegacySlide | None = None, *, faces: bool = True
) -> Iterator[tuple[str, str, dict]]:
    """``(kind, text, block fields)`` of one slide: its title, its shapes in reading order, its notes."""
    title = next((x for x in slide.shapes if _placeholder_type(x) in _TITLES), None)
    if title is None and facts is not None and facts.title:
        title = next((x for x in slide.shapes if _shape_text(x) == facts.title), None)
    if title is not None and (not title.has_text_frame or _bulleted(title)):
        title = None  # a title placeholder holding a list is body text, read where it sits
    if title is not None:
        text = _shape_text(title)
        if text:
            yield "heading", text, {}
    skip = title._element if title is not None else None
    placed: list[tuple[int, int, object]] = list(_placed(slide.shapes, None))
    if facts is not None and facts.tables:
        placed = _legacy_tables(placed, facts.tables)
    for top, left, shape in sorted(placed, key=lambda x: (x[0], x[1])):
        if isinstance(shape, LegacyTable):
            yield from _legacy_table(shape)
            continue
        if shape._element is skip or _placeholder_type(shape) in _CHROME or top < 0 or left < 0:
            continue
        if width and height and (top >= height or left >= width):
            continue
        if getattr(shape, "has_table", False):
            yield from _table(shape.table, legacy=facts is not None)
        elif getattr(shape, "has_chart", False):
            yield from _chart(shape.chart)
        elif getattr(shape, "has_text_frame", False):
            yield from _text_frame(shape, slide, faces=faces)
        else:
            yield from _alt_text(shape)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        for p in frame.paragraphs if frame is not None else ():
            text = clean_text(p.text.replace("\v", "\n")).strip()
            if text:
                yield "paragraph", text, {}


def _legacy_tables(placed: list, tables: tuple[LegacyTable, ...]) -> list:
    """The shapes with each legacy table's cells (text boxes inside its box, holding a cell's text)
    in the table's place: the conversion wrote the cells as text boxes."""
    slack = 3175  # EMUs: two of the .ppt's master units (576 an inch)
    out, taken = [], set()
    for table in tables:
        left, top, right, bottom = table.box
        texts = {cell for row in table.rows for cell in row}
        inside = [
            i
            for i, (t, x, shape) in enumerate(placed)
            if i not in taken
            and left - slack <= x <= right + slack
            and top - slack <= t <= bottom + slack
            and getattr(shape, "has_text_frame", False)
            and _shape_text(shape) in texts
        ]
        if inside:
            taken.update(inside)
            out.append((top, left, table))
    return [p for i, p in enumerate(placed) if i not in taken] + out


def _legacy_table(table: LegacyTable) -> Iterator[tuple[str, str, dict]]:
    """A .ppt's table, its first row a header, as PowerPoint styles a new table."""
    return table_block([list(r) for r in table.rows], table.copies, header=True)


def _shape_text(shape) -> str:
    if not getattr(shape, "has_text_frame", False):
        return ""
    return squash(" ".join(clean_text(p.text.replace("\v", " ")) for p in shape.text_frame.paragraphs))


def read_ppt(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    """A PowerPoint 97-2003 deck, converted into a .pptx by ppt2pptx (in this process, from a private
    temporary folder) and read as one, each slide's title taken from the deck's slide list."""
    try:
        from ppt2pptx import convert
        from ppt2pptx.errors import EncryptedPresentationError, Ppt2PptxError, UnsupportedPptVersionError
    except ImportError as e:
        raise ImportError(f"reading .ppt files needs ppt2pptx: pip install ppt2pptx ({e})") from e
    try:
        report, converted = converted_in_folder(data, "in.ppt", "out.pptx", lambda a, b: convert(a, b).report)
    except EncryptedPresentationError as e:
        raise ConversionFailed("encrypted legacy PowerPoint deck: needs a password") from e
    except UnsupportedPptVersionError as e:
        raise ConversionFailed(f"legacy PowerPoint deck: {one_line(e)}", "unsupported") from e
    except Ppt2PptxError as e:
        raise ConversionFailed(f"not a valid legacy PowerPoint deck: {one_line(e)}") from e
    parsed = read_pptx(converted, base, title, legacy=read_slides(data))
    return add_reason(parsed, _conversion_losses(report.to_dict().get("warnings", ())))


# ppt2pptx's warnings that mean text is missing from what it wrote (the rest are drawings, media
# and metadata), in the words of the row's reason.
_TEXT_LOST = {
    "CHART_OMITTED": "chart",
    "DIAGRAM_OR_SMARTART_OMITTED": "diagram",
    "EMBEDDED_OLE_OMITTED": "embedded object",
    "LINKED_OLE_OMITTED": "linked object",
    "OLE_OBJECT_OMITTED": "embedded object",
}


def _conversion_losses(warnings) -> str:
    """``not read from ...: 1 chart, 2 embedded objects`` (an embedded object: a chart, a
    worksheet or an equation made by another program), or "" where nothing was left out."""
    lost: dict[str, int] = {}
    for w in warnings:
        what = _TEXT_LOST.get(w.get("code"))
        if what:
            count = w.get("count")
            lost[what] = lost.get(what, 0) + (count if isinstance(count, int) and count > 0 else 1)
    named = ", ".join(f"{n} {what}{'s' if n > 1 else ''}" for what, n in lost.items())
    return f"not read from the PowerPoint 97-2003 deck: {named}" if lost else ""


def _bulleted(shape) -> bool:
    """Some paragraph of the shape carries a bullet of its own or from the shape's list style."""
    styles = _level_styles(shape, None, own_only=True)
    return any(
        _bullet(p._p.pPr, styles.get((p.level or 0) + 1, ()))[0]
        for p in shape.text_frame.paragraphs
        if p.text.strip()
    )


def _alt_text(shape) -> Iterator[tuple[str, str, dict]]:
    """A picture's description (its alt text) as a paragraph, unless Office wrote it itself."""
    props = shape._element.find(f".//{_P}cNvPr")
    text = squash(clean_text(props.get("descr", ""))) if props is not None else ""
    if text and "automatically generated" not in text.lower():
        yield "paragraph", text, {}


def _placed(shapes, transform) -> Iterator[tuple[int, int, object]]:
    """``(top, left, shape)`` of every shape, a group's members in the slide's coordinates."""
    from pptx.shapes.group import GroupShape

    for shape in shapes:
        top, left = _position(shape, transform)
        if isinstance(shape, GroupShape):
            yield from _placed(shape.shapes, _group_transform(shape, transform))
        else:
            yield top, left, shape


def _position(shape, transform) -> tuple[int, int]:
    try:
        top, left = shape.top or 0, shape.left or 0
    except Exception:  # a placeholder whose layout lost its position: where the slide starts
        top, left = 0, 0
    if transform is None:
        return top, left
    (ox, oy, cx, cy, sx, sy, ex, ey) = transform
    x = ox + (left - cx) * (sx / ex if ex else 1)
    y = oy + (top - cy) * (sy / ey if ey else 1)
    return int(y), int(x)


def _group_transform(group, outer) -> tuple | None:
    """A group's child coordinates mapped onto the slide: its offset and extent, the child offset and
    extent its members are placed in (``a:xfrm`` of ``p:grpSpPr``)."""
    xfrm = group._element.find(f"{_P}grpSpPr/{_A}xfrm")
    if xfrm is None:
        return outer
    off, ext = xfrm.find(f"{_A}off"), xfrm.find(f"{_A}ext")
    choff, chext = xfrm.find(f"{_A}chOff"), xfrm.find(f"{_A}chExt")
    if None in (off, ext, choff, chext):
        return outer
    values = [int(e.get(k, "0")) for e in (off, choff, ext, chext) for k in ("x", "y")]
    ox, oy, cx, cy, sx, sy, ex, ey = values
    if outer is not None:  # a group in a group: its offset and extent are in the outer one's terms
        p, q, r, s, psx, psy, pex, pey = outer
        kx, ky = (psx / pex if pex else 1), (psy / pey if pey else 1)
        ox, oy, sx, sy = int(p + (ox - r) * kx), int(q + (oy - s) * ky), int(sx * kx), int(sy * ky)
    return ox, oy, cx, cy, sx, sy, ex, ey


def _placeholder_type(shape) -> str | None:
    """The ``type`` of the shape's ``p:ph`` ("obj" when it names none), None for no placeholder."""
    ph = shape._element.find(f".//{_P}nvPr/{_P}ph")
    if ph is None:
        return None
    return ph.get("type", "obj")


def _text_frame(shape, slide, *, faces: bool = True) -> Iterator[tuple[str, str, dict]]:
    """A text frame's paragraphs and list items; paragraphs set wholly in a typewriter face in a row
    are one code block, its lines and indentation as typed, an empty paragraph a blank line."""
    code: list[str] = []
    gap = 0
    for kind, text, kw in _frame_paragraphs(shape, slide, faces):
        if kind == "code":
            code.extend([""] * gap if code else [])
            code.append(text)
            gap = 0
            continue
        if kind == "":
            gap += 1
            continue
        if code:
            yield "code", "\n".join(code), {}
            code, gap = [], 0
        yield kind, text, kw
    if code:
        yield "code", "\n".join(code), {}


def _typewriter(p) -> bool:
    """Whether a paragraph's text is all in runs whose face is a typewriter's."""
    runs = [r for r in p._p.iterchildren(f"{_A}r") if (r.findtext(f"{_A}t") or "").strip()]
    return bool(runs) and all(map(_typewriter_run, runs))


def _typewriter_run(r) -> bool:
    latin = r.find(f"{_A}rPr/{_A}latin")
    return latin is not None and TYPEWRITER_FACE.search(latin.get("typeface", "")) is not None


def _typewriter_share(slides) -> float:
    """The share of the slides' text in runs set in a typewriter face."""
    chars = mono = 0
    for slide in slides:
        for r in slide._element.iter(f"{_A}r"):
            n = len(r.findtext(f"{_A}t") or "")
            chars += n
            mono += n if _typewriter_run(r) else 0
    return mono / chars if chars else 0.0


def _frame_paragraphs(shape, slide, faces: bool) -> Iterator[tuple[str, str, dict]]:
    styles = _level_styles(shape, slide)
    counts: dict[int, int] = {}
    for p in shape.text_frame.paragraphs:
        level = p.level or 0
        for deeper in [k for k in counts if k > level]:
            del counts[deeper]
        bullet, start_at, style = _bullet(p._p.pPr, styles.get(level + 1, ()))
        if bullet == "auto":
            counts[level] = counts.get(level, start_at - 1) + 1
        else:
            counts.pop(level, None)
        raw = clean_text(p.text.replace("\v", "\n"))
        text = raw.strip()
        if not text:
            yield "", "", {}
            continue
        if not bullet and faces and _typewriter(p):
            yield "code", raw.strip("\n").rstrip(), {}
            continue
        if not bullet:
            yield "paragraph", text, {}
            continue
        marker = _auto_marker(style, counts[level]) if bullet == "auto" else ""
        yield "list_item", text, {"level": level, "marker": marker}


def _bullet(ppr, inherited) -> tuple[str, int, str]:
    """What a paragraph's bullet is: "" (none), "-" (a character or picture) or "auto" (a number),
    with the number's ``startAt`` and style, from its own ``a:pPr`` or the first level style that
    says."""
    for source in (ppr, *inherited):
        if source is None:
            continue
        for child in source:
            kind = _BULLETS.get(child.tag)
            if kind is not None:
                return kind, int(child.get("startAt", "1") or 1), child.get("type", "arabicPeriod")
    return "", 1, ""


def _level_styles(shape, slide, own_only: bool = False) -> dict[int, tuple]:
    """For each outline level 1-9, the ``a:lvlNpPr`` elements a paragraph of this shape inherits,
    nearest first: the shape's own list style, its layout placeholder's, the master placeholder's,
    then the master's text style for its kind of shape."""
    chain = [shape._element]
    kind = _placeholder_type(shape)
    if kind is not None and not own_only:
        layout = _base(shape)
        if layout is not None:
            chain.append(layout._element)
            master = _base(layout)
            if master is not None:
                chain.append(master._element)
    try:
        styles = None if own_only else slide.slide_layout.slide_master._element.find(f"{_P}txStyles")
    except Exception:  # a layout without its master: the deck's own parts are all there is
        styles = None
    style = _TITLE_STYLE if kind in _TITLES else _OTHER_STYLE if kind is None else _BODY_STYLE
    lists = [e.find(f".//{_A}lstStyle") for e in chain]
    if styles is not None:
        lists.append(styles.find(style))
    out = {}
    for lvl in range(1, 10):
        tag = f"{_A}lvl{lvl}pPr"
        out[lvl] = tuple(
            x for x in (lst.find(tag) if lst is not None else None for lst in lists) if x is not None
        )
    return out


def _base(placeholder):
    """The placeholder this one inherits from (slide -> layout -> master); None where there is none."""
    try:
        return placeholder._base_placeholder
    except (AttributeError, KeyError, ValueError):
        return None


def _table(table, *, legacy: bool = False) -> Iterator[tuple[str, str, dict]]:
    """A table; ``legacy``: a .ppt's, which has no "Header Row" option (its first row is a header)."""
    copies: list[tuple[int, int]] = []
    grid = [[squash(clean_text(c.text.replace("\v", " "))) for c in row.cells] for row in table.rows]
    for i, row in enumerate(table.rows):
        for j, cell in enumerate(row.cells):
            if cell.is_merge_origin:
                for di in range(cell.span_height):
                    for dj in range(cell.span_width):
                        if (di or dj) and i + di < len(grid) and j + dj < len(grid[i + di]):
                            grid[i + di][j + dj] = grid[i][j]
                            copies.append((i + di, j + dj))
    return table_block(grid, copies, header=legacy or _header_row(table._tbl.tblPr))


def table_block(rows: list[list[str]], copies, *, header: bool) -> Iterator[tuple[str, str, dict]]:
    """A table block of ``rows`` (trailing empty rows dropped), its merged cells' ``copies``."""
    while rows and not any(rows[-1]):
        rows.pop()
    if not any(any(r) for r in rows):
        return
    header_rows = int(len(rows) > 1 and header)
    rows_t = tuple(tuple(r) for r in rows)
    kw = {"rows": rows_t, "header_rows": header_rows}
    kept = tuple(sorted(c for c in set(copies) if c[0] < len(rows_t)))
    if kept:
        kw["copies"] = kept
    yield "table", render_table(rows_t, header_rows), kw


def _header_row(props) -> bool:
    """The table's "Header Row" option (``firstRow``) where the deck turns it off; where it is silent
    (Google Slides and other generators never write it) the first row is taken for a header, as
    office tables conventionally start with one, and PowerPoint turns the option on for new tables."""
    return props is None or props.get("firstRow") not in ("0", "false")


def _chart(chart) -> Iterator[tuple[str, str, dict]]:
    try:
        if chart.has_title and chart.chart_title.has_text_frame:
            text = squash(chart.chart_title.text_frame.text)
            if text:
                yield "paragraph", text, {}
        plot = chart.plots[0] if len(chart.plots) else None
        if plot is None:
            return
        categories = [squash(str(c)) for c in plot.categories]
        series = [s for p in chart.plots for s in p.series]
    except Exception:  # a chart python-pptx cannot read (an exotic type, a damaged part): no data
        return
    if not series:
        return
    header = ("", *(squash(s.name or "") for s in series))
    columns = []
    for s in series:
        try:
            columns.append([_number(v) for v in s.values])
        except Exception:
            columns.append([])
    length = max([len(categories), *(len(c) for c in columns)])
    rows = [header]
    for k in range(length):
        label = categories[k] if k < len(categories) else ""
        rows.append((label, *(c[k] if k < len(c) else "" for c in columns)))
    rows_t = tuple(rows)
    yield "table", render_table(rows_t, 1), {"rows": rows_t, "header_rows": 1}


def _number(v) -> str:
    if v is None:
        return ""
    return f"{v:g}" if isinstance(v, float) else str(v)


_AUTONUM = re.compile(r"(arabic|alphaLc|alphaUc|romanLc|romanUc)(Period|ParenR|ParenBoth|Plain)")


def _auto_marker(kind: str, n: int) -> str:
    """The marker PowerPoint shows for the ``n``-th item of an ``a:buAutoNum`` of type ``kind``."""
    m = _AUTONUM.fullmatch(kind)
    style, punct = m.groups() if m else ("arabic", "Period")
    if style == "arabic":
        num = str(n)
    elif style.startswith("alpha"):
        num = ""
        k = n
        while k > 0:
            k, r = divmod(k - 1, 26)
            num = chr(ord("a") + r) + num
        num = num if style == "alphaLc" else num.upper()
    else:
        num = roman(n) if style == "romanLc" else roman(n).upper()
    return {"Period": f"{num}.", "ParenR": f"{num})", "ParenBoth": f"({num})", "Plain": num}[punct]
