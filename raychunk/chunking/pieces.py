"""What a chunk is made of before it is a record: pieces of body text cut from blocks, each with the
exact source span of what it holds (through its block's ``SourceMap``), and the drafts that group
them under a header; how pieces join into a chunk's text."""

from __future__ import annotations

import itertools
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from raychunk.chunking.align import Alignment, align, identity, record_alignment
from raychunk.document import Block
from raychunk.render import item_line, render_table
from raychunk.tokens import WINDOW

__all__ = [
    "PROSE",
    "Draft",
    "Piece",
    "SourceMap",
    "Spans",
    "aligned_text",
    "draft_parts",
    "draft_text",
    "glued",
    "in_windows",
    "pieces_span",
    "render",
    "row_lines",
    "separator",
    "separators",
]

PROSE = ("paragraph", "list_item")


@dataclass(slots=True)
class Piece:
    """A run of body text: ``root[root_offset:root_offset + len(text)]``, where ``root`` is the
    rendered block it was cut from and ``source`` maps the root's offsets to the document text.
    ``start``/``end`` are the tight source span of what it holds (empty when it holds only context,
    like a list marker), found when first asked for: pricing without ids never needs them.
    ``tokens`` are counted on ``text``."""

    text: str
    tokens: int
    kind: str
    pages: tuple[int, ...] = ()
    continuation: bool = False
    overlap: bool = False
    root: str = ""
    root_offset: int = 0
    source: SourceMap | None = None
    found: tuple[int, int] | None = None

    def span(self) -> tuple[int, int]:
        if self.found is None:
            a, b = _trim(self.text)
            o = self.root_offset
            self.found = self.source.span(o + a, o + b)
        return self.found

    @property
    def start(self) -> int:
        return self.span()[0]

    @property
    def end(self) -> int:
        return self.span()[1]


