"""Fixed: token windows over the whole text, headings included as text, under the title as the only
header; windows end at paragraph or speaker-turn ends, else at sentence ends, else at words, and the
overlap is the previous window's last whole units. A window also ends where going on would make its
span claim more text the parser dropped between blocks than ``Packer.bridges`` allows."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from raychunk.chunking.model import parent_ids
from raychunk.chunking.packing import Packer, PackingStrategy
from raychunk.chunking.pieces import PROSE, Piece, in_windows
from raychunk.document import Block

__all__ = ["Fixed"]


class Fixed(PackingStrategy):
    name = "fixed"

    def pack(self, packer: Packer) -> None:
        blocks = [b for b in packer.parsed.blocks if b.kind != "page_break"]
        budget = packer.budget(())
        (parent,) = parent_ids(packer.doc.key, [()])
        current: list[Piece] = []
        size = 0
        for unit in _units(packer, blocks, budget):
            if not packer.bridges(current, unit):
                # Past the dropped text the chunk could claim: a new window, with no overlap from
                # before the gap (it would claim it again).
                if any(not p.overlap for p in current):
                    packer.emit(current, (), parent)
                current, size = [], 0
            n = unit.tokens + packer.join(current[-1] if current else None, unit)
            if current and size + n > budget:
                packer.emit(current, (), parent)
                seed = _overlap(packer, current, min(packer.profile.overlap_tokens, budget - unit.tokens))
                # The unit bridged the dropped text after the whole window; after only its overlap
                # it may not (a heading's attribute list between the two): then no overlap.
                current = seed if packer.bridges(seed, unit) else []
                size = _size(packer, current)
                n = unit.tokens + packer.join(current[-1] if current else None, unit)
            current.append(unit)
            size += n
        if current and any(not p.overlap for p in current):
            packer.emit(current, (), parent)


def _units(packer: Packer, blocks: list[Block], budget: int) -> Iterator[Piece]:
    """The pieces windows are made of: whole paragraphs where they fit, else sentences, else words
    (made as the windows take them, a batch of sentences counted at a time)."""
    for piece in packer.block_pieces(blocks):
        if (piece.kind in PROSE or piece.kind == "heading") and piece.tokens <= budget:
            yield piece  # a whole paragraph or speaker turn: the best place to cut
        elif piece.kind in PROSE or piece.kind == "heading":
            for batch in in_windows(packer.sentences(piece.text)):
                for (s, e), n in zip(batch, packer.piece_counts(piece, batch)):
                    if n <= budget:
                        sub = packer.sub_piece(piece, s, e, tokens=n)
                        sub.continuation, sub.kind = False, "paragraph"
                        yield sub
                        continue
                    # A sentence longer than a window: words are the units, so windows and their
                    # overlap land on word boundaries.
                    for a, b, wn in packer.split_words(piece, s, e, budget):
                        sub = packer.sub_piece(piece, a, b, tokens=wn)
                        sub.kind = "paragraph"
                        yield sub
        else:
            yield from packer.split_piece(piece, budget) if piece.tokens > budget else [piece]


def _overlap(packer: Packer, previous: list[Piece], budget: int) -> list[Piece]:
    """The last whole units of the previous window within ``budget`` tokens, marked as overlap; never
    from across dropped text between two blocks."""
    seed: list[Piece] = []
    total = 0
    for p in reversed(previous):
        n = p.tokens + packer.join(p, seed[0]) if seed else p.tokens
        if p.overlap or total + n > budget or (seed and packer.dropped(p, seed[0])):
            break
        seed.insert(0, dataclasses.replace(p, overlap=True, continuation=False))
        total += n
    return seed


def _size(packer: Packer, pieces: list[Piece]) -> int:
    return sum(p.tokens for p in pieces) + sum(packer.join(a, b) for a, b in zip(pieces, pieces[1:]))
