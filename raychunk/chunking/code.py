"""Code: structure-first packing, except that a code block over half the budget gets chunks of its
own, split at blank lines, then lines, when it is over the cap; smaller ones pack with their prose."""

from __future__ import annotations

from raychunk.chunking.pieces import Piece
from raychunk.chunking.structure import Structure
from raychunk.document import Block

__all__ = ["Code"]


class Code(Structure):
    name = "code"

    def stands_alone(self, block: Block, piece: Piece, budget: int) -> bool:
        return block.kind == "code" and piece.tokens > budget // 2
