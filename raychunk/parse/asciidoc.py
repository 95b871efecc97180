"""AsciiDoc (``.adoc``, ``.asciidoc``: Antora and Asciidoctor sites, docs-as-code repositories), read
line by line as Asciidoctor reads its blocks, every span into the file's own text.

- ``= Title`` is the document's title, a level-1 heading, and ``==`` to ``======`` its sections below
  it (Markdown's ``#`` marks too, as Asciidoctor takes them); a ``[discrete]`` heading is a heading.
- A paragraph runs to a blank line, a block delimiter or a list; ``NOTE:`` and the other admonition
  labels stay in its text; a block title (``.Title``) is a paragraph of its own before its block.
- List items (``*``, ``-``, ``.``, ``1.``) keep their nesting, an ordered item its number as
  Asciidoctor renders it (``1.``, then ``a.``, ``i.`` one and two levels down) and a checklist item
  its box; a description (``term:: text``, ``term;;``) is a paragraph that reads as written.
- A listing (``----``, `````` ``` ``````) or literal (``....``, an indented line) block is code, with the
  language of its ``[source,lang]``; a table (``|===``, ``,===``, ``:===``) is a table, its header
  row where a blank line follows the first line or the block says ``%header``; example, sidebar,
  quote and open blocks are read for what they hold; comments, attribute entries, conditionals and
  passthrough blocks give no text.
- ``include::`` pulls in nothing from here: the reason names what it would have pulled in.

Inline markup stays as written (``*bold*``, `` `code` ``, ``link:url[text]``), as Markdown's does.
"""

from __future__ import annotations

import re

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, listing, roman, with_reason
from raychunk.render import render_table

__all__ = ["parse_asciidoc"]

