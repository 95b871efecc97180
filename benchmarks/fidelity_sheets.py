"""Fidelity section ``sheets``: generated Excel workbooks whose content is known exactly.

Each workbook is drawn by openpyxl with a fixed seed, as people lay sheets out: one to three sheets
with names of their own ("Q3 Billing", "Budget 2024"), now and then one of them hidden; on each, one
to three tables of a header row and two to eight data rows (text, whole numbers, numbers with up to
two decimals, dates, booleans, now and then an empty cell), at A1 or lower, stacked with blank rows
between or side by side with blank columns between, some starting at column C; a title line above a
table (a blank row between them, or none) and a source note below; a cell merged across two columns
of a data row, or a group label merged down two rows of the first column; a total row of
``=SUM(...)`` formulas. openpyxl writes no formula's value and every string inline: half the formula
rows get the value Excel caches when it saves, and half the workbooks get their strings in a shared
strings part, as Excel writes them.

The truth is what Excel shows: text as written, a number as written (``1500``, ``12.5``), a date as
``2024-03-05``, ``TRUE`` / ``FALSE``, an empty cell as ``""``, a merged cell's text in every cell it
covers; a formula's cached value, or where none is cached the formula as written (``=SUM(B2:B5)``: a
reader shows it rather than nothing). A hidden sheet is read like any other: nothing in the file is
lost. Scored (``ok / total``):

- ``sheet headings``: sheets (hidden ones too) whose name is a heading block at level 1;
- ``under their sheet``: tables (found by their first header cell), title and note lines whose block's
  heading path starts with their sheet's name;
- ``cells``, ``rows``, ``header rows``: as for the other table sections (one header row each);
- ``lines outside tables``: title and note lines that are in the document's text and in no table cell;
- ``formulas``: total-row cells that read, in the row of their label, the cached value (and the
  formula is nowhere in the document's text) or, with none cached, the formula as written;
- ``read in order``: each sheet's name, then its tables' titles, first header cells and notes, top to
  bottom and a table before the one to its right; consecutive pairs found in order in the document's text.
"""

from __future__ import annotations

import datetime
import io
import random
import re
import zipfile

from fidelity import Section, TruthTable, norm_cell, parse_and_chunk, score_tables

_WORDS = [
    "backup",
    "retention",
    "gateway",
    "storage",
    "region",
    "quota",
    "rollout",
    "billing",
    "vendor",
    "contract",
    "schedule",
    "budget",
    "audit",
    "review",
    "capacity",
    "tenant",
    "invoice",
    "archive",
    "policy",
    "network",
]
_SHEET_WORDS = ("Revenue", "Headcount", "Forecast", "Pipeline", "Inventory", "Costs", "Payroll", "Bookings")
_KINDS = ("int", "int", "float", "date", "bool", "text")
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _phrase(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(k)).capitalize()


