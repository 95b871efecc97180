"""Records: structure-first packing, except that each record block (a log line, a CSV or JSON row)
is a chunk of its own, split at sentence or word ends only when it alone is over the cap."""

from __future__ import annotations

from raychunk.chunking.pieces import Piece
from raychunk.chunking.structure import Structure
from raychunk.document import Block

__all__ = ["Records"]


class Records(Structure):
    name = "records"

    def stands_alone(self, block: Block, piece: Piece, budget: int) -> bool:
        return block.kind == "record"
