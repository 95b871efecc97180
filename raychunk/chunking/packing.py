"""What the packing strategies share: pieces of body text cut from blocks at sentence, line or word
ends, each with the exact source span of what it holds; one document's packing state (header lines
within their share of the budget, a per-document memo, the chunk drafts); and the step from drafts
to chunk records, or to their numbers only, with exact token counts."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import re
from abc import abstractmethod
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from raychunk.chunking.align import Alignment, align, identity
from raychunk.chunking.model import Chunk, ChunkIds, ChunkStats, Profile, Strategy, chunk_ids
from raychunk.chunking.sentences import iter_sentence_spans
from raychunk.document import Block, ParsedDocument
from raychunk.render import render_table
from raychunk.tokens import (
    WINDOW,
    CachedCounter,
    TokenCounter,
    _first_words,
    _last_cut,
    _last_words,
    exact_edges,
    join_tail,
)

__all__ = [
    "GAP_FLOOR",
    "GAP_MAX",
    "GAP_SHARE",
    "PROSE",
    "Draft",
    "Packer",
    "PackingStrategy",
    "Piece",
    "SourceMap",
    "fit_header",
    "header_line",
    "render",
]

PROSE = ("paragraph", "list_item")
# Dropped words a chunk's span may claim between its blocks: the span check allows a chunk
# max(4, a quarter of its words) words its body lacks; a twelfth is left to cleanup inside blocks.
GAP_FLOOR, GAP_SHARE, GAP_MAX = 4, 6, 16
ELLIPSIS = "…"


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
        "_map",
    )

    def __init__(
        self, memo, text, rendered, start, end, markup, *, shift=0, rows=None, cells=None, aligned=None
    ):
        self.memo, self.text, self.rendered, self.start, self.end = memo, text, rendered, start, end
        self.markup, self.shift, self.rows, self.cells = markup, shift, rows, cells
        # What is aligned to the source, when not the rendering itself: a table's rendering with
        # the copies of its spanning cells blanked (same offsets), so a copy never maps to a later
        # cell of the same text.
        self.aligned = aligned
        self._map: Alignment | None = None

    def alignment(self) -> Alignment:
        if self._map is None:
            rendered = self.aligned if self.aligned is not None else self.rendered
            self._map = _alignment(self.memo, self.text, rendered, self.start, self.end, self.markup)
        return self._map

    def span(self, a: int, b: int) -> tuple[int, int]:
        if self.rows is not None:  # a table part: the span of the rows it holds, whatever the cut
            held = [s for s in (self.row_spans()[i] for i in self.rows) if s[1] > s[0]]
            return (min(s for s, _ in held), max(e for _, e in held)) if held else (self.start, self.start)
        if self.cells is not None:  # a part of a table row: the span of the cells (or cut) it holds
            where = self.alignment()
            held = [s for s in (where.span(a, b) for a, b in self.cells) if s[1] > s[0]]
            return (min(s for s, _ in held), max(e for _, e in held)) if held else (self.start, self.start)
        return self.alignment().span(max(0, a - self.shift), max(0, b - self.shift))

    def row_spans(self) -> list[tuple[int, int]]:
        """The source span of each row of a table, through its rendering as a pipe table."""
        key = ("rows", self.start, self.end)
        if key not in self.memo:
            lines, pos = [], 0
            for line in self.rendered.split("\n"):
                lines.append((pos, pos + len(line)))
                pos += len(line) + 1
            where = self.alignment()
            self.memo[key] = [where.span(s, e) for s, e in lines]
        return self.memo[key]


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


def header_line(title: str, path: tuple[str, ...]) -> str:
    """The heading path, document title first: ``Acme Cloud > Billing > Refunds``."""
    return " > ".join(_header_parts(title, path))


def _header_parts(title: str, path: tuple[str, ...]) -> list[str]:
    parts = [title] if title else []
    for p in path:
        if not parts or p.casefold() != parts[-1].casefold():
            parts.append(p)
    return parts


def fit_header(parts: list[str], cap: int, counter: TokenCounter) -> str:
    """``parts`` joined by `` > `` in at most ``cap`` tokens: headings dropped from the middle of the
    path (``Title > … > Nearest``), never the title or the nearest heading; if those two alone are
    over, their own text is cut short with an ellipsis."""
    return _fit_header(parts, cap, counter)[0]


def _fit_header(parts: list[str], cap: int, counter: TokenCounter) -> tuple[str, int]:
    """``fit_header``'s line and its tokens."""
    line = " > ".join(parts)
    if not parts:
        return line, counter.count(line)
    n = _path_count(parts, counter)
    if n <= cap:
        return line, n
    for k in range(2, len(parts)):
        kept = [parts[0], ELLIPSIS, *parts[k:]]
        line, n = " > ".join(kept), _path_count(kept, counter)
        if n <= cap:
            return line, n
    first, last = parts[0], parts[-1] if len(parts) > 1 else None
    middle = [ELLIPSIS] if len(parts) > 2 else []
    keep_first = counter.count(first)
    keep_last = counter.count(last) if last is not None else 0
    for _ in range(64):
        line = " > ".join(
            [_cut(first, keep_first, counter), *middle]
            + ([_cut(last, keep_last, counter)] if last is not None else [])
        )
        n = counter.count(line)
        over = n - cap
        if over <= 0 or keep_first + keep_last == 0:
            break
        if last is not None and keep_last >= keep_first:
            keep_last = max(0, keep_last - over)
        else:
            keep_first = max(0, keep_first - over)
    return line, n