class SourceMap:
    """Maps offsets of one rendered block (or table part) to the document text, aligning the two the
    first time it is asked (once per block and document: the alignment is kept in the memo)."""

    __slots__ = (
        "memo",
        "text",
        "rendered",
        "start",
        "end",
        "markup",
        "shift",
        "rows",
        "cells",
        "aligned",
        "pipe",
        "record",
        "_map",
    )

    def __init__(
        self,
        memo,
        text,
        rendered,
        start,
        end,
        markup,
        *,
        shift=0,
        rows=None,
        cells=None,
        aligned=None,
        pipe=False,
        record=None,
    ):
        self.memo, self.text, self.rendered, self.start, self.end = memo, text, rendered, start, end
        self.markup, self.shift, self.rows, self.cells = markup, shift, rows, cells
        # What is aligned to the source, when not the rendering itself: a table's rendering with
        # the copies of its spanning cells blanked (same offsets), so a copy never maps to a later
        # cell of the same text.
        self.aligned = aligned
        # A table rendered as a pipe table (``render_table``): where the source is one too, line for
        # line, its rows map line to line (``_pipe_rows``) without aligning the two.
        self.pipe = pipe
        # A CSV, TSV, JSON or XML record: ``(names, cells, shape)``, its values found where they stand
        # (``record_alignment``) before its words are aligned.
        self.record = record
        self._map: Alignment | None = None

    def alignment(self) -> Alignment:
        if self._map is None:
            rendered = self.aligned if self.aligned is not None else self.rendered
            if self.record is not None:
                names, cells, shape = self.record
                found = record_alignment(
                    rendered,
                    names,
                    cells,
                    self.text,
                    self.start,
                    self.end,
                    keyed=shape == "keyed",
                    tagged=shape == "tagged",
                )
                if found is not None:
                    self._map = found
                    return found
            self._map = _alignment(self.memo, self.text, rendered, self.start, self.end, self.markup)
        return self._map

    def span(self, a: int, b: int) -> tuple[int, int]:
        if self.rows is not None:  # a table part: the span of the rows it holds, whatever the cut
            held = [s for s in (self.row_spans()[i] for i in self.rows) if s[1] > s[0]]
            return (min(s for s, _ in held), max(e for _, e in held)) if held else (self.start, self.start)
        if self.cells is not None:  # a part of a table row: the span of the cells (or cut) it holds
            where, at = self._row_alignment()
            held = [s for s in (where.span(a - at, b - at) for a, b in self.cells) if s[1] > s[0]]
            return (min(s for s, _ in held), max(e for _, e in held)) if held else (self.start, self.start)
        if self.pipe and a == 0 and b == len(self.rendered) and (rows := self._lines()):
            held = [s for s in rows if s[1] > s[0]]  # a whole table: from its first row to its last
            return (held[0][0], held[-1][1]) if held else (self.start, self.start)
        if self.pipe:
            return self._pipe_span(self.alignment(), a, b)
        return self.alignment().span(max(0, a - self.shift), max(0, b - self.shift))

    def _pipe_span(self, where: Alignment, a: int, b: int) -> tuple[int, int]:
        """The span of ``rendered[a:b]``, part of a pipe table. An outer pipe the source row has
        not (AsciiDoc's closing one) maps to another line's (the next row's opening pipe, after
        its ``2+`` spec): there the span ends, or starts, with the cells' text. A piece that runs
        over a row's end itself (a fixed window's ``|\n| next``) keeps its pipes."""
        span = where.span(a, b)
        piece = self.rendered[a:b]
        core = piece.strip("| \n")
        if not core or core == piece:
            return span
        at = a + piece.find(core)
        inner = where.span(at, at + len(core))
        if inner[1] <= inner[0]:
            return span
        # a line more in the source than in the piece: there the pipe mapped to another line's
        lead, tail = piece[: at - a], piece[at - a + len(core) :]
        first = inner[0] if self.text[span[0] : inner[0]].count("\n") > lead.count("\n") else span[0]
        last = inner[1] if self.text[inner[1] : span[1]].count("\n") > tail.count("\n") else span[1]
        return first, last

    def _row_alignment(self) -> tuple[Alignment, int]:
        """The alignment that maps this row part's cells, and where it starts in the rendering: the
        row's own line aligned to its source line where the table's lines map line to line, else the
        whole table's."""
        if rows := self._lines():
            at = 0
            for line, (start, end) in zip(self.rendered.split("\n"), rows):
                if at <= self.cells[0][0] and self.cells[-1][1] <= at + len(line):
                    return _alignment(self.memo, self.text, line, start, end, self.markup), at
                at += len(line) + 1
        return self.alignment(), 0

    def _lines(self) -> list[tuple[int, int]] | None:
        """Each line's source span where the source is this pipe table line for line
        (``_pipe_rows``), else None; found once per table and document."""
        key = ("pipe rows", self.start, self.end)
        if key not in self.memo:
            pipe = self.pipe and self.aligned is None
            self.memo[key] = _pipe_rows(self.text, self.start, self.end, self.rendered) if pipe else None
        return self.memo[key]

    def row_spans(self) -> list[tuple[int, int]]:
        """The source span of each row of a table, through its rendering as a pipe table: line for
        line where the source is that pipe table, else through the alignment."""
        rows = self._lines()
        if rows is not None:
            return rows
        key = ("rows", self.start, self.end)
        if key not in self.memo:
            where, pos, rows = self.alignment(), 0, []
            for line in self.rendered.split("\n"):
                rows.append(self._pipe_span(where, pos, pos + len(line)))
                pos += len(line) + 1
            self.memo[key] = rows
        return self.memo[key]


