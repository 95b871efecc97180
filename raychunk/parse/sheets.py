"""Excel workbooks (.xlsx read from the package's XML, legacy .xls by xlrd, and the Excel 2003 XML
spreadsheets that report servers and exports save under an .xls name) and OpenDocument spreadsheets
(.ods, LibreOffice Calc's, from their ``content.xml``): each sheet a page under a
level-1 heading with its name, its cells laid out as the sheet lays them out.

- A sheet's non-empty cells fall into regions: cells that touch (a side or a corner) belong
  together, so tables stacked with a blank row between them, or side by side with a blank column,
  are apart. Regions are read top to bottom, then left to right, a title over a table and a note
  under it (a blank row or two away) with that table.
- In a region, rows of one cell (a merged cell counts once) before the first row of several and
  after the last are lines of text: a title above a table, a note under it. The rows between are
  a table, its first row the header (or, too sparse for one grid, lines of their cells joined by
  ``|``). A line that repeats the sheet's name is not repeated. A region is walked by its cells,
  never by its bounding box.
- A merged cell's value is repeated in the table cells it covers (``copies``).
- A cell shows what Excel shows for its value: text; a number in its shortest form (``1500``,
  ``12.5``); a date or time in ISO form where its number format is a date's; ``TRUE`` / ``FALSE``;
  an error as written (``#N/A``). A formula shows the value Excel saved with it, and where no value
  was saved (a file written by a library, not by Excel), the formula itself (``=SUM(B2:B5)``).
- Hidden sheets are read: nothing in the file is lost. Chart sheets hold no cells.
"""

from __future__ import annotations

import bisect
import datetime as dt
import io
import posixpath
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from raychunk.parse._common import BlockStream, ConversionFailed, TextAssembler, clean_text, finish, one_line
from raychunk.render import render_table, squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["ods_tables", "read_ods", "read_xls", "read_xlsx"]

_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_CELL = re.compile(r"([A-Z]{1,3})?(\d{1,7})?")
# Excel's built-in number formats that show a date or a time.
_DATE_FORMATS = frozenset({*range(14, 23), 27, 30, 36, 45, 46, 47, 50, 57})
# A format code's date or time letters, outside quoted text, escapes and [colour] / [$-409] parts.
_FORMAT_NOISE = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')
_MAX_ROWS, _MAX_COLUMNS = 1_048_576, 16_384  # Excel's sheet
_MAX_TABLE_CELLS = 4_000_000