def _path_count(parts: list[str], counter: TokenCounter) -> int:
    """``counter.count(" > ".join(parts))``. Where the counter cuts exactly at a space after a
    non-space, from the counts of the parts (each heading with the space before it, remembered
    across the document's headers): the line cuts exactly before each `` >`` and after it."""
    if not counter.exact_cuts or not all(p and not p[-1].isspace() for p in parts):
        return counter.count(" > ".join(parts))
    counts = counter.count_batch([" >", parts[0], *(" " + p for p in parts[1:])])
    return sum(counts[1:]) + counts[0] * (len(parts) - 1)


def _cut(text: str, keep: int, counter: TokenCounter) -> str:
    """``text`` cut to its first ``keep`` tokens plus an ellipsis, when it has more."""
    if keep <= 0:
        return ELLIPSIS
    cuts = counter.cut_points(text, keep)
    return text[: cuts[0]].rstrip() + ELLIPSIS if cuts else text


def render(b: Block) -> str:
    if b.kind == "list_item":
        return "  " * b.level + (b.marker or "-") + " " + b.text
    return b.text


class Packer:
    """One document under one profile: cuts blocks into pieces, collects the drafts a strategy emits,
    and finishes them into chunks or chunk numbers."""

    def __init__(self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str):
        self.parsed = parsed
        self.doc = parsed.document
        self.profile = profile
        self.counter = counter
        self.doc_type = doc_type
        self.title = self.doc.title or PurePosixPath(self.doc.source).name
        self.drafts: list[Draft] = []
        self._headers: dict[tuple[str, ...], tuple[str, int, int]] = {}
        # Rendered blocks, alignments, sentence boundaries, token offsets and join costs of this
        # document: a CachedCounter shares them across the settings of a grid; a bare counter gets
        # one for this call (a long block's words are counted from its offsets, tokenized once).
        if getattr(counter, "memo", None) is None:
            counter = self.counter = CachedCounter(counter)
        self.memo: dict = counter.memo
        self._joins: dict[tuple[str, str, str], int] = self.memo.setdefault("joins", {})
        self._gaps: dict[tuple[int, int], int] = self.memo.setdefault("gaps", {})

    # -- headers and budgets ------------------------------------------------------------------

    def _header(self, path: tuple[str, ...]) -> tuple[str, int, int]:
        if path not in self._headers:
            cap = max(1, int(self.profile.header_share * self.profile.max_tokens))
            counter = self.counter
            line, tokens = _fit_header(_header_parts(self.title, path), cap, counter)
            tokens = tokens if line else 0
            # What the header adds to a chunk: itself and the blank line after it, which a BPE
            # tokenizer may merge with the header's last characters (with exact cuts: only the
            # characters after the line's last cut).
            if counter.additive or not line:
                cost = tokens
            elif counter.exact_cuts:
                cut = _last_cut(line)
                tail = join_tail(line[cut:] if cut > 0 else line, "\n\n", "")
                cost = tokens + counter.join_costs([(tail, "\n\n", "")])[0]
            else:
                cost = counter.count(line + "\n\n")
            self._headers[path] = (line, tokens, cost)
        return self._headers[path]

    def header(self, path: tuple[str, ...]) -> tuple[str, int]:
        """The header line of a chunk under ``path`` (within the profile's header share) and its tokens."""
        line, tokens, _ = self._header(path)
        return line, tokens

    def budget(self, path: tuple[str, ...], cap: int | None = None) -> int:
        """Tokens left for the body of a chunk under ``path``."""
        return max(8, (cap or self.profile.max_tokens) - self._header(path)[2])

    def join(self, prev: Piece | None, nxt: Piece) -> int:
        """Tokens that putting ``nxt`` after ``prev`` adds beyond their own counts: 0 when counts add
        up across whitespace (word-piece); else found on the words either side of the separator."""
        if prev is None or (self.counter.additive and not _glued(prev, nxt)):
            return 0
        return self.join_text(prev.text[-_EDGE:], _separator(prev, nxt), nxt.text[:_EDGE])

    def count_joined(self, texts: list[str], seps: list[str], counts: list[int]) -> int:
        """``counter.count`` of the texts joined by ``seps``, given the counts of the texts."""
        n = self.counter.joined_count(texts, seps, counts)
        if n is None:
            n = self.counter.count(texts[0] + "".join(sep + t for sep, t in zip(seps, texts[1:])))
        return n

    def join_within(self, text: str, left_end: int, right_start: int) -> int:
        """``join`` for two cuts of one text: ``text[:left_end]`` then ``text[right_start:]``."""
        if self.counter.additive and right_start > left_end:
            return 0
        return self.join_text(
            text[max(0, left_end - _EDGE) : left_end],
            text[left_end:right_start],
            text[right_start : right_start + _EDGE],
        )

    def join_text(self, left: str, sep: str, right: str) -> int:
        if self.counter.additive and sep:
            return 0
        # A bounded number of join costs is remembered (a long block has one per pair of words);
        # past that, they are counted and let go.
        remember = len(self._joins) < _JOINS
        counter = self.counter if remember else getattr(self.counter, "inner", self.counter)
        if sep == " " and self.counter.space_starts_word and left[-1:].strip() and right[:1].strip():
            # The space belongs to the word after it and changes only that word's tokens: the same
            # number as from the words either side, for any words before it.
            word = right.split(None, 1)[0]
            key: tuple = (sep, word)
            if key not in self._joins:
                with_space, alone = counter.count_batch([sep + word, word])
                if not remember:
                    return with_space - alone
                self._joins[key] = with_space - alone
            return self._joins[key]
        if not self.counter.exact_cuts or (edges := exact_edges(left, sep, right)) is None:
            a, b = _last_words(left), _first_words(right)
            if self.counter.exact_cuts and a and b:
                # Only the characters between the exact cuts nearest the join can change: the
                # same few characters meet at many joins.
                a, b = counter.exact_join(a, sep, b)
        else:
            a, b = edges
        key = (a, sep, b)
        if key not in self._joins:
            both, n_a, n_b = counter.count_batch([a + sep + b, a, b])
            if not remember:
                return both - n_a - n_b
            self._joins[key] = both - n_a - n_b
        return self._joins[key]

    # -- dropped text between blocks -----------------------------------------------------------

    def dropped(self, prev: Piece, nxt: Piece) -> int:
        """Words of document text between the blocks of two consecutive pieces that neither block
        holds (what the parser dropped: link definitions, page chrome, a code fence's info string),
        counted as the span check counts them (tags, comments and entities are no words); 0 within
        one block. Remembered per document."""
        a, b = prev.source, nxt.source
        if a is None or b is None or a is b or b.start - a.end < 2:
            return 0
        key = (a.end, b.start)
        n = self._gaps.get(key)
        if n is None:
            gap = self.parsed.text[a.end : b.start]
            if "<" in gap or "&" in gap:
                gap = _GAP_MARKUP.sub(" ", gap)
            n = self._gaps[key] = len(_WORD_CHARS.findall(gap))
        return n

    def bridges(self, current: list[Piece], nxt: Piece) -> bool:
        """Whether ``nxt`` may join the chunk of ``current``. A chunk's span is contiguous, so one that
        holds blocks with dropped text between them claims that text: it may claim at most
        ``max(GAP_FLOOR, words // GAP_SHARE)`` such words, never over ``GAP_MAX`` (``words``: the
        chunk's with ``nxt``), and a new chunk starts where it would claim more. Counted only where
        ``nxt`` starts a block after dropped words, which is rare: the hot path pays one comparison."""
        if not current:
            return True
        a, b = current[-1].source, nxt.source
        if a is b or a is None or b is None or b.start - a.end < 2:
            return True  # within one block, or blocks apart by at most a line break: most pieces
        gap = self.dropped(current[-1], nxt)
        if gap == 0:
            return True
        claimed = gap + sum(map(self.dropped, current, current[1:]))
        if claimed <= GAP_FLOOR:
            return True
        if claimed > GAP_MAX:
            return False
        words = sum(len(_WORD_CHARS.findall(p.text)) for p in current) + len(_WORD_CHARS.findall(nxt.text))
        return claimed <= words // GAP_SHARE

    # -- pieces ---------------------------------------------------------------------------------

    def source_map(self, rendered: str, block: Block, **kw) -> SourceMap:
        markup = _MARKUP.get(self.doc.format, "")
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
        counts = self.block_counts(blocks, texts)
        pieces = []
        for t, b, n in zip(texts, blocks, counts):
            # A list marker exists only in the rendering: the item's own text is what maps.
            marker = len(t) - len(b.text) if b.kind == "list_item" else 0
            source = self.source_map(b.text if marker else t, b, shift=marker, aligned=_aligned(b))
            pieces.append(Piece(t, n, b.kind, b.pages, root=t, source=source))
        self.memo[key] = pieces
        return pieces

    def block_counts(self, blocks: list[Block], texts: list[str] | None = None) -> list[int]:
        """Tokens of each block's rendering (``texts``). A table under a counter with exact cuts is
        counted line by line (remembered: its rows are what a split table is packed from)."""
        texts = [render(b) for b in blocks] if texts is None else texts
        counter = self.counter
        if not counter.exact_cuts:
            return counter.count_batch(texts)
        tables = {
            i: n
            for i, b in enumerate(blocks)
            if b.kind == "table" and (n := self._lines_count(texts[i])) is not None
        }
        if not tables:
            return counter.count_batch(texts)
        counts = counter.count_batch([t if i not in tables else "" for i, t in enumerate(texts)])
        for i, n in tables.items():
            counts[i] = n
        return counts

    def _lines_count(self, text: str) -> int | None:
        """``counter.count(text)`` of a text of several lines, each starting with a character other
        than whitespace (a pipe table), from the counts of its lines (exact cuts: after each line
        break) and of the end of each line before its line break; None for another text."""
        key = ("lines", text)
        if key in self.memo:
            return self.memo[key]
        lines = text.split("\n")
        if len(lines) < 2 or not all(line and not line[0].isspace() for line in lines):
            return None
        counter = self.counter
        ends = []
        for line in lines[:-1]:
            cut = _last_cut(line)
            end = line[cut:] if cut > 0 else line
            ends.append((join_tail(end, "\n", ""), "\n", ""))
        n = sum(counter.count_batch(lines)) + sum(counter.join_costs(ends))
        self.memo[key] = n
        return n

    def table_rows(self, block: Block, rendered: str, rows: list[int]) -> SourceMap:
        """The source of a table part holding ``rows`` (indices into ``block.rows``); ``rendered``
        is the whole table as a pipe table."""
        return self.source_map(rendered, block, rows=_row_lines(block, rows), aligned=_aligned(block))

    def table_cells(self, block: Block, rendered: str, cells: list[tuple[int, int]]) -> SourceMap:
        """The source of a part of one table row: ``cells`` are ranges of ``rendered`` (the whole
        table as a pipe table) that the part holds as its own."""
        return self.source_map(rendered, block, cells=cells, aligned=_aligned(block))

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

    def piece_counts(self, p: Piece, spans: list[tuple[int, int]]) -> list[int]:
        """Tokens of each ``p.text[s:e]`` (cut at whitespace, or at the piece's ends), from the token
        offsets of the block the piece came from; counted on their own when the piece itself starts
        or ends inside a word (a part of a cut word), where offsets would miss a token."""
        root, o = p.root or p.text, p.root_offset
        e = o + len(p.text)
        if (o and not root[o - 1].isspace()) or (e < len(root) and not root[e].isspace()):
            return self.counter.count_batch([p.text[a:b] for a, b in spans])
        return self.counter.span_counts(root, [(o + a, o + b) for a, b in spans])

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
            n = unit[2] + (self.join_within(p.text, group[-1][1], unit[0]) if group else 0)
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
            for (s, e), n in zip(batch, self.piece_counts(p, batch)):
                if n <= budget:
                    yield s, e, n
                elif p.kind == "code" and text.find("\n", s, e) >= 0:
                    lines = _line_spans(text, s, e)
                    for (ls, le), ln in zip(lines, self.piece_counts(p, lines)):
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
            for (a, b), n in zip(batch, self.piece_counts(p, batch)):
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
        counts = self.piece_counts(p, spans) if self.counter.additive else None
        for k in range(len(spans) - 1, -1, -1):
            s, e = spans[k]
            n = counts[k] if counts is not None else self.piece_counts(p, [(s, e)])[0]
            n += self.join_within(p.text, e, start) if start is not None else 0
            if total + n > budget:
                break
            start, total = s, total + n
        if start is None:
            return None
        piece = self.sub_piece(p, start, spans[-1][1], tokens=total if self.counter.additive else None)
        piece.overlap = True
        return piece

    # -- drafts -----------------------------------------------------------------------------------

    def emit(
        self,
        pieces: list[Piece],
        path: tuple[str, ...],
        parent: str,
        *,
        table_id: str | None = None,
        table_part: int | None = None,
        continuation: bool = False,
    ) -> None:
        if not pieces:
            return
        header, header_tokens = self.header(path)
        self.drafts.append(
            Draft(pieces, path, header, header_tokens, parent, table_id, table_part, continuation)
        )

    def cap(self, d: Draft) -> int:
        return self.profile.table_cap if d.table_id else self.profile.max_tokens

    def _settle(self, *, texts: bool) -> tuple[list[str] | None, list[int]]:
        """Every draft's exact token count (and text, when asked or needed). Word-piece counts add up
        across whitespace, so a chunk's count is the sum of its parts'. Other tokenizers can merge
        across a join: the joined texts are counted. A chunk that came out over its cap all the same
        is cut again (its overlap dropped, its last piece moved to a chunk of its own, a lone piece
        split), unless it is a table part."""
        full = None
        if self.counter.additive:
            counts = [d.header_tokens + sum(p.tokens for p in d.pieces) for d in self.drafts]
            # ... except across a word cut in two, which the chunk puts back together.
            glued = [i for i, d in enumerate(self.drafts) if any(map(_glued, d.pieces, d.pieces[1:]))]
            for i, n in zip(glued, self.counter.count_batch([_text(self.drafts[i]) for i in glued])):
                counts[i] = n
        else:
            full = [_text(d) for d in self.drafts]
            # From the counts of the pieces and of the few characters around each join, where the
            # counter cuts exactly there; else the joined text is counted.
            counts = [self.counter.joined_count(*_parts(d)) for d in self.drafts]
            todo = [i for i, n in enumerate(counts) if n is None]
            for i, n in zip(todo, self.counter.count_batch([full[i] for i in todo])):
                counts[i] = n
        for _ in range(8):
            cuts = {}
            for i, (d, n) in enumerate(zip(self.drafts, counts)):
                if n > self.cap(d) and (parts := self._recut(d, n)):
                    cuts[i] = parts
            if not cuts:
                break
            drafts, new_counts, new_full = [], [], []
            for i, (d, n) in enumerate(zip(self.drafts, counts)):
                parts = cuts.get(i, [d])
                more = [_text(x) for x in parts] if i in cuts else [full[i] if full else None]
                drafts.extend(parts)
                new_counts.extend(self.counter.count_batch(more) if i in cuts else [n])
                new_full.extend(more)
            self.drafts, counts = drafts, new_counts
            full = new_full if full is not None else None
        if texts and full is None:
            full = [_text(d) for d in self.drafts]
        return full, counts

    def _recut(self, d: Draft, n: int) -> list[Draft] | None:
        pieces = d.pieces
        if d.table_id is not None:
            return None  # a table is cut by rows when its parts are made
        if any(p.overlap for p in pieces) and not all(p.overlap for p in pieces):
            return [dataclasses.replace(d, pieces=[p for p in pieces if not p.overlap])]
        if len(pieces) > 1:
            return [dataclasses.replace(d, pieces=pieces[:-1]), dataclasses.replace(d, pieces=pieces[-1:])]
        (p,) = pieces
        parts = self.split_piece(p, max(1, p.tokens - (n - self.cap(d)) - 1))
        if len(parts) < 2:
            return None
        parts[0].continuation = p.continuation
        return [dataclasses.replace(d, pieces=[x]) for x in parts]

    def _ids(self) -> ChunkIds:
        return ChunkIds(self.doc.key, self.profile, self.counter.name)

    def finish_stats(self, *, with_ids: bool) -> list[ChunkStats]:
        """What the cost report needs, without building chunk texts and records where counts add up."""
        full, counts = self._settle(texts=False)
        limit = self.counter.max_input
        if with_ids:
            texts = full if full is not None else [_text(d) for d in self.drafts]
            ids = chunk_ids(
                self.doc.key,
                self.profile,
                self.counter.name,
                [(d.path, t) for d, t in zip(self.drafts, texts)],
            )
        else:
            ids = [None] * len(self.drafts)
        out = []
        for i, (d, n) in enumerate(zip(self.drafts, counts)):
            if full is not None:
                text_bytes = _utf8_len(full[i])
            else:
                pieces = d.pieces
                text_bytes = sum(_utf8_len(p.text) for p in pieces) + sum(map(len, _separators(pieces)))
                text_bytes += _utf8_len(d.header) + 2 if d.header else 0
            out.append(
                ChunkStats(
                    ids[i],
                    n,
                    d.header_tokens,
                    sum(p.tokens for p in d.pieces if p.overlap),
                    limit is not None and n > limit,
                    text_bytes,
                    n > self.cap(d),
                )
            )
        return out

    def finish(self) -> list[Chunk]:
        full, counts = self._settle(texts=False)
        limit = self.counter.max_input
        spans = [_span(d.pieces) for d in self.drafts]
        ids = self._ids()
        # Each chunk's text is joined when its record is made, and its draft let go: the pieces and
        # the chunk texts (each about the size of the document) are not all held at once.
        drafts, self.drafts = self.drafts, []
        chunks = []
        for i, (n, (start, end)) in enumerate(zip(counts, spans)):
            d, drafts[i] = drafts[i], None
            text = full[i] if full is not None else _text(d)
            cid = ids(d.path, text)
            pieces = d.pieces
            pages = [pg for p in pieces for pg in p.pages]
            kinds = tuple(dict.fromkeys(p.kind for p in pieces if not p.overlap)) or (pieces[0].kind,)
            chunks.append(
                Chunk(
                    chunk_id=cid,
                    doc_id=self.doc.doc_id,
                    source=self.doc.source,
                    doc_type=self.doc_type,
                    strategy=self.profile.strategy,
                    max_tokens=self.profile.max_tokens,
                    overlap=self.profile.overlap_tokens,
                    chunk_index=i,
                    text=text,
                    header=d.header,
                    heading_path=d.path,
                    char_start=start,
                    char_end=end,
                    page_start=min(pages) if pages else None,
                    page_end=max(pages) if pages else None,
                    n_tokens=n,
                    header_tokens=d.header_tokens,
                    overlap_tokens=sum(p.tokens for p in pieces if p.overlap),
                    block_kinds=kinds,
                    parent_id=d.parent,
                    table_id=d.table_id,
                    table_part=d.table_part,
                    continuation=bool(d.continuation or pieces[0].continuation or pieces[0].overlap),
                    over_limit=bool(limit is not None and n > limit),
                    oversize=n > self.cap(d),
                )
            )
        return chunks


