"""Cutting one document's blocks into pieces: one piece per block (rendered and counted once), the
source map of a table part, a piece's parts at sentence ends (code: blank lines, then lines; a table:
rows), at words where a sentence is over the budget, a word at token boundaries where it is over
alone, and the last whole sentences of a piece as the next chunk's overlap. Rendered blocks,
alignments and sentence boundaries are remembered in the document's memo."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from raychunk.chunking.costs import TokenCosts
from raychunk.chunking.pieces import (
    PROSE,
    Piece,
    SourceMap,
    Spans,
    aligned_text,
    in_windows,
    render,
    row_lines,
)
from raychunk.chunking.sentences import iter_sentence_spans
from raychunk.document import Block, ParsedDocument
from raychunk.tokens import WINDOW

__all__ = ["Cutter"]

_WORD = re.compile(r"\S+")
_MARKUP = {"html": "source", "markdown": "both"}  # where html tags may be, by format
# records whose values are found where they stand (``align.record_alignment``): how they stand there
_RECORDS = {"csv": "cells", "tsv": "cells", "json": "keyed", "jsonl": "keyed", "xml": "tagged"}


class Cutter:
    """Cuts the blocks of one document into pieces, counted through its ``TokenCosts``."""

    def __init__(self, parsed: ParsedDocument, costs: TokenCosts):
        self.parsed = parsed
        self.costs = costs
        self.counter = costs.counter
        self.memo = costs.memo

    def source_map(self, rendered: str, block: Block, **kw) -> SourceMap:
        markup = _MARKUP.get(self.parsed.document.format, "")
        return SourceMap(
            self.memo, self.parsed.text, rendered, block.char_start, block.char_end, markup, **kw
        )

    def block_pieces(self, blocks: list[Block]) -> list[Piece]:
        """One piece per block, rendered and tokenized once (one batch call for all of them).
        With a per-document memo (a CachedCounter's), later settings reuse the same pieces."""
        key = ("pieces", *map(id, blocks))
        if key in self.memo:
            return self.memo[key]
        texts = [render(b) for b in blocks]
        counts = self.costs.block_counts(blocks, texts)
        memo, doc = self.memo, self.parsed.text
        markup = _MARKUP.get(self.parsed.document.format, "")
        shape = _RECORDS.get(self.parsed.document.format)
        pieces = []
        for t, b, n in zip(texts, blocks, counts):
            # A list marker exists only in the rendering: the item's own text is what maps.
            marker = len(t) - len(b.text) if b.kind == "list_item" else 0
            mapped, aligned = b.text if marker else t, aligned_text(b) if b.copies else None
            source = SourceMap(
                memo,
                doc,
                mapped,
                b.char_start,
                b.char_end,
                markup,
                shift=marker,
                aligned=aligned,
                pipe=b.kind == "table",
                record=(*b.rows, shape)
                if shape is not None and b.kind == "record" and len(b.rows) == 2
                else None,
            )
            pieces.append(Piece(t, n, b.kind, b.pages, root=t, source=source))
        self.memo[key] = pieces
        return pieces

    def table_rows(self, block: Block, rendered: str, rows: list[int]) -> SourceMap:
        """The source of a table part holding ``rows`` (indices into ``block.rows``); ``rendered``
        is the whole table as a pipe table."""
        return self.source_map(
            rendered, block, rows=row_lines(block, rows), aligned=aligned_text(block), pipe=True
        )

    def table_cells(self, block: Block, rendered: str, cells: list[tuple[int, int]]) -> SourceMap:
        """The source of a part of one table row: ``cells`` are ranges of ``rendered`` (the whole
        table as a pipe table) that the part holds as its own."""
        return self.source_map(rendered, block, cells=cells, aligned=aligned_text(block), pipe=True)

    def sentences(self, text: str, *, with_starts: bool = False):
        """Sentence spans of ``text`` (and their starts, for bisecting), remembered per document."""
        key = ("sentences", text)
        if key not in self.memo:
            self.memo[key] = Spans(iter_sentence_spans(text), len(text))
        spans = self.memo[key]
        return (spans, spans.starts) if with_starts else spans

    def sub_piece(self, p: Piece, s: int, e: int, tokens: int | None = None) -> Piece:
        """The part ``p.text[s:e]`` of a piece, its span mapped through the piece's source."""
        text = p.text[s:e]
        o = p.root_offset
        n = self.counter.count(text) if tokens is None else tokens
        return Piece(
            text,
            n,
            p.kind,
            p.pages,
            continuation=True,
            root=p.root or p.text,
            root_offset=o + s,
            source=p.source,
        )

    def split_piece(self, p: Piece, budget: int) -> list[Piece]:
        """Split an over-budget piece at sentence ends (code: blank lines, then lines; a table: rows),
        never mid-word unless a single word is over the budget."""
        if p.kind == "code":
            spans = _line_groups(p.text)
        elif p.kind == "table":
            spans = _line_spans(p.text, 0, len(p.text))
        else:
            spans = self.sentences(p.text)
        out: list[Piece] = []
        group: list[tuple[int, int, int]] = []
        size = 0
        for unit in self._units(p, spans, budget):
            n = unit[2] + (self.costs.join_within(p.text, group[-1][1], unit[0]) if group else 0)
            if group and size + n > budget:
                out.append(self._group_piece(p, group, size))
                group, size, n = [], 0, unit[2]
            group.append(unit)
            size += n
        if group:
            out.append(self._group_piece(p, group, size))
        if out:
            out[0].continuation = False
        return out

    def _units(self, p: Piece, spans, budget: int) -> Iterator[tuple[int, int, int]]:
        """``(start, end, tokens)`` of each span of ``p`` within ``budget``; one over it as its lines
        (code), else its words. Counted a batch at a time: a long text never makes an object per word
        all at once."""
        text = p.text
        for batch in in_windows(spans):
            for (s, e), n in zip(batch, self.costs.piece_counts(p, batch)):
                if n <= budget:
                    yield s, e, n
                elif p.kind == "code" and text.find("\n", s, e) >= 0:
                    lines = _line_spans(text, s, e)
                    for (ls, le), ln in zip(lines, self.costs.piece_counts(p, lines)):
                        if ln <= budget:
                            yield ls, le, ln
                        else:
                            yield from self.split_words(p, ls, le, budget)
                else:
                    yield from self.split_words(p, s, e, budget)

    def _group_piece(self, p: Piece, group: list[tuple[int, int, int]], size: int) -> Piece:
        s, e = group[0][0], group[-1][1]
        glued = any(a == b for (_, b, _), (a, _, _) in zip(group, group[1:]))
        # Parts of one cut word put back together no longer add up: count them as they are.
        exact = self.counter.additive and not glued
        return self.sub_piece(p, s, e, tokens=size if exact or len(group) == 1 else None)

    def split_words(self, p: Piece, s: int, e: int, budget: int) -> Iterator[tuple[int, int, int]]:
        """``(start, end, tokens)`` of the words of ``p.text[s:e]``; a word over the budget is cut.
        Counted a batch of words at a time."""
        text = p.text
        for batch in in_windows(m.span() for m in _WORD.finditer(text, s, e)):
            for (a, b), n in zip(batch, self.costs.piece_counts(p, batch)):
                if n <= budget:
                    yield a, b, n
                else:
                    yield from self.cut_word(text, a, b, budget)

    def cut_word(self, text: str, a: int, b: int, budget: int) -> list[tuple[int, int, int]]:
        """``text[a:b]`` (one word) cut at token boundaries into parts of at most ``budget`` tokens,
        each counted on its own. A part of a word over ``WINDOW`` characters is found on a prefix of
        what is left, doubled until the cut lies in its first half and 128 characters or more before
        its end (farther than a tokenizer looks ahead: a word piece of over 100 characters is one
        unknown token), so the cost is linear in the word's length, not quadratic."""
        parts = []
        long = b - a > WINDOW
        while a < b:
            size = 4 * budget + 256 if long else b - a
            while True:
                size = min(size, b - a)
                cuts = self.counter.cut_points(text[a : a + size], budget)
                if a + size >= b or (cuts and cuts[0] <= size // 2):
                    break
                size *= 2
            y = min(b, a + max(1, cuts[0])) if cuts else b
            n = self.counter.count(text[a:y])
            while n > budget and y - a > 1:  # re-encoded alone, a part can come out longer
                y = a + max(1, (y - a) * budget // (n + 1))
                n = self.counter.count(text[a:y])
            parts.append((a, y, n))
            a = y
        return parts

    def tail(self, p: Piece, budget: int) -> Piece | None:
        """Overlap for the next chunk: the last whole sentences of ``p`` within ``budget`` tokens."""
        if budget <= 0 or p.kind not in PROSE or p.overlap:
            return None
        # The sentences of the block the piece was cut from (found once per block), clipped to the piece.
        root, o, n = p.root or p.text, p.root_offset, len(p.text)
        spans, starts = self.sentences(root, with_starts=True)
        last = bisect.bisect_left(starts, o + n)
        spans = [(max(a, o) - o, min(b, o + n) - o) for a, b in spans[max(0, last - 8) : last]]
        spans = [(a, b) for a, b in spans if b > a]
        if not spans:
            return None
        start, total = None, 0
        # Word-piece counts come from the block's offsets at once; other counters count each
        # sentence on its own, so only those that are reached from the end are counted.
        counts = self.costs.piece_counts(p, spans) if self.counter.additive else None
        for k in range(len(spans) - 1, -1, -1):
            s, e = spans[k]
            n = counts[k] if counts is not None else self.costs.piece_counts(p, [(s, e)])[0]
            n += self.costs.join_within(p.text, e, start) if start is not None else 0
            if total + n > budget:
                break
            start, total = s, total + n
        if start is None:
            return None
        piece = self.sub_piece(p, start, spans[-1][1], tokens=total if self.counter.additive else None)
        piece.overlap = True
        return piece


def _line_groups(text: str) -> list[tuple[int, int]]:
    """Code: runs separated by blank lines; a run is further cut at lines when needed later."""
    spans, start, pos = [], None, 0
    for line in text.split("\n"):
        if line.strip():
            if start is None:
                start = pos
            end = pos + len(line)
        elif start is not None:
            spans.append((start, end))
            start = None
        pos += len(line) + 1
    if start is not None:
        spans.append((start, end))
    return spans


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for line in text[start:end].split("\n"):
        if line.strip():
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans
