"""OpenDocument presentations (LibreOffice Impress's ``.odp``), read from the package's
``content.xml`` by the rules of the PowerPoint reader (``slides.deck_document``): each slide a page,
its title frame (``presentation:class="title"``) a level-1 heading, its other shapes in reading
order (top to bottom, then left to right; a group's shapes where they sit), then its speaker notes.

- A paragraph in a list is a list item at its depth, numbered as the list's style numbers that
  level (``1.``, ``a)``, ``iv.``; counting from an item's ``start-value``), else bulleted; other text
  is a paragraph. A line break in a paragraph stays one.
- A table keeps its rows, its first row a header; a spanned cell's text is repeated in the cells
  it covers (``copies``).
- An embedded spreadsheet is its sheets' tables, an embedded chart its title and data table, where
  they sit; a picture gives its title and description (alt text); the date, footer and slide
  number give no text.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from raychunk.parse._common import clean_text, roman
from raychunk.parse.slides import deck_document, table_block
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["read_odp"]

_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_PRES = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"
_SHAPES = {
    f"{_DRAW}{n}" for n in ("frame", "custom-shape", "rect", "ellipse", "text-box", "polygon", "caption")
}
_CHART = "{urn:oasis:names:tc:opendocument:xmlns:chart:1.0}"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_MAX_OBJECTS, _OBJECT_BYTES = 256, 16 << 20
_CHROME = {"date-time", "footer", "page-number", "header", "page"}
_LENGTH = re.compile(r"(-?\d+(?:\.\d+)?)\s*(cm|mm|in|pt|pc|px)?")
_TO_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96, None: 1.0}


def read_odp(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        if "content.xml" not in names:
            from raychunk.parse.office import DamagedPackage

            raise DamagedPackage("it has no content.xml")
        root = etree.fromstring(zf.read("content.xml"), parser)
        styles = etree.fromstring(zf.read("styles.xml"), parser) if "styles.xml" in names else None
        # embedded objects (a spreadsheet, a chart): their own content.xml, read where they sit
        objects = {
            n[: -len("/content.xml")]: etree.fromstring(zf.read(n), parser)
            for n in names[: _MAX_OBJECTS * 20]
            if n.endswith("/content.xml") and n.count("/") == 1 and zf.getinfo(n).file_size < _OBJECT_BYTES
        }
    lists = _list_styles(root) | (_list_styles(styles) if styles is not None else {})
    pages = root.iter(f"{_DRAW}page")
    return deck_document(base, title, (_slide(page, lists, objects) for page in pages))


def _slide(page, lists: dict, objects: dict) -> Iterator[tuple[str, str, dict]]:
    shapes = list(_placed(page))
    title = next((s for _, _, s in shapes if s.get(f"{_PRES}class") == "title"), None)
    if title is not None and (text := squash(" ".join(_text(p) for p in title.iter(f"{_TEXT}p")))):
        yield "heading", text, {}
    for _, _, shape in sorted(shapes, key=lambda x: (x[0], x[1])):
        if shape is title or shape.get(f"{_PRES}class") in _CHROME:
            continue
        yield from _shape(shape, lists, objects)
    notes = page.find(f"{_PRES}notes")
    if notes is not None:
        for frame in notes.iter(f"{_DRAW}frame"):
            if frame.get(f"{_PRES}class") == "notes":
                for box in frame.iter(f"{_DRAW}text-box"):
                    yield from _paragraphs(box, lists)


def _placed(container, dx: float = 0.0, dy: float = 0.0) -> Iterator[tuple[float, float, object]]:
    """``(top, left, shape)`` of the shapes on a slide, a group's in their own places."""
    for el in container:
        if el.tag == f"{_DRAW}g":
            yield from _placed(el, dx, dy)
        elif el.tag in _SHAPES:
            yield _cm(el.get(f"{_SVG}y")) + dy, _cm(el.get(f"{_SVG}x")) + dx, el


def _cm(length: str | None) -> float:
    m = _LENGTH.match(length or "")
    return float(m[1]) * _TO_CM.get(m[2], 1.0) if m else 0.0


def _shape(shape, lists: dict, objects: dict) -> Iterator[tuple[str, str, dict]]:
    table = shape.find(f"{_TABLE}table")
    if table is not None:
        yield from _table(table)
        return
    embedded = shape.find(f"{_DRAW}object")
    if embedded is not None:
        href = (embedded.get(_XLINK_HREF) or "").removeprefix("./").rstrip("/")
        if href in objects:
            yield from _object(objects[href])
    box = shape.find(f"{_DRAW}text-box")
    yield from _paragraphs(box if box is not None else shape, lists)
    if shape.find(f"{_DRAW}image") is not None or shape.find(f"{_DRAW}object") is not None:
        for tag in ("title", "desc"):
            alt = shape.find(f"{_SVG}{tag}")
            if alt is not None and (text := squash(clean_text(alt.text or ""))):
                yield "paragraph", text, {}


def _paragraphs(container, lists: dict, depth: int = 0, style: str = "") -> Iterator[tuple[str, str, dict]]:
    """The paragraphs and list items of a text box (or a shape's own text), in order."""
    for el in container:
        if el.tag in (f"{_TEXT}p", f"{_TEXT}h"):
            text = _text(el)
            if text:
                yield "paragraph", text, {}
        elif el.tag == f"{_TEXT}list":
            yield from _list(el, lists, depth, el.get(f"{_TEXT}style-name") or style)