def _pipe_rows(text: str, start: int, end: int, rendered: str) -> list[tuple[int, int]] | None:
    """Each line's source span where ``text[start:end]`` is the pipe table ``rendered`` line for
    line, or None where it is not (an HTML table, a table in a quote or a list, a cell whose markup
    the parser read), for the alignment to map. A source line is its rendered line where it holds
    the same characters other than whitespace, in order, with or without its outer pipes, apart
    from tags inside it (a ``<br>`` in a cell) and cells past the header's columns (dropped by the
    parser: the row's span ends with its last kept cell). The rendered |---| line is the source's
    delimiter row, whatever its colons and dashes (it spans none of a part's rows)."""
    src = text[start:end]
    r_lines = rendered.split("\n")
    s_lines = src.split("\n")
    if len(r_lines) != len(s_lines) or "\r" in src:
        return None
    out = []
    pos = start
    for r, s in zip(r_lines, s_lines):
        a, e = len(s) - len(s.lstrip()), len(s.rstrip())
        if not _delimiter_row(r):
            e = _row_end(r, s, a, e)
            if e is None:
                return None
        out.append((pos + a, pos + max(a, e)))
        pos += len(s) + 1
    return out


def _row_end(r: str, s: str, a: int, e: int) -> int | None:
    """Where source line ``s`` (its characters other than whitespace from ``a`` to ``e``) ends as the
    table row rendered ``r``; None where it is not that row. The line is read as written, then (a
    tag in a cell, which the parser read as HTML) without its tags."""
    rn = "".join(r.split())
    seen = ["".join(s.split())]
    if "<" in s and s[a] != "<" and s[e - 1] != ">":  # a tag at either end is not the row's own text
        bare = _ROW_TAG.sub(" ", s)
        if bare.count("|") == s.count("|"):  # no pipe inside a tag: the pipes are the same ones
            seen.append("".join(bare.split()))
    for sn in seen:
        core = rn if sn.startswith("|") else rn[1:]  # the source line with or without its leading pipe
        if sn == core or sn == core[:-1]:  # ... and with or without its closing one
            return e
        if sn.startswith(core):  # cells past the header's columns: up to the pipe closing the last kept
            at = -1
            for _ in range(core.count("|")):
                at = s.find("|", at + 1)
            return at + 1
    return None


_ROW_TAG = re.compile(r"<[A-Za-z/!][^<>]*>")


def _delimiter_row(line: str) -> bool:
    """``render_table``'s line after the header rows: ``|---|---|``."""
    return line.startswith("|---|") and line == "|" + "---|" * ((len(line) - 1) // 4)


class Spans:
    """``(start, end)`` pairs held as two arrays of integers (a long text has many sentences):
    iterated and indexed as pairs, a slice as a list of pairs."""

    __slots__ = ("starts", "ends")

    def __init__(self, pairs: Iterable[tuple[int, int]], length: int):
        flat = array("I" if length < 1 << 32 else "Q", itertools.chain.from_iterable(pairs))
        self.starts, self.ends = flat[::2], flat[1::2]

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.starts, self.ends)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return list(zip(self.starts[k], self.ends[k]))
        return self.starts[k], self.ends[k]


def _alignment(memo: dict, text: str, rendered: str, start: int, end: int, markup: str) -> Alignment:
    if end - start == len(rendered) and text.startswith(rendered, start):  # the source, uncopied
        return identity(rendered, start)
    key = ("align", start, end, rendered)
    if key not in memo:
        memo[key] = align(rendered, text[start:end], start, markup=markup)
    return memo[key]


def _trim(text: str) -> tuple[int, int]:
    a, b = 0, len(text)
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


@dataclass(frozen=True, slots=True)
class Draft:
    """A chunk before its text is joined: its pieces, its header and where it sits."""

    pieces: list[Piece]
    path: tuple[str, ...]
    header: str
    header_tokens: int
    parent: str
    table_id: str | None = None
    table_part: int | None = None
    continuation: bool = False


def render(b: Block) -> str:
    if b.kind == "list_item":
        return item_line(b.marker, b.text, b.level)
    return b.text


def in_windows(spans: Iterable[tuple[int, int]], size: int = WINDOW) -> Iterator[list[tuple[int, int]]]:
    """Spans in order, in lists that reach at most ``size`` characters past their first start (a
    span alone may be longer): a long text's words or sentences are counted a window at a time."""
    batch: list[tuple[int, int]] = []
    stop = -1
    for span in spans:
        if span[1] > stop:
            if batch:
                yield batch
            batch = []
            stop = span[0] + size
        batch.append(span)
    if batch:
        yield batch


