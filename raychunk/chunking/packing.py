"""The packer the packing strategies share: one document under one profile. A strategy asks it for
pieces (cut in ``cutting``), for what they cost in tokens (``costs``) and for the budget under a
heading path (its header line within the profile's share, ``headers``), and emits drafts; the packer
checks that a chunk's span claims no more dropped text than allowed, and finishes the drafts into
chunk records, or their numbers only, with exact token counts."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import re
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import ClassVar

from raychunk.chunking.costs import TokenCosts
from raychunk.chunking.cutting import Cutter
from raychunk.chunking.headers import fit_header, header_parts, header_texts
from raychunk.chunking.model import Chunk, ChunkIds, ChunkStats, Profile, Strategy, chunk_ids
from raychunk.chunking.pieces import (
    Draft,
    Piece,
    SourceMap,
    draft_parts,
    draft_text,
    glued,
    pieces_span,
    separators,
)
from raychunk.document import Block, ParsedDocument
from raychunk.tokens import CachedCounter, TokenCounter

__all__ = ["GAP_FLOOR", "GAP_MAX", "GAP_SHARE", "Packer", "PackingStrategy"]

# Dropped words a chunk's span may claim between its blocks: the span check allows a chunk
# max(4, a quarter of its words) words its body lacks; a twelfth is left to cleanup inside blocks.
GAP_FLOOR, GAP_SHARE, GAP_MAX = 4, 6, 16
_WORD_CHARS = re.compile(r"\w+")
_GAP_MARKUP = re.compile(r"<!--.*?(?:-->|\Z)|<[^<>]*>|&#?\w+;", re.S)


class Packer:
    """One document under one profile: the pieces and costs a strategy asks for, the drafts it
    emits, and the chunks (or chunk numbers) they finish into."""

    def __init__(self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str):
        self.parsed = parsed
        self.doc = parsed.document
        self.profile = profile
        self.counter = counter
        self.doc_type = doc_type
        self.title = self.doc.title or PurePosixPath(self.doc.source).name
        self.drafts: list[Draft] = []
        self._headers: dict[tuple[str, ...], tuple[str, int, int]] = {}
        self._header_parts: dict[tuple[str, ...], list[str]] = {}
        # Rendered blocks, alignments, sentence boundaries, token offsets and join costs of this
        # document: a CachedCounter shares them across the settings of a grid; a bare counter gets
        # one for this call (a long block's words are counted from its offsets, tokenized once).
        if getattr(counter, "memo", None) is None:
            counter = self.counter = CachedCounter(counter)
        self.memo: dict = counter.memo
        self.costs = TokenCosts(counter)
        self.cut = Cutter(parsed, self.costs)
        self._gaps: dict[tuple[int, int], int] = self.memo.setdefault("gaps", {})

    # -- headers and budgets ------------------------------------------------------------------

    def _header(self, path: tuple[str, ...]) -> tuple[str, int, int]:
        if path not in self._headers:
            cap = max(1, int(self.profile.header_share * self.profile.max_tokens))
            line, tokens = fit_header(self._parts(path), cap, self.counter)
            tokens = tokens if line else 0
            self._headers[path] = (line, tokens, self.costs.header(line, tokens))
        return self._headers[path]

    def _parts(self, path: tuple[str, ...]) -> list[str]:
        parts = self._header_parts.get(path)
        if parts is None:
            parts = self._header_parts[path] = header_parts(self.title, path)
        return parts

    def prefetch(self, blocks: list[Block], paths: list[tuple[str, ...]]) -> None:
        """Count ``blocks`` and the header lines of ``paths`` in one counter call, so that what
        ``block_pieces`` and ``header`` ask for later is remembered: a small document's texts go to
        the tokenizer together (an additive one tokenizes them as one text), not a call a section."""
        texts = self.costs.block_texts(blocks)
        for path in dict.fromkeys(paths):
            if path not in self._headers:
                texts += header_texts(self._parts(path), self.counter)
        if texts:
            self.counter.count_batch(texts)

    def header(self, path: tuple[str, ...]) -> tuple[str, int]:
        """The header line of a chunk under ``path`` (within the profile's header share) and its tokens."""
        line, tokens, _ = self._header(path)
        return line, tokens

    def budget(self, path: tuple[str, ...], cap: int | None = None) -> int:
        """Tokens left for the body of a chunk under ``path``."""
        return max(8, (cap or self.profile.max_tokens) - self._header(path)[2])

    # -- what a strategy asks for: pieces (``cutting``) and their token costs (``costs``) ---------

    def block_pieces(self, blocks: list[Block]) -> list[Piece]:
        return self.cut.block_pieces(blocks)

    def split_piece(self, p: Piece, budget: int) -> list[Piece]:
        return self.cut.split_piece(p, budget)

    def split_words(self, p: Piece, s: int, e: int, budget: int) -> Iterator[tuple[int, int, int]]:
        return self.cut.split_words(p, s, e, budget)

    def sub_piece(self, p: Piece, s: int, e: int, tokens: int | None = None) -> Piece:
        return self.cut.sub_piece(p, s, e, tokens)

    def sentences(self, text: str, *, with_starts: bool = False):
        return self.cut.sentences(text, with_starts=with_starts)

    def tail(self, p: Piece, budget: int) -> Piece | None:
        return self.cut.tail(p, budget)

    def table_rows(self, block: Block, rendered: str, rows: list[int]) -> SourceMap:
        return self.cut.table_rows(block, rendered, rows)

    def table_cells(self, block: Block, rendered: str, cells: list[tuple[int, int]]) -> SourceMap:
        return self.cut.table_cells(block, rendered, cells)

    def join(self, prev: Piece | None, nxt: Piece) -> int:
        return self.costs.join(prev, nxt)

    def join_text(self, left: str, sep: str, right: str) -> int:
        return self.costs.join_text(left, sep, right)

    def count_joined(self, texts: list[str], seps: list[str], counts: list[int]) -> int:
        return self.costs.count_joined(texts, seps, counts)

    def block_counts(self, blocks: list[Block], texts: list[str] | None = None) -> list[int]:
        return self.costs.block_counts(blocks, texts)

    def piece_counts(self, p: Piece, spans: list[tuple[int, int]]) -> list[int]:
        return self.costs.piece_counts(p, spans)

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
            if gap.isspace():  # blocks apart by blank lines only: most of them
                self._gaps[key] = 0
                return 0
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
            glued_at = [i for i, d in enumerate(self.drafts) if any(map(glued, d.pieces, d.pieces[1:]))]
            for i, n in zip(
                glued_at, self.counter.count_batch([draft_text(self.drafts[i]) for i in glued_at])
            ):
                counts[i] = n
        else:
            full = [draft_text(d) for d in self.drafts]
            # From the counts of the pieces and of the few characters around each join, where the
            # counter cuts exactly there; else the joined text is counted.
            counts = [self.costs.joined_count(*draft_parts(d)) for d in self.drafts]
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
                more = [draft_text(x) for x in parts] if i in cuts else [full[i] if full else None]
                drafts.extend(parts)
                new_counts.extend(self.counter.count_batch(more) if i in cuts else [n])
                new_full.extend(more)
            self.drafts, counts = drafts, new_counts
            full = new_full if full is not None else None
        if texts and full is None:
            full = [draft_text(d) for d in self.drafts]
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
            texts = full if full is not None else [draft_text(d) for d in self.drafts]
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
                text_bytes = sum(_utf8_len(p.text) for p in pieces) + sum(map(len, separators(pieces)))
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
        spans = [pieces_span(d.pieces) for d in self.drafts]
        ids = self._ids()
        # Each chunk's text is joined when its record is made, and its draft let go: the pieces and
        # the chunk texts (each about the size of the document) are not all held at once.
        drafts, self.drafts = self.drafts, []
        chunks = []
        for i, (n, (start, end)) in enumerate(zip(counts, spans)):
            d, drafts[i] = drafts[i], None
            text = full[i] if full is not None else draft_text(d)
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
        with _no_collection():
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
        with _no_collection():
            packer = Packer(parsed, profile, counter, doc_type)
            self.pack(packer)
            return packer.finish_stats(with_ids=with_ids)


@contextlib.contextmanager
def _no_collection():
    """The cycle collector paused while one document is packed: packing makes tens of thousands of
    small objects (pieces, spans, join keys) that reference counting frees, none in a cycle, and each
    700 of them would start a collection that walks the worker's whole heap (its parsed documents)
    for nothing: 10-20% of the chunk stage's time. Collection resumes as it was."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode())