_HEADING = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*?)(?:[ \t]+\1)?[ \t]*$")
_ATTRIBUTE_ENTRY = re.compile(r":!?[\w][\w-]*!?:(?:[ \t].*)?$")
_BLOCK_ATTRIBUTES = re.compile(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]$")
_BLOCK_TITLE = re.compile(r"\.(?![.\s])(\S.*)$")
_DIRECTIVE = re.compile(r"(?:ifdef|ifndef|ifeval|endif)::[^\[]*\[.*\]$")
_INCLUDE = re.compile(r"include::([^\[]+)\[.*\]$")
_UNORDERED = re.compile(r"([ \t]*)(\*{1,5}|-)[ \t]+(\S.*)$")
_ORDERED = re.compile(r"([ \t]*)(\.{1,5}|\d{1,9}\.|[a-zA-Z]\.|[ivxIVX]{1,6}\))[ \t]+(\S.*)$")
_CHECKBOX = re.compile(r"\[([ xX*])\][ \t]+")
_DESCRIPTION = re.compile(r"(?!//)(\S.*?)(:{2,4}|;;)(?:[ \t]+(\S.*))?$")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|-{2}|`{3}.*|[|,:!]={3,})$")
_SPAN = re.compile(r"(?:(\d+)\*)?(?:(\d+)?(?:\.(\d+))?\+)?")
_CELL_SPEC = re.compile(r"(?:\d+\*|(?:\d+)?(?:\.\d+)?\+)?[<^>]?(?:\.[<^>])?[adehlmsv]?$")
_TRAILING_WORD, _SPEC_MARK = re.compile(r"(?:^|\s)(\S+)$"), re.compile(r"[\d+*<^>]")
_ADMONITION_STYLES = {"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"}
_MAX_DEPTH = 32
_ALPHA = "abcdefghijklmnopqrstuvwxyz"


def parse_asciidoc(text: str, base: Document) -> ParsedDocument:
    text = clean_text(text)
    reader = _Reader(text)
    reader.read(0, len(reader.lines))
    parsed = finish(base, text, reader.out.blocks)
    if reader.includes:
        note = f"included files not inlined ({listing(reader.includes)}): each is read on its own"
        if not parsed.blocks:
            note = f"no text of its own: it only pulls in other files ({listing(reader.includes)}), which are not read from here"
        return with_reason(parsed, note)
    return parsed


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.starts = []
        pos = 0
        for line in self.lines:
            self.starts.append(pos)
            pos += len(line) + 1
        self.out = BlockStream()
        self.includes: list[str] = []
        self.attributes = ""  # the block attribute line before the next block
        self.counters: dict[int, int] = {}  # an ordered list's count at each depth
        self.markers: list[str] = []  # the open lists' markers, outermost first
        self.styles: dict[int, str] = {}  # a list's numbering style (``[loweralpha]``) at its depth
        self.blank = False  # a blank line since the last block
        self.depth = 0  # delimited blocks open around the lines being read

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Lines ``i`` to ``j`` (exclusive), their whitespace trimmed at both ends."""
        s, e = self.starts[i], self.starts[j - 1] + len(self.lines[j - 1])
        while s < e and self.text[s].isspace():
            s += 1
        while e > s and self.text[e - 1].isspace():
            e -= 1
        return s, e

    def read(self, i: int, end: int) -> None:
        lines = self.lines
        attached = False
        while i < end:
            line = lines[i].rstrip()
            stripped = line.strip()
            flush = line == stripped  # no indent: where block syntax is read
            if not stripped:
                self.blank = True
                i += 1
                continue
            if stripped == "+":  # a list continuation: the next block belongs to the item above
                attached = True
                i += 1
                continue
            if stripped.startswith("//") and not stripped.startswith("////"):
                i += 1  # a comment line
                continue
            if (m := _INCLUDE.match(stripped)) is not None:
                self.includes.append(m[1].strip())
                i += 1
                continue
            if _DIRECTIVE.match(stripped) or _ATTRIBUTE_ENTRY.match(line):
                i += 1
                continue
            if flush and _BLOCK_ATTRIBUTES.match(stripped):
                self.attributes = stripped[1:-1]
                if not attached:  # attributes open a block of their own: a list after them is new
                    self.counters, self.markers, self.styles = {}, [], {}
                i += 1
                continue
            if not self._is_list(line) and not attached:
                self.counters, self.markers, self.styles = (
                    {},
                    [],
                    {},
                )  # a list ends where another block starts
            attached = False
            if flush and (m := _HEADING.match(line)) is not None and not self._is_list(line):
                s = self.starts[i] + m.start(2)
                self.out.heading(m[2], len(m[1]), s, s + len(m[2]))
                self.attributes = ""
                i += 1
                continue
            if flush and (m := _BLOCK_TITLE.match(stripped)) is not None:
                s = self.starts[i] + 1
                self.out.add("paragraph", m[1], s, s + len(m[1]))
                i += 1
                continue
            if flush and _DELIMITER.match(stripped):
                i = self._delimited(i, end)
                continue
            if self._is_list(line):
                i = self._item(i, end)
            elif line[0] in " \t" and not self.attributes:
                i = self._literal(i, end)
            else:
                i = self._paragraph(i, end)
            self.blank = False

    def _is_list(self, line: str) -> bool:
        if _UNORDERED.match(line) or _ORDERED.match(line):
            return True
        m = _DESCRIPTION.match(line.strip())
        return m is not None and not line[:1].isspace() and "://" not in (m[1] or "")[-8:]

    def _ends_paragraph(self, line: str) -> bool:
        stripped = line.strip()
        return (
            not stripped
            or stripped == "+"
            or self._is_list(line)
            or (
                line[:1] not in " \t"
                and (_DELIMITER.match(stripped) is not None or _BLOCK_ATTRIBUTES.match(stripped) is not None)
            )
            or (stripped.startswith("//") and not stripped.startswith("////"))
            or _INCLUDE.match(stripped) is not None
            or _DIRECTIVE.match(stripped) is not None
            or _ATTRIBUTE_ENTRY.match(line) is not None
        )

    def _paragraph(self, i: int, end: int) -> int:
        j = i + 1
        while j < end and not self._ends_paragraph(self.lines[j]):
            j += 1
        s, e = self.span(i, j)
        style = self.attributes.split(",")[0].strip()
        kind = "code" if style in ("source", "listing", "literal") else "paragraph"
        language = _source_language(self.attributes) if kind == "code" else ""
        self.out.add(kind, self.text[s:e], s, e, **({"language": language} if language else {}))
        self.attributes = ""
        return j

    def _literal(self, i: int, end: int) -> int:
        j = i + 1
        while j < end and self.lines[j].strip() and self.lines[j][:1] in " \t":
            j += 1
        s, e = self.span(i, j)
        self.out.add("code", self.text[s:e], s, e)
        return j

    def _item(self, i: int, end: int) -> int:
        line = self.lines[i]
        j = i + 1
        while j < end and not self._ends_paragraph(self.lines[j]) and not _HEADING.match(self.lines[j]):
            j += 1
        if (m := _UNORDERED.match(line)) is not None:
            depth = self._level(m[2])
            text_at = m.start(3)
            marker = "-"
            box = _CHECKBOX.match(m[3])
            if box:
                marker = "- [x]" if box[1] != " " else "- [ ]"
                text_at += box.end()
        elif (m := _ORDERED.match(line)) is not None:
            dots = m[2]
            depth = self._level(dots if dots.startswith(".") else _marker_kind(dots))
            for deeper in [d for d in self.counters if d > depth]:
                del self.counters[deeper]
            if depth not in self.counters:  # a list's first item: its block attributes
                self.counters[depth] = _start(self.attributes) - 1
                self.styles[depth] = _style(self.attributes) or _DEFAULT_STYLES[(len(dots) - 1) % 5]
            n = self.counters[depth] = self.counters[depth] + 1
            marker = dots if not dots.startswith(".") else _number(n, self.styles[depth])
            text_at = m.start(3)
        else:  # a description, ``term:: definition``: read as a definition list renders
            s, e = self.span(i, j)
            m = _DESCRIPTION.match(self.text[s:e].split("\n")[0])
            term, rest = m[1].strip(), self.text[s + m.end(2) : e].strip()
            text = f"{term}{'' if term.endswith(':') else ':'} {rest}" if rest else term
            self.out.add("paragraph", text, s, e)
            return j
        s = self.starts[i] + text_at
        _, e = self.span(i, j)
        self.out.add("list_item", self.text[s:e], s, e, level=depth, marker=marker)
        self.attributes = ""
        return j

    def _level(self, kind: str) -> int:
        """An item's depth as Asciidoctor nests lists: by marker, not indent. A marker an open list
        has is that list's; another opens a list inside the item above, unless a blank line came
        first and it is no deeper form of an open marker (``**`` under ``*``, ``..`` under ``.``):
        then it starts a list of its own."""
        if kind in self.markers:
            del self.markers[self.markers.index(kind) + 1 :]
        elif self.blank and not any(
            kind[0] == m[0] and len(kind) > len(m) and m[0] in "*." for m in self.markers
        ):
            self.markers, self.counters, self.styles = [kind], {}, {}
        else:
            self.markers.append(kind)
        depth = len(self.markers) - 1
        for deeper in [d for d in self.counters if d > depth]:
            del self.counters[deeper], self.styles[deeper]
        return depth

    def _delimited(self, i: int, end: int) -> int:
        fence = self.lines[i].strip()
        close = "```" if fence.startswith("```") else fence
        j = i + 1
        while j < end and self.lines[j].strip() != close:
            j += 1
        inner = (i + 1, j)
        after = min(j + 1, end)
        attributes, self.attributes = self.attributes, ""
        style = attributes.split(",")[0].strip()
        if fence.startswith("////") or fence.startswith("++++"):
            return after  # a comment, or raw output for the page: no text of the document
        if fence.startswith(("----", "....", "```")):
            if inner[1] > inner[0]:
                s, e = self.starts[inner[0]], self.starts[inner[1] - 1] + len(self.lines[inner[1] - 1])
                language = fence[3:].strip() if fence.startswith("```") else _source_language(attributes)
                self.out.add("code", self.text[s:e], s, e, **({"language": language} if language else {}))
            return after
        if fence[1:4] == "===" and fence[0] in "|,:!":
            self._table(inner, fence[0], attributes)
            return after
        if style in _ADMONITION_STYLES or fence[0] in "=*_-":
            # example, sidebar, quote, open, admonition: what it holds (nested a bounded depth: a
            # file of fences inside fences is read as its lines, not into Python's recursion limit)
            if self.depth < _MAX_DEPTH:
                self.depth += 1
                self.read(*inner)
                self.depth -= 1
            elif inner[1] > inner[0]:
                s, e = self.span(*inner)
                self.out.add("paragraph", self.text[s:e], s, e)
        return after

    def _table(self, inner: tuple[int, int], separator: str, attributes: str) -> None:
        i, j = inner
        if j <= i:
            return
        sep = separator
        cells: list[tuple[str, int, int]] = []  # (text, columns, rows) spanned
        first_line_cells = 0
        first_line: int | None = None
        header = "header" in attributes and "noheader" not in attributes
        for k in range(i, j):
            line = self.lines[k]
            if not line.strip():
                if first_line is not None and k == first_line + 1 and "noheader" not in attributes:
                    header = True
                continue
            if sep in ",:":
                row = [(c.strip(), 1, 1) for c in line.split(sep)]
                cells.extend(row)
                if first_line is None:
                    first_line, first_line_cells = k, len(row)
                continue
            parts = _cells(line, sep)
            if not parts:
                if cells:
                    last = cells[-1]
                    cells[-1] = ((last[0] + " " + line.strip()).strip(), *last[1:])  # a cell's next line
                continue
            cells.extend(parts)
            if first_line is None:
                first_line, first_line_cells = k, sum(c[1] for c in parts)
        cols = _columns(attributes) or first_line_cells
        if not cells or cols <= 0:
            return
        rows, copies = _grid(cells, cols)
        s, e = self.span(i, j)
        n = 1 if header and len(rows) > 1 else 0
        self.out.add("table", render_table(rows, n), s, e, rows=rows, header_rows=n, copies=copies)