def read_xlsx(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    return _workbook(base, title, _xlsx_sheets(data))


def read_xls(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    """A legacy (97-2003) workbook, read by xlrd; or an Excel 2003 XML spreadsheet (SpreadsheetML:
    "XML Spreadsheet 2003", which Excel opens under an .xls name)."""
    if is_spreadsheetml(data):
        from lxml import etree

        try:
            return _workbook(base, title, _spreadsheetml_sheets(data))
        except etree.XMLSyntaxError as e:
            raise ConversionFailed(f"not a well-formed Excel 2003 XML spreadsheet: {one_line(e)}") from e
    return _workbook(base, title, _xls_sheets(data))


_SS = "urn:schemas-microsoft-com:office:spreadsheet"


def is_spreadsheetml(data: bytes) -> bool:
    """The bytes are an Excel 2003 XML spreadsheet: XML whose root is SpreadsheetML's Workbook."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"<") and _SS.encode() in head and b"Workbook" in head


def _spreadsheetml_sheets(data: bytes) -> Iterator[tuple[str, dict, list]]:
    """Each ``Worksheet``'s name, cells and merged ranges: a ``Row`` or ``Cell`` with an ``Index``
    jumps to it, ``MergeAcross``/``MergeDown`` span cells, a ``Data`` of type Number, DateTime or
    Boolean shows as Excel shows it."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)
    ss = "{" + _SS + "}"
    for sheet in root.iter(f"{ss}Worksheet"):
        cells: dict[tuple[int, int], str] = {}
        merges: list[tuple[int, int, int, int]] = []
        r = -1
        for row in sheet.iterfind(f"{ss}Table/{ss}Row"):
            r = _int(row.get(f"{ss}Index"), r + 2) - 1
            if not 0 <= r < _MAX_ROWS:
                break
            c = -1
            for cell in row.iterfind(f"{ss}Cell"):
                c = _int(cell.get(f"{ss}Index"), c + 2) - 1
                if not 0 <= c < _MAX_COLUMNS:
                    break
                data_el = cell.find(f"{ss}Data")
                text = _spreadsheetml_text(data_el) if data_el is not None else ""
                if text:
                    cells[(r, c)] = text
                across = max(0, _int(cell.get(f"{ss}MergeAcross"), 0))
                down = max(0, _int(cell.get(f"{ss}MergeDown"), 0))
                if across or down:
                    merges.append((r, c, min(r + down, _MAX_ROWS - 1), min(c + across, _MAX_COLUMNS - 1)))
                c += across
        yield sheet.get(f"{ss}Name") or "", cells, merges


def _element_text(el) -> str:
    """The element's text, its children's and their tails': an entity reference (left unresolved:
    nothing outside the file is read) gives none."""
    parts = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            parts.append(_element_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _spreadsheetml_text(data_el) -> str:
    ss = "{" + _SS + "}"
    raw = squash(clean_text(_element_text(data_el)))
    kind = data_el.get(f"{ss}Type")
    if kind == "Number":
        try:
            return _number(float(raw))
        except ValueError:
            return raw
    if kind == "Boolean":
        return {"1": "TRUE", "0": "FALSE"}.get(raw, raw)
    if kind == "DateTime":
        try:
            moment = dt.datetime.fromisoformat(raw[:19])
        except ValueError:
            return raw
        if moment.date() == dt.date(1899, 12, 31):
            return moment.time().isoformat()
        return moment.date().isoformat() if moment.time() == dt.time(0) else moment.isoformat(sep=" ")
    return raw


def _workbook(base: Document, title: str, sheets: Iterator[tuple[str, dict, list]]) -> ParsedDocument:
    asm = TextAssembler()
    stream = BlockStream()
    page = 0
    for page, (name, cells, merges) in enumerate(sheets, 1):
        _sheet_blocks(stream, asm, squash(clean_text(name)), page, cells, merges)
    changes: dict = {"pages": page}
    if title:
        changes["title"] = title[:200]
    return finish(base, asm.text, stream.blocks, **changes)


def _xlsx_sheets(data: bytes) -> Iterator[tuple[str, dict, list]]:
    """Each worksheet's name, cells and merged ranges, in the workbook's order."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())

        def xml(part: str):
            return etree.fromstring(zf.read(part), parser) if part in names else None

        workbook = xml("xl/workbook.xml")
        if workbook is None or workbook.tag != f"{_S}workbook":
            from raychunk.parse.office import DamagedPackage

            raise DamagedPackage(
                "it has no xl/workbook.xml" if workbook is None else "its xl/workbook.xml holds no workbook"
            )
        targets = _targets(xml("xl/_rels/workbook.xml.rels"), "xl")
        strings = _shared_strings(xml("xl/sharedStrings.xml"))
        dates = _date_styles(xml("xl/styles.xml"))
        props = workbook.find(f"{_S}workbookPr")
        epoch = (
            dt.datetime(1904, 1, 1) if props is not None and props.get("date1904") in ("1", "true") else None
        )
        for sheet in workbook.iterfind(f"{_S}sheets/{_S}sheet"):
            part = targets.get(sheet.get(f"{_R}id") or "")
            if part not in names or "chartsheet" in part:
                continue
            with zf.open(part) as f:
                cells, merges = _read_sheet(f, strings, dates, epoch)
            yield sheet.get("name") or "", cells, merges


def read_ods(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    """An OpenDocument spreadsheet (LibreOffice Calc's ``.ods``), read from its ``content.xml``."""
    return _workbook(base, title, _ods_sheets(data))


_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"


def _ods_sheets(data: bytes) -> Iterator[tuple[str, dict, list]]:
    """Each ``table:table``'s name, cells and merged ranges. A cell shows what Calc shows: the text
    of its paragraphs (its value as formatted: ``1,500.00``, ``12/06/2026``), else its value; a row
    or cell repeated (``number-rows-repeated``: how Calc stores a sheet's empty million rows) is
    that many, empty ones skipped over without a cell each; a spanned cell is a merged range."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        if "content.xml" not in zf.namelist():
            from raychunk.parse.office import DamagedPackage

            raise DamagedPackage("it has no content.xml")
        root = etree.fromstring(zf.read("content.xml"), parser)
    yield from ods_tables(root)


def ods_tables(root, *, sheets_only: bool = True) -> Iterator[tuple[str, dict, list]]:
    """Each ``table:table`` of an OpenDocument tree: its name, cells and merged ranges (of a
    spreadsheet's sheets only, or, ``sheets_only=False``, every table: a chart's data)."""
    for sheet in root.iter(f"{_TABLE}table"):
        parent = sheet.getparent()
        if sheets_only and parent is not None and parent.tag != f"{_OFFICE}spreadsheet":
            continue  # a table inside a cell or a shape: read with its sheet's text, not as a sheet
        cells: dict[tuple[int, int], str] = {}
        merges: list[tuple[int, int, int, int]] = []
        r = 0
        for row in sheet.iter(f"{_TABLE}table-row"):
            repeat = max(1, _int(row.get(f"{_TABLE}number-rows-repeated"), 1))
            found = []
            c = 0
            for cell in row:
                if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
                    continue
                times = max(1, _int(cell.get(f"{_TABLE}number-columns-repeated"), 1))
                text = _ods_text(cell) if cell.tag == f"{_TABLE}table-cell" else ""
                if text:
                    for k in range(min(times, _MAX_COLUMNS - c)):
                        found.append((c + k, text))
                    across = max(1, _int(cell.get(f"{_TABLE}number-columns-spanned"), 1))
                    down = max(1, _int(cell.get(f"{_TABLE}number-rows-spanned"), 1))
                    if across > 1 or down > 1:
                        merges.append((r, c, min(r + down, _MAX_ROWS) - 1, min(c + across, _MAX_COLUMNS) - 1))
                c += times
                if c >= _MAX_COLUMNS:
                    break
            if found:
                for k in range(min(repeat, _MAX_ROWS - r, 1_000)):  # a repeated row of values: each
                    for col, text in found:
                        cells[(r + k, col)] = text
            r += repeat
            if r >= _MAX_ROWS:
                break
        yield sheet.get(f"{_TABLE}name") or "", cells, merges


def _ods_text(cell) -> str:
    """What Calc shows in a cell: its paragraphs' text, else its typed value."""
    paragraphs = [squash(clean_text(_element_text(p))) for p in cell.iterchildren(f"{_TEXT}p", f"{_TEXT}h")]
    shown = "\n".join(p for p in paragraphs if p)
    if shown:
        return shown
    for attribute in ("value", "date-value", "time-value", "boolean-value", "string-value"):
        value = cell.get(f"{_OFFICE}{attribute}")
        if value:
            return (
                {"true": "TRUE", "false": "FALSE"}.get(value, value)
                if attribute == "boolean-value"
                else value
            )
    return ""


def _xls_sheets(data: bytes) -> Iterator[tuple[str, dict, list]]:
    import xlrd

    try:
        book = xlrd.open_workbook(file_contents=data, formatting_info=True, on_demand=True)
    except NotImplementedError:  # formatting (and so merged cells) not readable in this file
        book = xlrd.open_workbook(file_contents=data, on_demand=True)
    for k in range(book.nsheets):
        sheet = book.sheet_by_index(k)
        cells = {}
        for r in range(min(sheet.nrows, _MAX_ROWS)):
            for c, cell in enumerate(sheet.row(r)):
                text = _xls_text(cell, book.datemode)
                if text:
                    cells[(r, c)] = text
        merges = [(r0, c0, r1 - 1, c1 - 1) for r0, r1, c0, c1 in sheet.merged_cells if r1 > r0 and c1 > c0]
        yield sheet.name, cells, merges
        book.unload_sheet(k)


def _xls_text(cell, datemode: int) -> str:
    import xlrd

    kind, value = cell.ctype, cell.value
    if kind == xlrd.XL_CELL_TEXT:
        return value
    if kind == xlrd.XL_CELL_NUMBER:
        return _number(value)
    if kind == xlrd.XL_CELL_DATE:
        return _date(value, dt.datetime(1904, 1, 1) if datemode else None)
    if kind == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if value else "FALSE"
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(value, "#ERROR")
    return ""


def _targets(rels, folder: str) -> dict[str, str]:
    """Relationship ids to the parts they name, as paths in the package."""
    out = {}
    for rel in rels.iterfind(f"{_PR}Relationship") if rels is not None else ():
        target = rel.get("Target") or ""
        if target.startswith("/"):
            out[rel.get("Id") or ""] = target.lstrip("/")
        else:
            out[rel.get("Id") or ""] = posixpath.normpath(posixpath.join(folder, target))
    return out


def _shared_strings(root) -> list[str]:
    """The workbook's string table: each item's text runs, phonetic guides left out."""
    if root is None:
        return []
    return [
        "".join(t.text or "" for t in si.iter(f"{_S}t") if t.getparent().tag != f"{_S}rPh") for si in root
    ]


def _date_styles(root) -> frozenset[int]:
    """The cell styles (indexes into ``cellXfs``) whose number format shows a date or a time."""
    if root is None:
        return frozenset()
    custom = {}
    for fmt in root.iterfind(f"{_S}numFmts/{_S}numFmt"):
        code = _FORMAT_NOISE.sub("", (fmt.get("formatCode") or "").lower())
        custom[_int(fmt.get("numFmtId"))] = any(c in code for c in "ymdhs") and "general" not in code
    out = set()
    for k, xf in enumerate(root.iterfind(f"{_S}cellXfs/{_S}xf")):
        fid = _int(xf.get("numFmtId"))
        if custom.get(fid, fid in _DATE_FORMATS):
            out.add(k)
    return frozenset(out)


def _int(value, default: int = -1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _read_sheet(
    f, strings, dates, epoch
) -> tuple[dict[tuple[int, int], str], list[tuple[int, int, int, int]]]:
    """The sheet's non-empty cells by ``(row, column)`` (0-based), and its merged ranges, streamed."""
    from lxml import etree

    cells: dict[tuple[int, int], str] = {}
    merges = []
    row = col = -1
    events = etree.iterparse(f, events=("start", "end"), resolve_entities=False, no_network=True)
    for event, el in events:
        tag = el.tag
        if event == "start":
            if tag == f"{_S}row":
                row = _int(el.get("r"), row + 2) - 1  # rows without a number follow the one before
                col = -1
            continue
        if tag == f"{_S}c":
            r, c = _position(el.get("r"), row, col + 1)
            col = c
            text = _cell_text(el, strings, dates, epoch)
            if text and 0 <= r < _MAX_ROWS and 0 <= c < _MAX_COLUMNS:
                cells[(r, c)] = text
            el.clear()
        elif tag == f"{_S}row":
            el.clear()
        elif tag == f"{_S}mergeCell":
            found = _range(el.get("ref") or "")
            if found is not None:
                merges.append(found)
    return cells, merges


def _position(ref: str | None, row: int, col: int) -> tuple[int, int]:
    """A cell's ``(row, column)`` from its reference (``B7``); where it has none, the next in its row."""
    m = _CELL.fullmatch(ref or "")
    if not m:
        return row, col
    letters, digits = m.groups()
    if letters:
        col = 0
        for ch in letters:
            col = col * 26 + ord(ch) - 64
        col -= 1
    return (int(digits) - 1 if digits else row), col


def _range(ref: str) -> tuple[int, int, int, int] | None:
    """``(top, left, bottom, right)`` of a merged range ``A1:C2``, inclusive; None if unreadable."""
    first, _, last = ref.partition(":")
    if not (_CELL.fullmatch(first) and _CELL.fullmatch(last)):
        return None
    (r0, c0), (r1, c1) = _position(first, -1, -1), _position(last, -1, -1)
    if min(r0, c0, r1, c1) < 0 or r1 < r0 or c1 < c0 or r1 >= _MAX_ROWS or c1 >= _MAX_COLUMNS:
        return None
    return r0, c0, r1, c1


def _cell_text(c, strings: list[str], dates: frozenset[int], epoch) -> str:
    kind = c.get("t") or "n"
    value = c.find(f"{_S}v")
    raw = value.text if value is not None else None
    if kind == "inlineStr":
        box = c.find(f"{_S}is")
        return "".join(t.text or "" for t in box.iter(f"{_S}t")) if box is not None else ""
    if raw is None:
        formula = c.find(f"{_S}f")
        return f"={formula.text}" if formula is not None and formula.text else ""
    if kind == "s":
        k = _int(raw)
        return strings[k] if 0 <= k < len(strings) else ""
    if kind == "b":
        return "TRUE" if raw.strip() in ("1", "true") else "FALSE"
    if kind in ("str", "e", "d"):
        return raw
    try:
        number = float(raw)
    except ValueError:
        return raw
    if _int(c.get("s"), 0) in dates:
        shown = _date(number, epoch)
        if shown:
            return shown
    return _number(number)


def _number(x: float) -> str:
    """A number as Excel's General format shows it, short: ``1500``, ``12.5``, ``0.07``."""
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(round(x, 10)) if abs(x) >= 1e-5 else repr(x)


def _date(serial: float, epoch) -> str:
    """An Excel date serial as ISO text (a date, a time of day, or both); '' when out of range."""
    if not 0 <= serial < 2_958_466:  # 9999-12-31
        return ""
    if epoch is None:
        epoch = dt.datetime(1899, 12, 31)
        if serial >= 60:  # Excel counts 1900-02-29, a day that never was
            serial -= 1
    moment = epoch + dt.timedelta(days=serial)
    moment = moment.replace(microsecond=0) + dt.timedelta(seconds=round(moment.microsecond / 1e6))
    if serial < 1:
        return moment.time().isoformat()
    if moment.time() == dt.time(0):
        return moment.date().isoformat()
    return moment.isoformat(sep=" ")


def _sheet_blocks(stream: BlockStream, asm: TextAssembler, name: str, page: int, cells, merges) -> None:
    """A sheet's heading, then its regions: lines of text and tables."""
    origin: dict[tuple[int, int], tuple[int, int]] = {}
    for r0, c0, r1, c1 in merges:
        if (r0, c0) not in cells or (r1 - r0 + 1) * (c1 - c0 + 1) > 100_000:
            continue
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                if (r, c) != (r0, c0) and (r, c) not in cells:
                    origin[(r, c)] = (r0, c0)
    shown = dict(cells)
    for at, source in origin.items():
        shown[at] = cells[source]
    regions = _regions(shown)
    if not regions:
        return
    by_row: dict[int, list[int]] = {}
    for r, c in sorted(shown):
        by_row.setdefault(r, []).append(c)

    def row_cells(r: int, left: int, right: int) -> list[tuple[int, str]]:
        cols = by_row.get(r, ())
        return [
            (c, shown[(r, c)])
            for c in cols[bisect.bisect_left(cols, left) : bisect.bisect_right(cols, right)]
        ]

    stream.leave(1)
    if name:
        start, end = asm.append(name)
        stream.heading(name, 1, start, end, pages=(page,))
    for unit in _reading_order(regions, row_cells, origin):
        for top, left, bottom, right in unit:
            rows = [row_cells(r, left, right) for r in range(top, bottom + 1)]
            singles = _single_rows(rows, top, origin)
            first = next((k for k, one in enumerate(singles) if not one), len(rows))
            last = max((k for k, one in enumerate(singles) if not one), default=-1)
            for k in range(first):
                _line(stream, asm, rows[k], name, page)
            if last >= first:
                _table(stream, asm, rows[first : last + 1], top + first, origin, page)
            for k in range(max(last + 1, first), len(rows)):
                _line(stream, asm, rows[k], name, page)


def _single_rows(rows, top: int, origin) -> list[bool]:
    """Whether each row holds one cell (a merged cell counts once)."""
    return [len({origin.get((top + k, c), (top + k, c)) for c, _ in row}) <= 1 for k, row in enumerate(rows)]


def _reading_order(regions, row_cells, origin) -> list[list[tuple[int, int, int, int]]]:
    """Regions grouped into what a reader takes in one go, in reading order: a region of lines
    only (a title, a note) goes with the table it stands over or under (starting in the table's
    columns, a blank row or two away), so that a table to the right of another, level with it,
    comes after the whole of the left one, title and note included."""
    tables, lines = [], []
    for box in regions:
        top, left, bottom, right = box
        rows = [row_cells(r, left, right) for r in range(top, bottom + 1)]
        (lines if all(_single_rows(rows, top, origin)) else tables).append(box)
    units = {box: [box] for box in tables}
    for line in lines:
        near = [
            t
            for t in tables
            if t[1] <= line[1] <= t[3] and (0 < t[0] - line[2] <= 3 or 0 < line[0] - t[2] <= 3)
        ]
        if near:
            # the nearest; between a table above and one below as near, the one below: a title
            units[
                min(near, key=lambda t: (min(abs(t[0] - line[2]), abs(line[0] - t[2])), t[0] < line[0]))
            ].append(line)
        else:
            units[line] = [line]
    return sorted((sorted(u) for u in units.values()), key=lambda u: (u[0][0], min(b[1] for b in u)))


def _line(stream, asm, row, sheet: str, page: int) -> None:
    if not row:
        return
    text = clean_text(row[0][1]).strip()
    if not text or squash(text) == sheet:
        return
    start, end = asm.append(text)
    stream.add("paragraph", text, start, end, pages=(page,))


def _table(stream, asm, rows, top: int, origin, page: int) -> None:
    used = sorted({c for row in rows for c, _ in row})
    if len(rows) * len(used) > _MAX_TABLE_CELLS:  # a region too sparse and wide to be one table: its rows
        for row in rows:
            _line(stream, asm, [(0, " | ".join(text for _, text in row))], "", page)
        return
    at = {c: j for j, c in enumerate(used)}
    grid = [[""] * len(used) for _ in rows]
    copies = set()
    for i, row in enumerate(rows):
        for c, text in row:
            grid[i][at[c]] = squash(clean_text(text))
            if (top + i, c) in origin:
                copies.add((i, at[c]))
    cols = [j for j in range(len(used)) if any(line[j] for line in grid)]
    kept_at = {j: k for k, j in enumerate(cols)}
    grid_t = tuple(tuple(line[j] for j in cols) for line in grid)
    kept = tuple(sorted((i, kept_at[j]) for i, j in copies if j in kept_at and grid_t[i][kept_at[j]]))
    header_rows = 1 if len(grid_t) > 1 else 0
    text = render_table(grid_t, header_rows)
    start, end = asm.append(text)
    kw: dict = {"rows": grid_t, "header_rows": header_rows, "pages": (page,)}
    if kept:
        kw["copies"] = kept
    stream.add("table", text, start, end, **kw)


def _regions(shown: dict[tuple[int, int], str]) -> list[tuple[int, int, int, int]]:
    """Bounding boxes ``(top, left, bottom, right)`` of the groups of cells that touch (a side or a
    corner), boxes that overlap merged; top to bottom, then left to right."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for at in shown:
        parent[at] = at
    for r, c in shown:
        for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
            other = (r + dr, c + dc)
            if other in parent:
                a, b = find((r, c)), find(other)
                if a != b:
                    parent[a] = b
    boxes: dict[tuple[int, int], list[int]] = {}
    for r, c in shown:
        box = boxes.setdefault(find((r, c)), [r, c, r, c])
        box[0], box[1], box[2], box[3] = min(box[0], r), min(box[1], c), max(box[2], r), max(box[3], c)
    merged = [tuple(b) for b in boxes.values()]
    changed = len(merged) <= 2_000  # thousands of lone cells: no table to mend, and no quadratic pass
    while changed:  # a box inside or across another (a cell in a table's gap) joins it
        changed = False
        merged.sort()
        out: list[tuple[int, int, int, int]] = []
        for box in merged:
            for k, other in enumerate(out):
                if box[0] <= other[2] and other[0] <= box[2] and box[1] <= other[3] and other[1] <= box[3]:
                    out[k] = (
                        min(box[0], other[0]),
                        min(box[1], other[1]),
                        max(box[2], other[2]),
                        max(box[3], other[3]),
                    )
                    changed = True
                    break
            else:
                out.append(box)
        merged = out
    return sorted(merged)
