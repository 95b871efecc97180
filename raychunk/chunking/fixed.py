"""Fixed: token windows over the whole text, headings included as text, under the title as the only
header; windows end at paragraph or speaker-turn ends, else at sentence ends, else at words, and the
overlap is the previous window's last whole units."""

from __future__ import annotations

import hashlib

from raychunk.chunking.packing import PROSE, Packer, PackingStrategy, Piece
from raychunk.document import Block

__all__ = ["Fixed"]


class Fixed(PackingStrategy):
    name = "fixed"

    def pack(self, packer: Packer) -> None:
        blocks = [b for b in packer.parsed.blocks if b.kind != "page_break"]
        _, header_tokens = packer.header(())
        budget = max(8, packer.profile.max_tokens - header_tokens)
        parent = hashlib.sha256(f"{packer.doc.doc_id}|document".encode()).hexdigest()[:32]
        current: list[Piece] = []
        size = 0
        for unit in _units(packer, blocks, budget):
            if current and size + unit.tokens > budget:
                packer.emit(current, (), parent)
                seed = _overlap(current, min(packer.profile.overlap_tokens, budget - unit.tokens))
                current = seed
                size = sum(p.tokens for p in seed)
            current.append(unit)
            size += unit.tokens
        if current and any(not p.overlap for p in current):
            packer.emit(current, (), parent)


def _units(packer: Packer, blocks: list[Block], budget: int) -> list[Piece]:
    """The pieces windows are made of: whole paragraphs where they fit, else sentences, else words."""
    units: list[Piece] = []
    for piece in packer.block_pieces(blocks):
        if (piece.kind in PROSE or piece.kind == "heading") and piece.tokens <= budget:
            units.append(piece)  # a whole paragraph or speaker turn: the best place to cut
        elif piece.kind in PROSE or piece.kind == "heading":
            spans = packer.sentences(piece.text)
            counts = packer.piece_counts(piece, spans)
            for (s, e), n in zip(spans, counts):
                if n <= budget:
                    sub = packer.sub_piece(piece, s, e, tokens=n)
                    sub.continuation, sub.kind = False, "paragraph"
                    units.append(sub)
                    continue
                # A sentence longer than a window: words are the units, so windows and their
                # overlap land on word boundaries.
                for a, b, wn in packer.split_words(piece, s, e, budget):
                    sub = packer.sub_piece(piece, a, b, tokens=wn)
                    sub.kind = "paragraph"
                    units.append(sub)
        else:
            units.extend(packer.split_piece(piece, budget) if piece.tokens > budget else [piece])
    return units


def _overlap(previous: list[Piece], budget: int) -> list[Piece]:
    """The last whole units of the previous window within ``budget`` tokens, marked as overlap."""
    seed: list[Piece] = []
    total = 0
    for p in reversed(previous):
        if p.overlap or total + p.tokens > budget:
            break
        seed.insert(0, Piece(p.text, p.start, p.end, p.tokens, p.kind, p.pages, overlap=True, exact=p.exact))
        total += p.tokens
    return seed