def _source_language(attributes: str) -> str:
    """The language of ``[source,python]``: its second positional attribute."""
    parts = [p.strip() for p in attributes.split(",")]
    if len(parts) > 1 and parts[0] == "source" and parts[1] and "=" not in parts[1]:
        return parts[1]
    return ""


def _cells(line: str, sep: str) -> list[tuple[str, int, int]]:
    """The cells a table line starts, each ``(text, columns, rows)`` it spans; none where the line
    goes on the cell before (it does not start with a separator, or a cell's spec and one: ``2+|``,
    ``.3+^|``, ``a|``). The spec before a separator is no cell text: a span (``2+``, ``.3+``,
    ``2.3+``) is the cell's, a duplication (``3*``) makes that many cells of its text."""
    parts = re.split(r"(?<!\\)" + re.escape(sep), line.strip())
    if len(parts) < 2 or (parts[0] and not _CELL_SPEC.fullmatch(parts[0])):
        return []
    out = []
    spec = parts[0]
    for k, part in enumerate(parts[1:], 1):
        after = _TRAILING_WORD.search(part) if k < len(parts) - 1 else None
        # the next cell's spec (``2+``, ``.3+^``; a bare style letter only where it is all there is)
        nxt = ""
        if after and _CELL_SPEC.fullmatch(after[1]) and (after.start(1) == 0 or _SPEC_MARK.search(after[1])):
            part, nxt = part[: after.start(1)], after[1]
        text = part.strip().replace("\\" + sep, sep)
        m = _SPAN.match(spec)
        times = int(m[1]) if m and m[1] else 1
        columns = int(m[2]) if m and m[2] else 1
        rows = int(m[3]) if m and m[3] else 1
        out.extend([(text, min(columns, 50), min(rows, 1000))] * min(times, 50))
        spec = nxt
    return out