class PackingStrategy(Strategy):
    """A strategy that emits drafts through a ``Packer``; ``pack`` is the strategy."""

    name: ClassVar[str]

    @abstractmethod
    def pack(self, packer: Packer) -> None: ...

    def chunks(
        self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str
    ) -> list[Chunk]:
        packer = Packer(parsed, profile, counter, doc_type)
        self.pack(packer)
        return packer.finish()

    def stats(
        self,
        parsed: ParsedDocument,
        profile: Profile,
        counter: TokenCounter,
        doc_type: str,
        *,
        with_ids: bool,
    ) -> list[ChunkStats]:
        packer = Packer(parsed, profile, counter, doc_type)
        self.pack(packer)
        return packer.finish_stats(with_ids=with_ids)


_WORD = re.compile(r"\S+")
_WORD_CHARS = re.compile(r"\w+")
_GAP_MARKUP = re.compile(r"<!--.*?(?:-->|\Z)|<[^<>]*>|&#?\w+;", re.S)
_MARKUP = {"html": "source", "markdown": "both"}  # where html tags may be, by format
_EDGE = 100  # characters either side of a join that can hold the two words next to it
_JOINS = 1 << 14  # join costs remembered per document


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


def _span(pieces: list[Piece]) -> tuple[int, int]:
    """From the first to the last source character the pieces hold."""
    spans = [p.span() for p in pieces]
    held = [s for s in spans if s[1] > s[0]] or spans
    return min(s for s, _ in held), max(e for _, e in held)


