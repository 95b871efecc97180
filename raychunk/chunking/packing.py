"""What the packing strategies share: pieces of body text cut from blocks at sentence, line or word
ends; one document's packing state (header lines, a per-document memo, the chunk drafts); and the
step from drafts to chunk records, or to their numbers only."""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from raychunk.chunking.model import Chunk, ChunkStats, Profile, chunk_id
from raychunk.chunking.sentences import sentence_spans
from raychunk.document import Block, ParsedDocument
from raychunk.tokens import TokenCounter

__all__ = ["PROSE", "Draft", "Packer", "PackingStrategy", "Piece", "header_line", "render"]

PROSE = ("paragraph", "list_item")


@dataclass(slots=True)
class Piece:
    """A run of body text with its source span; ``tokens`` are counted on ``text`` as rendered."""

    text: str
    start: int
    end: int
    tokens: int
    kind: str
    pages: tuple[int, ...] = ()
    continuation: bool = False
    overlap: bool = False
    exact: bool = False  # text == document text[start:end], so sub-spans can be mapped
    root: str = ""  # the block text this piece was cut from, and where: token offsets are per block
    root_offset: int = 0


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
    parts = [title] if title else []
    for p in path:
        if not parts or p.casefold() != parts[-1].casefold():
            parts.append(p)
    return " > ".join(parts)