class _Book:
    """One workbook being written, with its truth per sheet."""

    def __init__(self, rng: random.Random):
        import openpyxl

        self.rng = rng
        self.wb = openpyxl.Workbook()
        self.used: list[str] = []
        self.sheets: list[dict] = []
        self.cached: dict[tuple[int, str], str] = {}  # (sheet index, cell) -> the value Excel caches
        self.drawn: set[str] = set()  # the features drawn, to pick a seed whose fast run shows them all

    def fresh(self, k: int) -> str:
        """A text no other text of the workbook holds or is held by (any case), so ``find`` is exact."""
        while True:
            t = f"{_phrase(self.rng, k)} {self.rng.randint(100, 999)}"
            if self._take(t):
                return t

    def _take(self, t: str) -> bool:
        low = t.lower()
        if any(low in u or u in low for u in self.used):
            return False
        self.used.append(low)
        return True

    def sheet_name(self) -> str:
        rng = self.rng
        while True:
            word = rng.choice(_SHEET_WORDS)
            name = rng.choice(
                [
                    f"Q{rng.randint(1, 4)} {word}",
                    f"{word} {rng.randint(2019, 2025)}",
                    f"{word} {_phrase(rng, 1)}",
                ]
            )
            if self._take(name):
                return name

    # -- one table with its title and note -----------------------------------------------------------

    def _value(self, kind: str):
        """A cell's value as written and as Excel shows it."""
        rng = self.rng
        if kind == "int":
            v = rng.randint(1, 5000)
            return v, str(v)
        if kind == "float":
            cents = rng.randint(1, 99999)
            cents += cents % 100 == 0  # no whole number written as a float
            return cents / 100, repr(cents / 100)
        if kind == "date":
            d = datetime.date(rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28))
            return d, d.isoformat()
        if kind == "bool":
            v = rng.random() < 0.5
            return v, "TRUE" if v else "FALSE"
        text = self.fresh(rng.randint(1, 3))
        return text, text

    def unit(self) -> dict:
        """A table drawn (values as written: None for an empty or covered cell; texts as shown), its
        merges, total row, title and note; placed later."""
        rng = self.rng
        ncols, ndata = rng.randint(2, 5), rng.randint(2, 8)
        total = rng.random() < 0.35
        kinds = ["text"] + [rng.choice(_KINDS) for _ in range(ncols - 1)]
        if total and "int" not in kinds:
            kinds[1] = "int"
        self.drawn.update(kinds)
        head = [self.fresh(1) for _ in range(ncols)]
        raw = [list(head)] + [[None] * ncols for _ in range(ndata)]
        shown = [list(head)] + [[""] * ncols for _ in range(ndata)]
        for r in range(1, ndata + 1):
            for c in range(ncols):
                raw[r][c], shown[r][c] = self._value(kinds[c])
        merges = []
        if ncols >= 3 and rng.random() < 0.25:  # a remark merged across two columns of a data row
            r, c = rng.randint(1, ndata), rng.randint(1, ncols - 2)
            raw[r][c] = shown[r][c] = shown[r][c + 1] = self.fresh(2)
            raw[r][c + 1] = None
            merges.append((r, c, r, c + 1))
            self.drawn.add("merged across")
        if rng.random() < 0.25:  # a group label over two rows
            r = rng.randint(1, ndata - 1)
            raw[r + 1][0], shown[r + 1][0] = None, shown[r][0]
            merges.append((r, 0, r + 1, 0))
            self.drawn.add("merged down")
        covered = {(r, c) for r0, c0, r1, c1 in merges for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
        if ncols >= 3 and rng.random() < 0.3:
            free = [(r, c) for r in range(1, ndata + 1) for c in range(1, ncols) if (r, c) not in covered]
            r, c = rng.choice(free)
            raw[r][c], shown[r][c] = None, ""
            self.drawn.add("empty cell")
        u = {"raw": raw, "shown": shown, "merges": merges, "title": None, "note": None}
        if total:
            label = f"Total {self.fresh(1).lower()}"
            cached = rng.random() < 0.5
            self.drawn.add("cached" if cached else "uncached")
            raw.append([label] + [None] * (ncols - 1))
            shown.append([label] + [""] * (ncols - 1))
            u["total"] = (cached, [c for c in range(ncols) if kinds[c] == "int"])
        if rng.random() < 0.5:
            u["title"] = self.fresh(rng.randint(3, 6))
            u["title gap"] = rng.random() < 0.5
            self.drawn.add("title gap" if u["title gap"] else "title")
        if rng.random() < 0.3:
            u["note"] = f"Source: {self.fresh(3).lower()}."
            u["note gap"] = rng.random() < 0.5
            self.drawn.add("note")
        u["height"] = (
            len(raw) + (1 + u["title gap"] if u["title"] else 0) + (1 + u["note gap"] if u["note"] else 0)
        )
        u["width"] = ncols
        return u

    def place(self, ws, k: int, u: dict, top: int, left: int, t: dict) -> None:
        """Write a unit with its top-left corner at (top, left) of sheet ``k`` (1-based rows and columns)."""
        from openpyxl.utils import get_column_letter

        row = top
        if u["title"]:
            ws.cell(row, left, u["title"])
            row += 1 + u["title gap"]
            t["lines"].append(u["title"])
            t["order"].append(u["title"])
        raw, shown = u["raw"], u["shown"]
        if "total" in u:
            cached, cols = u["total"]
            last = len(raw) - 1
            for c in cols:
                col = get_column_letter(left + c)
                formula = f"SUM({col}{row + 1}:{col}{row + last - 1})"
                value = str(sum(x[c] for x in raw[1:last] if type(x[c]) is int))
                raw[last][c] = "=" + formula
                shown[last][c] = value if cached else "=" + formula
                if cached:
                    self.cached[(k, f"{col}{row + last}")] = value
                t["formulas"].append((raw[last][0], c, shown[last][c], formula if cached else None))
        for r, values in enumerate(raw):
            for c, v in enumerate(values):
                if v is not None:
                    ws.cell(row + r, left + c, v)
        for r0, c0, r1, c1 in u["merges"]:
            ws.merge_cells(start_row=row + r0, start_column=left + c0, end_row=row + r1, end_column=left + c1)
        t["tables"].append(TruthTable(tuple(tuple(r) for r in shown), 1))
        t["anchors"].append(shown[0][0])
        t["order"].append(shown[0][0])
        if u["note"]:
            ws.cell(row + len(raw) + u["note gap"], left, u["note"])
            t["lines"].append(u["note"])
            t["order"].append(u["note"])

    def sheet(self, k: int) -> None:
        """Sheet ``k`` (0-based): its tables in bands top to bottom, two side by side in some bands."""
        rng = self.rng
        name = self.sheet_name()
        ws = self.wb.active if k == 0 else self.wb.create_sheet()
        ws.title = name
        t = {
            "name": name,
            "hidden": False,
            "tables": [],
            "lines": [],
            "anchors": [],
            "formulas": [],
            "order": [name],
        }
        units = [self.unit() for _ in range(rng.randint(1, 3))]
        top = 1 if rng.random() < 0.5 else rng.randint(2, 4)
        left0 = 3 if rng.random() < 0.25 else 1
        if left0 > 1:
            self.drawn.add("column C")
        i = 0
        while i < len(units):
            band = units[i : i + (2 if i + 1 < len(units) and rng.random() < 0.4 else 1)]
            if len(band) > 1:
                self.drawn.add("side by side")
            left = left0
            for u in band:
                self.place(ws, k, u, top, left, t)
                left += u["width"] + rng.randint(1, 2)
            top += max(u["height"] for u in band) + rng.randint(1, 3)
            i += len(band)
        t["anchors"] += t["lines"]
        self.sheets.append(t)

    def save(self) -> bytes:
        if len(self.sheets) > 1 and self.rng.random() < 0.3:
            k = self.rng.randrange(1, len(self.sheets))  # never the first: it is the active sheet
            self.wb.worksheets[k].sheet_state = "hidden"
            self.sheets[k]["hidden"] = True
            self.drawn.add("hidden")
        shared = self.rng.random() < 0.5
        self.drawn.add("shared strings" if shared else "inline strings")
        buf = io.BytesIO()
        self.wb.save(buf)
        return _as_excel_saves(buf.getvalue(), self.cached, shared)


_CELL_VALUE = r'(<c r="{ref}"[^>]*><f>[^<]*</f>)<v\s*(?:/>|></v>)'
_INLINE = re.compile(r'<c ([^>]*?)t="inlineStr"([^>]*)><is><t(?:\s[^>]*)?>(.*?)</t></is></c>', re.S)


def _as_excel_saves(data: bytes, cached: dict[tuple[int, str], str], shared: bool) -> bytes:
    """The package openpyxl wrote, with the formula values Excel would cache and, when ``shared``, the
    strings moved to a shared strings part as Excel writes them."""
    strings: dict[str, int] = {}

    def share(m: re.Match) -> str:
        index = strings.setdefault(m.group(3), len(strings))
        return f'<c {m.group(1)}t="s"{m.group(2)}><v>{index}</v></c>'

    src = zipfile.ZipFile(io.BytesIO(data))
    parts = {n: src.read(n) for n in src.namelist()}
    for name in [n for n in parts if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)]:
        k = int(re.search(r"\d+", name.rsplit("/", 1)[1]).group()) - 1
        xml = parts[name].decode()
        for (sheet, ref), value in cached.items():
            if sheet == k:
                xml, n = re.subn(_CELL_VALUE.format(ref=ref), rf"\1<v>{value}</v>", xml)
                assert n == 1, f"no formula cell {ref} in {name}"
        if shared:
            xml = _INLINE.sub(share, xml)
        parts[name] = xml.encode()
    if shared and strings:
        items = "".join(f"<si><t>{s}</t></si>" for s in strings)
        parts["xl/sharedStrings.xml"] = (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="{_MAIN}" '
            f'count="{len(strings)}" uniqueCount="{len(strings)}">{items}</sst>'
        ).encode()
        parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
            b"</Types>",
            b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        )
        rels = "xl/_rels/workbook.xml.rels"
        parts[rels] = parts[rels].replace(
            b"</Relationships>",
            b'<Relationship Id="rIdStrings" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            b'relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
        )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in parts.items():
            zf.writestr(name, body)
    return out.getvalue()