def _glued(prev: Piece, p: Piece) -> bool:
    """Whether ``p`` goes on where ``prev`` stops: the parts of a word cut in two."""
    return p.root is prev.root and p.root_offset == prev.root_offset + len(prev.text) and bool(p.root)


def _separator(prev: Piece, p: Piece) -> str:
    """What goes between two pieces: cuts of one block keep the block's own whitespace (up to a line
    break; none between the parts of a word cut in two), list items a line break, blocks a blank line."""
    if prev.root and prev.root is p.root:
        end = prev.root_offset + len(prev.text)
        gap = p.root[end : p.root_offset]
        if len(gap) <= 3 and not gap.strip() and gap.count("\n") < 2 and p.root_offset >= end:
            return gap
    return "\n" if p.kind == prev.kind == "list_item" else "\n\n"


def _separators(pieces: list[Piece]) -> list[str]:
    return [_separator(prev, p) for prev, p in zip(pieces, pieces[1:])]


def _body(pieces: list[Piece]) -> str:
    out = [pieces[0].text]
    for sep, p in zip(_separators(pieces), pieces[1:]):
        out.append(sep)
        out.append(p.text)
    return "".join(out)


def _parts(d: Draft) -> tuple[list[str], list[str], list[int]]:
    """A draft's texts (header, pieces), what goes between them and their counts."""
    pieces = d.pieces
    texts = [p.text for p in pieces]
    seps = _separators(pieces)
    counts = [p.tokens for p in pieces]
    if d.header:
        return [d.header, *texts], ["\n\n", *seps], [d.header_tokens, *counts]
    return texts, seps, counts


def _text(d: Draft) -> str:
    body = _body(d.pieces)
    return f"{d.header}\n\n{body}" if d.header else body


def _row_lines(block: Block, rows: list[int]) -> list[int]:
    """Lines of the table's pipe rendering that hold ``rows`` (a |---| line follows the header rows)."""
    hr = block.header_rows
    return [r + 1 if hr and r >= hr else r for r in rows]


def _aligned(b: Block) -> str | None:
    """A table's pipe rendering with the copies of its spanning cells (``Block.copies``) blanked;
    None for another block, or a table without copies."""
    if not b.copies or b.kind != "table" or render_table(b.rows, b.header_rows) != b.text:
        return None
    return render_table(b.rows, b.header_rows, blank=frozenset(b.copies))


def _utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode())


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
