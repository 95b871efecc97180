"""Chunking: structure-first by default, with records, fixed, code and baseline strategies."""

from raychunk.chunking.core import chunk_document, header_line
from raychunk.chunking.model import STRATEGIES, Chunk, Profile, chunk_id

__all__ = ["STRATEGIES", "Chunk", "Profile", "chunk_document", "chunk_id", "header_line"]