def workbook(rng: random.Random) -> tuple[bytes, list[dict], set[str]]:
    """``(xlsx bytes, truth per sheet, features drawn)``."""
    book = _Book(rng)
    for k in range(rng.randint(1, 3)):
        book.sheet(k)
    return book.save(), book.sheets, book.drawn


def score_book(section: Section, case: str, data: bytes, sheets: list[dict]) -> None:
    parsed, _ = parse_and_chunk(data, f"{case}.xlsx")
    blocks = [b for b in parsed.blocks if b.kind != "page_break"]
    tables = [b for b in blocks if b.kind == "table"]
    text = parsed.text
    heads: dict[str, int] = {}
    for b in blocks:
        if b.kind == "heading":
            heads.setdefault(b.text, b.level)
    ok = 0
    for s in sheets:
        if heads.get(s["name"]) == 1:
            ok += 1
        else:
            hidden = " (hidden)" if s["hidden"] else ""
            section.miss(f"{case}: sheet {s['name']!r}{hidden}: heading level {heads.get(s['name'])}")
    section.add("sheet headings", "xlsx", ok, len(sheets))
    ok = total = 0
    for s in sheets:
        for x in s["anchors"]:
            total += 1
            b = next((b for b in blocks if x in b.text), None)
            if b is not None and b.heading_path[:1] == (s["name"],):
                ok += 1
            else:
                where = b.heading_path if b is not None else "not found"
                section.miss(f"{case}: {x!r} under {where!r}, want under {s['name']!r}")
    section.add("under their sheet", "xlsx", ok, total)
    score_tables(
        section,
        case,
        "xlsx",
        [t for s in sheets for t in s["tables"]],
        [(b.rows, b.header_rows) for b in tables],
    )
    cells = [norm_cell(c) for b in tables for row in b.rows for c in row]
    lines = [x for s in sheets for x in s["lines"]]
    ok = 0
    for x in lines:
        inside = any(norm_cell(x) in c for c in cells)
        if x in text and not inside:
            ok += 1
        else:
            section.miss(f"{case}: line {x!r} {'in a table cell' if inside else 'not in the text'}")
    if lines:
        section.add("lines outside tables", "xlsx", ok, len(lines))
    formulas = [f for s in sheets for f in s["formulas"]]
    ok = 0
    for label, c, want, formula in formulas:
        row = next((r for b in tables for r in b.rows if label in map(norm_cell, r)), None)
        j = list(map(norm_cell, row)).index(label) + c if row is not None else -1
        got = row[j] if row is not None and j < len(row) else None
        leaked = formula is not None and formula in text
        if got is not None and norm_cell(got) == want and not leaked:
            ok += 1
        else:
            section.miss(
                f"{case}: {label!r} column {c}: want {want!r}, got {got!r}"
                + (f"; {formula!r} in the text" if leaked else "")
            )
    if formulas:
        section.add("formulas", "xlsx", ok, len(formulas))
    ok = pairs = 0
    for s in sheets:
        at = [text.find(x) for x in s["order"]]
        good = sum(1 for a, b in zip(at, at[1:]) if 0 <= a < b)
        ok += good
        pairs += len(at) - 1
        if good < len(at) - 1:
            section.miss(f"{case} sheet {s['name']!r}: {good}/{len(at) - 1} in order")
    section.add("read in order", "xlsx", ok, pairs)
    section.cases += 1


SEED = 5  # the fast run's three workbooks between them draw every feature


def sheets_section(fast: bool) -> Section:
    s = Section("sheets")
    rng = random.Random(SEED)
    for i in range(3 if fast else 30):
        data, truth, _ = workbook(rng)
        score_book(s, f"book-{i}", data, truth)
    return s


SECTIONS = {"sheets": sheets_section}