def _grid(cells: list[tuple[str, int, int]], cols: int) -> tuple[tuple[tuple[str, ...], ...], tuple]:
    """Rows of ``cols`` columns from cells in order, as Asciidoctor lays them out: a cell spanning
    columns or rows has its text in each it covers (those after the first are ``copies``: written
    once in the source), unless it is the one cell of its row, a title over every column."""
    rows: list[list[str | None]] = []
    copies: list[tuple[int, int]] = []
    r = c = 0

    def slot(i: int) -> list[str | None]:
        while len(rows) <= i:
            rows.append([None] * cols)
        return rows[i]

    for text, columns, span_rows in cells:
        while c < cols and slot(r)[c] is not None:
            c += 1
        if c >= cols:
            r, c = r + 1, 0
            while c < cols and slot(r)[c] is not None:
                c += 1
        width = max(1, min(columns, cols - c))
        title = width == cols and span_rows == 1
        for dr in range(span_rows):
            row = slot(r + dr)
            for dc in range(width):
                if row[c + dc] is None:
                    row[c + dc] = "" if title and dc else text
                    if (dr or dc) and not title:
                        copies.append((r + dr, c + dc))
        c += width
    out = tuple(tuple(x or "" for x in row) for row in rows if any(x is not None for x in row))
    return out, tuple(x for x in copies if x[0] < len(out))


def _columns(attributes: str) -> int:
    m = re.search(r'cols\s*=\s*"([^"]*)"|cols\s*=\s*([^,\]]+)', attributes)
    if not m:
        return 0
    spec = (m[1] or m[2] or "").strip()
    if spec.isdigit():
        return int(spec)
    total = 0
    for part in spec.split(","):
        part = part.strip()
        times = re.match(r"(\d+)\*", part)
        total += int(times[1]) if times else 1
    return total


_DEFAULT_STYLES = ("arabic", "loweralpha", "lowerroman", "upperalpha", "upperroman")
_STYLES = {*_DEFAULT_STYLES, "decimal", "lowergreek"}
_START = re.compile(r"(?:^|,)\s*start\s*=\s*\"?(-?\d+)")


def _start(attributes: str) -> int:
    m = _START.search(attributes)
    return int(m[1]) if m else 1


def _style(attributes: str) -> str:
    """The numbering style a list's block attributes name (``[loweralpha]``, ``[lowerroman,start=3]``)."""
    first = attributes.split(",")[0].strip().lstrip("%")
    return first if first in _STYLES else ""


def _marker_kind(marker: str) -> str:
    """Explicit markers of one kind (``1.``, ``7.``; ``a.``; ``iv)``) make one list."""
    if marker[0].isdigit():
        return "1."
    if marker.endswith(")"):
        return "i)"
    return "a." if marker[0].islower() else "A."


def _number(n: int, style: str) -> str:
    """An ordered item's number as Asciidoctor renders it in ``style``."""
    if style in ("loweralpha", "upperalpha"):
        letter = _ALPHA[(n - 1) % 26] if n > 0 else str(n)
        return (letter if style == "loweralpha" else letter.upper()) + "."
    if style in ("lowerroman", "upperroman"):
        return (roman(n) if style == "lowerroman" else roman(n).upper()) + "."
    return f"{n}."