def pieces_span(pieces: list[Piece]) -> tuple[int, int]:
    """From the first to the last source character the pieces hold. Where the pieces follow each
    other in the source (``_in_order``), those are in the first and the last piece that holds any:
    only their blocks are aligned, not every block in between."""
    if len(pieces) > 2 and _in_order(pieces):
        first = next((s for p in pieces if (s := p.span())[1] > s[0]), None)
        if first is not None:
            last = next(s for p in reversed(pieces) if (s := p.span())[1] > s[0])
            return first[0], last[1]
    spans = [p.span() for p in pieces]
    held = [s for s in spans if s[1] > s[0]] or spans
    return min(s for s, _ in held), max(e for _, e in held)


def _in_order(pieces: list[Piece]) -> bool:
    """Whether each piece lies after the one before it in the source: later in the same rendered
    block (an alignment maps in order, so its spans do too), or in a block whose source starts
    where the one before ends or later (a piece's span lies within its block's). Not for table
    parts, whose rows map through their own ranges."""
    for p, q in zip(pieces, pieces[1:]):
        a, b = p.source, q.source
        if a is None or b is None or a.rows is not None or a.cells is not None:
            return False
        if b.rows is not None or b.cells is not None:
            return False
        if a is b:
            if q.root is not p.root or q.root_offset < p.root_offset + len(p.text):
                return False
        elif b.start < a.end:
            return False
    return True


def glued(prev: Piece, p: Piece) -> bool:
    """Whether ``p`` goes on where ``prev`` stops: the parts of a word cut in two."""
    return p.root is prev.root and p.root_offset == prev.root_offset + len(prev.text) and bool(p.root)


def separator(prev: Piece, p: Piece) -> str:
    """What goes between two pieces: cuts of one block keep the block's own whitespace (up to a line
    break; none between the parts of a word cut in two), list items a line break, blocks a blank line."""
    if prev.root and prev.root is p.root:
        end = prev.root_offset + len(prev.text)
        gap = p.root[end : p.root_offset]
        if len(gap) <= 3 and not gap.strip() and gap.count("\n") < 2 and p.root_offset >= end:
            return gap
    return "\n" if p.kind == prev.kind == "list_item" else "\n\n"


def separators(pieces: list[Piece]) -> list[str]:
    return [separator(prev, p) for prev, p in zip(pieces, pieces[1:])]


def _body(pieces: list[Piece]) -> str:
    out = [pieces[0].text]
    for sep, p in zip(separators(pieces), pieces[1:]):
        out.append(sep)
        out.append(p.text)
    return "".join(out)


def draft_parts(d: Draft) -> tuple[list[str], list[str], list[int]]:
    """A draft's texts (header, pieces), what goes between them and their counts."""
    pieces = d.pieces
    texts = [p.text for p in pieces]
    seps = separators(pieces)
    counts = [p.tokens for p in pieces]
    if d.header:
        return [d.header, *texts], ["\n\n", *seps], [d.header_tokens, *counts]
    return texts, seps, counts


def draft_text(d: Draft) -> str:
    body = _body(d.pieces)
    return f"{d.header}\n\n{body}" if d.header else body


def row_lines(block: Block, rows: list[int]) -> list[int]:
    """Lines of the table's pipe rendering that hold ``rows`` (a |---| line follows the header rows)."""
    hr = block.header_rows
    return [r + 1 if hr and r >= hr else r for r in rows]


def aligned_text(b: Block) -> str | None:
    """A table's pipe rendering with the copies of its spanning cells (``Block.copies``) blanked;
    None for another block, or a table without copies."""
    if not b.copies or b.kind != "table" or render_table(b.rows, b.header_rows) != b.text:
        return None
    return render_table(b.rows, b.header_rows, blank=frozenset(b.copies))
