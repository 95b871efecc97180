"""The chunker: a parsed document and a profile in, chunk records out. Pure Python, no I/O.

Invariants (tested with hypothesis):
- every piece of a chunk's body is a span of the document text, and the chunk's span covers them;
- the chunks cover every non-empty block, and only declared overlap repeats text;
- a chunk exceeds ``max_tokens`` only when it holds one block that cannot be split;
- the same document and profile give the same chunks and ids.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from raychunk.chunking.model import Chunk, Profile, chunk_id
from raychunk.chunking.sentences import sentence_spans
from raychunk.document import Block, ParsedDocument
from raychunk.render import render_table
from raychunk.tokens import TokenCounter

__all__ = ["ChunkStats", "chunk_document", "chunk_stats", "header_line"]

_PROSE = ("paragraph", "list_item")


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


@dataclass(slots=True)
class Section:
    path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
    ordinal: int = 0


def header_line(title: str, path: tuple[str, ...]) -> str:
    """The heading path, document title first: ``Acme Cloud > Billing > Refunds``."""
    parts = [title] if title else []
    for p in path:
        if not parts or p.casefold() != parts[-1].casefold():
            parts.append(p)
    return " > ".join(parts)


class _Chunker:
    def __init__(self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str):
        self.parsed = parsed
        self.doc = parsed.document
        self.profile = profile
        self.counter = counter
        self.doc_type = doc_type
        self.title = self.doc.title or PurePosixPath(self.doc.source).name
        self.drafts: list[dict] = []
        self._header_tokens: dict[str, int] = {}
        # Rendered blocks, sentence boundaries and token offsets of this document: a CachedCounter
        # shares them across the settings of a grid; otherwise they live for this call.
        self.memo: dict = getattr(counter, "memo", None)
        if self.memo is None:
            self.memo = {}

    # -- shared helpers -------------------------------------------------------------------------

    def header(self, path: tuple[str, ...]) -> tuple[str, int]:
        line = header_line(self.title, path)
        if line not in self._header_tokens:
            self._header_tokens[line] = self.counter.count(line)
        return line, self._header_tokens[line]

    def is_exact(self, b: Block) -> bool:
        return self.parsed.text[b.char_start : b.char_end] == b.text

    def block_pieces(self, blocks: list[Block]) -> list[Piece]:
        """One piece per block, rendered and tokenized once (one batch call for all of them).
        With a per-document memo (a CachedCounter's), later settings reuse the same pieces."""
        key = ("pieces", *map(id, blocks))
        if key in self.memo:
            return self.memo[key]
        texts = [_render(b) for b in blocks]
        counts = self.counter.count_batch(texts)
        pieces = [
            Piece(t, b.char_start, b.char_end, n, b.kind, b.pages, exact=self.is_exact(b) and t == b.text)
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
                    units.extend([(ls, le, ln)] if ln <= budget else self._split_words(p, ls, le, budget))
            else:
                units.extend(self._split_words(p, s, e, budget))
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

    def _split_words(self, p: Piece, s: int, e: int, budget: int) -> list[tuple[int, int, int]]:
        text = p.text
        words = [(s + m_s, s + m_e) for m_s, m_e in _word_spans(text[s:e])]
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
        if budget <= 0 or p.kind not in _PROSE or p.overlap:
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

    def emit(self, pieces: list[Piece], path: tuple[str, ...], parent: str, **extra) -> None:
        if not pieces:
            return
        header, header_tokens = self.header(path)
        self.drafts.append(
            dict(pieces=pieces, path=path, header=header, header_tokens=header_tokens, parent=parent, **extra)
        )

    # -- strategies -----------------------------------------------------------------------------

    def sections(self) -> list[Section]:
        out = [Section(())]
        for b in self.parsed.blocks:
            if b.kind == "heading":
                out.append(Section(b.heading_path + (b.text,), [b], len(out)))
            elif b.kind != "page_break":
                out[-1].blocks.append(b)
        return [s for s in out if any(b.kind != "heading" for b in s.blocks)] if len(out) > 1 else out

    def parent_id(self, section: Section) -> str:
        key = f"{self.doc.doc_id}|{'/'.join(section.path)}|{section.ordinal}"
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def run_structure(self, *, records: bool = False, code: bool = False) -> None:
        sections = self.sections()
        if self.profile.min_tokens:
            sections = self.merge_tiny(sections)
        for section in sections:
            blocks = (
                [b for b in section.blocks if b.kind != "heading" or section.merged_heading(b)]
                if isinstance(section, _Merged)
                else [b for b in section.blocks if b.kind != "heading"]
            )
            self.pack_section(section, blocks, records=records, code=code)

    def merge_tiny(self, sections: list[Section]) -> list[Section]:
        """A section under ``min_tokens`` joins its next sibling (same parent heading), if they fit."""
        sizes = [sum(self.counter.count_batch([_render(b) for b in s.blocks])) for s in sections]
        out: list[Section] = []
        i = 0
        while i < len(sections):
            sec, size = sections[i], sizes[i]
            j = i + 1
            group = [sec]
            while (
                size < self.profile.min_tokens
                and j < len(sections)
                and sec.path
                and len(sections[j].path) == len(sec.path)
                and sections[j].path[:-1] == sec.path[:-1]
                and size + sizes[j] <= self.profile.max_tokens - self.header(sec.path[:-1])[1]
            ):
                group.append(sections[j])
                size += sizes[j]
                j += 1
            if len(group) == 1:
                out.append(sec)
            else:
                out.append(_Merged(sec.path[:-1], [b for s in group for b in s.blocks], sec.ordinal))
            i = j
        return out

    def pack_section(self, section: Section, blocks: list[Block], *, records: bool, code: bool) -> None:
        header, header_tokens = self.header(section.path)
        budget = max(8, self.profile.max_tokens - header_tokens)
        overlap_budget = self.profile.overlap_tokens
        parent = self.parent_id(section)
        current: list[Piece] = []
        size = 0

        def flush(split: bool) -> None:
            nonlocal current, size
            if not any(not p.overlap for p in current):
                current, size = [], 0
                return
            self.emit(current, section.path, parent)
            seed = self.tail(current[-1], overlap_budget) if split else None
            current, size = ([seed], seed.tokens) if seed else ([], 0)

        pieces = self.block_pieces(blocks)
        for block, piece in zip(blocks, pieces):
            if block.kind == "table":
                flush(False)
                current, size = [], 0
                self.emit_table(block, piece, section, parent)
                continue
            if (
                records
                and block.kind == "record"
                or code
                and block.kind == "code"
                and piece.tokens > budget // 2
            ):
                flush(False)
                current, size = [], 0
                for part in self.split_piece(piece, budget) if piece.tokens > budget else [piece]:
                    self.emit([part], section.path, parent, continuation=part.continuation)
                continue
            # Pieces of a split block leave room for the overlap that the next one will carry.
            parts = (
                self.split_piece(piece, max(8, budget - overlap_budget)) if piece.tokens > budget else [piece]
            )
            for part in parts:
                if current and size + part.tokens > budget:
                    if current[0].overlap and len(current) == 1:
                        current, size = [], 0  # the overlap would push a whole block over: drop it
                    else:
                        flush(True)
                        if size + part.tokens > budget:
                            current, size = [], 0
                current.append(part)
                size += part.tokens
        flush(False)

    def emit_table(self, block: Block, piece: Piece, section: Section, parent: str) -> None:
        header, header_tokens = self.header(section.path)
        cap = max(8, self.profile.table_cap - header_tokens)
        table_id = hashlib.sha256(
            f"{self.doc.doc_id}|table|{block.char_start}|{block.char_end}".encode()
        ).hexdigest()[:32]
        if piece.tokens <= cap or len(block.rows) <= block.header_rows + 1:
            self.emit([piece], section.path, parent, table_id=table_id, table_part=0)
            return
        head = block.rows[: block.header_rows]
        body = block.rows[block.header_rows :]
        head_tokens = self.counter.count(render_table(head, block.header_rows)) if head else 0
        row_tokens = self.counter.count_batch([render_table((r,), 0) for r in body])
        budget = max(1, cap - head_tokens)
        groups: list[list[tuple[str, ...]]] = []
        size = 0
        for row, n in zip(body, row_tokens):
            if groups and size + n <= budget:
                groups[-1].append(row)
                size += n
            else:
                groups.append([row])
                size = n
        for part, rows in enumerate(groups):
            text = render_table(tuple(head) + tuple(rows), block.header_rows)
            p = Piece(
                text,
                block.char_start,
                block.char_end,
                head_tokens + sum(row_tokens[body.index(rows[0]) : body.index(rows[0]) + len(rows)]),
                "table",
                block.pages,
                continuation=part > 0,
            )
            self.emit([p], section.path, parent, table_id=table_id, table_part=part, continuation=part > 0)

    def run_fixed(self) -> None:
        """Token windows over the whole text, cut at sentence or speaker-turn ends where possible."""
        blocks = [b for b in self.parsed.blocks if b.kind != "page_break"]
        header, header_tokens = self.header(())
        budget = max(8, self.profile.max_tokens - header_tokens)
        parent = hashlib.sha256(f"{self.doc.doc_id}|document".encode()).hexdigest()[:32]
        units: list[Piece] = []
        for piece in self.block_pieces(blocks):
            if (piece.kind in _PROSE or piece.kind == "heading") and piece.tokens <= budget:
                units.append(piece)  # a whole paragraph or speaker turn: the best place to cut
            elif piece.kind in _PROSE or piece.kind == "heading":
                spans = self.sentences(piece.text)
                counts = self.piece_counts(piece, spans)
                for (s, e), n in zip(spans, counts):
                    if n <= budget:
                        sub = self.sub_piece(piece, s, e, tokens=n)
                        sub.continuation, sub.kind = False, "paragraph"
                        units.append(sub)
                        continue
                    # A sentence longer than a window: words are the units, so windows and their
                    # overlap land on word boundaries.
                    for a, b, wn in self._split_words(piece, s, e, budget):
                        sub = self.sub_piece(piece, a, b, tokens=wn)
                        sub.kind = "paragraph"
                        units.append(sub)
            else:
                units.extend(self.split_piece(piece, budget) if piece.tokens > budget else [piece])
        current: list[Piece] = []
        size = 0
        for unit in units:
            if current and size + unit.tokens > budget:
                self.emit(current, (), parent)
                seed = self._fixed_overlap(current, budget - unit.tokens)
                current = seed
                size = sum(p.tokens for p in seed)
            current.append(unit)
            size += unit.tokens
        if current and any(not p.overlap for p in current):
            self.emit(current, (), parent)

    def _fixed_overlap(self, previous: list[Piece], room: int) -> list[Piece]:
        budget = min(self.profile.overlap_tokens, room)
        seed: list[Piece] = []
        total = 0
        for p in reversed(previous):
            if p.overlap or total + p.tokens > budget:
                break
            q = Piece(p.text, p.start, p.end, p.tokens, p.kind, p.pages, overlap=True, exact=p.exact)
            seed.insert(0, q)
            total += p.tokens
        return seed

    # -- records ------------------------------------------------------------------------------------

    def finish_stats(self, *, with_ids: bool) -> list[ChunkStats]:
        """What the cost report needs, without building chunk texts and records."""
        limit = self.counter.max_input
        out = []
        for d in self.drafts:
            pieces = d["pieces"]
            n = d["header_tokens"] + sum(p.tokens for p in pieces)
            body_bytes = sum(_utf8_len(p.text) for p in pieces) + sum(
                map(len, _separators(pieces, self.parsed.text))
            )
            text_bytes = body_bytes + (_utf8_len(d["header"]) + 2 if d["header"] else 0)
            if limit is not None and not self.counter.additive and n > limit - 16:
                body = _join(pieces, self.parsed.text)
                n = self.counter.count(f"{d['header']}\n\n{body}" if d["header"] else body)
            cid = None
            if with_ids:
                start, end = min(p.start for p in pieces), max(p.end for p in pieces)
                cid = chunk_id(self.doc.doc_id, self.profile, start, end, d.get("table_part"))
            out.append(
                ChunkStats(
                    cid,
                    n,
                    d["header_tokens"],
                    sum(p.tokens for p in pieces if p.overlap),
                    limit is not None and n > limit,
                    text_bytes,
                )
            )
        return out

    def finish(self) -> list[Chunk]:
        texts = []
        for d in self.drafts:
            body = _join(d["pieces"], self.parsed.text)
            texts.append(f"{d['header']}\n\n{body}" if d["header"] else body)
        # Word-piece counts add up across whitespace, so a chunk's count is the sum of its parts.
        # Other tokenizers can merge across a join: recount the chunks near the embedder's limit.
        counts = [d["header_tokens"] + sum(p.tokens for p in d["pieces"]) for d in self.drafts]
        limit = self.counter.max_input
        if limit is not None and not self.counter.additive:
            near = [i for i, n in enumerate(counts) if n > limit - 16]
            for i, n in zip(near, self.counter.count_batch([texts[i] for i in near])):
                counts[i] = n
        chunks = []
        for i, (d, text, n) in enumerate(zip(self.drafts, texts, counts)):
            pieces = d["pieces"]
            start = min(p.start for p in pieces)
            end = max(p.end for p in pieces)
            pages = [pg for p in pieces for pg in p.pages]
            kinds = tuple(dict.fromkeys(p.kind for p in pieces if not p.overlap)) or (pieces[0].kind,)
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(self.doc.doc_id, self.profile, start, end, d.get("table_part")),
                    doc_id=self.doc.doc_id,
                    source=self.doc.source,
                    doc_type=self.doc_type,
                    strategy=self.profile.strategy,
                    max_tokens=self.profile.max_tokens,
                    overlap=self.profile.overlap_tokens,
                    chunk_index=i,
                    text=text,
                    header=d["header"],
                    heading_path=d["path"],
                    char_start=start,
                    char_end=end,
                    page_start=min(pages) if pages else None,
                    page_end=max(pages) if pages else None,
                    n_tokens=n,
                    header_tokens=d["header_tokens"],
                    overlap_tokens=sum(p.tokens for p in pieces if p.overlap),
                    block_kinds=kinds,
                    parent_id=d["parent"],
                    table_id=d.get("table_id"),
                    table_part=d.get("table_part"),
                    continuation=bool(d.get("continuation") or pieces[0].continuation or pieces[0].overlap),
                    over_limit=bool(limit is not None and n > limit),
                )
            )
        return chunks