def render(b: Block) -> str:
    if b.kind == "list_item":
        return "  " * b.level + "- " + b.text
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
        self._header_tokens: dict[str, int] = {}
        # Rendered blocks, sentence boundaries and token offsets of this document: a CachedCounter
        # shares them across the settings of a grid; otherwise they live for this call.
        self.memo: dict = getattr(counter, "memo", None)
        if self.memo is None:
            self.memo = {}

    def header(self, path: tuple[str, ...]) -> tuple[str, int]:
        line = header_line(self.title, path)
        if line not in self._header_tokens:
            self._header_tokens[line] = self.counter.count(line)
        return line, self._header_tokens[line]

    def block_pieces(self, blocks: list[Block]) -> list[Piece]:
        """One piece per block, rendered and tokenized once (one batch call for all of them).
        With a per-document memo (a CachedCounter's), later settings reuse the same pieces."""
        key = ("pieces", *map(id, blocks))
        if key in self.memo:
            return self.memo[key]
        texts = [render(b) for b in blocks]
        counts = self.counter.count_batch(texts)
        source = self.parsed.text
        pieces = [
            Piece(
                t,
                b.char_start,
                b.char_end,
                n,
                b.kind,
                b.pages,
                exact=source[b.char_start : b.char_end] == b.text and t == b.text,
            )
            for t, b, n in zip(texts, blocks, counts)
        ]
        self.memo[key] = pieces
        return pieces

    def sentences(self, text: str, *, with_starts: bool = False):
        """Sentence spans of ``text`` (and their starts, for bisecting), remembered per document."""
        key = ("sentences", text)
        if key not in self.memo:
            spans = sentence_spans(text)
            self.memo[key] = (spans, [a for a, _ in spans])
        spans, starts = self.memo[key]
        return (spans, starts) if with_starts else spans

    def sub_piece(
        self, p: Piece, s: int, e: int, text: str | None = None, tokens: int | None = None
    ) -> Piece:
        """The part ``p.text[s:e]`` of a piece, with its span mapped when the piece maps exactly."""
        text = p.text[s:e] if text is None else text
        start, end = (p.start + s, p.start + e) if p.exact else (p.start, p.end)
        n = self.counter.count(text) if tokens is None else tokens
        return Piece(
            text,
            start,
            end,
            n,
            p.kind,
            p.pages,
            continuation=True,
            exact=p.exact,
            root=p.root or p.text,
            root_offset=p.root_offset + s,
        )

    def piece_counts(self, p: Piece, spans: list[tuple[int, int]]) -> list[int]:
        """Tokens of each ``p.text[s:e]``, from the token offsets of the block the piece came from."""
        if not p.root:
            return self.counter.span_counts(p.text, spans)
        o = p.root_offset
        return self.counter.span_counts(p.root, [(o + s, o + e) for s, e in spans])

    def split_piece(self, p: Piece, budget: int) -> list[Piece]:
        """Split an over-budget piece at sentence ends (code: blank lines, then lines), never mid-word
        unless a single word is over the budget."""
        spans = _line_groups(p.text) if p.kind == "code" else self.sentences(p.text)
        counts = self.piece_counts(p, spans)
        units: list[tuple[int, int, int]] = []
        for (s, e), n in zip(spans, counts):
            if n <= budget:
                units.append((s, e, n))
            elif p.kind == "code" and "\n" in p.text[s:e]:
                lines = _line_spans(p.text, s, e)
                for (ls, le), ln in zip(lines, self.counter.span_counts(p.text, lines)):
                    units.extend([(ls, le, ln)] if ln <= budget else self.split_words(p, ls, le, budget))
            else:
                units.extend(self.split_words(p, s, e, budget))
        out: list[Piece] = []
        cur_s = cur_e = None
        cur_n = 0
        for s, e, n in units:
            if cur_s is not None and cur_n + n > budget:
                out.append(self.sub_piece(p, cur_s, cur_e, tokens=cur_n))
                cur_s = None
            if cur_s is None:
                cur_s, cur_n = s, 0
            cur_e = e
            cur_n += n
        if cur_s is not None:
            out.append(self.sub_piece(p, cur_s, cur_e, tokens=cur_n))
        if out:
            out[0].continuation = False
        return out

    def split_words(self, p: Piece, s: int, e: int, budget: int) -> list[tuple[int, int, int]]:
        """``(start, end, tokens)`` of the words of ``p.text[s:e]``; a word over the budget is cut."""
        text = p.text
        words = [(s + m.start(), s + m.end()) for m in _WORD.finditer(text[s:e])]
        counts = self.piece_counts(p, words)
        units = []
        for (a, b), n in zip(words, counts):
            if n <= budget:
                units.append((a, b, n))
                continue
            cuts = [a] + [a + c for c in self.counter.cut_points(text[a:b], budget)] + [b]
            parts = [(x, y) for x, y in zip(cuts, cuts[1:]) if y > x]
            counts = self.counter.count_batch([text[x:y] for x, y in parts])
            units.extend((x, y, min(m, budget)) for (x, y), m in zip(parts, counts))
        return units

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
        for (s, _), n in zip(reversed(spans), reversed(self.piece_counts(p, spans))):
            if total + n > budget:
                break
            start, total = s, total + n
        if start is None:
            return None
        piece = self.sub_piece(p, start, spans[-1][1], tokens=total)
        piece.overlap = True
        return piece

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

    def finish_stats(self, *, with_ids: bool) -> list[ChunkStats]:
        """What the cost report needs, without building chunk texts and records."""
        limit = self.counter.max_input
        out = []
        for d in self.drafts:
            pieces = d.pieces
            n = d.header_tokens + sum(p.tokens for p in pieces)
            body_bytes = sum(_utf8_len(p.text) for p in pieces) + sum(
                map(len, _separators(pieces, self.parsed.text))
            )
            text_bytes = body_bytes + (_utf8_len(d.header) + 2 if d.header else 0)
            if limit is not None and not self.counter.additive and n > limit - 16:
                body = _join(pieces, self.parsed.text)
                n = self.counter.count(f"{d.header}\n\n{body}" if d.header else body)
            cid = None
            if with_ids:
                start, end = min(p.start for p in pieces), max(p.end for p in pieces)
                cid = chunk_id(self.doc.doc_id, self.profile, start, end, d.table_part)
            out.append(
                ChunkStats(
                    cid,
                    n,
                    d.header_tokens,
                    sum(p.tokens for p in pieces if p.overlap),
                    limit is not None and n > limit,
                    text_bytes,
                )
            )
        return out

    def finish(self) -> list[Chunk]:
        texts = []
        for d in self.drafts:
            body = _join(d.pieces, self.parsed.text)
            texts.append(f"{d.header}\n\n{body}" if d.header else body)
        # Word-piece counts add up across whitespace, so a chunk's count is the sum of its parts.
        # Other tokenizers can merge across a join: recount the chunks near the embedder's limit.
        counts = [d.header_tokens + sum(p.tokens for p in d.pieces) for d in self.drafts]
        limit = self.counter.max_input
        if limit is not None and not self.counter.additive:
            near = [i for i, n in enumerate(counts) if n > limit - 16]
            for i, n in zip(near, self.counter.count_batch([texts[i] for i in near])):
                counts[i] = n
        chunks = []
        for i, (d, text, n) in enumerate(zip(self.drafts, texts, counts)):
            pieces = d.pieces
            start = min(p.start for p in pieces)
            end = max(p.end for p in pieces)
            pages = [pg for p in pieces for pg in p.pages]
            kinds = tuple(dict.fromkeys(p.kind for p in pieces if not p.overlap)) or (pieces[0].kind,)
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(self.doc.doc_id, self.profile, start, end, d.table_part),
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
                )
            )
        return chunks


class PackingStrategy(ABC):
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


def _separators(pieces: list[Piece], source: str) -> list[str]:
    """What goes between consecutive pieces: sentences of one paragraph keep their own whitespace,
    list items a line break, blocks a blank line."""
    seps = []
    for prev, p in zip(pieces, pieces[1:]):
        gap = source[prev.end : p.start] if prev.exact and p.exact and 0 < p.start - prev.end <= 3 else None
        if gap is not None and not gap.strip() and gap.count("\n") < 2:
            seps.append(gap)
        else:
            seps.append("\n" if p.kind == prev.kind == "list_item" else "\n\n")
    return seps


def _join(pieces: list[Piece], source: str) -> str:
    out = [pieces[0].text]
    for sep, p in zip(_separators(pieces, source), pieces[1:]):
        out.append(sep)
        out.append(p.text)
    return "".join(out)


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