def _list(el, lists: dict, depth: int, style: str) -> Iterator[tuple[str, str, dict]]:
    kind, fmt, prefix, suffix = lists.get(style, {}).get(depth + 1, ("bullet", "", "", ""))
    n = 0
    for item in el:
        if item.tag not in (f"{_TEXT}list-item", f"{_TEXT}list-header"):
            continue
        start = item.get(f"{_TEXT}start-value")
        n = int(start) if start and start.isdigit() else n + 1
        for child in item:
            if child.tag in (f"{_TEXT}p", f"{_TEXT}h"):
                text = _text(child)
                if text:
                    marker = prefix + _number(fmt, n) + suffix if kind == "number" else ""
                    yield "list_item", text, {"level": depth, "marker": marker}
            elif child.tag == f"{_TEXT}list":
                yield from _list(child, lists, depth + 1, child.get(f"{_TEXT}style-name") or style)


def _number(fmt: str, n: int) -> str:
    if fmt in ("a", "A"):
        num, k = "", n
        while k > 0:
            k, r = divmod(k - 1, 26)
            num = chr(ord("a") + r) + num
        return num if fmt == "a" else num.upper()
    if fmt in ("i", "I"):
        return roman(n) if fmt == "i" else roman(n).upper()
    return str(n)


def _list_styles(root) -> dict[str, dict[int, tuple[str, str, str, str]]]:
    """Each list style's levels: ``(kind, num-format, num-prefix, num-suffix)``, kind number or bullet."""
    out: dict[str, dict[int, tuple[str, str, str, str]]] = {}
    for style in root.iter(f"{_TEXT}list-style"):
        levels = {}
        for level in style:
            number = level.tag == f"{_TEXT}list-level-style-number"
            try:
                k = int(level.get(f"{_TEXT}level") or 0)
            except ValueError:
                continue
            levels[k] = (
                "number" if number and level.get(f"{_STYLE}num-format") else "bullet",
                level.get(f"{_STYLE}num-format") or "",
                level.get(f"{_STYLE}num-prefix") or "",
                level.get(f"{_STYLE}num-suffix") or "",
            )
        name = style.get(f"{_STYLE}name")
        if name:
            out[name] = levels
    return out


def _object(root) -> Iterator[tuple[str, str, dict]]:
    """An embedded spreadsheet's sheets, or a chart's title and data, each a table."""
    from raychunk.parse.sheets import ods_tables

    chart = root.find(f".//{_CHART}chart")
    if chart is not None:
        title = chart.find(f"{_CHART}title")
        if title is not None and (text := squash(" ".join(_text(p) for p in title.iter(f"{_TEXT}p")))):
            yield "paragraph", text, {}
    for _, cells, _ in ods_tables(root, sheets_only=chart is None):
        if not cells:
            continue
        rows = max(r for r, _ in cells) + 1
        cols = max(c for _, c in cells) + 1
        if rows * cols > 1_000_000:
            continue
        grid = [[cells.get((r, c), "") for c in range(cols)] for r in range(rows)]
        yield from table_block(grid, [], header=True)


def _table(table) -> Iterator[tuple[str, str, dict]]:
    grid: list[list[str]] = []
    copies: list[tuple[int, int]] = []
    spans: dict[tuple[int, int], str] = {}
    for row in table.iter(f"{_TABLE}table-row"):
        i, cells = len(grid), []
        for cell in row:
            if cell.tag == f"{_TABLE}covered-table-cell":
                j = len(cells)
                cells.append(spans.get((i, j), ""))
                if (i, j) in spans:
                    copies.append((i, j))
            elif cell.tag == f"{_TABLE}table-cell":
                j = len(cells)
                text = squash(" ".join(_text(p) for p in cell.iter(f"{_TEXT}p")))
                cells.append(text)
                across = _count(cell.get(f"{_TABLE}number-columns-spanned"))
                down = _count(cell.get(f"{_TABLE}number-rows-spanned"))
                for di in range(down):
                    for dj in range(across):
                        if di or dj:
                            spans[(i + di, j + dj)] = text
        grid.append(cells)
        if len(grid) >= 10_000:
            break
    width = max((len(r) for r in grid), default=0)
    yield from table_block([r + [""] * (width - len(r)) for r in grid], copies, header=True)


def _count(value: str | None) -> int:
    return min(int(value), 1000) if value and value.isdigit() and int(value) > 0 else 1


def _text(el) -> str:
    """A paragraph's text as it shows: spaces (``text:s``), tabs and line breaks where they stand."""
    parts: list[str] = []

    def walk(node) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == f"{_TEXT}s":
                parts.append(" " * _count(child.get(f"{_TEXT}c")))
            elif tag == f"{_TEXT}tab":
                parts.append("\t")
            elif tag == f"{_TEXT}line-break":
                parts.append("\n")
            elif tag.startswith(_TEXT) and tag not in (f"{_TEXT}note", f"{_TEXT}tracked-changes"):
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return clean_text("".join(parts)).strip()