class _Merged(Section):
    """Tiny sibling sections joined under their parent; their headings stay in the body as text."""

    __slots__ = ()

    def merged_heading(self, b: Block) -> bool:
        return b.kind == "heading"


def _render(b: Block) -> str:
    if b.kind == "list_item":
        return "  " * b.level + "- " + b.text
    return b.text


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


def _word_spans(text: str) -> list[tuple[int, int]]:
    import re

    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """A chunk's numbers without its text: what pricing a setting needs."""

    chunk_id: str | None
    n_tokens: int
    header_tokens: int
    overlap_tokens: int
    over_limit: bool
    text_bytes: int


def chunk_stats(
    parsed: ParsedDocument,
    profile: Profile,
    counter: TokenCounter,
    *,
    doc_type: str = "unknown",
    with_ids: bool = False,
) -> list[ChunkStats]:
    """The numbers of ``chunk_document``'s chunks (same boundaries, counts and ids), computed without
    building their texts: a grid of settings prices a corpus at little more than the cost of one."""
    if profile.strategy == "unstructured_by_title":
        return [
            ChunkStats(
                c.chunk_id if with_ids else None,
                c.n_tokens,
                c.header_tokens,
                c.overlap_tokens,
                c.over_limit,
                len(c.text.encode()),
            )
            for c in chunk_document(parsed, profile, counter, doc_type=doc_type)
        ]
    if parsed.document.status != "ok" or not parsed.blocks:
        return []
    c = _Chunker(parsed, profile, counter, doc_type)
    _run(c, profile.strategy)
    return c.finish_stats(with_ids=with_ids)


def _run(c: _Chunker, strategy: str) -> None:
    if strategy == "structure":
        c.run_structure()
    elif strategy == "records":
        c.run_structure(records=True)
    elif strategy == "code":
        c.run_structure(code=True)
    elif strategy == "fixed":
        c.run_fixed()


def chunk_document(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> list[Chunk]:
    """Chunk one parsed document with one profile. Documents that did not parse give no chunks."""
    if parsed.document.status != "ok" or not parsed.blocks:
        return []
    if profile.strategy == "unstructured_by_title":
        from raychunk.chunking.baselines import run_unstructured_by_title

        return run_unstructured_by_title(parsed, profile, counter, doc_type=doc_type)
    c = _Chunker(parsed, profile, counter, doc_type)
    _run(c, profile.strategy)
    return c.finish()
